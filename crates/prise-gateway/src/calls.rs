//! Who is connected, and which client is calling which server: a question a server
//! asks during a call goes to the client that made the call, and a change of what the
//! servers offer goes to every client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

/// The clients connected to the gateway and the calls they have under way.
pub struct Calls {
    /// Answers questions asked while no client's call to that server is under way.
    fallback: Arc<dyn Elicitor>,
    /// Calls under way: an id, the server called, the client that called.
    under_way: Mutex<Vec<(u64, String, Peer<RoleServer>)>>,
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

    /// Notes that `client` is calling `server` until the guard is dropped.
    pub(crate) fn enter(&self, server: &str, client: Peer<RoleServer>) -> CallGuard<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.under_way).push((id, server.to_owned(), client));
        CallGuard { calls: self, id }
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

    /// The client of the latest call under way to `server` that can be asked a
    /// question (it declared elicitation).
    fn asker(&self, server: &str) -> Option<Peer<RoleServer>> {
        lock(&self.under_way)
            .iter()
            .rev()
            .filter(|(_, called, _)| called == server)
            .map(|(_, _, client)| client)
            .find(|client| {
                client
                    .peer_info()
                    .is_some_and(|info| info.capabilities.elicitation.is_some())
            })
            .cloned()
    }
}

/// A call under way; dropped when it ends.
pub(crate) struct CallGuard<'a> {
    calls: &'a Calls,
    id: u64,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        lock(&self.calls.under_way).retain(|(id, _, _)| *id != self.id);
    }
}

impl Elicitor for Calls {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        let Some(client) = self.asker(server) else {
            return self.fallback.elicit(server, message, schema);
        };
        let request = json!({"mode": "form", "message": message, "requestedSchema": schema});
        let server = server.to_owned();
        Box::pin(async move {
            let request: ElicitRequestParams = match serde_json::from_value(request) {
                Ok(request) => request,
                Err(e) => {
                    tracing::warn!(%server, "a question that cannot be passed on: {e}");
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
                    tracing::warn!(%server, "the client did not answer the question: {e}");
                    Elicitation::Cancel
                }
            }
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
