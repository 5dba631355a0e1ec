//! The markers models put around calls: tags, special tokens, fences and XML
//! elements, each found as a [`Region`] of the reply.

use serde_json::Value;

use super::Found;

/// Text after one of these is a tool's response the model made up (or a template's
/// turn it went on to write): nothing in it is run.
const INVENTED_RESPONSE: [&str; 7] = [
    "<tool_response>",
    "<tool_result>",
    "<|tool_response|>",
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁output▁begin｜>",
    "<|im_start|>tool",
    "<start_of_turn>tool",
];

/// `text` up to an invented tool response, and whether there was one.
pub(super) fn before_invented_response(text: &str) -> (&str, bool) {
    match INVENTED_RESPONSE.iter().filter_map(|m| text.find(m)).min() {
        Some(cut) => (&text[..cut], true),
        None => (text, false),
    }
}

/// A marked part of a reply.
#[derive(Debug)]
pub(super) struct Region<'a> {
    /// Where it starts and ends in the reply, markers included.
    pub span: (usize, usize),
    /// What is inside the markers.
    pub body: &'a str,
    /// Where `body` starts in the reply.
    pub body_at: usize,
    /// The tool, when the markup names it and `body` holds only its arguments.
    pub name: Option<String>,
}

/// Tags whose content is one or more calls.
const TAGS: [&str; 8] = [
    "tool_call",
    "tools",
    "tool_calls",
    "function_call",
    "functioncall",
    "toolcall",
    "response",
    "call",
];

/// Every marked region of `text`, in order, none inside another.
pub(super) fn regions(text: &str) -> Vec<Region<'_>> {
    let mut regions = Vec::new();
    let mut from = 0;
    loop {
        let next = [
            tag(text, from),
            special(text, from),
            mistral(text, from),
            deepseek(text, from),
            functools(text, from),
            element(text, from),
            fence(text, from),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|r| r.span.0);
        let Some(region) = next else { break };
        from = region.span.1.max(region.span.0 + 1);
        while from < text.len() && !text.is_char_boundary(from) {
            from += 1;
        }
        regions.push(region);
        if from >= text.len() {
            break;
        }
    }
    regions
}

fn region(text: &str, start: usize, body: (usize, usize), end: usize) -> Region<'_> {
    Region {
        span: (start, end),
        body: &text[body.0..body.1],
        body_at: body.0,
        name: None,
    }
}

/// `<tool_call>...</tool_call>` and the other tags; an unclosed tag runs to the end.
fn tag(text: &str, from: usize) -> Option<Region<'_>> {
    TAGS.iter()
        .filter_map(|name| {
            let open = format!("<{name}>");
            let start = from + text[from..].find(&open)?;
            let body_start = start + open.len();
            let close = format!("</{name}>");
            let (body_end, end) = match text[body_start..].find(&close) {
                Some(i) => (body_start + i, body_start + i + close.len()),
                None => (text.len(), text.len()),
            };
            Some(region(text, start, (body_start, body_end), end))
        })
        .min_by_key(|r| r.span.0)
}

/// Special tokens: Phi-4-mini's and Granite's `<|tool_call|>`, Llama's
/// `<|python_tag|>`.
fn special(text: &str, from: usize) -> Option<Region<'_>> {
    let forms: [(&str, &[&str]); 3] = [
        (
            "<|tool_call|>",
            &["<|/tool_call|>", "<|tool_call_end|>", "<|end_of_text|>"],
        ),
        ("<|tool_calls|>", &["<|/tool_calls|>"]),
        ("<|python_tag|>", &["<|eom_id|>", "<|eot_id|>"]),
    ];
    forms
        .iter()
        .filter_map(|(open, closes)| {
            let start = from + text[from..].find(open)?;
            let body_start = start + open.len();
            let (body_end, end) = closes
                .iter()
                .filter_map(|c| {
                    text[body_start..]
                        .find(c)
                        .map(|i| (body_start + i, body_start + i + c.len()))
                })
                .min()
                .unwrap_or((text.len(), text.len()));
            Some(region(text, start, (body_start, body_end), end))
        })
        .min_by_key(|r| r.span.0)
}

