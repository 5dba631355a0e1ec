//! Output that has stopped meaning anything: a small model looping on one piece of
//! text, or writing blank lines by the thousand, would go on until its context is
//! full (minutes on a CPU). The stream is watched and cut there.

/// Blank characters in a row that end a reply.
const MAX_BLANK_RUN: usize = 1_000;
/// How often one short piece may repeat back to back.
const MAX_REPEATS: usize = 40;
/// The longest piece a loop is looked for with.
const MAX_PERIOD: usize = 64;
/// How much of the end of the reply a loop must fill to count.
const LOOP_SPAN: usize = 2_000;

/// Watches a reply's text as it streams.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// The end of the text so far (at most `2 * LOOP_SPAN` characters).
    tail: Vec<char>,
    /// Blank characters at the end.
    blank_run: usize,
    /// Characters since the last loop check.
    since_check: usize,
}

impl Watch {
    /// Takes more text; `Some(how)` once it has degenerated.
    pub fn push(&mut self, piece: &str) -> Option<String> {
        for c in piece.chars() {
            if c.is_whitespace() {
                self.blank_run += 1;
            } else {
                self.blank_run = 0;
            }
            self.tail.push(c);
        }
        if self.blank_run >= MAX_BLANK_RUN {
            return Some(format!("{} blank characters in a row", self.blank_run));
        }
        if self.tail.len() > 2 * LOOP_SPAN {
            self.tail.drain(..self.tail.len() - LOOP_SPAN);
        }
        self.since_check += piece.chars().count();
        if self.since_check < 256 || self.tail.len() < LOOP_SPAN {
            return None;
        }
        self.since_check = 0;
        self.looping()
    }

    /// Whether the last `LOOP_SPAN` characters are one piece of at most `MAX_PERIOD`
    /// characters over and over (and at least `MAX_REPEATS` times).
    fn looping(&self) -> Option<String> {
        let tail = &self.tail[self.tail.len() - LOOP_SPAN..];
        (1..=MAX_PERIOD)
            .find(|&period| {
                LOOP_SPAN / period >= MAX_REPEATS
                    && (period..tail.len()).all(|i| tail[i] == tail[i - period])
                    // A line of dashes or a table rule is formatting, not a loop.
                    && tail[..period].iter().any(|c| c.is_alphanumeric())
            })
            .map(|period| {
                let piece: String = tail[..period].iter().collect();
                format!("{piece:?} repeated over {} times", LOOP_SPAN / period)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::Watch;

    #[test]
    fn loops_and_blank_floods_are_caught_and_prose_is_not() {
        let mut watch = Watch::default();
        let mut caught = None;
        for _ in 0..500 {
            caught = caught.or(watch.push("the the "));
        }
        assert_eq!(caught.as_deref(), Some("\"the \" repeated over 500 times"));

        let mut watch = Watch::default();
        let caught = (0..2000).find_map(|_| watch.push("\n"));
        assert_eq!(caught.as_deref(), Some("1000 blank characters in a row"));

        let mut watch = Watch::default();
        let prose = "Servers are started at once; a slow one delays only itself. ";
        let table = "|---|---|\n";
        for i in 0..200 {
            assert_eq!(watch.push(&format!("{prose}{i} ")), None);
            assert_eq!(watch.push(table), None);
        }
    }
}
