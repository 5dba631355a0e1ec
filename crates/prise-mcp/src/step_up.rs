//! Scope step-up: a signed-in server that answers a request with 403
//! `insufficient_scope` is signed in to again for the scopes it names, once per
//! request and at most [`MAX_STEP_UPS`] times per mount (a server that keeps asking
//! must not send the person round in circles), and the request is made again.

use std::sync::atomic::{AtomicU32, Ordering};

use prise_config::{Server, Transport};

use crate::auth::{self, TokenStore};
use crate::client::Client;
use crate::connect::{self, StderrSlot};
use crate::http::Challenge;
use crate::mount::{Live, MountOptions};

/// Step-ups a mount may make.
pub(crate) const MAX_STEP_UPS: u32 = 2;

/// What a mount needs to sign in again and reconnect.
pub(crate) struct Reach {
    pub server: Server,
    pub options: MountOptions,
    pub client: Client,
    /// Step-ups made so far.
    pub made: AtomicU32,
}

impl Reach {
    /// Signs in for more scope when the last refusal asked for it and someone can sign
    /// in, then replaces the connection with one that carries the new token. `Ok(true)`:
    /// the request is worth making again.
    pub async fn step_up(&self, live: &Live) -> Result<bool, String> {
        let connection = live.current();
        let challenge = connection
            .challenges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(Challenge::Scope { header, scope }) = challenge else {
            return Ok(false);
        };
        let (Transport::Http(remote), Some(person), Some(dir)) = (
            &self.server.transport,
            &self.options.sign_in,
            &self.options.auth_dir,
        ) else {
            return Err(format!(
                "the server needs more permissions ({}): run `prise auth login {}`",
                scope.as_deref().unwrap_or("a wider scope"),
                self.server.name
            ));
        };
        if self.made.fetch_add(1, Ordering::AcqRel) >= MAX_STEP_UPS {
            return Err(format!(
                "the server asked for more permissions {MAX_STEP_UPS} times; not asking again"
            ));
        }
        let store = TokenStore::new(dir, &self.server.name, &remote.url);
        // What was granted, and what is asked for now.
        let mut scopes: Vec<String> = store.read().map(|c| c.granted_scopes).unwrap_or_default();
        for wanted in scope.iter().flat_map(|s| s.split_whitespace()) {
            if !scopes.iter().any(|s| s == wanted) {
                scopes.push(wanted.to_owned());
            }
        }
        auth::sign_in(
            &self.server.name,
            remote,
            Some(&header),
            &scopes,
            person.as_ref(),
            &store,
        )
        .await
        .map_err(|e| format!("signing in for more permissions failed: {e}"))?;
        let connected = connect::establish(
            &self.server,
            &self.options,
            self.client.clone(),
            &StderrSlot::default(),
        )
        .await
        .map_err(|failed| failed.cause)?;
        live.reconnected(connected);
        Ok(true)
    }
}
