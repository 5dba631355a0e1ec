//! Tools the server runs as tasks (the `io.modelcontextprotocol/tasks` extension),
//! from the command line: `prise call` waits for the result, `prise run` tells of the
//! task's status in `stream-json`, and Ctrl-C cancels the task on the server. The
//! server is built on the official Python SDK (prise-mcp's `tasks_server.py`).

mod common;
#[path = "../../prise-llm/tests/scripted_model/mod.rs"]
mod scripted_model;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{peers, wait_until};
use scripted_model::{Scripted, ScriptedModel};
use serde_json::{Value, json};

/// Writes `home/.mcp.json` mounting the tasks server as `t`; returns its request log.
fn mount_tasks_server(home: &Path) -> PathBuf {
    let log = home.join("tasks.log");
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise-mcp/tests/fixtures/tasks_server.py");
    let config = json!({"mcpServers": {"t": {
        "command": peers().join("venv/bin/python"),
        "args": [server],
        "env": {"TASKS_LOG": log},
    }}});
    std::fs::write(home.join(".mcp.json"), config.to_string()).unwrap();
    log
}

/// The tasks/* methods the server received, in order.
fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn prise(home: &Path, args: &[&str]) -> Output {
    let home = home.to_owned();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || common::prise(&home).args(args).output().unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn call_waits_for_a_tasks_result() {
    let home = tempfile::tempdir().unwrap();
    mount_tasks_server(home.path());
    let out = prise(
        home.path(),
        &["call", "t__slow_compute", r#"{"seconds": 1}"#],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "computed for 1 s\n");

    let out = prise(home.path(), &["call", "t__protocol_error_job"]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server t rejected tools/call: the job's worker crashed (code -32603)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn stream_json_tells_of_a_tasks_status() {
    let home = tempfile::tempdir().unwrap();
    mount_tasks_server(home.path());
    let model = ScriptedModel::start(vec![
        Scripted::tool_call("c1", "t__slow_compute", json!({"seconds": 2})),
        Scripted::answer("Done."),
    ])
    .await;
    let out = prise(
        home.path(),
        &[
            "run",
            "-m",
            "openai-compatible:fake",
            "--base-url",
            &model.url,
            "--yes",
            "--output",
            "stream-json",
            "-p",
            "compute",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let news: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] == "tool-progress")
        .map(|l| {
            assert_eq!(
                (l["id"].as_str(), l["tool"].as_str()),
                (Some("c1"), Some("t__slow_compute"))
            );
            format!(
                "{} {}",
                l["task"]["status"].as_str().unwrap(),
                l["task"]["message"]
            )
        })
        .collect();
    assert_eq!(
        news,
        [
            "working null",
            "working \"second 1 of 2\"",
            "working \"second 2 of 2\"",
            "completed null"
        ]
    );
    // The news comes between the call's start and its end.
    let at = |kind: &str| lines.iter().position(|l| l["type"] == kind).unwrap();
    assert!(at("tool-start") < at("tool-progress") && at("tool-progress") < at("tool-end"));
    assert_eq!(model.requests()[1].tool_results(), ["computed for 2 s"]);
}

#[test]
fn ctrl_c_cancels_the_task_on_the_server() {
    let home = tempfile::tempdir().unwrap();
    let log = mount_tasks_server(home.path());
    let prise = Command::new(common::prise_bin())
        .args(["call", "t__slow_compute", r#"{"seconds": 60}"#])
        .current_dir(home.path())
        .env("HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The task is under way once prise asks about it.
    let polled = || received(&log).iter().any(|r| r["method"] == "tasks/get");
    assert!(
        wait_until(Duration::from_secs(30), polled),
        "no task was made"
    );
    let status = Command::new("kill")
        .args(["-INT", &prise.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = prise.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let task = received(&log)[0]["params"]["taskId"].clone();
    let cancels: Vec<_> = received(&log)
        .into_iter()
        .filter(|r| r["method"] == "tasks/cancel")
        .collect();
    assert_eq!(cancels.len(), 1, "{:?}", received(&log));
    assert_eq!(cancels[0]["params"]["taskId"], task);
}
