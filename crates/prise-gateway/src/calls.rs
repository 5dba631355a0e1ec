//! Which client is calling which server: what a server asks of its client during a
//! call (a question, a sampling request, the roots) goes to the client that made the
//! call.
//!
//! Roots are a client's: a server asking for them outside any call (server-filesystem
//! does when it starts) gets the configured ones or none, and a client's
//! `roots/list_changed` is not passed on, since an upstream serves every client and
//! one client's folders must not become what it allows the others.

// Sampling and roots are deprecated by the 2026-07-28 revision (SEP-2577);
// dated-era servers and clients still use them.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use prise_mcp::roots::{RootLister, RootsFuture};
use prise_mcp::sampling::{Sampler, SamplingFuture};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitationAction,
    ListRootsResult,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How the client of a call can be asked something, and what it said it can answer.
pub(crate) enum Asker {
    /// A client of the dated era, sent requests.
    Session(Peer<RoleServer>),
    /// A client of the 2026-07-28 revision, asked in rounds (see `rounds`).
    Rounds {
        questions: mpsc::UnboundedSender<Question>,
        elicitation: bool,
        sampling: bool,
        roots: bool,
    },
}

/// A request of a server's, as an `inputRequests` entry (`{"method", "params"}`),
/// waiting for the client's answer.
pub(crate) struct Question {
    pub request: Value,
    pub answer: oneshot::Sender<Value>,
}

/// The calls clients have under way.
pub struct Calls {
    /// Answers questions asked while no client's call to that server is under way.
    fallback: Arc<dyn Elicitor>,
    /// Calls under way: an id, the server called, who to ask.
    under_way: Mutex<Vec<(u64, String, Arc<Asker>)>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls").finish_non_exhaustive()
    }
}

impl Calls {
    pub(crate) fn new(fallback: Arc<dyn Elicitor>) -> Calls {
        Calls {
            fallback,
            under_way: Mutex::default(),
            next: AtomicU64::new(0),
        }
    }

    /// Notes that a call to `server` is under way, whose client `asker` asks, until
    /// the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, server: &str, asker: Asker) -> CallGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let asker = Arc::new(asker);
        lock(&self.under_way).push((id, server.to_owned(), asker.clone()));
        CallGuard {
            calls: self.clone(),
            id,
            asker,
        }
    }

    /// Who asks for the latest call under way to `server` whose client can answer
    /// `what`.
    fn asker(&self, server: &str, what: Ask) -> Option<Arc<Asker>> {
        lock(&self.under_way)
            .iter()
            .rev()
            .filter(|(_, called, _)| called == server)
            .map(|(_, _, asker)| asker)
            .find(|asker| asker.can(what))
            .cloned()
    }
}

/// A call under way; dropped when it ends.
pub(crate) struct CallGuard {
    calls: Arc<Calls>,
    id: u64,
    /// Who asks this call's client.
    pub asker: Arc<Asker>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        lock(&self.calls.under_way).retain(|(id, _, _)| *id != self.id);
    }
}

impl Elicitor for Calls {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        match self.asker(server, Ask::Elicitation) {
            Some(asker) => asker.ask(message, schema),
            None => self.fallback.elicit(server, message, schema),
        }
    }
}

impl Sampler for Calls {
    fn create_message(&self, server: &str, request: CreateMessageRequestParams) -> SamplingFuture {
        match self.asker(server, Ask::Sampling) {
            Some(asker) => asker.sample(request),
            None => Box::pin(std::future::ready(Err(
                "no client of the gateway that is calling this server can answer sampling".into(),
            ))),
        }
    }
}

impl RootLister for Calls {
    fn list_roots(&self, server: &str) -> RootsFuture {
        let Some(asker) = self.asker(server, Ask::Roots) else {
            return Box::pin(std::future::ready(None));
        };
        Box::pin(async move { asker.roots().await })
    }
}

/// What a server asks its client for.
#[derive(Clone, Copy)]
enum Ask {
    Elicitation,
    Sampling,
    Roots,
}

