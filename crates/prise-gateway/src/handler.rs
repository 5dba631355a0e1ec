//! The MCP requests a client sends the gateway, each answered from the mounts.

// Logging and resources/subscribe are deprecated by the 2026-07-28 revision
// (SEP-2577); dated-era servers and clients still use them.
#![allow(deprecated)]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use prise_mcp::progress::reported_to;
use prise_mcp::{CallError, MountEvent};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
    CompleteRequestParams, CompleteResult, ContentBlock, ErrorCode, ErrorData,
    GetPromptRequestParams, GetPromptResponse, Implementation, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ResultType, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use tokio::sync::{broadcast, mpsc};

use crate::Gateway;
use crate::calls::{Asker, CallGuard};
use crate::fleet::Fleet;
use crate::listeners::Listeners;
use crate::policy;
use crate::relay::{Relay, with_progress};
use crate::request_log::Entry;
use crate::rounds::{Round, Running};

impl Gateway {
    /// The tools a client of this gateway may see, each with its server, named as it
    /// calls them: its profile's, those the approval policy does not deny, the first
    /// of each name.
    fn listed_tools(&self) -> Vec<(String, rmcp::model::Tool)> {
        let tools = self
            .fleet
            .tools()
            .into_iter()
            .filter(|exposed| {
                self.shows(&exposed.server, &exposed.name)
                    && self
                        .approval
                        .as_ref()
                        .is_none_or(|a| policy::listed(a, &exposed.name, &exposed.tool))
            })
            .map(|exposed| {
                let mut tool = exposed.tool;
                if !self.bare_names {
                    tool.name = exposed.name.into();
                }
                (exposed.server, tool)
            });
        first_of_each(tools, |(_, t)| t.name.to_string())
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("prise-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("prise gateway"),
            )
            .with_instructions(instructions(&self.fleet))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.listeners.connect(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.fleet.settled().await;
        let listed = self.listed_tools();
        let tools = match &self.meta_tools {
            None => listed.into_iter().map(|(_, tool)| tool).collect(),
            Some(always) => {
                let mut tools = crate::meta::definitions(listed.len());
                tools.extend(
                    listed
                        .into_iter()
                        .filter(|(server, _)| always.contains(server))
                        .map(|(_, tool)| tool),
                );
                tools
            }
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut request = request;
        if self.meta_tools.is_some() {
            if request.name == crate::meta::SEARCH_TOOLS {
                self.fleet.settled().await;
                let found = crate::meta::search(&self.listed_tools(), request.arguments.as_ref())?;
                return Ok(found.into());
            }
            if request.name == crate::meta::CALL_TOOL {
                let (name, arguments) = crate::meta::unwrap_call(request.arguments.take())?;
                request.name = name.into();
                request.arguments = arguments;
            }
        }
        if self.bare_names {
            request.name = self.exposed_tool(&request.name).into();
        }
        let server = self.fleet.server_of_tool(&request.name);
        if server
            .as_deref()
            .is_some_and(|server| !self.shows(server, &request.name))
        {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let Some(_slot) = self.limits.take(&context) else {
            return Err(ErrorData::new(
                ErrorCode(TOO_MANY_CALLS),
                format!(
                    "this client has {} calls in flight through the gateway, as many as it may; wait for one to end",
                    self.limits.max()
                ),
                None,
            ));
        };
        let capabilities = context.client_capabilities().unwrap_or_default();
        let rounds = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        // A client that cancels drops this future, and with it the call: its server is
        // told to stop. On the heap: a call's future is large, too large for a worker
        // thread's stack in a debug build.
        let answered = Box::pin(async {
            // The server of a name no server up has yet is known once the call ends.
            let server_now = server.clone().unwrap_or_default();
            if !rounds {
                let call = self
                    .calls
                    .enter(&server_now, Asker::Session(context.peer.clone()));
                let call = self.call(request.name.to_string(), request.arguments, call);
                let result = match context.meta.get_progress_token() {
                    Some(token) => with_progress(call, &context, token).await,
                    None => call.await,
                };
                return finished(result);
            }
            let running = match request.request_state.as_deref() {
                Some(state) => self.rounds.resume(state, request.input_responses)?,
                None => self.start_call(
                    server_now,
                    request.name.to_string(),
                    request.arguments,
                    &capabilities,
                ),
            };
            let mut relay = context
                .meta
                .get_progress_token()
                .map(|token| Relay::new(&context, token));
            match self.rounds.next(running, relay.as_mut()).await {
                Round::Done(result) => finished(result),
                Round::Asked(asked) => Ok(asked.into()),
            }
        });
        let started = Instant::now();
        let (answer, outcome) = tokio::select! {
            answer = answered => {
                let outcome = match &answer {
                    Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => "tool-error",
                    Ok(CallToolResponse::InputRequired(_)) => "input-required",
                    Ok(_) => "ok",
                    Err(_) => "failed",
                };
                (answer, outcome)
            }
            () = context.ct.cancelled() => (Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "the request was cancelled",
                None,
            )), "cancelled"),
        };
        let server = server.or_else(|| self.fleet.server_of_tool(&request.name));
        self.log(
            &context,
            server,
            "tools/call",
            &request.name,
            started,
            outcome,
        );
        answer
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.fleet.settled().await;
        // A URI two servers list is read from the first (see `Mounts::read_resource`):
        // it is listed once.
        let mut seen = HashSet::new();
        let resources = self
            .fleet
            .resources()
            .into_iter()
            .filter(|(server, resource)| {
                self.shows_server(server) && seen.insert(resource.uri.clone())
            })
            .map(|(_, resource)| resource)
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.fleet.settled().await;
        let templates = self
            .fleet
            .resource_templates()
            .into_iter()
            .filter(|(server, _)| self.shows_server(server))
            .map(|(_, template)| template)
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let started = Instant::now();
        let answer = self.read(&request.uri).await;
        let outcome = if answer.is_ok() { "ok" } else { "failed" };
        self.log(
            &context,
            None,
            "resources/read",
            &request.uri,
            started,
            outcome,
        );
        answer
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if let Reference::Prompt(prompt) = &mut request.r#ref {
            self.fleet
                .settled_unless(|f| has_prompt(f, &prompt.name, self.bare_names))
                .await;
            if self.bare_names {
                prompt.name = self.exposed_prompt(&prompt.name);
            }
            let shown = self
                .fleet
                .prompts()
                .iter()
                .any(|p| p.name == prompt.name && self.shows(&p.server, &prompt.name));
            if !shown {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {}", prompt.name),
                    None,
                ));
            }
        }
        match self.fleet.complete(request).await {
            Ok(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                Ok(result)
            }
            Err(error @ CallError::NotFound(_)) => {
                Err(ErrorData::invalid_params(error.to_string(), None))
            }
            Err(error) => Err(protocol_error(error)),
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.listeners.set_log_level(&context.peer, request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.fleet
            .settled_unless(|f| f.server_of_resource(&request.uri).is_ok())
            .await;
        self.subscribable(&request.uri)?;
        self.listeners
            .subscribe(&self.fleet, &context.peer, &request.uri)
            .await
            .map_err(|error| match error {
                CallError::Rejected { code, message, .. } => {
                    ErrorData::new(ErrorCode(code), message, None)
                }
                other => ErrorData::invalid_params(other.to_string(), None),
            })
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.listeners
            .unsubscribe(&self.fleet, &context.peer, &request.uri)
            .await;
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.subscribable(uri).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        self.listeners.listen(&self.fleet, subscription).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.fleet.settled().await;
        let prompts = self
            .fleet
            .prompts()
            .into_iter()
            .filter(|exposed| self.shows(&exposed.server, &exposed.name))
            .map(|exposed| {
                let mut prompt = exposed.prompt;
                if !self.bare_names {
                    prompt.name = exposed.name;
                }
                prompt
            });
        Ok(ListPromptsResult::with_all_items(first_of_each(
            prompts,
            |p| p.name.clone(),
        )))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let started = Instant::now();
        self.fleet
            .settled_unless(|f| has_prompt(f, &request.name, self.bare_names))
            .await;
        let name = if self.bare_names {
            self.exposed_prompt(&request.name)
        } else {
            request.name.clone()
        };
        let answer = self.prompt(&name, request.arguments).await;
        let outcome = if answer.is_ok() { "ok" } else { "failed" };
        self.log(
            &context,
            None,
            "prompts/get",
            &request.name,
            started,
            outcome,
        );
        answer
    }
}

