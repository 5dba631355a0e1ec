//! Servers given on the command line (`--with`) and configurations given inline
//! (`--config '{"mcpServers": ...}'`), read into the same [`Config`] as files are.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::{Config, ConfigError};

type Env<'e> = &'e dyn Fn(&str) -> Option<String>;

impl Config {
    /// Servers for one run: each spec is `[NAME=]COMMAND ARGS...` (words split as a
    /// shell would, without expansions) or `[NAME=]URL` (Streamable HTTP; legacy SSE
    /// when the path ends in `/sse`). A name is made from the program or the host
    /// when none is given. Relative paths are taken from the current directory.
    pub fn from_specs(specs: &[String], env: Env<'_>) -> Result<Config, ConfigError> {
        let mut servers = Map::new();
        for spec in specs {
            let (name, server) = spec_server(spec).map_err(|message| ConfigError::Invalid {
                path: "--with".into(),
                line: 1,
                column: 1,
                message: format!("{spec:?}: {message}"),
                hint: Some("e.g. --with 'uvx mcp-server-time', --with http://127.0.0.1:8000/mcp or --with time='uvx mcp-server-time'".into()),
            })?;
            let mut unique = name.clone();
            let mut n = 2;
            while servers.contains_key(&unique) {
                unique = format!("{name}-{n}");
                n += 1;
            }
            servers.insert(unique, server);
        }
        let text = json!({ "mcpServers": servers }).to_string();
        // "--with" has no directory: relative paths stay relative to where prise runs.
        Config::parse(&text, Path::new("--with"), env)
    }

    /// Adds `other`'s servers after this configuration's own. A name both define is
    /// an error: a server given for one run must not silently replace a configured one.
    pub fn add_servers(&mut self, other: Config) -> Result<(), ConfigError> {
        for server in other.servers {
            if self.servers.iter().any(|s| s.name == server.name) {
                return Err(ConfigError::Invalid {
                    path: other.path.clone(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "server \"{}\" is also defined in {}",
                        server.name,
                        self.path.display()
                    ),
                    hint: Some(format!(
                        "give it another name: --with other-name=... (or remove \"{}\" from the file)",
                        server.name
                    )),
                });
            }
            self.servers.push(server);
        }
        self.warnings.extend(other.warnings);
        Ok(())
    }
}

/// The name and the `mcpServers` entry of one `--with` spec.
fn spec_server(spec: &str) -> Result<(String, Value), String> {
    let spec = spec.trim();
    let (name, rest) = match spec.split_once('=') {
        Some((name, rest))
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            (Some(name.to_owned()), rest.trim())
        }
        _ => (None, spec),
    };
    if rest.is_empty() {
        return Err("no command or URL".into());
    }
    let lower = rest.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let (host, path) = host_and_path(rest);
        let kind = if path.trim_end_matches('/').ends_with("/sse") {
            "sse"
        } else {
            "http"
        };
        let name = name.unwrap_or_else(|| sanitise(&host));
        return Ok((name, json!({"type": kind, "url": rest})));
    }
    let mut words = split_words(rest)?;
    if words.is_empty() {
        return Err("no command or URL".into());
    }
    let command = words.remove(0);
    let name = name.unwrap_or_else(|| program_name(&command, &words));
    Ok((name, json!({"command": command, "args": words})))
}

/// `host` (and `-port`) and the path of an http(s) URL.
fn host_and_path(url: &str) -> (String, String) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (host.replace(':', "-"), path.to_owned())
}

/// The word that names a server started by `command args`: the package or script a
/// runner (`npx`, `uvx`, `node`, `python`...) is given, else the program itself,
/// without its folder, scope, version or extension.
fn program_name(command: &str, args: &[String]) -> String {
    const RUNNERS: [&str; 12] = [
        "npx", "uvx", "uv", "node", "python", "python3", "pipx", "bunx", "bun", "deno", "pnpm",
        "docker",
    ];
    let base = |word: &str| word.rsplit('/').next().unwrap_or(word).to_owned();
    let runner = RUNNERS.contains(&base(command).as_str());
    let word = if runner {
        args.iter()
            .find(|a| !a.starts_with('-') && !["run", "dlx", "exec", "tool"].contains(&a.as_str()))
            .map(String::as_str)
            .unwrap_or(command)
    } else {
        command
    };
    // `@scope/name@1.2.3` and `name@1.2.3`: the name.
    let word = word
        .strip_prefix('@')
        .map_or(word, |w| w.split_once('/').map_or(w, |(_, n)| n));
    let word = word.split('@').next().unwrap_or(word);
    let mut name = base(word);
    for ext in [".js", ".mjs", ".ts", ".py"] {
        if let Some(stem) = name.strip_suffix(ext) {
            name = stem.to_owned();
        }
    }
    sanitise(&name)
}

/// Letters, digits, `_` and `-`, as server names must be.
fn sanitise(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.trim_matches('-').is_empty() {
        "server".to_owned()
    } else {
        name
    }
}

/// Words as a shell would split them, without expansions: spaces separate words,
/// single and double quotes keep them together, a backslash outside single quotes
/// takes the next character as it is.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_default().push(next);
                }
            }
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q} in {text:?}"));
    }
    words.extend(word);
    Ok(words)
}

impl Config {
    /// A configuration given as text on the command line (`--config '{...}'`), as
    /// Claude Code's `--mcp-config` takes it; errors name `--config`.
    pub fn parse_inline(text: &str, env: Env<'_>) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("--config"), env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_package_the_program_or_the_host() {
        let name = |spec: &str| spec_server(spec).unwrap().0;
        assert_eq!(
            name("uvx mcp-server-time --local-timezone UTC"),
            "mcp-server-time"
        );
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp"),
            "server-filesystem"
        );
        assert_eq!(
            name("node /opt/peers/.bin/mcp-server-everything stdio"),
            "mcp-server-everything"
        );
        assert_eq!(name("python3 -u ./weather.py"), "weather");
        assert_eq!(name("/usr/local/bin/my.server"), "my-server");
        assert_eq!(name("http://127.0.0.1:3001/mcp"), "127-0-0-1-3001");
        assert_eq!(name("https://api.example.com/mcp"), "api-example-com");
        assert_eq!(name("time=uvx mcp-server-time"), "time");
    }

    #[test]
    fn commands_and_urls() {
        assert_eq!(
            spec_server("cmd 'a b' \"c\\\"d\" e\\ f").unwrap().1,
            json!({"command": "cmd", "args": ["a b", "c\"d", "e f"]})
        );
        assert_eq!(
            spec_server("http://h/sse").unwrap().1,
            json!({"type": "sse", "url": "http://h/sse"})
        );
        assert_eq!(
            spec_server("http://h/mcp").unwrap().1,
            json!({"type": "http", "url": "http://h/mcp"})
        );
        assert!(spec_server("  ").is_err());
        assert!(spec_server("x='unclosed").is_err());
    }

    #[test]
    fn specs_become_servers_and_clashes_are_errors() {
        let env = |_: &str| None;
        let mut config = Config::from_specs(
            &[
                "uvx mcp-server-time".into(),
                "uvx mcp-server-time --x".into(),
            ],
            &env,
        )
        .unwrap();
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["mcp-server-time", "mcp-server-time-2"]);
        let again = Config::from_specs(&["uvx mcp-server-time".into()], &env).unwrap();
        let error = config.add_servers(again).unwrap_err();
        assert!(
            error.to_string().contains("is also defined in --with"),
            "{error}"
        );
    }
}
