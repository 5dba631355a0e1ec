//! Which protocol era a stdio server speaks, asked on the process that will serve.
//!
//! rmcp's `auto` lifecycle sends `server/discover`, waits ten seconds, then sends
//! `initialize` on the same stream. A server still starting (a first `npx` or `uvx`
//! download, a loaded machine) reads both once it is up and answers both: the late
//! answer to `server/discover` then arrives where rmcp waits for the answer to
//! `initialize`, and the handshake fails ("uncorrelated error response", "conflict
//! initialized response id"), after which a second process was started, paying the
//! start-up again against the same timeout.
//!
//! So prise asks itself, with ids of its own: [`Probed::probe`] sends
//! `server/discover` and waits for its answer; after [`PATIENCE`] without one it
//! sends `initialize` too (a server may drop what it does not know), and the first
//! answer that tells the era decides. The transport it returns goes on to rmcp, on
//! the same process, with the lifecycle the answer calls for, or already
//! initialized. An answer to the probe's requests is never shown to rmcp, however
//! late; a late one of the 2026-07-28 era is noted ([`Probed::late_modern`]) so that
//! the next mount asks that way directly.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientNotification, ClientRequest, DiscoverRequest,
    DiscoverRequestParams, ErrorCode, ErrorData, InitializeResult, InitializedNotification,
    JsonRpcMessage, ProtocolVersion, Request, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// How long the probe waits before asking the dated way too (rmcp's own wait).
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// Messages a server may send before answering the probe that are kept for rmcp
/// (log messages, mostly); more are dropped.
const EARLY_MESSAGES: usize = 256;

/// What the probe learnt.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The server answered `server/discover`: the 2026-07-28 era, for rmcp to
    /// start (it asks `server/discover` again, at once).
    Modern,
    /// The server answered with an error, or with something else: the dated era,
    /// for rmcp to `initialize`.
    Legacy,
    /// The server was silent for [`PATIENCE`], so it was sent `initialize` too, and
    /// answered that first: the dated era, its handshake done (`initialized` sent).
    Initialized(Box<InitializeResult>),
}

/// A transport after the probe: it gives rmcp what came while probing first, and
/// never an answer to the probe's own requests.
pub(crate) struct Probed<T> {
    inner: T,
    early: VecDeque<ServerJsonRpcMessage>,
    /// The probe's requests whose answers may still come.
    pending: Vec<RequestId>,
    late_modern: Arc<AtomicBool>,
}

/// An answer to one of the probe's requests.
enum Reply {
    Result(Box<ServerResult>),
    Error(ErrorData),
}

/// Why the probe failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError<E: std::error::Error + 'static> {
    /// Writing to the server failed: it exited, or closed its input. To the person
    /// that is the same event as the server closing its output.
    #[error("closed the connection during the handshake")]
    Send(#[source] E),
    /// The server closed its output before answering.
    #[error("closed the connection during the handshake")]
    Closed,
    /// The server refused `initialize`.
    #[error("rejected the handshake: {} (code {})", .0.message, .0.code.0)]
    Rejected(ErrorData),
    /// The server answered `initialize` with something else.
    #[error("answered initialize with something other than its result")]
    Unexpected,
}

const DISCOVER: &str = "prise-discover";
const INITIALIZE: &str = "prise-initialize";

