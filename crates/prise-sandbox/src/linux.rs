//! Landlock, a network namespace and seccomp, entered by the child between fork and
//! exec. Everything that allocates or reads the filesystem happens in the parent; the
//! child only makes system calls, as is required after `fork` in a threaded program.

use std::ffi::{CString, OsStr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope,
};

use crate::{Network, Policy, SandboxError, seccomp};

/// Devices every program may write: the null device and its kind, terminals, and
/// shared memory.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/pts",
    "/dev/shm",
];

/// Every right beneath a folder; on a file, the rights that make sense on a file (the
/// others are about a folder's entries).
fn writable(abi: ABI, path: &Path) -> BitFlags<AccessFs> {
    if path.is_dir() {
        AccessFs::from_all(abi)
    } else {
        AccessFs::from_file(abi)
    }
}

/// The command for `program`, with the rules its child enters before exec, and
/// whether the child has a network namespace of its own (which refuses UDP too).
pub(crate) fn command(
    program: &OsStr,
    policy: &Policy,
    temp: &Path,
) -> Result<(Command, bool), SandboxError> {
    let version = landlock_abi();
    if version < 1 {
        return Err(SandboxError::NoLandlock);
    }
    let abi = ABI::from(version);
    let namespace = policy.network == Network::Denied && network_namespaces_work();
    if policy.network != Network::Allowed && !namespace && version < 4 {
        return Err(SandboxError::OldLandlock {
            needs: "refusing the network without network namespaces",
            abi_needed: 4,
            abi: version,
        });
    }
    let rules = |e: landlock::RulesetError| SandboxError::Rules(e.to_string());

    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(rules)?;
    if policy.network != Network::Allowed && version >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(rules)?;
    }
    if version >= 6 {
        let scopes = if policy.unix_sockets {
            BitFlags::from(Scope::Signal)
        } else {
            Scope::Signal | Scope::AbstractUnixSocket
        };
        ruleset = ruleset.scope(scopes).map_err(rules)?;
    }
    let mut ruleset = ruleset.create().map_err(rules)?;

    let holes = holes(&policy.deny_read);
    grant_except(
        &mut ruleset,
        Path::new("/"),
        &holes,
        AccessFs::from_read(abi),
        abi,
    )?;
    for path in policy
        .allow_write
        .iter()
        .map(PathBuf::as_path)
        .chain([temp])
    {
        let fd = PathFd::new(path).map_err(|_| SandboxError::Writable {
            path: path.to_owned(),
            source: std::fs::metadata(path)
                .err()
                .unwrap_or_else(|| std::io::Error::other("cannot be opened")),
        })?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, writable(abi, path)))
            .map_err(rules)?;
    }
    for device in DEVICES.map(Path::new) {
        if let Ok(fd) = PathFd::new(device) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, writable(abi, device)))
                .map_err(rules)?;
        }
    }
    if let Network::Ports(ports) = &policy.network {
        for port in ports {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(rules)?;
        }
    }

    let namespace_setup = namespace.then(NamespaceSetup::for_this_user);
    let unix_sockets = policy.unix_sockets;
    let mut ruleset = Some(ruleset);
    let mut command = Command::new(program);
    // SAFETY: the closure only makes system calls (unshare, open, write, prctl,
    // landlock_restrict_self) on data prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            if let Some(setup) = &namespace_setup {
                setup.enter()?;
            }
            let ruleset = ruleset
                .take()
                .ok_or_else(|| std::io::Error::other("sandbox already used"))?;
            ruleset.restrict_self().map_err(std::io::Error::other)?;
            if !unix_sockets {
                seccomp::refuse_unix_sockets()?;
            }
            Ok(())
        });
    }
    Ok((command, namespace))
}

/// The kernel's Landlock ABI version, or 0 (or less) when it has none.
fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: asking for the version takes no ruleset and writes nothing.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version as i32
}