impl Gateway {
    /// Whether a client may subscribe to `uri`: a server it is shown has it and
    /// offers subscriptions.
    fn subscribable(&self, uri: &str) -> Result<(), ErrorData> {
        let server = self
            .fleet
            .server_of_resource(uri)
            .map_err(|e| ErrorData::resource_not_found(e.to_string(), None))?;
        if !self.shows_server(&server) {
            return Err(ErrorData::resource_not_found(
                format!("no server of this profile has {uri}"),
                None,
            ));
        }
        if !self.fleet.offers_subscriptions(&server) {
            return Err(ErrorData::invalid_params(
                format!("server {server}, which has {uri}, does not offer resource subscriptions"),
                None,
            ));
        }
        Ok(())
    }

    /// Reads `uri` from the server that has it (see `Mounts::read_resource`).
    async fn read(&self, uri: &str) -> Result<ReadResourceResponse, ErrorData> {
        self.fleet
            .settled_unless(|f| f.server_of_resource(uri).is_ok())
            .await;
        // Under a profile, from a server it shows only.
        let server = match &self.profile {
            None => None,
            Some(_) => match self.fleet.server_of_resource(uri) {
                Ok(server) if self.shows_server(&server) => Some(server),
                Ok(_) | Err(_) => {
                    return Err(ErrorData::resource_not_found(
                        format!("no server of this profile has {uri}"),
                        None,
                    ));
                }
            },
        };
        match self.fleet.read_resource(uri, server.as_deref()).await {
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

    /// Gets prompt `name` from its server.
    async fn prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if self.profile.is_some()
            && !self
                .fleet
                .prompts()
                .iter()
                .any(|p| p.name == name && self.shows(&p.server, name))
        {
            return Err(ErrorData::invalid_params(
                format!("no prompt named {name}"),
                None,
            ));
        }
        match self.fleet.get_prompt(name, arguments).await {
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

    /// The exposed name of the tool a client names by its server's own name: the
    /// first server's that has it (as listed); unchanged when none has.
    fn exposed_tool(&self, bare: &str) -> String {
        self.fleet
            .tools()
            .into_iter()
            .find(|t| t.tool.name == bare)
            .map(|t| t.name)
            .unwrap_or_else(|| bare.to_owned())
    }

    /// [`Gateway::exposed_tool`] for prompts.
    fn exposed_prompt(&self, bare: &str) -> String {
        self.fleet
            .prompts()
            .into_iter()
            .find(|p| p.prompt.name == bare)
            .map(|p| p.name)
            .unwrap_or_else(|| bare.to_owned())
    }

    /// Logs a forwarded request, when there is a log.
    fn log(
        &self,
        context: &RequestContext<RoleServer>,
        server: Option<String>,
        method: &str,
        name: &str,
        started: Instant,
        outcome: &str,
    ) {
        let Some(log) = &self.log else { return };
        log.record(Entry {
            client: context.client_info().map(|i| i.name),
            server,
            method,
            name,
            elapsed: started.elapsed(),
            outcome,
        });
    }
    /// Starts a call for a 2026-07-28 client in the background, where the questions
    /// its server asks can wait for the client's next round.
    fn start_call(
        &self,
        server: String,
        tool: String,
        arguments: Option<JsonObject>,
        capabilities: &ClientCapabilities,
    ) -> Running {
        let (questions, asked) = mpsc::unbounded_channel();
        let asker = Asker::Rounds {
            questions,
            elicitation: capabilities.elicitation.is_some(),
            sampling: capabilities.sampling.is_some(),
            roots: capabilities.roots.is_some(),
        };
        let guard = self.calls.enter(&server, asker);
        let gateway = self.clone();
        let (sink, news) = mpsc::unbounded_channel();
        let call = tokio::spawn(reported_to(sink, async move {
            gateway.call(tool, arguments, guard).await
        }));
        Running {
            questions: asked,
            news,
            call,
        }
    }

    /// Calls `tool` if the approval policy lets it (asking the call's client when it
    /// says so); a refusal is a tool error the client's user reads.
    async fn call(
        &self,
        tool: String,
        arguments: Option<JsonObject>,
        call: CallGuard,
    ) -> Result<CallToolResult, CallError> {
        if let Some(approval) = &self.approval
            && let Err(why) = policy::check(
                approval,
                &self.fleet,
                &tool,
                arguments.as_ref(),
                Some(call.asker.as_ref()).filter(|a| a.can_elicit()),
            )
            .await
        {
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]));
        }
        self.fleet.call_tool(&tool, arguments).await
    }
}

