//! JSON with comments, as VS Code writes `.vscode/mcp.json`.
//!
//! Comments and trailing commas are replaced by spaces rather than removed, so every
//! byte keeps its offset and serde_json's line and column still point into the
//! user's file.

/// Blanks `//` and `/* */` comments and trailing commas outside strings.
///
/// Newlines inside block comments are kept so that line numbers do not move.
pub(crate) fn blank_comments(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let bytes = text.as_bytes();
    let mut i = 0;
    // Position of the last comma seen outside a string, cleared by any other token.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                let end = (i + 2).min(bytes.len());
                for b in &mut out[start..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, and never inside a multi-byte
    // character (those occur only in strings and comments, and comments are blanked
    // whole), so the result is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::blank_comments;

    #[test]
    fn comments_and_trailing_commas_become_spaces() {
        let text =
            "{\n  // a comment\n  \"a\": [1, 2,], /* b\n c */ \"b\": \"//not a comment\",\n}";
        let blanked = blank_comments(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked.lines().count(), text.lines().count());
        let value: serde_json::Value = serde_json::from_str(&blanked).unwrap();
        assert_eq!(value["a"], serde_json::json!([1, 2]));
        assert_eq!(value["b"], "//not a comment");
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let text = r#"{"a": "x\" // y", "b": 1}"#;
        let value: serde_json::Value = serde_json::from_str(&blank_comments(text)).unwrap();
        assert_eq!(value["a"], "x\" // y");
    }

    #[test]
    fn non_ascii_survives() {
        let text = "{\"é\": \"ü\" /* ß */}";
        let value: serde_json::Value = serde_json::from_str(&blank_comments(text)).unwrap();
        assert_eq!(value["é"], "ü");
    }
}
