//! Every accepted file format, variable expansion, and every rejected input with the
//! position it is reported at.

use std::path::Path;
use std::time::Duration;

use prise_config::{Config, ConfigError, Format, Protocol, RestartPolicy, Transport};

fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some("ghp_secret".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/proj/.mcp.json"), &env)
}

/// Parses text that must fail, returning (line, column, message, hint).
fn fail(text: &str) -> (usize, usize, String, Option<String>) {
    match parse(text) {
        Err(ConfigError::Invalid {
            line,
            column,
            message,
            hint,
            path,
        }) => {
            assert_eq!(path, Path::new("/proj/.mcp.json"));
            (line, column, message, hint)
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn claude_desktop() {
    let config = parse(
        r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/Desktop"],
      "env": { "DEBUG": "1" }
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#,
    )
    .unwrap();
    assert_eq!(config.format, Format::McpServers);
    assert_eq!(config.servers.len(), 1);
    let server = &config.servers[0];
    assert_eq!(server.name, "filesystem");
    let Transport::Stdio(stdio) = &server.transport else {
        panic!()
    };
    assert_eq!(stdio.command, "npx");
    assert_eq!(
        stdio.args,
        [
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/home/u/Desktop"
        ]
    );
    assert_eq!(stdio.env, [("DEBUG".to_owned(), "1".to_owned())]);
    assert!(!stdio.inherit_env);
    assert_eq!(server.startup_timeout, Duration::from_secs(30));
    assert_eq!(server.call_timeout, Duration::from_secs(60));
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn claude_code_mcp_json_with_all_transports() {
    let config = parse(
        r#"{"mcpServers": {
  "local": {"type": "stdio", "command": "node", "args": ["server.js"], "cwd": "tools"},
  "remote": {"type": "http", "url": "https://api.example.com/mcp",
             "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
  "old": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
  "inferred": {"url": "http://127.0.0.1:3001/mcp"}
}}"#,
    )
    .unwrap();
    let kinds: Vec<_> = config.servers.iter().map(|s| s.transport.kind()).collect();
    assert_eq!(kinds, ["stdio", "http", "sse", "http"]);
    let Transport::Stdio(local) = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(local.cwd.as_deref(), Some(Path::new("/proj/tools")));
    let Transport::Http(remote) = &config.servers[1].transport else {
        panic!()
    };
    assert_eq!(
        remote.headers,
        [("Authorization".to_owned(), "Bearer ghp_secret".to_owned())]
    );
}

#[test]
fn vscode_servers_with_comments_and_trailing_commas() {
    let config = parse(
        r#"{
  // VS Code allows comments here
  "inputs": [],
  "servers": {
    "time": { "type": "stdio", "command": "uvx", "args": ["mcp-server-time",], },
    /* remote */ "docs": { "type": "http", "url": "${env:DOCS_URL:-http://localhost:8000/mcp}" },
  },
}"#,
    )
    .unwrap();
    assert_eq!(config.format, Format::VsCode);
    assert_eq!(config.servers.len(), 2);
    let Transport::Http(docs) = &config.servers[1].transport else {
        panic!()
    };
    assert_eq!(docs.url, "http://localhost:8000/mcp");
}

#[test]
fn mcphost_command_array_and_local_type() {
    let config = parse(r#"{"mcpServers": {"fs": {"type": "local", "command": ["npx", "-y", "server-fs"], "args": ["/tmp"]}}}"#).unwrap();
    let Transport::Stdio(stdio) = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(stdio.command, "npx");
    assert_eq!(stdio.args, ["-y", "server-fs", "/tmp"]);
}

#[test]
fn prise_options() {
    let config = parse(
        r#"{"mcpServers": {"s": {
  "command": "srv", "disabled": true, "inheritEnv": true,
  "timeout": {"startup": "500ms", "call": 120},
  "allowedTools": ["read_*", "list"], "excludedTools": ["read_secret*"],
  "restart": "never", "protocol": "modern"
}, "t": {"command": "t", "timeout": 5, "maxRestarts": 7}}}"#,
    )
    .unwrap();
    let s = &config.servers[0];
    assert!(s.disabled);
    assert_eq!(s.startup_timeout, Duration::from_millis(500));
    assert_eq!(s.call_timeout, Duration::from_secs(120));
    assert!(s.tools.permits("read_file"));
    assert!(s.tools.permits("list"));
    assert!(!s.tools.permits("write_file"));
    assert!(!s.tools.permits("read_secrets"));
    assert_eq!(s.restart, RestartPolicy::Never);
    assert_eq!(s.protocol, Protocol::Modern);
    let t = &config.servers[1];
    assert_eq!(
        (t.startup_timeout, t.call_timeout),
        (Duration::from_secs(5), Duration::from_secs(5))
    );
    assert_eq!(t.restart, RestartPolicy::OnFailure { max_restarts: 7 });
    assert!(t.tools.permits("anything"));
}

