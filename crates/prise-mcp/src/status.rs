//! Each configured server as people and programs read it: one type that `prise
//! servers --json` and the web page both serialize, so that the two speak one
//! vocabulary.

use serde::Serialize;

use crate::error::MountFailure;
use crate::mounts::{Mounts, ServerState};

/// Where a configured server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Mounted and answering.
    Ready,
    /// Could not be mounted.
    Failed,
    /// `"disabled": true` in the configuration.
    Disabled,
}

/// One configured server: its state, what it said of itself, what it offers, and
/// why it failed when it did. Counts are `None` for a server not mounted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// Its name in the configuration.
    pub name: String,
    /// Where it stands.
    pub state: State,
    /// `stdio`, `http`, `sse` or `in-process`, once mounted.
    pub transport: Option<&'static str>,
    /// The protocol version it speaks.
    pub protocol_version: Option<String>,
    /// Its name and version, as it gave them.
    pub server_info: Option<rmcp::model::Implementation>,
    /// What it told clients about using it.
    pub instructions: Option<String>,
    /// Tools shown (filtered, not withheld).
    pub tools: Option<usize>,
    /// Resources listed.
    pub resources: Option<usize>,
    /// Resource templates shown.
    pub resource_templates: Option<usize>,
    /// Prompts shown.
    pub prompts: Option<usize>,
    /// From spawn or connect to listed, in milliseconds.
    pub startup_ms: Option<f64>,
    /// The process id of a stdio server.
    pub pid: Option<u32>,
    /// Why it failed, in words.
    pub error: Option<String>,
    /// Why it failed, as a kind (`needs-sign-in`, `timeout`, ...).
    pub failure: Option<MountFailure>,
    /// The last lines it wrote to stderr.
    pub stderr_tail: Vec<String>,
}

impl Mounts {
    /// Every configured server's status, in the order given.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.states()
            .into_iter()
            .map(|(name, state)| {
                let mount = self.mounts().iter().find(|m| m.name() == name);
                let info = mount.and_then(|m| m.peer_info());
                let catalog = mount.map(|m| m.catalog());
                let (state, error) = match state {
                    ServerState::Ready => (State::Ready, None),
                    ServerState::Failed(error) => (State::Failed, Some(error)),
                    ServerState::Disabled => (State::Disabled, None),
                };
                ServerStatus {
                    name,
                    state,
                    transport: mount.map(|m| m.transport()),
                    protocol_version: info.as_ref().map(|i| i.protocol_version.to_string()),
                    server_info: info.as_ref().and_then(|i| i.server_info.clone()),
                    instructions: info.as_ref().and_then(|i| i.instructions.clone()),
                    tools: mount.map(|m| m.tools().len()),
                    resources: catalog.as_ref().map(|c| c.resources.len()),
                    resource_templates: mount.map(|m| m.resource_templates().len()),
                    prompts: mount.map(|m| m.prompts().len()),
                    startup_ms: mount.map(|m| m.startup().as_secs_f64() * 1e3),
                    pid: mount.and_then(|m| m.pid()),
                    failure: error.as_ref().map(|e| e.kind),
                    stderr_tail: match (&error, mount) {
                        (Some(error), _) => error.stderr_tail.clone(),
                        (None, Some(mount)) => mount.stderr_tail(),
                        (None, None) => Vec::new(),
                    },
                    error: error.map(|e| e.cause),
                }
            })
            .collect()
    }
}
