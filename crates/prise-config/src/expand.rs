//! `${VAR}` expansion in configuration values.
//!
//! The syntax is Claude Code's (`${VAR}`, `${VAR:-default}`) plus VS Code's
//! `${env:VAR}`. A bare `$` is kept as it is, because commands and URLs legitimately
//! contain it.

/// Why a value could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// `${NAME}` names a variable that is not set and has no default.
    Unset(String),
    /// `${` with no closing `}`, or an empty or malformed name.
    Malformed(String),
    /// `${input:...}`: VS Code prompts for these, prise cannot.
    Input(String),
}

/// Expands every `${...}` in `value`, looking variables up with `lookup`.
pub(crate) fn expand(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    if !value.contains("${") {
        return Ok(value.to_owned());
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Malformed(rest[start..].to_owned()));
        };
        let body = &after[..end];
        out.push_str(&resolve(body, lookup)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn resolve(body: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    if let Some(input) = body.strip_prefix("input:") {
        return Err(ExpandError::Input(input.to_owned()));
    }
    let body = body.strip_prefix("env:").unwrap_or(body);
    let (name, default) = match body.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (body, None),
    };
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(ExpandError::Malformed(format!("${{{body}}}")));
    }
    // As in the shell, `:-` also replaces a variable that is set but empty.
    match (
        lookup(name).filter(|v| default.is_none() || !v.is_empty()),
        default,
    ) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => Err(ExpandError::Unset(name.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::{ExpandError, expand};

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("abc".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer abc");
        assert_eq!(expand("${env:TOKEN}/x", &env).unwrap(), "abc/x");
        assert_eq!(expand("${PORT:-8080}", &env).unwrap(), "8080");
        assert_eq!(expand("${TOKEN:-zzz}", &env).unwrap(), "abc");
        assert_eq!(expand("${EMPTY:-d}", &env).unwrap(), "d");
        assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
        assert_eq!(expand("${A:-}", &env).unwrap(), "");
        assert_eq!(
            expand("cost: $5 and $HOME", &env).unwrap(),
            "cost: $5 and $HOME"
        );
    }

    #[test]
    fn reports_what_is_wrong() {
        assert_eq!(
            expand("x${NOPE}", &env),
            Err(ExpandError::Unset("NOPE".into()))
        );
        assert!(matches!(
            expand("${TOKEN", &env),
            Err(ExpandError::Malformed(_))
        ));
        assert!(matches!(
            expand("${}", &env),
            Err(ExpandError::Malformed(_))
        ));
        assert!(matches!(
            expand("${a-b}", &env),
            Err(ExpandError::Malformed(_))
        ));
        assert_eq!(
            expand("${input:key}", &env),
            Err(ExpandError::Input("key".into()))
        );
    }
}
