//! Listening to a server: resource subscriptions, and at 2026-07-28 the stream that
//! every notification comes on.
//!
//! A dated-era server sends `notifications/*/list_changed` unasked, and
//! `notifications/resources/updated` for the URIs a client `resources/subscribe`d
//! (both reach the client handler). A 2026-07-28 server sends notifications only on a
//! `subscriptions/listen` request, whose filter says what the client wants: each
//! connection to one opens such a stream, for the list changes the server advertises
//! and the URIs subscribed to, and opens it again when those URIs change. The URIs
//! outlive connections: a server started again, or signed in to again, is subscribed
//! again.

// resources/subscribe is deprecated by the 2026-07-28 revision; dated servers use it.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::Mutex;

use rmcp::model::{
    ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RoleClient};
use tokio::task::AbortHandle;

use crate::event::Listing;
use crate::session::handler::Handler;

/// How long a new connection waits for the server to acknowledge its stream.
const ACKNOWLEDGE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The URIs a mount is subscribed to, and its 2026-07-28 stream.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
    /// The task reading the current `subscriptions/listen` stream.
    listening: Mutex<Option<AbortHandle>>,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.listening).take() {
            task.abort();
        }
    }
}

impl Subscriptions {
    /// Whether `uri` is subscribed to.
    pub fn has(&self, uri: &str) -> bool {
        lock(&self.uris).contains(uri)
    }
}

/// Whether `peer` speaks 2026-07-28, where notifications need a stream.
fn streams(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
}

/// Listens on a new connection: opens the stream of a 2026-07-28 server (so that the
/// mount is ready only once news can reach it), subscribes a dated one again. What
/// fails is logged: the server still serves requests.
pub(crate) async fn resume(client: &Handler, peer: &Peer<RoleClient>) {
    let outcome = if streams(peer) {
        match tokio::time::timeout(ACKNOWLEDGE_WITHIN, listen(client, peer)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::warn!(server = %client.server, "the server did not acknowledge subscriptions/listen within {ACKNOWLEDGE_WITHIN:?}; its changes will not be heard");
                return;
            }
        }
    } else {
        let uris: Vec<String> = lock(&client.shared.subscriptions.uris)
            .iter()
            .cloned()
            .collect();
        let mut outcome = Ok(());
        for uri in uris {
            if let Err(e) = peer.subscribe(SubscribeRequestParams::new(uri)).await {
                outcome = Err(e);
            }
        }
        outcome
    };
    if let Err(e) = outcome {
        tracing::warn!(server = %client.server, "listening to the server failed: {e}");
    }
}

/// Subscribes to updates of `uri`.
pub(crate) async fn subscribe(
    client: &Handler,
    peer: &Peer<RoleClient>,
    uri: &str,
) -> Result<(), rmcp::ServiceError> {
    let new = lock(&client.shared.subscriptions.uris).insert(uri.to_owned());
    if !new {
        return Ok(());
    }
    let outcome = if streams(peer) {
        listen(client, peer).await
    } else {
        peer.subscribe(SubscribeRequestParams::new(uri.to_owned()))
            .await
    };
    if outcome.is_err() {
        lock(&client.shared.subscriptions.uris).remove(uri);
    }
    outcome
}

/// Ends the subscription to `uri`.
pub(crate) async fn unsubscribe(
    client: &Handler,
    peer: &Peer<RoleClient>,
    uri: &str,
) -> Result<(), rmcp::ServiceError> {
    if !lock(&client.shared.subscriptions.uris).remove(uri) {
        return Ok(());
    }
    if streams(peer) {
        listen(client, peer).await
    } else {
        peer.unsubscribe(UnsubscribeRequestParams::new(uri.to_owned()))
            .await
    }
}

/// Opens a stream for what the server advertises and the URIs subscribed to, then
/// closes the one it replaces (so that nothing falls between the two).
async fn listen(client: &Handler, peer: &Peer<RoleClient>) -> Result<(), rmcp::ServiceError> {
    let Some(info) = peer.peer_info() else {
        return Ok(());
    };
    let uris: Vec<String> = lock(&client.shared.subscriptions.uris)
        .iter()
        .cloned()
        .collect();
    let mut filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed();
    if !uris.is_empty() {
        filter = filter.resource_subscriptions(uris);
    }
    let filter = filter.build().supported_by(&info.capabilities);
    if filter == SubscriptionFilter::default() {
        replace_listener(client, None);
        return Ok(());
    }
    let mut subscription = peer.listen(filter).await?;
    let (client_now, peer_now) = (client.clone(), peer.clone());
    let task = tokio::spawn(async move {
        loop {
            match subscription.next().await {
                Ok(Some(notification)) => dispatch(&client_now, &peer_now, notification).await,
                Ok(None) => return,
                Err(e) => {
                    tracing::debug!(server = %client_now.server, "the notification stream ended: {e}");
                    return;
                }
            }
        }
    });
    replace_listener(client, Some(task.abort_handle()));
    Ok(())
}

fn replace_listener(client: &Handler, task: Option<AbortHandle>) {
    let old = std::mem::replace(&mut *lock(&client.shared.subscriptions.listening), task);
    if let Some(old) = old {
        old.abort();
    }
}

/// Handles a notification from the stream as the client handler does the same one
/// from a dated-era server.
async fn dispatch(client: &Handler, peer: &Peer<RoleClient>, notification: ServerNotification) {
    match notification {
        ServerNotification::ToolListChangedNotification(_) => {
            client.list_changed(peer, Listing::Tools)
        }
        ServerNotification::PromptListChangedNotification(_) => {
            client.list_changed(peer, Listing::Prompts)
        }
        ServerNotification::ResourceListChangedNotification(_) => {
            client.list_changed(peer, Listing::Resources)
        }
        ServerNotification::ResourceUpdatedNotification(updated) => {
            client.updated(updated.params.uri)
        }
        _ => {}
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
