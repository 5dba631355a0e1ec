//! The terminal asks one question at a time.
//!
//! Approval prompts and servers' forms (elicitation) both write to stderr and read
//! answers from stdin, and both can arise from calls running in parallel: without a
//! turn each, two questions would interleave and race for the same typed line.

use std::sync::{Mutex, MutexGuard};

static TERMINAL: Mutex<()> = Mutex::new(());

/// Holds the terminal for one question (taken on the blocking thread that asks).
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    TERMINAL.lock().unwrap_or_else(|e| e.into_inner())
}
