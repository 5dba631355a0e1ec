//! Every configured server, mounted at once, behind one namespace.

use std::sync::RwLock;
use std::sync::atomic::Ordering;
use std::time::Duration;

use prise_config::Server;
use rmcp::model::{
    CallToolResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool,
};
use tokio::sync::broadcast;

use crate::error::{CallError, MountError, RestartError};
use crate::event::MountEvent;
use crate::mount::{InProcessStream, Mount};
use crate::options::MountOptions;
use crate::registry::{Registry, SEPARATOR, exposed_name};
use crate::template::UriTemplate;
use prise_trust::pins::Declaration;

/// A server to mount.
#[derive(Debug)]
pub enum Source {
    /// A server from the configuration.
    Configured(Box<Server>),
    /// A server running in this process, reached through an in-memory stream.
    InProcess {
        /// Its name.
        name: String,
        /// prise's end of the stream.
        stream: InProcessStream,
    },
}

impl From<Server> for Source {
    fn from(server: Server) -> Source {
        Source::Configured(Box::new(server))
    }
}

impl Source {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Source::Configured(server) => &server.name,
            Source::InProcess { name, .. } => name,
        }
    }
}

/// A tool under its exposed name.
#[derive(Debug, Clone)]
pub struct ExposedTool {
    /// `server__tool`.
    pub name: String,
    /// The server.
    pub server: String,
    /// The tool as the server described it.
    pub tool: Tool,
}

/// A prompt under its exposed name.
#[derive(Debug, Clone)]
pub struct ExposedPrompt {
    /// `server__prompt`.
    pub name: String,
    /// The server.
    pub server: String,
    /// The prompt as the server described it.
    pub prompt: Prompt,
}

/// The state of one configured server, with the error that failed it (see
/// [`crate::ServerStatus`] for what callers read).
#[derive(Debug, Clone)]
pub(crate) enum ServerState {
    /// Mounted and answering.
    Ready,
    /// Could not be mounted.
    Failed(MountError),
    /// `disabled: true` in the configuration.
    Disabled,
}

/// The mounted servers, the ones that failed, and the tables that route names.
pub struct Mounts {
    /// Every source's name, in the order given.
    order: Vec<String>,
    mounts: Vec<Mount>,
    failed: Vec<MountError>,
    disabled: Vec<String>,
    events: broadcast::Sender<MountEvent>,
    /// Tool and prompt routes, with the catalog generations they were built from.
    routes: RwLock<Routes>,
}

#[derive(Default)]
struct Routes {
    generation: u64,
    tools: Registry,
    prompts: Registry,
}

