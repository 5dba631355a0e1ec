//! How a query is read before it is matched: the values it names by their form (a
//! file, an address, an amount, a commit...), what it quotes or reports, which are
//! values to pass on, the names in it, and the words that say a state rather than ask
//! for an action.

use crate::lexicon::Lexicon;

/// What the query names by its form rather than its words: a file (`config.yaml`), an
/// image (`shot.png`), a web address, an email address, an issue key (`OPS-12`), a
/// channel (`#general`), an amount (`$20`), a pattern (`*.orig`), a commit, a number;
/// and the query without those values and without what it quotes or reports.
pub(crate) fn kinds_named(query: &str) -> (Vec<&'static str>, String) {
    let mut kinds = Vec::new();
    // A quoted text is what to pass on, and so is what is to be told or remembered
    // ("tell the team that the deploy is done"): it says nothing of which tool takes it.
    let query = without_reported(&without_quotes(query));
    let mut rest = String::new();
    for raw in query.split_whitespace() {
        let token = raw.trim_matches(|c: char| ",;:!?()[]{}\"'".contains(c));
        let token = token.trim_end_matches('.');
        let lower = token.to_ascii_lowercase();
        let kind: &[&str] = if lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("www.")
        {
            &["url"]
        } else if token.contains('@') && token.contains('.') && !token.starts_with('@') {
            &["email"]
        } else if let Some(channel) = token.strip_prefix('#')
            && channel.chars().next().is_some_and(char::is_alphabetic)
        {
            &["channel"]
        } else if is_amount(token) {
            &["amount", "currency"]
        } else if token.contains('*') && token.chars().any(char::is_alphanumeric) {
            &["pattern", "file"]
        } else if is_issue_key(token) {
            &["issue"]
        } else if is_commit_hash(token) {
            &["commit"]
        } else if !token.is_empty()
            && token
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && token.chars().any(|c| c.is_ascii_digit())
        {
            &["number"]
        } else if let Some((stem, extension)) = lower.rsplit_once('.')
            && stem.chars().count() >= 2
            && (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.chars().any(|c| c.is_ascii_alphabetic())
        {
            if ["png", "jpg", "jpeg", "gif", "webp", "svg", "bmp"].contains(&extension) {
                &["file", "image"]
            } else {
                &["file"]
            }
        } else {
            &[]
        };
        if kind.is_empty() {
            rest.push_str(raw);
            rest.push(' ');
        }
        for kind in kind {
            if !kinds.contains(kind) {
                kinds.push(*kind);
            }
        }
    }
    (kinds, rest)
}

/// The words of `query`, lower-cased, that are capitalized other than at its start:
/// the names of people, places and things it is about.
pub(crate) fn proper_names(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .skip(1)
        .map(|token| token.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|token| {
            let mut chars = token.chars();
            chars.next().is_some_and(char::is_uppercase)
                && chars.clone().next().is_some()
                && chars.all(|c| c.is_lowercase())
        })
        .map(str::to_lowercase)
        .collect()
}

/// `query` without the text it quotes (`'fix typo'`, `"hello"`), which is a value to
/// pass on, not words about what to do. A quote counts where it opens a word and
/// closes one, so "what's" and "don't" are not quotes.
fn without_quotes(query: &str) -> String {
    let mut rest = String::with_capacity(query.len());
    let mut chars = query.char_indices().peekable();
    let mut previous = ' ';
    while let Some((at, c)) = chars.next() {
        let close = match c {
            '\'' | '"' | '`' => Some(c),
            '‘' => Some('’'),
            '“' => Some('”'),
            _ => None,
        };
        // Where the quote that `c` opens ends: the first closing quote that ends a word.
        let end = close
            .filter(|_| !previous.is_alphanumeric())
            .and_then(|close| {
                let inside = at + c.len_utf8();
                query[inside..].char_indices().find_map(|(i, d)| {
                    let after = inside + i + d.len_utf8();
                    let ends_word = query[after..]
                        .chars()
                        .next()
                        .is_none_or(|a| !a.is_alphanumeric());
                    (d == close && ends_word).then_some(after)
                })
            });
        match end {
            Some(end) => {
                rest.push(' ');
                while chars.peek().is_some_and(|&(i, _)| i < end) {
                    chars.next();
                }
                previous = ' ';
            }
            None => {
                rest.push(c);
                previous = c;
            }
        }
    }
    rest
}

/// `query` without what it reports: a clause opened by "that" and its subject ("that
/// Alice works at Acme", "that the deploy is done"), to the end of its sentence. "That"
/// before a thing ("that branch") or a verb ("bugs that are open") opens none.
fn without_reported(query: &str) -> String {
    const SUBJECTS: &[&str] = &[
        "the", "a", "an", "our", "my", "his", "her", "their", "its", "i", "we", "you", "he", "she",
        "they", "it", "there", "this", "everyone", "nobody",
    ];
    let mut rest = String::with_capacity(query.len());
    let mut tokens = query.split_whitespace().peekable();
    let mut reported = false;
    while let Some(token) = tokens.next() {
        if reported {
            reported = !token.ends_with(['.', ';', '!', '?']);
            continue;
        }
        if token.eq_ignore_ascii_case("that")
            && let Some(next) = tokens.peek()
        {
            let bare = next.trim_matches(|c: char| !c.is_alphanumeric());
            let capitalized = bare.chars().next().is_some_and(char::is_uppercase);
            if capitalized || SUBJECTS.contains(&bare.to_lowercase().as_str()) {
                reported = true;
                continue;
            }
        }
        rest.push_str(token);
        rest.push(' ');
    }
    rest
}

/// An amount of money written with its currency's sign: `$20`, `€5.50`, `20€`. ("20
/// euros" is two tokens, a number and a word the lexicon has among amounts.)
fn is_amount(token: &str) -> bool {
    let digits = token.trim_matches(|c: char| "$€£¥".contains(c));
    digits.len() < token.len()
        && !digits.is_empty()
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// A commit's hash, as people paste it: 7 to 40 hexadecimal digits, letters and
/// digits both.
fn is_commit_hash(token: &str) -> bool {
    (7..=40).contains(&token.len())
        && token
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        && token.chars().any(|c| c.is_ascii_digit())
        && token.chars().any(|c| c.is_ascii_alphabetic())
}

/// Whether `query` names a time of day: `9am`, `3 pm`, `10:00`.
pub(crate) fn has_clock_time(query: &str) -> bool {
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(|t| {
            t.trim_matches(|c: char| ",;!?()".contains(c))
                .to_ascii_lowercase()
        })
        .collect();
    tokens.iter().enumerate().any(|(i, token)| {
        let digits = token.trim_end_matches(['a', 'p', 'm', '.']);
        let hour = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
        let suffixed =
            digits.len() < token.len() && (token.ends_with("am") || token.ends_with("pm"));
        let before_suffix =
            hour && matches!(tokens.get(i + 1).map(String::as_str), Some("am" | "pm"));
        let clock = token.split_once(':').is_some_and(|(h, m)| {
            !h.is_empty()
                && h.len() <= 2
                && m.len() == 2
                && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit())
        });
        (hour && suffixed) || before_suffix || clock
    })
}

/// The actions (`lexicon::ACTIONS`) a query asks for, from its first word that asks
/// for one ("what" may ask for a list or for one thing), `words` being its words
/// lower-case; `opens_to_read` when it names a file, an image or a page, which to open
/// or show is to read.
pub(crate) fn actions_asked(words: &[String], opens_to_read: bool) -> Vec<&'static str> {
    // A question answered yes or no ("have I got any changes", "did anyone say") asks
    // to read, whatever it asks about.
    if words
        .first()
        .is_some_and(|w| AUXILIARIES.contains(&w.as_str()))
    {
        return vec!["list", "get", "search"];
    }
    let lexicon = Lexicon::get();
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| {
            // To open a file or a page is to read it; to open a ticket, to make one.
            if w == "open" && opens_to_read {
                return Some(vec!["get"]);
            }
            // "What's in the bucket" asks for what it holds; "what's in notes.txt", to
            // read it.
            let next = |k: usize| words.get(i + k).map(String::as_str);
            if w == "what"
                && matches!(next(1), Some("s" | "is"))
                && matches!(next(2), Some("in" | "inside"))
            {
                return Some(vec![if opens_to_read { "get" } else { "list" }]);
            }
            let mut actions = lexicon.actions_of(w).to_vec();
            if actions.contains(&"list") && actions.contains(&"get") {
                // To show a file is to read it; "what files...", "show the tables":
                // things in the plural are listed.
                let object = words[i + 1..]
                    .iter()
                    .find(|w| w.len() > 1 && !lexicon.is_stopword(w));
                if opens_to_read {
                    actions = vec!["get"];
                } else if object.is_some_and(|o| is_plural(o)) {
                    actions = vec!["list"];
                }
            }
            (!actions.is_empty()).then_some(actions)
        })
        .unwrap_or_default()
}

