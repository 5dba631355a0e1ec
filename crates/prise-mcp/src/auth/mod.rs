//! Signing in to remote servers: OAuth 2.1, as the MCP authorization spec has it.
//!
//! rmcp's `AuthorizationManager` speaks the protocol: it reads the server's
//! `WWW-Authenticate`, finds its Protected Resource Metadata (RFC 9728) and its
//! authorization server's metadata (RFC 8414, OpenID discovery, the 2025-03-26
//! fallbacks), registers the client in the spec's order (pre-registered, Client ID
//! Metadata Document, dynamic registration), sends PKCE S256, `state` and the resource
//! indicator, checks `iss`, and refreshes tokens. This module adds what a host needs
//! around it: where sign-ins are kept ([`TokenStore`]), the person's part
//! ([`SignIn`]: a browser and a loopback redirect for a person, something else for a
//! test), and the steps of a sign-in ([`sign_in`]).

mod assertion;
pub mod device;
pub(crate) mod dpop;
mod jwt;
mod loopback;
mod store;

use std::sync::Arc;

use prise_config::Remote;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig,
};

pub use crate::person::{BoxFuture, PersonError, Return, SignIn};
pub use loopback::{Loopback, SIGN_IN_WAIT, Show};
pub use store::TokenStore;

/// Why a sign-in did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The person's part failed (no browser, the port was taken, they gave up).
    #[error("{0}")]
    Person(String),
    /// The protocol failed: discovery, registration, the token exchange.
    #[error("{0}")]
    Protocol(String),
}

impl From<AuthError> for SignInError {
    fn from(error: AuthError) -> SignInError {
        SignInError::Protocol(error.to_string())
    }
}

