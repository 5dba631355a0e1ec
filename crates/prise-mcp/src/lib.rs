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
//!
//! Inside, modules are layers, and each imports only from those beneath it (a test,
//! `tests/layers.rs`, fails when one does not):
//!
//! 1. leaves anyone may use: [`options`](MountOptions), errors, events, progress,
//!    the questions a server or a sign-in asks (elicitation, sampling, roots, the
//!    person's part of a sign-in), the catalog, the remembered eras, names;
//! 2. `net`: the HTTP clients, reads that stop at a bound, what failed in words;
//! 3. [`auth`] and [`accounts`]: signing in, over `net` only;
//! 4. `transport`: stdio (the child, its sandbox, a guard on each line), Streamable
//!    HTTP, legacy SSE, the taps;
//! 5. `session`: prise's handler, the state of a mount's session, dialing in the
//!    right era, subscriptions, pins' verdicts;
//! 6. `call`: one request's path (timeouts, the single retry after a sign-in,
//!    rounds, tasks);
//! 7. [`Mount`] and `supervise`;
//! 8. [`Mounts`]: the set, routing; [`ServerStatus`], each server as the command
//!    line and the page both show it.

// Leaves.
mod catalog;
pub mod elicit;
pub mod eras;
mod error;
mod event;
mod options;
mod person;
pub mod progress;
pub mod registry;
pub mod roots;
pub mod sampling;
mod template;
// The network, sign-in.
pub mod accounts;
pub mod auth;
mod net;
// Transports, sessions, requests.
mod call;
mod session;
mod transport;
// Mounts.
mod mount;
mod mounts;
mod plan;
mod status;
mod supervise;

pub use call::tasks;
pub use catalog::Catalog;
pub use elicit::{Elicitation, Elicitor};
pub use error::{CallError, MountError, MountFailure, RestartError, TrustError};
pub use event::{Listing, MountEvent, TaskStatus, task_status_word};
pub use mount::{InProcessStream, Mount};
pub use mounts::{ExposedPrompt, ExposedTool, Mounts, Source, Withheld, resource_owner};
pub use options::MountOptions;
pub use plan::{PlanError, Wanted};
pub use registry::exposed_name;
pub use roots::folder_root;
pub use status::{ServerStatus, State};
pub use transport::stdio::{TERMINATE_GRACE, kill_all_children};

/// The protocol types prise exchanges with servers, re-exported for callers.
pub use rmcp::model;
