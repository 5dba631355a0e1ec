//! Built-in MCP servers shipped with prise, starting with the documentation server.
//!
//! This crate owns servers that prise serves itself, in-process or over stdio and
//! Streamable HTTP.
//!
//! It must not know about mounting other servers or about models.
