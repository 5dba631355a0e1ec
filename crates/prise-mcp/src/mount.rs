//! One mounted server: its connection, its process if it has one, and what it offers.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use prise_config::{RestartPolicy, Server, ToolFilter, Transport};
use prise_trust::pins::{Change, Declaration};
use rmcp::model::{
    CallToolResult, GetPromptResult, JsonObject, ReadResourceResult, Root, ServerPeerInfo, Tool,
};
use rmcp::service::ClientLifecycleMode;
use tokio::sync::broadcast;

use crate::call::Caller;
use crate::call::reauth::Reach;
use crate::catalog::Catalog;
use crate::error::{CallError, MountError, MountFailure, RestartError, TrustError};
use crate::event::MountEvent;
use crate::options::MountOptions;
use crate::session::dial::{self, StderrSlot};
use crate::session::handler::{Handler, Shared};
use crate::session::state::Live;
use crate::session::vetting::{Vetting, Withholding};
use crate::supervise;
use crate::transport::sandboxing;
use crate::transport::stdio::{StderrLog, TERMINATE_GRACE};

/// A server ready for requests.
pub struct Mount {
    /// Its requests' path, on the connection of the moment.
    caller: Caller,
    transport: &'static str,
    filter: ToolFilter,
    startup: Duration,
    supervisor: Option<tokio::task::AbortHandle>,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("name", &self.caller.name)
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
            kind: MountFailure::Configuration,
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
        shared.vetting = Vetting::of(server, options.pins.as_ref(), &offered);
        let shared = Arc::new(shared);
        let handler = handler_for(&server.name, roots, options, &shared);
        let stderr = StderrSlot::default();
        let outcome = tokio::time::timeout(
            server.startup_timeout,
            dial::establish(server, options, handler.clone(), &stderr),
        )
        .await;
        let stderr = stderr.lock().unwrap_or_else(|e| e.into_inner()).take();
        let fail = |kind: MountFailure, cause: String| {
            let stderr_tail = stderr.as_deref().map(StderrLog::tail).unwrap_or_default();
            let sandboxed = match &server.transport {
                Transport::Stdio(stdio) => stdio.sandbox.as_ref().map(|s| (stdio, s)),
                _ => None,
            };
            let note = sandboxed
                .map(|(stdio, sandbox)| {
                    sandboxing::explain(&sandboxing::policy(stdio, sandbox), &stderr_tail)
                })
                .unwrap_or_default();
            MountError {
                server: server.name.clone(),
                kind,
                cause: cause + &note,
                stderr_tail,
                log: stderr.as_ref().and_then(|s| s.path.clone()),
            }
        };
        let connected = match outcome {
            Ok(Ok(connected)) => connected,
            Ok(Err(failed)) => return Err(fail(failed.kind, failed.cause)),
            Err(_) => {
                let target = match &server.transport {
                    Transport::Http(remote) | Transport::Sse(remote) => format!("; {}", remote.url),
                    Transport::Stdio(_) => String::new(),
                };
                return Err(fail(
                    MountFailure::Timeout,
                    format!(
                        "did not start within {:?} (startup timeout{target})",
                        server.startup_timeout
                    ),
                ));
            }
        };
        let live = Live::new(connected, shared);
        live.listen().await;
        let restarts = matches!(server.restart, RestartPolicy::OnFailure { .. })
            && matches!(server.transport, Transport::Stdio(_));
        let reach = matches!(server.transport, Transport::Http(_)).then(|| {
            Arc::new(Reach {
                server: server.clone(),
                options: options.clone(),
                handler: handler.clone(),
                made: Default::default(),
                signing_in: Default::default(),
            })
        });
        let supervisor = restarts
            .then(|| supervise::spawn(server.clone(), options.clone(), handler, live.clone()));
        Ok(Mount {
            caller: Caller {
                name: server.name.clone(),
                live,
                call_timeout: server.call_timeout,
                max_message_size: server.max_message_size,
                reach,
            },
            transport: server.transport.kind(),
            filter: server.tools.clone(),
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
        let handler = handler_for(name, Vec::new(), options, &shared);
        let connected = dial::handshake(handler, stream, ClientLifecycleMode::Initialize)
            .await
            .map_err(|failed| MountError {
                server: name.to_owned(),
                kind: failed.kind,
                cause: failed.cause,
                stderr_tail: Vec::new(),
                log: None,
            })?;
        Ok(Mount {
            caller: Caller {
                name: name.to_owned(),
                live: Live::new(connected, shared),
                call_timeout: prise_config::DEFAULT_CALL_TIMEOUT,
                max_message_size: prise_config::DEFAULT_MAX_MESSAGE_SIZE,
                reach: None,
            },
            transport: "in-process",
            filter: ToolFilter::default(),
            startup: started.elapsed(),
            supervisor: None,
        })
    }

    /// The server's name in the configuration.
    pub fn name(&self) -> &str {
        &self.caller.name
    }

    /// `stdio`, `http`, `sse` or `in-process`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// What the server said about itself: protocol version, capabilities, name.
    pub fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.caller.live.current().service.peer_info()
    }

