//! Python-style calls: `get_weather(city="Paris")`, and lists of them, as Llama 3.2
//! and 4, Gemma's `tool_code` and many small models write them.

use serde_json::{Map, Number, Value};

use super::Found;

/// The calls of offered tools written Python-style in `text`, each on a line of its
/// own or in a `[a(...), b(...)]` list (a name followed by "(" in the middle of a
/// sentence is prose).
pub(super) fn calls_in_text(text: &str, is_tool: &dyn Fn(&str) -> bool) -> Vec<Found> {
    let mut found = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let lead = line.len() - line.trim_start().len();
        let list = trimmed.starts_with('[') && trimmed.ends_with(']');
        let body = if list {
            &trimmed[1..trimmed.len() - 1]
        } else {
            trimmed
        };
        let body_at = line_start + lead + usize::from(list);
        if let Some(calls) = call_list(body, body_at, is_tool) {
            found.extend(calls);
        }
        line_start += line.len();
    }
    found
}

/// `a(x=1), b()` (which starts at `at` in the reply): every call, or `None` when the
/// text is anything else.
fn call_list(text: &str, at: usize, is_tool: &dyn Fn(&str) -> bool) -> Option<Vec<Found>> {
    let mut calls = Vec::new();
    let mut parser = Parser { text, at: 0 };
    loop {
        parser.space();
        let start = parser.at;
        let name = parser.name()?;
        if !is_tool(&name) {
            return None;
        }
        parser.space();
        parser.eat('(')?;
        let arguments = parser.arguments()?;
        calls.push(Found {
            at: at + start,
            name,
            arguments: Value::Object(arguments),
            invented: false,
        });
        parser.space();
        if parser.at == text.len() {
            return Some(calls);
        }
        parser.eat(',')?;
    }
}

/// Why `text` looks like a Python-style call of an offered tool that could not be
/// read, if it does.
pub(super) fn broken_call(text: &str, is_tool: &dyn Fn(&str) -> bool) -> Option<String> {
    for line in text.lines() {
        let line = line.trim().trim_start_matches('[');
        let name: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
            .collect();
        if !name.is_empty() && line[name.len()..].trim_start().starts_with('(') && is_tool(&name) {
            return Some(format!(
                "its call of {name} could not be read (write arguments as name=value)"
            ));
        }
    }
    None
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: char) -> Option<()> {
        self.rest().starts_with(c).then(|| self.at += c.len_utf8())
    }

    fn name(&mut self) -> Option<String> {
        let name: String = self
            .rest()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
            .collect();
        (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then(|| {
            self.at += name.len();
            name
        })
    }

    /// `key=value, ...)`: keyword arguments only (a positional one cannot be named).
    fn arguments(&mut self) -> Option<Map<String, Value>> {
        let mut map = Map::new();
        loop {
            self.space();
            if self.eat(')').is_some() {
                return Some(map);
            }
            let key = self.name()?;
            self.space();
            self.eat('=')?;
            self.space();
            let value = self.value()?;
            map.insert(key, value);
            self.space();
            if self.eat(',').is_none() {
                self.space();
                self.eat(')')?;
                return Some(map);
            }
        }
    }

    /// A Python literal: a string, a number, True/False/None, a list or a dict.
    fn value(&mut self) -> Option<Value> {
        let rest = self.rest();
        let first = rest.chars().next()?;
        match first {
            '"' | '\'' => self.string().map(Value::String),
            '[' => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.space();
                    if self.eat(']').is_some() {
                        return Some(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.space();
                    if self.eat(',').is_none() {
                        self.space();
                        self.eat(']')?;
                        return Some(Value::Array(items));
                    }
                }
            }
            '{' => {
                self.at += 1;
                let mut map = Map::new();
                loop {
                    self.space();
                    if self.eat('}').is_some() {
                        return Some(Value::Object(map));
                    }
                    let key = match self.value()? {
                        Value::String(key) => key,
                        other => other.to_string(),
                    };
                    self.space();
                    self.eat(':')?;
                    self.space();
                    map.insert(key, self.value()?);
                    self.space();
                    if self.eat(',').is_none() {
                        self.space();
                        self.eat('}')?;
                        return Some(Value::Object(map));
                    }
                }
            }
            _ => {
                let word: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
                    .collect();
                self.at += word.len();
                match word.as_str() {
                    "True" | "true" => Some(Value::Bool(true)),
                    "False" | "false" => Some(Value::Bool(false)),
                    "None" | "null" => Some(Value::Null),
                    number => {
                        if let Ok(n) = number.parse::<i64>() {
                            Some(Value::Number(n.into()))
                        } else {
                            number
                                .parse::<f64>()
                                .ok()
                                .and_then(Number::from_f64)
                                .map(Value::Number)
                        }
                    }
                }
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let quote = self.rest().chars().next()?;
        self.at += 1;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, other)) => out.push(other),
                    None => return None,
                },
                c if c == quote => {
                    self.at += i + 1;
                    return Some(out);
                }
                c => out.push(c),
            }
        }
        None
    }
}
