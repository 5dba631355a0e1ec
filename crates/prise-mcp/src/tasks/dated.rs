//! The tasks of the 2025-11-25 revision (SEP-1686), which the extension replaced but
//! which servers on the TypeScript SDK's `experimental/tasks` serve (server-everything's
//! `simulate-research-query`): a tool whose `execution.taskSupport` is `required` is
//! called with `task` in the request; the client polls `tasks/get` and takes the result
//! from `tasks/result`, whose answer also brings the server's questions (elicitation)
//! while the task waits for them.
//!
//! rmcp models only the extension, and its `Tool` drops `execution`. So the transports
//! show each message from the server to [`TaskTools::note`] before rmcp reads it
//! ([`Noting`] for stdio, the SSE events of Streamable HTTP), and it keeps the names
//! of the tools that must run as tasks. A server that answers `tools/list` with plain
//! JSON over HTTP is not seen this way: rmcp parses those bodies itself.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Instant;

use rmcp::model::{
    CallToolResult, ClientRequest, CustomRequest, GetTaskParams, JsonObject, Request, ServerResult,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

use super::{DEFAULT_POLL, Pending, Status, lock, pace_of};
use crate::error::CallError;
use crate::mount::Mount;

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

/// Calls `tool` as a task and follows it to its result.
pub(crate) async fn call(
    mount: &Mount,
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<CallToolResult, CallError> {
    let fail = |method: &str, cause: String| CallError::Transport {
        server: mount.name().to_owned(),
        method: method.to_owned(),
        cause,
    };
    // No `ttl`: the server keeps the task as long as it keeps tasks.
    let mut params = json!({"name": tool, "task": {}});
    if let Some(arguments) = arguments {
        params["arguments"] = Value::Object(arguments);
    }
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
    let created = value(mount.request_signed_in(request, "tools/call").await?);
    let Some(mut task) = created.get("task").and_then(DatedTask::read) else {
        return Err(fail(
            "tools/call",
            "the server answered a call as a task without a task".to_owned(),
        ));
    };
    let id = task.id.clone();
    let pending = Pending::register(mount.peer(), &id);
    let mut status = Status::default();
    let mut pace = pace_of(task.poll_ms, DEFAULT_POLL);
    let mut last_news = Instant::now();
    // Until the task needs an answer or is over, it is polled; then `tasks/result`
    // brings the questions, and the result once there is one.
    loop {
        if status.report(mount, tool, &id, task.status.clone(), task.message.clone()) {
            last_news = Instant::now();
        }
        if task.status != "working" {
            break;
        }
        if last_news.elapsed() >= mount.call_timeout() {
            return Err(CallError::Timeout {
                server: mount.name().to_owned(),
                method: format!("tools/call (task {id})"),
                after: mount.call_timeout(),
            });
        }
        tokio::time::sleep(pace).await;
        let request = ClientRequest::GetTaskRequest(Request::new(GetTaskParams::new(id.clone())));
        let got = value(mount.request_signed_in(request, "tasks/get").await?);
        task = DatedTask::read(&got).ok_or_else(|| {
            fail(
                "tasks/get",
                "the server's answer is not a task's status".to_owned(),
            )
        })?;
        pace = pace_of(task.poll_ms, pace);
    }
    let over = matches!(task.status.as_str(), "completed" | "failed" | "cancelled");
    if over {
        pending.done();
    }
    let request = ClientRequest::CustomRequest(CustomRequest::new(
        "tasks/result",
        Some(json!({"taskId": id})),
    ));
    match mount.request_signed_in(request, "tasks/result").await {
        Ok(ServerResult::CallToolResult(result)) => Ok(result),
        Ok(_) => Err(fail(
            "tasks/result",
            "the server's answer is not a tool result".to_owned(),
        )),
        Err(_) if task.status == "cancelled" => Err(fail(
            "tools/call",
            format!(
                "the server cancelled the task{}",
                task.message.map(|m| format!(": {m}")).unwrap_or_default()
            ),
        )),
        Err(error) => Err(error),
    }
}

/// A task's status as the 2025-11-25 revision words it.
struct DatedTask {
    id: String,
    status: String,
    message: Option<String>,
    poll_ms: Option<u64>,
}

impl DatedTask {
    fn read(task: &Value) -> Option<DatedTask> {
        Some(DatedTask {
            id: task.get("taskId")?.as_str()?.to_owned(),
            status: task.get("status")?.as_str()?.to_owned(),
            message: task
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_owned),
            // rmcp reads a dated answer as the extension's when it can, renaming this.
            poll_ms: task
                .get("pollInterval")
                .or_else(|| task.get("pollIntervalMs"))
                .and_then(Value::as_u64),
        })
    }
}

/// A result as JSON, whichever of rmcp's types it was read as.
fn value(result: ServerResult) -> Value {
    serde_json::to_value(result).unwrap_or_default()
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
