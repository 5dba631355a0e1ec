//! Sign-ins as the person manages them: signing in before a server is used
//! ([`login`]), what is on record ([`account`]), signing out ([`logout`]). The
//! protocol is `auth`'s; this module knows which server a sign-in is for and never
//! shows a token.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prise_config::{Remote, Server, Transport};
use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};

use crate::auth::TokenStore;
use crate::options::MountOptions;

/// Why a sign-in could not be made, shown or ended.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AccountError {
    /// The server runs on this machine: only remote servers are signed in to.
    #[error("server {0} runs on this machine: only remote (URL) servers are signed in to")]
    NotRemote(String),
    /// There is no state folder to keep sign-ins in.
    #[error("there is no state folder to keep sign-ins in: set PRISE_STATE_DIR")]
    NoStateFolder,
    /// The configuration gives the server a token of the person's own.
    #[error(
        "server {0} has an Authorization header in its configuration: prise sends that token, and does not sign in; remove the header to sign in instead"
    )]
    OwnToken(String),
    /// Signing in failed; the sign-in's words.
    #[error("{0}")]
    SignIn(String),
    /// The sign-in on record could not be forgotten.
    #[error("cannot remove {path}: {why}")]
    Forget {
        /// The file.
        path: PathBuf,
        /// What the system said.
        why: String,
    },
}

impl AccountError {
    /// Whether the mistake is in what was asked (a server that cannot be signed in
    /// to as configured), not in the sign-in itself.
    pub fn is_usage(&self) -> bool {
        matches!(self, AccountError::NotRemote(_) | AccountError::OwnToken(_))
    }
}

/// A server's sign-in, as far as it can be shown.
#[derive(Debug, Clone)]
pub struct Account {
    /// The server's name.
    pub server: String,
    /// Its URL.
    pub url: String,
    /// Where the sign-in is kept.
    pub file: PathBuf,
    /// The sign-in, when there is one.
    pub signed_in: Option<SignedIn>,
}

/// What is known of a sign-in, without its tokens.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// The authorization server that issued it.
    pub issuer: Option<String>,
    /// The client prise signed in as.
    pub client_id: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token stops working, when the server said.
    pub expires: Option<SystemTime>,
    /// Whether prise can renew it without the person.
    pub refreshable: bool,
}

impl SignedIn {
    /// Whether the access token has run out (a refreshable one is renewed on use).
    pub fn expired(&self) -> bool {
        self.expires.is_some_and(|at| at <= SystemTime::now())
    }
}

/// The remote part of a server, or why it has no sign-in.
pub fn remote(server: &Server) -> Result<&Remote, AccountError> {
    match &server.transport {
        Transport::Http(remote) | Transport::Sse(remote) => Ok(remote),
        _ => Err(AccountError::NotRemote(server.name.clone())),
    }
}

/// The sign-in of `server` on record in `dir`.
pub fn account(server: &Server, dir: &Path) -> Result<Account, AccountError> {
    let remote = remote(server)?;
    let store = TokenStore::new(dir, &server.name, &remote.url);
    Ok(Account {
        server: server.name.clone(),
        url: remote.url.clone(),
        file: store.path().to_owned(),
        signed_in: store.read().and_then(|stored| signed_in(&stored)),
    })
}

fn signed_in(stored: &StoredCredentials) -> Option<SignedIn> {
    let token = stored.token_response.as_ref()?;
    Some(SignedIn {
        issuer: stored.issuer.clone(),
        client_id: stored.client_id.clone(),
        scopes: stored.granted_scopes.clone(),
        expires: expiry(stored.token_received_at, token),
        refreshable: oauth2::TokenResponse::refresh_token(token).is_some(),
    })
}

fn expiry(received: Option<u64>, token: &OAuthTokenResponse) -> Option<SystemTime> {
    let lasts = oauth2::TokenResponse::expires_in(token)?;
    Some(UNIX_EPOCH + Duration::from_secs(received?) + lasts)
}

