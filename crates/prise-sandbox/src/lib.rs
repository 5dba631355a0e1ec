//! Confining a child process before it starts, so that a program run with the
//! person's rights cannot read their keys, write outside the folders it was given, or
//! reach the network.
//!
//! [`confine`] makes the [`Command`] for a program, held to a [`Policy`]:
//!
//! - On Linux, the child, between fork and exec, enters a Landlock domain (filesystem
//!   rules, TCP connect and bind rules, no signals to processes outside it), a network
//!   namespace of its own when the network is denied (which also stops UDP, and so
//!   DNS), and a seccomp filter that refuses Unix sockets opened by path (a Docker or
//!   D-Bus socket would reach past every other rule). Nothing is moved or mounted: the
//!   child sees the same paths, so launchers such as `npx`, `uvx` and version-manager
//!   shims keep working. Landlock grants, it cannot subtract, so "everything but
//!   `~/.ssh`" is granted as the entries beside each hidden path, read when the child
//!   is started.
//! - On macOS, the program is started by `sandbox-exec` with a profile written from
//!   the policy ([`seatbelt::profile`]). Untested: no macOS machine runs the tests.
//!
//! This crate knows processes and paths; it must not know about MCP, servers or the
//! configuration format.
//!
//! ```no_run
//! use prise_sandbox::{Policy, confine};
//!
//! let policy = Policy::strict(Some("/root".as_ref()), None);
//! let (mut command, confinement) = confine("cat", &policy)?; // keep it while the child runs
//! command.arg("/root/.ssh/id_rsa");
//! confinement.set_env(&mut command);
//! assert!(!command.status()?.success());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod policy;
pub mod seatbelt;

// The only unsafe code of prise: what a child does between fork and exec.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod seccomp;

pub use policy::{Network, Policy, folders_in, launcher_caches};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    /// macOS without `/usr/bin/sandbox-exec`.
    #[error(
        "this system has no {} to start a sandboxed program with",
        seatbelt::SANDBOX_EXEC
    )]
    NoSandboxExec,
    /// A system that is neither Linux nor macOS.
    #[error("sandboxing is built for Linux (Landlock) and macOS (sandbox-exec) only")]
    Unsupported,
}

/// What stays with the parent while a confined child runs: its private temporary
/// folder, removed when this is dropped.
#[derive(Debug)]
pub struct Confinement {
    temp: tempfile::TempDir,
    network: Network,
    /// Whether UDP (and with it DNS) is refused when the network is: true on Linux with
    /// a network namespace of the child's own and on macOS; false on Linux when no
    /// namespace can be made, where only TCP is refused.
    pub refuses_udp: bool,
}

impl Confinement {
    /// The child's temporary folder (its `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    /// Sets the variables a confined child needs: `TMPDIR` (and `TMP`, `TEMP`) to its
    /// private folder, and, when the network is denied, those that ask npm and uv to
    /// work from their caches rather than wait on a registry they cannot reach. Call
    /// it after setting the command's own variables, so that these win.
    pub fn set_env(&self, command: &mut Command) {
        for key in ["TMPDIR", "TMP", "TEMP"] {
            command.env(key, self.temp.path());
        }
        if self.network == Network::Denied {
            command.envs(OFFLINE);
        }
    }
}

/// Makes the command that starts `program` held to `policy`, and the [`Confinement`]
/// to keep until the child has ended. Add arguments, stdio and variables to the
/// command as to any other, then [`Confinement::set_env`] last.
pub fn confine(
    program: impl AsRef<OsStr>,
    policy: &Policy,
) -> Result<(Command, Confinement), SandboxError> {
    let program = program.as_ref();
    let temp = tempfile::Builder::new()
        .prefix("prise-sandbox-")
        .tempdir()
        .map_err(SandboxError::TempDir)?;
    #[cfg(target_os = "linux")]
    let (command, refuses_udp) = linux::command(program, policy, temp.path())?;
    #[cfg(target_os = "macos")]
    let (command, refuses_udp) = (seatbelt::command(program, policy, temp.path())?, true);
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    let (command, refuses_udp): (Command, bool) = {
        let _ = program;
        return Err(SandboxError::Unsupported);
    };
    let confinement = Confinement {
        temp,
        network: policy.network.clone(),
        refuses_udp,
    };
    Ok((command, confinement))
}

/// Variables that make package launchers work offline, for a child without network.
const OFFLINE: [(&str, &str); 4] = [
    ("npm_config_offline", "true"),
    ("npm_config_update_notifier", "false"),
    ("UV_OFFLINE", "1"),
    ("PIP_NO_INDEX", "1"),
];
