//! Streamable HTTP, through rmcp's client and reqwest with rustls on the ring provider.

use std::collections::HashMap;
use std::sync::{Arc, Once};

use futures::stream::BoxStream;
use prise_config::Remote;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
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

/// The last challenge a server's responses carried, for the mount to act on.
pub(crate) type Challenges = Arc<std::sync::Mutex<Option<Challenge>>>;

/// The client config for one remote server, with its configured headers.
fn config(
    remote: &Remote,
    max_message_size: usize,
) -> Result<StreamableHttpClientTransportConfig, String> {
    install_crypto();
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

/// A transport for one remote server without a sign-in; its challenges go to
/// `challenges`.
pub(crate) fn transport(
    remote: &Remote,
    max_message_size: usize,
    challenges: &Challenges,
) -> Result<StreamableHttpClientTransport<SessionAware>, String> {
    Ok(StreamableHttpClientTransport::with_client(
        SessionAware::new(client()?, challenges),
        config(remote, max_message_size)?,
    ))
}

/// A transport that sends the sign-in `manager`'s token with each request, refreshes
/// it once when the server rejects it, and reports what it could not fix to
/// `challenges`.
pub(crate) fn signed_in_transport(
    remote: &Remote,
    max_message_size: usize,
    manager: rmcp::transport::AuthorizationManager,
    challenges: &Challenges,
) -> Result<StreamableHttpClientTransport<rmcp::transport::AuthClient<SessionAware>>, String> {
    let client =
        rmcp::transport::AuthClient::new(SessionAware::new(client()?, challenges), manager);
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(remote, max_message_size)?,
    ))
}

/// An HTTP client for one server.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    install_crypto();
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

/// rustls needs a process-wide crypto provider; prise uses ring, which builds in
/// seconds where aws-lc-sys takes minutes on two cores.
pub(crate) fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// reqwest, as rmcp drives it, plus one correction: a server that has forgotten the
/// session and says so with an error that carries no request id (server-everything
/// answers 400 "No valid session ID provided") is reported as an expired session,
/// which makes rmcp initialise again and resend, instead of leaving the request
/// waiting for an answer that can never be matched to it.
#[derive(Clone)]
pub(crate) struct SessionAware(reqwest::Client, Challenges);

impl SessionAware {
    fn new(client: reqwest::Client, challenges: &Challenges) -> SessionAware {
        SessionAware(client, challenges.clone())
    }

    /// Keeps what a refusal said for the mount, which decides whether to sign in.
    fn note<T>(
        &self,
        response: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        let challenge = match &response {
            Err(StreamableHttpError::AuthRequired(e)) => {
                Some(Challenge::SignIn(e.www_authenticate_header.clone()))
            }
            Err(StreamableHttpError::InsufficientScope(e)) => Some(Challenge::Scope {
                header: e.www_authenticate_header.clone(),
                scope: e.required_scope.clone(),
            }),
            _ => None,
        };
        if let Some(challenge) = challenge {
            *self.1.lock().unwrap_or_else(|e| e.into_inner()) = Some(challenge);
        }
        response
    }

    fn correct(
        message: &ClientJsonRpcMessage,
        session: bool,
        response: Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let session = session_id.is_some();
        let response = self
            .0
            .post_message(
                uri,
                message.clone(),
                session_id,
                auth_header,
                custom_headers,
            )
            .await;
        self.note(Self::correct(&message, session, response))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let session = session_id.is_some();
        let response = self
            .0
            .post_message_with_response_limits(
                uri,
                message.clone(),
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.note(Self::correct(&message, session, response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let response = self
            .0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await;
        self.note(response)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<reqwest::Error>,
    > {
        let response = self
            .0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.note(response)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<reqwest::Error>,
    > {
        let response = self
            .0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note(response)
    }
}