/// The manager for `url`, its sign-in kept in `store`. Local and private addresses
/// are allowed: the person chose the server. With a DPoP key, its token requests
/// carry proofs (rmcp then checks only that discovered URLs are not private unless
/// the server's own address is a loopback one).
async fn manager(
    url: &str,
    store: &TokenStore,
    dpop: Option<Arc<dpop::DpopKey>>,
) -> Result<AuthorizationManager, AuthError> {
    crate::net::install_crypto();
    let mut manager = match dpop {
        Some(key) => {
            let client = dpop::ProvingClient::new(key).map_err(AuthError::InternalError)?;
            AuthorizationManager::new_with_oauth_http_client(url, Arc::new(client)).await?
        }
        None => AuthorizationManager::new_allowing_private_addresses(url).await?,
    };
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// A sign-in to use: rmcp's manager, and the key its tokens are bound to, if any.
pub(crate) struct Signed {
    pub manager: AuthorizationManager,
    pub dpop: Option<Arc<dpop::DpopKey>>,
}

impl Signed {
    /// `manager`, with the DPoP key kept in `store`.
    pub fn kept(manager: AuthorizationManager, store: &TokenStore) -> Signed {
        Signed {
            manager,
            dpop: store.dpop_key().map(Arc::new),
        }
    }
}

/// The sign-in of a server signed in to before, or `None` when there is no sign-in
/// on record (the server may not need one).
pub(crate) async fn stored(url: &str, store: &TokenStore) -> Option<Signed> {
    let (stored, dpop) = store
        .off_thread(|store| (store.read(), store.dpop_key()))
        .await
        .ok()?;
    stored?.token_response.as_ref()?;
    let dpop = dpop.map(Arc::new);
    let mut manager = manager(url, store, dpop.clone()).await.ok()?;
    match manager.initialize_from_store().await {
        Ok(true) => Some(Signed { manager, dpop }),
        Ok(false) => None,
        Err(e) => {
            tracing::warn!("the stored sign-in for {url} cannot be used: {e}");
            None
        }
    }
}

/// Signs in with no person involved, as the configuration says (see
/// [`prise_config::OAuth::signs_in_by_itself`]); the tokens end in `store`.
pub async fn by_itself(
    remote: &Remote,
    challenge: Option<&str>,
    store: &TokenStore,
) -> Result<AuthorizationManager, SignInError> {
    let oauth = remote.oauth.as_ref();
    if oauth.is_some_and(|o| o.workload_token.is_some() || o.enterprise.is_some()) {
        jwt_bearer(remote, challenge, store).await
    } else {
        client_credentials(remote, challenge, store).await
    }
}

/// A manager for `remote` that has found the authorization server's metadata (from
/// the server's `challenge`, else by discovery), and that metadata.
async fn discovered(
    remote: &Remote,
    challenge: Option<&str>,
    store: &TokenStore,
) -> Result<(AuthorizationManager, AuthorizationMetadata), SignInError> {
    let mut manager = manager(&remote.url, store, None).await?;
    let resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    let metadata = resolution.metadata.clone();
    manager.set_metadata(resolution.metadata);
    Ok((manager, metadata))
}

/// Signs in as a machine (`"clientCredentials": true`): the client's id and secret
/// for a token, no person involved; the tokens end in `store`.
pub async fn client_credentials(
    remote: &Remote,
    challenge: Option<&str>,
    store: &TokenStore,
) -> Result<AuthorizationManager, SignInError> {
    let oauth = remote.oauth.clone().unwrap_or_default();
    let (mut manager, metadata) = discovered(remote, challenge, store).await?;
    let Some(client_id) = oauth.client_id.clone() else {
        return Err(SignInError::Protocol(
            "client credentials need oauth.clientId".into(),
        ));
    };
    if let Some(key) = &oauth.private_key {
        return signed_client_credentials(
            remote,
            &metadata,
            &client_id,
            key,
            &oauth.scopes,
            store,
            manager,
        )
        .await;
    }
    let Some(client_secret) = oauth.client_secret else {
        return Err(SignInError::Protocol(
            "client credentials need oauth.clientSecret or oauth.privateKey".into(),
        ));
    };
    let config = ClientCredentialsConfig::ClientSecret {
        client_id,
        client_secret,
        scopes: oauth.scopes,
        // The MCP server's own URL is the resource the token is for (RFC 8707).
        resource: Some(remote.url.clone()),
    };
    manager.configure_client_credentials(&config)?;
    manager.exchange_client_credentials(&config).await?;
    Ok(manager)
}

/// The client credentials grant with a signed assertion (`private_key_jwt`): the
/// token request is prise's own, since rmcp signs with aws-lc only (minutes to build).
async fn signed_client_credentials(
    remote: &Remote,
    metadata: &AuthorizationMetadata,
    client_id: &str,
    key: &str,
    scopes: &[String],
    store: &TokenStore,
    manager: AuthorizationManager,
) -> Result<AuthorizationManager, SignInError> {
    // The audience is the authorization server's issuer (RFC 7523 §3).
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let assertion =
        assertion::client_assertion(client_id, &audience, key).map_err(SignInError::Protocol)?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ),
        ("client_assertion", assertion),
        ("resource", remote.url.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let client = Client {
        id: client_id,
        secret: None,
    };
    token_request(metadata, client, form, store, manager).await
}

/// Signs in with an assertion (the JWT bearer grant, RFC 7523), no person involved:
/// the workload's own token (`"workloadToken"`, workload identity federation), or an
/// identity assertion the company's identity provider issues for the person's ID
/// token (`"enterprise"`, SEP-990). A refusal is final: the grant is not retried,
/// nor another tried in its place.
pub async fn jwt_bearer(
    remote: &Remote,
    challenge: Option<&str>,
    store: &TokenStore,
) -> Result<AuthorizationManager, SignInError> {
    let oauth = remote.oauth.clone().unwrap_or_default();
    let (manager, metadata) = discovered(remote, challenge, store).await?;
    let scopes = if oauth.scopes.is_empty() {
        challenge
            .and_then(|c| crate::net::Challenge(c).param("scope"))
            .unwrap_or_default()
    } else {
        oauth.scopes.join(" ")
    };
    let assertion = match (&oauth.workload_token, &oauth.enterprise) {
        (Some(token), _) => token.read().map_err(SignInError::Protocol)?,
        (None, Some(enterprise)) => {
            let audience = metadata
                .issuer
                .clone()
                .unwrap_or_else(|| metadata.token_endpoint.clone());
            identity_assertion(enterprise, &audience, &remote.url, &scopes).await?
        }
        (None, None) => {
            return Err(SignInError::Protocol(
                "the JWT bearer grant needs oauth.workloadToken or oauth.enterprise".into(),
            ));
        }
    };
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion),
        ("resource", remote.url.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes));
    }
    let client = Client {
        id: oauth.client_id.as_deref().unwrap_or_default(),
        secret: oauth.client_secret.as_deref(),
    };
    token_request(&metadata, client, form, store, manager).await
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Exchanges the person's ID token at the company's identity provider for an
/// identity assertion grant (ID-JAG) for the authorization server `audience` and the
/// MCP server `resource` (token exchange, RFC 8693).
async fn identity_assertion(
    enterprise: &prise_config::Enterprise,
    audience: &str,
    resource: &str,
    scopes: &str,
) -> Result<String, SignInError> {
    let metadata = issuer_metadata(&enterprise.issuer)
        .await
        .map_err(SignInError::Protocol)?;
    let endpoint = metadata["token_endpoint"].as_str().ok_or_else(|| {
        SignInError::Protocol(format!("{} names no token endpoint", enterprise.issuer))
    })?;
    let id_token = enterprise.id_token.read().map_err(SignInError::Protocol)?;
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
        ),
        ("subject_token", id_token),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token".to_owned(),
        ),
        ("requested_token_type", ID_JAG.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if let Some(id) = &enterprise.client_id {
        form.push(("client_id", id.clone()));
    }
    if !scopes.is_empty() {
        form.push(("scope", scopes.to_owned()));
    }
    let answer = post_form(endpoint, &form, None).await?;
    if answer["issued_token_type"].as_str() != Some(ID_JAG) {
        return Err(SignInError::Protocol(format!(
            "{} did not issue an identity assertion grant",
            enterprise.issuer
        )));
    }
    answer["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| SignInError::Protocol(format!("{} sent no token", enterprise.issuer)))
}

const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The client a token request is made as.
#[derive(Clone, Copy)]
struct Client<'a> {
    /// Its id (empty: none).
    id: &'a str,
    /// Its secret, sent with HTTP Basic authentication.
    secret: Option<&'a str>,
}

