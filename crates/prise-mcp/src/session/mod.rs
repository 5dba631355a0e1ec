//! A session with one server: prise's handler of what the server asks and tells
//! (`handler`), the state that outlives connections (`state`), reaching the server
//! and shaking hands in the right era (`dial`, `probe`), listening to its news
//! (`subscriptions`) and judging its listings against their pins (`vetting`).
//!
//! Beneath it are the transports and sign-in; it knows nothing of a request's path
//! (timeouts, retries, rounds: `call`) or of mounts.

pub(crate) mod dial;
pub(crate) mod handler;
pub(crate) mod probe;
pub(crate) mod state;
pub(crate) mod subscriptions;
pub(crate) mod vetting;
