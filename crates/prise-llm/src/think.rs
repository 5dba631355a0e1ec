//! Reasoning written inline: `<think>...</think>` at the start of a reply.
//!
//! Reasoning models served by Ollama, vLLM or llama.cpp without a reasoning parser
//! (Qwen3, DeepSeek-R1, QwQ) write their thoughts into the content, inside `<think>`
//! tags. They are not the answer: shown as one they would end up in `prise run`'s
//! output, and read as one, a tool call the model only considered could be taken for a
//! call it made. [`ThinkSplitter`] separates them while the reply streams.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// One piece of a streamed reply, once sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Part of the answer.
    Text(String),
    /// Part of the reasoning.
    Reasoning(String),
}

/// Sorts a reply's content deltas into answer and reasoning.
#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    /// Content not yet sorted: what may be the start of a tag.
    pending: String,
    state: State,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace yet: a `<think>` may still open.
    #[default]
    Start,
    /// Inside `<think>`.
    Thinking,
    /// Just after `</think>`: blank lines before the answer are dropped.
    AfterThought,
    /// The answer: everything from here is text.
    Answer,
}

impl ThinkSplitter {
    /// Takes a delta; returns what is known of it now.
    pub(crate) fn push(&mut self, delta: &str) -> Vec<Piece> {
        self.pending.push_str(delta);
        let mut pieces = Vec::new();
        loop {
            match self.state {
                State::Start => {
                    let trimmed = self.pending.trim_start();
                    if let Some(rest) = trimmed.strip_prefix(OPEN) {
                        self.pending = rest.to_owned();
                        self.state = State::Thinking;
                    } else if OPEN.starts_with(trimmed) {
                        // Empty, whitespace, or "<thi": wait.
                        return pieces;
                    } else {
                        self.state = State::Answer;
                    }
                }
                State::Thinking => match self.pending.find(CLOSE) {
                    Some(end) => {
                        let thought = self.pending[..end].to_owned();
                        let rest = self.pending[end + CLOSE.len()..].to_owned();
                        push(&mut pieces, Piece::Reasoning(thought));
                        self.pending = rest;
                        self.state = State::AfterThought;
                    }
                    None => {
                        // Keep what may be the start of "</think>".
                        let keep = partial_suffix(&self.pending, CLOSE);
                        let cut = self.pending.len() - keep;
                        let thought: String = self.pending.drain(..cut).collect();
                        push(&mut pieces, Piece::Reasoning(thought));
                        return pieces;
                    }
                },
                State::AfterThought => {
                    let start = self.pending.len() - self.pending.trim_start().len();
                    self.pending.drain(..start);
                    if self.pending.is_empty() {
                        return pieces;
                    }
                    self.state = State::Answer;
                }
                State::Answer => {
                    let text = std::mem::take(&mut self.pending);
                    push(&mut pieces, Piece::Text(text));
                    return pieces;
                }
            }
        }
    }

    /// The reply ended: what was held back.
    pub(crate) fn finish(&mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        let mut pieces = Vec::new();
        match self.state {
            State::Thinking => push(&mut pieces, Piece::Reasoning(rest)),
            State::Start | State::AfterThought | State::Answer => {
                push(&mut pieces, Piece::Text(rest))
            }
        }
        pieces
    }
}

fn push(pieces: &mut Vec<Piece>, piece: Piece) {
    match &piece {
        Piece::Text(s) | Piece::Reasoning(s) if s.is_empty() => {}
        _ => pieces.push(piece),
    }
}

/// The length of the longest end of `text` that begins `tag`.
fn partial_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| text.is_char_boundary(text.len().saturating_sub(n)) && text.ends_with(&tag[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` in deltas of `size` characters; returns (answer, reasoning).
    fn split(text: &str, size: usize) -> (String, String) {
        let mut splitter = ThinkSplitter::default();
        let chars: Vec<char> = text.chars().collect();
        let mut pieces = Vec::new();
        for chunk in chars.chunks(size) {
            pieces.extend(splitter.push(&chunk.iter().collect::<String>()));
        }
        pieces.extend(splitter.finish());
        let (mut answer, mut reasoning) = (String::new(), String::new());
        for piece in pieces {
            match piece {
                Piece::Text(t) => answer.push_str(&t),
                Piece::Reasoning(r) => reasoning.push_str(&r),
            }
        }
        (answer, reasoning)
    }

    #[test]
    fn thoughts_at_the_start_are_set_apart_however_the_reply_is_cut() {
        let reply = "\n<think>\nCall {\"name\": \"fs__rm\"}? No.\n</think>\n\nThe answer is 4.";
        for size in 1..=12 {
            assert_eq!(
                split(reply, size),
                (
                    "The answer is 4.".to_owned(),
                    "\nCall {\"name\": \"fs__rm\"}? No.\n".to_owned()
                ),
                "deltas of {size}"
            );
        }
    }

    #[test]
    fn a_reply_without_thoughts_is_all_answer() {
        for reply in [
            "Plain answer.",
            "  <b>bold</b>",
            "a <think> later is text",
            "<",
        ] {
            for size in 1..=4 {
                assert_eq!(split(reply, size), (reply.to_owned(), String::new()));
            }
        }
    }

    #[test]
    fn an_unclosed_thought_stays_a_thought() {
        assert_eq!(
            split("<think>still going </thi", 3),
            (String::new(), "still going </thi".to_owned())
        );
    }

    #[test]
    fn text_streams_without_waiting_for_the_end() {
        let mut splitter = ThinkSplitter::default();
        assert_eq!(splitter.push("<thi"), []);
        assert_eq!(
            splitter.push("nk>hmm </th"),
            [Piece::Reasoning("hmm ".into())]
        );
        assert_eq!(splitter.push("ink>Yes"), [Piece::Text("Yes".into())]);
        assert_eq!(splitter.push(", no."), [Piece::Text(", no.".into())]);
    }
}