#[test]
fn roots_top_level_and_per_server() {
    let config = parse(
        r#"{"roots": ["~/notes", "src", "/abs", "${HOME}/x"],
  "mcpServers": {
    "shared": {"command": "a"},
    "own": {"command": "b", "roots": ["../elsewhere"]},
    "none": {"command": "c", "roots": []}
  }}"#,
    )
    .unwrap();
    let paths = |v: &[std::path::PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        paths(&config.roots),
        ["/home/u/notes", "/proj/src", "/abs", "/home/u/x"]
    );
    assert_eq!(paths(&config.servers[0].roots), paths(&config.roots));
    assert_eq!(paths(&config.servers[1].roots), ["/proj/../elsewhere"]);
    assert!(config.servers[2].roots.is_empty());
    // Without "roots" anywhere, no server is offered any.
    let plain = parse(r#"{"mcpServers": {"s": {"command": "a"}}}"#).unwrap();
    assert!(plain.servers[0].roots.is_empty());

    let (line, column, message, _) =
        fail(r#"{"mcpServers": {"s": {"command": "a", "roots": ["${NOPE}"]}}}"#);
    assert_eq!((line, column), (1, 49));
    assert_eq!(
        message,
        "server \"s\": roots[0] uses ${NOPE}, which is not set"
    );
    let (_, _, message, _) = fail(r#"{"roots": "~/notes", "mcpServers": {}}"#);
    assert!(
        message.starts_with("top level: roots: invalid type"),
        "{message}"
    );
    let (_, _, message, hint) = fail(r#"{"roots": [""], "mcpServers": {}}"#);
    assert_eq!(message, "top level: roots[0] is empty");
    assert!(hint.unwrap().contains("~/notes"));
}

#[test]
fn unknown_keys_are_warned_about_not_silently_dropped() {
    let config = parse("{\"mcpServers\": {\"s\": {\n  \"command\": \"x\", \"disable\": true, \"headers\": {}, \"jail\": 1}}}").unwrap();
    assert_eq!(config.warnings.len(), 3, "{:?}", config.warnings);
    assert_eq!(
        config.warnings[0],
        "/proj/.mcp.json:2:19: server \"s\": unknown key \"disable\" ignored; did you mean \"disabled\"?"
    );
    assert_eq!(
        config.warnings[1],
        "/proj/.mcp.json:2:51: server \"s\": unknown key \"jail\" ignored"
    );
    assert!(config.warnings[2].contains("\"headers\" does not apply to a stdio server"));
    // A misspelt "command" leaves the server with neither: the hint names the typo.
    let (_, _, message, hint) = fail(r#"{"mcpServers": {"s": {"commmand": "x"}}}"#);
    assert_eq!(message, "server \"s\" has neither \"command\" nor \"url\"");
    assert_eq!(hint.as_deref(), Some("\"commmand\" should be \"command\""));
}

#[test]
fn vscode_and_cursor_projects() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir(project.join(".vscode")).unwrap();
    std::fs::write(project.join(".env"), "TOKEN=from-env-file\nLEVEL=debug\n").unwrap();
    let file = project.join(".vscode/mcp.json");
    std::fs::write(
        &file,
        r#"{"servers": {"s": {
  "command": "${workspaceFolder}${pathSeparator}bin${pathSeparator}server",
  "args": ["${userHome}/data", "${workspaceFolderBasename}"],
  "cwd": "tools",
  "envFile": "${workspaceFolder}/.env",
  "env": {"LEVEL": "info"}
}, "missing": {"command": "x", "envFile": "nope.env"}}}"#,
    )
    .unwrap();
    let env = |name: &str| (name == "HOME").then(|| "/home/u".to_owned());
    let text = std::fs::read_to_string(&file).unwrap();
    let error = Config::parse(&text, &file, &env).unwrap_err();
    assert!(
        error.to_string().contains("server \"missing\": envFile"),
        "{error}"
    );
    let text = text.replace(
        "\"envFile\": \"nope.env\"",
        "\"disabled\": true, \"envFile\": \"nope.env\"",
    );
    let config = Config::parse(&text, &file, &env).unwrap();
    let Transport::Stdio(stdio) = &config.servers[0].transport else {
        panic!()
    };
    let base = project.display().to_string();
    assert_eq!(stdio.command, format!("{base}/bin/server"));
    let name = project.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(stdio.args, ["/home/u/data".to_owned(), name]);
    // Relative paths start from the project folder, not from .vscode/.
    assert_eq!(stdio.cwd.as_deref(), Some(project.join("tools").as_path()));
    // The env file's variables, overridden by "env".
    assert_eq!(
        stdio.env,
        [
            ("TOKEN".to_owned(), "from-env-file".to_owned()),
            ("LEVEL".to_owned(), "info".to_owned())
        ]
    );
}

