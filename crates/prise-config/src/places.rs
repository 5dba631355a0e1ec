//! Where prise keeps its own state, and what a server's environment holds by
//! default: knowledge of the configuration that every crate shares.

use std::path::PathBuf;

/// prise's state folder: `$PRISE_STATE_DIR`, else `$XDG_STATE_HOME/prise`, else
/// `~/.local/state/prise`. Servers' stderr logs, sign-ins, remembered protocol eras,
/// pins, sessions and saved outputs live under it.
pub fn state_dir() -> Option<PathBuf> {
    let env = |key: &str| {
        std::env::var_os(key)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PRISE_STATE_DIR")
        .or_else(|| {
            env("XDG_STATE_HOME")
                .filter(|p| p.is_absolute())
                .map(|p| p.join("prise"))
        })
        .or_else(|| env("HOME").map(|h| h.join(".local/state/prise")))
}

/// Variables passed to a stdio server unless `inheritEnv` is set: enough to find
/// programs, a home for caches, and a locale.
pub const MINIMAL_ENV: [&str; 9] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR", "LC_ALL",
];