/// A token request of prise's own, for the grants rmcp does not make; the token is
/// kept in `store` as rmcp keeps those it gets.
async fn token_request(
    metadata: &AuthorizationMetadata,
    client: Client<'_>,
    mut form: Vec<(&str, String)>,
    store: &TokenStore,
    manager: AuthorizationManager,
) -> Result<AuthorizationManager, SignInError> {
    if client.secret.is_none()
        && !client.id.is_empty()
        && !form.iter().any(|(k, _)| *k == "client_assertion")
    {
        form.push(("client_id", client.id.to_owned()));
    }
    let basic = client.secret.map(|secret| (client.id, secret));
    let body = post_form(&metadata.token_endpoint, &form, basic).await?;
    keep(metadata, client.id, &body, store, manager).await
}

/// Keeps the token in `body` (a token endpoint's answer) in `store`, as rmcp keeps
/// those it gets, for the client `client_id`.
async fn keep(
    metadata: &AuthorizationMetadata,
    client_id: &str,
    body: &serde_json::Value,
    store: &TokenStore,
    mut manager: AuthorizationManager,
) -> Result<AuthorizationManager, SignInError> {
    let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(body.clone())
        .map_err(|e| SignInError::Protocol(format!("the token answer is not a token: {e}")))?;
    let granted: Vec<String> = body["scope"]
        .as_str()
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let stored = rmcp::transport::auth::StoredCredentials::new(
        client_id.to_owned(),
        Some(token),
        granted,
        Some(now),
    )
    .with_issuer(metadata.issuer.clone());
    rmcp::transport::auth::CredentialStore::save(store, stored).await?;
    if !client_id.is_empty() {
        manager.configure_client_id(client_id)?;
    }
    Ok(manager)
}

