//! The agent loop: a model, the mounted tools, and the policy between them.
//!
//! This crate joins `prise-mcp` and `prise-llm`: it presents mounted tools to a
//! provider under names every provider accepts, runs the turn loop (model, tool calls
//! in parallel, results back to the model, until it answers or `max_turns`), and emits
//! an event for every step.
//!
//! It must not know about terminals or command-line flags: rendering belongs to the
//! `prise` binary.
//!
//! Not yet here (issue #4): saving cut outputs to a file, images, sessions.

mod agent;
mod approve;
mod present;
mod recover;

pub use agent::{Agent, AgentError, AgentEvent, AgentOptions};
pub use approve::{Answer, Approver, AskFuture};
pub use present::{READ_RESOURCE, ToolTable, model_name, provider_schema};
pub use recover::tool_calls_in_text;
