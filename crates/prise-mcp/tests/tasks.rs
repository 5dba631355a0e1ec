//! Long-running tools as tasks. The `io.modelcontextprotocol/tasks` extension, against
//! a server built on the official Python SDK (mcp 2.3) that serves it: a call the
//! server makes a task of is followed to its result, its questions answered, its
//! status reported, and cancelled when the caller gives up. The tasks of the
//! 2025-11-25 revision, against server-everything over stdio and Streamable HTTP.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::{eventually, everything_http, fixture, mount_all, peers, quiet_options};
use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use prise_mcp::{CallError, MountEvent, MountOptions, Mounts};
use serde_json::{Value, json};

/// Answers every question with a colour, recording what it was asked.
#[derive(Debug, Default)]
struct Painter(std::sync::Mutex<Vec<String>>);

impl Elicitor for Painter {
    fn elicit(&self, _server: &str, message: &str, _schema: &Value) -> ElicitationFuture {
        self.0.lock().unwrap().push(message.to_owned());
        let mut answer = serde_json::Map::new();
        answer.insert("colour".into(), json!("blue"));
        Box::pin(std::future::ready(Elicitation::Accept(answer)))
    }
}

/// The fixture mounted as `t`, its tasks/* requests logged to `log`.
async fn mount(log: &Path, timeout: f64, elicitor: Arc<dyn Elicitor>) -> Mounts {
    let config = json!({"mcpServers": {"t": {
        "command": peers().join("venv/bin/python"),
        "args": [fixture("tasks_server.py")],
        "env": {"TASKS_LOG": log},
        "timeout": {"startup": 60, "call": timeout},
    }}});
    mount_all(
        &config,
        MountOptions {
            elicitor,
            ..quiet_options()
        },
    )
    .await
}

/// The tasks/* requests the server received, in order.
fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Waits for the server to receive `tasks/cancel` (for `task`, if given).
async fn assert_cancel_arrives(log: &Path, task: Option<&str>) {
    let cancelled = || {
        received(log).iter().any(|r| {
            r["method"] == "tasks/cancel" && task.is_none_or(|t| r["params"]["taskId"] == t)
        })
    };
    assert!(
        eventually(Duration::from_secs(10), cancelled).await,
        "{:?}",
        received(log)
    );
}

