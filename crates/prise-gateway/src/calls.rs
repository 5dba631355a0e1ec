//! Who is connected, and which client is calling which server: a question a server
//! asks during a call goes to the client that made the call, and a change of what the
//! servers offer goes to every client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How the client of a call can be asked a question.
pub(crate) enum Asker {
    /// A client of the dated era, asked with an `elicitation/create` request.
    Session(Peer<RoleServer>),
    /// A client of the 2026-07-28 revision, asked in rounds (see `rounds`).
    Rounds(mpsc::UnboundedSender<Question>),
}

/// A server's question, waiting for the client's answer.
pub(crate) struct Question {
    /// The question.
    pub message: String,
    /// The form's JSON schema.
    pub schema: Value,
    /// Where the answer goes.
    pub answer: oneshot::Sender<Elicitation>,
}

/// The clients connected to the gateway and the calls they have under way.
pub struct Calls {
    /// Answers questions asked while no client's call to that server is under way.
    fallback: Arc<dyn Elicitor>,
    /// Calls under way: an id, the server called, who to ask.
    under_way: Mutex<Vec<(u64, String, Arc<Asker>)>>,
    next: AtomicU64,
    /// Clients of the dated era, which can be told of changes.
    connected: Mutex<Vec<Peer<RoleServer>>>,
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
            connected: Mutex::default(),
        }
    }

    /// Notes that a call to `server` is under way, whose client `asker` asks, until
    /// the guard is dropped; `None` when its client cannot be asked.
    pub(crate) fn enter(self: &Arc<Self>, server: &str, asker: Option<Asker>) -> CallGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let asker = asker.map(Arc::new);
        if let Some(asker) = &asker {
            lock(&self.under_way).push((id, server.to_owned(), asker.clone()));
        }
        CallGuard {
            calls: self.clone(),
            id,
            asker,
        }
    }

    /// Notes a client that finished its handshake.
    pub(crate) fn connect(&self, client: Peer<RoleServer>) {
        lock(&self.connected).push(client);
    }

    /// The connected clients, forgetting those that went away.
    pub(crate) fn clients(&self) -> Vec<Peer<RoleServer>> {
        let mut connected = lock(&self.connected);
        connected.retain(|c| !c.is_transport_closed());
        connected.clone()
    }

    /// Who asks for the latest call under way to `server` whose client can be asked.
    fn asker(&self, server: &str) -> Option<Arc<Asker>> {
        lock(&self.under_way)
            .iter()
            .rev()
            .find(|(_, called, _)| called == server)
            .map(|(_, _, asker)| asker.clone())
    }
}

/// A call under way; dropped when it ends.
pub(crate) struct CallGuard {
    calls: Arc<Calls>,
    id: u64,
    /// Who asks this call's client, if it can be asked.
    pub asker: Option<Arc<Asker>>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        lock(&self.calls.under_way).retain(|(id, _, _)| *id != self.id);
    }
}

impl Elicitor for Calls {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        match self.asker(server) {
            Some(asker) => asker.ask(message, schema),
            None => self.fallback.elicit(server, message, schema),
        }
    }
}

impl Asker {
    /// Asks the client `message`, with a form of `schema`.
    pub(crate) fn ask(&self, message: &str, schema: &Value) -> ElicitationFuture {
        let client = match self {
            Asker::Rounds(questions) => {
                let (answer, answered) = oneshot::channel();
                let question = Question {
                    message: message.to_owned(),
                    schema: schema.clone(),
                    answer,
                };
                if questions.send(question).is_err() {
                    return Box::pin(std::future::ready(Elicitation::Cancel));
                }
                // No answer (the client never came back): the question is dismissed.
                return Box::pin(async move { answered.await.unwrap_or(Elicitation::Cancel) });
            }
            Asker::Session(client) => client.clone(),
        };
        let request = json!({"mode": "form", "message": message, "requestedSchema": schema});
        Box::pin(async move {
            let request: ElicitRequestParams = match serde_json::from_value(request) {
                Ok(request) => request,
                Err(e) => {
                    tracing::warn!("a question that cannot be passed on to the client: {e}");
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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
