//! Reading the MCP server configurations that users already have.
//!
//! This crate owns the configuration model of prise: which servers exist, how to
//! reach each one (a command to spawn, or a URL), and the options prise adds (timeouts,
//! tool filters, restart policy, protocol era). It reads the `mcpServers` files of
//! Claude Desktop, Claude Code (`.mcp.json`), Cursor and mcphost, and VS Code's
//! `.vscode/mcp.json` (`servers`, comments allowed), expands `${VAR}` references, and
//! rejects bad input with the file, line and column at fault.
//!
//! It must not know about processes, networks or MCP messages: it reads files and
//! environment variables and nothing else. Spawning and connecting belong to
//! `prise-mcp`.
//!
//! ```
//! use prise_config::{Config, Transport};
//!
//! let text = r#"{ "mcpServers": { "time": { "command": "uvx", "args": ["mcp-server-time"] } } }"#;
//! let config = Config::parse(text, ".mcp.json".as_ref(), &|_| None)?;
//! let Transport::Stdio(stdio) = &config.servers[0].transport else { unreachable!() };
//! assert_eq!(stdio.command, "uvx");
//! # Ok::<(), prise_config::ConfigError>(())
//! ```

mod cli_servers;
mod discover;
pub mod edit;
mod expand;
mod jsonc;
mod model;
mod parse;
mod places;
mod secret;
mod suggest;

pub use cli_servers::split_words;
pub use discover::{App, app_files, candidates, project_files, user_files};
pub use model::{
    AllowNetwork, Approval, Config, DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_MAX_RESTARTS, DEFAULT_STARTUP_TIMEOUT, Decision, Enterprise, Format, ModelSettings,
    OAuth, Pinning, Profile, Protocol, Remote, RestartPolicy, Sandbox, Server, Stdio, TokenSource,
    ToolFilter, ToolSearch, Transport,
};
pub use places::{MINIMAL_ENV, state_dir};
pub use secret::{MASK, looks_secret};
pub use suggest::closest;

use std::path::PathBuf;

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists (or was named) but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file was read but its content is wrong at a known place.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        /// The file at fault.
        path: PathBuf,
        /// 1-based line of the offending key or value.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong, naming the server and key concerned.
        message: String,
        /// How to fix it, when there is something useful to say.
        hint: Option<String>,
    },
}

impl ConfigError {
    /// A suggestion for the user, if there is one.
    pub fn hint(&self) -> Option<&str> {
        match self {
            ConfigError::Read { .. } => None,
            ConfigError::Invalid { hint, .. } => hint.as_deref(),
        }
    }
}
