//! The agent loop: a model, the mounted tools, and the policy between them.
//!
//! This crate joins `prise-mcp` and `prise-llm`: it presents mounted tools to a
//! provider, runs the turn loop, applies the approval policy, and emits events for
//! every step.
//!
//! It must not know about terminals or command-line flags: rendering belongs to the
//! `prise` binary.