#[test]
fn project_and_user_files_are_merged_project_first() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir(project.join(".cursor")).unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"a": {"command": "from-mcp-json"}}, "model": {"maxTurns": 3}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"a": {"command": "from-cursor"}, "b": {"command": "b"}}, "approval": {"default": "deny"}}"#,
    )
    .unwrap();
    let mut config = Config::load(&project.join(".mcp.json")).unwrap();
    config.merge_lower(Config::load(&project.join(".cursor/mcp.json")).unwrap());
    let user = Config::parse(
        r#"{"mcpServers": {"c": {"command": "c"}}, "model": {"name": "ollama:x", "maxTurns": 9}}"#,
        Path::new("/home/u/.mcp.json"),
        &env,
    )
    .unwrap();
    config.merge_lower(user);
    let names: Vec<(&str, String)> = config
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.file.display().to_string()))
        .collect();
    assert_eq!(names.len(), 3);
    assert_eq!(names[0].0, "a");
    assert!(names[0].1.ends_with("/.mcp.json"));
    assert_eq!((names[1].0, names[2].0), ("b", "c"));
    assert_eq!(config.notes.len(), 1);
    assert!(
        config.notes[0].starts_with("server a of "),
        "{:?}",
        config.notes
    );
    assert_eq!(config.model.max_turns, Some(3));
    assert_eq!(config.model.name.as_deref(), Some("ollama:x"));
    assert_eq!(config.approval.default, prise_config::Decision::Deny);
    assert_eq!(config.files.len(), 3);
}

