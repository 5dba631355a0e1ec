//! Changing a configuration file in place: servers added, replaced or removed, and
//! every other byte (other keys and their order, comments, the file's own layout)
//! left as it was. People keep notes in their JSONC files, and other programs own
//! other keys of the same file (Claude Desktop's preferences, VS Code's `inputs`).
//!
//! The file is read as [`crate::parse`] reads it: comments blanked to spaces, so every
//! offset in the blanked text is the same offset in the file, and each value's slice
//! tells where it is. Edits are then splices of the original text.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonc::blank_comments;
use crate::parse::{Entries, key_start, position};

/// Why a file could not be changed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    /// The file is not a JSON object (or its servers are not one).
    #[error("{0}")]
    Invalid(String),
    /// A server of that name is already there.
    #[error("a server named {0} is already configured")]
    Exists(String),
    /// No server of that name is there.
    #[error("no server named {0} is configured")]
    Missing(String),
}

/// One entry of an object: where its key starts and its value ends, in bytes.
struct Span {
    name: String,
    key: usize,
    value: usize,
    end: usize,
}

/// Where the servers are in a file.
struct Layout {
    /// Entries of the top-level object, and where its braces are.
    top: Vec<Span>,
    top_open: usize,
    /// The servers object (`mcpServers` or `servers`): its key, its braces, its entries.
    servers: Option<(String, usize, usize, Vec<Span>)>,
}

fn layout(text: &str) -> Result<Layout, EditError> {
    if text.trim().is_empty() {
        return Err(EditError::Invalid("the file is empty".into()));
    }
    let blanked = blank_comments(text);
    let top: Entries<'_> = serde_json::from_str(&blanked).map_err(|e| {
        EditError::Invalid(format!(
            "not a JSON object (line {}, column {}: {e})",
            e.line(),
            e.column()
        ))
    })?;
    let offset = |raw: &RawValue| raw.get().as_ptr() as usize - blanked.as_ptr() as usize;
    let spans = |entries: &Entries<'_>| -> Vec<Span> {
        entries
            .0
            .iter()
            .map(|(name, raw)| {
                let value = offset(raw);
                Span {
                    name: name.clone(),
                    key: key_start(blanked.as_bytes(), value).unwrap_or(value),
                    value,
                    end: value + raw.get().len(),
                }
            })
            .collect()
    };
    let top_spans = spans(&top);
    let top_open = blanked.find('{').unwrap_or(0);
    let mut servers = None;
    for (key, raw) in &top.0 {
        if key == "mcpServers" || key == "servers" {
            let entries: Entries<'_> = serde_json::from_str(raw.get())
                .map_err(|_| EditError::Invalid(format!("\"{key}\" is not an object")))?;
            let open = offset(raw);
            servers = Some((key.clone(), open, open + raw.get().len(), spans(&entries)));
            break;
        }
    }
    Ok(Layout {
        top: top_spans,
        top_open,
        servers,
    })
}

/// The whitespace that starts the line `at` is on, if only whitespace precedes it.
fn indent_at(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(before)
}

/// `value` as JSON, pretty and indented to sit at `indent`; compact when `compact`.
fn render(value: &Value, indent: &str, compact: bool) -> String {
    if compact {
        return value.to_string();
    }
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    pretty.replace('\n', &format!("\n{indent}"))
}

fn quoted(name: &str) -> String {
    Value::String(name.to_owned()).to_string()
}

/// The top-level key servers go under in a file that has none yet: VS Code's
/// `servers` for a file in `.vscode/`, else `mcpServers`.
pub fn servers_key(path: &std::path::Path) -> &'static str {
    let in_vscode = path
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == ".vscode");
    if in_vscode { "servers" } else { "mcpServers" }
}

/// `text` with server `name` defined as `entry`: added after the last server (the
/// servers object, and the file, are created when missing), or, when `replace`,
/// put in place of the one of the same name.
pub fn add_server(
    text: &str,
    key: &str,
    name: &str,
    entry: &Value,
    replace: bool,
) -> Result<String, EditError> {
    if text.trim().is_empty() {
        let document = serde_json::json!({ key: { name: entry } });
        return Ok(format!("{}\n", render(&document, "", false)));
    }
    let layout = layout(text)?;
    let Some((_, open, _, servers)) = &layout.servers else {
        // No servers object: one is added to the top level.
        let object = serde_json::json!({ name: entry });
        return Ok(insert_entry(
            text,
            &layout.top,
            layout.top_open,
            key,
            &object,
        ));
    };
    if let Some(existing) = servers.iter().find(|s| s.name == name) {
        if !replace {
            return Err(EditError::Exists(name.to_owned()));
        }
        let indent = indent_at(text, existing.key);
        let value = render(entry, indent.unwrap_or(""), indent.is_none());
        return Ok(format!(
            "{}{value}{}",
            &text[..existing.value],
            &text[existing.end..]
        ));
    }
    Ok(insert_entry(text, servers, *open, name, entry))
}

