//! One mounted server: its connection, its process if it has one, and what it offers.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use prise_config::{RestartPolicy, Server, ToolFilter, Transport};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, GetPromptResult, JsonObject, ReadResourceRequestParams,
    ReadResourceResult, Root, ServerPeerInfo, ServerResult, Tool,
};
use rmcp::service::{ClientLifecycleMode, PeerRequestOptions};
use rmcp::{Peer, RoleClient, ServiceError};
use tokio::sync::broadcast;

use crate::catalog::Catalog;
use crate::child::{self, StderrLog};
use crate::client::{Client, Shared};
use crate::connect::{self, Connected, Connection, StderrSlot};
use crate::elicit::{Decline, Elicitor};
use crate::eras::EraCache;
use crate::error::{CallError, MountError};
use crate::event::MountEvent;
use crate::limit::Dropped;
use crate::supervise;
use crate::vetting::Withholding;
use prise_trust::pins::{Change, Declaration};

/// How long a server gets to exit after SIGTERM before it is killed.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Options that apply to every mount.
#[derive(Debug, Clone)]
pub struct MountOptions {
    /// Roots offered to every server instead of their configured ones (`--root`);
    /// `None` offers each server its own `roots` from the configuration.
    pub roots: Option<Vec<Root>>,
    /// Folder for per-server stderr logs; `None` keeps only the in-memory tail.
    pub log_dir: Option<std::path::PathBuf>,
    /// Who answers servers' questions (elicitation).
    pub elicitor: Arc<dyn Elicitor>,
    /// Who answers servers' sampling requests; `None` offers no sampling.
    pub sampler: Option<Arc<dyn crate::sampling::Sampler>>,
    /// Who offers servers the roots of the clients they work for; `None` offers the
    /// configured roots only (see [`crate::roots`]).
    pub root_lister: Option<Arc<dyn crate::roots::RootLister>>,
    /// Where the protocol era of each server is remembered; `None` probes every time.
    pub eras: Option<EraCache>,
    /// Where tools are pinned (see `prise_trust::pins`); `None` pins nothing. prise's
    /// command line pins in the project's `prise.lock` and the state folder.
    pub pins: Option<prise_trust::pins::PinFiles>,
    /// Who signs in when a remote server asks for it while mounting; `None` reports
    /// that it needs a sign-in (`prise auth login`).
    pub sign_in: Option<Arc<dyn crate::auth::SignIn>>,
    /// Where sign-ins are kept (`<state dir>/auth`); `None` keeps none.
    pub auth_dir: Option<std::path::PathBuf>,
    /// The channel [`crate::Mounts`] sends its events on, for a caller that must hear
    /// them while mounting (which servers are still starting); `None` makes one.
    pub events: Option<broadcast::Sender<MountEvent>>,
    /// Whether every message to and from each server is reported as a
    /// [`MountEvent::Message`] (for a trace people read); off, nothing is copied.
    pub trace: bool,
}

impl Default for MountOptions {
    fn default() -> Self {
        let state = child::default_state_dir();
        MountOptions {
            roots: None,
            log_dir: state.as_ref().map(|dir| dir.join("logs")),
            elicitor: Arc::new(Decline),
            sampler: None,
            root_lister: None,
            pins: None,
            eras: state
                .as_ref()
                .map(|dir| EraCache::at(dir.join("eras.json"))),
            sign_in: None,
            auth_dir: state.map(|dir| dir.join("auth")),
            events: None,
            trace: false,
        }
    }
}

/// What a mount shares with its supervisor: the connection, which a restart replaces.
pub(crate) struct Live {
    connection: RwLock<Arc<Connection>>,
    pub shared: Arc<Shared>,
    /// Set by `close`, so that the supervisor does not restart what is being stopped.
    pub closing: AtomicBool,
    /// Set by [`Mount::restart`]: the exit that follows is asked for, not a crash.
    pub restart_asked: AtomicBool,
}

