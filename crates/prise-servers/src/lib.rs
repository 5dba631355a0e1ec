//! Built-in MCP servers shipped with prise: the documentation server.
//!
//! This crate owns servers that prise serves itself, whether in-process (the embedded
//! default mount), over stdio or over Streamable HTTP. A server here is an rmcp
//! `ServerHandler`; how it is transported is the caller's business.
//!
//! It must not know about mounting other servers, about models, or about the command
//! line.

pub mod docs;
pub mod serve;

pub use docs::{DocsServer, Library};

include!(concat!(env!("OUT_DIR"), "/embedded_docs.rs"));

/// The documentation server over prise's own embedded documentation, named `docs`.
pub fn embedded_docs() -> DocsServer {
    DocsServer::new("prise-docs", Library::from_memory(EMBEDDED_DOCS))
}
