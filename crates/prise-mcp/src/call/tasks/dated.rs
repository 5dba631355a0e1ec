//! The tasks of the 2025-11-25 revision (SEP-1686), which the extension replaced but
//! which servers on the TypeScript SDK's `experimental/tasks` serve (server-everything's
//! `simulate-research-query`): a tool whose `execution.taskSupport` is `required` is
//! called with `task` in the request; the client polls `tasks/get` and takes the result
//! from `tasks/result`, whose answer also brings the server's questions (elicitation)
//! while the task waits for them.
//!
//! rmcp models only the extension, and its `Tool` drops `execution`. So the transports
//! show each message from the server to a tap (`transport::taps`) before rmcp reads
//! it, which keeps the names of the tools that must run as tasks.

use std::time::Instant;

use rmcp::model::{
    CallToolResult, ClientRequest, CustomRequest, GetTaskParams, JsonObject, Request, ServerResult,
    TaskStatus,
};
use serde_json::{Value, json};

use super::{DEFAULT_POLL, Pending, Status, pace_of};
use crate::call::Caller;
use crate::error::CallError;

/// Calls `tool` as a task and follows it to its result.
pub(crate) async fn call(
    mount: &Caller,
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
        if status.report(mount, tool, &id, task.status, task.message.clone()) {
            last_news = Instant::now();
        }
        if task.status != TaskStatus::Working {
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
    if task.status.is_terminal() {
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
        Err(_) if task.status == TaskStatus::Cancelled => Err(fail(
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
    status: TaskStatus,
    message: Option<String>,
    poll_ms: Option<u64>,
}

impl DatedTask {
    fn read(task: &Value) -> Option<DatedTask> {
        Some(DatedTask {
            id: task.get("taskId")?.as_str()?.to_owned(),
            // The 2025-11-25 revision words its statuses as the extension does.
            status: serde_json::from_value(task.get("status")?.clone()).ok()?,
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
