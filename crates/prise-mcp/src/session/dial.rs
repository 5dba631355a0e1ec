//! Reaching a server: spawning or connecting, the handshake in the right protocol era,
//! and the first listing of what it offers.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use prise_config::{Protocol, Server, Transport};
use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, RunningService, serve_client_with_lifecycle,
    serve_directly,
};
use rmcp::transport::async_rw::AsyncRwTransport;

use crate::auth::{self, BoxFuture, TokenStore};
use crate::catalog::Catalog;
use crate::eras::{Era, EraCache};
use crate::error::MountFailure;
use crate::net;
use crate::options::MountOptions;
use crate::session::handler::Handler;
use crate::session::probe;
use crate::transport::guard::{DroppedAnswers, LineLimit};
use crate::transport::stdio::TERMINATE_GRACE;
use crate::transport::stdio::{self, ChildServer, StderrLog};
use crate::transport::taps::{Noting, TaskTools};
use crate::transport::{http, sse};

/// How long a server that asked for roots while starting is given to apply them
/// before the first request (see [`handshake`]). server-filesystem 2026.8.31 took
/// about 5 ms on a machine here; no message tells when it is done.
const ROOTS_SETTLE: Duration = Duration::from_millis(100);

/// A live connection: the rmcp service and, for stdio, the process behind it.
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, Handler>,
    pub child: Option<ChildServer>,
    /// Requests whose answers were dropped out of bounds, and why (stdio).
    pub dropped: Arc<DroppedAnswers>,
    /// The tools that must be called as tasks (2025-11-25 servers).
    pub task_tools: Arc<TaskTools>,
}

/// Where the stderr of the latest attempt is kept, so that a timeout can still show it.
pub(crate) type StderrSlot = std::sync::Mutex<Option<Arc<StderrLog>>>;

