//! Who may use the page: a request must come to a loopback name (or the `--listen`
//! address) with the run's token, and from the page itself when it says where it
//! comes from.
//!
//! The token is in the URL printed at start; the first load trades it for a cookie
//! (`HttpOnly`, `SameSite=Strict`) and drops it from the address bar. The Host check
//! stops DNS rebinding (a foreign site's name pointed at 127.0.0.1); the Origin check
//! stops other pages and sandboxed frames (whose origin is `null`) from calling the
//! API with the cookie.

use ring::rand::SecureRandom;

/// The cookie that carries the token after the first load.
pub(crate) const COOKIE: &str = "prise_ui";

/// The checks of one running page.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    token: String,
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The Host header names another site.
    ForeignHost,
    /// The Origin header names another site (or a sandboxed frame).
    ForeignOrigin,
    /// No token, or the wrong one.
    NoToken,
}

impl Refusal {
    pub fn status(self) -> http::StatusCode {
        match self {
            Refusal::ForeignHost | Refusal::ForeignOrigin => http::StatusCode::FORBIDDEN,
            Refusal::NoToken => http::StatusCode::UNAUTHORIZED,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            Refusal::ForeignHost => "refused: the Host header is not this page's address",
            Refusal::ForeignOrigin => "refused: the request comes from another origin",
            Refusal::NoToken => {
                "refused: no token; open the URL `prise ui` printed (it carries the token)"
            }
        }
    }
}

/// How a request that passed got its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Passed {
    /// From the cookie.
    Cookie,
    /// From `?token=` in the URL: the answer sets the cookie.
    Query,
}

impl Guard {
    /// The checks for a page at `port` on `listen` (a host or address), with a fresh
    /// random token.
    pub fn new(listen: &str, port: u16) -> Guard {
        let mut names = vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
            "[::1]".to_owned(),
        ];
        let listen = if listen.contains(':') && !listen.starts_with('[') {
            format!("[{listen}]")
        } else {
            listen.to_owned()
        };
        // The address bound to comes first: it is the one printed.
        names.retain(|n| *n != listen);
        names.insert(0, listen);
        let hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Guard {
            token: random_token(),
            hosts,
            origins,
        }
    }

    /// The run's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether `request` may be served, and how it showed its token.
    pub fn check<B>(&self, request: &http::Request<B>) -> Result<Passed, Refusal> {
        let header = |name: http::header::HeaderName| {
            request
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let host = header(http::header::HOST).unwrap_or_default();
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
            return Err(Refusal::ForeignHost);
        }
        if let Some(origin) = header(http::header::ORIGIN)
            && !self.origins.iter().any(|o| o.eq_ignore_ascii_case(&origin))
        {
            return Err(Refusal::ForeignOrigin);
        }
        let cookie = request
            .headers()
            .get_all(http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == COOKIE && same(value, &self.token));
        if cookie {
            return Ok(Passed::Cookie);
        }
        let query = request
            .uri()
            .query()
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .any(|(name, value)| name == "token" && same(value, &self.token));
        if query {
            Ok(Passed::Query)
        } else {
            Err(Refusal::NoToken)
        }
    }

    /// The page's own origins (`http://127.0.0.1:PORT`...).
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// The `Set-Cookie` value that keeps the token for the page's later requests.
    pub fn set_cookie(&self) -> String {
        format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", self.token)
    }
}

/// Compares without stopping at the first difference, so that the time taken says
/// nothing about how much of a guess was right.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// 32 random bytes as hex.
fn random_token() -> String {
    let mut bytes = [0u8; 32];
    // The system's generator does not fail on Linux once booted; a zero token would
    // still be refused nowhere, so fall back to the clock mixed with the process id
    // only to stay unique, and say so.
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        tracing::warn!("the system's random generator failed; the page's token is weak");
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
            ^ u128::from(std::process::id());
        bytes[..16].copy_from_slice(&seed.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        host: &str,
        origin: Option<&str>,
        cookie: Option<&str>,
        uri: &str,
    ) -> http::Request<()> {
        let mut builder = http::Request::builder().uri(uri).header("host", host);
        if let Some(origin) = origin {
            builder = builder.header("origin", origin);
        }
        if let Some(cookie) = cookie {
            builder = builder.header("cookie", cookie);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn the_token_comes_by_cookie_or_once_in_the_url() {
        let guard = Guard::new("127.0.0.1", 8080);
        let token = guard.token().to_owned();
        assert_eq!(token.len(), 64);
        let cookie = format!("other=1; {COOKIE}={token}");
        assert_eq!(
            guard.check(&request(
                "127.0.0.1:8080",
                None,
                Some(&cookie),
                "/api/state"
            )),
            Ok(Passed::Cookie)
        );
        assert_eq!(
            guard.check(&request(
                "localhost:8080",
                None,
                None,
                &format!("/?token={token}")
            )),
            Ok(Passed::Query)
        );
        assert_eq!(
            guard.check(&request("127.0.0.1:8080", None, Some("prise_ui=nope"), "/")),
            Err(Refusal::NoToken)
        );
    }

    #[test]
    fn foreign_hosts_and_origins_are_refused_even_with_the_token() {
        let guard = Guard::new("127.0.0.1", 8080);
        let cookie = format!("{COOKIE}={}", guard.token());
        assert_eq!(
            guard.check(&request("evil.example:8080", None, Some(&cookie), "/")),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(
            guard.check(&request("127.0.0.1:8081", None, Some(&cookie), "/")),
            Err(Refusal::ForeignHost)
        );
        for origin in ["http://evil.example", "null", "http://127.0.0.1:9999"] {
            assert_eq!(
                guard.check(&request(
                    "127.0.0.1:8080",
                    Some(origin),
                    Some(&cookie),
                    "/api/call"
                )),
                Err(Refusal::ForeignOrigin),
                "{origin}"
            );
        }
        assert_eq!(
            guard.check(&request(
                "127.0.0.1:8080",
                Some("http://127.0.0.1:8080"),
                Some(&cookie),
                "/api/call"
            )),
            Ok(Passed::Cookie)
        );
    }
}
