//! Mounting MCP servers: the client side of the Model Context Protocol.
//!
//! This crate owns connections to servers (stdio child processes, in-process servers,
//! Streamable HTTP, legacy SSE), protocol eras, the lifecycle of child processes,
//! signing in, following calls through multi-round requests and tasks, and the
//! registry that maps exposed names (`server__tool`) back to a server and a tool.
//! Its public face is small: [`Mounts::start`] a set of servers, list what they offer,
//! call, read, get, [`Mounts::subscribe`] to events, [`Mounts::close`].
//!
//! It must not know about language models, prompts to models or approval.

pub mod accounts;
pub mod auth;
mod catalog;
pub mod child;
mod client;
mod connect;
pub mod elicit;
pub mod eras;
mod error;
mod event;
mod http;
mod limit;
mod mount;
mod mounts;
mod net;
mod probe;
pub mod progress;
mod reauth;
pub mod registry;
pub mod roots;
mod rounds;
pub mod sampling;
mod sandboxing;
mod sse;
mod subscriptions;
mod supervise;
pub mod tasks;
mod template;
mod trace;
mod vetting;

pub use catalog::Catalog;
pub use elicit::{Elicitation, Elicitor};
pub use error::{CallError, MountError};
pub use event::{Listing, MountEvent};
pub use mount::{InProcessStream, Mount, MountOptions, TERMINATE_GRACE};
pub use mounts::{
    ExposedPrompt, ExposedTool, Mounts, ServerState, Source, Withheld, resource_owner,
};
pub use registry::exposed_name;
pub use roots::folder_root;

/// The protocol types prise exchanges with servers, re-exported for callers.
pub use rmcp::model;