/// POSTs `form` to an OAuth endpoint and returns its JSON answer; an error answer
/// is reported in the server's words (RFC 6749 §5.2).
async fn post_form(
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, &str)>,
) -> Result<serde_json::Value, SignInError> {
    match exchange(endpoint, form, basic).await? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Err(SignInError::Protocol(refusal.to_string())),
    }
}

/// An OAuth endpoint's refusal (RFC 6749 §5.2).
#[derive(Debug)]
pub(crate) struct Refusal {
    endpoint: String,
    status: u16,
    /// The `error` code, when the answer has one.
    pub error: Option<String>,
    said: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} refused: HTTP {}: {}",
            self.endpoint, self.status, self.said
        )
    }
}

/// POSTs `form` to an OAuth endpoint: its JSON answer, or its refusal.
pub(crate) async fn exchange(
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, &str)>,
) -> Result<Result<serde_json::Value, Refusal>, SignInError> {
    let client = crate::net::for_sign_in().map_err(|e| SignInError::Protocol(e.to_string()))?;
    let mut request = client
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(self::form(form));
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: both are form-encoded before they are joined.
        request = request.basic_auth(form_encode(id), Some(form_encode(secret)));
    }
    let response = request
        .send()
        .await
        .map_err(|e| SignInError::Protocol(format!("the request to {endpoint} failed: {e}")))?;
    let status = response.status();
    let body = crate::net::read_limited(response, crate::net::SIGN_IN_ANSWER)
        .await
        .map_err(|e| SignInError::Protocol(format!("{endpoint}: {e}")))?;
    let text = String::from_utf8_lossy(&body);
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if status.is_success() {
        return Ok(Ok(json));
    }
    let error = json["error"].as_str().map(str::to_owned);
    let said = match (&error, json["error_description"].as_str()) {
        (Some(error), Some(description)) => format!("{error}: {description}"),
        (Some(error), None) => error.clone(),
        _ => crate::error::tidy(&text),
    };
    Ok(Err(Refusal {
        endpoint: endpoint.to_owned(),
        status: status.as_u16(),
        error,
        said,
    }))
}

/// An `application/x-www-form-urlencoded` body.
pub(crate) fn form(pairs: &[(&str, String)]) -> String {
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", form_encode(value)))
        .collect();
    pairs.join("&")
}

