//! One mounted server: its connection, its process if it has one, and what it offers.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use prise_config::{Protocol, Server, ToolFilter, Transport};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, GetPromptResult, JsonObject, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResult, Root, ServerPeerInfo, ServerResult, Tool,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, PeerRequestOptions, RunningService,
    serve_client_with_lifecycle,
};
use rmcp::{Peer, RoleClient, ServiceError};
use tokio::sync::{Mutex, broadcast};

use crate::catalog::Catalog;
use crate::child::{self, ChildServer, StderrLog};
use crate::client::{Client, Shared};
use crate::elicit::{Decline, Elicitor};
use crate::error::{CallError, MountError};
use crate::event::MountEvent;
use crate::http;

/// How long a server gets to exit after SIGTERM before it is killed.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Options that apply to every mount.
#[derive(Debug, Clone)]
pub struct MountOptions {
    /// Roots offered to servers that ask (`roots/list`).
    pub roots: Vec<Root>,
    /// Folder for per-server stderr logs; `None` keeps only the in-memory tail.
    pub log_dir: Option<std::path::PathBuf>,
    /// Who answers servers' questions (elicitation).
    pub elicitor: Arc<dyn Elicitor>,
}

impl Default for MountOptions {
    fn default() -> Self {
        let roots = std::env::current_dir()
            .ok()
            .and_then(|dir| {
                let uri = format!("file://{}", dir.to_str()?);
                Some(Root::new(uri).with_name(dir.file_name()?.to_string_lossy().into_owned()))
            })
            .into_iter()
            .collect();
        MountOptions {
            roots,
            log_dir: child::default_log_dir(),
            elicitor: Arc::new(Decline),
        }
    }
}

/// A server ready for requests.
pub struct Mount {
    name: String,
    transport: &'static str,
    service: RunningService<RoleClient, Client>,
    child: Mutex<Option<ChildServer>>,
    pid: Option<u32>,
    stderr: Option<Arc<StderrLog>>,
    pub(crate) shared: Arc<Shared>,
    filter: ToolFilter,
    call_timeout: Duration,
    startup: Duration,
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
    /// all within the server's startup timeout.
    pub async fn connect(
        server: &Server,
        options: &MountOptions,
        events: broadcast::Sender<MountEvent>,
    ) -> Result<Mount, MountError> {
        let started = Instant::now();
        let shared = Arc::new(Shared::new(events));
        let client = Client {
            server: server.name.as_str().into(),
            roots: options.roots.clone().into(),
            elicitor: options.elicitor.clone(),
            shared: shared.clone(),
        };
        // The current attempt's stderr, so that a timeout can still show its tail.
        let stderr_slot = std::sync::Mutex::new(None);
        let attempts = async {
            match attempt(
                server,
                options,
                client.clone(),
                lifecycle(server.protocol),
                &stderr_slot,
            )
            .await
            {
                // Some servers answer `server/discover` with an empty success instead of
                // an error: they are of the dated era, and say so badly. Ask again the
                // old way, on a fresh connection.
                Err(failed) if failed.retry_with_initialize => {
                    tracing::debug!(server = %server.name, "discover misunderstood ({}); retrying with initialize", failed.cause);
                    attempt(
                        server,
                        options,
                        client,
                        ClientLifecycleMode::Initialize,
                        &stderr_slot,
                    )
                    .await
                }
                outcome => outcome,
            }
        };
        let outcome = tokio::time::timeout(server.startup_timeout, attempts).await;
        let stderr = stderr_slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        let fail = |cause: String| MountError {
            server: server.name.clone(),
            cause,
            stderr_tail: stderr.as_deref().map(StderrLog::tail).unwrap_or_default(),
            log: stderr.as_ref().and_then(|s| s.path.clone()),
        };
        match outcome {
            Ok(Ok(connected)) => {
                let limits = (server.tools.clone(), server.call_timeout);
                Ok(Mount::assemble(
                    server.name.clone(),
                    server.transport.kind(),
                    connected,
                    stderr,
                    shared,
                    limits,
                    started,
                ))
            }
            Ok(Err(failed)) => Err(fail(failed.cause)),
            Err(_) => {
                let target = match &server.transport {
                    Transport::Http(remote) | Transport::Sse(remote) => format!("; {}", remote.url),
                    Transport::Stdio(_) => String::new(),
                };
                Err(fail(format!(
                    "did not start within {:?} (startup timeout{target})",
                    server.startup_timeout
                )))
            }
        }
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
        let client = Client {
            server: name.into(),
            roots: options.roots.clone().into(),
            elicitor: options.elicitor.clone(),
            shared: shared.clone(),
        };
        let connected = handshake(client, stream, ClientLifecycleMode::Initialize)
            .await
            .map_err(|failed| MountError {
                server: name.to_owned(),
                cause: failed.cause,
                stderr_tail: Vec::new(),
                log: None,
            })?;
        let limits = (ToolFilter::default(), prise_config::DEFAULT_CALL_TIMEOUT);
        Ok(Mount::assemble(
            name.to_owned(),
            "in-process",
            connected,
            None,
            shared,
            limits,
            started,
        ))
    }

