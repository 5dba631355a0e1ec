//! Stdio servers with `"sandbox"`: the policy their configuration asks for, and what
//! to tell the person when one fails inside it.

use std::path::{Path, PathBuf};

use prise_config::{AllowNetwork, Sandbox, Stdio};
use prise_sandbox::{Network, Policy, folders_in, launcher_caches};

/// What a server configured with `sandbox` may reach: reads of everything but the
/// built-in secrets (less `allowRead`, plus `denyRead`) and prise's own state folder,
/// writes to its `cwd`, the folders its arguments name, `allowWrite` and its
/// launcher's cache, and the network `allowNetwork` gives.
pub(crate) fn policy(stdio: &Stdio, sandbox: &Sandbox) -> Policy {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let state = prise_config::state_dir();
    let mut policy = Policy::strict(home.as_deref(), state.as_deref());
    policy.deny_read.retain(|secret| {
        !sandbox
            .allow_read
            .iter()
            .any(|allowed| secret.starts_with(allowed))
    });
    policy.deny_read.extend(sandbox.deny_read.iter().cloned());
    let cwd = match &stdio.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    policy.allow_write.extend(stdio.cwd.iter().cloned());
    policy
        .allow_write
        .extend(folders_in(&stdio.args, &cwd, home.as_deref()));
    policy
        .allow_write
        .extend(sandbox.allow_write.iter().cloned());
    let var = |key: &str| child_var(stdio, key);
    for cache in launcher_caches(&stdio.command, &var, home.as_deref()) {
        // A launcher's first run makes its cache; the rule needs it to exist now.
        if std::fs::create_dir_all(&cache).is_ok() {
            policy.allow_write.push(cache);
        }
    }
    policy.network = match &sandbox.allow_network {
        AllowNetwork::None => Network::Denied,
        AllowNetwork::All => Network::Allowed,
        AllowNetwork::Only(hosts) => {
            let mut ports: Vec<u16> = hosts.iter().map(|(_, port)| *port).collect();
            ports.sort_unstable();
            ports.dedup();
            Network::Ports(ports)
        }
    };
    policy.unix_sockets = sandbox.allow_unix_sockets;
    policy
}

/// A variable as the child will see it: its configured `env`, else prise's own when it
/// is passed on (all of it with `inheritEnv`, else the minimal set).
fn child_var(stdio: &Stdio, key: &str) -> Option<String> {
    if let Some((_, value)) = stdio.env.iter().rev().find(|(k, _)| k == key) {
        return Some(value.clone());
    }
    let passed = stdio.inherit_env || prise_config::MINIMAL_ENV.contains(&key);
    passed
        .then(|| std::env::var(key).ok())
        .flatten()
        .filter(|v| !v.is_empty())
}

/// Words in a failing program's stderr that say the system refused it something.
const REFUSALS: [&str; 10] = [
    "permission denied",
    "operation not permitted",
    "eacces",
    "eperm",
    "network is unreachable",
    "enetunreach",
    "enotcached",
    "eai_again",
    "temporary failure in name resolution",
    "offline",
];

/// `; the sandbox likely refused this ("LINE"): it may write only ...` appended to the error of a
/// sandboxed server that did not start, so that the person knows where to look.
pub(crate) fn explain(policy: &Policy, stderr_tail: &[String]) -> String {
    let refused = stderr_tail.iter().rev().find(|line| {
        let lower = line.to_lowercase();
        REFUSALS.iter().any(|word| lower.contains(word))
    });
    let mut writable: Vec<String> = policy.allow_write.iter().map(|p| display(p)).collect();
    writable.push("its temporary folder".to_owned());
    let network = match &policy.network {
        Network::Denied => "has no network",
        Network::Allowed => "may use the network",
        Network::Ports(_) => "may connect only to its allowNetwork ports",
    };
    let what = match refused {
        Some(line) => format!("the sandbox likely refused this (\"{}\")", line.trim()),
        None => "it runs in a sandbox".to_owned(),
    };
    format!(
        "; {what}: it may write only {} and {network}; widen \"sandbox\" (allowWrite, allowNetwork) or set it to false",
        writable.join(", ")
    )
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
