//! Mounted tools as models see them: names every provider accepts, schemas they parse.

use std::collections::HashMap;

use prise_llm::{SchemaDialect, ToolDefinition, adapt_schema};
use prise_mcp::ExposedTool;
use serde_json::{Value, json};

/// The built-in tool that reads MCP resources. Exposed names always contain `__`, so
/// no server's tool can take this name.
pub const READ_RESOURCE: &str = "read_resource";

/// Providers accept `^[a-zA-Z0-9_-]{1,64}$`.
const MAX_NAME: usize = 64;

/// The tools offered to the model, and the way back from its names to the mounts'.
#[derive(Debug, Clone, Default)]
pub struct ToolTable {
    definitions: Vec<ToolDefinition>,
    /// Model name → exposed name (`server__tool`).
    exposed: HashMap<String, String>,
    /// Exposed names of the tools that declare `readOnlyHint: true`.
    read_only: std::collections::HashSet<String>,
}

impl ToolTable {
    /// Presents `tools` (already filtered by each server's allowed/excluded globs) with
    /// schemas in `dialect`.
    pub fn new(tools: &[ExposedTool], dialect: SchemaDialect) -> ToolTable {
        let mut table = ToolTable::default();
        for tool in tools {
            let mut name = model_name(&tool.name);
            // Two exposed names that sanitise alike: the later one gets the hashed form.
            if table.exposed.contains_key(&name) {
                name = hashed(&sanitise(&tool.name), &tool.name);
            }
            table.exposed.insert(name.clone(), tool.name.clone());
            if tool
                .tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                == Some(true)
            {
                table.read_only.insert(tool.name.clone());
            }
            let mut hidden = 0;
            let description = visible(
                tool.tool.description.as_deref().unwrap_or_default(),
                &mut hidden,
            );
            let mut parameters =
                adapt_schema(&Value::Object((*tool.tool.input_schema).clone()), dialect);
            strip_hidden_descriptions(&mut parameters, &mut hidden);
            if hidden > 0 {
                tracing::warn!(
                    "tool {} hides {hidden} invisible characters in its description; they are removed \
                     before the model reads it (a server that hides text may be trying to instruct the model)",
                    tool.name
                );
            }
            table.definitions.push(ToolDefinition {
                name,
                description,
                parameters,
            });
        }
        table
    }

    /// Offers the built-in `read_resource(uri)` tool, for servers' resources;
    /// `example` is a URI the servers really offer, so that the model does not learn
    /// a near miss of one.
    pub fn add_resource_reader(&mut self, example: &str) {
        self.definitions.push(ToolDefinition {
            name: READ_RESOURCE.to_owned(),
            description: "Read a resource by its URI and return its contents. The resources, and the templates \
                          whose {placeholders} you may fill in, are listed in the instructions."
                .to_owned(),
            parameters: json!({"type": "object", "properties": {"uri": {"type": "string",
                "description": format!("The resource's URI, e.g. {example}")}}, "required": ["uri"]}),
        });
        self.read_only.insert(READ_RESOURCE.to_owned());
    }

    /// The definitions to send to the model.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// Whether the tool declares itself read-only (a hint from the server, trusted only
    /// as far as the approval policy's `allowReadOnly` says).
    pub fn read_only(&self, exposed: &str) -> bool {
        self.read_only.contains(exposed)
    }

    /// The model-facing name of the offered tool a model wrote as `written`: that name
    /// itself, the exposed `server__tool`, or the tool's own name when only one server
    /// has a tool of that name (small models drop the prefix).
    pub fn resolve(&self, written: &str) -> Option<String> {
        if self.exposed.contains_key(written)
            || (written == READ_RESOURCE && self.parameters(READ_RESOURCE).is_some())
        {
            return Some(written.to_owned());
        }
        if let Some((model, _)) = self.exposed.iter().find(|(_, e)| e.as_str() == written) {
            return Some(model.clone());
        }
        let suffix = format!("__{written}");
        let mut owners = self.exposed.iter().filter(|(_, e)| e.ends_with(&suffix));
        match (owners.next(), owners.next()) {
            (Some((model, _)), None) => Some(model.clone()),
            _ => None,
        }
    }

    /// The parameters (as sent to the model) of the tool the model calls `model_name`.
    pub fn parameters(&self, model_name: &str) -> Option<&Value> {
        self.definitions
            .iter()
            .find(|d| d.name == model_name)
            .map(|d| &d.parameters)
    }

    /// The exposed name (`server__tool`) behind a name the model used.
    pub fn exposed(&self, model_name: &str) -> Option<&str> {
        self.exposed.get(model_name).map(String::as_str)
    }
}

pub use prise_trust::screen::is_hidden;

/// `text` without its hidden characters, counting them into `hidden`.
fn visible(text: &str, hidden: &mut usize) -> String {
    let count = text.chars().filter(|&c| is_hidden(c)).count();
    *hidden += count;
    if count == 0 {
        text.to_owned()
    } else {
        text.chars().filter(|&c| !is_hidden(c)).collect()
    }
}

/// The same for every `description` inside a schema.
fn strip_hidden_descriptions(schema: &mut Value, hidden: &mut usize) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => *text = visible(text, hidden),
                    other => strip_hidden_descriptions(other, hidden),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| strip_hidden_descriptions(item, hidden)),
        _ => {}
    }
}

/// `server__tool` made safe for every provider: other characters become `_`, and a name
/// over 64 characters is cut and given a short hash of the whole, so it stays unique
/// and is the same on every run.
pub fn model_name(exposed: &str) -> String {
    let safe = sanitise(exposed);
    if safe.len() <= MAX_NAME {
        safe
    } else {
        hashed(&safe, exposed)
    }
}

fn sanitise(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "tool".to_owned()
    } else {
        safe
    }
}

/// The first 55 characters, `_`, and 8 hex digits of a hash of the original name.
fn hashed(safe: &str, original: &str) -> String {
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = original.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let head: String = safe.chars().take(MAX_NAME - 9).collect();
    format!("{head}_{:08x}", hash as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe_and_short() {
        assert_eq!(model_name("docs__grep_docs"), "docs__grep_docs");
        assert_eq!(model_name("my.server__get file"), "my_server__get_file");
        let long = format!("server__{}", "x".repeat(100));
        let short = model_name(&long);
        assert_eq!(short.len(), 64);
        assert_eq!(short, model_name(&long), "deterministic");
        assert_ne!(
            short,
            model_name(&format!("server__{}y", "x".repeat(99))),
            "distinct names stay distinct"
        );
        assert!(
            short
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }
}