impl Live {
    pub fn current(&self) -> Arc<Connection> {
        self.connection
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn replace(&self, connection: Connection) {
        *self.connection.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(connection);
    }
}

/// A server ready for requests.
pub struct Mount {
    name: String,
    transport: &'static str,
    live: Arc<Live>,
    filter: ToolFilter,
    call_timeout: Duration,
    max_message_size: usize,
    startup: Duration,
    supervisor: Option<tokio::task::AbortHandle>,
    /// For a remote server: what signing in again for more scope takes.
    reach: Option<Arc<crate::reauth::Reach>>,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

/// A stream to a server running in this process (the embedded docs server).
pub type InProcessStream = tokio::io::DuplexStream;

impl Mount {
    /// Starts or connects to a configured server, handshakes, and lists what it offers,
    /// all within the server's startup timeout. A stdio server with a restart policy is
    /// then watched and restarted when it exits on its own.
    pub async fn connect(
        server: &Server,
        options: &MountOptions,
        events: broadcast::Sender<MountEvent>,
    ) -> Result<Mount, MountError> {
        let started = Instant::now();
        let fail_early = |cause: String| MountError {
            server: server.name.clone(),
            cause,
            stderr_tail: Vec::new(),
            log: None,
        };
        let roots: Vec<Root> = match &options.roots {
            Some(roots) => roots.clone(),
            None => server
                .roots
                .iter()
                .map(|dir| {
                    crate::roots::folder_root(dir)
                        .map_err(|e| fail_early(format!("root {}: {e}", dir.display())))
                })
                .collect::<Result<_, _>>()?,
        };
        let mut shared = Shared::new(events);
        let mut offered = Vec::new();
        if !roots.is_empty() || options.root_lister.is_some() {
            offered.push("roots");
        }
        if options.sampler.is_some() {
            offered.push("sampling");
        }
        shared.vetting = crate::vetting::Vetting::of(server, options.pins.as_ref(), &offered);
        let shared = Arc::new(shared);
        let client = client_for(&server.name, roots, options, &shared);
        let stderr = StderrSlot::default();
        let outcome = tokio::time::timeout(
            server.startup_timeout,
            connect::establish(server, options, client.clone(), &stderr),
        )
        .await;
        let stderr = stderr.lock().unwrap_or_else(|e| e.into_inner()).take();
        let fail = |cause: String| {
            let stderr_tail = stderr.as_deref().map(StderrLog::tail).unwrap_or_default();
            let sandboxed = match &server.transport {
                Transport::Stdio(stdio) => stdio.sandbox.as_ref().map(|s| (stdio, s)),
                _ => None,
            };
            let note = sandboxed
                .map(|(stdio, sandbox)| {
                    crate::sandboxing::explain(
                        &crate::sandboxing::policy(stdio, sandbox),
                        &stderr_tail,
                    )
                })
                .unwrap_or_default();
            MountError {
                server: server.name.clone(),
                cause: cause + &note,
                stderr_tail,
                log: stderr.as_ref().and_then(|s| s.path.clone()),
            }
        };
        let connected = match outcome {
            Ok(Ok(connected)) => connected,
            Ok(Err(failed)) => return Err(fail(failed.cause)),
            Err(_) => {
                let target = match &server.transport {
                    Transport::Http(remote) | Transport::Sse(remote) => format!("; {}", remote.url),
                    Transport::Stdio(_) => String::new(),
                };
                return Err(fail(format!(
                    "did not start within {:?} (startup timeout{target})",
                    server.startup_timeout
                )));
            }
        };
        let live = Live::new(connected, shared);
        live.listen().await;
        let restarts = matches!(server.restart, RestartPolicy::OnFailure { .. })
            && matches!(server.transport, Transport::Stdio(_));
        let reach = matches!(server.transport, Transport::Http(_)).then(|| {
            Arc::new(crate::reauth::Reach {
                server: server.clone(),
                options: options.clone(),
                client: client.clone(),
                made: Default::default(),
                signing_in: Default::default(),
            })
        });
        let supervisor = restarts
            .then(|| supervise::spawn(server.clone(), options.clone(), client, live.clone()));
        Ok(Mount {
            reach,
            name: server.name.clone(),
            transport: server.transport.kind(),
            live,
            filter: server.tools.clone(),
            call_timeout: server.call_timeout,
            max_message_size: server.max_message_size,
            startup: started.elapsed(),
            supervisor,
        })
    }

