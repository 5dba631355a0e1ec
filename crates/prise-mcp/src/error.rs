//! Why mounting or calling failed, worded for the person reading the error.

use std::path::PathBuf;
use std::time::Duration;

/// A server that could not be mounted.
#[derive(Debug, Clone, thiserror::Error)]
#[error("server {server}: {cause}")]
pub struct MountError {
    /// The server.
    pub server: String,
    /// What kind of failure it was.
    pub kind: MountFailure,
    /// What went wrong, in words for people (the kind says it for programs).
    pub cause: String,
    /// The last lines the server wrote to stderr, for stdio servers.
    pub stderr_tail: Vec<String>,
    /// Where its whole stderr is logged.
    pub log: Option<PathBuf>,
}

impl MountError {
    /// Whether a sign-in would mend it: none was made, or the one on record was
    /// refused (`prise auth login SERVER`).
    pub fn needs_sign_in(&self) -> bool {
        matches!(
            self.kind,
            MountFailure::NeedsSignIn | MountFailure::SignInRefused
        )
    }

    /// Whether the server did not start within its startup timeout.
    pub fn timed_out(&self) -> bool {
        self.kind == MountFailure::Timeout
    }

    /// Whether its configuration cannot be used as written (a root folder, a header).
    pub fn is_configuration(&self) -> bool {
        self.kind == MountFailure::Configuration
    }
}

/// What kept a server from being mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MountFailure {
    /// Its configuration cannot be used as written (a root folder, a header).
    Configuration,
    /// Its program could not be started (not found, not allowed, refused by the
    /// sandbox before it ran).
    Start,
    /// It needs a sign-in, and nobody here can make one.
    NeedsSignIn,
    /// It refused the sign-in on record (revoked or expired).
    SignInRefused,
    /// Signing in was tried, and failed.
    SignIn,
    /// It did not start within its startup timeout.
    Timeout,
    /// Reaching it, the handshake or the first listing failed.
    Handshake,
}

/// Why a server could not be started again on request.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RestartError {
    /// No mounted server has this name.
    #[error("no mounted server is named {0}")]
    NoSuchServer(String),
    /// The server is not a stdio server that restarts.
    #[error("{0} cannot be restarted: only stdio servers whose \"restart\" is not \"never\" are")]
    NotRestartable(String),
}

/// Why a definition could not be trusted (pinned as it is now).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TrustError {
    /// The server's pinning is off.
    #[error("server {0} pins nothing (\"pinning\": \"off\")")]
    PinsNothing(String),
    /// The server declares nothing by that name.
    #[error("server {server} declares no {} {name}", declaration.word())]
    NotDeclared {
        /// The server.
        server: String,
        /// What was looked for.
        declaration: prise_trust::pins::Declaration,
        /// Its name.
        name: String,
    },
    /// The pin could not be written; the pin file's words.
    #[error("{0}")]
    Pins(String),
}

/// A request to a mounted server that did not produce a result.
///
/// A tool that ran and reported failure (`isError: true`) is not a `CallError`: its
/// result is returned like any other.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// No mounted server exposes this name.
    #[error("no tool named {name}{}", suggestion.as_ref().map(|s| format!("; did you mean {s}?")).unwrap_or_default())]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest exposed name, when one is close.
        suggestion: Option<String>,
    },
    /// The name belongs to a configured server that could not be mounted.
    #[error("server {server} is not available: {cause}")]
    Unavailable {
        /// The server.
        server: String,
        /// Why it was not mounted.
        cause: String,
    },
    /// The tool or prompt is withheld: its definition is not the one pinned (see
    /// `prise_trust::pins`).
    #[error("{} {name} of server {server} {}; `prise trust {server} {name}` shows the change and accepts it", declaration.word(), change.describe())]
    Withheld {
        /// The server.
        server: String,
        /// A tool or a prompt.
        declaration: prise_trust::pins::Declaration,
        /// Its name, as the server gives it.
        name: String,
        /// How it differs from its pin.
        change: prise_trust::pins::Change,
    },
    /// No mounted server exposes this prompt, or is named so.
    #[error("{0}")]
    NotFound(String),
    /// No mounted server lists this resource or has one template it fits.
    #[error("{}", if servers.is_empty() {
        format!("no mounted server lists {uri} or has a resource template it fits")
    } else {
        format!("{uri} fits resource templates of several servers: {}", servers.join(", "))
    })]
    UnknownResource {
        /// The URI asked for.
        uri: String,
        /// The servers whose templates it fits, when there are several.
        servers: Vec<String>,
    },
    /// The server did not answer in time; a cancellation was sent.
    #[error("server {server} did not answer {method} within {}", seconds(*after))]
    Timeout {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// The limit that passed.
        after: Duration,
    },
    /// The connection ended before the answer came.
    #[error("server {server} closed the connection during {method}{detail}")]
    Closed {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// Exit status and stderr tail, when known, starting with `: `.
        detail: String,
    },
    /// The server's answer was longer than the limit; it was dropped unread.
    #[error("server {server}'s answer to {method} was {}, over its limit of {}; raise \"maxMessageSize\" for {server} in the configuration to accept it", size_text(*size), size_text(*limit))]
    TooLarge {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// The answer's size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The server's answer was not valid UTF-8 text, as JSON must be; it was
    /// dropped unread.
    #[error(
        "server {server}'s answer to {method} is not valid UTF-8, as JSON text must be; it was dropped"
    )]
    NotUtf8 {
        /// The server.
        server: String,
        /// The request.
        method: String,
    },
    /// The server's answer held more JSON values than its size limit allows (one
    /// per 32 bytes: parsing costs memory by the value); it was dropped unread.
    #[error(
        "server {server}'s answer to {method} holds over {limit} JSON values, more than its \"maxMessageSize\" allows; raise it for {server} in the configuration to accept it"
    )]
    TooManyValues {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// The most values allowed.
        limit: usize,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server {server} rejected {method}: {message} (code {code})")]
    Rejected {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// JSON-RPC error code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// Anything else the transport reported.
    #[error("server {server}: {method} failed: {cause}")]
    Transport {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// What went wrong.
        cause: String,
    },
}

fn size_text(bytes: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes as f64 >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{secs:.0} s")
    }
}

