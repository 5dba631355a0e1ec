//! Streamable HTTP, through rmcp's client and reqwest with rustls on the ring provider.

use std::collections::HashMap;
use std::sync::Arc;

use crate::auth::dpop::DpopKey;
use crate::transport::guard::DroppedAnswers;
use crate::transport::taps::TaskTools;
use futures::StreamExt;
use futures::stream::BoxStream;
use prise_config::Remote;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpClientTransportConfig, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// Headers the transport sets itself; a configured value would break the protocol.
const MANAGED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// What a server said when it refused a request for want of a sign-in: a 401 with
/// its `WWW-Authenticate`, or a 403 asking for more scope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Challenge {
    /// Sign in (again).
    SignIn(String),
    /// Signed in, but the token lacks `scope`.
    Scope {
        /// The `WWW-Authenticate` header.
        header: String,
        /// The scope it names, when it names one.
        scope: Option<String>,
    },
}

impl Challenge {
    /// The challenge a failed request or handshake carries in its chain of causes:
    /// the 401 or 403 that this very request got, never another's.
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Option<Challenge> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(refused) = error.downcast_ref::<AuthRequiredError>() {
                return Some(Challenge::SignIn(refused.www_authenticate_header.clone()));
            }
            if let Some(refused) = error.downcast_ref::<InsufficientScopeError>() {
                return Some(Challenge::Scope {
                    header: refused.www_authenticate_header.clone(),
                    scope: refused.required_scope.clone(),
                });
            }
            current = error.source();
        }
        None
    }

    /// The challenge of a request that failed on its way to the server.
    pub fn of_request(error: &rmcp::ServiceError) -> Option<Challenge> {
        match error {
            rmcp::ServiceError::TransportSend(error) => Challenge::of(error.error.as_ref()),
            _ => None,
        }
    }

    /// The challenge of a handshake that failed on its way to the server.
    pub fn of_handshake(error: &rmcp::service::ClientInitializeError) -> Option<Challenge> {
        use rmcp::service::ClientInitializeError as Init;
        match error {
            Init::TransportError { error, .. } => Challenge::of(error.error.as_ref()),
            Init::LegacyFallbackFailed { fallback, .. } => Challenge::of_handshake(fallback),
            _ => None,
        }
    }
}

/// The client config for one remote server, with its configured headers.
fn config(
    remote: &Remote,
    max_message_size: usize,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut headers = HashMap::new();
    for (name, value) in &remote.headers {
        if MANAGED.iter().any(|m| name.eq_ignore_ascii_case(m)) {
            return Err(format!(
                "header {name} is set by the transport; remove it from the configuration"
            ));
        }
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{name:?} is not a valid header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name} is not valid in HTTP"))?;
        headers.insert(header, value);
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(remote.url.as_str()).custom_headers(headers);
    config.max_sse_event_size = max_message_size;
    config.max_json_response_size = max_message_size;
    Ok(config)
}

/// What every request to one remote server shares: the tools it must call as
/// tasks, the answers dropped out of bounds, and the size bound.
#[derive(Clone)]
pub(crate) struct Notes {
    pub task_tools: Arc<TaskTools>,
    pub dropped: Arc<DroppedAnswers>,
    pub max_message_size: usize,
    pub server: Arc<str>,
}

/// A transport for one remote server without a sign-in.
pub(crate) fn transport(
    remote: &Remote,
    noting: &Notes,
) -> Result<StreamableHttpClientTransport<SessionAware>, String> {
    let max_message_size = noting.max_message_size;
    Ok(StreamableHttpClientTransport::with_client(
        SessionAware::new(server_client()?, None, noting),
        config(remote, max_message_size)?,
    ))
}

/// A transport that sends the sign-in's token with each request (bound to its DPoP
/// key, if it has one), and refreshes it once when the server rejects it. What it
/// could not fix fails the request it belongs to (see [`Challenge::of`]).
pub(crate) fn signed_in_transport(
    remote: &Remote,
    signed_in: crate::auth::Signed,
    noting: &Notes,
) -> Result<StreamableHttpClientTransport<rmcp::transport::AuthClient<SessionAware>>, String> {
    let max_message_size = noting.max_message_size;
    let aware = SessionAware::new(server_client()?, signed_in.dpop, noting);
    let client = rmcp::transport::AuthClient::new(aware, signed_in.manager);
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(remote, max_message_size)?,
    ))
}

/// The HTTP client of one server's requests (see [`crate::net::for_server`]).
fn server_client() -> Result<reqwest::Client, String> {
    crate::net::for_server().map_err(|e| e.to_string())
}