/// Inserts `"name": value` as the last entry of the object that opens at `open`
/// and holds `entries`.
fn insert_entry(text: &str, entries: &[Span], open: usize, name: &str, value: &Value) -> String {
    match entries.last() {
        Some(last) => match indent_at(text, last.key) {
            Some(indent) => {
                // On a line of its own, after the last entry's line (and the comment
                // that may end it, which stays with the entry it was about).
                let value = render(value, indent, false);
                let blanked = blank_comments(text);
                let line_end = blanked[last.end..]
                    .find('\n')
                    .map_or(text.len(), |i| last.end + i);
                let at = if blanked[last.end..line_end].trim().is_empty() {
                    line_end
                } else {
                    last.end
                };
                // A JSONC file may already have a comma there, a trailing one: the new
                // entry gets one too, in the file's style.
                let tail = &text[last.end..at];
                let trailing = tail.trim_start().starts_with(',');
                let (comma, after) = if trailing { ("", ",") } else { (",", "") };
                format!(
                    "{}{comma}{tail}\n{indent}{}: {value}{after}{}",
                    &text[..last.end],
                    quoted(name),
                    &text[at..]
                )
            }
            None => {
                let value = render(value, "", true);
                format!(
                    "{}, {}: {value}{}",
                    &text[..last.end],
                    quoted(name),
                    &text[last.end..]
                )
            }
        },
        None => {
            // An empty object: indented one step past the line it opens on.
            let line_start = text[..open].rfind('\n').map_or(0, |i| i + 1);
            let outer: String = text[line_start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            let inner = format!("{outer}  ");
            let value = render(value, &inner, false);
            // The old inside (spaces, comments) stays after the new entry.
            let after = &text[open + 1..];
            let close = after.find('}').map_or(after.len(), |i| i);
            let between = after[..close].trim_end_matches([' ', '\t']);
            format!(
                "{}{{\n{inner}{}: {value}{between}\n{outer}{}",
                &text[..open],
                quoted(name),
                &after[close..]
            )
        }
    }
}

/// `text` without server `name`: its entry goes, with its comma and its line.
pub fn remove_server(text: &str, name: &str) -> Result<String, EditError> {
    let layout = layout(text)?;
    let Some((_, open, close, servers)) = &layout.servers else {
        return Err(EditError::Missing(name.to_owned()));
    };
    let Some(index) = servers.iter().position(|s| s.name == name) else {
        return Err(EditError::Missing(name.to_owned()));
    };
    let blanked = blank_comments(text);
    let bytes = blanked.as_bytes();
    let entry = &servers[index];
    let skip_space = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let (start, end) = if servers.len() == 1 {
        // The only server: the object becomes empty.
        (*open + 1, *close - 1)
    } else if index + 1 < servers.len() {
        // From the start of its line (when it has the line to itself) to past its
        // comma and the end of that line.
        let start = match indent_at(text, entry.key) {
            Some(indent) => entry.key - indent.len(),
            None => entry.key,
        };
        let comma = skip_space(entry.end);
        let mut end = if bytes.get(comma) == Some(&b',') {
            comma + 1
        } else {
            entry.end
        };
        let rest_of_line = blanked[end..].find('\n').map(|i| end + i);
        if let Some(newline) = rest_of_line
            && blanked[end..newline].trim().is_empty()
            && indent_at(text, entry.key).is_some()
        {
            end = newline + 1;
        } else {
            end = skip_space(end).min(servers[index + 1].key);
        }
        (start, end)
    } else {
        // The last of several: from the comma after the one before it.
        let previous = &servers[index - 1];
        let comma = skip_space(previous.end);
        (comma, entry.end)
    };
    Ok(format!("{}{}", &text[..start], &text[end..]))
}

/// The servers of a file as written (variables not expanded), in file order, for
/// copying them into another file.
pub fn server_entries(text: &str) -> Result<Vec<(String, Value)>, EditError> {
    let blanked = blank_comments(text);
    let layout = layout(text)?;
    let Some((_, _, _, servers)) = layout.servers else {
        return Ok(Vec::new());
    };
    servers
        .iter()
        .map(|span| {
            let value: Value =
                serde_json::from_str(&blanked[span.value..span.end]).map_err(|e| {
                    let (line, column) = position(text, span.value);
                    EditError::Invalid(format!("server {} at {line}:{column}: {e}", span.name))
                })?;
            Ok((span.name.clone(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({"command": "uvx", "args": ["mcp-server-time"]})
    }

    fn parses(text: &str) -> Value {
        serde_json::from_str(&blank_comments(text)).unwrap()
    }

    #[test]
    fn adding_keeps_everything_else() {
        let text = "{\n  // my servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // the first\n  },\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n";
        let added = add_server(text, "mcpServers", "time", &entry(), false).unwrap();
        assert_eq!(
            added,
            "{\n  // my servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // the first\n    \"time\": {\n      \"command\": \"uvx\",\n      \"args\": [\n        \"mcp-server-time\"\n      ]\n    }\n  },\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n"
        );
        assert_eq!(parses(&added)["mcpServers"]["time"], entry());
        assert_eq!(
            add_server(text, "mcpServers", "a", &entry(), false),
            Err(EditError::Exists("a".into()))
        );
        let replaced = add_server(text, "mcpServers", "a", &entry(), true).unwrap();
        assert_eq!(parses(&replaced)["mcpServers"]["a"], entry());
        assert!(replaced.contains("// the first") && replaced.contains("// my servers"));
    }

    #[test]
    fn adding_to_compact_empty_and_missing_objects() {
        let compact = r#"{"mcpServers": {"a": {"command": "a"}}}"#;
        assert_eq!(
            add_server(
                compact,
                "mcpServers",
                "b",
                &json!({"url": "http://x"}),
                false
            )
            .unwrap(),
            r#"{"mcpServers": {"a": {"command": "a"}, "b": {"url":"http://x"}}}"#
        );
        let empty = "{\n  \"mcpServers\": {}\n}\n";
        let added = add_server(empty, "mcpServers", "t", &entry(), false).unwrap();
        assert_eq!(parses(&added)["mcpServers"]["t"], entry());
        assert!(
            added.starts_with("{\n  \"mcpServers\": {\n    \"t\": {\n"),
            "{added}"
        );
        let none = "{\n  \"inputs\": []\n}";
        let added = add_server(none, "servers", "t", &entry(), false).unwrap();
        assert_eq!(parses(&added)["servers"]["t"], entry());
        assert_eq!(parses(&added)["inputs"], json!([]));
        let new = add_server("", "mcpServers", "t", &entry(), false).unwrap();
        assert_eq!(parses(&new), json!({"mcpServers": {"t": entry()}}));
        // JSONC with a trailing comma stays JSONC.
        let trailing = "{\"servers\": {\n  \"a\": {\"command\": \"a\"},\n}}";
        let added = add_server(trailing, "servers", "b", &entry(), false).unwrap();
        assert_eq!(parses(&added)["servers"]["b"], entry());
    }

    #[test]
    fn removing_takes_the_entry_its_comma_and_its_line() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    // b is for testing\n    \"b\": {\"command\": \"b\"},\n    \"c\": {\"command\": \"c\"}\n  }\n}\n";
        assert_eq!(
            remove_server(text, "b").unwrap(),
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    // b is for testing\n    \"c\": {\"command\": \"c\"}\n  }\n}\n"
        );
        assert_eq!(
            remove_server(text, "c").unwrap(),
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    // b is for testing\n    \"b\": {\"command\": \"b\"}\n  }\n}\n"
        );
        let one = remove_server(
            &remove_server(&remove_server(text, "a").unwrap(), "b").unwrap(),
            "c",
        )
        .unwrap();
        assert_eq!(parses(&one), json!({"mcpServers": {}}));
        assert_eq!(
            remove_server(text, "z"),
            Err(EditError::Missing("z".into()))
        );
        let compact = r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#;
        assert_eq!(
            remove_server(compact, "a").unwrap(),
            r#"{"mcpServers": {"b": {"command": "b"}}}"#
        );
    }

    #[test]
    fn entries_as_written() {
        let text = "{\"servers\": {\"gh\": {\"url\": \"https://x\", \"headers\": {\"A\": \"${input:tok}\"}}, // c\n}}";
        let entries = server_entries(text).unwrap();
        assert_eq!(entries[0].0, "gh");
        assert_eq!(entries[0].1["headers"]["A"], "${input:tok}");
        assert!(matches!(server_entries("[1]"), Err(EditError::Invalid(_))));
    }
}
