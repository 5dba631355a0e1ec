//! Answering a server's request for input from the user (elicitation, form mode).

use std::future::Future;
use std::pin::Pin;

use rmcp::model::JsonObject;
use serde_json::Value;

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation {
    /// The user filled the form.
    Accept(JsonObject),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// A future answer.
pub type ElicitationFuture = Pin<Box<dyn Future<Output = Elicitation> + Send>>;

/// Who answers servers' questions: the terminal in interactive use, a policy otherwise.
pub trait Elicitor: Send + Sync + std::fmt::Debug + 'static {
    /// Answers `message` from `server`, whose form is described by the JSON schema
    /// `schema` (an object of primitive properties).
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture;
}

/// Declines every question, saying so on the log: for runs with nobody to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct Decline;

impl Elicitor for Decline {
    fn elicit(&self, server: &str, message: &str, _schema: &Value) -> ElicitationFuture {
        tracing::warn!(
            "server {server} asked for input ({message:?}); declined because nobody can answer (not interactive)"
        );
        Box::pin(std::future::ready(Elicitation::Decline))
    }
}

/// Accepts every question with the defaults its schema gives, for automation and the
/// conformance suite's client scenarios.
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit(&self, _server: &str, _message: &str, schema: &Value) -> ElicitationFuture {
        Box::pin(std::future::ready(Elicitation::Accept(defaults(schema))))
    }
}

/// The `default` of each property of a form schema.
pub fn defaults(schema: &Value) -> JsonObject {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

/// A server's question (elicitation, form mode) read once: its fields, with their
/// kinds, choices and bounds. The terminal asks them line by line ([`Field::parse`]),
/// the page shows them as a form; an answer made either way is held to the same
/// [`Form::check`] before the server is sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// The fields, in the schema's order.
    pub fields: Vec<Field>,
}

/// One field of a [`Form`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name.
    pub name: String,
    /// What a person is shown: its title, else its description, else its name.
    pub label: String,
    /// Whether an answer must give it.
    pub required: bool,
    /// What it holds when left empty.
    pub default: Option<Value>,
    /// The values it may take, when it is a choice.
    pub choices: Vec<Choice>,
    /// Whether it takes several values (an array).
    pub multiple: bool,
    property: Value,
}

/// A value a field may take, and the title a person may know it by.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value sent.
    pub value: String,
    /// Its title, when the schema gives one.
    pub title: Option<String>,
}

/// Why an answer does not fit its form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct FormError {
    /// The field at fault.
    pub field: String,
    /// What is wrong with it, in words for the person who answers.
    pub why: String,
}

impl Form {
    /// The form a requested schema describes (an object of primitive properties).
    pub fn of(schema: &Value) -> Form {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let fields = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, property)| Field {
                name: name.clone(),
                label: property
                    .get("title")
                    .or(property.get("description"))
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_owned(),
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
                choices: choices(property),
                multiple: is_array(property),
                property: property.clone(),
            })
            .collect();
        Form { fields }
    }

    /// `content` held to the form: every required field given, each value of its
    /// field's kind and within its bounds (a number given as text is read as one),
    /// and nothing the form does not ask. The content as the server is sent it.
    pub fn check(&self, content: &JsonObject) -> Result<JsonObject, FormError> {
        if let Some(unknown) = content
            .keys()
            .find(|name| !self.fields.iter().any(|f| &f.name == *name))
        {
            return Err(FormError {
                field: unknown.clone(),
                why: "the question asks for no such field".to_owned(),
            });
        }
        let mut checked = JsonObject::new();
        for field in &self.fields {
            let Some(value) = content.get(&field.name) else {
                if field.required {
                    return Err(field.error("it is required"));
                }
                continue;
            };
            let value = field.check(value).map_err(|why| field.error(&why))?;
            checked.insert(field.name.clone(), value);
        }
        Ok(checked)
    }
}