    /// Mounts a server running in this process, through an in-memory stream.
    pub async fn in_process(
        name: &str,
        stream: InProcessStream,
        options: &MountOptions,
        events: broadcast::Sender<MountEvent>,
    ) -> Result<Mount, MountError> {
        let started = Instant::now();
        let shared = Arc::new(Shared::new(events));
        let client = client_for(name, Vec::new(), options, &shared);
        let connected = connect::handshake(client, stream, ClientLifecycleMode::Initialize)
            .await
            .map_err(|failed| MountError {
                server: name.to_owned(),
                cause: failed.cause,
                stderr_tail: Vec::new(),
                log: None,
            })?;
        Ok(Mount {
            name: name.to_owned(),
            transport: "in-process",
            live: Live::new(connected, shared),
            filter: ToolFilter::default(),
            call_timeout: prise_config::DEFAULT_CALL_TIMEOUT,
            max_message_size: prise_config::DEFAULT_MAX_MESSAGE_SIZE,
            startup: started.elapsed(),
            supervisor: None,
            reach: None,
        })
    }

    /// The server's name in the configuration.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `stdio`, `http`, `sse` or `in-process`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// What the server said about itself: protocol version, capabilities, name.
    pub fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.live.current().service.peer_info()
    }

    /// The process id of a stdio server (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.live.current().child.as_ref().and_then(|c| c.pid())
    }

    /// How long it took to start and list.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// The tools shown to users and models: listed by the server, kept by the
    /// configured filter, not withheld ([`Mount::withheld`]), duplicates dropped.
    pub fn tools(&self) -> Vec<Tool> {
        let mut seen = std::collections::HashSet::new();
        let withheld = self.withheld();
        self.catalog()
            .tools
            .into_iter()
            .filter(|tool| self.filter.permits(&tool.name))
            .filter(|tool| !is_withheld(&withheld, Declaration::Tool, &tool.name))
            .filter(|tool| {
                let first = seen.insert(tool.name.clone());
                if !first {
                    tracing::warn!(server = %self.name, "server lists tool {} twice; keeping the first", tool.name);
                }
                first
            })
            .collect()
    }

    /// Its prompts, but those withheld ([`Mount::withheld`]).
    pub fn prompts(&self) -> Vec<rmcp::model::Prompt> {
        let withheld = self.withheld();
        let mut prompts = self.catalog().prompts;
        prompts.retain(|p| !is_withheld(&withheld, Declaration::Prompt, &p.name));
        prompts
    }

    /// Its resource templates, but those withheld ([`Mount::withheld`]).
    pub fn resource_templates(&self) -> Vec<rmcp::model::ResourceTemplate> {
        let withheld = self.withheld();
        let mut templates = self.catalog().templates;
        templates
            .retain(|t| !is_withheld(&withheld, Declaration::ResourceTemplate, &t.uri_template));
        templates
    }

    /// How `name` (a tool, prompt or template) differs from its pin, when it is
    /// withheld (see [`Mount::withheld`]).
    pub fn withheld_as(&self, declaration: Declaration, name: &str) -> Option<Change> {
        if declaration == Declaration::Tool && !self.filter.permits(name) {
            return None;
        }
        self.read_withheld(|withheld| {
            withheld
                .iter()
                .find(|(d, n, _)| *d == declaration && n == name)
                .map(|(_, _, change)| *change)
        })
    }