#[test]
fn expansion_defaults_and_unset_variables() {
    let config = parse(r#"{"mcpServers": {"s": {"command": "x", "env": {"PORT": "${PORT:-8080}", "T": "${GITHUB_TOKEN}"}}}}"#).unwrap();
    let Transport::Stdio(stdio) = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(stdio.env[0].1, "8080");
    assert_eq!(stdio.env[1].1, "ghp_secret");

    let (line, column, message, hint) = fail(
        "{\"mcpServers\": {\n  \"gh\": {\"url\": \"https://x\", \"headers\": {\"Authorization\": \"Bearer ${GH_PAT}\"}}}}",
    );
    assert_eq!((line, column), (2, 59));
    assert_eq!(
        message,
        "server \"gh\": headers.Authorization uses ${GH_PAT}, which is not set"
    );
    assert!(hint.unwrap().contains("${GH_PAT:-value}"));

    let (_, _, message, _) =
        fail(r#"{"mcpServers": {"s": {"command": "x", "args": ["a", "${NOPE}"]}}}"#);
    assert_eq!(
        message,
        "server \"s\": args[1] uses ${NOPE}, which is not set"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"url": "${BASE}/mcp"}}}"#);
    assert_eq!(message, "server \"s\": url uses ${BASE}, which is not set");
    let (_, _, message, _) =
        fail(r#"{"servers": {"s": {"command": "x", "env": {"K": "${input:key}"}}}}"#);
    assert!(
        message.contains("${input:key} asks VS Code to prompt"),
        "{message}"
    );
}

#[test]
fn disabled_servers_may_reference_unset_variables() {
    let config = parse(r#"{"mcpServers": {"s": {"disabled": true, "url": "${NOPE}"}}}"#).unwrap();
    let Transport::Http(remote) = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(remote.url, "${NOPE}");
}

#[test]
fn syntax_errors_point_into_the_file() {
    let (line, column, message, _) =
        fail("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n    \"b\": {}\n}");
    assert_eq!(line, 4, "{message}");
    assert!(column >= 5, "{column}");
    assert!(
        message.starts_with("invalid JSON: expected `,` or `}`"),
        "{message}"
    );
    let (line, column, message, _) = fail("");
    assert_eq!((line, column), (1, 1));
    assert!(message.contains("EOF"), "{message}");
}

#[test]
fn unknown_type() {
    let (line, column, message, hint) =
        fail("{\"mcpServers\": {\n  \"s\": {\"type\": \"htp\", \"url\": \"http://x\"}}}");
    assert_eq!((line, column), (2, 17));
    assert_eq!(message, "server \"s\": unknown type \"htp\"");
    assert!(hint.unwrap().contains("\"stdio\""));
}

#[test]
fn both_command_and_url() {
    let (line, column, message, _) =
        fail("{\"mcpServers\": {\n  \"both\": {\"command\": \"x\", \"url\": \"http://x\"}}}");
    assert_eq!((line, column), (2, 3));
    assert_eq!(message, "server \"both\" has both \"command\" and \"url\"");
}

#[test]
fn neither_command_nor_url() {
    let (line, column, message, _) = fail("{\"mcpServers\": {\n\n    \"none\": {\"args\": []}}}");
    assert_eq!((line, column), (3, 5));
    assert_eq!(
        message,
        "server \"none\" has neither \"command\" nor \"url\""
    );
}

#[test]
fn type_that_contradicts_the_keys() {
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"type": "http", "command": "x"}}}"#);
    assert_eq!(
        message,
        "server \"s\": type \"http\" needs \"url\", but the server has \"command\""
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"type": "stdio", "url": "http://x"}}}"#);
    assert_eq!(
        message,
        "server \"s\": type \"stdio\" needs \"command\", but the server has \"url\""
    );
}

