//! Long-running tools as tasks: the `io.modelcontextprotocol/tasks` extension
//! (SEP-2663).
//!
//! prise declares the extension, so a server may answer a `tools/call` with a task
//! handle instead of the result. The call is then followed to its end here: `tasks/get`
//! at the pace the server asks, each change of status reported as a
//! [`MountEvent::Task`], the server's questions (`input_required`) answered by the
//! same handlers as in any other request and sent back with `tasks/update`, the
//! result (or the error) handed to the caller as if the call had answered it. A caller
//! that gives up (Ctrl-C, a cancelled turn, a task that stalls past the call timeout)
//! sends `tasks/cancel`.
//!
//! Servers of the 2025-11-25 revision serve the tasks that came before the extension,
//! which the client asks for: see [`dated`].

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, CancelTaskParams, ClientRequest, DetailedTask, GetTaskParams, InputRequests,
    Request, ServerResult, Task, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::{Peer, RoleClient};

use crate::call::Caller;
use crate::error::CallError;
use crate::event::MountEvent;
use crate::progress::CallNews;

pub(crate) mod dated;

/// Polls faster than this are slowed down: a server that asks for 0 ms gets no busy loop.
const MIN_POLL: Duration = Duration::from_millis(50);
/// Polls slower than this are sped up: a person is waiting on the other side.
const MAX_POLL: Duration = Duration::from_secs(5);
/// The pace when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// Follows the task `created` that `mount` made of a call of `tool` to its result.
pub(crate) async fn follow(
    mount: &Caller,
    tool: &str,
    created: Task,
) -> Result<CallToolResult, CallError> {
    let fail = |cause: String| CallError::Transport {
        server: mount.name().to_owned(),
        method: "tools/call".to_owned(),
        cause,
    };
    let id = created.task_id.clone();
    let pending = Pending::register(mount.peer(), &id);
    let mut status = Status::default();
    status.report_task(mount, tool, &created);
    let mut pace = pace_of(created.poll_interval_ms, DEFAULT_POLL);
    let mut answered = BTreeSet::new();
    let mut last_news = Instant::now();
    loop {
        tokio::time::sleep(pace).await;
        let request = ClientRequest::GetTaskRequest(Request::new(GetTaskParams::new(id.clone())));
        let detailed = match mount.request_signed_in(request, "tasks/get").await? {
            ServerResult::GetTaskResult(got) => got.task,
            _ => {
                return Err(fail(
                    "the server answered tasks/get with something else".to_owned(),
                ));
            }
        };
        let DetailedTask { task, payload, .. } = detailed;
        if task.task_id != id {
            return Err(fail(format!(
                "the server answered tasks/get for task {id} about task {}",
                task.task_id
            )));
        }
        pace = pace_of(task.poll_interval_ms, pace);
        if status.report_task(mount, tool, &task) {
            last_news = Instant::now();
        }
        match payload {
            TaskPayload::Completed { result } => {
                pending.done();
                return serde_json::from_value(serde_json::Value::Object(result))
                    .map_err(|e| fail(format!("the task's result is not a tool result: {e}")));
            }
            TaskPayload::Failed { error } => {
                pending.done();
                return Err(CallError::Rejected {
                    server: mount.name().to_owned(),
                    method: "tools/call".to_owned(),
                    code: error.get("code").and_then(|c| c.as_i64()).unwrap_or(0) as i32,
                    message: crate::error::tidy(
                        error
                            .get("message")
                            .and_then(|m| m.as_str())
                            .unwrap_or("the task failed"),
                    ),
                });
            }
            TaskPayload::Cancelled => {
                pending.done();
                return Err(fail(format!(
                    "the server cancelled the task{}",
                    task.status_message
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                )));
            }
            TaskPayload::InputRequired { input_requests } => {
                let unanswered = not_yet(input_requests, &answered);
                if !unanswered.is_empty() {
                    answered.extend(unanswered.keys().cloned());
                    let answers = crate::call::rounds::answers(&mount.handler(), unanswered)
                        .await
                        .map_err(fail)?;
                    let update = UpdateTaskParams::new(id.clone(), answers);
                    let request = ClientRequest::UpdateTaskRequest(Request::new(update));
                    mount.request_signed_in(request, "tasks/update").await?;
                    last_news = Instant::now();
                }
            }
            // Not `Working` alone: a status this version does not know is waited out.
            _ => {}
        }
        // A task may run for hours, but one that says nothing new for as long as a
        // call may take is taken as stuck (like a call without progress notifications).
        if last_news.elapsed() >= mount.call_timeout() {
            return Err(CallError::Timeout {
                server: mount.name().to_owned(),
                method: format!("tools/call (task {id})"),
                after: mount.call_timeout(),
            });
        }
    }
}