/// The verbs that open a question answered yes or no.
const AUXILIARIES: &[&str] = &[
    "is", "are", "am", "was", "were", "do", "does", "did", "have", "has", "had",
];

/// `text` (lower-case) with each word that says a state rather than asks for an
/// action read as "status": the word after a form of "be" ("which pods are running",
/// "tickets that are still open"), whose state is what is asked about.
pub(crate) fn states_read(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let before = words[..i]
            .iter()
            .rev()
            .find(|w| !matches!(**w, "still" | "not" | "already" | "currently" | "now"));
        let state = before.is_some_and(|w| matches!(*w, "is" | "are" | "was" | "were" | "been"))
            && word.chars().all(char::is_alphabetic)
            && !Lexicon::get().is_stopword(word);
        out.push(if state { "status" } else { word });
    }
    out.join(" ")
}

/// Whether an English noun is in the plural, as far as its ending tells: `files`,
/// `branches`, not `status`, `class` or `analysis`.
pub(crate) fn is_plural(word: &str) -> bool {
    word.len() > 3
        && word.ends_with('s')
        && !["ss", "us", "is", "ous"]
            .iter()
            .any(|end| word.ends_with(end))
}

/// `OPS-12`, `PROJ-7`: capitals, a dash, digits.
fn is_issue_key(token: &str) -> bool {
    let Some((project, number)) = token.split_once('-') else {
        return false;
    };
    project.len() >= 2
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && project
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_count_by_their_kind_not_their_words() {
        let (kinds, rest) = kinds_named(
            "show config.yaml, https://x.org/a and OPS-12 to dana@example.com in #ops 25 times",
        );
        assert_eq!(
            kinds,
            ["file", "url", "issue", "email", "channel", "number"]
        );
        assert_eq!(
            rest.split_whitespace().collect::<Vec<_>>(),
            ["show", "and", "to", "in", "times"]
        );
        assert_eq!(kinds_named("shot.png").0, ["file", "image"]);
        let (kinds, rest) = kinds_named("commit it as 'fix typo' and show 4f2a9c1, what's \"x\"");
        assert_eq!(kinds, ["commit"]);
        assert_eq!(
            rest.split_whitespace().collect::<Vec<_>>(),
            ["commit", "it", "as", "and", "show", "what's"]
        );
        // Abbreviations and versions are not files.
        assert!(kinds_named("e.g. v1.2 and ok.").0.is_empty());
        assert_eq!(
            proper_names("Remember that Alice works at Acme"),
            ["alice", "acme"]
        );
    }

    #[test]
    fn what_is_told_amounts_and_patterns_are_values() {
        assert_eq!(
            without_reported("tell the team in #ops that the deploy is done. Then stop").trim(),
            "tell the team in #ops Then stop"
        );
        assert_eq!(
            without_reported("remember that Alice works at Acme").trim(),
            "remember"
        );
        // "That" before a thing or a verb opens no clause.
        assert_eq!(
            without_reported("delete that branch, bugs that are open").trim(),
            "delete that branch, bugs that are open"
        );
        assert!(has_clock_time("if it's 9am in London") && has_clock_time("at 3 pm, ok"));
        assert!(has_clock_time("my call is at 10:00 Berlin time"));
        assert!(
            !has_clock_time("what time is it in Lima and Oslo") && !has_clock_time("am I busy")
        );
        assert_eq!(kinds_named("pay $20 now").0, ["amount", "currency"]);
        assert_eq!(kinds_named("refund 5,50€").0, ["amount", "currency"]);
        assert_eq!(kinds_named("any *.orig left").0, ["pattern", "file"]);
        assert!(kinds_named("20 and 3.5").0 == ["number"]);
        assert_eq!(
            states_read("which pods are still running now"),
            "which pods are still status now"
        );
    }
}
