//! Which protocol era each server spoke last time, so that `auto` asks directly.
//!
//! Probing costs a round trip with servers of the dated era, and up to ten seconds
//! (rmcp's limit) with a server that silently drops `server/discover`. A server rarely
//! changes era, so the answer is kept in a small JSON file in the state directory and
//! the probe is paid once. A wrong guess costs one failed attempt, after which prise
//! probes again and remembers the new answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use prise_config::{Server, Transport};

/// A remembered era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize`, dated versions.
    Legacy,
    /// `server/discover`, 2026-07-28.
    Modern,
}

/// Serialises read-modify-write of the file among the mounts of this process.
static LOCK: Mutex<()> = Mutex::new(());

/// The file `eras.json` and the key of each server in it.
#[derive(Debug, Clone)]
pub struct EraCache {
    path: PathBuf,
}

impl EraCache {
    /// A cache kept in `path`.
    pub fn at(path: impl Into<PathBuf>) -> EraCache {
        EraCache { path: path.into() }
    }

    /// The era `server` spoke last time, if it was remembered for the same command or URL.
    pub fn get(&self, server: &Server) -> Option<Era> {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        read(&self.path).get(&key(server)).copied()
    }

    /// Remembers `era` for `server`. Failing to write is not an error: it only costs a
    /// probe next time.
    pub fn put(&self, server: &Server, era: Era) {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut eras = read(&self.path);
        if eras.insert(key(server), era) == Some(era) {
            return;
        }
        let Ok(text) = serde_json::to_string_pretty(&eras) else {
            return;
        };
        let tmp = self.path.with_extension("json.tmp");
        let written = self
            .path
            .parent()
            .is_none_or(|dir| std::fs::create_dir_all(dir).is_ok())
            && std::fs::write(&tmp, text).is_ok()
            && std::fs::rename(&tmp, &self.path).is_ok();
        if !written {
            tracing::debug!(
                "could not remember protocol eras in {}",
                self.path.display()
            );
        }
    }
}

fn read(path: &Path) -> BTreeMap<String, Era> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The server's name with what it runs or where it lives: a server whose command or
/// URL changed is probed anew.
fn key(server: &Server) -> String {
    let target = match &server.transport {
        Transport::Stdio(stdio) => std::iter::once(stdio.command.as_str())
            .chain(stdio.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http(remote) | Transport::Sse(remote) => remote.url.clone(),
    };
    format!("{} {target}", server.name)
}
