//! Asking a provider, with retries: shared by every provider.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use crate::error::ModelError;
use crate::retry::{RetryPolicy, retryable};
use crate::types::{ModelEvent, Reply};

/// How long an endpoint may stay silent unless told otherwise. Generous: a local model
/// on a CPU can read a long prompt for minutes before its first token.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether the model must, may or must not call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    /// It chooses (every provider's default).
    Auto,
    /// It must call one (OpenAI's `required`, Anthropic's `any`).
    Required,
    /// It must not.
    None,
}

impl std::str::FromStr for ToolChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<ToolChoice, String> {
        match text {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            other => Err(format!(
                "unknown tool choice {other:?}; use \"auto\", \"required\" or \"none\""
            )),
        }
    }
}

/// How the model samples its reply; `None` leaves each to the provider.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampling {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `seed` (OpenAI-compatible servers; Anthropic has none).
    pub seed: Option<u64>,
    /// `tool_choice`.
    pub tool_choice: Option<ToolChoice>,
}

/// What every provider's client is told, the same way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientOptions {
    /// Give up on a connection silent this long (waiting for the reply or between two
    /// pieces of it); the request is then tried again as the retry policy says.
    pub idle_timeout: Duration,
    /// The most tokens one reply may have; `None`: the provider's default (none for
    /// most OpenAI-compatible servers, so a small model that loops writes until its
    /// context is full; 8192 for Anthropic, whose API requires a number).
    pub max_output_tokens: Option<u64>,
    /// Temperature, top-p, seed and tool choice.
    pub sampling: Sampling,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_output_tokens: None,
            sampling: Sampling::default(),
        }
    }
}

/// An HTTP client for a provider that gives up on a connection silent for `idle`
/// (while waiting for the reply or between two pieces of it).
pub(crate) fn http_client(idle: Duration) -> Result<reqwest::Client, ModelError> {
    // reqwest is built without a default crypto provider: prise uses ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(idle)
        .build()
        .map_err(|e| ModelError::Protocol(format!("cannot build an HTTP client: {e}")))
}

/// Reads a streamed reply, sending text deltas to the events as they come.
pub(crate) type ReadReply =
    for<'a> fn(
        reqwest::Response,
        &'a mut (dyn FnMut(ModelEvent) + Send),
    ) -> Pin<Box<dyn Future<Output = Result<Reply, ModelError>> + Send + 'a>>;

/// One model turn: POSTs `body` as JSON with `headers` and reads the reply with `read`,
/// trying again what is worth it (see [`RetryPolicy`]) and reporting each retry to
/// `events`. A stream that breaks off ([`ModelError::Interrupted`]) before any text
/// was shown is asked again within the same budget of tries, so nobody sees text twice;
/// after text was shown, the error stands.
pub(crate) async fn complete_with_retries(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    headers: &[(&str, String)],
    retry: &RetryPolicy,
    events: &mut (dyn FnMut(ModelEvent) + Send),
    read: ReadReply,
) -> Result<Reply, ModelError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut request = client.post(url).json(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let (reason, retry_after) = match request.send().await {
            Ok(response) if response.status().is_success() => {
                let mut shown = false;
                let mut watch = |event: ModelEvent| {
                    shown |= matches!(event, ModelEvent::TextDelta(_));
                    events(event);
                };
                match read(response, &mut watch).await {
                    Err(ModelError::Interrupted(reason)) if !shown => (reason, None),
                    outcome => return outcome,
                }
            }
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let message = error_message(&response.text().await.unwrap_or_default());
                if !retryable(status) {
                    return Err(ModelError::Rejected {
                        url: url.to_owned(),
                        status,
                        message,
                    });
                }
                (format!("HTTP {status}: {message}"), retry_after)
            }
            // Nothing listening: say so at once, retrying cannot help.
            Err(e) if e.is_connect() => {
                return Err(ModelError::Unreachable {
                    url: url.to_owned(),
                    cause: system_cause(&e),
                });
            }
            Err(e) if e.is_timeout() => ("the endpoint stopped answering".to_owned(), None),
            Err(e) => (system_cause(&e), None),
        };
        if attempt >= retry.max_tries {
            return Err(ModelError::GaveUp {
                url: url.to_owned(),
                attempts: attempt,
                last: reason,
            });
        }
        let delay = retry.delay(attempt, retry_after);
        tracing::debug!("model request failed ({reason}); retrying in {delay:?}");
        events(ModelEvent::Retrying {
            attempt,
            reason,
            delay,
        });
        tokio::time::sleep(delay).await;
    }
}

/// A response's media type, for messages.
pub(crate) fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type")
        .to_owned()
}

/// A success that is not the API's: a web page or a proxy's answer at the base URL.
/// Asking again would get the same.
pub(crate) fn not_the_api(content_type: &str) -> ModelError {
    ModelError::Protocol(format!(
        "the endpoint answered with {content_type}, not the model's stream; is the base URL the API's (it usually ends in /v1)?"
    ))
}

/// The provider's own words from an error body (`{"error": {"message": ...}}`), or the
/// start of the body.
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or(v["error"].as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.chars().take(300).collect::<String>().trim().to_owned())
}

/// The innermost cause of a request error ("Connection refused"), which reqwest keeps
/// several sources deep.
pub(crate) fn system_cause(error: &reqwest::Error) -> String {
    let mut current: &dyn std::error::Error = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::error_message;

    #[test]
    fn error_bodies() {
        assert_eq!(
            error_message(r#"{"error": {"message": "model not found"}}"#),
            "model not found"
        );
        assert_eq!(
            error_message(
                r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(error_message("plain failure"), "plain failure");
    }
}