#[test]
fn wrong_types() {
    let (line, column, message, _) =
        fail("{\"mcpServers\": {\"s\": {\n  \"command\": \"x\", \"args\": \"--flag\"}}}");
    assert_eq!((line, column), (2, 27));
    assert_eq!(
        message,
        "server \"s\": args: invalid type: string \"--flag\", expected a sequence"
    );
    let (line, column, message, _) =
        fail("{\"mcpServers\": {\"s\": {\"command\": \"x\",\n \"env\": {\"A\": 3}}}}");
    assert_eq!(line, 2);
    assert_eq!(column, 15);
    assert_eq!(
        message,
        "server \"s\": env.A: invalid type: integer `3`, expected a string"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": "x", "disabled": "yes"}}}"#);
    assert_eq!(
        message,
        "server \"s\": disabled: invalid type: string \"yes\", expected a boolean"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": ["s"]}"#);
    assert_eq!(
        message,
        "\"mcpServers\": invalid type: sequence, expected an object"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": "x", "timeout": -1}}}"#);
    assert!(
        message.starts_with("server \"s\": timeout must be a positive number of seconds"),
        "{message}"
    );
}

#[test]
fn duplicate_server_names() {
    let (line, column, message, _) =
        fail("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"a\": {\"command\": \"y\"}}}");
    assert_eq!((line, column), (3, 3));
    assert_eq!(message, "duplicate server name \"a\"");
}

#[test]
fn bad_server_names() {
    for name in ["my server", "a.b", "", "é"] {
        let text = format!("{{\"mcpServers\": {{\"{name}\": {{\"command\": \"x\"}}}}}}");
        let (line, column, message, _) = fail(&text);
        assert_eq!((line, column), (1, 17), "{name}");
        assert!(
            message.starts_with(&format!("server name \"{name}\" may only contain")),
            "{message}"
        );
    }
}

#[test]
fn other_mistakes() {
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": "x", "command": "y"}}}"#);
    assert_eq!(message, "server \"s\": duplicate key \"command\"");
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "servers": {}}"#);
    assert!(
        message.starts_with("second \"servers\" object"),
        "{message}"
    );
    let (_, _, message, hint) = fail(r#"{"tools": {}}"#);
    assert!(message.starts_with("no \"mcpServers\""), "{message}");
    assert!(hint.is_some());
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"url": "ftp://x"}}}"#);
    assert_eq!(
        message,
        "server \"s\": url \"ftp://x\" is not an http:// or https:// URL"
    );
    let (_, _, message, _) =
        fail(r#"{"mcpServers": {"s": {"command": "x", "allowedTools": ["a[b"]}}}"#);
    assert!(
        message.starts_with("server \"s\": allowedTools: bad glob \"a[b\""),
        "{message}"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": ""}}}"#);
    assert_eq!(message, "server \"s\": \"command\" is empty");
    let (_, _, message, _) =
        fail(r#"{"mcpServers": {"s": {"command": "x", "restart": "always"}}}"#);
    assert_eq!(message, "server \"s\": unknown restart policy \"always\"");
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": "x", "protocol": "v2"}}}"#);
    assert_eq!(message, "server \"s\": unknown protocol \"v2\"");
}

#[test]
fn secrets_are_masked_in_redacted_copies() {
    let config = parse(
        r#"{"mcpServers": {
  "gh": {"url": "https://u:pw@api.example.com/mcp?token=abc", "headers": {"X-Custom": "${GITHUB_TOKEN}"}},
  "l": {"command": "x", "args": ["--api-key=${GITHUB_TOKEN}", "plain"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LEVEL": "debug"}}
}}"#,
    )
    .unwrap();
    let shown = serde_json::to_string(
        &config
            .servers
            .iter()
            .map(|s| s.redacted())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(!shown.contains("ghp_secret"), "{shown}");
    assert!(!shown.contains("pw@"), "{shown}");
    assert!(!shown.contains("token=abc"), "{shown}");
    assert!(shown.contains("\"LEVEL\":\"debug\""), "{shown}");
    assert!(shown.contains("plain"), "{shown}");
}

#[test]
fn approval_rules() {
    use prise_config::Decision;
    let config = parse(
        r#"{"mcpServers": {"s": {"command": "x"}},
            "approval": {"default": "deny", "allowReadOnly": false,
                         "tools": {"fs__write_*": "ask", "fs__*": "allow"}}}"#,
    )
    .unwrap();
    let approval = &config.approval;
    assert_eq!(approval.decide("fs__write_file", false), Decision::Ask);
    assert_eq!(approval.decide("fs__read_file", false), Decision::Allow);
    assert_eq!(approval.decide("other__read", true), Decision::Deny);
    // Without an approval section: ask, but read-only tools run.
    let default = parse(r#"{"mcpServers": {}}"#).unwrap().approval;
    assert_eq!(default.decide("x__y", false), Decision::Ask);
    assert_eq!(default.decide("x__y", true), Decision::Allow);
    let (_, _, message, hint) =
        fail(r#"{"mcpServers": {}, "approval": {"tools": {"a__*": "maybe"}}}"#);
    assert_eq!(message, "approval.tools.a__*: unknown decision \"maybe\"");
    assert!(hint.unwrap().contains("\"ask\""));
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "approval": {"mode": "yolo"}}"#);
    assert_eq!(message, "approval: unknown key \"mode\"");
}

#[test]
fn gateway_profiles() {
    let config = parse(
        r#"{"mcpServers": {"github": {"command": "x"}, "time": {"command": "y"}},
            "profiles": {"readonly": {"servers": ["github"], "tools": ["github__search_*", "github__get_*"]},
                         "all-time": {"servers": ["time"]}}}"#,
    )
    .unwrap();
    let readonly = &config.profiles["readonly"];
    assert!(readonly.shows("github", "github__search_code"));
    assert!(!readonly.shows("github", "github__create_issue"));
    assert!(!readonly.shows("time", "time__now") && !readonly.shows_server("time"));
    let all_time = &config.profiles["all-time"];
    assert!(all_time.shows("time", "time__anything") && !all_time.shows_server("github"));
    let (_, _, message, hint) =
        fail(r#"{"mcpServers": {"a": {"command": "x"}}, "profiles": {"p": {"servers": ["b"]}}}"#);
    assert_eq!(message, "profiles.p.servers: no server is named \"b\"");
    assert_eq!(hint.as_deref(), Some("the servers of this file are: a"));
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "profiles": {"a/b": {}}}"#);
    assert_eq!(
        message,
        "profile name \"a/b\" may only contain letters, digits, '_' and '-'"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "profiles": {"p": {"hosts": []}}}"#);
    assert_eq!(message, "profiles.p: unknown key \"hosts\"");
}

#[test]
fn model_section() {
    let config = parse(
        r#"{"mcpServers": {},
            "model": {"name": "openai:gpt-4o-mini", "baseUrl": "https://proxy.example/v1",
                      "apiKey": "${GITHUB_TOKEN}", "maxTurns": 5, "systemPrompt": "Be brief.",
                      "maxToolOutput": 2000, "toolCallRecovery": false, "idleTimeout": "10m",
                      "maxOutputTokens": 4096}}"#,
    )
    .unwrap();
    let model = &config.model;
    assert_eq!(model.name.as_deref(), Some("openai:gpt-4o-mini"));
    assert_eq!(model.base_url.as_deref(), Some("https://proxy.example/v1"));
    assert_eq!(model.api_key.as_deref(), Some("ghp_secret"));
    assert_eq!(model.max_turns, Some(5));
    assert_eq!(model.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(model.max_tool_output, Some(2000));
    assert_eq!(model.tool_call_recovery, Some(false));
    assert_eq!(model.idle_timeout, Some(Duration::from_secs(600)));
    assert_eq!(model.max_output_tokens, Some(4096));
    assert_eq!(
        model.redacted().api_key.as_deref(),
        Some(prise_config::MASK)
    );
    // The short form names the model only; no section leaves everything unset.
    let short = parse(r#"{"mcpServers": {}, "model": "ollama:llama3.2"}"#).unwrap();
    assert_eq!(short.model.name.as_deref(), Some("ollama:llama3.2"));
    assert_eq!(short.model.max_turns, None);
    assert_eq!(
        parse(r#"{"mcpServers": {}}"#).unwrap().model,
        prise_config::ModelSettings::default()
    );
}

#[test]
fn model_section_mistakes() {
    let (line, column, message, _) = fail("{\"mcpServers\": {},\n \"model\": {\"maxTurns\": 0}}");
    assert_eq!((line, column), (2, 24));
    assert_eq!(message, "model.maxTurns must be at least 1");
    let (_, _, message, hint) = fail(r#"{"mcpServers": {}, "model": {"provider": "openai"}}"#);
    assert_eq!(message, "model: unknown key \"provider\"");
    assert!(hint.unwrap().contains("\"baseUrl\""));
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "model": {"apiKey": "${NOPE}"}}"#);
    assert_eq!(message, "model: apiKey uses ${NOPE}, which is not set");
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "model": {"idleTimeout": "soon"}}"#);
    assert!(
        message.starts_with("model: idleTimeout must be a positive number of seconds"),
        "{message}"
    );
    let (_, _, message, _) = fail(r#"{"mcpServers": {}, "model": {"maxTurns": "ten"}}"#);
    assert!(
        message.starts_with("model.maxTurns: invalid type"),
        "{message}"
    );
}

#[test]
fn oauth_settings_are_read_and_their_secrets_masked() {
    let config = parse(
        r#"{"mcpServers": {
            "corp": {"url": "https://mcp.corp.example/mcp", "oauth": {
                "clientId": "prise", "clientSecret": "${GITHUB_TOKEN}",
                "scopes": ["mcp:read"], "callbackPort": 33418,
                "enterprise": {"issuer": "https://idp.corp.example", "clientId": "idp-client", "idToken": "eyJ.id.token"}
            }},
            "ci": {"url": "https://mcp.corp.example/mcp", "oauth": {"workloadTokenFile": "tokens/ci.jwt"}}
        }}"#,
    )
    .unwrap();
    let oauth = |i: usize| match &config.servers[i].transport {
        Transport::Http(remote) => remote.oauth.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    let corp = oauth(0);
    assert_eq!(corp.client_secret.as_deref(), Some("ghp_secret"));
    assert_eq!(corp.callback_port, Some(33418));
    let enterprise = corp.enterprise.clone().unwrap();
    assert_eq!(enterprise.issuer, "https://idp.corp.example");
    assert_eq!(
        enterprise.id_token,
        prise_config::TokenSource::Value("eyJ.id.token".into())
    );
    assert!(corp.signs_in_by_itself());
    let ci = oauth(1);
    assert_eq!(
        ci.workload_token,
        Some(prise_config::TokenSource::File(
            "/proj/tokens/ci.jwt".into()
        ))
    );
    let shown = serde_json::to_string(&config.servers[0].redacted()).unwrap();
    assert!(
        !shown.contains("ghp_secret") && !shown.contains("eyJ.id.token"),
        "{shown}"
    );
}

#[test]
fn oauth_mistakes_are_named() {
    let (_, _, message, hint) = fail(
        r#"{"mcpServers": {"s": {"url": "https://x.example/mcp", "oauth": {"clientID": "a"}}}}"#,
    );
    assert_eq!(message, "server \"s\": oauth: unknown key \"clientID\"");
    assert!(hint.unwrap().starts_with("did you mean \"clientId\"?"));
    let (_, _, message, _) = fail(
        r#"{"mcpServers": {"s": {"url": "https://x.example/mcp", "oauth": {"enterprise": {"issuer": "https://idp.example"}}}}}"#,
    );
    assert!(
        message.contains("oauth.enterprise needs \"issuer\" and \"idToken\""),
        "{message}"
    );
}

fn stdio_of(config: &Config) -> &prise_config::Stdio {
    match &config.servers[0].transport {
        Transport::Stdio(stdio) => stdio,
        other => panic!("not stdio: {other:?}"),
    }
}

#[test]
fn sandboxes_as_a_switch_or_with_paths_and_network() {
    use prise_config::{AllowNetwork, Sandbox};
    let on = parse(r#"{"mcpServers": {"s": {"command": "x", "sandbox": true}}}"#).unwrap();
    assert_eq!(stdio_of(&on).sandbox, Some(Sandbox::default()));
    let off = parse(r#"{"mcpServers": {"s": {"command": "x", "sandbox": false}}}"#).unwrap();
    assert_eq!(stdio_of(&off).sandbox, None);
    let full = parse(
        r#"{"mcpServers": {"s": {"command": "x", "sandbox": {
            "allowWrite": ["~/notes", "data"], "denyRead": ["/srv/keys"], "allowRead": ["~/.npmrc"],
            "allowNetwork": ["api.github.com:443", "[::1]:8080"], "allowUnixSockets": true}}}}"#,
    )
    .unwrap();
    let sandbox = stdio_of(&full).sandbox.clone().unwrap();
    assert_eq!(
        sandbox.allow_write,
        [Path::new("/home/u/notes"), Path::new("/proj/data")]
    );
    assert_eq!(sandbox.deny_read, [Path::new("/srv/keys")]);
    assert_eq!(sandbox.allow_read, [Path::new("/home/u/.npmrc")]);
    assert_eq!(
        sandbox.allow_network,
        AllowNetwork::Only(vec![("api.github.com".into(), 443), ("::1".into(), 8080)])
    );
    assert!(sandbox.allow_unix_sockets);
    let any =
        parse(r#"{"mcpServers": {"s": {"command": "x", "sandbox": {"allowNetwork": true}}}}"#)
            .unwrap();
    assert_eq!(
        stdio_of(&any).sandbox.as_ref().unwrap().allow_network,
        AllowNetwork::All
    );
}

#[test]
fn a_sandbox_that_cannot_be_read_as_meant_is_an_error() {
    // A misspelt key would leave open what was meant to be closed: an error, not a warning.
    let (line, column, message, hint) = fail(
        "{\"mcpServers\": {\"s\": {\"command\": \"x\",\n \"sandbox\": {\"denyread\": [\"/k\"]}}}}",
    );
    assert_eq!((line, column), (2, 14));
    assert_eq!(message, "server \"s\": unknown key \"denyread\" in sandbox");
    assert_eq!(hint.as_deref(), Some("did you mean \"denyRead\"?"));
    let (_, _, message, hint) = fail(
        r#"{"mcpServers": {"s": {"command": "x", "sandbox": {"allowNetwork": ["api.github.com"]}}}}"#,
    );
    assert_eq!(
        message,
        "server \"s\": sandbox.allowNetwork[0] \"api.github.com\" is not host:port"
    );
    assert!(hint.unwrap().contains("api.github.com:443"));
    let (_, _, message, _) = fail(r#"{"mcpServers": {"s": {"command": "x", "sandbox": "yes"}}}"#);
    assert!(
        message.starts_with("server \"s\": sandbox: invalid type"),
        "{message}"
    );
    // A remote server runs elsewhere: the key is named as not applying.
    let remote =
        parse(r#"{"mcpServers": {"r": {"url": "https://x.example/mcp", "sandbox": true}}}"#)
            .unwrap();
    assert!(
        remote.warnings[0].contains("\"sandbox\" does not apply to a remote server"),
        "{:?}",
        remote.warnings
    );
}

#[test]
fn tool_search_and_always_loaded_servers() {
    use prise_config::ToolSearch;
    let config = parse(
        r#"{"model": {"toolSearch": "always"}, "mcpServers": {"a": {"command": "x", "alwaysLoad": true}, "b": {"command": "y"}}}"#,
    )
    .unwrap();
    assert_eq!(config.model.tool_search, Some(ToolSearch::Always));
    assert!(config.servers[0].always_load && !config.servers[1].always_load);
    let (_, _, message, _) = fail(r#"{"model": {"toolSearch": "sometimes"}, "mcpServers": {}}"#);
    assert!(
        message.starts_with("model.toolSearch: unknown tool search \"sometimes\""),
        "{message}"
    );
    let (_, _, message, _) =
        fail(r#"{"mcpServers": {"a": {"command": "x", "alwaysLoad": "yes"}}}"#);
    assert!(
        message.starts_with("server \"a\": alwaysLoad: invalid type"),
        "{message}"
    );
}