/// Whether a server up has the prompt `name` (exposed, or its server's own under bare
/// names).
fn has_prompt(fleet: &Fleet, name: &str, bare: bool) -> bool {
    fleet
        .prompts()
        .iter()
        .any(|p| p.name == name || (bare && p.prompt.name == name))
}

/// The first of each name (a name two servers share, under bare names).
fn first_of_each<T>(items: impl Iterator<Item = T>, name: impl Fn(&T) -> String) -> Vec<T> {
    let mut seen = HashSet::new();
    items.filter(|item| seen.insert(name(item))).collect()
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

/// The JSON-RPC error code of a call refused because its client has too many in
/// flight (in the range for implementations).
const TOO_MANY_CALLS: i32 = -32029;

/// The `_meta` key that names the server that answered (2026-07-28).
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// What the client is told of a call: its result, made the gateway's (see [`own`]),
/// or why there is none. A name no server has is the client's mistake (a protocol
/// error); a server's own JSON-RPC error is passed on as it came; anything else
/// happened on the way (a server down, a timeout) and is a tool error the client's
/// user can read.
fn finished(result: Result<CallToolResult, CallError>) -> Result<CallToolResponse, ErrorData> {
    let error = match result {
        Ok(mut result) => {
            result.result_type = Some(ResultType::COMPLETE);
            own(&mut result.meta);
            return Ok(result.into());
        }
        Err(error) => error,
    };
    match error {
        CallError::UnknownTool { .. } => Err(ErrorData::invalid_params(error.to_string(), None)),
        CallError::Rejected { code, message, .. } => {
            Err(ErrorData::new(ErrorCode(code), message, None))
        }
        other => Ok(CallToolResult::error(vec![ContentBlock::text(other.to_string())]).into()),
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
/// model one server's instructions, so the gateway's are theirs together (of the
/// servers up when the client connects).
fn instructions(fleet: &Fleet) -> String {
    let mut text = String::from(
        "This server gathers several MCP servers. Tools and prompts are named server__name.",
    );
    for (server, theirs) in fleet.instructions() {
        text.push_str(&format!("\n\n## {server}\n\n{theirs}"));
    }
    text
}

/// Passes on what the servers say outside calls (see `listeners`): that what a
/// server offers changed (it said so, or it was started again or joined late), that a
/// resource subscribed to changed, and their log messages.
pub(crate) fn forward_events(fleet: &Arc<Fleet>, listeners: &Arc<Listeners>) {
    let mut events = fleet.subscribe();
    let (fleet, listeners) = (fleet.clone(), listeners.clone());
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(MountEvent::ListChanged { what, .. }) => listeners.list_changed(what).await,
                // Events were missed: any list may have changed.
                Ok(MountEvent::Ready { .. }) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    for what in prise_mcp::Listing::ALL {
                        listeners.list_changed(what).await;
                    }
                }
                Ok(MountEvent::ResourceUpdated { uri, .. }) => {
                    listeners.updated(&fleet, &uri).await
                }
                Ok(MountEvent::Log { server, message }) => listeners.log(server, message).await,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
