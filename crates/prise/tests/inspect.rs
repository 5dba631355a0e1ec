//! The inspector commands on the embedded docs server (no configuration, no network)
//! and on real peers, with their exit codes.

mod common;

use common::{peers, prise};

use predicates::prelude::*;
use serde_json::json;

#[test]
fn with_no_configuration_the_embedded_docs_are_mounted() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .arg("tools")
        .assert()
        .success()
        .stdout(predicate::str::contains("docs__grep_docs"))
        .stdout(predicate::str::contains("docs__read_doc"))
        .stdout(predicate::str::contains("docs__list_docs"));
    prise(home.path())
        .args(["call", "docs__grep_docs", r#"{"keyword":"config"}"#])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"^[\w/.-]+\.md:\d+: ").unwrap())
        .stdout(predicate::str::contains("\nREADME.md:"));
    prise(home.path())
        .args([
            "call",
            "docs__read_doc",
            r#"{"path":"docs-server.md","start":1,"end":1}"#,
        ])
        .assert()
        .success()
        .stdout("1: # The documentation server\n");
    prise(home.path())
        .args(["read", "docs://mounting.md"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("# Mounting servers\n"));
    prise(home.path())
        .args([
            "prompt",
            "docs__cite_answer",
            "question=How do I mount a server?",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Question: How do I mount a server?",
        ));
}

#[test]
fn tool_errors_exit_1_and_wrong_names_exit_2() {
    let home = tempfile::tempdir().unwrap();
    // isError: the result is printed, and the job failed.
    prise(home.path())
        .args(["call", "docs__read_doc", r#"{"path":"../etc/passwd"}"#])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "error: path must not contain '..'",
        ))
        .stderr("error: docs__read_doc reported an error\n");
    prise(home.path())
        .args(["call", "docs__grep_doc", "{}"])
        .assert()
        .code(2)
        .stderr("error: no tool named docs__grep_doc; did you mean docs__grep_docs?\nhint: `prise tools` lists the tools\n");
    prise(home.path())
        .args(["call", "docs__grep_docs", "[1]"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: tool arguments must be a JSON object",
        ));
    // Arguments from stdin.
    prise(home.path())
        .args(["call", "docs__grep_docs", "-"])
        .write_stdin(r#"{"keyword":"zzz-no-such-word"}"#)
        .assert()
        .success()
        .stdout("no match for zzz-no-such-word\n");
}

#[test]
fn json_output_parses() {
    let home = tempfile::tempdir().unwrap();
    let out = prise(home.path())
        .args(["tools", "--json"])
        .output()
        .unwrap();
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 3);
    assert_eq!(
        tools[0]["tool"]["inputSchema"]["properties"]["keyword"]["type"],
        "string"
    );
    let out = prise(home.path())
        .args(["servers", "--json"])
        .output()
        .unwrap();
    let servers: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(servers[0]["name"], "docs");
    assert_eq!(servers[0]["state"], "ready");
    assert_eq!(servers[0]["tools"], 3);
}

#[test]
fn servers_shows_healthy_and_failed_peers() {
    let home = tempfile::tempdir().unwrap();
    let npm = peers().join("npm/node_modules/.bin");
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{
  "everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}},
  "broken": {{"command": "sh", "args": ["-c", "echo 'no such module' >&2; exit 1"]}},
  "off": {{"command": "x", "disabled": true}}
}}}}"#,
            npm.display()
        ),
    )
    .unwrap();
    prise(home.path())
        .arg("servers")
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"everything\s+ready\s+stdio\s+2025-11-25\s+mcp-servers/everything \S+\s+14\s+7\s+4\s+\d+ ms").unwrap())
        .stdout(predicate::str::is_match(r"broken\s+failed").unwrap())
        .stdout(predicate::str::is_match(r"off\s+disabled").unwrap())
        .stdout(predicate::str::contains("server broken: closed the connection during the handshake"))
        .stdout(predicate::str::contains("  | no such module"));
    prise(home.path())
        .args(["call", "everything__echo", r#"{"message":"hi"}"#])
        .assert()
        .success()
        .stdout("Echo: hi\n")
        .stderr(predicate::str::contains("warning: server broken"));
}

/// server-filesystem configured on `notes`, prise run from another folder: the server
/// keeps its folder, every time; roots are offered only when asked for, and then they
/// are in force for the very first call.
#[test]
fn a_server_keeps_its_configured_folder_unless_roots_are_asked_for() {
    let home = tempfile::tempdir().unwrap();
    let base = home.path().canonicalize().unwrap();
    for dir in ["notes", "code", "other"] {
        std::fs::create_dir(base.join(dir)).unwrap();
        std::fs::write(base.join(dir).join("x.txt"), format!("in {dir}\n")).unwrap();
    }
    let fs = peers().join("npm/node_modules/.bin/mcp-server-filesystem");
    let config = |roots: &str| {
        format!(
            r#"{{"mcpServers": {{"fs": {{"command": "node", "args": ["{}", "{}"]{roots}}}}}}}"#,
            fs.display(),
            base.join("notes").display()
        )
    };
    std::fs::write(base.join("fs.json"), config("")).unwrap();
    let read = |extra: &[&str], dir: &str| {
        let path = base.join(dir).join("x.txt");
        let mut cmd = prise(home.path());
        cmd.current_dir(base.join("code"))
            .arg("-c")
            .arg(base.join("fs.json"))
            .args(extra)
            .args(["call", "fs__read_text_file"])
            .arg(json!({ "path": path }).to_string());
        cmd.assert()
    };
    // The call comes right after mounting: before the fix it raced the server's
    // switch to the working directory and was denied or allowed by luck.
    for _ in 0..5 {
        read(&[], "notes").success().stdout("in notes\n");
        read(&[], "code")
            .code(1)
            .stdout(predicate::str::contains("outside allowed directories"));
    }
    let other = base.join("other");
    for _ in 0..5 {
        read(&["--root", other.to_str().unwrap()], "other")
            .success()
            .stdout("in other\n");
    }
    // The same from the configuration: a server's own "roots".
    std::fs::write(
        base.join("fs.json"),
        config(&format!(r#", "roots": ["{}"]"#, other.display())),
    )
    .unwrap();
    read(&[], "other").success().stdout("in other\n");
    read(&[], "notes").code(1);

    // server-everything lists get-roots-list only to clients that offer roots.
    let npm = peers().join("npm/node_modules/.bin");
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}}}}}}"#, npm.display()),
    )
    .unwrap();
    prise(home.path())
        .args(["call", "everything__get-roots-list"])
        .assert()
        .code(2);
    prise(home.path())
        .arg("--root")
        .arg(&other)
        .args(["call", "everything__get-roots-list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "URI: file://{}\n",
            other.display()
        )))
        .stdout(predicate::str::contains("(1 total)"));
    prise(home.path())
        .args(["--root", "/no/such/dir", "tools"])
        .assert()
        .code(2);
}

#[test]
fn prise_mounts_its_own_docs_server_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# A\nthe answer is 42\n").unwrap();
    let bin = common::prise_bin();
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"mine": {{"command": "{}", "args": ["serve", "docs", "{}"]}}}}}}"#,
            bin.display(),
            docs.display()
        ),
    )
    .unwrap();
    prise(home.path())
        .args(["call", "mine__grep_docs", r#"{"keyword":"ANSWER"}"#])
        .assert()
        .success()
        .stdout("a.md:2: the answer is 42\n");
}
