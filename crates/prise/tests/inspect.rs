//! The inspector commands on the embedded docs server (no configuration, no network)
//! and on real peers, with their exit codes.

mod common;

use common::{peers, prise};

use predicates::prelude::*;

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
        .stdout(predicate::str::is_match(r"everything\s+ready\s+stdio\s+2025-11-25\s+mcp-servers/everything \S+\s+15\s+7\s+4\s+\d+ ms").unwrap())
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

#[test]
fn roots_default_to_the_working_directory_and_can_be_given() {
    let home = tempfile::tempdir().unwrap();
    let npm = peers().join("npm/node_modules/.bin");
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}}}}}}"#, npm.display()),
    )
    .unwrap();
    let cwd = home.path().canonicalize().unwrap();
    prise(home.path())
        .args(["call", "everything__get-roots-list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "URI: file://{}\n",
            cwd.display()
        )));
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().canonicalize().unwrap();
    prise(home.path())
        .args(["--root"])
        .arg(other.path())
        .args(["call", "everything__get-roots-list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "URI: file://{}\n",
            other_dir.display()
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