/// Mistral's `[TOOL_CALLS][{...}]`, and its later `[TOOL_CALLS]name[ARGS]{...}`.
fn mistral(text: &str, from: usize) -> Option<Region<'_>> {
    const OPEN: &str = "[TOOL_CALLS]";
    let start = from + text[from..].find(OPEN)?;
    let body_start = start + OPEN.len();
    let end = text[body_start..]
        .find(OPEN)
        .map_or(text.len(), |i| body_start + i);
    let body = &text[body_start..end];
    if let Some(args) = body.find("[ARGS]") {
        let name = body[..args].trim();
        let name = name.split("[CALL_ID]").next().unwrap_or(name).trim();
        let arguments_at = body_start + args + "[ARGS]".len();
        return Some(Region {
            span: (start, end),
            body: &text[arguments_at..end],
            body_at: arguments_at,
            name: (!name.is_empty()).then(|| name.to_owned()),
        });
    }
    Some(region(text, start, (body_start, end), end))
}

/// DeepSeek's `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` then the arguments
/// (in a fence for V3, bare for V3.1, where the name comes before the separator).
fn deepseek(text: &str, from: usize) -> Option<Region<'_>> {
    const OPEN: &str = "<｜tool▁call▁begin｜>";
    const SEP: &str = "<｜tool▁sep｜>";
    const CLOSE: &str = "<｜tool▁call▁end｜>";
    let start = from + text[from..].find(OPEN)?;
    let inner_start = start + OPEN.len();
    let (inner_end, end) = match text[inner_start..].find(CLOSE) {
        Some(i) => (inner_start + i, inner_start + i + CLOSE.len()),
        None => (text.len(), text.len()),
    };
    let inner = &text[inner_start..inner_end];
    let sep = inner.find(SEP)?;
    let (before, after) = (inner[..sep].trim(), &inner[sep + SEP.len()..]);
    let (name, arguments_at) = if before == "function" || before.is_empty() {
        // V3: the name runs to the end of the line, the arguments follow.
        let line = after.find('\n').unwrap_or(after.len());
        (after[..line].trim(), inner_start + sep + SEP.len() + line)
    } else {
        (before, inner_start + sep + SEP.len())
    };
    Some(Region {
        span: (start, end),
        body: &text[arguments_at..inner_end],
        body_at: arguments_at,
        name: Some(name.to_owned()),
    })
}

/// Phi-4's `functools[{...}]`.
fn functools(text: &str, from: usize) -> Option<Region<'_>> {
    const OPEN: &str = "functools[";
    let start = from + text[from..].find(OPEN)?;
    let body_start = start + OPEN.len() - 1;
    let end = super::json::values(&text[body_start..])
        .first()
        .filter(|v| v.at == 0)
        .map_or(text.len(), |v| body_start + v.end);
    Some(region(text, start, (body_start, end), end))
}

/// XML elements: `<tool name="x" arguments='{...}'/>`, `<function name=... >`,
/// Llama's `<function=x>{...}</function>` and `<invoke name="x">` with
/// `<parameter name="k">` children.
fn element(text: &str, from: usize) -> Option<Region<'_>> {
    ["<tool ", "<function ", "<function=", "<invoke "]
        .iter()
        .filter_map(|open| {
            let start = from + text[from..].find(open)?;
            let tag_end = start + text[start..].find('>')?;
            let head = &text[start + 1..tag_end];
            let element = head.split([' ', '=']).next().unwrap_or_default().to_owned();
            let self_closing = head.ends_with('/');
            let head = head.trim_end_matches('/');
            let (name, arguments) = if let Some(rest) = head.strip_prefix("function=") {
                (Some(rest.trim().to_owned()), None)
            } else {
                (attribute(head, "name"), attribute(head, "arguments"))
            };
            let name = name?;
            let close = format!("</{element}>");
            let (body, end) = if self_closing {
                ((tag_end, tag_end), tag_end + 1)
            } else {
                match text[tag_end + 1..].find(&close) {
                    Some(i) => (
                        (tag_end + 1, tag_end + 1 + i),
                        tag_end + 1 + i + close.len(),
                    ),
                    None => ((tag_end + 1, text.len()), text.len()),
                }
            };
            let mut region = region(text, start, body, end);
            region.name = Some(name);
            if let Some(arguments) = arguments {
                // The arguments are in the attribute; a body, if any, is ignored.
                let at = start + 1 + head.find(&arguments).unwrap_or(0);
                region.body = &text[at..at + arguments.len()];
                region.body_at = at;
            }
            Some(region)
        })
        .min_by_key(|r| r.span.0)
}

