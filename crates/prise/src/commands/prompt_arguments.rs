//! A server's prompt and its arguments, read from words: `key=value` or in order,
//! for `prise prompt` and chat's `/server__prompt` alike.

use serde_json::Value;

/// The arguments prompt `name` declares (name, required), when it is mounted.
pub fn declared(mounts: &prise_mcp::Mounts, name: &str) -> Option<Vec<(String, bool)>> {
    mounts
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
}

/// A prompt's arguments from the words that follow its name: `key=value` for a
/// declared argument, and other words for the declared arguments in order. A prompt
/// with one argument takes the whole `text` (the words as typed), as Claude Code
/// does: `/docs__cite_answer How are servers restarted?`. Required arguments left
/// out are an error that shows `example`, how to give them.
pub fn prompt_arguments(
    name: &str,
    declared: &[(String, bool)],
    words: &[String],
    text: &str,
    example: &str,
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
    if declared.len() == 1 && !words.iter().any(|w| keyed(w, declared).is_some()) {
        if !text.trim().is_empty() {
            arguments.insert(declared[0].0.clone(), Value::String(text.to_owned()));
        }
    } else {
        let mut positional = Vec::new();
        for word in words {
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
            "{name} needs {}; e.g. {example} {}",
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