    /// What is withheld because it is not as pinned, and how it differs (see
    /// `prise_trust::pins`): tools among those the configured filter keeps, prompts
    /// and resource templates (by their URI templates).
    pub fn withheld(&self) -> Vec<Withholding> {
        self.read_withheld(|withheld| {
            withheld
                .iter()
                .filter(|(d, name, _)| *d != Declaration::Tool || self.filter.permits(name))
                .cloned()
                .collect()
        })
    }

    /// `read` of what is withheld, without copying it.
    fn read_withheld<R>(&self, read: impl FnOnce(&[Withholding]) -> R) -> R {
        read(
            &self
                .live
                .shared
                .withheld
                .read()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Whether this server's declarations are pinned (`"pinning"` not `off`, and a
    /// pin file).
    pub fn pins(&self) -> bool {
        self.live.shared.vetting.is_some()
    }

    /// The definition pinned for `name` (see `prise_trust::pins`); `None` when it has
    /// none or pinning is off.
    pub fn pinned(&self, declaration: Declaration, name: &str) -> Option<serde_json::Value> {
        self.live.shared.vetting.as_ref()?.pinned(declaration, name)
    }

    /// The definition of `name` as the server declares it now.
    pub fn declared(&self, declaration: Declaration, name: &str) -> Option<serde_json::Value> {
        let catalog = self.catalog();
        let found = match declaration {
            Declaration::Tool => catalog
                .tools
                .iter()
                .find(|t| t.name == name)
                .map(serde_json::to_value),
            Declaration::Prompt => catalog
                .prompts
                .iter()
                .find(|p| p.name == name)
                .map(serde_json::to_value),
            Declaration::ResourceTemplate => catalog
                .templates
                .iter()
                .find(|t| t.uri_template == name)
                .map(serde_json::to_value),
        };
        found.and_then(Result::ok)
    }

    /// Pins `name`'s definition as the server declares it now, which releases it;
    /// the pin file it was written to.
    pub fn trust(
        &self,
        declaration: Declaration,
        name: &str,
    ) -> Result<std::path::PathBuf, String> {
        let shared = &self.live.shared;
        let vetting = shared
            .vetting
            .as_ref()
            .ok_or_else(|| format!("server {} pins nothing (\"pinning\": \"off\")", self.name))?;
        let definition = self.declared(declaration, name).ok_or_else(|| {
            format!(
                "server {} declares no {} {name}",
                self.name,
                declaration.word()
            )
        })?;
        let path = vetting.accept(declaration, &definition)?;
        // Judged again, so that what this mount serves follows.
        shared.set_catalog(|_| {});
        Ok(path)
    }

    /// Everything as last listed, before filtering.
    pub fn catalog(&self) -> Catalog {
        self.live
            .shared
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.live.shared
    }

    /// The current connection's peer, to send requests on.
    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.live.current().service.peer().clone()
    }

    /// Starts the server's process again, for a person who asks (the web page's
    /// restart): it is ended as `close` ends it, and its supervisor starts it at once,
    /// without counting it against `maxRestarts`. Only stdio servers that restart
    /// (`"restart"` is not `"never"`) can be; the error says why another cannot.
    pub async fn restart(&self) -> Result<(), String> {
        let connection = self.live.current();
        let (Some(child), Some(_)) = (&connection.child, &self.supervisor) else {
            return Err(format!(
                "{} cannot be restarted: only stdio servers whose \"restart\" is not \"never\" are",
                self.name
            ));
        };
        self.live.restart_asked.store(true, Ordering::Release);
        child.terminate(TERMINATE_GRACE).await;
        Ok(())
    }

    /// The handler that answers the server's questions.
    pub(crate) fn client(&self) -> Client {
        self.live.current().service.service().clone()
    }

    /// How long a request may go without news.
    pub(crate) fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Where this mount's events go.
    pub(crate) fn events(&self) -> &broadcast::Sender<MountEvent> {
        &self.live.shared.events
    }

    /// The last lines of the server's stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.live
            .current()
            .child
            .as_ref()
            .map(|c| c.stderr.tail())
            .unwrap_or_default()
    }

