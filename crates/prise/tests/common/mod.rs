//! Helpers shared by the command-line tests.

#![allow(dead_code)]

pub mod pty;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `prise` with a clean, predictable environment: only `PATH`, and an empty home as
/// both `HOME` and working directory, so no user configuration is found.
pub fn prise(home: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("prise").unwrap();
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(home);
    cmd
}

/// [`prise`] with `args`, off the async runtime, so that what the test serves on it
/// (a model double) keeps answering meanwhile.
pub async fn prise_async(home: &Path, args: Vec<String>) -> std::process::Output {
    let home = home.to_owned();
    tokio::task::spawn_blocking(move || prise(&home).args(args).output().unwrap())
        .await
        .unwrap()
}

/// `prise run`'s arguments against a model double at `url`, calls allowed
/// (`--yes`), then `more`.
pub fn run_args(url: &str, more: &[&str]) -> Vec<String> {
    [
        "run",
        "-m",
        "openai-compatible:fake",
        "--base-url",
        url,
        "--yes",
    ]
    .iter()
    .chain(more)
    .map(|s| s.to_string())
    .collect()
}

/// The `prise` binary.
pub fn prise_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("prise")
}

/// Where `scripts/peers.sh` installed the third-party peers; missing is an error.
pub fn peers() -> PathBuf {
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

/// `dir` made a Git repository (empty), for mcp-server-git.
pub fn git_repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git init in {}", dir.display());
}

/// The reference servers the tests install, as a configuration: server-everything,
/// server-filesystem on `dir`, server-memory (its file in `dir`),
/// server-sequential-thinking, mcp-server-time, mcp-server-fetch, mcp-server-git on
/// `dir/repo` (made a repository) and prise's docs server: 56 tools.
pub fn reference_servers(dir: &Path) -> serde_json::Value {
    let npm = |bin: &str| peers().join("npm/node_modules/.bin").join(bin);
    let venv = |bin: &str| peers().join("venv/bin").join(bin);
    let repository = dir.join("repo");
    git_repository(&repository);
    serde_json::json!({"mcpServers": {
        "everything": {"command": "node", "args": [npm("mcp-server-everything"), "stdio"]},
        "fs": {"command": "node", "args": [npm("mcp-server-filesystem"), dir]},
        "memory": {"command": "node", "args": [npm("mcp-server-memory")],
                   "env": {"MEMORY_FILE_PATH": dir.join("memory.json")}},
        "thinking": {"command": "node", "args": [npm("mcp-server-sequential-thinking")]},
        "time": {"command": venv("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        "fetch": {"command": venv("mcp-server-fetch")},
        "git": {"command": venv("mcp-server-git"), "args": ["--repository", repository]},
        "docs": {"command": prise_bin(), "args": ["serve", "docs"]},
    }})
}

/// The misbehaving test server of prise-mcp's tests.
pub fn bad_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise-mcp/tests/fixtures/bad_server.py")
}

/// Writes `home/.mcp.json` mounting the misbehaving test server in `mode` under
/// `name`, with `more` top-level keys (an object: `approval`, `model`...).
pub fn mount_bad_server(home: &Path, name: &str, mode: &str, more: serde_json::Value) {
    let mut config = serde_json::json!({"mcpServers": {name: {"command": "python3", "args": [bad_server(), mode]}}});
    if let serde_json::Value::Object(more) = more {
        config.as_object_mut().unwrap().extend(more);
    }
    std::fs::write(home.join(".mcp.json"), config.to_string()).unwrap();
}

/// Writes `home/.mcp.json` mounting server-everything (`everything`) and prise's own
/// docs server on a one-file folder (`mine`): two servers with resources, one of them
/// with templates.
pub fn mount_everything_beside_docs(home: &Path) {
    let docs = home.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# A\n").unwrap();
    std::fs::write(
        home.join(".mcp.json"),
        serde_json::json!({"mcpServers": {
            "everything": {"command": "node", "args": [peers().join("npm/node_modules/.bin/mcp-server-everything"), "stdio"]},
            "mine": {"command": prise_bin(), "args": ["serve", "docs", docs]}
        }})
        .to_string(),
    )
    .unwrap();
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
        {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for `check` to hold.
pub fn wait_until(limit: Duration, check: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// `prise ARGS --http 127.0.0.1:0` (a server of `prise serve`), killed when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// Its MCP endpoint, as it printed it.
    pub url: String,
}

impl HttpServer {
    /// Starts `prise ARGS --http 127.0.0.1:0` with `env` and reads the URL it prints.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new(prise_bin())
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
        HttpServer {
            child,
            url: line.trim().to_owned(),
        }
    }

    /// `prise serve docs DIR --http 127.0.0.1:0 EXTRA`.
    pub fn docs(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let dir = dir.display().to_string();
        let mut args = vec!["serve", "docs", dir.as_str()];
        args.extend(extra);
        HttpServer::start(&args, env)
    }
}

impl HttpServer {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`-TERM`, `-INT`) and waits for the process to exit.
    pub fn signal(mut self, signal: &str) -> std::process::ExitStatus {
        let sent = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        self.child.wait().unwrap()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
