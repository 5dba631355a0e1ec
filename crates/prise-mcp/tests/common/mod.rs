//! Helpers shared by prise-mcp's integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use prise_config::{Config, Server};

/// Where `scripts/peers.sh` installed the third-party peers. A missing install is an
/// error that says how to fix it, never a skipped test.
pub fn peers() -> PathBuf {
    let dir = std::env::var_os("PRISE_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers"));
    assert!(
        dir.join("npm/node_modules").is_dir() && dir.join("venv/bin/python").is_file(),
        "the test peers are not installed in {}; run scripts/peers.sh (scripts/test.sh does)",
        dir.display()
    );
    dir
}

/// A fixture file of these tests.
pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Servers from an `mcpServers` JSON text.
pub fn servers(json: &str) -> Vec<Server> {
    Config::parse(json, Path::new("test.json"), &|name| {
        std::env::var(name).ok()
    })
    .expect("test config parses")
    .servers
}

/// Whether a process with this id still exists (a zombie counts: it was not reaped).
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Pids of processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
            && pid != std::process::id()
        {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for `check` to hold.
pub async fn eventually(limit: Duration, check: impl Fn() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
