//! Mounting MCP servers: the client side of the Model Context Protocol.
//!
//! This crate owns connections to servers (stdio child processes, Streamable HTTP,
//! legacy HTTP+SSE), both protocol eras, the lifecycle of child processes, and the
//! registry that maps exposed names (`server__tool`) back to a server and a tool.
//!
//! It must not know about language models, prompts to models or approval: it mounts,
//! lists, calls, reads and reports events.
