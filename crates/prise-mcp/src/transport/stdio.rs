//! Stdio servers as child processes: each in its own process group, with a minimal
//! environment, its stderr drained continuously, and the whole group ended on close.
//!
//! `npx` and `uvx` start the real server as a grandchild; killing only the direct
//! child would leave it running. So every server gets its own process group and is
//! ended as a group: SIGTERM, then SIGKILL after a grace period.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio as Pipe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prise_config::Stdio;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// How long a server gets to exit after SIGTERM before it is killed.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// Lines of stderr kept in memory per server, for error reports.
const TAIL_LINES: usize = 20;
/// Characters kept of each stderr line in memory (the log file keeps them whole).
const TAIL_LINE_CHARS: usize = 400;
/// A server's log file stops growing at this size; a flood must not fill the disk.
const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// Process groups of servers still running, so a panic or signal handler can end them.
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Ends every server process group still running: for panic hooks and signal handlers,
/// where the normal close path will not run.
pub fn kill_all_children() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for pgid in groups {
        if let Some(pid) = Pid::from_raw(pgid) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

/// The last lines a server wrote to stderr, and where the whole of it is logged.
#[derive(Debug, Default)]
pub struct StderrLog {
    tail: Mutex<VecDeque<String>>,
    /// Closed when the pipe reaches end-of-file.
    done: tokio::sync::watch::Sender<bool>,
    /// The log file, when one could be opened.
    pub path: Option<PathBuf>,
}

impl StderrLog {
    /// The last lines, oldest first.
    pub fn tail(&self) -> Vec<String> {
        self.tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Waits until the server's stderr is fully read, or `limit` passes: a crashed
    /// server's last words arrive just after it exits.
    pub async fn closed(&self, limit: Duration) {
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(limit, done.wait_for(|d| *d)).await;
    }

    fn push(&self, line: &str) {
        let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line.chars().take(TAIL_LINE_CHARS).collect());
    }
}

/// A running stdio server.
#[derive(Debug)]
pub struct ChildServer {
    pgid: Option<Pid>,
    /// Set once, to the exit status, by the task that reaps the process.
    exit: tokio::sync::watch::Receiver<Option<std::process::ExitStatus>>,
    /// What it wrote to stderr.
    pub stderr: Arc<StderrLog>,
    /// Its sandbox's private temporary folder, removed with this.
    _confinement: Option<prise_sandbox::Confinement>,
}

/// Why a server process could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start `{command}`: {source}")]
pub struct SpawnError {
    /// The program.
    pub command: String,
    /// What the system said.
    pub source: std::io::Error,
}

/// Starts a server, returning the process and the pipes to speak JSON-RPC over.
pub fn spawn(
    name: &str,
    stdio: &Stdio,
    log_dir: Option<&Path>,
) -> Result<(ChildServer, ChildStdout, ChildStdin), SpawnError> {
    let (mut command, confinement) = match &stdio.sandbox {
        None => (Command::new(&stdio.command), None),
        Some(sandbox) => {
            let policy = crate::transport::sandboxing::policy(stdio, sandbox);
            let (command, confinement) =
                prise_sandbox::confine(&stdio.command, &policy).map_err(|e| SpawnError {
                    command: stdio.command.clone(),
                    source: std::io::Error::other(format!("sandbox: {e}")),
                })?;
            if policy.network == prise_sandbox::Network::Denied && !confinement.refuses_udp {
                tracing::warn!(
                    "server {name}: sandbox: this system lets prise make no network namespace (user namespaces are restricted), so TCP is refused but UDP, and with it DNS, is not"
                );
            }
            (Command::from(command), Some(confinement))
        }
    };
    command
        .args(&stdio.args)
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::piped());
    if !stdio.inherit_env {
        command.env_clear();
        for key in prise_config::MINIMAL_ENV {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
    }
    command.envs(stdio.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = &stdio.cwd {
        command.current_dir(cwd);
    }
    // Last, so that the sandbox's private TMPDIR wins over the configured one.
    if let Some(confinement) = &confinement {
        confinement.set_env(command.as_std_mut());
    }
    // Its own group, so that ending the group reaches npx's and uvx's grandchildren; and
    // a safety net should this handle be dropped without a close.
    command.process_group(0).kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| SpawnError {
        command: stdio.command.clone(),
        source,
    })?;
    let pgid = child.id().and_then(|id| Pid::from_raw(id as i32));
    if let Some(pgid) = pgid {
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pgid.as_raw_nonzero().get());
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let stderr_pipe = child.stderr.take().expect("stderr is piped");
    let log_path = log_dir.map(|dir| dir.join(format!("{name}.log")));
    let stderr = Arc::new(StderrLog {
        path: log_path.clone(),
        ..StderrLog::default()
    });
    // One task owns the process and reaps it, so that an exit is noticed (and no
    // zombie is left) whoever is waiting.
    let (exit_tx, exit) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        let status = child.wait().await.ok();
        let _ = exit_tx.send(status);
    });
    tokio::spawn(drain_stderr(
        stderr_pipe,
        stderr.clone(),
        log_path,
        name.to_owned(),
    ));
    Ok((
        ChildServer {
            pgid,
            exit,
            stderr,
            _confinement: confinement,
        },
        stdout,
        stdin,
    ))
}

/// Reads stderr until it closes, so a chatty server never blocks on a full pipe.
async fn drain_stderr(
    pipe: tokio::process::ChildStderr,
    log: Arc<StderrLog>,
    path: Option<PathBuf>,
    name: String,
) {
    // The log file through tokio's blocking pool: never on the runtime's thread.
    let mut file = match &path {
        Some(path) => open_log(path).await,
        None => None,
    };
    let mut written = match &file {
        Some(f) => f.metadata().await.map_or(0, |m| m.len()),
        None => 0,
    };
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Lines are read as bytes: a server may write anything to stderr.
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        tracing::debug!(server = %name, "stderr: {text}");
        log.push(text);
        if let Some(f) = file.as_mut()
            && written < MAX_LOG_BYTES
        {
            written += line.len() as u64;
            // Flushed line by line, so that a log read while the server runs is whole.
            let _ = f.write_all(&line).await;
            let _ = f.flush().await;
        }
    }
    log.done.send_replace(true);
}

/// The log file at `path`, opened to append, its folder made first.
async fn open_log(path: &Path) -> Option<tokio::fs::File> {
    tokio::fs::create_dir_all(path.parent()?).await.ok()?;
    tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .await
        .ok()
}

impl ChildServer {
    /// Ends the process group: SIGTERM, then SIGKILL if the server is still there after
    /// `grace`. The SIGKILL goes to the group in any case: a wrapper may be gone while
    /// a grandchild that ignored SIGTERM is not.
    pub async fn terminate(&self, grace: Duration) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, Signal::TERM);
            let _ = tokio::time::timeout(grace, self.exited()).await;
            let _ = kill_process_group(pgid, Signal::KILL);
            LIVE_GROUPS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&pgid.as_raw_nonzero().get());
        }
        self.exited().await;
    }

    /// The exit status, once the process has ended.
    pub fn status(&self) -> Option<std::process::ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits for the process to end and returns its status (`None` if it could not be
    /// waited for).
    pub async fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut exit = self.exit.clone();
        exit.wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|status| *status)
    }

    /// The process id of the group leader.
    pub fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw_nonzero().get() as u32)
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let Some(pgid) = self.pgid else { return };
        let live = LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pgid.as_raw_nonzero().get());
        if live {
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }
}
