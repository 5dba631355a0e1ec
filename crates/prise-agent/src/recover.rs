//! Tool calls that small local models write as text instead of using the API's
//! tool-call field: a JSON object, bare, fenced in ```json, or wrapped in
//! `<tool_call>` tags, whose `name` is one of the offered tools.

use prise_llm::ToolCall;
use serde_json::Value;

/// The tool calls written in `text`, keeping only names in `offered`.
pub fn tool_calls_in_text(text: &str, offered: &dyn Fn(&str) -> bool) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    for candidate in candidates(text) {
        let Ok(value) = serde_json::from_str::<Value>(candidate.trim()) else {
            continue;
        };
        let objects = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        for object in objects {
            let Some(name) = object.get("name").and_then(Value::as_str) else {
                continue;
            };
            if !offered(name) {
                continue;
            }
            let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
                Some(Value::String(text)) => text.clone(),
                Some(value) => value.to_string(),
                None => "{}".to_owned(),
            };
            calls.push(ToolCall {
                id: format!("recovered_{}", calls.len()),
                name: name.to_owned(),
                arguments,
            });
        }
    }
    calls
}

/// Pieces of text that may hold a call: inside `<tool_call>` tags, inside ``` fences,
/// or the whole text.
fn candidates(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        let after = &rest[start + "<tool_call>".len()..];
        let end = after.find("</tool_call>").unwrap_or(after.len());
        found.push(&after[..end]);
        rest = &after[end..];
    }
    if found.is_empty() {
        let mut rest = text;
        while let Some(start) = rest.find("```") {
            let after = &rest[start + 3..];
            let body_start = after.find('\n').map_or(0, |i| i + 1);
            let Some(end) = after[body_start..].find("```") else {
                break;
            };
            found.push(&after[body_start..body_start + end]);
            rest = &after[body_start + end + 3..];
        }
    }
    if found.is_empty() {
        found.push(text);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(name: &str) -> bool {
        name == "docs__grep_docs"
    }

    #[test]
    fn every_way_small_models_write_calls() {
        let bare = r#"{"name": "docs__grep_docs", "arguments": {"keyword": "x"}}"#;
        let fenced = "Let me search.\n```json\n{\"name\": \"docs__grep_docs\", \"parameters\": {\"keyword\": \"x\"}}\n```";
        let tagged = "<tool_call>\n{\"name\": \"docs__grep_docs\", \"arguments\": \"{\\\"keyword\\\": \\\"x\\\"}\"}\n</tool_call>";
        for text in [bare, fenced, tagged] {
            let calls = tool_calls_in_text(text, &offered);
            assert_eq!(calls.len(), 1, "{text}");
            assert_eq!(calls[0].name, "docs__grep_docs");
            assert_eq!(
                serde_json::from_str::<Value>(&calls[0].arguments).unwrap(),
                serde_json::json!({"keyword": "x"})
            );
        }
    }

    #[test]
    fn prose_and_unknown_names_are_left_alone() {
        assert!(tool_calls_in_text("The answer is 42.", &offered).is_empty());
        assert!(tool_calls_in_text(r#"{"name": "rm_rf", "arguments": {}}"#, &offered).is_empty());
        assert!(tool_calls_in_text(r#"{"city": "Paris"}"#, &offered).is_empty());
    }
}
