//! A trace of a mount's traffic: every message to and from its server, as
//! [`MountEvent::Message`], for people who want to see what went over the wire (the
//! web page's trace). Only mounts started with `MountOptions::trace` pay for it: the
//! copy of each message is made only then.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::broadcast;

use crate::event::MountEvent;

/// A transport that reports what passes through it.
pub(crate) struct Traced<T> {
    inner: T,
    server: Arc<str>,
    events: broadcast::Sender<MountEvent>,
}

impl<T> Traced<T> {
    pub fn new(inner: T, server: Arc<str>, events: broadcast::Sender<MountEvent>) -> Traced<T> {
        Traced {
            inner,
            server,
            events,
        }
    }

    fn report(&self, outgoing: bool, message: &impl serde::Serialize) {
        // Nobody listening (the page closed): nothing to copy.
        if self.events.receiver_count() == 0 {
            return;
        }
        if let Ok(message) = serde_json::to_string(message) {
            let _ = self.events.send(MountEvent::Message {
                server: self.server.to_string(),
                outgoing,
                message: message.into(),
            });
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Traced<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.report(true, &item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        self.report(false, &message);
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
