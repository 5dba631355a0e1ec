//! What counts as a secret when a configuration is shown to a person.

/// The text shown in place of a secret value.
pub const MASK: &str = "********";

/// Whether a variable, header or query-parameter name suggests its value is a secret.
///
/// Errs on the side of masking: a masked value costs a look at the file, a printed one
/// can end in a screenshot or a bug report.
pub fn looks_secret(name: &str) -> bool {
    const WORDS: [&str; 9] = [
        "token",
        "key",
        "secret",
        "pass",
        "pwd",
        "credential",
        "auth",
        "cookie",
        "session",
    ];
    let name = name.to_ascii_lowercase();
    WORDS.iter().any(|word| name.contains(word))
}

/// Masks the password of `user:pass@host` and secret-looking query parameters of a URL.
pub(crate) fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            match authority.rsplit_once('@') {
                Some((userinfo, host)) => {
                    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
                    format!("{scheme}://{user}:{MASK}@{host}{path}")
                }
                None => base.to_owned(),
            }
        }
        None => base.to_owned(),
    };
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if looks_secret(key) => format!("{key}={MASK}"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Masks the secrets in a command's arguments: the value of `--api-key=VALUE`, the
/// argument after a flag whose name looks secret (`--token VALUE`), and the value of
/// a header given as an argument (`--header "Authorization: Bearer VALUE"`, as
/// mcp-remote takes it).
pub(crate) fn redact_args(args: &mut [String]) {
    let mut mask_next = false;
    for arg in args.iter_mut() {
        let flag = arg.starts_with('-') && arg.len() > 1;
        if std::mem::take(&mut mask_next) && !flag {
            *arg = MASK.to_owned();
            continue;
        }
        if flag {
            match arg.split_once('=') {
                Some((key, _)) if looks_secret(key) => *arg = format!("{key}={MASK}"),
                Some(_) => {}
                None => mask_next = looks_secret(arg.trim_start_matches('-')),
            }
        } else if let Some((name, _)) = arg.split_once(": ")
            && !name.contains(' ')
            && looks_secret(name)
        {
            *arg = format!("{name}: {MASK}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_look_secret() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "db_password",
            "Authorization",
            "X-Api-Key",
            "PGPASS",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "LOG_LEVEL", "PORT", "Accept"] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn urls_lose_passwords_and_secret_parameters() {
        assert_eq!(
            redact_url("https://bob:hunter2@example.com/mcp?api_key=abc&region=eu"),
            format!("https://bob:{MASK}@example.com/mcp?api_key={MASK}&region=eu")
        );
        assert_eq!(
            redact_url("http://127.0.0.1:3001/mcp"),
            "http://127.0.0.1:3001/mcp"
        );
    }

    #[test]
    fn arguments_lose_secret_values() {
        let mut args: Vec<String> = [
            "--api-key=abc",
            "--port=3",
            "--token",
            "t0k",
            "-k",
            "--password",
            "--verbose",
            "--header",
            "Authorization: Bearer xyz",
            "X-Trace: on",
            "positional",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        redact_args(&mut args);
        assert_eq!(
            args,
            [
                format!("--api-key={MASK}"),
                "--port=3".into(),
                "--token".into(),
                MASK.into(),
                "-k".into(),
                // A secret flag followed by another flag has no value to mask.
                "--password".into(),
                "--verbose".into(),
                "--header".into(),
                format!("Authorization: {MASK}"),
                "X-Trace: on".into(),
                "positional".into(),
            ]
        );
    }
}
