//! Writing results to stdout.
//!
//! Results go through a locked, buffered stdout and every write is checked, so a
//! reader that goes away (`prise tools | head -1`) ends prise quietly through
//! [`crate::failure::Failure::BrokenPipe`] instead of a panic from `println!`.

use std::borrow::Cow;
use std::io::{self, BufWriter, StdoutLock, Write};

/// Buffered, locked stdout.
pub type Stdout = BufWriter<StdoutLock<'static>>;

/// Buffered stdout for one command's results.
pub fn stdout() -> Stdout {
    BufWriter::new(io::stdout().lock())
}

/// Prints a value as pretty JSON followed by a newline.
pub fn json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// Text from a server or a model made safe to show on a terminal: control characters
/// other than newline and tab are shown as symbols (ESC as `␛`) instead of acting.
/// Without this, a tool description, a server's stderr or a model's arguments could
/// move the cursor, clear a line and rewrite what an approval prompt appears to ask.
pub fn printable(text: &str) -> Cow<'_, str> {
    shown(text, false)
}

/// [`printable`], and invisible characters (see [`prise_agent::is_hidden`]) shown as
/// their code points: for names, descriptions and arguments, where a server could
/// hide words from the person that the model reads, or make one path look like
/// another. (Not for prose, where right-to-left marks are legitimate.)
pub fn revealed(text: &str) -> Cow<'_, str> {
    shown(text, true)
}

fn shown(text: &str, reveal: bool) -> Cow<'_, str> {
    let acts = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || (reveal && prise_agent::is_hidden(c))
    };
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !acts(c) => shown.push(c),
            // The Control Pictures block has a symbol for each C0 character.
            c if (c as u32) < 0x20 => shown.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
            '\u{7f}' => shown.push('␡'),
            c if c.is_control() => shown.push('�'),
            c => shown.push_str(&format!("⟦U+{:04X}⟧", c as u32)),
        }
    }
    shown.into()
}

/// Prints rows under a header, each column as wide as its widest cell; the last
/// column is not padded. Cells are shown [`revealed`].
pub fn table(out: &mut impl Write, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| revealed(cell).into_owned()).collect())
        .collect();
    let rows = rows.as_slice();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(
                    ' ',
                    widths[i] - cell.chars().count() + 2,
                ));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{printable, revealed};

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            printable("ok\x1b[2K\rdelete everything\x07\x7f\u{9b}"),
            "ok␛[2K␍delete everything␇␡�"
        );
        assert_eq!(revealed("a\u{200B}b\u{E0041}"), "a⟦U+200B⟧b⟦U+E0041⟧");
        assert_eq!(printable("שלום\u{200F}"), "שלום\u{200F}");
    }
}
