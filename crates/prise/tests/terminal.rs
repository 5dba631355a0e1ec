//! prise in a terminal (a pseudo-terminal), where a person answers: the approval
//! prompt, line editing, and answers rendered as Markdown. The model is the scripted
//! double of prise-llm's tests; the server is a real process.

mod common;
#[path = "../../prise-llm/tests/scripted_model/mod.rs"]
mod scripted_model;

use std::path::Path;
use std::process::Command;

use common::pty::Pty;
use scripted_model::{Scripted, ScriptedModel};
use serde_json::json;

fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> Scripted {
    Scripted::Stream(vec![
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])
}

fn answer(text: &str) -> Scripted {
    Scripted::Stream(vec![
        json!({"choices": [{"index": 0, "delta": {"content": text}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ])
}

/// `prise ARGS` as `common::prise` sets it up (empty home, nothing inherited), in a
/// terminal.
fn prise_in_terminal(home: &Path, args: &[&str]) -> Pty {
    let mut command = Command::new(common::prise_bin());
    command
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TERM", "xterm")
        .current_dir(home);
    Pty::spawn(command)
}

/// The text of every tool message in a recorded request.
fn tool_results(request: &scripted_model::Recorded) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn chat_asks_before_each_tool_call_and_renders_the_answer() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"bad": {{"command": "python3", "args": ["{}", "normal"]}}}}}}"#,
            common::bad_server().display()
        ),
    )
    .unwrap();
    // bad__echo is not read-only, so the default policy asks each time.
    let model = ScriptedModel::start(vec![
        tool_call("c1", "bad__echo", json!({"message": "one"})),
        tool_call("c2", "bad__echo", json!({"message": "two"})),
        tool_call("c3", "bad__echo", json!({"message": "three"})),
        answer("**Done**: `three` echoed."),
    ])
    .await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let (status, screen) = tokio::task::spawn_blocking(move || {
        let mut terminal = prise_in_terminal(
            &home_path,
            &["chat", "-m", "openai-compatible:fake", "--base-url", &url],
        );
        terminal.expect("› ");
        terminal.send("echo three times\r");
        terminal.expect(r#"server bad wants to run echo {"message":"one"}"#);
        terminal.expect("allow? [y]es / [n]o / [a]lways for bad__echo this session: ");
        terminal.send("n\r");
        terminal.expect(r#"server bad wants to run echo {"message":"two"}"#);
        terminal.send("a\r");
        // "always": the third call runs without a question.
        let rest = terminal.expect("› ");
        assert!(!rest.contains("wants to run"), "{rest}");
        terminal.send("/quit\r");
        let status = terminal.wait();
        (status, terminal.output())
    })
    .await
    .unwrap();
    assert!(status.success(), "{screen}");
    // Bold and inline code, rendered as they stream.
    assert!(
        screen.contains("\x1b[1mDone\x1b[22m: \x1b[36mthree\x1b[39m echoed."),
        "{screen:?}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        tool_results(&requests[3]),
        [
            "error: this call was not run: declined by the user",
            "echo: two",
            "echo: three"
        ]
    );
}
