//! What mounts report as they go.

// Logging is deprecated by the 2026-07-28 revision (SEP-2577); dated-era servers
// still send log messages.
#![allow(deprecated)]

use std::time::Duration;

pub use rmcp::model::TaskStatus;

/// A task's status as the protocol words it: `working`, `input_required`,
/// `completed`, `failed` or `cancelled`.
pub fn task_status_word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "unknown",
    }
}

/// One of the lists a server keeps, which it may say changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listing {
    /// Its tools.
    Tools,
    /// Its resources and resource templates.
    Resources,
    /// Its prompts.
    Prompts,
}

impl Listing {
    /// Every listing, in the order of [`Listing::index`].
    pub const ALL: [Listing; 3] = [Listing::Tools, Listing::Resources, Listing::Prompts];

    /// `tools`, `resources` or `prompts`, as the protocol's methods name them.
    pub fn as_str(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Resources => "resources",
            Listing::Prompts => "prompts",
        }
    }

    /// Its place in [`Listing::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something that happened on a mounted server.
#[derive(Debug, Clone)]
pub enum MountEvent {
    /// A server finished starting and listing what it offers.
    Ready {
        /// The server.
        server: String,
        /// From spawn or connect to listed.
        elapsed: Duration,
    },
    /// A server could not be mounted.
    Failed {
        /// The server.
        server: String,
        /// Why.
        error: String,
    },
    /// A stdio server exited on its own and will be started again after `delay`.
    Restarting {
        /// The server.
        server: String,
        /// Which restart in a row this is, from 1.
        attempt: u32,
        /// The backoff before it.
        delay: Duration,
    },
    /// A server said its tools, resources or prompts changed; they were re-listed.
    /// However many times it says so while a listing is under way, one more
    /// listing follows, and one event.
    ListChanged {
        /// The server.
        server: String,
        /// What was listed again.
        what: Listing,
    },
    /// A resource subscribed to ([`crate::Mounts::subscribe_resource`]) changed.
    ResourceUpdated {
        /// The server.
        server: String,
        /// The resource, as the server names it.
        uri: String,
    },
    /// Progress of a long request.
    Progress {
        /// The server.
        server: String,
        /// The request's progress token.
        token: String,
        /// Progress so far.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A message for people.
        message: Option<String>,
    },
    /// A server sent a log message (`notifications/message`).
    Log {
        /// The server.
        server: String,
        /// The message as it sent it.
        message: rmcp::model::LoggingMessageNotificationParam,
    },
    /// A message went to or came from a server; only when mounted with
    /// `MountOptions::trace`.
    Message {
        /// The server.
        server: String,
        /// Whether prise sent it (else the server did).
        outgoing: bool,
        /// The JSON-RPC message as JSON text, serialized once for every listener.
        message: std::sync::Arc<str>,
    },
    /// A tool call that the server made a task of changed status (see the
    /// `io.modelcontextprotocol/tasks` extension).
    Task {
        /// The server.
        server: String,
        /// The tool, as the server names it.
        tool: String,
        /// The task's id.
        task: String,
        /// Where it stands.
        status: TaskStatus,
        /// The server's message about it, for people.
        message: Option<String>,
    },
}
