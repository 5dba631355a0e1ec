//! What a command mounts: the configured servers (with those `--with` adds), all of
//! them or only the ones the command names, or prise's own docs server when nothing
//! is configured.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use prise_config::{Config, Server};
use prise_mcp::{MountOptions, Mounts, Source};

use crate::cli::ServerArgs;
use crate::commands::config;
use crate::failure::Failure;
use crate::output::revealed;

/// The name of the embedded documentation server when no configuration is found.
pub const DEFAULT_SERVER: &str = "docs";

/// The servers a command may mount, and the roots `--root` offers them.
pub struct Servers {
    /// The configuration with the `--with` servers; `None` when nothing is configured.
    pub config: Option<Config>,
    roots: Vec<PathBuf>,
}

/// Which servers a command needs: a command that names one server starts only that
/// one, so a slow or broken server elsewhere in the file costs it nothing.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// Every server (`servers`, `run`, `chat`, listings of everything).
    All,
    /// The server of this name (`tools S`, `read --server S`).
    Server(&'a str),
    /// The server an exposed name `server__name` belongs to (`call`, `prompt`). Names
    /// are not split: every server whose name, then `__`, starts it is a candidate.
    Owner(&'a str),
}

impl Servers {
    /// Reads the configuration the arguments point at (see [`config::load`]).
    pub fn load(args: &ServerArgs) -> Result<Servers, Failure> {
        Ok(Servers {
            config: config::load(args)?,
            roots: args.root.clone(),
        })
    }

    /// The configuration's `"model"` section (empty without a configuration).
    pub fn model_settings(&self) -> prise_config::ModelSettings {
        self.config
            .as_ref()
            .map(|c| c.model.clone())
            .unwrap_or_default()
    }

    /// Whether a server of this name is configured (or, with no configuration, is the
    /// embedded one).
    pub fn has_server(&self, name: &str) -> bool {
        match &self.config {
            Some(config) => config.servers.iter().any(|s| s.name == name),
            None => name == DEFAULT_SERVER,
        }
    }

    /// The configured server of this name.
    pub fn server(&self, name: &str) -> Result<&Server, Failure> {
        let servers = self
            .config
            .as_ref()
            .map(|c| c.servers.as_slice())
            .unwrap_or_default();
        servers
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| no_server(name, servers.iter().map(|s| s.name.as_str()), None))
    }

    /// Mounts what `wanted` needs, after checking that it names servers that exist
    /// and are enabled. Servers that fail are left out; see [`report`].
    pub async fn mount(self, wanted: Wanted<'_>) -> Result<Mounts, Failure> {
        self.start(wanted, Mounts::start).await
    }

    /// [`Servers::mount`], with `start` doing the mounting (the gateway starts its
    /// mounts itself, to answer their servers' questions).
    pub async fn start<T, F>(
        self,
        wanted: Wanted<'_>,
        start: impl FnOnce(Vec<Source>, MountOptions) -> F,
    ) -> Result<T, Failure>
    where
        F: Future<Output = T>,
    {
        let sources = match self.config {
            Some(config) => {
                let keep = selected(&config, wanted)?;
                config
                    .servers
                    .into_iter()
                    .filter(|s| keep.contains(&s.name))
                    .map(Source::from)
                    .collect()
            }
            None => {
                check_embedded(wanted)?;
                tracing::debug!(
                    "no configuration found; mounting the embedded docs server as `{DEFAULT_SERVER}`"
                );
                let stream = prise_servers::serve::in_process(prise_servers::embedded_docs());
                vec![Source::InProcess {
                    name: DEFAULT_SERVER.to_owned(),
                    stream,
                }]
            }
        };
        let count = sources.len();
        let interactive = std::io::stderr().is_terminal();
        if interactive && count > 1 {
            eprint!("mounting {count} servers…\r");
        }
        let events = tokio::sync::broadcast::channel(256).0;
        let mut options = MountOptions {
            elicitor: crate::elicitor::for_this_session(),
            sign_in: crate::sign_in::while_mounting(),
            events: Some(events.clone()),
            pins: Some(pin_files()?),
            ..MountOptions::default()
        };
        if !self.roots.is_empty() {
            options.roots = Some(
                self.roots
                    .iter()
                    .map(|dir| root(dir))
                    .collect::<Result<_, _>>()?,
            );
        }
        let starting: Vec<String> = sources
            .iter()
            .filter(|s| !matches!(s, Source::Configured(server) if server.disabled))
            .map(|s| s.name().to_owned())
            .collect();
        let watch = watch_starting(starting, events.subscribe());
        let mounts = start(sources, options).await;
        watch.abort();
        STILL_STARTING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        if interactive && count > 1 {
            eprint!("\x1b[2K");
        }
        Ok(mounts)
    }
}

