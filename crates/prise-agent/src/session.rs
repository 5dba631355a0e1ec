//! Saved conversations: one JSON line per message under `<state dir>/sessions/ID.jsonl`,
//! after a first line that says which model the session began with and when.
//!
//! A library user resumes them as the command line does: [`Session::open`], then
//! [`crate::Agent::resume`] with the messages, and [`Session::save`] after each run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use prise_llm::{Message, Role};
use serde::{Deserialize, Serialize};

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// There is no state directory to keep sessions in.
    #[error("no state directory for sessions (set HOME or PRISE_STATE_DIR)")]
    NoStateDir,
    /// `--resume` with nothing saved.
    #[error("there is no saved session to resume")]
    NoneSaved,
    /// A name that would not make a file name.
    #[error("session name {0:?} may only contain letters, digits, '_' and '-'")]
    BadName(String),
    /// A line of the file is not a saved message.
    #[error("{}:{line}: not a saved message: {cause}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What serde said.
        cause: String,
    },
}

/// The first line of a session file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Header {
    /// Always `"session"`: tells the header from a message.
    prise: String,
    /// The model the session began with, as `provider:model`.
    model: String,
    /// When it began, in seconds since 1970.
    created: u64,
}

/// A conversation on disk.
pub struct Session {
    /// Its name, `[A-Za-z0-9_-]+`.
    pub id: String,
    path: PathBuf,
    /// Messages of the history already on disk (the system prompt excluded).
    saved: usize,
    /// The model named in a new session's header.
    model: String,
    header_written: bool,
}

/// Where sessions are kept: `<state dir>/sessions`.
pub fn sessions_dir() -> Option<PathBuf> {
    prise_config::state_dir().map(|dir| dir.join("sessions"))
}

impl Session {
    /// Opens session `id` (created on first save), the latest one for `latest`, or a
    /// new one named after the time; returns it with the messages it already holds.
    /// `model` is recorded when the session is new.
    pub fn open(
        id: Option<&str>,
        latest: bool,
        model: &str,
    ) -> Result<(Session, Vec<Message>), SessionError> {
        let dir = sessions_dir().ok_or(SessionError::NoStateDir)?;
        let id = match (id, latest) {
            (Some(id), _) => id.to_owned(),
            (None, true) => list(&dir)
                .into_iter()
                .next()
                .map(|s| s.id)
                .ok_or(SessionError::NoneSaved)?,
            (None, false) => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                format!("{}-{:03}", now.as_secs(), now.subsec_millis())
            }
        };
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(SessionError::BadName(id));
        }
        let path = dir.join(format!("{id}.jsonl"));
        let (header, messages) = match std::fs::read_to_string(&path) {
            Ok(text) => read(&path, &text)?,
            Err(_) => (None, Vec::new()),
        };
        let saved = messages.len();
        let exists = path.exists();
        Ok((
            Session {
                id,
                path,
                saved,
                model: model.to_owned(),
                // A file of an older prise has no header: none is added in its middle.
                header_written: header.is_some() || exists,
            },
            messages,
        ))
    }

    /// Where it is saved.
    pub fn path(&self) -> &Path {
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
        if !self.header_written {
            let header = Header {
                prise: "session".to_owned(),
                model: self.model.clone(),
                created: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs(),
            };
            writeln!(
                file,
                "{}",
                serde_json::to_string(&header).map_err(std::io::Error::other)?
            )?;
            self.header_written = true;
        }
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

/// The header (when the file has one) and the messages of a session file.
fn read(path: &Path, text: &str) -> Result<(Option<Header>, Vec<Message>), SessionError> {
    let mut header = None;
    let mut messages = Vec::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if number == 0
            && let Ok(found) = serde_json::from_str::<Header>(line)
            && found.prise == "session"
        {
            header = Some(found);
            continue;
        }
        let message: Message = serde_json::from_str(line).map_err(|e| SessionError::Corrupt {
            path: path.to_owned(),
            line: number + 1,
            cause: e.to_string(),
        })?;
        messages.push(message);
    }
    Ok((header, messages))
}

/// A saved session, for a listing.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo {
    /// Its name (`chat --resume ID`).
    pub id: String,
    /// When it was last written, in seconds since 1970.
    pub modified: u64,
    /// The model it began with, when recorded.
    pub model: Option<String>,
    /// How many questions were asked in it.
    pub turns: usize,
    /// The first question, on one line.
    pub first_prompt: Option<String>,
}

/// The sessions saved in `dir`, the most recent first. Files that cannot be read are
/// left out.
pub fn list(dir: &Path) -> Vec<SessionInfo> {
    let mut sessions: Vec<SessionInfo> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|entry| {
            let path = entry.path();
            let modified = entry
                .metadata()
                .ok()?
                .modified()
                .ok()?
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_secs();
            let id = path.file_stem()?.to_str()?.to_owned();
            let text = std::fs::read_to_string(&path).ok()?;
            let (header, messages) = read(&path, &text).ok()?;
            let questions: Vec<&Message> =
                messages.iter().filter(|m| m.role == Role::User).collect();
            Some(SessionInfo {
                id,
                modified,
                model: header.map(|h| h.model),
                turns: questions.len(),
                first_prompt: questions.first().map(|m| one_line(&m.text)),
            })
        })
        .collect();
    sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| b.id.cmp(&a.id)));
    sessions
}

/// The last `count` exchanges of a conversation, each a question and the model's
/// answer (its final text), for a person picking a conversation up again.
pub fn last_exchanges(messages: &[Message], count: usize) -> Vec<(String, String)> {
    let mut exchanges: Vec<(String, String)> = Vec::new();
    for message in messages {
        match message.role {
            Role::User => exchanges.push((message.text.clone(), String::new())),
            Role::Assistant if !message.text.trim().is_empty() => {
                if let Some(last) = exchanges.last_mut() {
                    last.1 = message.text.clone();
                }
            }
            _ => {}
        }
    }
    let skip = exchanges.len().saturating_sub(count);
    exchanges.into_iter().skip(skip).collect()
}

fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_exchanges_pair_questions_with_final_answers() {
        let messages = vec![
            Message::text(Role::User, "one"),
            Message::assistant(String::new(), Vec::new()),
            Message::text(Role::Assistant, "first answer"),
            Message::text(Role::User, "two"),
            Message::text(Role::Assistant, "second answer"),
            Message::text(Role::User, "three"),
        ];
        assert_eq!(
            last_exchanges(&messages, 2),
            [
                ("two".to_owned(), "second answer".to_owned()),
                ("three".to_owned(), String::new())
            ]
        );
        assert_eq!(one_line("a\n  b\tc"), "a b c");
    }
}
