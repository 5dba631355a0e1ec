//! Tools judged against their pins (`prise_trust::pins`) and screened
//! (`prise_trust::screen`) as each listing arrives: in strict mode a tool whose
//! definition is not the one pinned, that a pinned server added, or that has findings
//! nobody accepted, is withheld (from [`crate::Mount::tools`], hence from models and
//! the gateway, and from calls); in warn mode it is used, with a warning. Screening
//! here sees one server's tools; `prise scan` also compares them with the others'.

use prise_config::{Pinning, Server, Transport};
use prise_trust::pins::{Change, PinFiles, PinSlot};
use rmcp::model::Tool;
use serde_json::{Value, json};

/// How one server's tools are judged.
#[derive(Debug)]
pub(crate) struct Vetting {
    server: String,
    /// Its command and arguments, or its URL: a server reconfigured to run something
    /// else is pinned afresh.
    identity: Value,
    pins: PinSlot,
    strict: bool,
    /// What was last judged, so that each change is warned about once.
    warned: std::sync::Mutex<Vec<(String, Change)>>,
}

impl Vetting {
    /// The vetting of `server`, when its pinning is on and it has a pin file; the
    /// client offers it `capabilities` beyond the questions every server may ask.
    pub fn of(server: &Server, files: Option<&PinFiles>, capabilities: &[&str]) -> Option<Vetting> {
        let strict = match server.pinning {
            Pinning::Off => return None,
            Pinning::Strict => true,
            Pinning::Warn => false,
        };
        let identity = match &server.transport {
            Transport::Stdio(stdio) => json!({"command": stdio.command, "args": stdio.args}),
            Transport::Http(remote) | Transport::Sse(remote) => json!({"url": remote.url}),
        };
        Some(Vetting {
            server: server.name.clone(),
            identity,
            pins: files?
                .for_server(&server.file, &server.name)?
                .offered(capabilities),
            strict,
            warned: Default::default(),
        })
    }

    /// The definition pinned for `tool`.
    pub fn pinned(&self, tool: &str) -> Option<Value> {
        self.pins.pinned(tool).map(|pin| pin.definition)
    }

    /// Pins `tool`'s definition as it is now; where.
    pub fn accept(&self, tool: &Tool) -> Result<std::path::PathBuf, String> {
        let definition = serde_json::to_value(tool).map_err(|e| e.to_string())?;
        self.pins.accept(&definition)?;
        Ok(self.pins.path().to_owned())
    }

    /// The tools of `listing` to withhold, with why; warned about either way.
    pub fn withheld(&self, listing: &[Tool]) -> Vec<(String, Change)> {
        // One definition per tool, in order (a tool always serialises).
        let definitions: Vec<Value> = listing
            .iter()
            .map(|tool| serde_json::to_value(tool).unwrap_or_default())
            .collect();
        let mut judged = match self.pins.judge(&self.identity, &definitions) {
            Ok(judged) => judged,
            Err(e) => {
                tracing::warn!(server = %self.server, "pins: {e}");
                return Vec::new();
            }
        };
        for (tool, definition) in listing.iter().zip(&definitions) {
            if judged.iter().any(|(name, _)| *name == tool.name) {
                continue;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            let declared = prise_trust::screen::Declared {
                name: &tool.name,
                description: tool.description.as_deref().unwrap_or_default(),
                input_schema: &schema,
            };
            if !prise_trust::screen::screen(&declared, &[]).is_empty()
                && !self.pins.accepted(definition)
            {
                judged.push((tool.name.to_string(), Change::Flagged));
            }
        }
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        for (tool, change) in judged.iter().filter(|j| !warned.contains(j)) {
            let outcome = if self.strict {
                format!("withheld until `prise trust {} {tool}`", self.server)
            } else {
                "used anyway (\"pinning\": \"warn\")".to_owned()
            };
            tracing::warn!(server = %self.server, "tool {tool} {}; {outcome}", change.describe());
        }
        warned.clone_from(&judged);
        if self.strict { judged } else { Vec::new() }
    }
}
