//! Tools, prompts and resource templates judged against their pins
//! (`prise_trust::pins`), and tools screened (`prise_trust::screen`), as each listing
//! arrives: in strict mode a definition that is not the one pinned, that a pinned
//! server added, or (for a tool) that has findings nobody accepted, is withheld (from
//! [`crate::Mount::tools`], [`crate::Mount::prompts`] and
//! [`crate::Mount::resource_templates`], hence from models and the gateway, and from
//! calls); in warn mode it is used, with a warning. Screening here sees one server's
//! tools; `prise scan` also compares them with the others'.

use prise_config::{Pinning, Server, Transport};
use prise_trust::pins::{Change, Declaration, PinFiles, PinSlot};

use crate::catalog::Catalog;

/// What is withheld: a tool, prompt or template, by the server's name for it (a
/// template's URI template), and how it differs from its pin.
pub type Withholding = (Declaration, String, Change);
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
    warned: std::sync::Mutex<Vec<Withholding>>,
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

    /// The definition pinned for `name`.
    pub fn pinned(&self, declaration: Declaration, name: &str) -> Option<Value> {
        self.pins
            .pinned(declaration, name)
            .map(|pin| pin.definition)
    }

    /// Pins `definition` as it is now; where.
    pub fn accept(
        &self,
        declaration: Declaration,
        definition: &Value,
    ) -> Result<std::path::PathBuf, String> {
        self.pins.accept(declaration, definition)?;
        Ok(self.pins.path().to_owned())
    }

    /// What of `catalog` to withhold, with why; warned about either way.
    pub fn withheld(&self, catalog: &Catalog) -> Vec<Withholding> {
        let tools = definitions(&catalog.tools);
        let prompts = definitions(&catalog.prompts);
        let templates = definitions(&catalog.templates);
        let mut judged: Vec<Withholding> = Vec::new();
        for (declaration, items) in [
            (Declaration::Tool, &tools),
            (Declaration::Prompt, &prompts),
            (Declaration::ResourceTemplate, &templates),
        ] {
            match self.pins.judge(&self.identity, declaration, items) {
                Ok(found) => judged.extend(
                    found
                        .into_iter()
                        .map(|(name, change)| (declaration, name, change)),
                ),
                Err(e) => {
                    tracing::warn!(server = %self.server, "pins: {e}");
                    return Vec::new();
                }
            }
        }
        for (tool, definition) in catalog.tools.iter().zip(&tools) {
            if judged
                .iter()
                .any(|(d, name, _)| *d == Declaration::Tool && *name == tool.name)
            {
                continue;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            let declared = prise_trust::screen::Declared {
                name: &tool.name,
                description: tool.description.as_deref().unwrap_or_default(),
                input_schema: &schema,
            };
            if !prise_trust::screen::screen(&declared, &[]).is_empty()
                && !self.pins.accepted(Declaration::Tool, definition)
            {
                judged.push((Declaration::Tool, tool.name.to_string(), Change::Flagged));
            }
        }
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        for (declaration, name, change) in judged.iter().filter(|j| !warned.contains(j)) {
            let outcome = if self.strict {
                format!("withheld until `prise trust {} {name}`", self.server)
            } else {
                "used anyway (\"pinning\": \"warn\")".to_owned()
            };
            tracing::warn!(server = %self.server, "{} {name} {}; {outcome}", declaration.word(), change.describe());
        }
        warned.clone_from(&judged);
        if self.strict { judged } else { Vec::new() }
    }
}

/// One definition per item, in order (each always serialises).
fn definitions<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .map(|item| serde_json::to_value(item).unwrap_or_default())
        .collect()
}
