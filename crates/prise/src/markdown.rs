//! Markdown for the terminal, rendered as the model streams it.
//!
//! A model's answer arrives a few characters at a time, and a person wants to read it
//! as it comes, so rendering cannot wait for whole paragraphs. [`TerminalMarkdown`]
//! prints each character as soon as its meaning is known: only what might still be a
//! marker (a `*` that could open `**`, the start of a line that could be a heading or a
//! code fence) is held back, a few characters at most. It renders the parts of Markdown
//! that models write: headings, bullets, quotes, rules, fenced code, bold, italics and
//! inline code. Tables and links are printed as written, which reads well enough.

const BOLD: &str = "\x1b[1m";
const NOT_BOLD: &str = "\x1b[22m";
const ITALIC: &str = "\x1b[3m";
const NOT_ITALIC: &str = "\x1b[23m";
const UNDERLINE: &str = "\x1b[4m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const DEFAULT_COLOR: &str = "\x1b[39m";
/// How a model's reasoning is shown: dim italics.
pub const THOUGHT: &str = "\x1b[2;3m";
/// Ends every style.
pub const RESET: &str = "\x1b[0m";

/// Streaming Markdown to ANSI: [`push`](Self::push) deltas, then
/// [`finish`](Self::finish); each returns the text to print now.
#[derive(Debug, Default)]
pub struct TerminalMarkdown {
    /// Characters whose meaning is not known yet.
    pending: String,
    /// Nothing of the current line has been printed.
    line_start: bool,
    /// Inside a fenced code block.
    fence: bool,
    /// The styles open on the current line.
    heading: bool,
    bold: bool,
    italic: bool,
    code: bool,
    /// The last character printed, to tell an opening `*` from a closing one.
    previous: Option<char>,
}

/// `text` without the style codes at its end, to see where the cursor is.
pub fn without_trailing_styles(mut text: &str) -> &str {
    while text.ends_with('m')
        && let Some(start) = text.rfind("\x1b[")
        && text[start + 2..text.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || c == ';')
    {
        text = &text[..start];
    }
    text
}

/// What the start of a line turned out to be.
enum LineStart {
    /// Not enough text to tell.
    Undecided,
    /// A fence line (```lang), whole, newline included.
    Fence(usize),
    /// A rule (`---`), whole.
    Rule(usize),
    /// A heading marker of this length (`## `).
    Heading(usize, usize),
    /// A bullet (`- `, `* `, `+ `) after this much indentation.
    Bullet(usize),
    /// A quote marker (`> `).
    Quote,
    /// Plain text.
    Text,
}

impl TerminalMarkdown {
    /// A renderer at the start of a document.
    pub fn new() -> TerminalMarkdown {
        TerminalMarkdown {
            line_start: true,
            ..TerminalMarkdown::default()
        }
    }

    /// Takes more of the document; returns what can be printed now.
    pub fn push(&mut self, delta: &str) -> String {
        self.pending.push_str(delta);
        let mut out = String::new();
        self.render(&mut out, false);
        out
    }

    /// Ends the document: prints what was held back and closes every style.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        self.render(&mut out, true);
        if self.heading || self.bold || self.italic || self.code || self.fence {
            out.push_str(RESET);
        }
        *self = TerminalMarkdown::new();
        out
    }

    fn render(&mut self, out: &mut String, end: bool) {
        while !self.pending.is_empty() {
            let consumed = if self.line_start {
                self.start_line(out, end)
            } else if self.fence {
                self.code_line(out)
            } else {
                self.inline(out, end)
            };
            match consumed {
                Some(n) => {
                    self.pending.drain(..n);
                }
                None => return,
            }
        }
    }

    /// Decides what the line is; `None` to wait for more text.
    fn start_line(&mut self, out: &mut String, end: bool) -> Option<usize> {
        let start = classify(&self.pending, self.fence, end);
        self.line_start = false;
        match start {
            LineStart::Undecided => {
                self.line_start = true;
                None
            }
            LineStart::Fence(n) => {
                self.fence = !self.fence;
                let line = self.pending[..n].trim_end_matches('\n');
                out.push_str(DIM);
                out.push_str(line);
                out.push_str(RESET);
                if self.pending[..n].ends_with('\n') {
                    out.push('\n');
                }
                self.line_start = true;
                Some(n)
            }
            LineStart::Rule(n) => {
                out.push_str(DIM);
                out.push_str(&"─".repeat(40));
                out.push_str(RESET);
                if self.pending[..n].ends_with('\n') {
                    out.push('\n');
                }
                self.line_start = true;
                Some(n)
            }
            LineStart::Heading(n, level) => {
                self.heading = true;
                out.push_str(BOLD);
                if level == 1 {
                    out.push_str(UNDERLINE);
                }
                Some(n)
            }
            LineStart::Bullet(indent) => {
                out.push_str(&self.pending[..indent]);
                out.push_str("• ");
                self.previous = Some(' ');
                Some(indent + 2)
            }
            LineStart::Quote => {
                out.push_str(DIM);
                out.push_str("│ ");
                out.push_str(RESET);
                self.previous = Some(' ');
                Some(2)
            }
            LineStart::Text => {
                if self.fence {
                    out.push_str(CODE);
                }
                Some(0)
            }
        }
    }

    /// A line inside a code block: as written, up to its end.
    fn code_line(&mut self, out: &mut String) -> Option<usize> {
        match self.pending.find('\n') {
            Some(i) => {
                out.push_str(&self.pending[..i]);
                out.push_str(DEFAULT_COLOR);
                out.push('\n');
                self.line_start = true;
                Some(i + 1)
            }
            None => {
                out.push_str(&self.pending);
                Some(self.pending.len())
            }
        }
    }

    /// One character (or `**`) of ordinary text.
    fn inline(&mut self, out: &mut String, end: bool) -> Option<usize> {
        let mut chars = self.pending.chars();
        let c = chars.next()?;
        let next = chars.next();
        match c {
            '\n' => {
                self.close_line(out);
                out.push('\n');
                self.line_start = true;
                self.previous = None;
                return Some(1);
            }
            '`' => {
                self.code = !self.code;
                out.push_str(if self.code { CODE } else { DEFAULT_COLOR });
            }
            '*' if self.code => out.push('*'),
            '*' if next.is_none() && !end => return None,
            '*' if next == Some('*') => {
                self.bold = !self.bold;
                out.push_str(if self.bold { BOLD } else { NOT_BOLD });
                if self.heading {
                    out.push_str(BOLD);
                }
                self.previous = Some('*');
                return Some(2);
            }
            '*' => {
                let opens = !self.italic && next.is_some_and(|n| !n.is_whitespace());
                let closes = self.italic && self.previous.is_some_and(|p| !p.is_whitespace());
                if opens || closes {
                    self.italic = !self.italic;
                    out.push_str(if self.italic { ITALIC } else { NOT_ITALIC });
                } else {
                    out.push('*');
                }
            }
            c => out.push(c),
        }
        self.previous = Some(c);
        Some(c.len_utf8())
    }

    /// A line's styles end with it: an unclosed `**` must not bleed into the next.
    fn close_line(&mut self, out: &mut String) {
        if self.heading || self.bold || self.italic || self.code {
            out.push_str(RESET);
        }
        self.heading = false;
        self.bold = false;
        self.italic = false;
        self.code = false;
    }
}

