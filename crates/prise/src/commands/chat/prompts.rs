//! Servers' prompts as chat commands: `/server__prompt ARGS`.

use crate::commands::prompt_arguments::{declared, prompt_arguments};

/// The user text of a mounted prompt, its arguments read from `text` (see
/// [`prompt_arguments`]; quotes keep spaces: `key="a b"`).
pub async fn prompt_text(
    mounts: &prise_mcp::Mounts,
    name: &str,
    text: &str,
) -> Result<String, String> {
    let declared = declared(mounts, name)
        .ok_or_else(|| format!("no prompt named {name}; `prise prompts` lists them"))?;
    let words = prise_config::split_words(text)?;
    let arguments = prompt_arguments(name, &declared, &words, text, &format!("/{name}"))?;
    let result = mounts
        .get_prompt(name, Some(arguments))
        .await
        .map_err(|e| e.to_string())?;
    let texts: Vec<String> = result
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            prise_mcp::model::ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect();
    if texts.iter().all(|t| t.trim().is_empty()) {
        return Err(format!("prompt {name} gave no text to send"));
    }
    Ok(texts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use crate::commands::prompt_arguments::prompt_arguments;

    /// As chat reads what follows `/name`.
    fn from_text(
        name: &str,
        declared: &[(String, bool)],
        text: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        let words = prise_config::split_words(text)?;
        prompt_arguments(name, declared, &words, text, &format!("/{name}"))
    }

    #[test]
    fn prompt_arguments_by_name_by_position_or_whole() {
        use serde_json::json;
        let one = [("question".to_owned(), true)];
        assert_eq!(
            from_text("p", &one, "How are servers restarted?").unwrap(),
            *json!({"question": "How are servers restarted?"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            from_text("p", &one, r#"question="a b""#).unwrap(),
            *json!({"question": "a b"}).as_object().unwrap()
        );
        assert_eq!(
            from_text("p", &one, "").unwrap_err(),
            "p needs question; e.g. /p question=..."
        );
        let two = [("city".to_owned(), true), ("unit".to_owned(), false)];
        assert_eq!(
            from_text("w", &two, "'New York' unit=f").unwrap(),
            *json!({"city": "New York", "unit": "f"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            from_text("w", &two, "Paris c extra").unwrap_err(),
            "w takes city, unit; \"extra\" is one too many"
        );
        assert!(
            from_text("w", &two, "\"Paris")
                .unwrap_err()
                .starts_with("unclosed")
        );
        assert_eq!(
            from_text("n", &[], "x").unwrap_err(),
            "n takes no arguments; \"x\" is one too many"
        );
    }
}
