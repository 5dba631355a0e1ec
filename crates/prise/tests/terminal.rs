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

/// `prise ARGS` as `common::prise` sets it up (empty home, nothing inherited), in a
/// terminal that is its controlling terminal (util-linux `setsid --ctty`), so that
/// Ctrl-C typed there is a SIGINT, as for a person.
fn prise_in_terminal(home: &Path, args: &[&str]) -> Pty {
    let mut command = Command::new("setsid");
    command
        .arg("--ctty")
        .arg(common::prise_bin())
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TERM", "xterm")
        .current_dir(home);
    Pty::spawn(command)
}

/// `prise chat` with the scripted model at `url`, in a terminal.
fn chat_in_terminal(home: &Path, url: &str) -> Pty {
    prise_in_terminal(
        home,
        &["chat", "-m", "openai-compatible:fake", "--base-url", url],
    )
}

#[tokio::test]
async fn chat_asks_before_each_tool_call_and_renders_the_answer() {
    let home = tempfile::tempdir().unwrap();
    common::mount_bad_server(home.path(), "bad", "normal", json!({}));
    // bad__echo is not read-only, so the default policy asks each time.
    let model = ScriptedModel::start(vec![
        Scripted::tool_call("c1", "bad__echo", json!({"message": "one"})),
        Scripted::tool_call("c2", "bad__echo", json!({"message": "two"})),
        Scripted::tool_call("c3", "bad__echo", json!({"message": "three"})),
        Scripted::answer("**Done**: `three` echoed."),
    ])
    .await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let (status, screen) = tokio::task::spawn_blocking(move || {
        let mut terminal = chat_in_terminal(&home_path, &url);
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
        requests[3].tool_results(),
        [
            "error: this call was not run: declined by the user",
            "echo: two",
            "echo: three"
        ]
    );
}

/// Ctrl-C at the approval prompt, and at a server's form, cancels the question and
/// the turn: the next line typed goes to the model, not to the question.
#[tokio::test]
async fn ctrl_c_at_a_question_cancels_it_and_the_turn() {
    let home = tempfile::tempdir().unwrap();
    let everything = common::peers().join("npm/node_modules/.bin/mcp-server-everything");
    std::fs::write(
        home.path().join(".mcp.json"),
        json!({
            "mcpServers": {
                "bad": {"command": "python3", "args": [common::bad_server(), "normal"]},
                "everything": {"command": "node", "args": [everything, "stdio"]}
            },
            "approval": {"tools": {"everything__*": "allow"}}
        })
        .to_string(),
    )
    .unwrap();
    let model = ScriptedModel::start(vec![
        Scripted::tool_call("c1", "bad__echo", json!({"message": "one"})),
        Scripted::tool_call("c2", "everything__trigger-elicitation-request", json!({})),
        Scripted::answer("Done."),
    ])
    .await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let screen = tokio::task::spawn_blocking(move || {
        let mut terminal = chat_in_terminal(&home_path, &url);
        terminal.expect("› ");
        terminal.send("first\r");
        terminal.expect("allow? [y]es / [n]o / [a]lways for bad__echo this session: ");
        terminal.send("\x03");
        terminal.expect("(cancelled)");
        terminal.expect("› ");
        terminal.send("second\r");
        terminal.expect("server everything asks:");
        terminal.expect("name (String): ");
        terminal.send("\x03");
        terminal.expect("(cancelled)");
        terminal.expect("› ");
        terminal.send("third\r");
        terminal.expect("Done.");
        terminal.expect("› ");
        terminal.send("/quit\r");
        let status = terminal.wait();
        assert!(status.success(), "{}", terminal.output());
        terminal.output()
    })
    .await
    .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "{screen}");
    let last_user = |i: usize| {
        let messages = requests[i].body["messages"].as_array().unwrap();
        messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].clone()
    };
    // The lines typed after each Ctrl-C reached the model as questions.
    assert_eq!(last_user(1), "second");
    assert_eq!(last_user(2), "third");
    assert_eq!(requests[1].tool_results(), ["error: cancelled by the user"]);
    assert_eq!(
        requests[2].tool_results(),
        [
            "error: cancelled by the user",
            "error: cancelled by the user"
        ]
    );
}

