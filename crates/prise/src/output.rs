//! Writing results to stdout.
//!
//! Results go through a locked, buffered stdout and every write is checked, so a
//! reader that goes away (`prise tools | head -1`) ends prise quietly through
//! [`crate::failure::Failure::BrokenPipe`] instead of a panic from `println!`.

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

/// Prints rows under a header, each column as wide as its widest cell; the last
/// column is not padded.
pub fn table(out: &mut impl Write, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
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
