//! What the page asks for, as JSON: the state of the mounts, calls, reads, prompts,
//! answers to questions, the chat. Each answer is what prise-mcp or prise-agent gave,
//! in the protocol's own shapes (a `CallToolResult` is sent as the server sent it).

use std::sync::Arc;

use http::StatusCode;
use prise_agent::Approvals;
use prise_mcp::{MountEvent, Mounts};
use serde_json::{Value, json};

use crate::chat::Chat;
use crate::guard::Guard;
use crate::hub::Hub;
use crate::questions::{Questions, Unanswerable};

/// Everything a request may need.
pub(crate) struct State {
    pub mounts: Arc<Mounts>,
    pub chat: Option<Chat>,
    pub approvals: Arc<Approvals>,
    pub hub: Hub,
    pub questions: Arc<Questions>,
    pub guard: Guard,
}

/// Sends the mounts' `events` to the page: servers' news, and the trace, each with
/// the time since `started` in milliseconds.
pub(crate) fn forward_mount_events(
    mut events: tokio::sync::broadcast::Receiver<MountEvent>,
    hub: Hub,
    started: std::time::Instant,
) {
    tokio::spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(skipped)) => {
                    hub.send(json!({"kind": "skipped", "count": skipped}));
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let at = started.elapsed().as_secs_f64() * 1e3;
            if let MountEvent::Message {
                server,
                outgoing,
                message,
            } = &event
            {
                hub.send_json(trace_json(server, *outgoing, at, message));
            } else if let Some(mut event) = event_json(event) {
                event["at"] = at.into();
                hub.send(event);
            }
        }
    });
}

#[allow(deprecated)] // log messages: deprecated at 2026-07-28, still sent by dated servers
fn event_json(event: MountEvent) -> Option<Value> {
    let server = |server: &str, what: &str, more: Value| {
        let mut event = json!({"kind": "server", "server": server, "event": what});
        if let Value::Object(more) = more {
            event.as_object_mut()?.extend(more);
        }
        Some(event)
    };
    match event {
        // Sent as it is, by `trace_json`.
        MountEvent::Message { .. } => None,
        MountEvent::Ready { server: s, elapsed } => server(
            &s,
            "ready",
            json!({"startupMs": elapsed.as_secs_f64() * 1e3}),
        ),
        MountEvent::Failed { server: s, error } => server(&s, "failed", json!({"error": error})),
        MountEvent::Restarting {
            server: s,
            attempt,
            delay,
        } => server(
            &s,
            "restarting",
            json!({"attempt": attempt, "delayMs": delay.as_millis() as u64}),
        ),
        MountEvent::ListChanged { server: s, what } => {
            server(&s, "list-changed", json!({"what": what.as_str()}))
        }
        MountEvent::ResourceUpdated { server: s, uri } => {
            server(&s, "resource-updated", json!({"uri": uri}))
        }
        MountEvent::Progress {
            server: s,
            token,
            progress,
            total,
            message,
        } => server(
            &s,
            "progress",
            json!({"token": token, "progress": progress, "total": total, "message": message}),
        ),
        MountEvent::Log { server: s, message } => server(
            &s,
            "log",
            json!({"level": message.level, "logger": message.logger, "data": message.data}),
        ),
        MountEvent::Task {
            server: s,
            tool,
            task,
            status,
            message,
        } => server(
            &s,
            "task",
            json!({"tool": tool, "task": task, "status": status, "message": message}),
        ),
    }
}

/// The largest message the trace keeps whole, in bytes of JSON; the page keeps
/// thousands of events for the tabs that open later.
const TRACED_WHOLE: usize = 64 * 1024;

/// A trace event, the message in it as the mount serialized it (not parsed and
/// written again); past [`TRACED_WHOLE`], its method and id with its size (a 10 MB
/// resource is not copied into every tab).
fn trace_json(server: &str, outgoing: bool, at: f64, message: &str) -> String {
    #[derive(serde::Serialize)]
    struct Trace<'a> {
        kind: &'static str,
        server: &'a str,
        outgoing: bool,
        at: f64,
        message: &'a serde_json::value::RawValue,
    }
    let stub;
    let message: &str = if message.len() <= TRACED_WHOLE {
        message
    } else {
        stub = stub_of(message).to_string();
        &stub
    };
    let Ok(raw) = serde_json::from_str::<&serde_json::value::RawValue>(message) else {
        return json!({"kind": "trace", "server": server, "outgoing": outgoing, "at": at,
                      "message": {"_prise": "not JSON"}})
        .to_string();
    };
    let trace = Trace {
        kind: "trace",
        server,
        outgoing,
        at,
        message: raw,
    };
    serde_json::to_string(&trace).unwrap_or_default()
}

/// A large message's method and id, with its size.
fn stub_of(message: &str) -> Value {
    // Read for its head only: the rest is skipped, not built.
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<String>,
        result: Option<serde::de::IgnoredAny>,
    }
    let mut stub = json!({"jsonrpc": "2.0", "_prise": format!("{} bytes, too large for the trace", message.len())});
    if let Ok(head) = serde_json::from_str::<Head>(message) {
        if let Some(id) = head.id {
            stub["id"] = id;
        }
        if let Some(method) = head.method {
            stub["method"] = method.into();
        }
        if head.result.is_some() {
            stub["result"] = json!({});
        }
    }
    stub
}

