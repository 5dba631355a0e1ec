//! Which resource template a URI was made from (RFC 6570, read backwards).
//!
//! A URI that no server lists may still be one of a server's templates filled in
//! (`weather://forecast/{city}`); the server whose template matches is the one to ask.

use regex::Regex;

/// A resource template, ready to match URIs against.
#[derive(Debug, Clone)]
pub(crate) struct UriTemplate(Option<Regex>);

impl UriTemplate {
    /// Reads a template; one that cannot be read matches nothing.
    pub fn parse(template: &str) -> UriTemplate {
        let mut pattern = String::from("^");
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            pattern.push_str(&regex::escape(&rest[..open]));
            let Some(close) = rest[open..].find('}') else {
                return UriTemplate(None);
            };
            let expression = &rest[open + 1..open + close];
            pattern.push_str(expansion(expression));
            rest = &rest[open + close + 1..];
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        UriTemplate(Regex::new(&pattern).ok())
    }

    /// Whether `uri` is this template with its variables filled in.
    pub fn matches(&self, uri: &str) -> bool {
        self.0.as_ref().is_some_and(|re| re.is_match(uri))
    }
}

/// What an expression (`var`, `+var`, `/a,b`, `?q`...) expands to, as a pattern.
fn expansion(expression: &str) -> &'static str {
    match expression.chars().next() {
        // Reserved expansion keeps `/`, `?` and the like.
        Some('+') => ".*",
        Some('#') => "(?:#.*)?",
        Some('/') => "(?:/[^/?#]*)*",
        Some('.') => r"(?:\.[^/?#.]*)*",
        Some(';') => "(?:;[^/?#]*)*",
        Some('?') => r"(?:\?[^#]*)?",
        Some('&') => "(?:&[^#]*)?",
        // A simple string: one value, percent-encoded, without `/`, `?` or `#`.
        _ => "[^/?#]*",
    }
}

#[cfg(test)]
mod tests {
    use super::UriTemplate;

    #[test]
    fn templates_match_what_they_expand_to() {
        let t = UriTemplate::parse("weather://forecast/{city}");
        assert!(t.matches("weather://forecast/paris"));
        assert!(t.matches("weather://forecast/New%20York"));
        assert!(!t.matches("weather://forecast/paris/today"));
        assert!(!t.matches("weather://cities"));
        let t = UriTemplate::parse("demo://resource/dynamic/text/{resourceId}");
        assert!(t.matches("demo://resource/dynamic/text/3"));
        let t = UriTemplate::parse("file:///{+path}");
        assert!(t.matches("file:///home/u/notes.md"));
        let t = UriTemplate::parse("search://items{?q,limit}");
        assert!(t.matches("search://items?q=x&limit=3"));
        assert!(t.matches("search://items"));
        let t = UriTemplate::parse("a.b://{x}.json");
        assert!(t.matches("a.b://one.json"));
        assert!(!t.matches("aXb://one.json"), "literal dots are literal");
        assert!(!UriTemplate::parse("broken://{x").matches("broken://{x"));
    }
}
