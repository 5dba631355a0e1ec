//! `prise sessions`: the saved conversations, the latest first.

use std::io::Write;

use crate::failure::Failure;
use crate::output;

/// Prints each saved session: id, when it was last written, model, questions asked,
/// and the first question.
pub fn list(json: bool) -> Result<(), Failure> {
    let sessions = prise_agent::session::sessions_dir()
        .map(|dir| prise_agent::session::list(&dir))
        .unwrap_or_default();
    let mut out = output::stdout();
    if json {
        output::json(&mut out, &sessions)?;
    } else if sessions.is_empty() {
        writeln!(out, "no saved sessions; prise chat starts one")?;
    } else {
        let rows: Vec<Vec<String>> = sessions
            .iter()
            .map(|s| {
                vec![
                    s.id.clone(),
                    date(s.modified),
                    s.model.clone().unwrap_or_else(|| "-".to_owned()),
                    s.turns.to_string(),
                    s.first_prompt.clone().unwrap_or_default(),
                ]
            })
            .collect();
        output::table(
            &mut out,
            &["ID", "DATE (UTC)", "MODEL", "TURNS", "FIRST PROMPT"],
            &rows,
        )?;
    }
    out.flush()?;
    Ok(())
}

/// `YYYY-MM-DD HH:MM` of a Unix time, in UTC.
fn date(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let minutes = (seconds % 86_400) / 60;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        minutes / 60,
        minutes % 60
    )
}

#[cfg(test)]
mod tests {
    use super::date;

    #[test]
    fn dates_in_utc() {
        assert_eq!(date(0), "1970-01-01 00:00");
        assert_eq!(date(1_796_109_360), "2026-12-01 07:16");
        assert_eq!(date(951_782_400), "2000-02-29 00:00");
    }
}
