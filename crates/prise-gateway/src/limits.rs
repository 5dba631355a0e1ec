//! Calls in flight per client: one client cannot take every server's attention.
//!
//! A client is its session (dated era, `Mcp-Session-Id`), else the address it calls
//! from (2026-07-28 over HTTP), else the one client of a stdio gateway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Calls in flight per client by default.
pub const DEFAULT_CALLS_PER_CLIENT: usize = 64;

/// The calls each client has in flight.
#[derive(Debug)]
pub(crate) struct Limits {
    max: usize,
    in_flight: Mutex<HashMap<String, usize>>,
}

impl Limits {
    pub fn new(max: usize) -> Limits {
        Limits {
            max,
            in_flight: Mutex::default(),
        }
    }

    /// A slot for one more call of the client of `context`, or `None` when it has
    /// as many in flight as it may.
    pub fn take(self: &Arc<Self>, context: &RequestContext<RoleServer>) -> Option<Slot> {
        let client = client(context);
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let count = in_flight.entry(client.clone()).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Slot {
            limits: self.clone(),
            client,
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }
}

/// A call in flight; dropped when it ends.
pub(crate) struct Slot {
    limits: Arc<Limits>,
    client: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut in_flight = self
            .limits
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(count) = in_flight.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.client);
            }
        }
    }
}

/// Who the client of `context` is (see the module's doc).
fn client(context: &RequestContext<RoleServer>) -> String {
    let Some(parts) = context.extensions.get::<http::request::Parts>() else {
        return "stdio".to_owned();
    };
    if let Some(session) = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        return format!("session {session}");
    }
    match parts.extensions.get::<std::net::SocketAddr>() {
        Some(address) => format!("address {}", address.ip()),
        None => "unknown".to_owned(),
    }
}
