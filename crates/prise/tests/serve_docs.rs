//! `prise serve docs` as real third-party clients see it: the official Python SDK
//! client and the MCP Inspector CLI.

mod common;

use common::{HttpServer, peers, prise_bin};

use std::path::Path;
use std::process::Command;

use predicates::prelude::*;

/// A small documentation tree.
fn docs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("guide.md"),
        "# Guide\nSet a timeout with --timeout.\nThen retry.\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("more")).unwrap();
    std::fs::write(
        dir.path().join("more/faq.md"),
        "# FAQ\nWhy a timeout? Because.\n",
    )
    .unwrap();
    dir
}

#[test]
fn python_sdk_client_over_stdio() {
    let docs = docs();
    let out = Command::new(peers().join("venv/bin/python"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_docs_client.py"))
        .arg("stdio")
        .arg(prise_bin())
        .arg(docs.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got["tools"],
        serde_json::json!(["grep_docs", "list_docs", "read_doc"])
    );
    // Descriptions come from the doc comments.
    assert!(
        got["descriptions"]["grep_docs"]
            .as_str()
            .unwrap()
            .starts_with("Search every Markdown document")
    );
    assert_eq!(
        got["grep"],
        "guide.md:2: Set a timeout with --timeout.\nmore/faq.md:2: Why a timeout? Because."
    );
    assert_eq!(
        got["read"],
        "2: Set a timeout with --timeout.\n3: Then retry."
    );
    assert_eq!(got["list"], "guide.md — Guide\nmore/faq.md — FAQ");
    assert_eq!(got["refused"]["isError"], true);
    assert!(got["refused"]["text"].as_str().unwrap().contains("'..'"));
    assert_eq!(
        got["resources"],
        serde_json::json!(["docs://guide.md", "docs://more/faq.md"])
    );
}

#[test]
fn inspector_cli_over_stdio() {
    let docs = docs();
    let inspector = peers().join("npm/node_modules/.bin/mcp-inspector");
    let run = |extra: &[&str]| {
        let out = Command::new("node")
            .arg(&inspector)
            .arg("--cli")
            .arg(prise_bin())
            .args(["serve", "docs"])
            .arg(docs.path())
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let list: serde_json::Value = serde_json::from_str(&run(&["--method", "tools/list"])).unwrap();
    let mut names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["grep_docs", "list_docs", "read_doc"]);
    let grep = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "grep_docs",
        "--tool-arg",
        "keyword=retry",
    ]);
    assert!(
        predicate::str::contains("guide.md:3: Then retry.").eval(&grep),
        "{grep}"
    );
    let read = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "read_doc",
        "--tool-arg",
        "path=more/faq.md",
    ]);
    assert!(predicate::str::contains("1: # FAQ").eval(&read), "{read}");
    let listed = run(&["--method", "tools/call", "--tool-name", "list_docs"]);
    assert!(
        predicate::str::contains("more/faq.md — FAQ").eval(&listed),
        "{listed}"
    );
}

#[test]
fn print_config_for_each_client() {
    let docs = docs();
    let dir = docs.path().canonicalize().unwrap();
    for (client, key) in [
        ("claude", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
    ] {
        let out = assert_cmd::Command::cargo_bin("prise")
            .unwrap()
            .args(["serve", "docs"])
            .arg(docs.path())
            .args(["--print-config", client])
            .output()
            .unwrap();
        assert!(out.status.success());
        let snippet: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let server = &snippet[key]["docs"];
        let command = server["command"].as_str().unwrap();
        assert!(Path::new(command).is_absolute(), "{command}");
        assert_eq!(
            server["args"],
            serde_json::json!(["serve", "docs", dir.display().to_string()])
        );
        // prise reads what it prints.
        let file = docs.path().join(format!("{client}.json"));
        std::fs::write(&file, &out.stdout).unwrap();
        prise_config::Config::load(&file).unwrap();
    }
}

#[test]
fn python_sdk_client_over_http() {
    let docs = docs();
    let server = HttpServer::docs(docs.path(), &[], &[]);
    let out = Command::new(peers().join("venv/bin/python"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_docs_client.py"))
        .args(["http", &server.url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got["tools"],
        serde_json::json!(["grep_docs", "list_docs", "read_doc"])
    );
    assert_eq!(
        got["read"],
        "2: Set a timeout with --timeout.\n3: Then retry."
    );
    assert_eq!(got["refused"]["isError"], true);
}

#[test]
fn prise_mounts_its_own_http_server_with_a_token() {
    let docs = docs();
    let server = HttpServer::docs(
        docs.path(),
        &["--token-env", "DOCS_TOKEN"],
        &[("DOCS_TOKEN", "s3cret-token")],
    );
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("c.json");
    let write = |token: &str| {
        std::fs::write(
            &config,
            format!(r#"{{"mcpServers": {{"d": {{"url": "{}", "headers": {{"Authorization": "Bearer {token}"}}}}}}}}"#, server.url),
        )
        .unwrap()
    };
    write("s3cret-token");
    assert_cmd::Command::cargo_bin("prise")
        .unwrap()
        .args(["--config"])
        .arg(&config)
        .args(["call", "d__grep_docs", r#"{"keyword":"retry"}"#])
        .assert()
        .success()
        .stdout("guide.md:3: Then retry.\n");
    write("wrong");
    assert_cmd::Command::cargo_bin("prise")
        .unwrap()
        .args(["--config"])
        .arg(&config)
        .args(["call", "d__grep_docs", r#"{"keyword":"retry"}"#])
        .assert()
        .code(1)
        // Said once, as the command's error.
        .stderr(
            predicate::str::starts_with("error: server d: authorization required")
                .and(predicate::str::contains("\n").count(1)),
        );
}

#[test]
fn http_refuses_foreign_hosts_and_origins() {
    let docs = docs();
    let server = HttpServer::docs(docs.path(), &[], &[]);
    let post = |headers: &[(&str, &str)]| {
        let mut cmd = Command::new("curl");
        cmd.args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "POST",
            &server.url,
        ]);
        cmd.args([
            "-H",
            "Content-Type: application/json",
            "-H",
            "Accept: application/json, text/event-stream",
        ]);
        for (k, v) in headers {
            cmd.args(["-H", &format!("{k}: {v}")]);
        }
        cmd.args(["--data", r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}"#]);
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert_eq!(post(&[]), "200");
    assert_eq!(post(&[("Host", "attacker.example")]), "403");
    assert_eq!(post(&[("Origin", "http://attacker.example")]), "403");
}

/// `--with URL` mounts a server for one run, named from its host or as given.
#[test]
fn a_server_given_with_a_url_for_one_run() {
    let docs = docs();
    let server = HttpServer::docs(docs.path(), &[], &[]);
    let home = tempfile::tempdir().unwrap();
    let port = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp");
    common::prise(home.path())
        .args(["--with", &server.url, "tools"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "127-0-0-1-{port}__grep_docs"
        )));
    common::prise(home.path())
        .args(["--with", &format!("d={}", server.url)])
        .args(["call", "d__grep_docs", r#"{"keyword":"retry"}"#])
        .assert()
        .success()
        .stdout("guide.md:3: Then retry.\n");
}
