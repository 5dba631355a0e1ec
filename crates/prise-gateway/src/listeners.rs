//! Who hears what the servers say outside a call: list changes, resource updates and
//! log messages.
//!
//! A client of the dated era is a session: it hears every list change, the updates of
//! the resources it `resources/subscribe`d, and log messages at or above the level it
//! set (all of them until it sets one). A client of the 2026-07-28 revision hears
//! nothing unasked: it opens a `subscriptions/listen` stream, which carries what its
//! filter accepted. A resource is subscribed to at its server while any client wants
//! it, once however many do.

// Logging and resources/subscribe are deprecated by the 2026-07-28 revision
// (SEP-2577); dated-era servers and clients still use them.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use prise_mcp::Listing;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, PromptListChangedNotification,
    ResourceListChangedNotification, ResourceUpdatedNotification, ResourceUpdatedNotificationParam,
    ServerNotification, SubscriptionFilter, ToolListChangedNotification,
};
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::{Peer, RoleServer};

use crate::fleet::Fleet;

/// A client of the dated era.
struct Session {
    peer: Peer<RoleServer>,
    /// The least severe log message it is sent; all when unset.
    level: Option<LoggingLevel>,
    /// The resources whose updates it is sent.
    uris: BTreeSet<String>,
}

/// A 2026-07-28 client's open `subscriptions/listen` stream.
struct Stream {
    id: u64,
    sink: SubscriptionSink,
}

/// The clients that hear the servers, and the resources subscribed to at them.
#[derive(Default)]
pub(crate) struct Listeners {
    sessions: Mutex<Vec<Session>>,
    streams: Mutex<Vec<Stream>>,
    next_stream: AtomicU64,
}

impl Listeners {
    /// Notes a client of the dated era that finished its handshake.
    pub fn connect(&self, peer: Peer<RoleServer>) {
        lock(&self.sessions).push(Session {
            peer,
            level: None,
            uris: BTreeSet::new(),
        });
    }

    /// Sets the least severe log message `peer` is sent.
    pub fn set_log_level(&self, peer: &Peer<RoleServer>, level: LoggingLevel) {
        if let Some(session) = lock(&self.sessions)
            .iter_mut()
            .find(|s| same(&s.peer, peer))
        {
            session.level = Some(level);
        }
    }

    /// Subscribes `peer` to updates of `uri`, subscribing at its server when no client
    /// was yet.
    pub async fn subscribe(
        &self,
        fleet: &Fleet,
        peer: &Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), prise_mcp::CallError> {
        if !self.wanted().contains(uri) {
            fleet.subscribe_resource(uri, None).await?;
        }
        if let Some(session) = lock(&self.sessions)
            .iter_mut()
            .find(|s| same(&s.peer, peer))
        {
            session.uris.insert(uri.to_owned());
        }
        Ok(())
    }

    /// Ends `peer`'s subscription to `uri`, and the server's when no client wants it.
    pub async fn unsubscribe(&self, fleet: &Fleet, peer: &Peer<RoleServer>, uri: &str) {
        if let Some(session) = lock(&self.sessions)
            .iter_mut()
            .find(|s| same(&s.peer, peer))
        {
            session.uris.remove(uri);
        }
        self.let_go(fleet, [uri.to_owned()]).await;
    }