fn text(result: &prise_mcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_followed_to_its_result_with_its_status_reported() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tasks.log");
    let mounts = mount(&log, 30.0, Arc::new(Painter::default())).await;
    let mut events = mounts.subscribe();

    let result = mounts
        .call_tool(
            "t__slow_compute",
            Some(json!({"seconds": 2}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "computed for 2 s");

    let mut statuses = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let MountEvent::Task {
            server,
            tool,
            status,
            message,
            ..
        } = event
        {
            assert_eq!((server.as_str(), tool.as_str()), ("t", "slow_compute"));
            let word = prise_mcp::task_status_word(status);
            statuses.push(format!("{word}: {}", message.unwrap_or_default()));
        }
    }
    assert_eq!(
        statuses,
        [
            "working: ",
            "working: second 1 of 2",
            "working: second 2 of 2",
            "completed: "
        ],
    );
    let methods: Vec<_> = received(&log).iter().map(|r| r["method"].clone()).collect();
    assert!(methods.iter().all(|m| m == "tasks/get"), "{methods:?}");
    // At the pace the server asked for (100 ms) over two seconds, give or take.
    assert!(
        (10..=30).contains(&methods.len()),
        "{} polls",
        methods.len()
    );
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_question_is_answered_once_and_its_errors_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tasks.log");
    let painter = Arc::new(Painter::default());
    let mounts = mount(&log, 30.0, painter.clone()).await;

    let result = mounts.call_tool("t__ask_first", None).await.unwrap();
    assert_eq!(text(&result), "painted blue (accept)");
    assert_eq!(*painter.0.lock().unwrap(), ["Which colour?"]);
    let updates: Vec<_> = received(&log)
        .into_iter()
        .filter(|r| r["method"] == "tasks/update")
        .collect();
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(
        updates[0]["params"]["inputResponses"]["colour"],
        json!({"action": "accept", "content": {"colour": "blue"}})
    );

    // A tool that ran and failed is a result; a task that failed is an error.
    let failed = mounts.call_tool("t__failing_job", None).await.unwrap();
    assert_eq!(
        (text(&failed).as_str(), failed.is_error),
        ("the job broke", Some(true))
    );
    match mounts.call_tool("t__protocol_error_job", None).await {
        Err(CallError::Rejected { code, message, .. }) => {
            assert_eq!(
                (code, message.as_str()),
                (-32603, "the job's worker crashed")
            );
        }
        other => panic!("{other:?}"),
    }
    // A tool the server does not make a task of answers as always.
    let greeting = mounts
        .call_tool(
            "t__greet",
            Some(json!({"name": "Ada"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(text(&greeting), "Hello, Ada!");
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_given_up_on_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tasks.log");
    let mounts = mount(&log, 30.0, Arc::new(Painter::default())).await;
    let mut events = mounts.subscribe();

    // The caller gives up once the task is under way (a cancelled turn, Ctrl-C).
    let arguments = json!({"seconds": 60}).as_object().unwrap().clone();
    let call = mounts.call_tool("t__slow_compute", Some(arguments));
    let started = async {
        loop {
            if let Ok(MountEvent::Task {
                task,
                message: Some(_),
                ..
            }) = events.recv().await
            {
                return task;
            }
        }
    };
    let task = tokio::select! {
        result = call => panic!("the call ended: {result:?}"),
        task = started => task,
    };
    assert_cancel_arrives(&log, Some(&task)).await;
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_with_no_news_for_the_call_timeout_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tasks.log");
    // The task says something new each second; the call timeout is half a second.
    let mounts = mount(&log, 0.5, Arc::new(Painter::default())).await;
    let arguments = json!({"seconds": 60}).as_object().unwrap().clone();
    match mounts.call_tool("t__slow_compute", Some(arguments)).await {
        Err(CallError::Timeout { method, after, .. }) => {
            assert!(method.starts_with("tools/call (task "), "{method}");
            assert_eq!(after, Duration::from_millis(500));
        }
        other => panic!("{other:?}"),
    }
    assert_cancel_arrives(&log, None).await;
    mounts.close().await;
}

/// Answers server-everything's question about an ambiguous topic.
#[derive(Debug)]
struct Historian;

impl Elicitor for Historian {
    fn elicit(&self, _server: &str, _message: &str, schema: &Value) -> ElicitationFuture {
        let offered = schema["properties"]["interpretation"]["oneOf"].clone();
        assert!(offered.to_string().contains("historical"), "{offered}");
        let mut answer = serde_json::Map::new();
        answer.insert("interpretation".into(), json!("historical"));
        Box::pin(std::future::ready(Elicitation::Accept(answer)))
    }
}

/// server-everything's research tool, which must be called as a task (2025-11-25),
/// asked about an ambiguous topic: the report, and the statuses seen on the way.
async fn research(config: Value) -> (String, Vec<String>) {
    let mounts = mount_all(
        &config,
        MountOptions {
            elicitor: Arc::new(Historian),
            ..quiet_options()
        },
    )
    .await;
    let mut events = mounts.subscribe();
    let arguments = json!({"topic": "tea", "ambiguous": true});
    let result = mounts
        .call_tool(
            "everything__simulate-research-query",
            Some(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let mut statuses = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let MountEvent::Task {
            status, message, ..
        } = event
        {
            let word = prise_mcp::task_status_word(status);
            statuses.push(format!("{word}: {}", message.unwrap_or_default()));
        }
    }
    mounts.close().await;
    (text(&result), statuses)
}

fn check_research(report: &str, statuses: &[String]) {
    assert!(
        report.starts_with("# Research Report: tea (historical)"),
        "{report}"
    );
    assert!(report.contains("**Clarification**: historical"), "{report}");
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working: Gathering sources...")
    );
    assert!(
        statuses.iter().any(|s| s.starts_with("input_required: ")),
        "{statuses:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dated_servers_task_over_stdio() {
    let config = json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [peers().join("npm/node_modules/.bin/mcp-server-everything"), "stdio"],
    }}});
    let (report, statuses) = research(config).await;
    check_research(&report, &statuses);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dated_servers_task_over_streamable_http() {
    let (_server, port) = everything_http();
    let config =
        json!({"mcpServers": {"everything": {"url": format!("http://127.0.0.1:{port}/mcp")}}});
    let (report, statuses) = research(config).await;
    check_research(&report, &statuses);
}