/// Fenced blocks: ```json, Gemma's ```tool_code, or none.
fn fence(text: &str, from: usize) -> Option<Region<'_>> {
    let start = from + text[from..].find("```")?;
    let after = start + 3;
    let body_start = after + text[after..].find('\n').map_or(0, |i| i + 1);
    let (body_end, end) = match text[body_start..].find("```") {
        Some(i) => (body_start + i, body_start + i + 3),
        None => (text.len(), text.len()),
    };
    Some(region(text, start, (body_start, body_end), end))
}

/// The value of `key="..."` or `key='...'` in an element's head.
fn attribute(head: &str, key: &str) -> Option<String> {
    let mut rest = head;
    while let Some(i) = rest.find(key) {
        let after = rest[i + key.len()..].trim_start();
        let before_ok = i == 0 || rest[..i].ends_with(char::is_whitespace);
        if before_ok && let Some(value) = after.strip_prefix('=') {
            let value = value.trim_start();
            let quote = value.chars().next()?;
            if quote == '"' || quote == '\'' {
                let inner = &value[1..];
                let end = inner.find(quote)?;
                return Some(inner[..end].to_owned());
            }
        }
        rest = &rest[i + key.len()..];
    }
    None
}

/// A named call's arguments: a JSON object (a doubled-brace one too), or none.
pub(super) fn arguments(body: &str) -> Value {
    let body = body.trim();
    if body.is_empty() {
        return Value::Null;
    }
    if body.contains("<parameter") {
        return Value::Object(parameters(body));
    }
    super::json::values(body)
        .into_iter()
        .find(|v| v.value.is_object())
        .map_or(Value::Null, |v| match v.value {
            // Some write the arguments as a JSON string.
            Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
            other => other,
        })
}

/// Qwen3-Coder's calls: `<function=NAME>` blocks of `<parameter=KEY>VALUE</parameter>`.
pub(super) fn xml_calls(body: &str, at: usize) -> Vec<Found> {
    let mut calls = Vec::new();
    let mut rest = body;
    let mut offset = 0;
    while let Some(start) = rest.find("<function=") {
        let after = &rest[start + "<function=".len()..];
        let Some(name_end) = after.find('>') else {
            break;
        };
        let name = after[..name_end].trim().to_owned();
        let inner = &after[name_end + 1..];
        let end = inner.find("</function>").unwrap_or(inner.len());
        let arguments = if inner[..end].contains("<parameter") {
            Value::Object(parameters(&inner[..end]))
        } else {
            arguments(&inner[..end])
        };
        calls.push(Found {
            at: at + offset + start,
            name,
            arguments,
            invented: false,
        });
        let consumed = start + "<function=".len() + name_end + 1 + end;
        offset += consumed;
        rest = &rest[consumed..];
    }
    calls
}

/// `<parameter=KEY>VALUE</parameter>` (Qwen3-Coder) and `<parameter name="KEY">VALUE
/// </parameter>` (invoke-style), values read as JSON when they are JSON (numbers,
/// booleans, lists, objects) and as text otherwise; the tool's schema has the last
/// word on types (see `check`).
fn parameters(body: &str) -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    let mut rest = body;
    while let Some(start) = rest.find("<parameter") {
        let after = &rest[start + "<parameter".len()..];
        let Some(head_end) = after.find('>') else {
            break;
        };
        let head = &after[..head_end];
        let key = match head.strip_prefix('=') {
            Some(key) => key.trim().to_owned(),
            None => attribute(head, "name").unwrap_or_default(),
        };
        let inner = &after[head_end + 1..];
        let end = inner.find("</parameter>").unwrap_or(inner.len());
        let raw = inner[..end].strip_prefix('\n').unwrap_or(&inner[..end]);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        let value = match serde_json::from_str::<Value>(raw.trim()) {
            Ok(
                value @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_)),
            ) => value,
            _ => Value::String(raw.to_owned()),
        };
        if !key.is_empty() {
            map.insert(key, value);
        }
        rest = &inner[end..];
    }
    map
}
