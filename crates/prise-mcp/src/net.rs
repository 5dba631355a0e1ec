//! The network beneath the transports and sign-in: the HTTP clients prise makes its
//! requests with, reads of answers that stop at a bound, and the words for what
//! failed.
//!
//! It knows HTTP and nothing of MCP: a leaf that every module above may use.

use std::sync::Once;
use std::time::Duration;

/// The most of an answer to a sign-in step read (metadata, a registration, a
/// token, a revocation): they are a few KiB.
pub(crate) const SIGN_IN_ANSWER: usize = 1 << 20;

/// How long connecting to any host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Redirects followed in a row at most.
const MAX_REDIRECTS: usize = 10;

/// rustls needs a process-wide crypto provider; prise uses ring, which builds in
/// seconds where aws-lc-sys takes minutes on two cores.
pub(crate) fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn builder() -> reqwest::ClientBuilder {
    install_crypto();
    reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT)
}

/// Why an HTTP client could not be made (the TLS setup failed).
#[derive(Debug, thiserror::Error)]
#[error("cannot build an HTTP client: {0}")]
pub struct ClientError(#[source] reqwest::Error);

/// A client for an MCP server's own requests, which carry its configured headers
/// and its tokens. Redirects are followed within the server's origin only: reqwest
/// drops `Authorization` and `Cookie` on a redirect to another origin, but would
/// send any other configured header there (an `X-Api-Key`), so such a redirect is
/// an error that names both origins ([`CrossOrigin`]).
pub(crate) fn for_server() -> Result<reqwest::Client, ClientError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().first().map(|url| url.origin());
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if from
            .as_ref()
            .is_some_and(|from| *from != attempt.url().origin())
        {
            let error = CrossOrigin {
                from: from.map(|o| o.ascii_serialization()).unwrap_or_default(),
                to: attempt.url().origin().ascii_serialization(),
            };
            attempt.error(error)
        } else {
            attempt.follow()
        }
    });
    builder().redirect(policy).build().map_err(ClientError)
}

/// A client for authorization servers and their metadata: it follows redirects
/// (discovery may be sent elsewhere) and carries nothing of the MCP server's.
pub(crate) fn for_sign_in() -> Result<reqwest::Client, ClientError> {
    builder().build().map_err(ClientError)
}

/// A client that follows no redirect: the answer is the first response.
pub(crate) fn not_following() -> Result<reqwest::Client, ClientError> {
    builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(ClientError)
}

/// A server redirected a request carrying its headers to another origin.
#[derive(Debug, thiserror::Error)]
#[error(
    "{from} redirected to another origin, {to}: not followed, so that the server's headers and tokens go nowhere else"
)]
pub struct CrossOrigin {
    /// The origin asked.
    pub from: String,
    /// The origin it sent the request to.
    pub to: String,
}

/// The redirect to another origin that `error` comes from, if it does: looked for
/// down its chain of causes, and inside the HTTP client's error that rmcp's
/// transport error holds without naming it as a cause.
pub(crate) fn cross_origin<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a CrossOrigin> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(found) = error.downcast_ref::<CrossOrigin>() {
            return Some(found);
        }
        current = match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => error.source(),
        };
    }
    None
}

/// What the innermost error of a chain says.
pub(crate) enum Cause {
    /// The operating system's words: a refused or reset connection, a broken pipe.
    System(String),
    /// The peer's or the protocol's: an HTTP status, a rejected request.
    Protocol(String),
}

/// The innermost error of a chain: the one that says what actually happened.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> Option<Cause> {
    if let Some(refused) = cross_origin(error) {
        return Some(Cause::Protocol(refused.to_string()));
    }
    let mut current = error.source()?;
    while let Some(next) = current.source() {
        current = next;
    }
    // rmcp wraps reqwest's error without exposing it as a source, so the system's
    // words ("Connection refused") only survive in the debug form.
    let debug = format!("{current:?}");
    // A name that does not resolve: hyper says "dns error", then the resolver's words.
    if debug.contains("ConnectError(\"dns error\"") {
        let words = debug
            .rsplit_once("error: \"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(words, _)| format!(" ({words})"))
            .unwrap_or_default();
        return Some(Cause::System(format!(
            "the host name does not resolve{words}"
        )));
    }
    if let Some(start) = debug.find("message: \"") {
        let rest = &debug[start + 10..];
        if let Some(end) = rest.find('"') {
            return Some(Cause::System(rest[..end].to_owned()));
        }
    }
    let text = current.to_string();
    if text.contains("Broken pipe") {
        Some(Cause::System(text))
    } else {
        Some(Cause::Protocol(text))
    }
}

/// The operating system's words for a failed request, when it has some.
pub(crate) fn describe_http(error: &reqwest::Error) -> String {
    let text = match root_cause(error) {
        Some(Cause::System(cause)) | Some(Cause::Protocol(cause)) => cause,
        None => error.to_string(),
    };
    crate::error::tidy(&text)
}

/// Why an answer could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It went on past the bound; the rest was not read.
    #[error("the answer is over {} KiB; the rest was not read", limit / 1024)]
    TooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// The connection broke off while reading.
    #[error("the answer broke off: {0}")]
    Broken(#[source] reqwest::Error),
}

/// The body of `response`, read chunk by chunk and given up on as soon as it
/// passes `limit` bytes: a hostile server's endless answer costs `limit` at most.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ReadError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(ReadError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Broken)? {
        if chunk.len() > limit - body.len() {
            return Err(ReadError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body of `response` as JSON, read as [`read_limited`] does; a body that is
/// not JSON is `null`, for the caller to find wanting.
pub(crate) async fn read_json(
    response: reqwest::Response,
    limit: usize,
) -> Result<serde_json::Value, ReadError> {
    let body = read_limited(response, limit).await?;
    Ok(serde_json::from_slice(&body).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_happened() {
        let error = CrossOrigin {
            from: "http://127.0.0.1:1".into(),
            to: "http://127.0.0.1:2".into(),
        };
        assert!(error.to_string().contains("http://127.0.0.1:2"));
        let too_large = ReadError::TooLarge { limit: 1 << 20 };
        assert_eq!(
            too_large.to_string(),
            "the answer is over 1024 KiB; the rest was not read"
        );
    }
}
