//! `prise serve docs` as real third-party clients see it: the official Python SDK
//! client and the MCP Inspector CLI.

use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;

fn peers() -> PathBuf {
    let dir = std::env::var_os("PRISE_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers"));
    assert!(
        dir.join("npm/node_modules").is_dir(),
        "run scripts/peers.sh first ({} is missing)",
        dir.display()
    );
    dir
}

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

fn prise_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("prise")
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
