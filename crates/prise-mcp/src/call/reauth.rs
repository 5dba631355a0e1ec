//! Signing in again while mounted. A request that the server refused on a live
//! connection (its own answer was 401 or 403, so it did not run) is made again once,
//! after signing in again, at most [`MAX_SIGN_INS`] times per mount (a server that
//! keeps asking must not send the person round in circles). No other request is
//! ever made again: one that failed otherwise, or whose outcome is unknown (a
//! timeout, a broken connection), may have run.
//! - 403 `insufficient_scope`: a step-up, for the scopes granted and those it names;
//! - 401: the token stopped working (revoked, expired past refreshing, or issued by
//!   an authorization server the server no longer trusts, SEP-2352): a new sign-in,
//!   discovery first, since the server may now point elsewhere.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use prise_config::{Server, Transport};

use crate::auth::TokenStore;
use crate::options::MountOptions;
use crate::session::dial::{self, Connection, StderrSlot};
use crate::session::handler::Handler;
use crate::session::state::Live;
use crate::transport::http::Challenge;

/// Sign-ins a mount may make after it is mounted.
pub(crate) const MAX_SIGN_INS: u32 = 2;

/// What a mount needs to sign in again and reconnect.
pub(crate) struct Reach {
    pub server: Server,
    pub options: MountOptions,
    pub handler: Handler,
    /// Sign-ins made so far.
    pub made: AtomicU32,
    /// Held while signing in, so that requests refused together sign in once.
    pub signing_in: tokio::sync::Mutex<()>,
}

impl Reach {
    /// Signs in again after a request sent on `sent_on` was refused with
    /// `challenge`, when someone can sign in, then replaces the connection with one
    /// that carries the new token. `Ok(true)`: the request is worth making again (on
    /// the new connection, or on one that another refused request already renewed).
    pub async fn sign_in_again(
        &self,
        live: &Live,
        challenge: Challenge,
        sent_on: &Arc<Connection>,
    ) -> Result<bool, String> {
        let _one_at_a_time = self.signing_in.lock().await;
        if !Arc::ptr_eq(&live.current(), sent_on) {
            return Ok(true);
        }
        let Transport::Http(remote) = &self.server.transport else {
            return Ok(false);
        };
        let (header, wanted) = match challenge {
            Challenge::Scope { header, scope } => (header, Some(scope)),
            // A token of the person's own, in the headers, is theirs to replace.
            Challenge::SignIn(_) if remote.has_own_token() => return Ok(false),
            Challenge::SignIn(header) => (header, None),
        };
        let Some(dir) = &self.options.auth_dir else {
            return Err(crate::auth::needs_sign_in(&self.server.name));
        };
        if self.options.sign_in.is_none() && !remote.signs_in_by_itself() && wanted.is_some() {
            return Err(format!(
                "the server needs more permissions ({}): run `prise auth login {}`",
                wanted.flatten().as_deref().unwrap_or("a wider scope"),
                self.server.name
            ));
        }
        if self.made.fetch_add(1, Ordering::AcqRel) >= MAX_SIGN_INS {
            return Err(format!(
                "the server asked to sign in again {MAX_SIGN_INS} times; not asking again"
            ));
        }
        let store = TokenStore::new(dir, &self.server.name, &remote.url);
        // A step-up asks for what was granted and what is asked for now.
        let scopes: Vec<String> = match &wanted {
            Some(scope) => {
                let mut scopes = store.read().map(|c| c.granted_scopes).unwrap_or_default();
                for wanted in scope.iter().flat_map(|s| s.split_whitespace()) {
                    if !scopes.iter().any(|s| s == wanted) {
                        scopes.push(wanted.to_owned());
                    }
                }
                scopes
            }
            None => Vec::new(),
        };
        crate::auth::sign_in_for(
            &self.server,
            remote,
            self.options.sign_in.as_deref(),
            &store,
            &header,
            &scopes,
        )
        .await?;
        let connected = dial::establish(
            &self.server,
            &self.options,
            self.handler.clone(),
            &StderrSlot::default(),
        )
        .await
        .map_err(|failed| failed.cause)?;
        live.reconnected(connected).await;
        Ok(true)
    }
}