/// The paths to hide, with where they lead when they are links: a hidden folder that
/// is a link to elsewhere must not be readable at its other address either.
fn holes(deny: &[PathBuf]) -> Vec<PathBuf> {
    let mut holes = Vec::new();
    for path in deny {
        holes.push(path.clone());
        if let Ok(real) = path.canonicalize()
            && real != *path
        {
            holes.push(real);
        }
    }
    holes
}

/// Grants `rights` beneath `dir` except beneath the holes: a folder with no hole
/// inside is granted whole; one with a hole inside is granted the listing of its
/// entries and each entry is granted the same way. Links are granted only when they
/// lead outside every hole, since a rule follows a link to where it leads.
fn grant_except(
    ruleset: &mut RulesetCreated,
    dir: &Path,
    holes: &[PathBuf],
    rights: BitFlags<AccessFs>,
    abi: ABI,
) -> Result<(), SandboxError> {
    if holes.iter().any(|hole| hole == dir) {
        return Ok(());
    }
    let inside: Vec<PathBuf> = holes
        .iter()
        .filter(|hole| hole.starts_with(dir))
        .cloned()
        .collect();
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        match dir.canonicalize() {
            Ok(real)
                if !holes
                    .iter()
                    .any(|hole| real.starts_with(hole) || hole.starts_with(&real)) => {}
            _ => return Ok(()),
        }
    }
    let is_dir = dir.is_dir();
    if inside.is_empty() || !is_dir {
        let rights = if is_dir {
            rights
        } else {
            rights & AccessFs::from_file(abi)
        };
        return add(ruleset, dir, rights);
    }
    add(ruleset, dir, rights & AccessFs::ReadDir)?;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        grant_except(ruleset, &entry.path(), &inside, rights, abi)?;
    }
    Ok(())
}

fn add(
    ruleset: &mut RulesetCreated,
    path: &Path,
    rights: BitFlags<AccessFs>,
) -> Result<(), SandboxError> {
    // A path that cannot be opened is one the person cannot reach either.
    let Ok(fd) = PathFd::new(path) else {
        return Ok(());
    };
    ruleset
        .add_rule(PathBeneath::new(fd, rights))
        .map(|_| ())
        .map_err(|e| SandboxError::Rules(e.to_string()))
}

/// How the child gets a network namespace of its own: root unshares it directly;
/// anyone else first enters a user namespace that maps only their own ids, so that
/// files keep their owners.
struct NamespaceSetup {
    flags: libc::c_int,
    /// `(path, contents)` to write after unsharing.
    maps: Vec<(CString, Vec<u8>)>,
}

impl NamespaceSetup {
    fn for_this_user() -> NamespaceSetup {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        if uid == 0 {
            return NamespaceSetup {
                flags: libc::CLONE_NEWNET,
                maps: Vec::new(),
            };
        }
        let file = |name: &str| CString::new(format!("/proc/self/{name}")).expect("no NUL");
        NamespaceSetup {
            flags: libc::CLONE_NEWUSER | libc::CLONE_NEWNET,
            maps: vec![
                (file("setgroups"), b"deny".to_vec()),
                (file("uid_map"), format!("{uid} {uid} 1").into_bytes()),
                (file("gid_map"), format!("{gid} {gid} 1").into_bytes()),
            ],
        }
    }

    /// Between fork and exec: system calls only.
    fn enter(&self) -> std::io::Result<()> {
        // SAFETY: unshare, open, write and close on prepared buffers.
        unsafe {
            if libc::unshare(self.flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for (path, contents) in &self.maps {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, contents.as_ptr().cast(), contents.len());
                libc::close(fd);
                if written < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// Whether this process may give a child a network namespace of its own: tried once,
/// in a child that ends before exec. Distributions that restrict user namespaces
/// (Ubuntu 24.04's AppArmor setting, for one) refuse it to people who are not root.
fn network_namespaces_work() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let setup = NamespaceSetup::for_this_user();
        let mut probe = Command::new("/");
        probe
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: system calls only, then _exit, which never returns.
        unsafe {
            probe.pre_exec(move || {
                setup.enter()?;
                libc::_exit(0)
            });
        }
        probe.status().is_ok_and(|status| status.success())
    })
}