    fn assemble(
        name: String,
        transport: &'static str,
        connected: Connected,
        stderr: Option<Arc<StderrLog>>,
        shared: Arc<Shared>,
        (filter, call_timeout): (ToolFilter, Duration),
        started: Instant,
    ) -> Mount {
        shared.set_catalog(|c| *c = connected.catalog);
        Mount {
            name,
            transport,
            service: connected.service,
            pid: connected.child.as_ref().and_then(ChildServer::pid),
            child: Mutex::new(connected.child),
            stderr,
            shared,
            filter,
            call_timeout,
            startup: started.elapsed(),
        }
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
        self.service.peer_info()
    }

    /// The process id of a stdio server (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How long it took to start and list.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// The tools shown to users and models: listed by the server, kept by the
    /// configured filter, duplicates dropped.
    pub fn tools(&self) -> Vec<Tool> {
        let catalog = self.catalog();
        let mut seen = std::collections::HashSet::new();
        catalog
            .tools
            .into_iter()
            .filter(|tool| self.filter.permits(&tool.name))
            .filter(|tool| {
                let first = seen.insert(tool.name.clone());
                if !first {
                    tracing::warn!(server = %self.name, "server lists tool {} twice; keeping the first", tool.name);
                }
                first
            })
            .collect()
    }

    /// Everything as last listed, before filtering.
    pub fn catalog(&self) -> Catalog {
        self.shared
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last lines of the server's stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.as_ref().map(|s| s.tail()).unwrap_or_default()
    }

    /// Calls a tool by its name on the server. A result with `isError` is a result.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        match self
            .request(
                ClientRequest::CallToolRequest(rmcp::model::Request::new(params)),
                "tools/call",
            )
            .await?
        {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(self.unexpected("tools/call", &other)),
        }
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        match self
            .request(
                ClientRequest::ReadResourceRequest(rmcp::model::Request::new(params)),
                "resources/read",
            )
            .await?
        {
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
        match self
            .request(
                ClientRequest::GetPromptRequest(rmcp::model::Request::new(params)),
                "prompts/get",
            )
            .await?
        {
            ServerResult::GetPromptResult(result) => Ok(result),
            other => Err(self.unexpected("prompts/get", &other)),
        }
    }

    /// Sends a request with the server's call timeout, reset by progress notifications.
    /// Dropping the future before the answer sends `notifications/cancelled`.
    async fn request(
        &self,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, CallError> {
        let peer = self.service.peer();
        let mut options = PeerRequestOptions::with_timeout(self.call_timeout);
        options.reset_timeout_on_progress = true;
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.error(method, e))?;
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let result = handle.await_response().await;
        guard.id = None;
        match result {
            Ok(result) => Ok(result),
            Err(e) => Err(self.error_with_exit(method, e).await),
        }
    }

    fn error(&self, method: &str, error: ServiceError) -> CallError {
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
                message: e.message.to_string(),
            },
            ServiceError::TransportClosed => CallError::Closed {
                server,
                method,
                detail: String::new(),
            },
            other => CallError::Transport {
                server,
                method,
                cause: other.to_string(),
            },
        }
    }

    /// Like [`Self::error`], adding the exit status and stderr tail when the server died.
    async fn error_with_exit(&self, method: &str, error: ServiceError) -> CallError {
        let mut error = self.error(method, error);
        if let CallError::Closed { detail, .. } = &mut error {
            let status = match self.child.lock().await.as_mut() {
                Some(child) => wait_briefly(child).await,
                None => None,
            };
            if let Some(status) = status {
                detail.push_str(&format!(": the process exited ({status})"));
            }
            if let Some(last) = self.stderr_tail().last() {
                detail.push_str(&format!("; its last stderr line: {last}"));
            }
        }
        error
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
        let _ = self.service.cancel().await;
        if let Some(mut child) = self.child.lock().await.take() {
            child.terminate(TERMINATE_GRACE).await;
        }
    }
}

/// A handshake that succeeded, with what the server offers.
struct Connected {
    service: RunningService<RoleClient, Client>,
    catalog: Catalog,
    child: Option<ChildServer>,
}

/// A handshake that did not.
struct Failed {
    cause: String,
    /// The server misunderstood `server/discover`; `initialize` may well work.
    retry_with_initialize: bool,
}

impl Failed {
    fn new(cause: String) -> Failed {
        Failed {
            cause,
            retry_with_initialize: false,
        }
    }
}