    /// The process id of a stdio server (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.caller
            .live
            .current()
            .child
            .as_ref()
            .and_then(|c| c.pid())
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
                    tracing::warn!(server = %self.caller.name, "server lists tool {} twice; keeping the first", tool.name);
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
                .caller
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
        self.caller.live.shared.vetting.is_some()
    }

    /// The definition pinned for `name` (see `prise_trust::pins`); `None` when it has
    /// none or pinning is off.
    pub fn pinned(&self, declaration: Declaration, name: &str) -> Option<serde_json::Value> {
        self.caller
            .live
            .shared
            .vetting
            .as_ref()?
            .pinned(declaration, name)
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
    ) -> Result<std::path::PathBuf, TrustError> {
        let shared = &self.caller.live.shared;
        let vetting = shared
            .vetting
            .as_ref()
            .ok_or_else(|| TrustError::PinsNothing(self.caller.name.clone()))?;
        let definition =
            self.declared(declaration, name)
                .ok_or_else(|| TrustError::NotDeclared {
                    server: self.caller.name.clone(),
                    declaration,
                    name: name.to_owned(),
                })?;
        let path = vetting
            .accept(declaration, &definition)
            .map_err(TrustError::Pins)?;
        // Judged again, so that what this mount serves follows.
        shared.set_catalog(|_| {});
        Ok(path)
    }

    /// Everything as last listed, before filtering.
    pub fn catalog(&self) -> Catalog {
        self.caller
            .live
            .shared
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.caller.live.shared
    }

    /// Starts the server's process again, for a person who asks (the web page's
    /// restart): it is ended as `close` ends it, and its supervisor starts it at once,
    /// without counting it against `maxRestarts`. Only stdio servers that restart
    /// (`"restart"` is not `"never"`) can be; the error says why another cannot.
    pub async fn restart(&self) -> Result<(), RestartError> {
        let connection = self.caller.live.current();
        let (Some(child), Some(_)) = (&connection.child, &self.supervisor) else {
            return Err(RestartError::NotRestartable(self.caller.name.clone()));
        };
        self.caller
            .live
            .restart_asked
            .store(true, Ordering::Release);
        child.terminate(TERMINATE_GRACE).await;
        Ok(())
    }

    /// How long a request may go without news.
    pub(crate) fn call_timeout(&self) -> Duration {
        self.caller.call_timeout
    }

    /// Calls a tool by its name on the server. A result with `isError` is a result.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        self.caller.call_tool(tool, arguments).await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, CallError> {
        self.caller.read_resource(uri).await
    }

    /// Gets a prompt, filled with arguments.
    pub async fn get_prompt(
        &self,
        prompt: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, CallError> {
        self.caller.get_prompt(prompt, arguments).await
    }

    /// Asks the server to complete an argument of a prompt or a resource template
    /// (`request` names them as the server does).
    pub async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
    ) -> Result<rmcp::model::CompleteResult, CallError> {
        self.caller.complete(request).await
    }

    /// Subscribes to updates of resource `uri` ([`MountEvent::ResourceUpdated`]),
    /// for as long as the mount lasts, across restarts of the server.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), CallError> {
        self.caller.subscription(uri, true).await
    }

    /// Ends the subscription to `uri`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), CallError> {
        self.caller.subscription(uri, false).await
    }

    /// Whether the server offers resource subscriptions.
    pub fn offers_subscriptions(&self) -> bool {
        self.caller.offers_subscriptions()
    }

    /// The last lines of the server's stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.caller
            .live
            .current()
            .child
            .as_ref()
            .map(|c| c.stderr.tail())
            .unwrap_or_default()
    }

    /// Closes the connection and ends the server's process group.
    pub async fn close(self) {
        self.caller.live.closing.store(true, Ordering::Release);
        if let Some(supervisor) = &self.supervisor {
            supervisor.abort();
        }
        let connection = self.caller.live.current();
        connection.service.cancellation_token().cancel();
        if let Some(child) = &connection.child {
            child.terminate(TERMINATE_GRACE).await;
        }
    }
}

fn handler_for(
    name: &str,
    roots: Vec<Root>,
    options: &MountOptions,
    shared: &Arc<Shared>,
) -> Handler {
    Handler {
        server: name.into(),
        roots: roots.into(),
        elicitor: options.elicitor.clone(),
        sampler: options.sampler.clone(),
        root_lister: options.root_lister.clone(),
        shared: shared.clone(),
        trace: options.trace,
    }
}

fn is_withheld(withheld: &[Withholding], declaration: Declaration, name: &str) -> bool {
    withheld
        .iter()
        .any(|(d, n, _)| *d == declaration && n == name)
}