/// What `text`, the start of a line, is. `end` means no more text will come.
fn classify(text: &str, fence: bool, end: bool) -> LineStart {
    let line_end = text.find('\n');
    let whole = line_end.is_some() || end;
    let line = &text[..line_end.unwrap_or(text.len())];
    let taken = line_end.map_or(text.len(), |i| i + 1);
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    // Could more text still make this a marker? Then wait (a few characters at most).
    let could_be = |marker: &str| !whole && marker.starts_with(trimmed);
    if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
        return if whole {
            LineStart::Fence(taken)
        } else {
            LineStart::Undecided
        };
    }
    if could_be("```") || could_be("~~~") {
        return LineStart::Undecided;
    }
    if fence {
        return LineStart::Text;
    }
    if !trimmed.is_empty() && (could_be("---") || could_be("***") || could_be("___")) {
        return LineStart::Undecided;
    }
    let rule = |c: char| trimmed.len() >= 3 && trimmed.chars().all(|x| x == c || x == ' ');
    if trimmed.starts_with("---") || trimmed.starts_with("***") || trimmed.starts_with("___") {
        if !whole {
            return LineStart::Undecided;
        }
        if rule('-') || rule('*') || rule('_') {
            return LineStart::Rule(taken);
        }
    }
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && indent < 4 {
        match trimmed[hashes..].chars().next() {
            Some(' ') => return LineStart::Heading(indent + hashes + 1, hashes),
            None if !whole => return LineStart::Undecided,
            _ => {}
        }
    }
    for bullet in ['-', '*', '+'] {
        if trimmed.starts_with(bullet) {
            match trimmed[1..].chars().next() {
                Some(' ') => return LineStart::Bullet(indent),
                None if !whole => return LineStart::Undecided,
                _ => {}
            }
        }
    }
    if trimmed.starts_with("> ") && indent == 0 {
        return LineStart::Quote;
    }
    if trimmed == ">" && !whole {
        return LineStart::Undecided;
    }
    // Only spaces so far: they may indent a bullet.
    if trimmed.is_empty() && !whole {
        return LineStart::Undecided;
    }
    LineStart::Text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> String {
        let mut md = TerminalMarkdown::new();
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    /// Styles as readable tags, so expectations are easy to read.
    fn tags(ansi: &str) -> String {
        [
            (BOLD, "<b>"),
            (NOT_BOLD, "</b>"),
            (ITALIC, "<i>"),
            (NOT_ITALIC, "</i>"),
            (UNDERLINE, "<u>"),
            (DIM, "<dim>"),
            (CODE, "<code>"),
            (DEFAULT_COLOR, "</code>"),
            (RESET, "<reset>"),
        ]
        .iter()
        .fold(ansi.to_owned(), |s, (code, tag)| s.replace(code, tag))
    }

    #[test]
    fn headings_bullets_quotes_and_rules() {
        assert_eq!(tags(&render("# Title\n")), "<b><u>Title<reset>\n");
        assert_eq!(tags(&render("## Part\ntext")), "<b>Part<reset>\ntext");
        assert_eq!(tags(&render("- one\n  * two\n")), "• one\n  • two\n");
        assert_eq!(tags(&render("> said\n")), "<dim>│ <reset>said\n");
        assert_eq!(
            tags(&render("---\n")),
            format!("<dim>{}<reset>\n", "─".repeat(40))
        );
        // Not markers: no space after, or a rule-like line with other text.
        assert_eq!(
            tags(&render("#hashtag\n-1 degrees\n")),
            "#hashtag\n-1 degrees\n"
        );
    }

    #[test]
    fn emphasis_and_inline_code() {
        assert_eq!(
            tags(&render("a **bold** and *it* and `x*y`\n")),
            "a <b>bold</b> and <i>it</i> and <code>x*y</code>\n"
        );
        // Arithmetic is not emphasis.
        assert_eq!(tags(&render("2 * 3 * 4\n")), "2 * 3 * 4\n");
        // An unclosed style ends with its line.
        assert_eq!(tags(&render("**open\nnext\n")), "<b>open<reset>\nnext\n");
    }

    #[test]
    fn code_blocks_are_printed_as_written() {
        assert_eq!(
            tags(&render(
                "```rust\nlet a = **b**;\n# not a heading\n```\nafter\n"
            )),
            "<dim>```rust<reset>\n<code>let a = **b**;</code>\n<code># not a heading</code>\n<dim>```<reset>\nafter\n"
        );
    }

    /// However the model's text is cut into deltas, the terminal shows the same thing.
    #[test]
    fn the_output_does_not_depend_on_how_the_text_is_streamed() {
        let text = "***\n# Plan\n\nFirst **read** the `config`, then *write*:\n\n- a\n  - b\n> note\n\n```sh\nprise run -p \"x\"\n```\n---\n2 * 3 = 6, **done**";
        let whole = render(text);
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        for size in 1..=7 {
            let mut md = TerminalMarkdown::new();
            let mut out = String::new();
            for chunk in chars.chunks(size) {
                let (from, _) = chunk[0];
                let (last, c) = chunk[chunk.len() - 1];
                out.push_str(&md.push(&text[from..last + c.len_utf8()]));
            }
            out.push_str(&md.finish());
            assert_eq!(tags(&out), tags(&whole), "deltas of {size} characters");
        }
    }

    #[test]
    fn trailing_styles_are_seen_through() {
        assert_eq!(without_trailing_styles("done\n\x1b[0m"), "done\n");
        assert_eq!(
            without_trailing_styles("a\x1b[1mb\x1b[22m\x1b[0m"),
            "a\x1b[1mb"
        );
        assert_eq!(without_trailing_styles("5m"), "5m");
        assert_eq!(without_trailing_styles(""), "");
    }

    #[test]
    fn little_is_held_back() {
        let mut md = TerminalMarkdown::new();
        assert_eq!(md.push("Hello wor"), "Hello wor");
        assert_eq!(md.push("ld *"), "ld ");
        assert_eq!(tags(&md.push("*x")), "<b>x");
        assert_eq!(md.push("\n#"), format!("{RESET}\n"));
        assert_eq!(tags(&md.push("# Next")), "<b>Next");
    }
}
