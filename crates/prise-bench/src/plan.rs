//! What a benchmark run measures and with what: how many times, the clients and
//! servers it finds, the targets, and running one client for its JSON. The
//! comparisons (`run`, `gateways`, `sandboxes`, `search`) all stand on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How much to measure.
pub struct Plan {
    pub calls: usize,
    pub warmup: usize,
    pub rounds: usize,
    pub throughput_calls: usize,
    pub mount_sizes: Vec<usize>,
    pub startup_runs: usize,
    pub agent_runs: usize,
}

impl Plan {
    pub fn full() -> Plan {
        Plan {
            calls: 2000,
            warmup: 200,
            rounds: 3,
            throughput_calls: 4000,
            mount_sizes: vec![1, 10, 50],
            startup_runs: 30,
            agent_runs: 300,
        }
    }

    pub fn smoke() -> Plan {
        Plan {
            calls: 2,
            warmup: 1,
            rounds: 1,
            throughput_calls: 8,
            mount_sizes: vec![1, 2],
            startup_runs: 1,
            agent_runs: 2,
        }
    }
}

/// The programs the suite runs.
pub struct Env {
    pub bin: PathBuf,
    pub peers: PathBuf,
    pub clients: PathBuf,
}

impl Env {
    /// Binaries beside this one; peers from `PRISE_PEERS` or `target/peers`.
    pub fn discover() -> Result<Env, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let bin = exe
            .parent()
            .ok_or("no folder for the benchmark binaries")?
            .to_owned();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let peers = std::env::var_os("PRISE_PEERS")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/peers"));
        if !peers
            .join("npm/node_modules/@modelcontextprotocol/sdk")
            .is_dir()
            || !peers.join("venv/bin/python").is_file()
        {
            return Err(format!(
                "the peers are not installed in {}; run scripts/peers.sh",
                peers.display()
            ));
        }
        for name in [
            "bench-echo-server",
            "bench-floor",
            "bench-rmcp-client",
            "bench-prise-client",
            "prise",
        ] {
            if !bin.join(name).is_file() {
                return Err(format!(
                    "{} is missing; build with cargo build -p prise -p prise-bench",
                    bin.join(name).display()
                ));
            }
        }
        Ok(Env {
            bin,
            peers,
            clients: Path::new(env!("CARGO_MANIFEST_DIR")).join("clients"),
        })
    }

    pub fn echo_server(&self) -> Vec<String> {
        vec![self.bin.join("bench-echo-server").display().to_string()]
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.bin.join(name).display().to_string()
    }
}

/// Where a round-trip client talks to the echo server.
#[derive(Clone)]
pub enum Target {
    Stdio(Vec<String>),
    Http(String),
}

impl Target {
    pub(crate) fn args(&self) -> Vec<String> {
        match self {
            Target::Stdio(command) => std::iter::once("--".to_owned())
                .chain(command.iter().cloned())
                .collect(),
            Target::Http(url) => vec!["--url".to_owned(), url.clone()],
        }
    }
}

/// Runs a client and parses the JSON it prints.
pub fn run_json(command: &[String]) -> Result<serde_json::Value, String> {
    let output = Command::new(&command[0])
        .args(&command[1..])
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", command[0]))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}",
            command.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let last = String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_owned();
    serde_json::from_str(&last).map_err(|e| format!("{} printed no JSON ({e}): {last}", command[0]))
}
