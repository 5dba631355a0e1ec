//! Language model providers: OpenAI-compatible Chat Completions and Anthropic Messages.
//!
//! This crate owns provider wire formats, streaming, retries and model specs
//! (`provider:model`). It takes messages and tool definitions (name, description, JSON
//! schema) and yields events.
//!
//! It must not know about MCP: tools are plain definitions to it.
