//! Answering servers' questions (elicitation) on the terminal.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor};
use serde_json::{Map, Value};

use crate::output::revealed;
use crate::question::{self, Question};

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
        let asked = Question::new();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let Some(_terminal) = asked.turn() else {
                    return Elicitation::Cancel;
                };
                ask(&asked, &server, &message, &schema).unwrap_or(Elicitation::Cancel)
            })
            .await
            .unwrap_or(Elicitation::Cancel)
        })
    }
}

/// One form on the terminal; `None` when the terminal fails or the form is called off
/// (Ctrl-C in chat), which the server hears as a cancel.
fn ask(asked: &Question, server: &str, message: &str, schema: &Value) -> Option<Elicitation> {
    let mut err = std::io::stderr();
    // Everything shown comes from the server: printable, never obeyed.
    writeln!(
        err,
        "\nserver {} asks: {}",
        revealed(server),
        revealed(message)
    )
    .ok()?;
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
        let choices = choices(property);
        let default = property.get("default");
        loop {
            let mut prompt = format!("  {name}");
            if label != name {
                prompt.push_str(&format!(" ({label})"));
            }
            if !choices.is_empty() {
                let shown: Vec<String> = choices.iter().map(Choice::shown).collect();
                prompt.push_str(&format!(" {{{}}}", shown.join("|")));
            }
            if is_array(property) {
                prompt.push_str(" (several, separated by commas)");
            }
            if let Some(default) = default {
                prompt.push_str(&format!(" [{}]", plain(default)));
            }
            write!(err, "{}: ", revealed(&prompt)).ok()?;
            err.flush().ok()?;
            let line = match asked.read_line() {
                question::Answer::Line(line) => line,
                question::Answer::Cancelled => return None,
                question::Answer::Closed => {
                    writeln!(err).ok()?;
                    return Some(Elicitation::Decline);
                }
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
                Err(why) => writeln!(err, "  {}", revealed(&why)).ok()?,
            }
        }
    }
    Some(Elicitation::Accept(answers))
}

/// A value a field may take, and the title a person may know it by.
#[derive(Debug, PartialEq)]
struct Choice {
    value: String,
    title: Option<String>,
}

impl Choice {
    fn shown(&self) -> String {
        match &self.title {
            Some(title) if *title != self.value => format!("{}={title}", self.value),
            _ => self.value.clone(),
        }
    }

    fn is(&self, text: &str) -> bool {
        self.value == text
            || self
                .title
                .as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case(text))
    }
}

fn is_array(property: &Value) -> bool {
    property.get("type").and_then(Value::as_str) == Some("array")
}

/// A JSON value as a person would type it: strings bare, lists joined by commas.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The choices of an enum field, in every form the spec allows: `enum` (with the
/// legacy `enumNames` titles), titled `oneOf`/`anyOf` of `const`s, and both again under
/// `items` for multi-select arrays.
fn choices(property: &Value) -> Vec<Choice> {
    let source = if is_array(property) {
        property.get("items")
    } else {
        Some(property)
    };
    let Some(source) = source else {
        return Vec::new();
    };
    if let Some(values) = source.get("enum").and_then(Value::as_array) {
        let titles = source.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, value)| Choice {
                value: plain(value),
                title: titles
                    .and_then(|t| t.get(i))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
            .collect();
    }
    let options = source.get("oneOf").or(source.get("anyOf"));
    options
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|option| {
            Some(Choice {
                value: plain(option.get("const")?),
                title: option
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

/// An answer typed for a property, converted to its JSON type.
fn parse(property: &Value, text: &str, choices: &[Choice]) -> Result<Value, String> {
    let choose = |text: &str| -> Result<Value, String> {
        match choices.iter().find(|c| c.is(text)) {
            Some(choice) => Ok(Value::String(choice.value.clone())),
            None => Err(format!(
                "choose among: {}",
                choices
                    .iter()
                    .map(Choice::shown)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    };
    if is_array(property) {
        let items: Vec<Value> = text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                if choices.is_empty() {
                    Ok(Value::String(item.to_owned()))
                } else {
                    choose(item)
                }
            })
            .collect::<Result<_, _>>()?;
        let count = items.len() as u64;
        if let Some(min) = property.get("minItems").and_then(Value::as_u64)
            && count < min
        {
            return Err(format!("give at least {min}"));
        }
        if let Some(max) = property.get("maxItems").and_then(Value::as_u64)
            && count > max
        {
            return Err(format!("give at most {max}"));
        }
        return Ok(Value::Array(items));
    }
    if !choices.is_empty() {
        return choose(text);
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
    use super::{choices, parse};
    use serde_json::json;

    #[test]
    fn answers_take_their_property_type() {
        assert_eq!(parse(&json!({"type": "integer"}), "42", &[]), Ok(json!(42)));
        assert!(parse(&json!({"type": "integer"}), "4.2", &[]).is_err());
        assert_eq!(
            parse(&json!({"type": "number"}), "3.5", &[]),
            Ok(json!(3.5))
        );
        assert_eq!(
            parse(&json!({"type": "boolean"}), "Yes", &[]),
            Ok(json!(true))
        );
        assert_eq!(
            parse(&json!({"type": "string"}), "a b", &[]),
            Ok(json!("a b"))
        );
    }

    #[test]
    fn single_choices_in_every_form() {
        let plain = json!({"type": "string", "enum": ["a", "b"]});
        assert_eq!(parse(&plain, "a", &choices(&plain)), Ok(json!("a")));
        assert_eq!(
            parse(&plain, "c", &choices(&plain)),
            Err("choose among: a, b".to_owned())
        );
        // Titled (2025-11-25): the value or its title, in any case.
        let titled = json!({"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"},
                                                        {"const": "hero-2", "title": "Green Lantern"}]});
        assert_eq!(
            parse(&titled, "green lantern", &choices(&titled)),
            Ok(json!("hero-2"))
        );
        assert_eq!(
            parse(&titled, "hero-1", &choices(&titled)),
            Ok(json!("hero-1"))
        );
        assert_eq!(choices(&titled)[0].shown(), "hero-1=Superman");
        // Legacy enumNames.
        let legacy =
            json!({"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]});
        assert_eq!(
            parse(&legacy, "Dogs", &choices(&legacy)),
            Ok(json!("pet-2"))
        );
    }

    #[test]
    fn multiple_choices_are_separated_by_commas() {
        let untitled = json!({"type": "array", "minItems": 1, "maxItems": 2,
                              "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]}});
        let options = choices(&untitled);
        assert_eq!(
            parse(&untitled, "Piano, Drums", &options),
            Ok(json!(["Piano", "Drums"]))
        );
        assert_eq!(
            parse(&untitled, "Piano, Drums, Guitar", &options),
            Err("give at most 2".to_owned())
        );
        assert_eq!(
            parse(&untitled, " , ", &options),
            Err("give at least 1".to_owned())
        );
        assert!(parse(&untitled, "Banjo", &options).is_err());
        let titled = json!({"type": "array", "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"},
                                                                  {"const": "fish-2", "title": "Salmon"}]}});
        assert_eq!(
            parse(&titled, "salmon,fish-1", &choices(&titled)),
            Ok(json!(["fish-2", "fish-1"]))
        );
    }
}