impl Mounts {
    /// Mounts every source at once. A server that fails or hangs is recorded, never
    /// waited on beyond its own startup timeout, and never affects the others.
    pub async fn start(sources: Vec<Source>, options: MountOptions) -> Mounts {
        let events = options
            .events
            .clone()
            .unwrap_or_else(|| broadcast::channel(256).0);
        let mut disabled = Vec::new();
        let mut tasks = tokio::task::JoinSet::new();
        let count = sources.len();
        let order = sources.iter().map(|s| s.name().to_owned()).collect();
        for (index, source) in sources.into_iter().enumerate() {
            if let Source::Configured(server) = &source
                && server.disabled
            {
                disabled.push(server.name.clone());
                continue;
            }
            let options = options.clone();
            let events = events.clone();
            tasks.spawn(async move {
                let name = source.name().to_owned();
                let result = match source {
                    Source::Configured(server) => {
                        Mount::connect(&server, &options, events.clone()).await
                    }
                    Source::InProcess { name, stream } => {
                        Mount::in_process(&name, stream, &options, events.clone()).await
                    }
                };
                let _ = events.send(match &result {
                    Ok(mount) => MountEvent::Ready {
                        server: name,
                        elapsed: mount.startup(),
                    },
                    Err(e) => MountEvent::Failed {
                        server: name,
                        error: e.cause.clone(),
                    },
                });
                (index, result)
            });
        }
        let mut results: Vec<Option<Result<Mount, MountError>>> =
            (0..count).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((index, result)) => results[index] = Some(result),
                Err(e) => tracing::error!("a mount task panicked: {e}"),
            }
        }
        let mut mounts = Vec::new();
        let mut failed = Vec::new();
        for result in results.into_iter().flatten() {
            match result {
                Ok(mount) => mounts.push(mount),
                Err(e) => failed.push(e),
            }
        }
        let mounts = Mounts {
            order,
            mounts,
            failed,
            disabled,
            events,
            routes: RwLock::default(),
        };
        mounts.refresh_routes();
        mounts
    }

    /// Events from every mount: readiness, list changes, progress.
    pub fn subscribe(&self) -> broadcast::Receiver<MountEvent> {
        self.events.subscribe()
    }

    /// The mounted servers, in configuration order.
    pub fn mounts(&self) -> &[Mount] {
        &self.mounts
    }

    /// Every server with its state, in the order they were given.
    pub(crate) fn states(&self) -> Vec<(String, ServerState)> {
        self.order
            .iter()
            .map(|name| {
                let state = if let Some(error) = self.failed.iter().find(|e| &e.server == name) {
                    ServerState::Failed(error.clone())
                } else if self.disabled.contains(name) {
                    ServerState::Disabled
                } else {
                    ServerState::Ready
                };
                (name.clone(), state)
            })
            .collect()
    }

    /// The servers that could not be mounted.
    pub fn failures(&self) -> &[MountError] {
        &self.failed
    }

    /// Every exposed tool, in mount order.
    pub fn tools(&self) -> Vec<ExposedTool> {
        self.refresh_routes();
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        let mut exposed = Vec::new();
        for (index, mount) in self.mounts.iter().enumerate() {
            for tool in mount.tools() {
                let name = exposed_name(mount.name(), &tool.name);
                // Hidden when an earlier server already took the name.
                if routes.tools.get(&name).is_some_and(|r| r.mount == index) {
                    exposed.push(ExposedTool {
                        name,
                        server: mount.name().to_owned(),
                        tool,
                    });
                }
            }
        }
        exposed
    }

    /// Every exposed prompt, in mount order.
    pub fn prompts(&self) -> Vec<ExposedPrompt> {
        self.mounts
            .iter()
            .flat_map(|mount| {
                mount.prompts().into_iter().map(|prompt| ExposedPrompt {
                    name: exposed_name(mount.name(), &prompt.name),
                    server: mount.name().to_owned(),
                    prompt,
                })
            })
            .collect()
    }

    /// Every resource with its server.
    pub fn resources(&self) -> Vec<(String, Resource)> {
        self.mounts
            .iter()
            .flat_map(|mount| {
                mount
                    .catalog()
                    .resources
                    .into_iter()
                    .map(|r| (mount.name().to_owned(), r))
            })
            .collect()
    }

    /// Every resource template with its server.
    pub fn resource_templates(&self) -> Vec<(String, ResourceTemplate)> {
        self.mounts
            .iter()
            .flat_map(|mount| {
                mount
                    .resource_templates()
                    .into_iter()
                    .map(|t| (mount.name().to_owned(), t))
            })
            .collect()
    }

    /// The server that a tool's exposed name leads to.
    pub fn server_of_tool(&self, exposed: &str) -> Option<String> {
        self.route(exposed, |r| &r.tools)
            .map(|(mount, _)| mount.name().to_owned())
    }

    /// Calls a tool by its exposed name.
    pub async fn call_tool(
        &self,
        exposed: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        let route = self.route(exposed, |r| &r.tools);
        let Some((mount, name)) = route else {
            if let Some(withheld) = self.withheld_as(Declaration::Tool, exposed) {
                return Err(withheld);
            }
            if let Some(failed) = self
                .failures()
                .iter()
                .find(|f| exposed.starts_with(&format!("{}{SEPARATOR}", f.server)))
            {
                return Err(CallError::Unavailable {
                    server: failed.server.clone(),
                    cause: failed.cause.clone(),
                });
            }
            let suggestion = self
                .routes
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .tools
                .suggest(exposed);
            return Err(CallError::UnknownTool {
                name: exposed.to_owned(),
                suggestion,
            });
        };
        // A tool the server just said changed is judged on its new listing.
        mount.shared().relisted(mount.call_timeout()).await;
        if let Some(change) = mount.withheld_as(Declaration::Tool, &name) {
            return Err(CallError::Withheld {
                server: mount.name().to_owned(),
                declaration: Declaration::Tool,
                name,
                change,
            });
        }
        mount.call_tool(&name, arguments).await
    }

    /// Gets a prompt by its exposed name.
    pub async fn get_prompt(
        &self,
        exposed: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, CallError> {
        let Some((mount, name)) = self.route(exposed, |r| &r.prompts) else {
            if let Some(withheld) = self.withheld_as(Declaration::Prompt, exposed) {
                return Err(withheld);
            }
            return Err(CallError::NotFound(format!(
                "no prompt named {exposed}; `prise prompts` lists them"
            )));
        };
        mount.get_prompt(&name, arguments).await
    }

    /// Completes an argument: of a prompt by its exposed name (`server__prompt`), or
    /// of a resource template, asked of the server that has it.
    pub async fn complete(
        &self,
        mut request: rmcp::model::CompleteRequestParams,
    ) -> Result<rmcp::model::CompleteResult, CallError> {
        use rmcp::model::Reference;
        let mount = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let Some((mount, name)) = self.route(&prompt.name, |r| &r.prompts) else {
                    return Err(CallError::NotFound(format!(
                        "no prompt named {}; `prise prompts` lists them",
                        prompt.name
                    )));
                };
                prompt.name = name;
                mount
            }
            Reference::Resource(template) => self
                .mounts
                .iter()
                .find(|m| {
                    m.resource_templates()
                        .iter()
                        .any(|t| t.uri_template == template.uri)
                })
                .ok_or_else(|| {
                    CallError::NotFound(format!(
                        "no server has the resource template {}",
                        template.uri
                    ))
                })?,
            _ => {
                return Err(CallError::NotFound(
                    "a completion of a kind prise does not know".to_owned(),
                ));
            }
        };
        mount.complete(request).await
    }

    /// Reads a resource: from `server` when one is named; else from the server that
    /// lists the URI, else from the one server with a resource template the URI fits,
    /// else from the only server that has resources at all (some accept URIs they do
    /// not list).
    pub async fn read_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<ReadResourceResult, CallError> {
        self.mount_of_resource(uri, server)?
            .read_resource(uri)
            .await
    }

    /// What is withheld because it is not as pinned: tools and prompts under their
    /// exposed names, resource templates under their URI templates.
    pub fn withheld(&self) -> Vec<Withheld> {
        self.mounts
            .iter()
            .flat_map(|mount| {
                mount
                    .withheld()
                    .into_iter()
                    .map(|(declaration, declared, change)| Withheld {
                        name: match declaration {
                            Declaration::ResourceTemplate => declared.clone(),
                            _ => exposed_name(mount.name(), &declared),
                        },
                        server: mount.name().to_owned(),
                        declaration,
                        declared,
                        change,
                    })
            })
            .collect()
    }

    /// The error for `exposed` when it names a withheld tool or prompt.
    fn withheld_as(&self, declaration: Declaration, exposed: &str) -> Option<CallError> {
        let withheld = self
            .withheld()
            .into_iter()
            .find(|w| w.declaration == declaration && w.name == exposed)?;
        Some(CallError::Withheld {
            server: withheld.server,
            declaration,
            name: withheld.declared,
            change: withheld.change,
        })
    }

    /// Subscribes to updates of `uri` at the server [`Mounts::read_resource`] reads it
    /// from (or `server`); each comes as [`MountEvent::ResourceUpdated`].
    pub async fn subscribe_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<(), CallError> {
        self.mount_of_resource(uri, server)?
            .subscribe_resource(uri)
            .await
    }

    /// Ends a subscription of [`Mounts::subscribe_resource`].
    pub async fn unsubscribe_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<(), CallError> {
        self.mount_of_resource(uri, server)?
            .unsubscribe_resource(uri)
            .await
    }

    fn mount_of_resource(&self, uri: &str, server: Option<&str>) -> Result<&Mount, CallError> {
        match server {
            Some(name) => self
                .mounts
                .iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| CallError::NotFound(format!("no mounted server is named {name}"))),
            None => self.resource_owner(uri),
        }
    }

    /// The server [`Mounts::read_resource`] reads `uri` from when no server is named.
    pub fn server_of_resource(&self, uri: &str) -> Result<String, CallError> {
        self.resource_owner(uri).map(|m| m.name().to_owned())
    }

    /// The mount to ask for `uri`, as [`Mounts::read_resource`] chooses it.
    fn resource_owner(&self, uri: &str) -> Result<&Mount, CallError> {
        resource_owner(self.mounts.iter(), uri)
    }

    /// Starts the stdio server `name` again (see [`Mount::restart`]); its new
    /// process is ready when [`MountEvent::Ready`] says so.
    pub async fn restart(&self, name: &str) -> Result<(), RestartError> {
        match self.mounts.iter().find(|m| m.name() == name) {
            Some(mount) => mount.restart().await,
            None => Err(RestartError::NoSuchServer(name.to_owned())),
        }
    }

    /// Closes every mount at once, ending their processes.
    pub async fn close(self) {
        let mut tasks = tokio::task::JoinSet::new();
        for mount in self.mounts {
            tasks.spawn(mount.close());
        }
        // Each close is bounded by the SIGTERM grace period; this bounds a stuck task.
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
    }

    fn route(
        &self,
        exposed: &str,
        pick: impl Fn(&Routes) -> &Registry,
    ) -> Option<(&Mount, String)> {
        self.refresh_routes();
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        let route = pick(&routes).get(exposed)?;
        Some((&self.mounts[route.mount], route.name.clone()))
    }

    /// Rebuilds the tables when a server's catalog changed since they were built.
    fn refresh_routes(&self) {
        let generation: u64 = self
            .mounts
            .iter()
            .map(|m| m.shared().generation.load(Ordering::Acquire))
            .sum();
        if self
            .routes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .generation
            == generation
            && generation != 0
        {
            return;
        }
        let tools = Registry::build(self.mounts.iter().map(|m| {
            (
                m.name(),
                m.tools().into_iter().map(|t| t.name.to_string()).collect(),
            )
        }));
        let prompts = Registry::build(
            self.mounts
                .iter()
                .map(|m| (m.name(), m.prompts().into_iter().map(|p| p.name).collect())),
        );
        *self.routes.write().unwrap_or_else(|e| e.into_inner()) = Routes {
            generation,
            tools,
            prompts,
        };
    }
}

