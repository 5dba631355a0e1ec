//! The MCP requests a client sends the gateway, each answered from the mounts.

use std::collections::HashSet;
use std::sync::Arc;

use prise_mcp::{CallError, MountEvent, Mounts};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ResultType,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use tokio::sync::broadcast;

use crate::Gateway;
use crate::calls::Calls;

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("prise-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("prise gateway"),
            )
            .with_instructions(instructions(&self.mounts))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.calls.connect(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .mounts
            .tools()
            .into_iter()
            .map(|exposed| {
                let mut tool = exposed.tool;
                tool.name = exposed.name.into();
                tool
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let server = self.mounts.server_of_tool(name).unwrap_or_default();
        let _call = self.calls.enter(&server, context.peer.clone());
        // Dropped when the client cancels: the server is told to stop too.
        match self.mounts.call_tool(name, request.arguments).await {
            Ok(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                own(&mut result.meta);
                Ok(result.into())
            }
            Err(error) => failed(error).map(Into::into),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // A URI two servers list is read from the first (see `Mounts::read_resource`):
        // it is listed once.
        let mut seen = HashSet::new();
        let resources = self
            .mounts
            .resources()
            .into_iter()
            .filter(|(_, resource)| seen.insert(resource.uri.clone()))
            .map(|(_, resource)| resource)
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self
            .mounts
            .resource_templates()
            .into_iter()
            .map(|(_, template)| template)
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match self.mounts.read_resource(&request.uri, None).await {
            Ok(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                own(&mut result.meta);
                Ok(result.into())
            }
            Err(error @ (CallError::UnknownResource { .. } | CallError::NotFound(_))) => {
                Err(ErrorData::resource_not_found(error.to_string(), None))
            }
            Err(error) => Err(protocol_error(error)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .mounts
            .prompts()
            .into_iter()
            .map(|exposed| {
                let mut prompt = exposed.prompt;
                prompt.name = exposed.name;
                prompt
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        match self
            .mounts
            .get_prompt(&request.name, request.arguments)
            .await
        {
            Ok(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                own(&mut result.meta);
                Ok(result.into())
            }
            Err(error @ CallError::NotFound(_)) => {
                Err(ErrorData::invalid_params(error.to_string(), None))
            }
            Err(error) => Err(protocol_error(error)),
        }
    }
}

/// A server's result made the gateway's: what says who answered (the server's name
/// and version, at 2026-07-28) is the gateway's to say, not the upstream's. The
/// result's kind is stated, as 2026-07-28 requires and a dated server does not.
fn own(meta: &mut Option<MetaObject>) {
    if let Some(meta) = meta {
        meta.remove(SERVER_INFO_META);
    }
    if meta.as_ref().is_some_and(|m| m.is_empty()) {
        *meta = None;
    }
}

/// The `_meta` key that names the server that answered (2026-07-28).
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// What the client is told of a call that got no result. A name no server has is the
/// client's mistake (a protocol error); a server's own JSON-RPC error is passed on as
/// it came; anything else happened on the way (a server down, a timeout) and is a
/// tool error the client's user can read.
fn failed(error: CallError) -> Result<CallToolResult, ErrorData> {
    match error {
        CallError::UnknownTool { .. } => Err(ErrorData::invalid_params(error.to_string(), None)),
        CallError::Rejected { code, message, .. } => {
            Err(ErrorData::new(ErrorCode(code), message, None))
        }
        other => Ok(CallToolResult::error(vec![ContentBlock::text(
            other.to_string(),
        )])),
    }
}

/// A request that got no result, as a JSON-RPC error.
fn protocol_error(error: CallError) -> ErrorData {
    match error {
        CallError::Rejected { code, message, .. } => ErrorData::new(ErrorCode(code), message, None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// The instructions of the mounted servers, each under its name: a client shows its
/// model one server's instructions, so the gateway's are theirs together.
fn instructions(mounts: &Mounts) -> String {
    let mut text = String::from(
        "This server gathers several MCP servers. Tools and prompts are named server__name.",
    );
    for mount in mounts.mounts() {
        let Some(info) = mount.peer_info() else {
            continue;
        };
        if let Some(theirs) = info
            .instructions
            .as_deref()
            .filter(|i| !i.trim().is_empty())
        {
            text.push_str(&format!("\n\n## {}\n\n{}", mount.name(), theirs.trim()));
        }
    }
    text
}

/// Tells every connected client when what a server offers changed (it said so, or it
/// was started again and re-listed).
pub(crate) fn forward_list_changes(mounts: &Mounts, calls: &Arc<Calls>) {
    let mut events = mounts.subscribe();
    let calls = calls.clone();
    tokio::spawn(async move {
        const ALL: [&str; 3] = ["tools", "resources", "prompts"];
        loop {
            let what: Vec<&str> = match events.recv().await {
                Ok(MountEvent::ListChanged { what, .. }) => vec![what],
                // Events were missed: any list may have changed.
                Ok(MountEvent::Ready { .. }) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    ALL.to_vec()
                }
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            for client in calls.clients() {
                for kind in &what {
                    let _ = match *kind {
                        "tools" => client.notify_tool_list_changed().await,
                        "resources" => client.notify_resource_list_changed().await,
                        _ => client.notify_prompt_list_changed().await,
                    };
                }
            }
        }
    });
}