/// Characters of an error text kept: an error is one line, not a page.
const MAX_ERROR_CHARS: usize = 300;

/// An error text from a transport, made fit for one line: a web page in it reduced
/// to its title (a proxy's or a framework's error page is not the server's answer),
/// reqwest's "for url (...)" dropped (the caller names the URL once), a bare HTTP
/// status given its reason, and the whole cut short.
pub(crate) fn tidy(text: &str) -> String {
    let mut text = text.to_owned();
    let lower = text.to_ascii_lowercase();
    if let Some(start) = lower.find("<!doctype html").or_else(|| lower.find("<html")) {
        let page = &text[start..];
        let page_lower = &lower[start..];
        let inside = |tag: &str| {
            let open = page_lower.find(tag)? + tag.len();
            let close = page_lower[open..].find("</")? + open;
            let words = page[open..close]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            (!words.is_empty()).then_some(words)
        };
        // The title, and the page's first heading or preformatted line when it says
        // more (Express: "Error", then "Cannot POST /nope").
        let title = match (
            inside("<title>"),
            inside("<h1>").or_else(|| inside("<pre>")),
        ) {
            (Some(title), Some(more)) if more != title => Some(format!("{title}: {more}")),
            (title, more) => title.or(more),
        };
        let head = text[..start].trim_end().trim_end_matches(':').to_owned();
        text = match title {
            Some(title) => format!("{head} (an HTML page: \"{title}\")"),
            None => format!("{head} (an HTML page)"),
        };
    }
    if let Some(start) = text.find(" for url (")
        && let Some(end) = text[start..].find(')')
    {
        text.replace_range(start..start + end + 1, "");
    }
    text = with_reasons(&text);
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > MAX_ERROR_CHARS {
        format!(
            "{}…",
            line.chars().take(MAX_ERROR_CHARS - 1).collect::<String>()
        )
    } else {
        line
    }
}

/// `HTTP 502` becomes `HTTP 502 Bad Gateway`; a status already with its reason stays.
fn with_reasons(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find("HTTP ") {
        let (before, after) = rest.split_at(at + 5);
        out.push_str(before);
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        rest = &after[digits.len()..];
        out.push_str(&digits);
        let reason_follows = rest
            .strip_prefix(' ')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()));
        if digits.len() == 3 && !reason_follows {
            let reason = digits
                .parse::<u16>()
                .ok()
                .and_then(|code| reqwest::StatusCode::from_u16(code).ok())
                .and_then(|status| status.canonical_reason());
            if let Some(reason) = reason {
                out.push(' ');
                out.push_str(reason);
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn pages_become_titles_and_lines_stay_short() {
        let page = format!(
            "unexpected server response: HTTP 404 Not Found: <!DOCTYPE html>\n<html><head><title>404 -\n Not Found</title></head><body>{}</body></html>",
            "<p>x</p>".repeat(500)
        );
        assert_eq!(
            tidy(&page),
            "unexpected server response: HTTP 404 Not Found (an HTML page: \"404 - Not Found\")"
        );
        assert_eq!(
            tidy("<html><body><h1>Oops</h1></body></html>"),
            "(an HTML page: \"Oops\")"
        );
        assert_eq!(
            tidy("x: <!DOCTYPE html><title>Error</title><body><pre>Cannot POST /nope</pre>"),
            "x (an HTML page: \"Error: Cannot POST /nope\")"
        );
        assert_eq!(
            tidy("handshake failed: HTTP 502"),
            "handshake failed: HTTP 502 Bad Gateway"
        );
        assert_eq!(
            tidy("error sending request for url (http://h/mcp)"),
            "error sending request"
        );
        assert_eq!(tidy(&"y".repeat(1000)).chars().count(), 300);
        assert_eq!(tidy("HTTP 401 Unauthorized"), "HTTP 401 Unauthorized");
    }
}
