//! What a confined process may do: which paths it must not read, which it may write,
//! and whether it reaches the network.

use std::path::{Path, PathBuf};

/// Folders and files under the home folder that hold credentials, keys or a browser's
/// logged-in state, in the places their programs keep them on Linux and macOS.
const SECRETS_AT_HOME: [&str; 33] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".oci",
    ".config/doctl",
    ".config/gh",
    ".config/hub",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    ".config/rclone",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".bash_history",
    ".zsh_history",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
];

/// Files outside the home folder that only the system should read.
const SECRETS_OF_THE_SYSTEM: [&str; 3] = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers"];

/// What a confined process may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Absolute paths whose contents it must not read (folders and files). Everything
    /// else stays readable, so that programs, libraries and launchers keep working.
    pub deny_read: Vec<PathBuf>,
    /// Absolute paths it may write beneath. It also gets a private temporary folder.
    pub allow_write: Vec<PathBuf>,
    /// Its network.
    pub network: Network,
    /// Whether it may open Unix sockets by path (a Docker or D-Bus socket reaches past
    /// every other rule here), which is refused unless allowed.
    pub unix_sockets: bool,
}

/// Which connections a confined process may make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// None at all: no TCP, no UDP (so no DNS), no loopback.
    Denied,
    /// Any.
    Allowed,
    /// TCP connections to these ports only, on any host: the kernel filters by port,
    /// not by name. Nothing may listen.
    Ports(Vec<u16>),
}

impl Policy {
    /// Nothing readable that holds secrets, nothing writable but the temporary folder,
    /// no network: what `"sandbox": true` means before the server's own folders are
    /// added. `home` is the person's home folder; `own_state` is where the host keeps
    /// its tokens, which no server may read either.
    pub fn strict(home: Option<&Path>, own_state: Option<&Path>) -> Policy {
        // Only those this process can read (as root): hiding the others would cost a
        // rule for each entry of /etc and hide nothing.
        let mut deny_read: Vec<PathBuf> = SECRETS_OF_THE_SYSTEM
            .iter()
            .map(PathBuf::from)
            .filter(|path| std::fs::File::open(path).is_ok())
            .collect();
        if let Some(home) = home {
            deny_read.extend(SECRETS_AT_HOME.iter().map(|p| home.join(p)));
        }
        deny_read.extend(own_state.map(Path::to_path_buf));
        Policy {
            deny_read,
            allow_write: Vec::new(),
            network: Network::Denied,
            unix_sockets: false,
        }
    }
}

/// The folders a command line names, which a server given them may write: arguments
/// that are absolute or explicitly relative paths (`/srv`, `./data`, `~/notes`, `.`),
/// alone or after `--flag=`, resolved against `cwd`, that exist as folders now. Files
/// are left out, because an argument that is a file is as often the server's own
/// script as its data; a file a server must write goes in `allowWrite`.
pub fn folders_in(args: &[String], cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for arg in args {
        let value = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => arg.as_str(),
        };
        let path = if let Some(rest) = value.strip_prefix("~/") {
            match home {
                Some(home) => home.join(rest),
                None => continue,
            }
        } else if value.starts_with('/') {
            PathBuf::from(value)
        } else if value == "."
            || value == ".."
            || value.starts_with("./")
            || value.starts_with("../")
        {
            cwd.join(value)
        } else {
            continue;
        };
        if path.is_dir() && !folders.contains(&path) {
            folders.push(path);
        }
    }
    folders
}

/// The caches a package launcher must write to run a package it already fetched
/// (npm rewrites its cache index even offline; uv locks its cache): for `npx`, `npm`,
/// `pnpm`, `yarn`, `bunx`, `uvx`, `uv` and `pipx`, as their variables or the home
/// folder place them. `var` looks up the child's environment.
///
/// Writable caches are the price of launchers in a sandbox: a server may alter what
/// the same launcher later starts for another server, so either sandbox every server
/// it starts or run installed programs directly.
pub fn launcher_caches(
    program: &str,
    var: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let at_home = |rel: &str| home.map(|h| h.join(rel));
    let cache_home = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| at_home(".cache"));
    let data_home = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| at_home(".local/share"));
    let from = |key: &str| {
        var(key)
            .or_else(|| var(&key.to_uppercase()))
            .map(PathBuf::from)
    };
    let caches: Vec<Option<PathBuf>> = match name {
        "npx" | "npm" => vec![from("npm_config_cache").or_else(|| at_home(".npm"))],
        "pnpm" | "pnpx" => vec![
            cache_home.map(|c| c.join("pnpm")),
            data_home.map(|d| d.join("pnpm")),
        ],
        "yarn" => vec![cache_home.map(|c| c.join("yarn"))],
        "bunx" | "bun" => {
            vec![from("BUN_INSTALL_CACHE_DIR").or_else(|| at_home(".bun/install/cache"))]
        }
        "uvx" | "uv" => vec![
            from("UV_CACHE_DIR").or_else(|| cache_home.map(|c| c.join("uv"))),
            data_home.map(|d| d.join("uv")),
        ],
        "pipx" => vec![from("PIPX_HOME").or_else(|| data_home.map(|d| d.join("pipx")))],
        _ => Vec::new(),
    };
    caches.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_taken_from_paths_that_are_folders() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("server.js"), "").unwrap();
        let args: Vec<String> = [
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "./data",
            "./server.js",
            "data",
            "/nonexistent/folder",
        ]
        .map(String::from)
        .into();
        assert_eq!(
            folders_in(&args, dir.path(), None),
            vec![dir.path().join("./data")]
        );
        let flag = vec![format!("--repository={}", dir.path().display())];
        assert_eq!(
            folders_in(&flag, Path::new("/"), None),
            vec![dir.path().to_path_buf()]
        );
        let home = vec!["~/data".to_owned()];
        assert_eq!(
            folders_in(&home, Path::new("/"), Some(dir.path())),
            vec![dir.path().join("data")]
        );
    }

    #[test]
    fn launchers_write_their_own_caches_only() {
        let home = Some(Path::new("/home/ada"));
        let none = |_: &str| None;
        assert_eq!(
            launcher_caches("npx", &none, home),
            [Path::new("/home/ada/.npm")]
        );
        let cache = |key: &str| (key == "npm_config_cache").then(|| "/srv/npm".to_owned());
        assert_eq!(
            launcher_caches("/usr/bin/npx", &cache, home),
            [Path::new("/srv/npm")]
        );
        assert_eq!(
            launcher_caches("uvx", &none, home),
            [
                Path::new("/home/ada/.cache/uv"),
                Path::new("/home/ada/.local/share/uv")
            ]
        );
        assert!(launcher_caches("node", &none, home).is_empty());
        assert!(launcher_caches("python3", &none, home).is_empty());
    }

    #[test]
    fn the_strict_policy_hides_keys_and_the_hosts_own_tokens() {
        let policy = Policy::strict(
            Some(Path::new("/home/ada")),
            Some(Path::new("/home/ada/.local/state/prise")),
        );
        for secret in [
            "/home/ada/.ssh",
            "/home/ada/.aws",
            "/home/ada/.gnupg",
            "/home/ada/.local/state/prise",
            "/etc/shadow",
        ] {
            assert!(
                policy.deny_read.contains(&PathBuf::from(secret)),
                "{secret}"
            );
        }
        assert_eq!(policy.network, Network::Denied);
        assert!(policy.allow_write.is_empty());
    }
}
