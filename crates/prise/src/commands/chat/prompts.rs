//! Servers' prompts as chat commands: `/server__prompt ARGS`.

use serde_json::Value;

/// The user text of a mounted prompt, its arguments read from `text` (see
/// [`prompt_arguments`]).
pub async fn prompt_text(
    mounts: &prise_mcp::Mounts,
    name: &str,
    text: &str,
) -> Result<String, String> {
    let declared: Vec<(String, bool)> = mounts
        .prompts()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| {
            p.prompt
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.name, a.required.unwrap_or(false)))
                .collect()
        })
        .ok_or_else(|| format!("no prompt named {name}; `prise prompts` lists them"))?;
    let arguments = prompt_arguments(name, &declared, text)?;
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

/// A prompt's arguments from what follows its command: `key=value` pairs (quotes keep
/// spaces: `key="a b"`), and words for the declared arguments in order. A prompt with
/// one argument takes the whole text, as Claude Code does: `/docs__cite_answer How are
/// servers restarted?`.
fn prompt_arguments(
    name: &str,
    declared: &[(String, bool)],
    text: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    let mut arguments = serde_json::Map::new();
    let names = || {
        declared
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    fn keyed<'w>(word: &'w str, declared: &[(String, bool)]) -> Option<(&'w str, &'w str)> {
        word.split_once('=')
            .filter(|(key, _)| declared.iter().any(|(n, _)| n == key))
    }
    let words = prise_config::split_words(text)?;
    if declared.len() == 1 && !words.iter().any(|w| keyed(w, declared).is_some()) {
        if !text.is_empty() {
            arguments.insert(declared[0].0.clone(), Value::String(text.to_owned()));
        }
    } else {
        let mut positional = Vec::new();
        for word in &words {
            match keyed(word, declared) {
                Some((key, value)) => {
                    arguments.insert(key.to_owned(), Value::String(value.to_owned()));
                }
                None => positional.push(word.clone()),
            }
        }
        let free: Vec<&String> = declared
            .iter()
            .map(|(n, _)| n)
            .filter(|n| !arguments.contains_key(*n))
            .collect();
        let mut free = free.into_iter();
        for word in positional {
            let Some(slot) = free.next() else {
                return Err(format!(
                    "{name} takes {}; {word:?} is one too many",
                    if declared.is_empty() {
                        "no arguments".to_owned()
                    } else {
                        names()
                    }
                ));
            };
            arguments.insert(slot.clone(), Value::String(word));
        }
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|(n, required)| *required && !arguments.contains_key(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{name} needs {}; e.g. /{name} {}",
            missing.join(", "),
            missing
                .iter()
                .map(|n| format!("{n}=..."))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::prompt_arguments;

    #[test]
    fn prompt_arguments_by_name_by_position_or_whole() {
        use serde_json::json;
        let one = [("question".to_owned(), true)];
        assert_eq!(
            prompt_arguments("p", &one, "How are servers restarted?").unwrap(),
            *json!({"question": "How are servers restarted?"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            prompt_arguments("p", &one, r#"question="a b""#).unwrap(),
            *json!({"question": "a b"}).as_object().unwrap()
        );
        assert_eq!(
            prompt_arguments("p", &one, "").unwrap_err(),
            "p needs question; e.g. /p question=..."
        );
        let two = [("city".to_owned(), true), ("unit".to_owned(), false)];
        assert_eq!(
            prompt_arguments("w", &two, "'New York' unit=f").unwrap(),
            *json!({"city": "New York", "unit": "f"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            prompt_arguments("w", &two, "Paris c extra").unwrap_err(),
            "w takes city, unit; \"extra\" is one too many"
        );
        assert!(
            prompt_arguments("w", &two, "\"Paris")
                .unwrap_err()
                .starts_with("unclosed")
        );
        assert_eq!(
            prompt_arguments("n", &[], "x").unwrap_err(),
            "n takes no arguments; \"x\" is one too many"
        );
    }
}