impl Asker {
    /// Whether the client said it can answer `what`.
    fn can(&self, what: Ask) -> bool {
        match (self, what) {
            (Asker::Session(client), what) => client.peer_info().is_some_and(|info| match what {
                Ask::Elicitation => info.capabilities.elicitation.is_some(),
                Ask::Sampling => info.capabilities.sampling.is_some(),
                Ask::Roots => info.capabilities.roots.is_some(),
            }),
            (Asker::Rounds { elicitation, .. }, Ask::Elicitation) => *elicitation,
            (Asker::Rounds { sampling, .. }, Ask::Sampling) => *sampling,
            (Asker::Rounds { roots, .. }, Ask::Roots) => *roots,
        }
    }

    /// Whether the client can be asked a question (the approval policy asks).
    pub(crate) fn can_elicit(&self) -> bool {
        self.can(Ask::Elicitation)
    }

    /// Asks the client `message`, with a form of `schema`.
    pub(crate) fn ask(&self, message: &str, schema: &Value) -> ElicitationFuture {
        let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
        match self {
            Asker::Rounds { questions, .. } => {
                let answered = round(questions, "elicitation/create", params);
                Box::pin(async move {
                    answered
                        .await
                        .map(|a| elicitation(&a))
                        .unwrap_or(Elicitation::Cancel)
                })
            }
            Asker::Session(client) => {
                let client = client.clone();
                Box::pin(async move {
                    let request: ElicitRequestParams = match serde_json::from_value(params) {
                        Ok(request) => request,
                        Err(e) => {
                            tracing::warn!(
                                "a question that cannot be passed on to the client: {e}"
                            );
                            return Elicitation::Decline;
                        }
                    };
                    match client.create_elicitation(request).await {
                        Ok(answer) => match answer.action {
                            ElicitationAction::Accept => Elicitation::Accept(
                                answer
                                    .content
                                    .and_then(|c| c.as_object().cloned())
                                    .unwrap_or_default(),
                            ),
                            ElicitationAction::Decline => Elicitation::Decline,
                            _ => Elicitation::Cancel,
                        },
                        Err(e) => {
                            tracing::warn!("the client did not answer the question: {e}");
                            Elicitation::Cancel
                        }
                    }
                })
            }
        }
    }

    /// Has the client's model answer a server's sampling request.
    fn sample(&self, request: CreateMessageRequestParams) -> SamplingFuture {
        match self {
            Asker::Rounds { questions, .. } => {
                let params = serde_json::to_value(&request).unwrap_or_default();
                let answered = round(questions, "sampling/createMessage", params);
                Box::pin(async move {
                    let answer = answered
                        .await
                        .ok_or("the client did not come back with the model's answer")?;
                    serde_json::from_value::<CreateMessageResult>(answer).map_err(|e| {
                        format!("the client's answer is not a sampling result: {e}").into()
                    })
                })
            }
            Asker::Session(client) => {
                let client = client.clone();
                Box::pin(async move {
                    client.create_message(request).await.map_err(|e| {
                        format!("the client did not answer the sampling request: {e}").into()
                    })
                })
            }
        }
    }
}

impl Asker {
    /// The client's roots; `None` when it did not give them.
    async fn roots(&self) -> Option<Vec<rmcp::model::Root>> {
        let listed = match self {
            Asker::Rounds { questions, .. } => {
                let answer = round(questions, "roots/list", json!({})).await?;
                serde_json::from_value::<ListRootsResult>(answer)
                    .map_err(|e| format!("the client's answer is not a list of roots: {e}"))
            }
            Asker::Session(client) => client
                .list_roots()
                .await
                .map_err(|e| format!("the client did not list its roots: {e}")),
        };
        match listed {
            Ok(listed) => Some(listed.roots),
            Err(why) => {
                tracing::warn!("{why}");
                None
            }
        }
    }
}

/// Puts a request to a 2026-07-28 client's next round; its answer, if it comes.
fn round(
    questions: &mpsc::UnboundedSender<Question>,
    method: &str,
    params: Value,
) -> impl Future<Output = Option<Value>> + Send + 'static {
    let (answer, answered) = oneshot::channel();
    let sent = questions
        .send(Question {
            request: json!({"method": method, "params": params}),
            answer,
        })
        .is_ok();
    async move {
        if !sent {
            return None;
        }
        answered.await.ok()
    }
}

/// The client's answer to a form, as the server is told it.
fn elicitation(answer: &Value) -> Elicitation {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Elicitation::Accept(
            answer
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("decline") => Elicitation::Decline,
        _ => Elicitation::Cancel,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
