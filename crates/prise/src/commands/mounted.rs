//! Mounting the configured servers (or the embedded docs server) for a command.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use prise_mcp::{MountOptions, Mounts, Source};

use crate::commands::config;
use crate::failure::Failure;
use crate::output::revealed;

/// The name of the embedded documentation server when no configuration is found.
pub const DEFAULT_SERVER: &str = "docs";

/// Mounts every server of the configuration, or prise's own docs server when there is
/// no configuration. Servers that fail are reported on stderr and left out.
pub async fn mount(path: Option<&Path>, roots: &[PathBuf]) -> Result<Mounts, Failure> {
    report(mount_quietly(path, roots).await?)
}

/// Prints the servers that failed to mount as warnings on stderr.
pub fn report(mounts: Mounts) -> Result<Mounts, Failure> {
    for failure in mounts.failures() {
        eprintln!("warning: {}", revealed(&failure.to_string()));
        // A server's own words: shown, never obeyed by the terminal.
        for line in &failure.stderr_tail {
            eprintln!("  | {}", revealed(line));
        }
        if let Some(log) = &failure.log {
            eprintln!("  (full stderr in {})", log.display());
        }
    }
    Ok(mounts)
}

/// [`mount`] without reporting failures, for commands whose output shows them.
pub async fn mount_quietly(path: Option<&Path>, roots: &[PathBuf]) -> Result<Mounts, Failure> {
    mount_config(config::load(path)?, roots).await
}

/// Mounts the servers of an already loaded configuration (or the embedded docs server).
pub async fn mount_config(
    config: Option<prise_config::Config>,
    roots: &[PathBuf],
) -> Result<Mounts, Failure> {
    let sources = match config {
        Some(config) => config.servers.into_iter().map(Source::from).collect(),
        None => {
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
    let mut options = MountOptions {
        elicitor: crate::elicitor::for_this_session(),
        ..MountOptions::default()
    };
    if !roots.is_empty() {
        options.roots = Some(
            roots
                .iter()
                .map(|dir| root(dir))
                .collect::<Result<_, _>>()?,
        );
    }
    let mounts = Mounts::start(sources, options).await;
    if interactive && count > 1 {
        eprint!("\x1b[2K");
    }
    Ok(mounts)
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