    /// Calls a tool by its name on the server. A result with `isError` is a result.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        if self.live.current().task_tools.required(tool) {
            return Box::pin(crate::tasks::dated::call(self, tool, arguments)).await;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
        match self.request(request, "tools/call").await? {
            ServerResult::CallToolResult(result) => Ok(result),
            ServerResult::CreateTaskResult(created) => {
                Box::pin(crate::tasks::follow(self, tool, created.task)).await
            }
            other => Err(self.unexpected("tools/call", &other)),
        }
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let request = ClientRequest::ReadResourceRequest(rmcp::model::Request::new(params));
        match self.request(request, "resources/read").await? {
            ServerResult::ReadResourceResult(result) => Ok(result),
            other => Err(self.unexpected("resources/read", &other)),
        }
    }

    /// Gets a prompt, filled with arguments.
    pub async fn get_prompt(
        &self,
        prompt: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, CallError> {
        let mut params = GetPromptRequestParams::new(prompt.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::GetPromptRequest(rmcp::model::Request::new(params));
        match self.request(request, "prompts/get").await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            other => Err(self.unexpected("prompts/get", &other)),
        }
    }

    /// Asks the server to complete an argument of a prompt or a resource template
    /// (`request` names them as the server does).
    pub async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
    ) -> Result<rmcp::model::CompleteResult, CallError> {
        let request = ClientRequest::CompleteRequest(rmcp::model::Request::new(request));
        match self.request(request, "completion/complete").await? {
            ServerResult::CompleteResult(result) => Ok(result),
            other => Err(self.unexpected("completion/complete", &other)),
        }
    }

    /// Subscribes to updates of resource `uri` ([`MountEvent::ResourceUpdated`]),
    /// for as long as the mount lasts, across restarts of the server.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), CallError> {
        self.subscription(uri, true).await
    }

    /// Ends the subscription to `uri`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), CallError> {
        self.subscription(uri, false).await
    }

    /// Whether the server offers resource subscriptions.
    pub fn offers_subscriptions(&self) -> bool {
        self.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true))
        })
    }

    async fn subscription(&self, uri: &str, on: bool) -> Result<(), CallError> {
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        if !self.offers_subscriptions() {
            return Err(CallError::Transport {
                server: self.name.clone(),
                method: method.to_owned(),
                cause: "the server does not offer resource subscriptions".to_owned(),
            });
        }
        let connection = self.live.current();
        let (peer, client) = (connection.service.peer(), connection.service.service());
        let outcome = if on {
            crate::subscriptions::subscribe(client, peer, uri).await
        } else {
            crate::subscriptions::unsubscribe(client, peer, uri).await
        };
        outcome.map_err(|e| self.error(&connection, method, e))
    }

    /// Sends a request and follows it through the server's `input_required` rounds
    /// (see `rounds`) to its result.
    async fn request(
        &self,
        mut request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, CallError> {
        let fail = |cause: String| CallError::Transport {
            server: self.name.clone(),
            method: method.to_owned(),
            cause,
        };
        let mut state_only = 0;
        for _ in 0..crate::rounds::MAX_ROUNDS {
            let result = self.request_signed_in(request.clone(), method).await?;
            let ServerResult::InputRequiredResult(asked) = result else {
                return Ok(result);
            };
            let questions = asked.input_requests.unwrap_or_default();
            if questions.is_empty() && asked.request_state.is_none() {
                return Err(fail("the server asked for input but named none".to_owned()));
            }
            if questions.is_empty() {
                tokio::time::sleep(crate::rounds::pause(state_only)).await;
                state_only += 1;
            } else {
                state_only = 0;
            }
            let answers = Box::pin(crate::rounds::answers(&self.client(), questions))
                .await
                .map_err(fail)?;
            let answers = (!answers.is_empty()).then_some(answers);
            if !crate::rounds::again(&mut request, answers, asked.request_state) {
                return Err(fail(
                    "the server asked for input on a request that cannot carry it".to_owned(),
                ));
            }
        }
        Err(fail(format!(
            "the server asked for more input {} times in a row; gave up",
            crate::rounds::MAX_ROUNDS
        )))
    }

    /// Sends a request (see [`Mount::request_once`]). One whose own answer was a
    /// refusal for want of a sign-in or of scope did not run: it is made once more
    /// after signing in again (`reauth`). Any other failure is final.
    pub(crate) async fn request_signed_in(
        &self,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, CallError> {
        let connection = self.live.current();
        let (error, challenge) = match self
            .request_once(&connection, request.clone(), method)
            .await
        {
            Ok(result) => return Ok(result),
            Err(Refused {
                error,
                challenge: Some(challenge),
            }) if self.reach.is_some() => (error, challenge),
            Err(refused) => return Err(refused.error),
        };
        let reach = self.reach.as_ref().expect("checked above");
        match Box::pin(reach.sign_in_again(&self.live, challenge, &connection)).await {
            Ok(true) => self
                .request_once(&self.live.current(), request, method)
                .await
                .map_err(|refused| refused.error),
            Ok(false) => Err(error),
            Err(why) => Err(CallError::Transport {
                server: self.name.clone(),
                method: method.to_owned(),
                cause: format!("{why} (after: {error})"),
            }),
        }
    }

    /// Sends a request on `connection` with the server's call timeout, reset by
    /// progress notifications. Dropping the future before the answer sends
    /// `notifications/cancelled`.
    async fn request_once(
        &self,
        connection: &Arc<Connection>,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, Refused> {
        let peer = connection.service.peer();
        let mut options = PeerRequestOptions::with_timeout(self.call_timeout);
        options.reset_timeout_on_progress = true;
        let handle = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.refused(connection, method, e)),
        };
        let id = handle.id.clone();
        let shared = &self.live.shared;
        let _news =
            crate::progress::current().map(|sink| shared.news.watch(&handle.progress_token, sink));
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(id.clone()),
        };
        let result = handle.await_response().await;
        guard.id = None;
        match result {
            Ok(result) => Ok(result),
            Err(ServiceError::McpError(e)) if e.code.0 == crate::limit::DROPPED_CODE => {
                let (server, method) = (self.name.clone(), method.to_owned());
                match connection.dropped.take(&id) {
                    Some(Dropped::TooLarge { size }) => Err(Refused::not(CallError::TooLarge {
                        server,
                        method,
                        size,
                        limit: self.max_message_size,
                    })),
                    Some(Dropped::NotUtf8) => {
                        Err(Refused::not(CallError::NotUtf8 { server, method }))
                    }
                    Some(Dropped::TooManyValues { limit }) => {
                        Err(Refused::not(CallError::TooManyValues {
                            server,
                            method,
                            limit,
                        }))
                    }
                    None => Err(self.refused(connection, &method, ServiceError::McpError(e))),
                }
            }
            Err(e) => {
                let mut refused = self.refused(connection, method, e);
                if let CallError::Closed { detail, .. } = &mut refused.error {
                    *detail = Box::pin(exit_detail(connection)).await;
                }
                Err(refused)
            }
        }
    }

    /// `error` as a [`CallError`], with the challenge of the refusal it is, if any.
    fn refused(&self, connection: &Connection, method: &str, error: ServiceError) -> Refused {
        Refused {
            challenge: crate::http::Challenge::of_request(&error),
            error: self.error(connection, method, error),
        }
    }

    fn error(&self, connection: &Connection, method: &str, error: ServiceError) -> CallError {
        let server = self.name.clone();
        let method = method.to_owned();
        match error {
            ServiceError::Timeout { timeout } => CallError::Timeout {
                server,
                method,
                after: timeout,
            },
            ServiceError::McpError(e) => CallError::Rejected {
                server,
                method,
                code: e.code.0,
                message: crate::error::tidy(&e.message),
            },
            // The connection is gone: the server exited (and may be restarting) or hung up.
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let status = connection.child.as_ref().and_then(|c| c.status());
                let detail = status
                    .map(|s| format!(": the process exited ({s})"))
                    .unwrap_or_default();
                CallError::Closed {
                    server,
                    method,
                    detail,
                }
            }
            other => CallError::Transport {
                server,
                method,
                cause: crate::error::tidy(&other.to_string()),
            },
        }
    }

    fn unexpected(&self, method: &str, result: &ServerResult) -> CallError {
        let cause = match result {
            ServerResult::InputRequiredResult(_) => {
                "the server asked for more input (multi-round requests are not supported yet)"
                    .to_owned()
            }
            _ => "the server answered with a result of the wrong kind".to_owned(),
        };
        CallError::Transport {
            server: self.name.clone(),
            method: method.to_owned(),
            cause,
        }
    }

    /// Closes the connection and ends the server's process group.
    pub async fn close(self) {
        self.live.closing.store(true, Ordering::Release);
        if let Some(supervisor) = &self.supervisor {
            supervisor.abort();
        }
        let connection = self.live.current();
        connection.service.cancellation_token().cancel();
        if let Some(child) = &connection.child {
            child.terminate(TERMINATE_GRACE).await;
        }
    }
}

