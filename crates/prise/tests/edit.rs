//! `prise add`, `prise remove` and `prise import`: files changed in place, everything
//! else in them kept, and what they add works with a real server.

mod common;

use common::{peers, prise};
use predicates::prelude::*;

#[test]
fn add_then_use_then_remove_keeping_the_rest_of_a_jsonc_file() {
    let home = tempfile::tempdir().unwrap();
    let vscode = home.path().join(".vscode");
    std::fs::create_dir(&vscode).unwrap();
    let file = vscode.join("mcp.json");
    let original = "{\n  // inputs are VS Code's\n  \"inputs\": [{\"id\": \"tok\", \"type\": \"promptString\"}],\n  \"servers\": {\n    /* kept */\n    \"other\": {\"command\": \"other\", \"disabled\": true},\n  }\n}\n";
    std::fs::write(&file, original).unwrap();
    let time = peers().join("venv/bin/mcp-server-time");
    prise(home.path())
        .args(["add", "time", "--"])
        .arg(&time)
        .args(["--local-timezone", "UTC"])
        .assert()
        .success()
        .stdout(format!(
            "added time to {}\n",
            home.path().join(".mcp.json").display()
        ));
    // The project file by default; with --config, the file named.
    std::fs::remove_file(home.path().join(".mcp.json")).unwrap();
    prise(home.path())
        .arg("-c")
        .arg(&file)
        .args(["add", "time", "--"])
        .arg(&time)
        .args(["--local-timezone", "UTC"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).unwrap();
    for kept in [
        "// inputs are VS Code's",
        "/* kept */",
        "\"inputs\": [{\"id\": \"tok\"",
    ] {
        assert!(text.contains(kept), "{text}");
    }
    // Found as the project's VS Code file, and the server works.
    prise(home.path())
        .args(["call", "time__get_current_time", r#"{"timezone": "UTC"}"#])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"timezone\": \"UTC\""));
    prise(home.path())
        .arg("-c")
        .arg(&file)
        .args(["add", "time", "--", "other"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a server named time is already in",
        ))
        .stderr(predicate::str::contains("--force replaces it"));
    prise(home.path())
        .arg("-c")
        .arg(&file)
        .args(["remove", "time"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    prise(home.path())
        .arg("-c")
        .arg(&file)
        .args(["remove", "time"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: no server named time in ",
        ));
}

#[test]
fn remote_servers_and_the_user_scope() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .args([
            "add",
            "gh",
            "https://api.example.com/mcp",
            "--header",
            "Authorization=Bearer ${GITHUB_TOKEN}",
            "--scope",
            "user",
        ])
        .assert()
        .success();
    let user = home.path().join(".config/prise/mcp.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    // Variables stay references, expanded when prise connects.
    assert_eq!(
        written,
        serde_json::json!({"mcpServers": {"gh": {"type": "http", "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}})
    );
    prise(home.path())
        .args(["add", "x", "https://h/mcp", "--env", "A=b"])
        .assert()
        .code(2)
        .stderr("error: --env is for a command; a URL takes --header\n");
    prise(home.path())
        .args(["add", "x", "uvx"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("write it after --"));
}

#[test]
fn import_copies_an_apps_servers_as_written() {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".config/Claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("claude_desktop_config.json"),
        r#"{"globalShortcut": "Ctrl+Space", "mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/Desktop"]},
            "mine": {"command": "mine"}
        }}"#,
    )
    .unwrap();
    std::fs::write(
        home.path().join(".mcp.json"),
        r#"{"mcpServers": {"mine": {"command": "kept"}}}"#,
    )
    .unwrap();
    prise(home.path())
        .args(["import", "claude-desktop"])
        .assert()
        .success()
        .stdout(predicate::str::contains("imported fs\n"))
        .stdout(predicate::str::contains(
            "skipped mine: a server of that name is already in",
        ))
        .stdout(predicate::str::contains("1 of 2 servers of"));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(written["mcpServers"]["mine"]["command"], "kept");
    assert_eq!(written["mcpServers"]["fs"]["args"][2], "${HOME}/Desktop");
    // VS Code's ${input:...} cannot work in prise: imported, and said at once.
    let code = home.path().join(".config/Code/User");
    std::fs::create_dir_all(&code).unwrap();
    std::fs::write(
        code.join("mcp.json"),
        r#"{"servers": {"gh": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "${input:token}"}}}}"#,
    )
    .unwrap();
    prise(home.path())
        .args(["import", "vscode"])
        .assert()
        .success()
        .stdout(predicate::str::contains("imported gh"))
        .stderr(predicate::str::contains("warning: gh: "))
        .stderr(predicate::str::contains("${input:token}"));
    prise(home.path())
        .args(["import", "cursor"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "found no configuration of Cursor; looked for",
        ));
}

#[test]
fn add_with_sandbox_writes_it_and_the_server_runs_confined() {
    let home = tempfile::tempdir().unwrap();
    let time = peers().join("venv/bin/mcp-server-time");
    prise(home.path())
        .args(["add", "time", "--sandbox", "--"])
        .arg(&time)
        .assert()
        .success();
    let text = std::fs::read_to_string(home.path().join(".mcp.json")).unwrap();
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(written["mcpServers"]["time"]["sandbox"], true, "{text}");
    prise(home.path())
        .args(["call", "time__get_current_time", r#"{"timezone": "UTC"}"#])
        .assert()
        .success();
    prise(home.path())
        .args(["add", "remote", "https://example.invalid/mcp", "--sandbox"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--sandbox is for a command"));
}