/// The questions of `requests` not answered yet: a server lists them until it has read
/// the answers, and each is answered once.
fn not_yet(requests: InputRequests, answered: &BTreeSet<String>) -> InputRequests {
    requests
        .into_iter()
        .filter(|(key, _)| !answered.contains(key))
        .collect()
}

/// The pace the server asks for (`poll_ms`), else the one so far, within bounds.
fn pace_of(poll_ms: Option<u64>, so_far: Duration) -> Duration {
    poll_ms
        .map(Duration::from_millis)
        .unwrap_or(so_far)
        .clamp(MIN_POLL, MAX_POLL)
}

/// The status last reported, so that only changes are.
#[derive(Default)]
struct Status(Option<(TaskStatus, Option<String>)>);

impl Status {
    /// Reports `task`'s status if it changed; whether it did.
    fn report_task(&mut self, mount: &Caller, tool: &str, task: &Task) -> bool {
        self.report(
            mount,
            tool,
            &task.task_id,
            task.status,
            task.status_message.clone(),
        )
    }

    /// Reports task `id`'s `status` and `message` if they changed; whether they did.
    fn report(
        &mut self,
        mount: &Caller,
        tool: &str,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> bool {
        let now = (status, message.clone());
        if self.0.as_ref() == Some(&now) {
            return false;
        }
        self.0 = Some(now);
        crate::progress::tell(CallNews::Task {
            status,
            message: message.clone(),
        });
        let _ = mount.events().send(MountEvent::Task {
            server: mount.name().to_owned(),
            tool: tool.to_owned(),
            task: id.to_owned(),
            status,
            message,
        });
        true
    }
}

/// A task being followed: the connection it lives on and its id.
type Followed = (Peer<RoleClient>, String);

/// Tasks being followed, so that a caller who gives up, or a process that is
/// interrupted, cancels them: a task is work the server goes on doing otherwise.
static PENDING: LazyLock<Mutex<HashMap<u64, Followed>>> = LazyLock::new(Default::default);
static NEXT: AtomicU64 = AtomicU64::new(0);
/// Cancellations sent and not yet answered, for [`cancel_all`] to wait for.
static SENDING: LazyLock<Mutex<Vec<tokio::task::JoinHandle<()>>>> = LazyLock::new(Default::default);

/// A task followed; dropped before [`Pending::done`], it sends `tasks/cancel`.
struct Pending(u64);

impl Pending {
    fn register(peer: Peer<RoleClient>, task: &str) -> Pending {
        let key = NEXT.fetch_add(1, Ordering::Relaxed);
        lock(&PENDING).insert(key, (peer, task.to_owned()));
        Pending(key)
    }

    /// The task ended on the server: nothing to cancel.
    fn done(self) {
        lock(&PENDING).remove(&self.0);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some((peer, task)) = lock(&PENDING).remove(&self.0) {
            send_cancel(peer, task);
        }
    }
}

fn send_cancel(peer: Peer<RoleClient>, task: String) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let sending = runtime.spawn(async move {
        let request = ClientRequest::CancelTaskRequest(Request::new(CancelTaskParams::new(task)));
        let _ = peer.send_request(request).await;
    });
    let mut all = lock(&SENDING);
    all.retain(|s| !s.is_finished());
    all.push(sending);
}

/// Cancels every task still followed and waits up to `within` for the servers to take
/// the cancellations in: for a process about to exit (Ctrl-C), whose servers would
/// otherwise go on with work nobody waits for.
pub async fn cancel_all(within: Duration) {
    let pending: Vec<_> = lock(&PENDING).drain().map(|(_, p)| p).collect();
    for (peer, task) in pending {
        send_cancel(peer, task);
    }
    let sending: Vec<_> = lock(&SENDING).drain(..).collect();
    let _ = tokio::time::timeout(within, async {
        for s in sending {
            let _ = s.await;
        }
    })
    .await;
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_is_the_servers_within_bounds() {
        assert_eq!(pace_of(None, DEFAULT_POLL), DEFAULT_POLL);
        assert_eq!(pace_of(Some(250), DEFAULT_POLL), Duration::from_millis(250));
        assert_eq!(pace_of(Some(0), DEFAULT_POLL), MIN_POLL);
        assert_eq!(pace_of(Some(u64::MAX), DEFAULT_POLL), MAX_POLL);
        // A later answer without a pace keeps the one asked for before.
        let so_far = Duration::from_millis(300);
        assert_eq!(pace_of(None, so_far), so_far);
    }

    #[test]
    fn each_question_is_answered_once() {
        let requests: InputRequests = serde_json::from_value(serde_json::json!({
            "a": {"method": "roots/list"},
            "b": {"method": "roots/list"},
        }))
        .unwrap();
        let answered = BTreeSet::from(["a".to_owned()]);
        let left = not_yet(requests, &answered);
        assert_eq!(left.keys().collect::<Vec<_>>(), ["b"]);
    }
}
