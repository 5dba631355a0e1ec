//! Confining a child process before it starts, so that a program run with the
//! person's rights cannot read their keys, write outside the folders it was given, or
//! reach the network.
//!
//! On Linux, [`confine`] prepares a [`Command`](std::process::Command) so that the
//! child, between fork and exec, enters a Landlock domain (filesystem rules, TCP
//! connect and bind rules, no signals to processes outside it), a network namespace
//! of its own when the network is denied (which also stops UDP, and so DNS), and a
//! seccomp filter that refuses Unix sockets opened by path (a Docker or D-Bus socket
//! would reach past every other rule). Nothing is moved or mounted: the child sees the
//! same paths, so launchers such as `npx`, `uvx` and version-manager shims keep
//! working. Landlock grants, it cannot subtract, so "everything but `~/.ssh`" is
//! granted as the entries beside each hidden path, read when the child is started.
//!
//! This crate knows processes and paths; it must not know about MCP, servers or the
//! configuration format.
//!
//! ```no_run
//! use prise_sandbox::{Policy, confine};
//!
//! let mut command = std::process::Command::new("cat");
//! command.arg("/root/.ssh/id_rsa");
//! let policy = Policy::strict(Some("/root".as_ref()), None);
//! let _confinement = confine(&mut command, &policy)?; // keep it while the child runs
//! assert!(!command.status()?.success());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod policy;

// The only unsafe code of prise: what a child does between fork and exec.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod seccomp;

pub use policy::{Network, Policy, folders_in, launcher_caches};

use std::path::{Path, PathBuf};

/// Why a process cannot be confined as asked.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel has no Landlock.
    #[error(
        "this kernel has no Landlock (Linux 5.13 or later, with \"landlock\" among its security modules), so nothing can be sandboxed"
    )]
    NoLandlock,
    /// The kernel's Landlock predates what the policy needs.
    #[error("{needs} needs Landlock ABI {abi_needed} (this kernel has ABI {abi})")]
    OldLandlock {
        /// What asked for it.
        needs: &'static str,
        /// The ABI that has it.
        abi_needed: i32,
        /// The kernel's.
        abi: i32,
    },
    /// A path the policy lets the process write does not exist.
    #[error("cannot let it write {}: {source}", path.display())]
    Writable {
        /// The path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The private temporary folder could not be made.
    #[error("cannot make its private temporary folder: {0}")]
    TempDir(std::io::Error),
    /// The kernel refused the rules.
    #[error("the kernel refused the sandbox's rules: {0}")]
    Rules(String),
    /// Sandboxing is built for Linux only.
    #[error("sandboxing is built for Linux only (macOS's sandbox-exec is not supported yet)")]
    Unsupported,
}

/// What stays with the parent while a confined child runs: its private temporary
/// folder, removed when this is dropped.
#[derive(Debug)]
pub struct Confinement {
    temp: tempfile::TempDir,
    /// Whether the child has a network namespace of its own (no network at all), as
    /// opposed to TCP rules only, which leave UDP open.
    pub network_namespace: bool,
    /// The kernel's Landlock ABI.
    pub abi: i32,
}

impl Confinement {
    /// The child's temporary folder (its `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }
}

/// Prepares `command` so that the process it starts is held to `policy`. Sets
/// `TMPDIR` (and `TMP`, `TEMP`) to a private folder, and, when the network is denied,
/// asks npm and uv to work from their caches rather than wait on a registry they
/// cannot reach. Keep the returned [`Confinement`] until the child has ended.
pub fn confine(
    command: &mut std::process::Command,
    policy: &Policy,
) -> Result<Confinement, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::confine(command, policy)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (command, policy);
        Err(SandboxError::Unsupported)
    }
}

/// Variables that make package launchers work offline, for a child without network.
const OFFLINE: [(&str, &str); 4] = [
    ("npm_config_offline", "true"),
    ("npm_config_update_notifier", "false"),
    ("UV_OFFLINE", "1"),
    ("PIP_NO_INDEX", "1"),
];

fn private_temp(
    command: &mut std::process::Command,
    policy: &Policy,
) -> Result<tempfile::TempDir, SandboxError> {
    let temp = tempfile::Builder::new()
        .prefix("prise-sandbox-")
        .tempdir()
        .map_err(SandboxError::TempDir)?;
    for key in ["TMPDIR", "TMP", "TEMP"] {
        command.env(key, temp.path());
    }
    if policy.network == Network::Denied {
        command.envs(OFFLINE);
    }
    Ok(temp)
}
