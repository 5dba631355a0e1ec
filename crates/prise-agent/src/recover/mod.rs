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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: [&str; 3] = [
        "weather__get_weather",
        "time__get_current_time",
        "docs__grep_docs",
    ];

    fn resolve(name: &str) -> Option<String> {
        if TOOLS.contains(&name) {
            return Some(name.to_owned());
        }
        let mut owners = TOOLS.iter().filter(|t| t.ends_with(&format!("__{name}")));
        match (owners.next(), owners.next()) {
            (Some(t), None) => Some((*t).to_owned()),
            _ => None,
        }
    }

    /// The calls read from `text`, as (name, arguments).
    fn calls(text: &str) -> Vec<Call> {
        recover(text, &resolve)
            .calls
            .into_iter()
            .map(|c| (c.name, serde_json::from_str(&c.arguments).unwrap()))
            .collect()
    }

    fn weather(city: &str) -> Call {
        ("weather__get_weather".to_owned(), json!({"city": city}))
    }

    fn time(zone: &str) -> Call {
        (
            "time__get_current_time".to_owned(),
            json!({"timezone": zone}),
        )
    }

    /// A call as (name, arguments).
    type Call = (String, Value);

    /// Each reply with the calls it means, in order.
    #[test]
    fn the_forms_models_write() {
        let corpus: Vec<(&str, String, Vec<Call>)> = vec![
            ("bare JSON", r#"{"name": "weather__get_weather", "arguments": {"city": "Paris"}}"#.into(), vec![weather("Paris")]),
            ("fenced, parameters", "Let me check.\n```json\n{\"name\": \"weather__get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n```".into(), vec![weather("Paris")]),
            ("Hermes tags, string arguments", "<tool_call>\n{\"name\": \"weather__get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>".into(), vec![weather("Paris")]),
            ("two Hermes calls", "<tool_call>\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"Europe/Paris\"}}\n</tool_call>".into(), vec![weather("Paris"), time("Europe/Paris")]),
            ("Qwen <tools> block, one object a line", "<tools>\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"shanghai\"}}\n{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"Asia/Shanghai\"}}\n</tools>".into(), vec![weather("shanghai"), time("Asia/Shanghai")]),
            ("several objects in one fence", "```json\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```".into(), vec![weather("Oslo"), weather("Rome")]),
            ("a <tool> element", r#"I'll call it: <tool name="weather__get_weather" arguments='{"city": "shanghai"}'/>"#.into(), vec![weather("shanghai")]),
            ("a <function> element", r#"<function name="time__get_current_time" arguments='{"timezone": "UTC"}'></function>"#.into(), vec![time("UTC")]),
            ("Llama's <function=...>", r#"<function=weather__get_weather>{"city": "Lima"}</function>"#.into(), vec![weather("Lima")]),
            ("<response> in prose", "Sure! <response>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Cairo\"}}</response> Done.".into(), vec![weather("Cairo")]),
            ("doubled braces", r#"{{"name": "weather__get_weather", "arguments": {"city": "Lyon"}}}"#.into(), vec![weather("Lyon")]),
            ("Python style", "weather__get_weather(city=\"shanghai\")".into(), vec![weather("shanghai")]),
            ("a pythonic list", "[weather__get_weather(city='Kyiv'), time__get_current_time(timezone=\"Europe/Kyiv\")]".into(), vec![weather("Kyiv"), time("Europe/Kyiv")]),
            ("Llama 3 python_tag", "<|python_tag|>{\"name\": \"weather__get_weather\", \"parameters\": {\"city\": \"Quito\"}}<|eom_id|>".into(), vec![weather("Quito")]),
            ("Mistral [TOOL_CALLS] array", "[TOOL_CALLS] [{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Nice\"}}]".into(), vec![weather("Nice")]),
            ("Mistral name[ARGS]", "[TOOL_CALLS]weather__get_weather[ARGS]{\"city\": \"Nice\"}[TOOL_CALLS]time__get_current_time[ARGS]{\"timezone\": \"UTC\"}".into(), vec![weather("Nice"), time("UTC")]),
            ("Qwen3-Coder XML", "<tool_call>\n<function=weather__get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n</function>\n</tool_call>".into(), vec![weather("San Francisco")]),
            ("Granite", "<|tool_call|>[{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Bern\"}}]".into(), vec![weather("Bern")]),
            ("Phi-4-mini", "<|tool_call|>[{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}]<|/tool_call|>".into(), vec![time("UTC")]),
            ("Phi-4-mini functools", "functools[{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Pune\"}}]".into(), vec![weather("Pune")]),
            ("DeepSeek V3", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather__get_weather\n```json\n{\"city\": \"Seoul\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>".into(), vec![weather("Seoul")]),
            ("DeepSeek V3.1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>time__get_current_time<｜tool▁sep｜>{\"timezone\": \"Asia/Seoul\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>".into(), vec![time("Asia/Seoul")]),
            ("Gemma tool_code", "```tool_code\nweather__get_weather(city=\"Accra\")\n```".into(), vec![weather("Accra")]),
            ("OpenAI-shaped text", r#"{"tool_calls": [{"type": "function", "function": {"name": "weather__get_weather", "arguments": "{\"city\": \"Doha\"}"}}]}"#.into(), vec![weather("Doha")]),
            ("invoke XML", "<invoke name=\"weather__get_weather\">\n<parameter name=\"city\">Hanoi</parameter>\n</invoke>".into(), vec![weather("Hanoi")]),
            ("the tool's own name", r#"{"name": "get_weather", "arguments": {"city": "Riga"}}"#.into(), vec![weather("Riga")]),
            ("the same call twice", "<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>\n```json\n{\"arguments\": {\"city\": \"Oslo\"}, \"name\": \"weather__get_weather\"}\n```".into(), vec![weather("Oslo")]),
            ("a call, then an invented response", "<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>\n<tool_response>{\"temp\": 3}</tool_response>\n<tool_call>{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>".into(), vec![weather("Oslo")]),
        ];
        for (form, text, expected) in corpus {
            assert_eq!(calls(&text), expected, "{form}: {text}");
            assert_eq!(recover(&text, &resolve).failed, None, "{form}");
        }
    }

    /// Replies that mean no call: what is run, and what the model is told.
    #[test]
    fn replies_that_mean_no_call() {
        let none: Vec<(&str, &str, Option<&str>)> = vec![
            ("a plain answer", "It is 21 °C in Paris.", None),
            (
                "an answer naming a tool",
                "I used weather__get_weather, and it says 21 °C.",
                None,
            ),
            (
                "a name in a sentence with a parenthesis",
                "The tool weather__get_weather(city) takes a city.",
                None,
            ),
            (
                "JSON that is no call",
                r#"{"city": "Paris", "temp": 21}"#,
                None,
            ),
            (
                "an invented result",
                "Let's assume the result is: {\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"result\": {\"temp\": 21}}",
                Some("it wrote a tool's result itself instead of calling the tool"),
            ),
            (
                "an empty block",
                "<tools>\n</tools>",
                Some("its tool-call block is empty"),
            ),
            (
                "an unknown tool",
                r#"{"name": "rm_rf", "arguments": {}}"#,
                Some("there is no tool named rm_rf"),
            ),
            (
                "broken JSON",
                "{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Paris\"",
                Some("its call of weather__get_weather is not valid JSON"),
            ),
            (
                "a Python call that cannot be read",
                "weather__get_weather(\"Paris\")",
                Some(
                    "its call of weather__get_weather could not be read (write arguments as name=value)",
                ),
            ),
            (
                "only an invented tool response",
                "<tool_response>{\"temp\": 3}</tool_response> It is 3 °C.",
                Some("it wrote a tool's result itself instead of calling the tool"),
            ),
        ];
        for (form, text, failed) in none {
            let found = recover(text, &resolve);
            assert!(found.calls.is_empty(), "{form}: {:?}", found.calls);
            assert_eq!(found.failed.as_deref(), failed, "{form}");
        }
    }
}