/// Where prise pins tools: the project's `prise.lock` for the servers of its
/// configuration files (those found in the current folder, unless one is also the
/// user's, as `~/.mcp.json` is when prise runs in the home folder), and the state
/// folder's `pins.json` for the rest. A pin file that cannot be read is a
/// configuration error.
pub fn pin_files() -> Result<prise_trust::pins::PinFiles, Failure> {
    let state = prise_config::state_dir();
    let project = std::env::current_dir().ok().map(|dir| {
        let user = prise_config::user_files(&|name| std::env::var(name).ok());
        let user: Vec<PathBuf> = user.iter().filter_map(|f| f.canonicalize().ok()).collect();
        let files: Vec<PathBuf> = prise_config::project_files(&dir)
            .into_iter()
            .filter(|f| f.canonicalize().is_ok_and(|real| !user.contains(&real)))
            .collect();
        (dir, files)
    });
    prise_trust::pins::PinFiles::open(
        project
            .as_ref()
            .map(|(dir, files)| (dir.as_path(), files.as_slice())),
        state.as_deref(),
    )
    .map_err(|e| Failure::usage(e, None))
}

impl Servers {
    /// [`Servers::mount`] for a command that uses what it mounted: when it named a
    /// server and that server failed, that is the command's error (exit 1, with the
    /// server's last stderr lines); otherwise each failure is a warning.
    pub async fn mount_for(self, wanted: Wanted<'_>) -> Result<Mounts, Failure> {
        let mounts = self.mount(wanted).await?;
        if matches!(wanted, Wanted::All) || !mounts.mounts().is_empty() {
            return Ok(report(mounts));
        }
        let Some(failure) = mounts.failures().first().cloned() else {
            return Ok(mounts);
        };
        mounts.close().await;
        let mut message = revealed(&failure.to_string()).into_owned();
        for line in failure_details(&failure) {
            message.push('\n');
            message.push_str(&line);
        }
        Err(Failure::Job(anyhow::anyhow!(message)))
    }
}

/// The servers being mounted that have not finished starting, for a signal that comes
/// meanwhile to name them.
static STILL_STARTING: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The servers still starting, when a mount is under way.
pub fn still_starting() -> Vec<String> {
    STILL_STARTING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Keeps [`STILL_STARTING`] up to date as servers become ready or fail.
fn watch_starting(
    names: Vec<String>,
    mut events: tokio::sync::broadcast::Receiver<prise_mcp::MountEvent>,
) -> tokio::task::JoinHandle<()> {
    *STILL_STARTING.lock().unwrap_or_else(|e| e.into_inner()) = names;
    tokio::spawn(async move {
        use prise_mcp::MountEvent;
        while let Ok(event) = events.recv().await {
            if let MountEvent::Ready { server, .. } | MountEvent::Failed { server, .. } = event {
                STILL_STARTING
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|name| *name != server);
            }
        }
    })
}

/// Prints the servers that failed to mount as warnings on stderr.
pub fn report(mounts: Mounts) -> Mounts {
    warn_of_failures(mounts.failures());
    mounts
}

/// Each server that could not be mounted, as a warning on stderr.
pub fn warn_of_failures(failures: &[prise_mcp::MountError]) {
    for failure in failures {
        eprintln!("warning: {}", revealed(&failure.to_string()));
        for line in failure_details(failure) {
            eprintln!("{line}");
        }
    }
}

