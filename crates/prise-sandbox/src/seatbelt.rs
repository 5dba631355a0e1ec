//! macOS: a [`Policy`] written as a Seatbelt profile, the language of
//! `sandbox-exec`, which starts the program under it.
//!
//! The profile allows by default and then takes away what the policy refuses: reads
//! of the hidden paths, every write but those beneath the writable paths, the network
//! but the allowed ports, and signals to processes outside the sandbox. Allowing by
//! default is what keeps launchers, runtimes and system libraries working without a
//! list of every service they look up; it also means that Mach services stay
//! reachable, a way around the file and network rules that Linux does not have.
//!
//! The profile is written on every system, so that its text is tested where the tests
//! run; only starting it needs macOS, and that has not been tried on one.

use std::path::{Path, PathBuf};

use crate::{Network, Policy};

/// The program that starts another under a profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Devices every program may write (terminals and descriptors are matched apart).
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/dtracehelper",
];

/// Where macOS resolves host names: with a list of ports allowed, the names of the
/// hosts behind them must still resolve.
const RESOLVER: &str = "/private/var/run/mDNSResponder";

/// The Seatbelt profile that holds a process to `policy`, with `temp` as its private
/// temporary folder. Later rules win over earlier ones, so each refusal comes after
/// what it narrows.
pub fn profile(policy: &Policy, temp: &Path) -> String {
    let mut out = String::from("(version 1)\n(allow default)\n");

    out.push_str("(deny file-write*)\n(allow file-write*");
    for path in policy
        .allow_write
        .iter()
        .map(PathBuf::as_path)
        .chain([temp])
    {
        for form in forms(path) {
            out.push_str(&format!("\n    (subpath {})", quoted(&form)));
        }
    }
    for device in DEVICES {
        out.push_str(&format!("\n    (literal {})", quoted(Path::new(device))));
    }
    out.push_str("\n    (regex #\"^/dev/ttys[0-9]+$\")\n    (subpath \"/dev/fd\"))\n");

    if !policy.deny_read.is_empty() {
        out.push_str("(deny file-read* file-write*");
        for path in &policy.deny_read {
            for form in forms(path) {
                out.push_str(&format!("\n    (subpath {})", quoted(&form)));
            }
        }
        out.push_str(")\n");
    }

    match &policy.network {
        Network::Allowed => {}
        Network::Denied => out.push_str("(deny network*)\n"),
        Network::Ports(ports) => {
            out.push_str("(deny network*)\n(allow network-outbound");
            for port in ports {
                out.push_str(&format!("\n    (remote tcp \"*:{port}\")"));
            }
            out.push_str(&format!(
                "\n    (remote unix-socket (path-literal \"{RESOLVER}\")))\n"
            ));
        }
    }
    if policy.unix_sockets {
        out.push_str("(allow network-outbound (remote unix-socket))\n");
    } else if policy.network == Network::Allowed {
        out.push_str(&format!(
            "(deny network-outbound (remote unix-socket))\n(allow network-outbound (remote unix-socket (path-literal \"{RESOLVER}\")))\n"
        ));
    }

    out.push_str("(deny signal)\n(allow signal (target same-sandbox))\n");
    out
}

/// A path as written and as the system resolves it (`/var` and `/tmp` are links to
/// `/private/...` on macOS, and Seatbelt matches resolved paths).
fn forms(path: &Path) -> Vec<PathBuf> {
    let mut forms = vec![path.to_path_buf()];
    if let Ok(real) = path.canonicalize()
        && real != path
    {
        forms.push(real);
    }
    forms
}

/// A path as a profile's string: quotes and backslashes escaped.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `sandbox-exec -p PROFILE PROGRAM`, to which the caller adds the program's
/// arguments.
#[cfg(target_os = "macos")]
pub(crate) fn command(
    program: &std::ffi::OsStr,
    policy: &Policy,
    temp: &Path,
) -> Result<std::process::Command, crate::SandboxError> {
    if !Path::new(SANDBOX_EXEC).exists() {
        return Err(crate::SandboxError::NoSandboxExec);
    }
    let mut command = std::process::Command::new(SANDBOX_EXEC);
    command.arg("-p").arg(profile(policy, temp)).arg(program);
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            deny_read: vec![PathBuf::from("/Users/ada/.ssh")],
            allow_write: vec![PathBuf::from("/Users/ada/project \"x\"")],
            network: Network::Denied,
            unix_sockets: false,
        }
    }

    #[test]
    fn secrets_are_hidden_after_the_writable_folders_are_granted() {
        let text = profile(&policy(), Path::new("/private/tmp/prise-sandbox-1"));
        let grant = text.find("(allow file-write*").unwrap();
        let hide = text.find("(subpath \"/Users/ada/.ssh\")").unwrap();
        assert!(text.find("(deny file-write*)").unwrap() < grant);
        assert!(
            grant < hide,
            "a hidden path inside a writable one stays hidden"
        );
        assert!(text.contains("(subpath \"/Users/ada/project \\\"x\\\"\")"));
        assert!(text.contains("(subpath \"/private/tmp/prise-sandbox-1\")"));
        assert!(text.contains("(deny network*)"));
        assert!(!text.contains("(allow network"));
        assert!(text.contains("(allow signal (target same-sandbox))"));
    }

    #[test]
    fn ports_are_allowed_one_by_one_with_the_resolver() {
        let mut policy = policy();
        policy.network = Network::Ports(vec![443, 8080]);
        let text = profile(&policy, Path::new("/tmp/t"));
        assert!(text.contains("(remote tcp \"*:443\")"));
        assert!(text.contains("(remote tcp \"*:8080\")"));
        assert!(text.contains(RESOLVER));
        assert!(text.find("(deny network*)").unwrap() < text.find("*:443").unwrap());
    }

    #[test]
    fn unix_sockets_follow_the_policy() {
        let mut policy = policy();
        policy.network = Network::Allowed;
        let text = profile(&policy, Path::new("/tmp/t"));
        assert!(!text.contains("(deny network*)"));
        assert!(text.contains("(deny network-outbound (remote unix-socket))"));
        policy.unix_sockets = true;
        let text = profile(&policy, Path::new("/tmp/t"));
        assert!(text.contains("(allow network-outbound (remote unix-socket))"));
        assert!(!text.contains("(deny network-outbound (remote unix-socket))"));
    }

    #[test]
    fn parentheses_balance() {
        let mut policy = policy();
        for network in [Network::Denied, Network::Allowed, Network::Ports(vec![1])] {
            policy.network = network;
            let text = profile(&policy, Path::new("/tmp/t"));
            let depth = text.chars().try_fold(0i32, |depth, c| {
                let depth = depth + i32::from(c == '(') - i32::from(c == ')');
                (depth >= 0).then_some(depth)
            });
            assert_eq!(depth, Some(0), "{text}");
        }
    }
}
