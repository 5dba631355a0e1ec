//! `prise tools SERVER__TOOL`: one tool in detail, as its server declares it and as
//! the model is sent it.

use std::io::Write;

use prise_mcp::ExposedTool;
use serde_json::{Value, json};

use crate::failure::Failure;
use crate::output::{self, revealed};

/// Prints one tool: title, description, each parameter, annotations and output
/// schema as text; with `json`, the server's definition and the model's side by side.
pub fn tool(tool: &ExposedTool, provider: prise_llm::Provider, json: bool) -> Result<(), Failure> {
    let table = prise_agent::ToolTable::new(std::slice::from_ref(tool), provider.schema_dialect());
    let sent = &table.definitions()[0];
    let mut out = output::stdout();
    if json {
        output::json(
            &mut out,
            &json!({
                "name": tool.name,
                "server": tool.server,
                "tool": tool.tool,
                "model": {"name": sent.name, "description": sent.description, "parameters": sent.parameters},
            }),
        )?;
    } else {
        write_text(&mut out, tool)?;
    }
    out.flush()?;
    Ok(())
}

fn write_text(out: &mut impl Write, exposed: &ExposedTool) -> std::io::Result<()> {
    let tool = &exposed.tool;
    // Everything here comes from the server: shown, never obeyed by the terminal.
    let p = |text: &str| revealed(text).into_owned();
    writeln!(out, "{}", p(&exposed.name))?;
    let title = tool
        .title
        .as_deref()
        .or(tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
    if let Some(title) = title {
        writeln!(out, "  {}", p(title))?;
    }
    writeln!(
        out,
        "  server {}, tool {}",
        p(&exposed.server),
        p(&tool.name)
    )?;
    if let Some(description) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
        writeln!(out)?;
        for line in description.trim().lines() {
            writeln!(out, "  {}", p(line))?;
        }
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let parameters = parameters(&schema);
    writeln!(out, "\nParameters:")?;
    if parameters.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for parameter in parameters {
        let mut facts = vec![parameter.kind];
        if parameter.required {
            facts.push("required".to_owned());
        }
        if let Some(default) = parameter.default {
            facts.push(format!("default {default}"));
        }
        if let Some(choices) = parameter.choices {
            facts.push(format!("one of {choices}"));
        }
        writeln!(out, "  {} ({})", p(&parameter.name), p(&facts.join(", ")))?;
        if let Some(description) = parameter.description {
            for line in description.trim().lines() {
                writeln!(out, "      {}", p(line))?;
            }
        }
    }
    if let Some(annotations) = &tool.annotations {
        let hint = |name: &str, value: Option<bool>| {
            value.map(|v| format!("{name}: {}", if v { "yes" } else { "no" }))
        };
        let hints: Vec<String> = [
            hint("read-only", annotations.read_only_hint),
            hint("destructive", annotations.destructive_hint),
            hint("idempotent", annotations.idempotent_hint),
            hint("open world", annotations.open_world_hint),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !hints.is_empty() {
            writeln!(
                out,
                "\nAnnotations (hints from the server): {}",
                hints.join(", ")
            )?;
        }
    }
    if let Some(output_schema) = &tool.output_schema {
        writeln!(out, "\nOutput schema:")?;
        let text = serde_json::to_string_pretty(output_schema.as_ref()).unwrap_or_default();
        for line in text.lines() {
            writeln!(out, "  {}", p(line))?;
        }
    }
    Ok(())
}

/// One property of an input schema, for a person.
struct Parameter {
    name: String,
    /// `string`, `integer`, `array of string`, `string | null`...
    kind: String,
    required: bool,
    default: Option<String>,
    choices: Option<String>,
    description: Option<String>,
}

fn parameters(schema: &Value) -> Vec<Parameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| Parameter {
            name: name.clone(),
            kind: kind(property),
            required: required.contains(&name.as_str()),
            default: property.get("default").map(Value::to_string),
            choices: property
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(" | ")
                }),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
        .collect()
}

/// A property's type in a few words.
fn kind(property: &Value) -> String {
    match property.get("type") {
        Some(Value::String(kind)) if kind == "array" => match property.get("items") {
            Some(items) => format!("array of {}", kind_of_items(items)),
            None => "array".to_owned(),
        },
        Some(Value::String(kind)) => match property.get("format").and_then(Value::as_str) {
            Some(format) => format!("{kind}, {format}"),
            None => kind.clone(),
        },
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => ["anyOf", "oneOf"]
            .iter()
            .find_map(|key| property.get(*key).and_then(Value::as_array))
            .map(|options| options.iter().map(kind).collect::<Vec<_>>().join(" | "))
            .unwrap_or_else(|| {
                if property.get("$ref").is_some() {
                    "object".to_owned()
                } else {
                    "any".to_owned()
                }
            }),
    }
}

fn kind_of_items(items: &Value) -> String {
    let inner = kind(items);
    if inner.contains(' ') {
        format!("({inner})")
    } else {
        inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_in_a_few_words() {
        assert_eq!(kind(&json!({"type": "string"})), "string");
        assert_eq!(
            kind(&json!({"type": "string", "format": "date"})),
            "string, date"
        );
        assert_eq!(kind(&json!({"type": ["string", "null"]})), "string | null");
        assert_eq!(
            kind(&json!({"type": "array", "items": {"type": "integer"}})),
            "array of integer"
        );
        assert_eq!(
            kind(&json!({"anyOf": [{"type": "string"}, {"type": "number"}]})),
            "string | number"
        );
        assert_eq!(kind(&json!({})), "any");
    }
}