impl<T: Transport<RoleClient>> Probed<T> {
    /// Asks `inner` for `server/discover` as `client` (what prise says it is and can
    /// do) would, and waits up to `patience` for the answer; a server still silent
    /// then is sent `initialize` too, and the first answer that tells the era
    /// decides. A server that never answers is bounded by the caller's startup
    /// timeout.
    pub async fn probe(
        inner: T,
        client: &ClientConfig,
        patience: Duration,
    ) -> Result<(Probed<T>, Answer), ProbeError<T::Error>> {
        let mut probed = Probed {
            inner,
            early: VecDeque::new(),
            pending: Vec::new(),
            late_modern: Arc::default(),
        };
        let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
        discover
            .extensions
            .insert(RequestMetaObject::with_client_context(
                ProtocolVersion::V_2026_07_28,
                client.client_info.clone(),
                client.capabilities.clone(),
            ));
        probed
            .ask(DISCOVER, ClientRequest::DiscoverRequest(discover))
            .await?;
        if let Ok(answer) = tokio::time::timeout(patience, probed.next_answer()).await {
            let (_, reply) = answer.ok_or(ProbeError::Closed)?;
            let answer = match era_of(&reply) {
                Era::Modern => Answer::Modern,
                Era::Legacy => Answer::Legacy,
            };
            return Ok((probed, answer));
        }
        // Silent: still starting, or a server that drops what it does not know.
        let initialize = ClientRequest::InitializeRequest(Request::new(client.clone()));
        probed.ask(INITIALIZE, initialize).await?;
        loop {
            let (id, reply) = probed.next_answer().await.ok_or(ProbeError::Closed)?;
            if id == RequestId::String(DISCOVER.into()) {
                match era_of(&reply) {
                    // Its answer to `initialize`, whatever it is, is dropped.
                    Era::Modern => return Ok((probed, Answer::Modern)),
                    Era::Legacy => continue,
                }
            }
            let reply = match reply {
                Reply::Result(result) => Ok(*result),
                Reply::Error(error) => Err(error),
            };
            return match reply {
                Ok(ServerResult::InitializeResult(result)) => {
                    let initialized = ClientNotification::InitializedNotification(
                        InitializedNotification::default(),
                    );
                    let message = ClientJsonRpcMessage::notification(initialized);
                    probed.inner.send(message).await.map_err(ProbeError::Send)?;
                    Ok((probed, Answer::Initialized(Box::new(result))))
                }
                Err(error) => Err(ProbeError::Rejected(error)),
                Ok(_) => Err(ProbeError::Unexpected),
            };
        }
    }

    async fn ask(&mut self, id: &str, request: ClientRequest) -> Result<(), ProbeError<T::Error>> {
        let id = RequestId::String(id.into());
        self.pending.push(id.clone());
        let message = ClientJsonRpcMessage::request(request, id);
        self.inner.send(message).await.map_err(ProbeError::Send)
    }

    /// Reads until an answer to one of the probe's requests, keeping what comes
    /// before it for rmcp.
    async fn next_answer(&mut self) -> Option<(RequestId, Reply)> {
        loop {
            let message = self.inner.receive().await?;
            if let Some(answer) = self.answers_probe(&message) {
                return Some((answer, reply(message)));
            }
            if self.early.len() < EARLY_MESSAGES {
                self.early.push_back(message);
            }
        }
    }

    /// The request of the probe's that `message` answers (no longer pending then).
    fn answers_probe(&mut self, message: &ServerJsonRpcMessage) -> Option<RequestId> {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => error.id.as_ref()?,
            _ => return None,
        };
        let at = self.pending.iter().position(|pending| pending == id)?;
        Some(self.pending.remove(at))
    }

    /// Set once a late answer to the probe said the server speaks 2026-07-28.
    pub fn late_modern(&self) -> Arc<AtomicBool> {
        self.late_modern.clone()
    }
}

/// An answer (a response or an error) as a [`Reply`].
fn reply(message: ServerJsonRpcMessage) -> Reply {
    match message {
        JsonRpcMessage::Response(response) => Reply::Result(Box::new(response.result)),
        JsonRpcMessage::Error(error) => Reply::Error(error.error),
        _ => unreachable!("only answers are replies"),
    }
}

/// The era an answer to `server/discover` tells.
enum Era {
    Modern,
    Legacy,
}

fn era_of(reply: &Reply) -> Era {
    match reply {
        Reply::Result(result) if matches!(**result, ServerResult::DiscoverResult(_)) => Era::Modern,
        // An empty success and the like: a dated server that says so badly.
        Reply::Result(_) => Era::Legacy,
        // Refusals of the new era mean it speaks it; rmcp words them.
        Reply::Error(error)
            if [
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                ErrorCode::HEADER_MISMATCH,
            ]
            .contains(&error.code) =>
        {
            Era::Modern
        }
        Reply::Error(_) => Era::Legacy,
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Probed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if let Some(early) = self.early.pop_front() {
            return Some(early);
        }
        loop {
            let message = self.inner.receive().await?;
            let Some(id) = self.answers_probe(&message) else {
                return Some(message);
            };
            let discover = id == RequestId::String(DISCOVER.into());
            if discover && matches!(era_of(&reply(message)), Era::Modern) {
                self.late_modern.store(true, Ordering::Release);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}
