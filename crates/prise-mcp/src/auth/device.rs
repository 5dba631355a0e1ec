//! The device authorization grant (RFC 8628): for a machine whose browser, if any,
//! the person cannot use, a short code they enter on another device (their phone,
//! their laptop) while prise asks the authorization server, now and then, whether
//! they have.

use std::time::{Duration, Instant};

use prise_config::Remote;
use rmcp::transport::auth::AuthorizationManager;

use super::{SignIn, SignInError, TokenStore, exchange, keep, manager, post_form};

/// The grant's type, in token requests and client registrations.
const DEVICE_CODE: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// How often to ask when the authorization server does not say (RFC 8628 §3.2).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);

pub use crate::person::DeviceCode;

/// Signs in to the server `name` with a code the person enters elsewhere. `Ok(None)`
/// when its authorization server does not offer the grant.
pub async fn sign_in(
    name: &str,
    remote: &Remote,
    challenge: Option<&str>,
    person: &dyn SignIn,
    store: &TokenStore,
) -> Result<Option<AuthorizationManager>, SignInError> {
    let mut manager = manager(&remote.url, store, None).await?;
    let resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    let metadata = resolution.metadata.clone();
    manager.set_metadata(resolution.metadata);
    let Some(endpoint) = metadata
        .additional_fields
        .get("device_authorization_endpoint")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
    else {
        return Ok(None);
    };
    let oauth = remote.oauth.clone().unwrap_or_default();
    let client_id = match &oauth.client_id {
        Some(id) => id.clone(),
        None => register(&metadata).await?,
    };
    let scopes = if oauth.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        oauth.scopes.clone()
    };
    let mut form = vec![
        ("client_id", client_id.clone()),
        ("resource", remote.url.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let answer = post_form(&endpoint, &form, None).await?;
    let text = |key: &str| answer[key].as_str().map(str::to_owned);
    let (Some(device_code), Some(user_code), Some(verification_uri)) = (
        text("device_code"),
        text("user_code"),
        text("verification_uri"),
    ) else {
        return Err(SignInError::Protocol(format!(
            "{endpoint} sent no device code"
        )));
    };
    let expires_in = Duration::from_secs(answer["expires_in"].as_u64().unwrap_or(600));
    let mut interval = answer["interval"]
        .as_u64()
        .map_or(DEFAULT_INTERVAL, Duration::from_secs);
    person
        .show_code(
            name,
            &DeviceCode {
                verification_uri,
                verification_uri_complete: text("verification_uri_complete"),
                user_code,
                expires_in,
            },
        )
        .map_err(|e| SignInError::Person(e.0))?;
    let deadline = Instant::now() + expires_in;
    let basic = oauth
        .client_secret
        .as_deref()
        .map(|s| (client_id.as_str(), s));
    let mut poll = vec![
        ("grant_type", DEVICE_CODE.to_owned()),
        ("device_code", device_code),
        ("resource", remote.url.clone()),
    ];
    if basic.is_none() {
        poll.push(("client_id", client_id.clone()));
    }
    loop {
        if Instant::now() + interval > deadline {
            return Err(SignInError::Person(format!(
                "the code for {name} expired before it was entered; sign in again"
            )));
        }
        tokio::time::sleep(interval).await;
        match exchange(&metadata.token_endpoint, &poll, basic).await? {
            Ok(token) => {
                tracing::info!(server = name, "signed in with a device code");
                return keep(&metadata, &client_id, &token, store, manager)
                    .await
                    .map(Some);
            }
            Err(refusal) => match refusal.error.as_deref() {
                Some("authorization_pending") => {}
                // RFC 8628 §3.5: ask five seconds less often from now on.
                Some("slow_down") => interval += Duration::from_secs(5),
                Some("access_denied") => {
                    return Err(SignInError::Person(format!(
                        "the sign-in to {name} was declined"
                    )));
                }
                Some("expired_token") => {
                    return Err(SignInError::Person(format!(
                        "the code for {name} expired before it was entered; sign in again"
                    )));
                }
                _ => return Err(SignInError::Protocol(refusal.to_string())),
            },
        }
    }
}

/// Registers prise for this grant (RFC 7591), as a public client.
async fn register(
    metadata: &rmcp::transport::auth::AuthorizationMetadata,
) -> Result<String, SignInError> {
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(SignInError::Protocol(
            "the authorization server takes no registrations: configure oauth.clientId".into(),
        ));
    };
    let registration = serde_json::json!({
        "client_name": "prise",
        "application_type": "native",
        "grant_types": [DEVICE_CODE, "refresh_token"],
        "response_types": [],
        "redirect_uris": [],
        "token_endpoint_auth_method": "none",
    });
    let client = crate::net::for_sign_in().map_err(|e| SignInError::Protocol(e.to_string()))?;
    let response = client
        .post(endpoint)
        .json(&registration)
        .send()
        .await
        .map_err(|e| SignInError::Protocol(format!("registering at {endpoint} failed: {e}")))?;
    let status = response.status();
    let answer = crate::net::read_json(response, crate::net::SIGN_IN_ANSWER)
        .await
        .map_err(|e| SignInError::Protocol(format!("{endpoint}: {e}")))?;
    match answer["client_id"].as_str() {
        Some(id) if status.is_success() => Ok(id.to_owned()),
        _ => Err(SignInError::Protocol(format!(
            "{endpoint} refused the registration: HTTP {}: {}",
            status.as_u16(),
            answer["error_description"]
                .as_str()
                .or(answer["error"].as_str())
                .unwrap_or("no reason given")
        ))),
    }
}
