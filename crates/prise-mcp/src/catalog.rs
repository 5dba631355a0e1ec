//! What one server offers, as last listed.

use rmcp::Peer;
use rmcp::RoleClient;
use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerCapabilities, Tool};
use rmcp::service::ServiceError;

/// Tools, resources, resource templates and prompts of one server.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Every tool the server listed, before any filter.
    pub tools: Vec<Tool>,
    /// Its resources.
    pub resources: Vec<Resource>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplate>,
    /// Its prompts.
    pub prompts: Vec<Prompt>,
}

impl Catalog {
    /// Lists everything the server's capabilities announce, all four at once, following
    /// pagination cursors.
    pub(crate) async fn list(
        peer: &Peer<RoleClient>,
        caps: &ServerCapabilities,
    ) -> Result<Catalog, ServiceError> {
        let tools = async {
            match caps.tools {
                Some(_) => peer.list_all_tools().await,
                None => Ok(Vec::new()),
            }
        };
        let resources = async {
            match caps.resources {
                Some(_) => peer.list_all_resources().await,
                None => Ok(Vec::new()),
            }
        };
        let templates = async {
            match caps.resources {
                // Templates are optional even for servers with resources.
                Some(_) => Ok(peer.list_all_resource_templates().await.unwrap_or_default()),
                None => Ok(Vec::new()),
            }
        };
        let prompts = async {
            match caps.prompts {
                Some(_) => peer.list_all_prompts().await,
                None => Ok(Vec::new()),
            }
        };
        let (tools, resources, templates, prompts) =
            tokio::join!(tools, resources, templates, prompts);
        Ok(Catalog {
            tools: tools?,
            resources: resources?,
            templates: templates?,
            prompts: prompts?,
        })
    }
}
