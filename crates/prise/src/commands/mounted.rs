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

pub use prise_mcp::Wanted;

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
        servers.iter().find(|s| s.name == name).ok_or_else(|| {
            let unknown = Wanted::Server(name).select(servers).unwrap_err();
            planned(unknown)
        })
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
                let keep = wanted.select(&config.servers).map_err(planned)?;
                config
                    .servers
                    .into_iter()
                    .filter(|s| keep.contains(&s.name))
                    .map(Source::from)
                    .collect()
            }
            None => {
                wanted.select_only(DEFAULT_SERVER).map_err(planned)?;
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

/// Where prise pins tools (see [`PinFiles::for_folder`](prise_trust::pins::PinFiles::for_folder)):
/// the project's `prise.lock` for the servers of the configuration files in the
/// current folder, the state folder's `pins.json` for the rest. A pin file that
/// cannot be read is a configuration error.
pub fn pin_files() -> Result<prise_trust::pins::PinFiles, Failure> {
    let state = prise_config::state_dir();
    let pins = match std::env::current_dir() {
        Ok(dir) => prise_trust::pins::PinFiles::for_folder(
            &dir,
            &prise_config::project_files(&dir),
            &prise_config::user_files(&|name| std::env::var(name).ok()),
            state.as_deref(),
        ),
        Err(_) => prise_trust::pins::PinFiles::open(None, state.as_deref()),
    };
    pins.map_err(|e| Failure::usage(e, None))
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

/// Why a command's servers could not be chosen, as a usage error with its hint.
fn planned(error: prise_mcp::PlanError) -> Failure {
    let hint = match &error {
        prise_mcp::PlanError::Disabled { file, .. } => format!(
            "set \"disabled\": false for it in {} to use it",
            file.display()
        ),
        _ => "`prise servers` lists the configured servers".to_owned(),
    };
    Failure::usage(error, hint)
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
