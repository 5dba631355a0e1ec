//! Taps on what a server sends, read before rmcp parses it: the tools that must be
//! called as tasks of the 2025-11-25 revision, which rmcp's `Tool` drops
//! (`execution.taskSupport`). The transports show each message to [`TaskTools::note`]
//! ([`Noting`] for stdio, the SSE events of Streamable HTTP); the call layer asks it.
//! A server that answers `tools/list` with plain JSON over HTTP is not seen this way:
//! rmcp parses those bodies itself.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

/// Lines longer than this are not looked into (a `tools/list` page is far shorter).
const NOTED_LINE_MAX: usize = 16 * 1024 * 1024;

/// The tools of one connection that must be called as tasks.
#[derive(Debug, Default)]
pub(crate) struct TaskTools(Mutex<HashSet<String>>);

impl TaskTools {
    /// Whether `tool` must be called as a task.
    pub fn required(&self, tool: &str) -> bool {
        lock(&self.0).contains(tool)
    }

    /// Looks at one message from the server: an answer listing tools updates the set.
    pub fn note(&self, message: &[u8]) {
        // Most messages say nothing of tasks; only those are parsed twice.
        if memchr::memmem::find(message, b"\"taskSupport\"").is_none() {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let Some(tools) = message.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        let mut required = lock(&self.0);
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            if tool.pointer("/execution/taskSupport") == Some(&json!("required")) {
                required.insert(name.to_owned());
            } else {
                required.remove(name);
            }
        }
    }
}

/// A reader of a stdio server's output that shows each line to [`TaskTools`].
pub(crate) struct Noting<R> {
    inner: R,
    tools: std::sync::Arc<TaskTools>,
    line: Vec<u8>,
    /// The current line is too long to be looked into.
    skipping: bool,
}

impl<R> Noting<R> {
    pub fn new(inner: R, tools: std::sync::Arc<TaskTools>) -> Noting<R> {
        Noting {
            inner,
            tools,
            line: Vec::new(),
            skipping: false,
        }
    }

    fn look(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = memchr::memchr(b'\n', bytes);
            let (part, rest) = bytes.split_at(newline.map_or(bytes.len(), |i| i + 1));
            bytes = rest;
            if !self.skipping {
                if self.line.len() + part.len() > NOTED_LINE_MAX {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if newline.is_some() {
                if !self.skipping {
                    self.tools.note(&self.line);
                }
                self.skipping = false;
                self.line.clear();
                if self.line.capacity() > 1024 * 1024 {
                    self.line = Vec::new();
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Noting<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.look(&buf.filled()[before..]);
        }
        polled
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn tools_that_require_tasks_are_noted_as_lines_pass() {
        let tools = std::sync::Arc::new(TaskTools::default());
        let listing = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "quick", "inputSchema": {}, "execution": {"taskSupport": "forbidden"}},
            {"name": "research", "inputSchema": {}, "execution": {"taskSupport": "required"}},
            {"name": "either", "inputSchema": {}, "execution": {"taskSupport": "optional"}},
        ]}});
        let input = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n{listing}\n");
        // Through a pipe of 7 bytes: lines are cut across reads.
        let (mut server, output) = tokio::io::duplex(7);
        let written = input.clone();
        tokio::spawn(async move { server.write_all(written.as_bytes()).await });
        let mut reader = Noting::new(output, tools.clone());
        let mut out = String::new();
        reader.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, input, "the bytes pass unchanged");
        assert!(tools.required("research"));
        assert!(!tools.required("quick") && !tools.required("either"));

        // A later listing where it no longer requires a task.
        let relisted = json!({"id": 3, "result": {"tools": [
            {"name": "research", "execution": {"taskSupport": "optional"}},
        ]}});
        tools.note(relisted.to_string().as_bytes());
        assert!(!tools.required("research"));
    }
}