/// The metadata of the authorization server `issuer` (RFC 8414, then OpenID
/// discovery), as JSON: for the endpoints rmcp does not use (revocation).
pub(crate) async fn issuer_metadata(issuer: &str) -> Result<serde_json::Value, String> {
    let url = reqwest::Url::parse(issuer).map_err(|e| format!("issuer {issuer}: {e}"))?;
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    let candidates = [
        // RFC 8414 §3.1: the well-known part goes between the host and the path.
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    let client = crate::net::for_sign_in().map_err(|e| e.to_string())?;
    for candidate in candidates {
        let Ok(response) = client.get(&candidate).send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let metadata = crate::net::read_json(response, crate::net::SIGN_IN_ANSWER)
            .await
            .map_err(|e| format!("{candidate}: {e}"))?;
        if metadata["issuer"].as_str().map(|i| i.trim_end_matches('/'))
            == Some(issuer.trim_end_matches('/'))
        {
            return Ok(metadata);
        }
    }
    Err(format!("the metadata of {issuer} cannot be found"))
}

/// `application/x-www-form-urlencoded` escaping of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Signs in to the server `name` at `remote`: discovery (from the server's
/// `challenge`, its `WWW-Authenticate`, when there is one), the client's
/// registration, the person's visit, the token exchange; the tokens end in `store`.
/// `scopes`, when given, are asked for instead of those the server names (a scope
/// step-up asks for more).
pub async fn sign_in(
    name: &str,
    remote: &Remote,
    challenge: Option<&str>,
    scopes: &[String],
    person: &dyn SignIn,
    store: &TokenStore,
) -> Result<AuthorizationManager, SignInError> {
    let mut manager = manager(&remote.url, store, None).await?;
    let mut resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    // A server that asks for DPoP gets tokens bound to a new key of prise's; a
    // manager that proves its token requests takes over (discovery again, so that
    // it knows what the challenge said).
    if dpop::wanted(challenge, &resolution.metadata) {
        let key = dpop::DpopKey::generate().map_err(SignInError::Protocol)?;
        store
            .save_dpop_key(&key)
            .map_err(|e| SignInError::Protocol(format!("cannot keep the DPoP key: {e}")))?;
        manager = self::manager(&remote.url, store, Some(Arc::new(key))).await?;
        resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    } else {
        store
            .forget_dpop_key()
            .map_err(|e| SignInError::Protocol(format!("cannot remove the old DPoP key: {e}")))?;
    }
    manager.set_metadata(resolution.metadata);
    let oauth = remote.oauth.clone().unwrap_or_default();
    let back = person
        .listen(oauth.callback_port)
        .await
        .map_err(|e| SignInError::Person(e.0))?;
    let mut request = AuthorizationRequest::new(back.redirect_uri()).with_client_name("prise");
    let wanted: Vec<String> = if scopes.is_empty() {
        oauth.scopes.clone()
    } else {
        scopes.to_vec()
    };
    request = if wanted.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(wanted)
    };
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(secret) = &oauth.client_secret {
        request = request.with_client_secret(secret);
    }
    if let Some(url) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(url);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| SignInError::from(e))?;
    let came_back = back
        .visit(name.to_owned(), session.get_authorization_url().to_owned())
        .await
        .map_err(|e| SignInError::Person(e.0))?;
    if let Some(refusal) = refused(&came_back) {
        return Err(refusal);
    }
    session.handle_callback_url(&came_back).await?;
    tracing::info!(server = name, "signed in");
    Ok(session.auth_manager)
}

/// What to say when a server needs a sign-in that nobody can make here.
pub(crate) fn needs_sign_in(server: &str) -> String {
    format!("needs you to sign in: run `prise auth login {server}`")
}

/// Signs in to `remote` after its challenge `header`: by itself when configured as a
/// machine (`"clientCredentials"`), else through the person, when there is one.
/// `scopes`, when given, are asked for instead of those the server names.
pub(crate) async fn sign_in_for(
    server: &prise_config::Server,
    remote: &Remote,
    person: Option<&dyn SignIn>,
    store: &TokenStore,
    header: &str,
    scopes: &[String],
) -> Result<AuthorizationManager, String> {
    let manager = match person {
        // A machine signs in by itself, person or not.
        _ if remote.signs_in_by_itself() => by_itself(remote, Some(header), store).await,
        Some(person) => sign_in(&server.name, remote, Some(header), scopes, person, store).await,
        None => return Err(needs_sign_in(&server.name)),
    };
    manager.map_err(|e| match e {
        // The person's part says what happened in its own words.
        SignInError::Person(why) => why,
        SignInError::Protocol(why) => format!("signing in failed: {why}"),
    })
}

/// The authorization server's refusal (RFC 6749 §4.1.2.1) in the URL the person came
/// back to, in its words.
fn refused(came_back: &str) -> Option<SignInError> {
    let url = reqwest::Url::parse(came_back).ok()?;
    let query: std::collections::HashMap<_, _> = url.query_pairs().collect();
    let error = query.get("error")?;
    let said = match query.get("error_description") {
        Some(description) => format!("{error}: {description}"),
        None => error.to_string(),
    };
    Some(SignInError::Person(format!(
        "the authorization server refused the sign-in ({said})"
    )))
}