impl Live {
    /// Takes a new connection (and what it lists) in place of the current one.
    /// It listens again on the new connection (see `subscriptions`).
    pub(crate) async fn reconnected(&self, connected: Connected) {
        let (connection, catalog) = connected.into_connection();
        self.shared.set_catalog(|c| *c = catalog);
        let old = self.current();
        self.replace(connection);
        old.service.cancellation_token().cancel();
        self.listen().await;
    }

    fn new(connected: Connected, shared: Arc<Shared>) -> Arc<Live> {
        let (connection, catalog) = connected.into_connection();
        shared.set_catalog(|c| *c = catalog);
        Arc::new(Live {
            connection: RwLock::new(Arc::new(connection)),
            shared,
            closing: AtomicBool::new(false),
            restart_asked: AtomicBool::new(false),
        })
    }

    /// Listens to the server on the current connection (see `subscriptions`).
    async fn listen(&self) {
        let connection = self.current();
        crate::subscriptions::resume(connection.service.service(), connection.service.peer()).await;
    }
}

fn client_for(
    name: &str,
    roots: Vec<Root>,
    options: &MountOptions,
    shared: &Arc<Shared>,
) -> Client {
    Client {
        server: name.into(),
        roots: roots.into(),
        elicitor: options.elicitor.clone(),
        sampler: options.sampler.clone(),
        root_lister: options.root_lister.clone(),
        shared: shared.clone(),
        trace: options.trace,
    }
}