/// A tool, prompt or resource template withheld because it is not as pinned.
#[derive(Debug, Clone)]
pub struct Withheld {
    /// `server__tool` or `server__prompt`; a template's URI template.
    pub name: String,
    /// The server.
    pub server: String,
    /// What it is.
    pub declaration: Declaration,
    /// Its name as the server gives it (a template's URI template).
    pub declared: String,
    /// How it differs from its pin.
    pub change: prise_trust::pins::Change,
}

/// Which of `mounts` has `uri`: the first that lists it, else the one whose resource
/// template it fits, else the only one with resources at all (some servers accept URIs
/// they do not list). The rule [`Mounts::read_resource`] follows, for a caller that
/// holds its mounts apart (the gateway mounts each server on its own).
pub fn resource_owner<'a>(
    mounts: impl Iterator<Item = &'a Mount> + Clone,
    uri: &str,
) -> Result<&'a Mount, CallError> {
    if let Some(mount) = mounts
        .clone()
        .find(|m| m.catalog().resources.iter().any(|r| r.uri == uri))
    {
        return Ok(mount);
    }
    let fitting: Vec<&Mount> = mounts
        .clone()
        .filter(|m| {
            m.resource_templates()
                .iter()
                .any(|t| UriTemplate::parse(&t.uri_template).matches(uri))
        })
        .collect();
    match fitting.as_slice() {
        [one] => return Ok(one),
        [] => {}
        several => {
            return Err(CallError::UnknownResource {
                uri: uri.to_owned(),
                servers: several.iter().map(|m| m.name().to_owned()).collect(),
            });
        }
    }
    let with_resources: Vec<&Mount> = mounts
        .filter(|m| {
            m.peer_info()
                .is_some_and(|i| i.capabilities.resources.is_some())
        })
        .collect();
    match with_resources.as_slice() {
        [one] => Ok(one),
        _ => Err(CallError::UnknownResource {
            uri: uri.to_owned(),
            servers: Vec::new(),
        }),
    }
}
