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

/// The challenge of a response that refused for want of a sign-in (a 401 with its
/// `WWW-Authenticate`), as text.
pub(crate) fn challenge_of(response: &reqwest::Response) -> Option<String> {
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    let header = response.headers().get(reqwest::header::WWW_AUTHENTICATE)?;
    header.to_str().ok().map(str::to_owned)
}

/// A `WWW-Authenticate` challenge (RFC 9110 §11.6.1), read in one place: its
/// scheme and its parameters (`scope`, `error`, `resource_metadata`...).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Challenge<'a>(pub &'a str);

impl<'a> Challenge<'a> {
    /// The scheme: `Bearer`, `DPoP`...
    pub fn scheme(&self) -> &'a str {
        let text = self.0.trim_start();
        &text[..text.find([' ', ',']).unwrap_or(text.len())]
    }

    /// Whether the scheme is `name`, as schemes are compared (without case).
    pub fn is(&self, name: &str) -> bool {
        self.scheme().eq_ignore_ascii_case(name)
    }

    /// The value of parameter `name` (quoted or not), if the challenge has it.
    pub fn param(&self, name: &str) -> Option<String> {
        let mut rest = &self.0.trim_start()[self.scheme().len()..];
        loop {
            rest = rest.trim_start_matches([' ', ',']);
            let (key, after) = rest.split_once('=')?;
            let key = key.trim();
            let after = after.trim_start();
            let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((at, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => {
                            end = at + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            } else {
                let end = after.find([',', ' ']).unwrap_or(after.len());
                (after[..end].to_owned(), &after[end..])
            };
            if key.eq_ignore_ascii_case(name) {
                return Some(value);
            }
            rest = next;
        }
    }
}

/// What a failed request or handshake comes down to, read from the types in its
/// chain of causes (never from their text).
#[derive(Debug)]
pub(crate) enum Cause {
    /// The peer went away: a broken pipe, a reset, an end of file.
    Closed,
    /// The host's name does not resolve; the resolver's words.
    Unresolved(String),
    /// The operating system's words: a refused connection, an unreachable network.
    System(String),
    /// The server refused for want of a sign-in (401); its challenge, worded.
    SignIn(String),
    /// The peer's or the protocol's words: an HTTP status, a redirect refused.
    Protocol(String),
}

/// Each error beneath `error`, stepping into the HTTP client's error that rmcp's
/// transport error holds without naming it as a cause.
fn chain<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    std::iter::successors(Some(error), |error| {
        match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => error.source(),
        }
    })
}

/// What `error` comes down to. A failure to connect whose system error carries
/// no error number is the resolver's: the host's name does not resolve.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> Option<Cause> {
    use rmcp::transport::streamable_http_client::AuthRequiredError;
    let mut connecting = false;
    let mut innermost = None;
    for error in chain(error).skip(1) {
        if let Some(refused) = error.downcast_ref::<CrossOrigin>() {
            return Some(Cause::Protocol(refused.to_string()));
        }
        if let Some(refused) = error.downcast_ref::<AuthRequiredError>() {
            return Some(Cause::SignIn(refused.to_string()));
        }
        if let Some(http) = error.downcast_ref::<reqwest::Error>() {
            connecting |= http.is_connect();
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::{
                BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof,
            };
            return Some(match io.kind() {
                BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof => Cause::Closed,
                _ if connecting && io.raw_os_error().is_none() => Cause::Unresolved(io.to_string()),
                _ => Cause::System(system_words(io)),
            });
        }
        innermost = Some(error);
    }
    innermost.map(|error| Cause::Protocol(error.to_string()))
}

/// The system's words for `error`, without the number that follows them.
fn system_words(error: &std::io::Error) -> String {
    let text = error.to_string();
    match (error.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(at)) => text[..at].to_owned(),
        _ => text,
    }
}

/// What a failed request comes down to, in words.
pub(crate) fn describe_http(error: &reqwest::Error) -> String {
    let text = match root_cause(error) {
        Some(Cause::Closed) => "the connection closed".to_owned(),
        Some(Cause::Unresolved(words)) => format!("the host name does not resolve ({words})"),
        Some(Cause::System(words) | Cause::SignIn(words) | Cause::Protocol(words)) => words,
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
    fn challenges_are_read_by_their_parts() {
        let bearer = Challenge(
            r#"Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a/x""#,
        );
        assert!(bearer.is("bearer") && !bearer.is("dpop"));
        assert_eq!(
            bearer.param("scope").as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(bearer.param("error").as_deref(), Some("insufficient_scope"));
        assert_eq!(
            bearer.param("resource_metadata").as_deref(),
            Some("https://a/x")
        );
        assert_eq!(bearer.param("nonce"), None);
        let dpop = Challenge(r#"DPoP error=use_dpop_nonce, error_description="a \"fresh\" one""#);
        assert_eq!(dpop.scheme(), "DPoP");
        assert_eq!(dpop.param("error").as_deref(), Some("use_dpop_nonce"));
        assert_eq!(
            dpop.param("error_description").as_deref(),
            Some(r#"a "fresh" one"#)
        );
        // A parameter's name inside another's value is not the parameter.
        let tricky = Challenge(r#"Bearer error_description="scope=\"all\"", scope="one""#);
        assert_eq!(tricky.param("scope").as_deref(), Some("one"));
    }

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
