//! Why mounting or calling failed, worded for the person reading the error.

use std::path::PathBuf;
use std::time::Duration;

/// A server that could not be mounted.
#[derive(Debug, Clone, thiserror::Error)]
#[error("server {server}: {cause}")]
pub struct MountError {
    /// The server.
    pub server: String,
    /// What went wrong.
    pub cause: String,
    /// The last lines the server wrote to stderr, for stdio servers.
    pub stderr_tail: Vec<String>,
    /// Where its whole stderr is logged.
    pub log: Option<PathBuf>,
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
