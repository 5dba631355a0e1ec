//! The command line as a user meets it: help, version, `prise config`, exit codes.

mod common;

use common::prise;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use predicates::prelude::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn help_lists_every_subcommand() {
    let home = tempfile::tempdir().unwrap();
    let assert = prise(home.path()).arg("--help").assert().success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for command in [
        "config",
        "servers",
        "tools",
        "call",
        "resources",
        "read",
        "prompts",
        "prompt",
        "run",
        "chat",
        "serve",
        "completions",
    ] {
        assert!(
            out.contains(&format!("\n  {command} ")),
            "missing {command} in:\n{out}"
        );
    }
    prise(home.path())
        .args(["call", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("server__tool"));
}

#[test]
fn version() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("prise {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn usage_errors_exit_2() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .arg("--no-such-flag")
        .assert()
        .code(2)
        .stdout("");
    prise(home.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}

#[test]
fn config_prints_the_example_file() {
    let home = tempfile::tempdir().unwrap();
    let example = repo().join("examples/mcp.json");
    prise(home.path())
        .arg("config")
        .arg("--config")
        .arg(&example)
        .assert()
        .success()
        .stdout(predicate::str::contains("mcpServers format"))
        .stdout(predicate::str::contains(
            "everything  stdio  npx -y @modelcontextprotocol/server-everything@2026.8.31",
        ))
        .stdout(predicate::str::contains(format!(
            "filesystem  stdio  npx -y @modelcontextprotocol/server-filesystem@2026.8.31 {}",
            home.path().display()
        )))
        .stdout(predicate::str::contains(
            "remote      http   http://127.0.0.1:3001/mcp  (disabled)",
        ))
        .stdout(predicate::str::contains("header   Authorization: ********"))
        .stdout(predicate::str::contains("change-me").not());

    let vscode = repo().join("examples/vscode-mcp.json");
    prise(home.path())
        .args(["config", "--json", "--config"])
        .arg(&vscode)
        .assert()
        .success()
        .stdout(predicate::str::contains("\"format\": \"vsCode\""));
}

#[test]
fn secrets_never_reach_the_output() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${T}", "MODE": "ro"}},
                          "api": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}},
                          "cli": {"command": "tool", "args": ["--token", "${T}", "--api-key=${T}"]},
                          "remote": {"command": "npx", "args": ["mcp-remote", "https://x/mcp", "--header", "Authorization: Bearer ${T}"]}}}"#,
    )
    .unwrap();
    for json in [false, true] {
        let mut cmd = prise(home.path());
        cmd.env("T", "sk-very-secret")
            .arg("config")
            .arg("--config")
            .arg(&path);
        if json {
            cmd.arg("--json");
        }
        cmd.assert()
            .success()
            .stdout(predicate::str::contains("sk-very-secret").not())
            .stdout(predicate::str::contains("********"))
            .stdout(predicate::str::contains("ro"));
    }
}

#[test]
fn broken_config_exits_2_with_position_and_hint() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".mcp.json");
    std::fs::write(
        &path,
        "{\"mcpServers\": {\n  \"s\": {\"type\": \"websocket\", \"url\": \"ws://x\"}}}",
    )
    .unwrap();
    // Discovered from the working directory, no --config needed.
    prise(home.path())
        .arg("config")
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {}:2:17: server \"s\": unknown type \"websocket\"\nhint: use \"stdio\" (a command prise starts), \"http\" (Streamable HTTP) or \"sse\" (legacy HTTP+SSE)\n",
            path.display()
        ));
}

#[test]
fn missing_config_file_exits_2() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .args(["config", "--config", "nope.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: configuration file nope.json does not exist\nhint: ",
        ));
}

#[test]
fn discovery_reports_where_it_looked() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .arg("config")
        .assert()
        .success()
        .stdout(predicate::str::contains("no configuration file found"))
        .stdout(predicate::str::contains(".config/prise/mcp.json"));
    let user = home.path().join(".config/prise");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("mcp.json"),
        r#"{"mcpServers": {"mine": {"command": "x"}}}"#,
    )
    .unwrap();
    prise(home.path())
        .arg("config")
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "config: {}",
            user.join("mcp.json").display()
        )))
        .stdout(predicate::str::contains("mine"));
}

#[test]
fn warnings_go_to_stderr() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".mcp.json"),
        r#"{"mcpServers": {"s": {"commandd": "x", "command": "x"}}}"#,
    )
    .unwrap();
    prise(home.path()).arg("config").assert().success().stderr(
        predicate::str::contains("warning: ").and(predicate::str::contains(
            "unknown key \"commandd\" ignored; did you mean \"command\"?",
        )),
    );
}

/// A project's Claude Code, VS Code and Cursor files, and the user's own, are read
/// together, the project's first; `prise config` says which files and where each
/// server comes from.
#[test]
fn project_files_of_every_editor_are_merged_with_the_users() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    for dir in [".vscode", ".cursor"] {
        std::fs::create_dir_all(project.join(dir)).unwrap();
    }
    std::fs::write(
        project.join(".vscode/mcp.json"),
        "{\n  // VS Code's form, with comments\n  \"servers\": {\"vs\": {\"command\": \"${workspaceFolder}/bin/vs\"},},\n}",
    )
    .unwrap();
    std::fs::write(
        project.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"cur": {"command": "cur"}, "vs": {"command": "other"}}}"#,
    )
    .unwrap();
    let user = home.path().join(".config/prise");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("mcp.json"),
        r#"{"mcpServers": {"mine": {"command": "x"}}}"#,
    )
    .unwrap();
    let project = project.canonicalize().unwrap();
    prise(home.path())
        .current_dir(&project)
        .arg("config")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "config: {}/.vscode/mcp.json (VS Code servers format)\n   and: {}/.cursor/mcp.json\n   and: {}\n",
            project.display(),
            project.display(),
            user.join("mcp.json").display()
        )))
        .stdout(predicate::str::contains(format!("vs    stdio  {}/bin/vs", project.display())))
        .stdout(predicate::str::contains("cur   stdio  cur"))
        .stdout(predicate::str::contains("mine  stdio  x"))
        .stdout(predicate::str::contains(format!(
            "note: server vs of {}/.cursor/mcp.json is hidden by the one of {}/.vscode/mcp.json",
            project.display(),
            project.display()
        )));
}

#[test]
fn completions_for_each_shell() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        prise(home.path())
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("prise"));
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let home = tempfile::tempdir().unwrap();
    // Enough output to overflow a pipe buffer, so the write after the reader is gone fails.
    let servers: Vec<String> = (0..3000)
        .map(|i| format!("\"server{i}\": {{\"command\": \"x\"}}"))
        .collect();
    let path = home.path().join("big.json");
    std::fs::write(
        &path,
        format!("{{\"mcpServers\": {{{}}}}}", servers.join(",")),
    )
    .unwrap();
    let mut child = Command::cargo_bin("prise")
        .unwrap()
        .args(["config", "--json", "--config"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then dropped: pipe closed
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