    /// Serves a 2026-07-28 client's stream until it ends: what `subscription`
    /// accepted is sent on it, and the resources it names are subscribed to while it
    /// lasts.
    pub async fn listen(&self, fleet: &Fleet, subscription: SubscriptionContext) {
        let uris = subscription
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let wanted = self.wanted();
        for uri in uris.iter().filter(|uri| !wanted.contains(*uri)) {
            if let Err(e) = fleet.subscribe_resource(uri, None).await {
                tracing::warn!("a client's subscription to {uri} could not be made: {e}");
            }
        }
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed);
        lock(&self.streams).push(Stream {
            id,
            sink: subscription.sink().clone(),
        });
        subscription.cancelled().await;
        lock(&self.streams).retain(|s| s.id != id);
        self.let_go(fleet, uris).await;
    }

    /// Tells every client that hears list changes that the servers' `what` changed.
    pub async fn list_changed(&self, what: Listing) {
        for peer in self.sessions() {
            let _ = match what {
                Listing::Tools => peer.notify_tool_list_changed().await,
                Listing::Resources => peer.notify_resource_list_changed().await,
                Listing::Prompts => peer.notify_prompt_list_changed().await,
            };
        }
        let accepts = |filter: &SubscriptionFilter| match what {
            Listing::Tools => filter.tools_list_changed == Some(true),
            Listing::Resources => filter.resources_list_changed == Some(true),
            Listing::Prompts => filter.prompts_list_changed == Some(true),
        };
        for sink in self.sinks(accepts) {
            let notification = match what {
                Listing::Tools => ServerNotification::ToolListChangedNotification(
                    ToolListChangedNotification::default(),
                ),
                Listing::Resources => ServerNotification::ResourceListChangedNotification(
                    ResourceListChangedNotification::default(),
                ),
                Listing::Prompts => ServerNotification::PromptListChangedNotification(
                    PromptListChangedNotification::default(),
                ),
            };
            let _ = sink.send(notification).await;
        }
    }

    /// Tells the clients subscribed to `uri` that it changed; when none is left (they
    /// went away), the server's subscription ends.
    pub async fn updated(&self, fleet: &Fleet, uri: &str) {
        let sessions: Vec<Peer<RoleServer>> = lock(&self.sessions)
            .iter()
            .filter(|s| s.uris.contains(uri))
            .map(|s| s.peer.clone())
            .collect();
        for peer in sessions {
            let _ = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await;
        }
        let accepts = |filter: &SubscriptionFilter| {
            filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri))
        };
        for sink in self.sinks(accepts) {
            let notification = ServerNotification::ResourceUpdatedNotification(
                ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)),
            );
            let _ = sink.send(notification).await;
        }
        self.let_go(fleet, [uri.to_owned()]).await;
    }

    /// Sends `message` from `server` to each session whose level it reaches, under
    /// the server's name as (the start of) its logger.
    pub async fn log(&self, server: String, mut message: LoggingMessageNotificationParam) {
        message.logger = Some(match message.logger.take() {
            Some(logger) => format!("{server}/{logger}"),
            None => server,
        });
        let hearing: Vec<Peer<RoleServer>> = lock(&self.sessions)
            .iter()
            .filter(|s| {
                s.level
                    .is_none_or(|least| severity(message.level) >= severity(least))
            })
            .map(|s| s.peer.clone())
            .collect();
        for peer in hearing {
            let _ = peer.notify_logging_message(message.clone()).await;
        }
    }

    /// The sessions still connected, forgetting those that went away.
    fn sessions(&self) -> Vec<Peer<RoleServer>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| !s.peer.is_transport_closed());
        sessions.iter().map(|s| s.peer.clone()).collect()
    }

    /// The sinks of the streams whose filter `accepts`.
    fn sinks(&self, accepts: impl Fn(&SubscriptionFilter) -> bool) -> Vec<SubscriptionSink> {
        lock(&self.streams)
            .iter()
            .filter(|s| accepts(s.sink.accepted()))
            .map(|s| s.sink.clone())
            .collect()
    }

    /// The resources some client still connected wants updates of.
    fn wanted(&self) -> BTreeSet<String> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| !s.peer.is_transport_closed());
        let mut wanted: BTreeSet<String> = sessions
            .iter()
            .flat_map(|s| s.uris.iter().cloned())
            .collect();
        drop(sessions);
        for stream in lock(&self.streams).iter() {
            wanted.extend(
                stream
                    .sink
                    .accepted()
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .cloned(),
            );
        }
        wanted
    }

    /// Ends the server's subscriptions to those of `uris` no client wants any more.
    async fn let_go(&self, fleet: &Fleet, uris: impl IntoIterator<Item = String>) {
        let wanted = self.wanted();
        for uri in uris.into_iter().filter(|uri| !wanted.contains(uri)) {
            if let Err(e) = fleet.unsubscribe_resource(&uri, None).await {
                tracing::debug!("ending the subscription to {uri}: {e}");
            }
        }
    }
}

/// Whether two peers are the same connection: each has its own record of what the
/// client said at its handshake.
fn same(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

/// How severe a log level is, from 0 (debug) to 7 (emergency).
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