/// One try at starting or reaching a server and handshaking with `lifecycle`.
async fn attempt(
    server: &Server,
    options: &MountOptions,
    client: Client,
    lifecycle: ClientLifecycleMode,
    stderr_slot: &std::sync::Mutex<Option<Arc<StderrLog>>>,
) -> Result<Connected, Failed> {
    match &server.transport {
        Transport::Stdio(stdio) => {
            let (mut process, stdout, stdin) =
                child::spawn(&server.name, stdio, options.log_dir.as_deref()).map_err(|e| {
                    let hint = if e.source.kind() == std::io::ErrorKind::NotFound {
                        " (is it installed and on PATH?)"
                    } else {
                        ""
                    };
                    Failed::new(format!("{e}{hint}"))
                })?;
            *stderr_slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(process.stderr.clone());
            match handshake(client, (stdout, stdin), lifecycle).await {
                Ok(mut connected) => {
                    connected.child = Some(process);
                    Ok(connected)
                }
                Err(mut failed) => {
                    // Give the stderr reader a moment to catch the last words of a crash.
                    let status = wait_briefly(&mut process).await;
                    if let Some(status) = status {
                        process.stderr.closed(Duration::from_millis(200)).await;
                        failed.cause = format!("{} (the process exited: {status})", failed.cause);
                    }
                    process.terminate(TERMINATE_GRACE).await;
                    Err(failed)
                }
            }
        }
        Transport::Http(remote) => {
            let transport = http::transport(remote).map_err(Failed::new)?;
            handshake(client, transport, lifecycle)
                .await
                .map_err(|mut failed| {
                    failed.cause = format!("{} ({})", failed.cause, remote.url);
                    failed
                })
        }
        Transport::Sse(_) => Err(Failed::new(
            "the legacy HTTP+SSE transport is not available in this build yet".to_owned(),
        )),
    }
}

/// The handshake in `lifecycle`, then the listing of everything the server offers.
async fn handshake<T, E, A>(
    client: Client,
    transport: T,
    lifecycle: ClientLifecycleMode,
) -> Result<Connected, Failed>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let probing = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let service = serve_client_with_lifecycle(client, transport, lifecycle)
        .await
        .map_err(|e| Failed {
            retry_with_initialize: probing && misunderstood_discover(&e),
            cause: describe_init(e),
        })?;
    let catalog = list(&service).await.map_err(Failed::new)?;
    Ok(Connected {
        service,
        catalog,
        child: None,
    })
}

/// Whether the handshake failed because the server answered `server/discover` with
/// something other than a discover result or a JSON-RPC error.
fn misunderstood_discover(error: &ClientInitializeError) -> bool {
    matches!(
        error,
        ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::UncorrelatedErrorResponse { .. }
            | ClientInitializeError::LegacyFallbackFailed { .. }
    )
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

fn lifecycle(protocol: Protocol) -> ClientLifecycleMode {
    match protocol {
        Protocol::Legacy => ClientLifecycleMode::Initialize,
        Protocol::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Protocol::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    }
}

async fn list(service: &RunningService<RoleClient, Client>) -> Result<Catalog, String> {
    let caps = service
        .peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default();
    Catalog::list(service.peer(), &caps)
        .await
        .map_err(|e| format!("listing what it offers failed: {e}"))
}

fn describe_init(error: ClientInitializeError) -> String {
    match error {
        // Writing to a server that already exited fails with a broken pipe; to the user
        // that is the same event as reading end-of-file from it. Other transport errors
        // (a refused connection, an HTTP status) are worth showing as they are.
        ClientInitializeError::TransportError { error, .. } => match root_cause(&error) {
            Some(Cause::System(cause)) if !cause.contains("Broken pipe") => {
                format!("cannot connect: {cause}")
            }
            Some(Cause::Protocol(cause)) if cause.contains("authorization required") => {
                format!("{cause} (is the token in its headers set and valid?)")
            }
            Some(Cause::Protocol(cause)) => format!("handshake failed: {cause}"),
            _ => "closed the connection during the handshake".to_owned(),
        },
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled => {
            "closed the connection during the handshake".to_owned()
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => describe_init(*fallback),
        ClientInitializeError::JsonRpcError(e) => {
            format!("rejected the handshake: {} (code {})", e.message, e.code.0)
        }
        other => format!("handshake failed: {other}"),
    }
}

/// What the innermost error of a chain says.
enum Cause {
    /// The operating system's words: a refused or reset connection, a broken pipe.
    System(String),
    /// The peer's or the protocol's: an HTTP status, a rejected request.
    Protocol(String),
}

/// The innermost error of a chain: the one that says what actually happened.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> Option<Cause> {
    let mut current = error.source()?;
    while let Some(next) = current.source() {
        current = next;
    }
    // rmcp wraps reqwest's error without exposing it as a source, so the system's
    // words ("Connection refused") only survive in the debug form.
    let debug = format!("{current:?}");
    if let Some(start) = debug.find("message: \"") {
        let rest = &debug[start + 10..];
        if let Some(end) = rest.find('"') {
            return Some(Cause::System(rest[..end].to_owned()));
        }
    }
    let text = current.to_string();
    if text.contains("Broken pipe") {
        Some(Cause::System(text))
    } else {
        Some(Cause::Protocol(text))
    }
}

/// The exit status if the process ends within a moment; `None` if it is still running.
async fn wait_briefly(child: &mut ChildServer) -> Option<std::process::ExitStatus> {
    for _ in 0..10 {
        if let Some(status) = child.try_status() {
            return Some(status);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}
