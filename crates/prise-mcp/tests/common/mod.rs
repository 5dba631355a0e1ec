//! Helpers shared by prise-mcp's integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::process::{Child, Command, Stdio};

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

/// Options for a test's mounts: no log folder, no remembered eras.
pub fn quiet_options() -> prise_mcp::MountOptions {
    prise_mcp::MountOptions {
        log_dir: None,
        eras: None,
        ..prise_mcp::MountOptions::default()
    }
}

/// Mounts the servers of `config` (an `mcpServers` object), asserting that each did.
pub async fn mount_all(
    config: &serde_json::Value,
    options: prise_mcp::MountOptions,
) -> prise_mcp::Mounts {
    let sources = servers(&config.to_string())
        .into_iter()
        .map(prise_mcp::Source::from)
        .collect();
    let mounts = prise_mcp::Mounts::start(sources, options).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    mounts
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

/// A child process killed when the test ends, however it ends.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound then released: another process could take it in
/// between, which on a test machine does not happen in practice).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts server-everything over Streamable HTTP and waits until it accepts connections.
pub fn everything_http() -> (Guard, u16) {
    everything("streamableHttp")
}

/// Starts server-everything in `mode` (`streamableHttp` or `sse`).
pub fn everything(mode: &str) -> (Guard, u16) {
    everything_on(mode, free_port())
}

/// Starts server-everything in `mode` on `port`.
pub fn everything_on(mode: &str, port: u16) -> (Guard, u16) {
    let child = Command::new("node")
        .arg(peers().join("npm/node_modules/.bin/mcp-server-everything"))
        .arg(mode)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = Guard(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (guard, port);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("server-everything did not listen on {port}");
}

/// Starts `python3 fixtures/NAME ARGS...`; the process, killed when dropped, and the
/// first line it prints (where it listens).
pub fn python_fixture(name: &str, args: &[&str]) -> (Guard, String) {
    use std::io::BufRead;
    let mut child = Command::new("python3")
        .arg(fixture(name))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Guard(child), line.trim().to_owned())
}

/// `METHOD path` of a fixture's plain HTTP at `base` (`http://host:port`), its body
/// read as JSON (`null` when it is not).
pub fn http_json(base: &str, method: &str, path: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_default()
}

/// Peak resident memory of this process so far, in MiB (each test runs in its own
/// process under nextest).
pub fn peak_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024
}

/// Mounts the servers of `config` (an `mcpServers` JSON text) with sign-ins kept in
/// `auth`, no logs and no remembered eras; failures are the caller's to read.
pub async fn mount_signing_in(config: &str, auth: &Path) -> prise_mcp::Mounts {
    let options = prise_mcp::MountOptions {
        auth_dir: Some(auth.to_owned()),
        ..quiet_options()
    };
    let sources = servers(config)
        .into_iter()
        .map(prise_mcp::Source::from)
        .collect();
    prise_mcp::Mounts::start(sources, options).await
}
