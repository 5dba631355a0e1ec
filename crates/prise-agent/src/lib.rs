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
//! Mount, build an agent, subscribe, run, close (the whole program is
//! `examples/picnic.rs`):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use prise_agent::{Agent, AgentEvent, AgentOptions};
//! use prise_llm::{Endpoint, OpenAiCompatible};
//! use prise_mcp::{MountOptions, Mounts, Source};
//!
//! # async fn picnic() -> Result<(), Box<dyn std::error::Error>> {
//! let config = prise_config::Config::parse(
//!     r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#,
//!     "inline.json".as_ref(),
//!     &|name| std::env::var(name).ok(),
//! )?;
//! let sources = config.servers.into_iter().map(Source::from).collect();
//! let mounts = Arc::new(Mounts::start(sources, MountOptions::default()).await);
//!
//! let endpoint = Endpoint { base_url: "http://localhost:11434/v1".into(), api_key: None };
//! let model = OpenAiCompatible::new(endpoint, "qwen2.5")?;
//! let options = AgentOptions { max_turns: 10, ..AgentOptions::default() };
//! let mut agent = Agent::new(Box::new(model), mounts.clone(), options);
//!
//! let mut events = agent.subscribe();
//! tokio::spawn(async move {
//!     while let Some(event) = events.recv().await {
//!         if let AgentEvent::ToolStart { name, .. } = event {
//!             eprintln!("→ {name}"); // time__get_current_time
//!         }
//!     }
//! });
//!
//! let answer = agent.run("What time is it in Paris?").await?;
//! drop(agent);
//! if let Ok(mounts) = Arc::try_unwrap(mounts) {
//!     mounts.close().await; // stdio servers are processes of ours
//! }
//! println!("{answer}");
//! # Ok(())
//! # }
//! ```

mod agent;
mod approve;
pub mod configured;
mod content;
pub mod offer;
mod present;
mod recover;
pub mod session;
pub mod stream_json;
pub mod summary;

pub use agent::{Agent, AgentError, AgentEvent, AgentOptions, ToolOutcome, ToolOutput};
pub use approve::{Answer, Approvals, Approver, AskFuture, Refusal};
pub use present::{READ_RESOURCE, ToolTable, is_hidden, model_name};
pub use recover::{Recovered, check_arguments, recover};
