//! The page's event stream: what the servers, the agent and the page's questions say,
//! as JSON objects with a `kind`, to every open tab.
//!
//! A tab that opens late (or reconnects) first gets what is kept of the past: the last
//! [`KEPT`] events, so that the trace and the chat look the same in every tab.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::broadcast;

/// Events kept for tabs that open later, at most, and at most this many bytes of them
/// (a trace of large results would otherwise hold hundreds of megabytes).
pub(crate) const KEPT: usize = 2_000;
pub(crate) const KEPT_BYTES: usize = 16 * 1024 * 1024;

/// One event, numbered and serialized once for every tab.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub id: u64,
    pub json: Arc<str>,
}

/// Where events are sent, and what is kept of them.
#[derive(Clone)]
pub(crate) struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    live: broadcast::Sender<Event>,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    next: u64,
    events: VecDeque<Event>,
    bytes: usize,
}

impl Hub {
    pub fn new() -> Hub {
        Hub {
            inner: Arc::new(Inner {
                live: broadcast::channel(1024).0,
                kept: Mutex::default(),
            }),
        }
    }

    /// Sends `event` (an object with a `kind`) to every tab, and keeps it.
    pub fn send(&self, event: Value) {
        self.send_json(event.to_string());
    }

    /// [`Hub::send`] for an event already serialized.
    pub fn send_json(&self, json: String) {
        let json: Arc<str> = json.into();
        let mut kept = self.inner.kept.lock().unwrap_or_else(|e| e.into_inner());
        let event = Event {
            id: kept.next,
            json,
        };
        kept.next += 1;
        kept.bytes += event.json.len();
        kept.events.push_back(event.clone());
        while kept.events.len() > KEPT || kept.bytes > KEPT_BYTES {
            let Some(oldest) = kept.events.pop_front() else {
                break;
            };
            kept.bytes -= oldest.json.len();
        }
        // Sent under the lock, so that a tab subscribing meanwhile gets each event
        // once: in the past it copies, or live.
        let _ = self.inner.live.send(event);
    }

    /// What is kept, then everything from now on.
    pub fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let kept = self.inner.kept.lock().unwrap_or_else(|e| e.into_inner());
        (
            kept.events.iter().cloned().collect(),
            self.inner.live.subscribe(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_tab_gets_the_past_then_the_present_each_once() {
        let hub = Hub::new();
        hub.send(serde_json::json!({"kind": "a"}));
        let (past, mut live) = hub.subscribe();
        hub.send(serde_json::json!({"kind": "b"}));
        assert_eq!(past.len(), 1);
        assert_eq!(&*past[0].json, r#"{"kind":"a"}"#);
        let next = live.try_recv().unwrap();
        assert_eq!((next.id, &*next.json), (1, r#"{"kind":"b"}"#));
        assert!(live.try_recv().is_err());
    }

    #[test]
    fn only_the_last_events_are_kept() {
        let hub = Hub::new();
        for i in 0..KEPT + 5 {
            hub.send(serde_json::json!({"kind": "n", "i": i}));
        }
        let (past, _) = hub.subscribe();
        assert_eq!(past.len(), KEPT);
        assert_eq!(past[0].id, 5);
    }

    #[test]
    fn what_is_kept_is_bounded_in_bytes_too() {
        let hub = Hub::new();
        let large = "x".repeat(1024 * 1024);
        for _ in 0..20 {
            hub.send(serde_json::json!({"kind": "trace", "message": large}));
        }
        let (past, _) = hub.subscribe();
        let bytes: usize = past.iter().map(|e| e.json.len()).sum();
        assert!(bytes <= KEPT_BYTES, "{bytes}");
        assert!(past.len() >= 15, "{}", past.len());
        assert_eq!(past.last().unwrap().id, 19);
    }
}