impl Field {
    /// The field's answer typed as `text` on a line, as its JSON value: a choice by
    /// its value or title, several separated by commas, a number, yes or no.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        if self.multiple {
            let items: Vec<Value> = text
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| self.one(item))
                .collect::<Result<_, _>>()?;
            return self.count(Value::Array(items));
        }
        self.one(text)
    }

    /// One value typed as text.
    fn one(&self, text: &str) -> Result<Value, String> {
        if !self.choices.is_empty() {
            return self.choose(text);
        }
        let value = match self.kind() {
            Some("integer") => text
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "enter a whole number".to_owned())?,
            Some("number") => text
                .parse::<f64>()
                .map(Value::from)
                .map_err(|_| "enter a number".to_owned())?,
            Some("boolean") => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err("answer yes or no".to_owned()),
            },
            _ => Value::String(text.to_owned()),
        };
        self.bounded(value)
    }

    /// A JSON value given for the field (by the page), held to it.
    fn check(&self, value: &Value) -> Result<Value, String> {
        match (value, self.multiple) {
            (Value::Array(items), true) => {
                let items = items
                    .iter()
                    .map(|item| self.check_one(item))
                    .collect::<Result<Vec<_>, _>>()?;
                self.count(Value::Array(items))
            }
            (Value::String(text), true) => self.parse(text),
            (_, true) => Err("give a list".to_owned()),
            (value, false) => self.check_one(value),
        }
    }

    fn check_one(&self, value: &Value) -> Result<Value, String> {
        let kind = self.kind();
        match value {
            // Text from a form field: read as the terminal reads a line.
            Value::String(text) if !self.choices.is_empty() || kind != Some("string") => {
                self.one(text)
            }
            Value::String(_) if kind == Some("string") => self.bounded(value.clone()),
            Value::Bool(_) if kind == Some("boolean") => Ok(value.clone()),
            Value::Number(n) if kind == Some("integer") && (n.is_i64() || n.is_u64()) => {
                self.bounded(value.clone())
            }
            Value::Number(_) if kind == Some("number") => self.bounded(value.clone()),
            _ => Err(format!("expected {}", kind.unwrap_or("a value"))),
        }
    }

    fn choose(&self, text: &str) -> Result<Value, String> {
        match self.choices.iter().find(|c| c.is(text)) {
            Some(choice) => Ok(Value::String(choice.value.clone())),
            None => Err(format!(
                "choose among: {}",
                self.choices
                    .iter()
                    .map(Choice::shown)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// `items` within `minItems` and `maxItems`.
    fn count(&self, items: Value) -> Result<Value, String> {
        let count = items.as_array().map_or(0, Vec::len) as u64;
        if let Some(min) = self.property.get("minItems").and_then(Value::as_u64)
            && count < min
        {
            return Err(format!("give at least {min}"));
        }
        if let Some(max) = self.property.get("maxItems").and_then(Value::as_u64)
            && count > max
        {
            return Err(format!("give at most {max}"));
        }
        Ok(items)
    }

    /// `value` within the field's bounds: a number's `minimum` and `maximum`, a
    /// text's `minLength`, `maxLength` and `format` (email, uri, date, date-time).
    fn bounded(&self, value: Value) -> Result<Value, String> {
        let bound = |key: &str| self.property.get(key).and_then(Value::as_f64);
        if let Some(n) = value.as_f64() {
            if let Some(min) = bound("minimum")
                && n < min
            {
                return Err(format!("enter at least {min}"));
            }
            if let Some(max) = bound("maximum")
                && n > max
            {
                return Err(format!("enter at most {max}"));
            }
        }
        if let Some(text) = value.as_str() {
            let length = text.chars().count() as f64;
            if let Some(min) = bound("minLength")
                && length < min
            {
                return Err(format!("enter at least {min} characters"));
            }
            if let Some(max) = bound("maxLength")
                && length > max
            {
                return Err(format!("enter at most {max} characters"));
            }
            let format = self.property.get("format").and_then(Value::as_str);
            if let Some(format) = format
                && !fits_format(format, text)
            {
                return Err(format!("enter {}", format_words(format)));
            }
        }
        Ok(value)
    }

    /// The JSON type of one value (of the items, for a list).
    fn kind(&self) -> Option<&str> {
        let of = if self.multiple {
            self.property.get("items")?
        } else {
            &self.property
        };
        of.get("type").and_then(Value::as_str)
    }

    fn error(&self, why: &str) -> FormError {
        FormError {
            field: self.name.clone(),
            why: why.to_owned(),
        }
    }
}

impl Choice {
    /// How a person is shown it: `value=Title`, or the value.
    pub fn shown(&self) -> String {
        match &self.title {
            Some(title) if *title != self.value => format!("{}={title}", self.value),
            _ => self.value.clone(),
        }
    }

    /// Whether `text` names it, by value or (in any case) by title.
    pub fn is(&self, text: &str) -> bool {
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
pub fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The choices of an enum field, in every form the spec allows: `enum` (with the
/// legacy `enumNames` titles), titled `oneOf`/`anyOf` of `const`s, and both again
/// under `items` for multi-select arrays.
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

/// Whether `text` has the shape of `format` (the formats the spec allows a
/// question's string fields); an unknown format takes anything.
fn fits_format(format: &str, text: &str) -> bool {
    let digits =
        |part: &str, count: usize| part.len() == count && part.bytes().all(|b| b.is_ascii_digit());
    let date = |text: &str| {
        let parts: Vec<&str> = text.split('-').collect();
        parts.len() == 3
            && digits(parts[0], 4)
            && digits(parts[1], 2)
            && digits(parts[2], 2)
            && (1..=12).contains(&parts[1].parse::<u32>().unwrap_or(0))
            && (1..=31).contains(&parts[2].parse::<u32>().unwrap_or(0))
    };
    match format {
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !text.contains(char::is_whitespace)
        }),
        "uri" => text.split_once(':').is_some_and(|(scheme, rest)| {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !text.contains(char::is_whitespace)
        }),
        "date" => date(text),
        "date-time" => text
            .split_once(['T', 't'])
            .is_some_and(|(day, time)| date(day) && time.len() >= 8 && time.as_bytes()[2] == b':'),
        _ => true,
    }
}

/// What a `format` asks for, in words.
fn format_words(format: &str) -> &'static str {
    match format {
        "email" => "an email address",
        "uri" => "a URI (scheme:...)",
        "date" => "a date, YYYY-MM-DD",
        "date-time" => "a date and time, YYYY-MM-DDThh:mm:ss",
        _ => "a value of the asked format",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Form {
        Form::of(
            &json!({"type": "object", "required": ["email", "age"], "properties": {
                "email": {"type": "string", "format": "email", "title": "Your email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
                "when": {"type": "string", "format": "date"},
                "ok": {"type": "boolean"}
            }}),
        )
    }

    #[test]
    fn answers_from_the_page_are_held_to_the_form() {
        let form = form();
        let answer = |content: serde_json::Value| form.check(content.as_object().unwrap());
        let good = answer(json!({"email": "a@b.org", "age": "41", "size": "Large", "tags": ["a", "c"], "ok": true}))
            .unwrap();
        assert_eq!(good["age"], 41, "a number given as text is read as one");
        assert_eq!(
            good["size"], "l",
            "a choice by its title is sent by its value"
        );
        let why = |content| answer(content).unwrap_err().to_string();
        assert_eq!(why(json!({"age": 3})), "email: it is required");
        assert_eq!(
            why(json!({"email": "nobody", "age": 3})),
            "email: enter an email address"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 151})),
            "age: enter at most 150"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 1.5})),
            "age: expected integer"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 1, "tags": ["a", "b", "c"]})),
            "tags: give at most 2"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 1, "tags": ["z"]})),
            "tags: choose among: a, b, c"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 1, "when": "2026-13-01"})),
            "when: enter a date, YYYY-MM-DD"
        );
        assert_eq!(
            why(json!({"email": "a@b.org", "age": 1, "extra": 1})),
            "extra: the question asks for no such field"
        );
    }

    #[test]
    fn lines_from_the_terminal_are_read_by_the_same_fields() {
        let form = form();
        let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(field("email").label, "Your email");
        assert_eq!(field("age").parse("30"), Ok(json!(30)));
        assert!(field("age").parse("thirty").is_err());
        assert_eq!(field("tags").parse("a, c"), Ok(json!(["a", "c"])));
        assert_eq!(field("ok").parse("yes"), Ok(json!(true)));
        assert_eq!(field("size").parse("small"), Ok(json!("s")));
        assert_eq!(field("when").parse("2026-12-02"), Ok(json!("2026-12-02")));
    }

    #[test]
    fn defaults_of_each_kind() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"}
        }});
        let got = defaults(&schema);
        assert_eq!(got.len(), 3);
        assert_eq!(got["age"], 30);
        assert_eq!(got["verified"], true);
    }

    /// The terminal's reading of `text` for a field of `property`.
    fn parse(property: &serde_json::Value, text: &str, _: &[Choice]) -> Result<Value, String> {
        Form::of(&json!({"properties": {"f": property}})).fields[0].parse(text)
    }

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
