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

/// A transport for one remote server, with its configured headers.
pub(crate) fn transport(
    remote: &Remote,
    max_message_size: usize,
) -> Result<StreamableHttpClientTransport<SessionAware>, String> {
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
    let client = client()?;
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(remote.url.as_str()).custom_headers(headers);
    config.max_sse_event_size = max_message_size;
    config.max_json_response_size = max_message_size;
    Ok(StreamableHttpClientTransport::with_client(
        SessionAware(client),
        config,
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
fn install_crypto() {
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
pub(crate) struct SessionAware(reqwest::Client);

impl SessionAware {
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
        Self::correct(&message, session, response)
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
        Self::correct(&message, session, response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
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
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
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
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<reqwest::Error>,
    > {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
