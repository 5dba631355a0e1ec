//! Answering servers' questions (elicitation) on the terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use serde_json::{Map, Value};

/// The terminal when a person is there (stdin and stderr are terminals), otherwise a
/// polite refusal that says why.
pub fn for_this_session() -> Arc<dyn Elicitor> {
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Arc::new(Terminal)
    } else {
        Arc::new(NotInteractive)
    }
}

/// Declines, with a warning on stderr naming the server and its question.
#[derive(Debug)]
struct NotInteractive;

impl Elicitor for NotInteractive {
    fn elicit(&self, server: &str, message: &str, _schema: &Value) -> ElicitationFuture {
        eprintln!(
            "warning: server {server} asked for input ({message:?}); declined because prise is not running in a terminal"
        );
        Box::pin(std::future::ready(Elicitation::Decline))
    }
}

/// Asks field by field on stderr, reading answers from stdin.
#[derive(Debug)]
struct Terminal;

impl Elicitor for Terminal {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        let (server, message, schema) = (server.to_owned(), message.to_owned(), schema.clone());
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                ask(&server, &message, &schema).unwrap_or(Elicitation::Cancel)
            })
            .await
            .unwrap_or(Elicitation::Cancel)
        })
    }
}

/// One form on the terminal; `None` when the terminal fails.
fn ask(server: &str, message: &str, schema: &Value) -> Option<Elicitation> {
    let mut err = std::io::stderr().lock();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    writeln!(err, "\nserver {server} asks: {message}").ok()?;
    writeln!(
        err,
        "  (Enter keeps the default in brackets; Ctrl-D declines)"
    )
    .ok()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut answers = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (name, property) in &properties {
        let label = property
            .get("title")
            .or(property.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(name);
        let choices: Vec<String> = property
            .get("enum")
            .and_then(Value::as_array)
            .map(|values| {
                values
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        let default = property.get("default");
        loop {
            let mut prompt = format!("  {name}");
            if label != name {
                prompt.push_str(&format!(" ({label})"));
            }
            if !choices.is_empty() {
                prompt.push_str(&format!(" {{{}}}", choices.join("|")));
            }
            if let Some(default) = default {
                prompt.push_str(&format!(
                    " [{}]",
                    default
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| default.to_string())
                ));
            }
            write!(err, "{prompt}: ").ok()?;
            err.flush().ok()?;
            let Some(Ok(line)) = lines.next() else {
                writeln!(err).ok()?;
                return Some(Elicitation::Decline);
            };
            let line = line.trim();
            if line.is_empty() {
                match default {
                    Some(default) => {
                        answers.insert(name.clone(), default.clone());
                        break;
                    }
                    None if !required.contains(&name.as_str()) => break,
                    None => {
                        writeln!(err, "  {name} is required").ok()?;
                        continue;
                    }
                }
            }
            match parse(property, line, &choices) {
                Ok(value) => {
                    answers.insert(name.clone(), value);
                    break;
                }
                Err(why) => writeln!(err, "  {why}").ok()?,
            }
        }
    }
    Some(Elicitation::Accept(answers))
}

/// An answer typed for a property, converted to its JSON type.
fn parse(property: &Value, text: &str, choices: &[String]) -> Result<Value, String> {
    if !choices.is_empty() && !choices.iter().any(|c| c == text) {
        return Err(format!("choose one of: {}", choices.join(", ")));
    }
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "enter a whole number".to_owned()),
        Some("number") => text
            .parse::<f64>()
            .map(Value::from)
            .map_err(|_| "enter a number".to_owned()),
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".to_owned()),
        },
        _ => Ok(Value::String(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn answers_take_their_property_type() {
        assert_eq!(parse(&json!({"type": "integer"}), "42", &[]), Ok(json!(42)));
        assert!(parse(&json!({"type": "integer"}), "4.2", &[]).is_err());
        assert_eq!(
            parse(&json!({"type": "boolean"}), "Yes", &[]),
            Ok(json!(true))
        );
        assert_eq!(
            parse(&json!({"type": "string"}), "a", &["a".into(), "b".into()]),
            Ok(json!("a"))
        );
        assert!(parse(&json!({"type": "string"}), "c", &["a".into(), "b".into()]).is_err());
    }
}