/// reqwest, as rmcp drives it, plus one correction: a server that has forgotten the
/// session and says so with an error that carries no request id (server-everything
/// answers 400 "No valid session ID provided") is reported as an expired session,
/// which makes rmcp initialise again and resend, instead of leaving the request
/// waiting for an answer that can never be matched to it. With a DPoP key, the
/// token goes as `DPoP` with a fresh proof on each request (see `auth::dpop`). The
/// events of response streams are shown to [`TaskTools`] on their way to rmcp.
#[derive(Clone)]
pub(crate) struct SessionAware {
    client: reqwest::Client,
    dpop: Option<Arc<DpopKey>>,
    noting: Notes,
}

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl SessionAware {
    fn new(client: reqwest::Client, dpop: Option<Arc<DpopKey>>, noting: &Notes) -> SessionAware {
        SessionAware {
            client,
            dpop,
            noting: noting.clone(),
        }
    }

    fn correct(
        message: &ClientJsonRpcMessage,
        session: bool,
        response: HttpResult<StreamableHttpPostResponse>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        match response {
            Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _))
                if session
                    && error.id.is_none()
                    && matches!(message, JsonRpcMessage::Request(_)) =>
            {
                tracing::debug!(
                    "session rejected ({}); initialising again",
                    error.error.message
                );
                Err(StreamableHttpError::SessionExpired)
            }
            other => other,
        }
    }

    /// Makes a request with `send`, given the token and headers to send it with: as
    /// they are, or, with a DPoP key, the token as `DPoP` and a proof; a server that
    /// answers that it wants a nonce in the proof gets one more request with it.
    async fn send<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        send: F,
    ) -> HttpResult<T>
    where
        F: Fn(Option<String>, HashMap<HeaderName, HeaderValue>) -> Fut,
        Fut: std::future::Future<Output = HttpResult<T>>,
    {
        let (Some(key), Some(token)) = (&self.dpop, auth_header.clone()) else {
            return send(auth_header, custom_headers).await;
        };
        let proven = |headers: &HashMap<HeaderName, HeaderValue>| {
            let mut headers = headers.clone();
            let proof = key.proof(method, uri, Some(&token)).map_err(dpop_error)?;
            headers.insert(AUTHORIZATION, header_value(&format!("DPoP {token}"))?);
            headers.insert(HeaderName::from_static("dpop"), header_value(&proof)?);
            Ok::<_, StreamableHttpError<reqwest::Error>>(headers)
        };
        let response = send(None, proven(&custom_headers)?).await;
        let wants_nonce = matches!(&response, Err(StreamableHttpError::AuthRequired(e))
            if crate::net::Challenge(&e.www_authenticate_header).param("error").as_deref()
                == Some("use_dpop_nonce"));
        if !wants_nonce {
            return response;
        }
        // rmcp's error keeps the challenge but not the nonce, which is in another
        // header: ask once more, with nothing to act on, to read it.
        let probe = self
            .client
            .request(method.parse().unwrap_or(reqwest::Method::POST), uri)
            .headers(proven(&custom_headers)?.into_iter().collect())
            .header(CONTENT_TYPE, "application/json")
            .body("{}")
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let Some(nonce) = probe
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        else {
            return response;
        };
        key.set_nonce(uri, nonce);
        send(None, proven(&custom_headers)?).await
    }
}

impl SessionAware {
    /// `response`, its events shown to [`TaskTools`] as they come, and each held
    /// to the bound on JSON values (see [`DroppedAnswers::screen`]).
    fn noted(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        let StreamableHttpPostResponse::Sse(events, session) = response else {
            return response;
        };
        let noting = self.noting.clone();
        let events = events.map(move |mut event| {
            if let Ok(sse_stream::Sse { data, .. }) = &mut event
                && let Some(text) = data.take()
            {
                *data = noting
                    .dropped
                    .screen(text, noting.max_message_size, &noting.server);
                if let Some(text) = data {
                    noting.task_tools.note(text.as_bytes());
                }
            }
            event
        });
        StreamableHttpPostResponse::Sse(Box::pin(events), session)
    }
}

fn header_value(text: &str) -> HttpResult<HeaderValue> {
    HeaderValue::from_str(text).map_err(|_| dpop_error("a DPoP header is not valid HTTP".into()))
}

fn dpop_error(why: String) -> StreamableHttpError<reqwest::Error> {
    StreamableHttpError::UnexpectedServerResponse(why.into())
}

impl StreamableHttpClient for SessionAware {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let session = session_id.is_some();
        let at = uri.clone();
        self.send("POST", &at, auth_header, custom_headers, |auth, headers| {
            let response = self.client.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth,
                headers,
            );
            let message = message.clone();
            async move { Self::correct(&message, session, response.await) }
        })
        .await
        .map(|response| self.noted(response))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let session = session_id.is_some();
        let at = uri.clone();
        self.send("POST", &at, auth_header, custom_headers, |auth, headers| {
            let response = self.client.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth,
                headers,
                limits,
            );
            let message = message.clone();
            async move { Self::correct(&message, session, response.await) }
        })
        .await
        .map(|response| self.noted(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let at = uri.clone();
        self.send(
            "DELETE",
            &at,
            auth_header,
            custom_headers,
            |auth, headers| {
                self.client
                    .delete_session(uri.clone(), session_id.clone(), auth, headers)
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let at = uri.clone();
        self.send("GET", &at, auth_header, custom_headers, |auth, headers| {
            self.client.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth,
                headers,
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let at = uri.clone();
        self.send("GET", &at, auth_header, custom_headers, |auth, headers| {
            self.client.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}