/// Signs in to `server` now, whether or not a sign-in is on record: through the
/// person in `options.sign_in`, or by itself for a machine (`"clientCredentials"`).
/// The server is asked first, so that its `WWW-Authenticate` leads discovery. With
/// `by_code`, the person enters a code on another device (the device flow) when the
/// authorization server offers it, and is sent to the browser when it does not.
pub async fn login(
    server: &Server,
    options: &MountOptions,
    by_code: bool,
) -> Result<Account, AccountError> {
    let remote = remote(server)?;
    let Some(dir) = &options.auth_dir else {
        return Err(AccountError::NoStateFolder);
    };
    if remote.has_own_token() {
        return Err(AccountError::OwnToken(server.name.clone()));
    }
    let store = TokenStore::new(dir, &server.name, &remote.url);
    let legacy = matches!(server.transport, Transport::Sse(_));
    let challenge = challenge(remote, legacy).await.unwrap_or_default();
    let person = options.sign_in.as_deref();
    if let (true, Some(person), false) = (by_code, person, remote.signs_in_by_itself()) {
        let header = (!challenge.is_empty()).then_some(challenge.as_str());
        match crate::auth::device::sign_in(&server.name, remote, header, person, &store).await {
            Ok(Some(_)) => return account(server, dir),
            Ok(None) => tracing::debug!("no device flow offered; signing in in the browser"),
            Err(e) => return Err(AccountError::SignIn(e.to_string())),
        }
    }
    crate::auth::sign_in_for(
        server,
        remote,
        options.sign_in.as_deref(),
        &store,
        &challenge,
        &[],
    )
    .await
    .map_err(AccountError::SignIn)?;
    account(server, dir)
}

/// What the server says to a client that has not signed in: its `WWW-Authenticate`
/// header, when it answers 401. A `legacy` (SSE) server is asked for its event
/// stream, a Streamable HTTP one is sent `initialize`.
async fn challenge(remote: &Remote, legacy: bool) -> Option<String> {
    let client = crate::net::for_server().ok()?;
    let mut request = if legacy {
        client
            .get(&remote.url)
            .header(reqwest::header::ACCEPT, "text/event-stream")
    } else {
        let initialize = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "prise", "version": env!("CARGO_PKG_VERSION") }
            }
        });
        client
            .post(&remote.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .body(initialize.to_string())
    };
    for (name, value) in &remote.headers {
        request = request.header(name, value);
    }
    crate::net::challenge_of(&request.send().await.ok()?)
}

/// What signing out did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignedOut {
    /// Nothing was on record.
    NotSignedIn,
    /// The tokens were revoked at the authorization server, then forgotten.
    Revoked,
    /// Forgotten here only; the reason the authorization server was not told.
    Forgotten(String),
}

/// Signs out of `server`: the tokens are revoked where the authorization server
/// offers it (RFC 7009), and the sign-in is forgotten either way.
pub async fn logout(server: &Server, dir: &Path) -> Result<SignedOut, AccountError> {
    let remote = remote(server)?;
    let store = TokenStore::new(dir, &server.name, &remote.url);
    let Some(stored) = store.read() else {
        return Ok(SignedOut::NotSignedIn);
    };
    let outcome = match revoke(remote, &stored).await {
        Ok(()) => SignedOut::Revoked,
        Err(why) => SignedOut::Forgotten(why),
    };
    store.remove().map_err(|e| AccountError::Forget {
        path: store.path().to_owned(),
        why: e.to_string(),
    })?;
    Ok(outcome)
}

/// Revokes the refresh token, then the access token.
async fn revoke(remote: &Remote, stored: &StoredCredentials) -> Result<(), String> {
    let token = stored
        .token_response
        .as_ref()
        .ok_or("no token was on record")?;
    let issuer = stored
        .issuer
        .as_deref()
        .ok_or("the sign-in does not say which authorization server issued it")?;
    let metadata = crate::auth::issuer_metadata(issuer).await?;
    let endpoint = metadata["revocation_endpoint"]
        .as_str()
        .ok_or_else(|| format!("{issuer} offers no token revocation"))?;
    let client = crate::net::for_sign_in().map_err(|e| e.to_string())?;
    let oauth = remote.oauth.clone().unwrap_or_default();
    let mut tokens = Vec::new();
    if let Some(refresh) = oauth2::TokenResponse::refresh_token(token) {
        tokens.push((refresh.secret().clone(), "refresh_token"));
    }
    tokens.push((
        oauth2::TokenResponse::access_token(token).secret().clone(),
        "access_token",
    ));
    for (value, hint) in tokens {
        let mut form = vec![("token", value), ("token_type_hint", hint.to_owned())];
        let mut request = client.post(endpoint);
        match &oauth.client_secret {
            Some(secret) => request = request.basic_auth(&stored.client_id, Some(secret)),
            None => form.push(("client_id", stored.client_id.clone())),
        }
        let response = request
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(crate::auth::form(&form))
            .send()
            .await
            .map_err(|e| format!("revoking at {endpoint} failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!(
                "{endpoint} refused to revoke the {}: HTTP {}",
                hint.replace('_', " "),
                response.status()
            ));
        }
    }
    Ok(())
}
