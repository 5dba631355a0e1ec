//! How bytes reach a server and come back: a child process over stdio (its
//! environment, its sandbox, a guard on each line), Streamable HTTP, legacy SSE,
//! and the taps that read what passes (the protocol trace, tools that must run as
//! tasks).
//!
//! Beneath it are the network and sign-in; it knows nothing of sessions, eras or
//! requests' paths.

pub(crate) mod guard;
pub(crate) mod http;
pub(crate) mod sandboxing;
pub(crate) mod sse;
pub mod stdio;
pub(crate) mod taps;
pub(crate) mod trace;