/// Reaches a configured server in its configured era. In `auto`, the era remembered
/// from last time is tried directly; otherwise, or if that fails, the server is
/// probed with `server/discover`: a stdio server by prise itself, on the process
/// that will serve (see `probe`), a remote one by rmcp, which falls back to
/// `initialize`. Some remote servers answer `server/discover` with an empty success
/// instead of an error: they are of the dated era and say so badly, so such a
/// server is asked again the old way, on a fresh connection.
pub(crate) async fn establish(
    server: &Server,
    options: &MountOptions,
    client: Handler,
    stderr: &StderrSlot,
) -> Result<Connected, Failed> {
    let remembered = match (server.protocol, &options.eras) {
        (Protocol::Auto, Some(eras)) => remembered_era(eras, server).await,
        _ => None,
    };
    if let Some(era) = remembered {
        let lifecycle = match era {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        match attempt(server, options, client.clone(), lifecycle, stderr).await {
            Ok(connected) => return Ok(connected),
            Err(failed) => {
                tracing::debug!(server = %server.name, "remembered era {era:?} failed ({}); probing", failed.cause)
            }
        }
    }
    let outcome = match attempt(
        server,
        options,
        client.clone(),
        lifecycle(server.protocol),
        stderr,
    )
    .await
    {
        Err(failed) if failed.retry_with_initialize => {
            tracing::debug!(server = %server.name, "discover misunderstood ({}); retrying with initialize", failed.cause);
            attempt(
                server,
                options,
                client,
                ClientLifecycleMode::Initialize,
                stderr,
            )
            .await
        }
        outcome => outcome,
    };
    if let (Ok(connected), Protocol::Auto, Some(eras)) = (&outcome, server.protocol, &options.eras)
    {
        // A server that answered the probe too late to be asked the new way still
        // speaks it: the next mount asks it so.
        let modern = connected
            .service
            .peer_info()
            .is_some_and(|info| info.protocol_version == ProtocolVersion::V_2026_07_28)
            || connected
                .late_modern
                .as_ref()
                .is_some_and(|late| late.load(std::sync::atomic::Ordering::Acquire));
        remember_era(eras, server, if modern { Era::Modern } else { Era::Legacy }).await;
    }
    outcome
}

/// The era `server` spoke last time, read off the runtime's thread.
async fn remembered_era(eras: &EraCache, server: &Server) -> Option<Era> {
    let (eras, server) = (eras.clone(), server.clone());
    tokio::task::spawn_blocking(move || eras.get(&server))
        .await
        .ok()
        .flatten()
}

/// Remembers the era `server` spoke, written off the runtime's thread.
async fn remember_era(eras: &EraCache, server: &Server, era: Era) {
    let (eras, server) = (eras.clone(), server.clone());
    let _ = tokio::task::spawn_blocking(move || eras.put(&server, era)).await;
}

/// A handshake that succeeded, with what the server offers.
pub(crate) struct Connected {
    pub service: RunningService<RoleClient, Handler>,
    pub catalog: Catalog,
    pub child: Option<ChildServer>,
    pub dropped: Arc<DroppedAnswers>,
    pub task_tools: Arc<TaskTools>,
    /// Set when a stdio server answered the era probe late, in the 2026-07-28 era.
    pub late_modern: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Connected {
    /// The connection part, once the catalog has been taken.
    pub fn into_connection(self) -> (Connection, Catalog) {
        (
            Connection {
                service: self.service,
                child: self.child,
                dropped: self.dropped,
                task_tools: self.task_tools,
            },
            self.catalog,
        )
    }
}

/// A handshake that did not.
pub(crate) struct Failed {
    pub kind: MountFailure,
    pub cause: String,
    /// The server misunderstood `server/discover`; `initialize` may well work.
    pub retry_with_initialize: bool,
    /// The server refused this attempt for want of a sign-in or of scope.
    pub challenge: Option<http::Challenge>,
}

impl Failed {
    /// A handshake that failed: the usual kind.
    pub fn new(cause: String) -> Failed {
        Failed::of(MountFailure::Handshake, cause)
    }

    /// A failure of `kind`.
    pub fn of(kind: MountFailure, cause: String) -> Failed {
        Failed {
            kind,
            cause,
            retry_with_initialize: false,
            challenge: None,
        }
    }
}

/// One try at starting or reaching a server and handshaking with `lifecycle`.
async fn attempt(
    server: &Server,
    options: &MountOptions,
    client: Handler,
    lifecycle: ClientLifecycleMode,
    stderr_slot: &StderrSlot,
) -> Result<Connected, Failed> {
    match &server.transport {
        Transport::Stdio(stdio) => {
            // Off the runtime's thread: a sandbox makes folders and asks the kernel
            // what it supports before the fork.
            let (name, config, logs) =
                (server.name.clone(), stdio.clone(), options.log_dir.clone());
            let spawned =
                tokio::task::spawn_blocking(move || stdio::spawn(&name, &config, logs.as_deref()))
                    .await
                    .map_err(|e| {
                        Failed::of(MountFailure::Start, format!("starting it failed: {e}"))
                    })?;
            let (process, stdout, stdin) = spawned.map_err(|e| {
                let hint = if e.source.kind() == std::io::ErrorKind::NotFound {
                    " (is it installed and on PATH?)"
                } else {
                    ""
                };
                Failed::of(MountFailure::Start, format!("{e}{hint}"))
            })?;
            *stderr_slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(process.stderr.clone());
            // prise bounds each line itself (see `limit`), so that an answer out of bounds
            // fails its request at once instead of being dropped.
            let dropped = Arc::new(DroppedAnswers::default());
            let task_tools = Arc::new(TaskTools::default());
            let stdout = Noting::new(
                LineLimit::new(
                    stdout,
                    server.max_message_size,
                    &server.name,
                    dropped.clone(),
                ),
                task_tools.clone(),
            );
            let transport = AsyncRwTransport::new(stdout, stdin).with_max_line_length(usize::MAX);
            let outcome = match lifecycle {
                ClientLifecycleMode::Auto { .. } => probed_handshake(client, transport).await,
                lifecycle => handshake(client, transport, lifecycle).await,
            };
            match outcome {
                Ok(mut connected) => {
                    connected.child = Some(process);
                    connected.dropped = dropped;
                    connected.task_tools = task_tools;
                    Ok(connected)
                }
                Err(mut failed) => {
                    // Give the stderr reader a moment to catch the last words of a crash.
                    let status = tokio::time::timeout(Duration::from_millis(100), process.exited())
                        .await
                        .ok()
                        .flatten();
                    if let Some(status) = status {
                        process.stderr.closed(Duration::from_millis(200)).await;
                        failed.cause = format!("{} (the process exited: {status})", failed.cause);
                    }
                    process.terminate(TERMINATE_GRACE).await;
                    Err(failed)
                }
            }
        }
        Transport::Http(remote) => http_attempt(server, remote, options, client, lifecycle)
            .await
            .map_err(|mut failed| {
                failed.cause = format!("{} ({})", failed.cause, remote.url);
                failed
            }),
        Transport::Sse(remote) => {
            sse_attempt(server, remote, options, client)
                .await
                .map_err(|mut failed| {
                    failed.cause = format!("{} ({})", failed.cause, remote.url);
                    failed
                })
        }
    }
}

/// Connects over Streamable HTTP, signed in when a sign-in is on record (see
/// [`signing_in`]).
async fn http_attempt(
    server: &Server,
    remote: &prise_config::Remote,
    options: &MountOptions,
    client: Handler,
    lifecycle: ClientLifecycleMode,
) -> Result<Connected, Failed> {
    let noting = http::Notes {
        task_tools: Arc::default(),
        dropped: Arc::default(),
        max_message_size: server.max_message_size,
        server: server.name.as_str().into(),
    };
    let noting = &noting;
    let lifecycle = &lifecycle;
    signing_in(server, remote, options, |manager| {
        let client = client.clone();
        Box::pin(async move {
            match manager {
                Some(signed_in) => {
                    let transport = http::signed_in_transport(remote, signed_in, noting)
                        .map_err(|why| Failed::of(MountFailure::Configuration, why))?;
                    handshake(client, transport, lifecycle.clone()).await
                }
                None => {
                    let transport = http::transport(remote, noting)
                        .map_err(|why| Failed::of(MountFailure::Configuration, why))?;
                    handshake(client, transport, lifecycle.clone()).await
                }
            }
            .map(|mut connected| {
                connected.task_tools = noting.task_tools.clone();
                connected.dropped = noting.dropped.clone();
                connected
            })
        })
    })
    .await
}

/// Connects over legacy SSE, signed in when a sign-in is on record (see
/// [`signing_in`]). The token is taken (refreshed if need be) when connecting: the
/// transport predates sign-in, so a token that runs out mid-session fails its
/// request, and the next mount signs in again.
async fn sse_attempt(
    server: &Server,
    remote: &prise_config::Remote,
    options: &MountOptions,
    client: Handler,
) -> Result<Connected, Failed> {
    signing_in(server, remote, options, |manager| {
        let client = client.clone();
        Box::pin(async move {
            let mut remote = remote.clone();
            if let Some(signed_in) = manager {
                let token = signed_in
                    .manager
                    .get_access_token()
                    .await
                    .map_err(|e| Failed::new(format!("the sign-in cannot be used: {e}")))?;
                remote
                    .headers
                    .push(("Authorization".to_owned(), format!("Bearer {token}")));
            }
            let http = crate::net::for_server().map_err(|e| Failed::new(e.to_string()))?;
            let dropped = Arc::new(DroppedAnswers::default());
            let transport =
                sse::LegacySse::connect(&remote, http, server.max_message_size, &dropped)
                    .await
                    .map_err(|unopened| Failed {
                        challenge: unopened.challenge,
                        ..Failed::new(unopened.cause)
                    })?;
            // The legacy transport predates server/discover: initialize it is.
            let mut connected =
                handshake(client, transport, ClientLifecycleMode::Initialize).await?;
            connected.dropped = dropped;
            Ok(connected)
        })
    })
    .await
}

/// Makes `attempt`, with the sign-in on record if there is one. When the server
/// refuses the attempt for want of a sign-in (a 401 with its challenge), signs in if someone
/// can (`options.sign_in`, or by itself for a machine) and attempts again; else says
/// how to sign in. A token configured in the headers is the person's own choice: a
/// 401 then says it is wrong, not that prise should sign in instead.
async fn signing_in<'a>(
    server: &Server,
    remote: &prise_config::Remote,
    options: &MountOptions,
    mut attempt: impl FnMut(Option<auth::Signed>) -> BoxFuture<'a, Result<Connected, Failed>>,
) -> Result<Connected, Failed> {
    let store = options
        .auth_dir
        .as_deref()
        .map(|dir| TokenStore::new(dir, &server.name, &remote.url));
    let mut manager = match &store {
        Some(store) => auth::stored(&remote.url, store).await,
        None => None,
    };
    // A server may ask to sign in again straight after a sign-in: its authorization
    // server moved (SEP-2352), or it took the token for one request and not the next.
    // Once more is worth trying; after that the sign-in is not what fails.
    let mut sign_ins = 0;
    loop {
        let had_sign_in = manager.is_some();
        let outcome = attempt(manager.take()).await;
        let challenge = outcome.as_ref().err().and_then(|f| f.challenge.clone());
        let (Some(http::Challenge::SignIn(header)), false) = (challenge, remote.has_own_token())
        else {
            return outcome;
        };
        if sign_ins == MAX_SIGN_INS {
            return outcome;
        }
        sign_ins += 1;
        let nobody = options.sign_in.is_none() && !remote.signs_in_by_itself();
        let (Some(store), false) = (&store, nobody) else {
            return Err(if had_sign_in {
                Failed::of(
                    MountFailure::SignInRefused,
                    format!(
                        "refused the sign-in on record (revoked or expired): run `prise auth login {}` to sign in again",
                        server.name
                    ),
                )
            } else {
                Failed::of(MountFailure::NeedsSignIn, auth::needs_sign_in(&server.name))
            });
        };
        let signed_in = auth::sign_in_for(
            server,
            remote,
            options.sign_in.as_deref(),
            store,
            &header,
            &[],
        )
        .await
        .map_err(|why| Failed::of(MountFailure::SignIn, why))?;
        manager = Some(auth::Signed::kept(signed_in, store));
    }
}

/// Sign-ins one connection attempt may make.
const MAX_SIGN_INS: u32 = 2;

/// The handshake in the era a probe of prise's finds on `transport` (see `probe`),
/// then the listing.
async fn probed_handshake<T>(client: Handler, transport: T) -> Result<Connected, Failed>
where
    T: rmcp::transport::Transport<RoleClient> + 'static,
{
    let info = rmcp::ClientHandler::get_info(&client);
    let (probed, answer) = probe::Probed::probe(transport, &info, probe::PATIENCE)
        .await
        .map_err(|e| Failed::new(e.to_string()))?;
    let late_modern = probed.late_modern();
    let mut connected = match answer {
        probe::Answer::Modern => {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            handshake(client, probed, lifecycle).await?
        }
        probe::Answer::Legacy => handshake(client, probed, ClientLifecycleMode::Initialize).await?,
        probe::Answer::Initialized(result) => {
            let (shared, offers_roots) = (client.shared.clone(), !client.roots.is_empty());
            let info = Some((*result).into());
            let service = if client.trace {
                let traced = crate::transport::trace::Traced::new(
                    probed,
                    client.server.clone(),
                    client.shared.events.clone(),
                );
                serve_directly(client, traced, info)
            } else {
                serve_directly(client, probed, info)
            };
            ready(service, &shared, offers_roots).await?
        }
    };
    connected.late_modern = Some(late_modern);
    Ok(connected)
}

/// The handshake in `lifecycle`, then the listing of everything the server offers.
pub(crate) async fn handshake<T, E, A>(
    client: Handler,
    transport: T,
    lifecycle: ClientLifecycleMode,
) -> Result<Connected, Failed>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let probing = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let (shared, offers_roots) = (client.shared.clone(), !client.roots.is_empty());
    let started = if client.trace {
        let traced = crate::transport::trace::Traced::new(
            transport.into_transport(),
            client.server.clone(),
            client.shared.events.clone(),
        );
        serve_client_with_lifecycle(client, traced, lifecycle).await
    } else {
        serve_client_with_lifecycle(client, transport, lifecycle).await
    };
    let service = started.map_err(|e| Failed {
        kind: MountFailure::Handshake,
        retry_with_initialize: probing && misunderstood_discover(&e),
        challenge: http::Challenge::of_handshake(&e),
        cause: describe_init(e),
    })?;
    ready(service, &shared, offers_roots).await
}