/// `: the process exited (status); its last stderr line: ...` for a server that died
/// during a request, waiting a moment for the exit to be reaped.
async fn exit_detail(connection: &Connection) -> String {
    let Some(child) = &connection.child else {
        return String::new();
    };
    let mut detail = String::new();
    if let Ok(Some(status)) = tokio::time::timeout(Duration::from_millis(100), child.exited()).await
    {
        child.stderr.closed(Duration::from_millis(100)).await;
        detail.push_str(&format!(": the process exited ({status})"));
    }
    if let Some(last) = child.stderr.tail().last() {
        detail.push_str(&format!("; its last stderr line: {last}"));
    }
    detail
}

fn is_withheld(withheld: &[Withholding], declaration: Declaration, name: &str) -> bool {
    withheld
        .iter()
        .any(|(d, n, _)| *d == declaration && n == name)
}

/// A request that failed, and the challenge of the server's refusal when its own
/// answer was 401 or 403.
struct Refused {
    error: CallError,
    challenge: Option<crate::http::Challenge>,
}

impl Refused {
    fn not(error: CallError) -> Refused {
        Refused {
            error,
            challenge: None,
        }
    }
}

/// Sends `notifications/cancelled` for a request abandoned by its caller.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let params =
                CancelledNotificationParam::new(Some(id), Some("cancelled by prise".to_owned()));
            let _ = peer.notify_cancelled(params).await;
        });
    }
}
