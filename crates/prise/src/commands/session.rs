//! Saved conversations: one JSON line per message under `<state dir>/sessions/ID.jsonl`.

use std::io::Write;
use std::path::PathBuf;

use prise_llm::{Message, Role};

use crate::failure::Failure;

/// A conversation on disk.
pub struct Session {
    /// Its name, `[A-Za-z0-9_-]+`.
    pub id: String,
    path: PathBuf,
    /// Messages of the history already on disk (the system prompt excluded).
    saved: usize,
}

impl Session {
    /// Opens session `id` (created on first save), the latest one for `latest`, or a new
    /// one named after the time; returns it with the messages it already holds.
    pub fn open(id: Option<&str>, latest: bool) -> Result<(Session, Vec<Message>), Failure> {
        let dir = prise_mcp::child::default_state_dir()
            .ok_or_else(|| {
                Failure::usage(
                    "no state directory for sessions",
                    "set HOME or PRISE_STATE_DIR".to_owned(),
                )
            })?
            .join("sessions");
        let id = match (id, latest) {
            (Some(id), _) => id.to_owned(),
            (None, true) => newest(&dir).ok_or_else(|| {
                Failure::usage(
                    "there is no saved session to resume",
                    "start one with prise chat".to_owned(),
                )
            })?,
            (None, false) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                format!("{}-{:03}", now.as_secs(), now.subsec_millis())
            }
        };
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(Failure::usage(
                format!("session name {id:?} may only contain letters, digits, '_' and '-'"),
                None,
            ));
        }
        let path = dir.join(format!("{id}.jsonl"));
        let mut messages = Vec::new();
        if let Ok(text) = std::fs::read_to_string(&path) {
            for (number, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let message: Message = serde_json::from_str(line).map_err(|e| {
                    Failure::usage(
                        format!(
                            "{}:{}: not a saved message: {e}",
                            path.display(),
                            number + 1
                        ),
                        None,
                    )
                })?;
                messages.push(message);
            }
        }
        let saved = messages.len();
        Ok((Session { id, path, saved }, messages))
    }

    /// Where it is saved.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends the messages of `history` not yet on disk.
    pub fn save(&mut self, history: &[Message]) -> std::io::Result<()> {
        let conversation: Vec<&Message> =
            history.iter().filter(|m| m.role != Role::System).collect();
        if conversation.len() <= self.saved {
            return Ok(());
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        for message in &conversation[self.saved..] {
            writeln!(
                file,
                "{}",
                serde_json::to_string(message).map_err(std::io::Error::other)?
            )?;
        }
        self.saved = conversation.len();
        Ok(())
    }
}

/// Tool results longer than this are shortened in transcripts.
const TRANSCRIPT_RESULT_CHARS: usize = 2_000;

/// The conversation as Markdown for a person to read or share: the user's and the
/// model's words in full, tool calls with their arguments, results shortened.
pub fn transcript(history: &[Message]) -> String {
    let mut text = String::new();
    for message in history {
        match message.role {
            Role::System => {}
            Role::User => text.push_str(&format!("## You\n\n{}\n\n", message.text.trim())),
            Role::Assistant => {
                if !message.text.trim().is_empty() {
                    text.push_str(&format!("## Model\n\n{}\n\n", message.text.trim()));
                }
                for call in &message.tool_calls {
                    text.push_str(&format!("- calls `{}` `{}`\n", call.name, call.arguments));
                }
                if !message.tool_calls.is_empty() {
                    text.push('\n');
                }
            }
            Role::Tool => {
                let total = message.text.chars().count();
                let shown: String = message.text.chars().take(TRANSCRIPT_RESULT_CHARS).collect();
                let fence = if shown.contains("```") { "````" } else { "```" };
                text.push_str(&format!("{fence}text\n{}\n{fence}\n", shown.trim_end()));
                if total > TRANSCRIPT_RESULT_CHARS {
                    text.push_str(&format!(
                        "({} more characters)\n",
                        total - TRANSCRIPT_RESULT_CHARS
                    ));
                }
                text.push('\n');
            }
        }
    }
    text
}

/// The most recently written session.
fn newest(dir: &std::path::Path) -> Option<String> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(modified, _)| *modified)
        .and_then(|(_, path)| path.file_stem()?.to_str().map(str::to_owned))
}