/// A failed server's last stderr lines (its own words: shown, never obeyed by the
/// terminal) and where its whole stderr is.
pub fn failure_details(failure: &prise_mcp::MountError) -> Vec<String> {
    let mut lines: Vec<String> = failure
        .stderr_tail
        .iter()
        .map(|line| format!("  | {}", revealed(line)))
        .collect();
    if let Some(log) = &failure.log {
        lines.push(format!("  (full stderr in {})", log.display()));
    }
    lines
}

/// The names of the servers `wanted` needs.
fn selected(config: &Config, wanted: Wanted<'_>) -> Result<Vec<String>, Failure> {
    let enabled = |server: &Server| -> Result<String, Failure> {
        if server.disabled {
            Err(Failure::usage(
                format!("server {} is disabled", server.name),
                format!(
                    "set \"disabled\": false for it in {} to use it",
                    server.file.display()
                ),
            ))
        } else {
            Ok(server.name.clone())
        }
    };
    let names = || config.servers.iter().map(|s| s.name.as_str());
    match wanted {
        Wanted::All => Ok(names().map(str::to_owned).collect()),
        Wanted::Server(name) => match config.servers.iter().find(|s| s.name == name) {
            Some(server) => Ok(vec![enabled(server)?]),
            None => Err(no_server(name, names(), None)),
        },
        Wanted::Owner(exposed) => {
            let owners: Vec<&Server> = config
                .servers
                .iter()
                .filter(|s| {
                    exposed
                        .strip_prefix(s.name.as_str())
                        .and_then(|rest| rest.strip_prefix(prise_mcp::registry::SEPARATOR))
                        .is_some_and(|rest| !rest.is_empty())
                })
                .collect();
            if owners.is_empty() {
                let server = exposed
                    .split_once(prise_mcp::registry::SEPARATOR)
                    .map_or(exposed, |(server, _)| server);
                return Err(no_server(server, names(), Some(exposed)));
            }
            let enabled_owners: Vec<String> = owners
                .iter()
                .filter(|s| !s.disabled)
                .map(|s| s.name.clone())
                .collect();
            if enabled_owners.is_empty() {
                return Err(enabled(owners[0]).unwrap_err());
            }
            Ok(enabled_owners)
        }
    }
}

/// With no configuration only the embedded docs server exists.
fn check_embedded(wanted: Wanted<'_>) -> Result<(), Failure> {
    let (server, from) = match wanted {
        Wanted::All => return Ok(()),
        Wanted::Server(name) => (name, None),
        Wanted::Owner(exposed) => (
            exposed
                .split_once(prise_mcp::registry::SEPARATOR)
                .map_or(exposed, |(server, _)| server),
            Some(exposed),
        ),
    };
    if server == DEFAULT_SERVER {
        Ok(())
    } else {
        Err(no_server(server, [DEFAULT_SERVER], from))
    }
}

/// `no server named NAME (from NAME__TOOL); did you mean ...?`
fn no_server<'a>(
    name: &str,
    names: impl IntoIterator<Item = &'a str>,
    from: Option<&str>,
) -> Failure {
    let suggestion = prise_mcp::registry::closest(name, names)
        .map(|s| format!("; did you mean {s}?"))
        .unwrap_or_default();
    let from = from.map(|f| format!(" (in {f})")).unwrap_or_default();
    Failure::usage(
        format!("no server named {name}{from}{suggestion}"),
        "`prise servers` lists the configured servers".to_owned(),
    )
}

/// A `--root` folder as an MCP root.
#[allow(deprecated)] // roots are deprecated by 2026-07-28; dated-era servers use them
fn root(dir: &Path) -> Result<prise_mcp::model::Root, Failure> {
    prise_mcp::folder_root(dir).map_err(|e| {
        Failure::usage(
            format!("--root {}: {e}", dir.display()),
            "give an existing folder".to_owned(),
        )
    })
}
