//! Language model providers: the model side of prise's agent.
//!
//! This crate owns provider wire formats, streaming, retries and model specs
//! (`provider:model`). It takes messages and tool definitions (name, description, JSON
//! schema) and yields the model's reply, streaming text deltas as they come.
//!
//! It must not know about MCP: tools are plain definitions to it, and tool results are
//! text.
//!
//! Two clients: OpenAI-compatible Chat Completions (Ollama, vLLM, llama.cpp, LM Studio,
//! OpenAI, OpenRouter, DeepSeek, Gemini's compatible endpoint) and Anthropic Messages;
//! tool schemas adapted to what each provider parses.

mod anthropic;
mod degenerate;
mod error;
mod model;
mod models;
mod openai;
mod retry;
mod schema;
mod send;
mod spec;
mod think;
mod types;

pub use anthropic::Anthropic;
pub use error::ModelError;
pub use model::Model;
pub use models::available_models;
pub use openai::OpenAiCompatible;
pub use retry::RetryPolicy;
pub use schema::{SchemaDialect, adapt_schema};
pub use send::{ClientOptions, DEFAULT_IDLE_TIMEOUT, Sampling, ToolChoice};
pub use spec::{Endpoint, ModelSpec, Provider};
pub use types::{
    Image, Message, ModelEvent, Reply, Role, StopReason, ToolCall, ToolDefinition, Usage,
};