/// The servers, what they offer, and whether there is a chat.
pub(crate) fn state(state: &State) -> Value {
    let mounts = &state.mounts;
    let servers = mounts.statuses();
    let withheld = mounts.withheld();
    let tools: Vec<Value> = mounts
        .tools()
        .into_iter()
        .map(|t| {
            let tool = serde_json::to_value(&t.tool).unwrap_or_default();
            json!({"name": t.name, "server": t.server, "app": crate::apps::resource_of(&tool), "tool": tool})
        })
        .collect();
    let prompts: Vec<Value> = mounts
        .prompts()
        .into_iter()
        .map(|p| json!({"name": p.name, "server": p.server, "prompt": p.prompt}))
        .collect();
    let resources: Vec<Value> = mounts
        .resources()
        .into_iter()
        .map(|(server, r)| json!({"server": server, "resource": r}))
        .collect();
    let templates: Vec<Value> = mounts
        .resource_templates()
        .into_iter()
        .map(|(server, t)| json!({"server": server, "template": t}))
        .collect();
    let withheld: Vec<Value> = withheld
        .into_iter()
        .map(|w| json!({"name": w.name, "server": w.server, "change": w.change, "why": w.change.describe()}))
        .collect();
    json!({
        "servers": servers,
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
        "templates": templates,
        "withheld": withheld,
        "chat": state.chat.as_ref().map(|c| json!({"model": c.model(), "session": c.session()})),
    })
}

/// The tools ranked for `query`, as `prise tools --search` ranks them: their names
/// and scores, the best first.
pub(crate) fn search(state: &State, query: &str) -> Value {
    let tools = state.mounts.tools();
    let index = prise_search::ToolIndex::new(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str(), &t.tool)),
    );
    let found: Vec<Value> = index
        .search(query, tools.len())
        .into_iter()
        .map(|f| json!({"name": f.name, "score": f.score}))
        .collect();
    json!(found)
}

/// The saved chat sessions.
pub(crate) fn sessions(state: &State) -> Value {
    match &state.chat {
        Some(chat) => json!(chat.sessions()),
        None => json!([]),
    }
}

/// What prise-mcp or prise-agent gave, for the page: the value itself, or 422 with
/// `{"error": "..."}` (the page shows the message).
fn answer<T: serde::Serialize, E: std::fmt::Display>(result: Result<T, E>) -> (StatusCode, Value) {
    match result {
        Ok(value) => (StatusCode::OK, json!(value)),
        Err(error) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": error.to_string()}),
        ),
    }
}

/// A POST to `path` with `body`; `None` for a path that is not the API's.
pub(crate) async fn post(state: &State, path: &str, body: &Value) -> Option<(StatusCode, Value)> {
    let mounts = &state.mounts;
    let arguments = || body["arguments"].as_object().cloned();
    let string = |key: &str| body[key].as_str().unwrap_or_default().to_owned();
    Some(match path {
        "/api/call" => answer(mounts.call_tool(&string("name"), arguments()).await),
        "/api/read" => {
            // An app reads from the server of the tool it is shown with.
            let owner = body["tool"].as_str().and_then(|t| mounts.server_of_tool(t));
            let server = body["server"].as_str().or(owner.as_deref());
            answer(mounts.read_resource(&string("uri"), server).await)
        }
        "/api/prompt" => answer(mounts.get_prompt(&string("name"), arguments()).await),
        "/api/app-call" => answer(
            crate::apps::call(
                mounts,
                &state.approvals,
                &string("tool"),
                &string("name"),
                arguments(),
            )
            .await,
        ),
        "/api/restart" => answer(mounts.restart(&string("server")).await.map(|()| json!({}))),
        "/api/answer" => {
            let id = body["id"].as_u64().unwrap_or_default();
            match state.questions.answer(id, body) {
                Ok(()) => (StatusCode::OK, json!({})),
                Err(Unanswerable::NoSuchQuestion) => (
                    StatusCode::CONFLICT,
                    json!({"error": "that question is no longer open (answered elsewhere?)"}),
                ),
                Err(Unanswerable::Malformed(why)) => {
                    (StatusCode::BAD_REQUEST, json!({"error": why}))
                }
                Err(Unanswerable::Invalid(wrong)) => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!({"error": wrong.to_string(), "field": wrong.field}),
                ),
            }
        }
        "/api/chat" | "/api/chat/cancel" | "/api/sessions/resume" => {
            let Some(chat) = &state.chat else {
                return Some((
                    StatusCode::CONFLICT,
                    json!({"error": "no model is configured; start prise ui with -m PROVIDER:MODEL or a \"model\" section"}),
                ));
            };
            match path {
                "/api/chat" => match chat.ask(string("prompt")) {
                    Ok(()) => (StatusCode::ACCEPTED, json!({})),
                    Err(crate::chat::Busy::Answering) => (
                        StatusCode::CONFLICT,
                        json!({"error": "a question is being answered; wait or cancel it"}),
                    ),
                },
                "/api/chat/cancel" => {
                    chat.cancel();
                    (StatusCode::OK, json!({}))
                }
                _ => answer(chat.resume(body["id"].as_str()).await),
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_message_is_traced_as_its_method_id_and_size() {
        let small = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#;
        let event: Value = serde_json::from_str(&trace_json("s", true, 1.5, small)).unwrap();
        assert_eq!(
            event["message"],
            serde_json::from_str::<Value>(small).unwrap()
        );
        assert_eq!(
            (event["kind"].as_str(), event["at"].as_f64()),
            (Some("trace"), Some(1.5))
        );
        let large =
            json!({"jsonrpc": "2.0", "id": 4, "result": {"text": "x".repeat(TRACED_WHOLE)}})
                .to_string();
        let event = trace_json("s", false, 2.0, &large);
        assert!(event.len() < 300, "{event}");
        let event: Value = serde_json::from_str(&event).unwrap();
        assert_eq!(event["message"]["id"], 4);
        assert_eq!(event["message"]["result"], json!({}));
        assert!(
            event["message"]["_prise"]
                .as_str()
                .unwrap()
                .contains("too large for the trace")
        );
    }
}