/// A server past its handshake, listed and ready for requests.
async fn ready(
    service: RunningService<RoleClient, Handler>,
    shared: &crate::session::handler::Shared,
    offers_roots: bool,
) -> Result<Connected, Failed> {
    let catalog = list(&service).await?;
    // A server that asked for roots while starting (server-filesystem does, on
    // `initialized`) switches to them some time after reading the answer: it checks
    // each folder on disk first. A call made in between would still see the folders
    // it started with, so the mount is ready only once that time has passed.
    let asked = *shared.roots_asked.lock().unwrap_or_else(|e| e.into_inner());
    if offers_roots && let Some(asked) = asked {
        tokio::time::sleep_until((asked + ROOTS_SETTLE).into()).await;
    }
    Ok(Connected {
        service,
        catalog,
        child: None,
        dropped: Arc::default(),
        task_tools: Arc::default(),
        late_modern: None,
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

pub(crate) fn lifecycle(protocol: Protocol) -> ClientLifecycleMode {
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

async fn list(service: &RunningService<RoleClient, Handler>) -> Result<Catalog, Failed> {
    let caps = service
        .peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default();
    Catalog::list(service.peer(), &caps)
        .await
        .map_err(|e| Failed {
            challenge: http::Challenge::of_request(&e),
            ..Failed::new(format!("listing what it offers failed: {e}"))
        })
}

fn describe_init(error: ClientInitializeError) -> String {
    crate::error::tidy(&describe_init_raw(error))
}

fn describe_init_raw(error: ClientInitializeError) -> String {
    match error {
        // Writing to a server that already exited fails with a broken pipe; to the person
        // that is the same event as reading end-of-file from it. Other transport errors
        // (a refused connection, an HTTP status) are worth showing as they are.
        ClientInitializeError::TransportError { error, .. } => match net::root_cause(&error) {
            Some(net::Cause::Unresolved(words)) => {
                format!("cannot connect: the host name does not resolve ({words})")
            }
            Some(net::Cause::System(words)) => format!("cannot connect: {words}"),
            Some(net::Cause::SignIn(words)) => {
                format!("{words} (is the token in its headers set and valid?)")
            }
            Some(net::Cause::Protocol(words)) => format!("handshake failed: {words}"),
            Some(net::Cause::Closed) | None => {
                "closed the connection during the handshake".to_owned()
            }
        },
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled => {
            "closed the connection during the handshake".to_owned()
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            describe_init_raw(*fallback)
        }
        ClientInitializeError::JsonRpcError(e) => {
            format!("rejected the handshake: {} (code {})", e.message, e.code.0)
        }
        other => format!("handshake failed: {other}"),
    }
}
