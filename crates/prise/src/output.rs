//! Writing results to stdout.
//!
//! Results go through a locked, buffered stdout and every write is checked, so a
//! reader that goes away (`prise tools | head -1`) ends prise quietly through
//! [`crate::failure::Failure::BrokenPipe`] instead of a panic from `println!`.

use std::io::{self, BufWriter, StdoutLock, Write};

/// Buffered stdout for one command's results.
pub fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Prints a value as pretty JSON followed by a newline.
pub fn json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}
