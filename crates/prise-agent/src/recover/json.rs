//! JSON written into a reply: every value in a piece of text, and the calls they are.

use serde_json::Value;

use super::Found;

/// Text longer than this is not scanned for JSON: a reply that long is an answer.
const MAX_SCAN: usize = 256 * 1024;

/// A JSON value found in text.
#[derive(Debug)]
pub(super) struct JsonValue {
    /// Where it starts and ends (its closing brace included).
    pub at: usize,
    pub end: usize,
    pub value: Value,
}

/// Every JSON object or array of objects in `text`, in order, not one inside
/// another. Doubled braces (`{{"name": ...}}`, a template's escaping copied) count as
/// single ones.
pub(super) fn values(text: &str) -> Vec<JsonValue> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len().min(MAX_SCAN) {
        if bytes[i] != b'{' && bytes[i] != b'[' {
            i += 1;
            continue;
        }
        if let Some((value, len)) = parse_at(&text[i..]) {
            if is_interesting(&value) {
                found.push(JsonValue {
                    at: i,
                    end: i + len,
                    value,
                });
                i += len;
                continue;
            }
        } else if text[i..].starts_with("{{")
            && let Some((value, len)) = parse_at(&text[i + 1..])
        {
            let after = &text[i + 1 + len..];
            let trimmed = after.trim_start();
            if value.is_object() && trimmed.starts_with('}') {
                let close = i + 1 + len + (after.len() - trimmed.len()) + 1;
                found.push(JsonValue {
                    at: i,
                    end: close,
                    value,
                });
                i = close;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// The JSON value at the start of `text`, and its length.
fn parse_at(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

/// Objects, and arrays that hold objects: what calls are made of.
fn is_interesting(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(Value::is_object),
        _ => false,
    }
}

/// The calls a JSON value is: `{"name": ..., "arguments": ...}` in its common
/// spellings (`parameters`, `args`, `input`), OpenAI's `{"function": {...}}` and
/// `{"tool_calls": [...]}`, and arrays of them.
pub(super) fn calls(value: &Value, at: usize) -> Vec<Found> {
    match value {
        Value::Array(items) => items.iter().flat_map(|item| calls(item, at)).collect(),
        Value::Object(map) => {
            if let Some(Value::Array(list)) = map.get("tool_calls") {
                return list.iter().flat_map(|item| calls(item, at)).collect();
            }
            if let Some(function @ Value::Object(inner)) = map.get("function")
                && inner.contains_key("name")
            {
                let mut found = calls(function, at);
                for call in &mut found {
                    call.invented |= invented(map);
                }
                return found;
            }
            let name = ["name", "tool_name", "tool", "function"]
                .iter()
                .find_map(|key| map.get(*key).and_then(Value::as_str));
            let Some(name) = name else {
                return Vec::new();
            };
            let arguments = [
                "arguments",
                "parameters",
                "args",
                "input",
                "tool_input",
                "kwargs",
            ]
            .iter()
            .find_map(|key| map.get(*key))
            .map(|value| match value {
                // Arguments written as a JSON string.
                Value::String(text) => {
                    serde_json::from_str(text).unwrap_or(Value::String(text.clone()))
                }
                other => other.clone(),
            })
            .unwrap_or(Value::Null);
            vec![Found {
                at,
                name: name.to_owned(),
                arguments,
                invented: invented(map),
            }]
        }
        _ => Vec::new(),
    }
}

/// An object that carries the result of its own call: the model imagined it.
fn invented(map: &serde_json::Map<String, Value>) -> bool {
    [
        "result",
        "results",
        "output",
        "response",
        "observation",
        "tool_response",
    ]
    .iter()
    .any(|key| map.contains_key(*key))
}

/// Why `text` looks like a call of an offered tool that is not valid JSON, if it does:
/// `"name": "x"` for a tool `x`, in something that did not parse.
pub(super) fn broken_call(text: &str, resolve: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let mut rest = text;
    while let Some(i) = rest.find("\"name\"") {
        let after = rest[i + 6..].trim_start();
        if let Some(value) = after.strip_prefix(':') {
            let value = value.trim_start();
            if let Some(inner) = value.strip_prefix('"')
                && let Some(end) = inner.find('"')
                && resolve(&inner[..end]).is_some()
            {
                return Some(format!("its call of {} is not valid JSON", &inner[..end]));
            }
        }
        rest = &rest[i + 6..];
    }
    None
}
