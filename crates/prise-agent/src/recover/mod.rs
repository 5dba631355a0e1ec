//! Tool calls that local models write as text instead of in the API's tool-call
//! field, in the forms they really write them.
//!
//! Small models under Ollama, llama.cpp, LM Studio or vLLM often get no native tool
//! call out of the server and write the call into their reply instead, in whatever
//! format their training or template suggests: Hermes' `<tool_call>` tags, Qwen's
//! `<tools>` block, Qwen3-Coder's XML, Llama's JSON and `<|python_tag|>`, Mistral's
//! `[TOOL_CALLS]`, Granite's and Phi's tokens, DeepSeek's, Gemma's `tool_code`,
//! Python-style calls, fences, bare or doubled-brace JSON. [`recover`] reads them all.
//!
//! What it never does: run a name that was not offered; run a call from an object
//! that carries its own `result` (the model invented the answer) or anything written
//! after an invented tool response; run the same call twice from one reply.

mod json;
mod markup;
mod python;

mod check;

pub use check::check_arguments;

use prise_llm::ToolCall;
use serde_json::Value;

/// What a reply's text holds, as far as tool calls go.
#[derive(Debug, Default, PartialEq)]
pub struct Recovered {
    /// The calls to make, in the order written, each once.
    pub calls: Vec<ToolCall>,
    /// Why the reply looks like it meant to call a tool when no call could be taken
    /// from it (for the model to be told); `None` for a plain answer.
    pub failed: Option<String>,
}

/// One call as found, before names are resolved.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    /// Where in the text it starts, for the order of calls.
    at: usize,
    name: String,
    arguments: Value,
    /// The model wrote a result beside the call: it imagined the answer.
    invented: bool,
}

/// Reads the tool calls written in `text`. `resolve` maps a name as the model wrote
/// it (the model-facing name, the exposed `server__tool`, or the tool's own name when
/// only one server has it) to the model-facing name of an offered tool.
pub fn recover(text: &str, resolve: &dyn Fn(&str) -> Option<String>) -> Recovered {
    // Anything after an invented tool response is the model talking to itself.
    let (text, invented_response) = markup::before_invented_response(text);
    let mut masked = text.to_owned();
    let mut found = Vec::new();
    let mut empty_block = false;
    // Formats that say "this is a call" first, then fences, then what is left bare.
    for region in markup::regions(text) {
        if region.body.trim().is_empty() {
            empty_block = true;
        }
        found.extend(region_calls(&region, resolve));
        mask(&mut masked, region.span.0, region.span.1);
    }
    for value in json::values(&masked) {
        found.extend(json::calls(&value.value, value.at));
        mask(&mut masked, value.at, value.end);
    }
    found.extend(python::calls_in_text(&masked, &|name| {
        resolve(name).is_some()
    }));
    found.sort_by_key(|f| f.at);

    let mut calls: Vec<ToolCall> = Vec::new();
    let mut invented = 0;
    let mut unknown = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for found in found {
        let Some(name) = resolve(&found.name) else {
            unknown.push(found.name);
            continue;
        };
        if found.invented {
            invented += 1;
            continue;
        }
        let arguments = match &found.arguments {
            Value::Null => "{}".to_owned(),
            other => other.to_string(),
        };
        let key = (name.clone(), canonical(&found.arguments));
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        calls.push(ToolCall {
            id: format!("recovered_{}", calls.len()),
            name,
            arguments,
        });
    }
    let failed = if !calls.is_empty() {
        None
    } else if invented > 0 || invented_response {
        Some("it wrote a tool's result itself instead of calling the tool".to_owned())
    } else if let Some(name) = unknown.first() {
        Some(format!("there is no tool named {name}"))
    } else if empty_block {
        Some("its tool-call block is empty".to_owned())
    } else {
        json::broken_call(text, resolve)
            .or_else(|| python::broken_call(text, &|name| resolve(name).is_some()))
    };
    Recovered { calls, failed }
}

/// The calls in one marked region of a reply.
fn region_calls(
    region: &markup::Region<'_>,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Vec<Found> {
    if let Some(name) = &region.name {
        // The format named the tool; the body is its arguments.
        let arguments = markup::arguments(region.body);
        return vec![Found {
            at: region.span.0,
            name: name.clone(),
            arguments,
            invented: false,
        }];
    }
    let xml = markup::xml_calls(region.body, region.body_at);
    if !xml.is_empty() {
        return xml;
    }
    let values: Vec<Found> = json::values(region.body)
        .iter()
        .flat_map(|v| json::calls(&v.value, region.body_at + v.at))
        .collect();
    if !values.is_empty() {
        return values;
    }
    python::calls_in_text(region.body, &|name| resolve(name).is_some())
        .into_iter()
        .map(|mut f| {
            f.at += region.body_at;
            f
        })
        .collect()
}

/// Blanks `text[start..end]` (keeping its length, so offsets stay) once its calls are
/// taken, so that they are not found again in what is left.
fn mask(text: &mut String, start: usize, end: usize) {
    let (start, end) = (start.min(text.len()), end.min(text.len()));
    if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return;
    }
    let blank = " ".repeat(text[start..end].len());
    text.replace_range(start..end, &blank);
}

/// A JSON value written the same way whatever the order of its keys.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}