/// A long call in a terminal: the server's progress as a bar with its message, and
/// how long the call took; over a pipe, neither.
#[test]
fn progress_of_a_long_call_is_a_bar_in_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    common::mount_bad_server(home.path(), "bad", "normal", json!({}));
    let mut terminal =
        prise_in_terminal(home.path(), &["call", "bad__progress", r#"{"pause": 0.6}"#]);
    terminal.expect("bad__progress: step 1");
    terminal.expect("(bad__progress took ");
    terminal.expect("echo: \r\n");
    assert!(terminal.wait().success(), "{}", terminal.output());
    assert!(terminal.output().contains("50%"), "{}", terminal.output());
    let piped = common::prise(home.path())
        .args(["call", "bad__progress", r#"{"pause": 0.6}"#])
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert_eq!(String::from_utf8_lossy(&piped.stderr), "");
    assert_eq!(String::from_utf8_lossy(&piped.stdout), "echo: \n");
}

#[test]
fn a_server_question_is_a_form_in_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let everything = common::peers().join("npm/node_modules/.bin/mcp-server-everything");
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}", "stdio"]}}}}}}"#,
            everything.display()
        ),
    )
    .unwrap();
    let mut terminal = prise_in_terminal(
        home.path(),
        &["call", "everything__trigger-elicitation-request"],
    );
    terminal.expect("server everything asks: Please provide inputs for the following fields:");
    terminal.expect("Ctrl-D declines)\r\n");
    // The fields in the server's order: (prompt ending, what the person types).
    let steps = [
        ("name (String): ", ""), // required: asked again
        ("name is required\r\n  name (String): ", "Ada Lovelace"),
        ("check (Boolean): ", "yes"),
        ("[It was a dark and stormy night.]: ", ""),
        ("email (String with email format): ", ""),
        ("homepage (String with uri format): ", ""),
        ("birthdate (String with date format): ", ""),
        ("integer (Integer) [42]: ", "seven"),
        ("enter a whole number\r\n  integer (Integer) [42]: ", "7"),
        ("[3.14]: ", "2.5"),
        ("[Monica]: ", ""),
        ("(several, separated by commas) [Guitar]: ", "Piano, drums"),
        ("choose among: Guitar, Piano, Violin, Drums, Bass\r\n", ""),
        ("(several, separated by commas) [Guitar]: ", "Piano, Drums"),
        (
            "titledSingleSelectEnum (Titled Single Select Enum) {hero-1=Superman|hero-2=Green Lantern|hero-3=Wonder Woman} [hero-1]: ",
            "wonder woman",
        ),
        (
            "{fish-1=Tuna|fish-2=Salmon|fish-3=Trout} (several, separated by commas) [fish-1]: ",
            "salmon",
        ),
        (
            "{pet-1=Cats|pet-2=Dogs|pet-3=Birds|pet-4=Fish|pet-5=Reptiles} [pet-1]: ",
            "dogs",
        ),
    ];
    for (prompt, typed) in steps {
        terminal.expect(prompt);
        if !prompt.ends_with("\r\n") {
            terminal.send(&format!("{typed}\r"));
        }
    }
    let status = terminal.wait();
    let screen = terminal.output();
    assert!(status.success(), "{screen}");
    for shown in [
        "User provided the requested information!",
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Favorite Integer: 7",
        "- Favorite Number: 2.5",
        r#""titledSingleSelectEnum": "hero-3""#,
        r#""firstLine": "It was a dark and stormy night.""#,
        r#""legacyTitledEnum": "pet-2""#,
    ] {
        assert!(screen.contains(shown), "{shown:?} not in:\n{screen}");
    }
    let multi = screen
        .split(r#""untitledMultipleSelectEnum": ["#)
        .nth(1)
        .unwrap();
    let multi: String = multi[..multi.find(']').unwrap()]
        .split_whitespace()
        .collect();
    assert_eq!(multi, r#""Piano","Drums""#);
    let fish = screen
        .split(r#""titledMultipleSelectEnum": ["#)
        .nth(1)
        .unwrap();
    let fish: String = fish[..fish.find(']').unwrap()].split_whitespace().collect();
    assert_eq!(fish, r#""fish-2""#);
}

#[tokio::test]
async fn ctrl_c_in_chat_cancels_the_turn_and_its_call_but_not_the_chat() {
    let home = tempfile::tempdir().unwrap();
    common::mount_bad_server(
        home.path(),
        "bad",
        "normal",
        json!({"approval": {"default": "allow"}}),
    );
    // bad__slow never answers unless cancelled. The model says something first.
    let Scripted::Stream(mut slow) = Scripted::tool_call("c1", "bad__slow", json!({})) else {
        unreachable!()
    };
    slow.insert(
        0,
        json!({"choices": [{"index": 0, "delta": {"content": "Waiting."}}]}),
    );
    let model = ScriptedModel::start(vec![Scripted::Stream(slow), Scripted::answer("Back.")]).await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let (status, screen) = tokio::task::spawn_blocking(move || {
        let mut terminal = chat_in_terminal(&home_path, &url);
        terminal.expect("› ");
        terminal.send("wait for it\r");
        // The trace starts on a line of its own.
        terminal.expect("Waiting.\r\n→ bad__slow {}");
        terminal.send("\x03");
        terminal.expect("(cancelled)");
        terminal.expect("› ");
        terminal.send("and now?\r");
        terminal.expect("Back.");
        terminal.expect("› ");
        terminal.send("/quit\r");
        let status = terminal.wait();
        (status, terminal.output())
    })
    .await
    .unwrap();
    assert!(status.success(), "{screen}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    // The call that never finished is answered as cancelled, so the provider accepts
    // the history; the next question follows it.
    assert_eq!(requests[1].tool_results(), ["error: cancelled by the user"]);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last, json!({"role": "user", "content": "and now?"}));
    // The server was told (it writes what it receives to its stderr, which prise logs).
    let log = home.path().join(".local/state/prise/logs/bad.log");
    assert!(
        common::wait_until(std::time::Duration::from_secs(10), || {
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains("cancelled: "))
        }),
        "no notifications/cancelled in {}",
        log.display()
    );
}

#[tokio::test]
async fn tab_completes_commands_and_prompt_names() {
    let home = tempfile::tempdir().unwrap();
    // No configuration: the embedded docs server, whose prompt is docs__cite_answer.
    let model = ScriptedModel::start(vec![Scripted::answer("Cited.")]).await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let status = tokio::task::spawn_blocking(move || {
        let mut terminal = chat_in_terminal(&home_path, &url);
        terminal.expect("prise chat with openai-compatible:fake: 3 tools from 1 server.");
        terminal.expect("› ");
        terminal.send("/docs__ci\t");
        terminal.expect("/docs__cite_answer ");
        terminal.send("How are servers stopped?\r");
        terminal.expect("Cited.");
        terminal.expect("› ");
        terminal.send("/qu\t\r");
        terminal.wait()
    })
    .await
    .unwrap();
    assert!(status.success());
    let question = model.requests()[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        question.ends_with("Question: How are servers stopped?"),
        "{question}"
    );
}

#[tokio::test]
async fn run_in_a_terminal_shows_the_tool_trace_then_the_answer() {
    let home = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Scripted::tool_call("c1", "docs__grep_docs", json!({"keyword": "SIGKILL"})),
        Scripted::answer("SIGTERM, then SIGKILL."),
    ])
    .await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let (status, screen) = tokio::task::spawn_blocking(move || {
        let mut terminal = prise_in_terminal(
            &home_path,
            &[
                "run",
                "-m",
                "openai-compatible:fake",
                "--base-url",
                &url,
                "-p",
                "How are servers stopped?",
            ],
        );
        terminal.expect(r#"→ docs__grep_docs {"keyword":"SIGKILL"}"#);
        terminal.expect("✓ docs__grep_docs (");
        terminal.expect("SIGTERM, then SIGKILL.");
        let status = terminal.wait();
        (status, terminal.output())
    })
    .await
    .unwrap();
    assert!(status.success(), "{screen}");
}

/// What a server or a model writes can carry escape sequences (a prompt injection can
/// ask for them): the terminal shows them and never obeys, so an approval prompt
/// cannot be redrawn to look harmless.
#[tokio::test]
async fn escape_sequences_from_the_model_are_shown_not_obeyed() {
    let home = tempfile::tempdir().unwrap();
    common::mount_bad_server(home.path(), "bad", "normal", json!({}));
    let model = ScriptedModel::start(vec![
        // The arguments as the model streamed them, raw control characters included.
        Scripted::Stream(vec![
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "bad__echo", "arguments": "{\"message\": \"rm -rf ~\u{1b}[2K\rlooks harmless\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        Scripted::answer("Done.\u{1b}]0;pwned\u{7}"),
    ])
    .await;
    let url = model.url.clone();
    let home_path = home.path().to_owned();
    let screen = tokio::task::spawn_blocking(move || {
        let mut terminal = chat_in_terminal(&home_path, &url);
        terminal.expect("› ");
        terminal.send("go\r");
        terminal.expect(r#"wants to run echo {"message": "rm -rf ~␛[2K␍looks harmless"}"#);
        terminal.send("n\r");
        terminal.expect("Done.␛]0;pwned␇");
        terminal.expect("› ");
        terminal.send("/quit\r");
        terminal.wait();
        terminal.output()
    })
    .await
    .unwrap();
    assert!(!screen.contains("\u{1b}]0;pwned"), "{screen:?}");
}
