//! `prise config`: which file is used, and what it defines, secrets masked.

use std::io::Write;
use std::path::Path;

use prise_config::{Config, ModelSettings, Protocol, RestartPolicy, Server, Transport};

use crate::cli::ServerArgs;
use crate::failure::Failure;
use crate::output;

/// Loads the named or discovered configuration and prints it with secrets masked.
pub fn run(args: &ServerArgs, json: bool) -> Result<(), Failure> {
    let Some(config) = load(args)? else {
        let cwd = std::env::current_dir()?;
        let looked = prise_config::candidates(&cwd, &|name| std::env::var(name).ok());
        let mut out = output::stdout();
        if json {
            output::json(
                &mut out,
                &serde_json::json!({ "path": null, "servers": [], "searched": looked }),
            )?;
        } else {
            writeln!(out, "no configuration file found; looked for:")?;
            for path in looked {
                writeln!(out, "  {}", path.display())?;
            }
        }
        out.flush()?;
        return Ok(());
    };
    let servers: Vec<Server> = config.servers.iter().map(Server::redacted).collect();
    let model = config.model.redacted();
    let mut out = output::stdout();
    if json {
        let shown = Config {
            servers,
            model,
            ..config
        };
        output::json(&mut out, &shown)?;
    } else {
        writeln!(
            out,
            "config: {} ({})",
            config.path.display(),
            format_name(config.format)
        )?;
        // Several files merged: which, and which server comes from where.
        let merged = config.files.len() > 1;
        for file in config.files.iter().skip(1) {
            writeln!(out, "   and: {}", file.display())?;
        }
        let width = servers.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for server in &servers {
            describe(&mut out, server, width, merged)?;
        }
        for note in &config.notes {
            writeln!(out, "note: {note}")?;
        }
        if servers.is_empty() {
            writeln!(out, "(no servers)")?;
        }
        describe_model(&mut out, &model)?;
    }
    out.flush()?;
    Ok(())
}

/// Loads `--config` (a file, or JSON text) or discovers a file, adds the `--with`
/// servers, and prints the warnings on stderr. `None`: nothing is configured.
pub fn load(args: &ServerArgs) -> Result<Option<Config>, Failure> {
    let env = |name: &str| std::env::var(name).ok();
    let mut config = match args.config.as_deref() {
        Some(text) if text.trim_start().starts_with('{') => Some(Config::parse_inline(text, &env)?),
        Some(path) => {
            let path = Path::new(path);
            if !path.exists() {
                return Err(Failure::usage(
                    format!("configuration file {} does not exist", path.display()),
                    "check the path given to --config (or PRISE_CONFIG)".to_owned(),
                ));
            }
            Some(Config::load(path)?)
        }
        None => Config::discover(&std::env::current_dir()?)?,
    };
    if !args.with.is_empty() {
        let with = Config::from_specs(&args.with, &env)?;
        match config.as_mut() {
            Some(config) => config.add_servers(with)?,
            None => config = Some(with),
        }
    }
    for warning in config.iter().flat_map(|c| &c.warnings) {
        eprintln!("warning: {warning}");
    }
    Ok(config)
}

fn format_name(format: prise_config::Format) -> &'static str {
    match format {
        prise_config::Format::McpServers => "mcpServers format",
        prise_config::Format::VsCode => "VS Code servers format",
    }
}

fn describe(
    out: &mut impl Write,
    server: &Server,
    width: usize,
    merged: bool,
) -> std::io::Result<()> {
    let name = &server.name;
    let kind = server.transport.kind();
    let target = match &server.transport {
        Transport::Stdio(stdio) => std::iter::once(stdio.command.as_str())
            .chain(stdio.args.iter().map(String::as_str))
            .map(shell_word)
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http(remote) | Transport::Sse(remote) => remote.url.clone(),
    };
    let state = if server.disabled { "  (disabled)" } else { "" };
    writeln!(out, "  {name:<width$}  {kind:<5}  {target}{state}")?;
    let pad = width + 4;
    let mut detail = |label: &str, text: String| writeln!(out, "  {:pad$}{label:<9}{text}", "");
    if merged {
        detail("from", server.file.display().to_string())?;
    }
    match &server.transport {
        Transport::Stdio(stdio) => {
            for (key, value) in &stdio.env {
                detail("env", format!("{key}={value}"))?;
            }
            if let Some(cwd) = &stdio.cwd {
                detail("cwd", cwd.display().to_string())?;
            }
            if stdio.inherit_env {
                detail("env", "inherits prise's whole environment".to_owned())?;
            }
        }
        Transport::Http(remote) | Transport::Sse(remote) => {
            for (key, value) in &remote.headers {
                detail("header", format!("{key}: {value}"))?;
            }
        }
    }
    if server.startup_timeout != prise_config::DEFAULT_STARTUP_TIMEOUT
        || server.call_timeout != prise_config::DEFAULT_CALL_TIMEOUT
    {
        detail(
            "timeout",
            format!(
                "startup {:?}, call {:?}",
                server.startup_timeout, server.call_timeout
            ),
        )?;
    }
    if let Some(allowed) = &server.tools.allowed {
        detail("allow", allowed.join(", "))?;
    }
    if !server.tools.excluded.is_empty() {
        detail("exclude", server.tools.excluded.join(", "))?;
    }
    match server.restart {
        RestartPolicy::Never => detail("restart", "never".to_owned())?,
        RestartPolicy::OnFailure { max_restarts }
            if max_restarts != prise_config::DEFAULT_MAX_RESTARTS =>
        {
            detail(
                "restart",
                format!("on-failure, at most {max_restarts} in a row"),
            )?
        }
        RestartPolicy::OnFailure { .. } => {}
    }
    if !server.roots.is_empty() {
        let roots: Vec<String> = server
            .roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        detail("roots", roots.join(", "))?;
    }
    match server.protocol {
        Protocol::Auto => {}
        Protocol::Legacy => detail("protocol", "legacy (initialize)".to_owned())?,
        Protocol::Modern => detail("protocol", "modern (2026-07-28)".to_owned())?,
    }
    Ok(())
}

/// The `"model"` section's settings, one line, when the file has any.
fn describe_model(out: &mut impl Write, model: &ModelSettings) -> std::io::Result<()> {
    let mut parts = Vec::new();
    if let Some(name) = &model.name {
        parts.push(name.clone());
    }
    if let Some(url) = &model.base_url {
        parts.push(format!("at {url}"));
    }
    if let Some(key) = &model.api_key {
        parts.push(format!("key {key}"));
    }
    if let Some(turns) = model.max_turns {
        parts.push(format!("max {turns} turns"));
    }
    if let Some(chars) = model.max_tool_output {
        parts.push(format!("tool output cut at {chars} characters"));
    }
    if model.system_prompt.is_some() {
        parts.push("own system prompt".to_owned());
    }
    if let Some(tokens) = model.max_output_tokens {
        parts.push(format!("replies of at most {tokens} tokens"));
    }
    if let Some(idle) = model.idle_timeout {
        parts.push(format!("silent endpoint given up after {idle:?}"));
    }
    if let Some(t) = model.temperature {
        parts.push(format!("temperature {t}"));
    }
    if let Some(p) = model.top_p {
        parts.push(format!("top-p {p}"));
    }
    if let Some(seed) = model.seed {
        parts.push(format!("seed {seed}"));
    }
    if let Some(choice) = &model.tool_choice {
        parts.push(format!("tool choice {choice}"));
    }
    if let Some(search) = model.tool_search {
        let word = serde_json::to_value(search).ok();
        let word = word.as_ref().and_then(|w| w.as_str()).unwrap_or("auto");
        parts.push(format!("tool search {word}"));
    }
    if let Some(retries) = model.tool_call_retries {
        parts.push(format!("unreadable tool calls retried {retries} times"));
    }
    match model.images {
        Some(true) => parts.push("sees images".to_owned()),
        Some(false) => parts.push("no images".to_owned()),
        None => {}
    }
    match model.tool_call_recovery {
        Some(true) => parts.push("tool-call recovery on".to_owned()),
        Some(false) => parts.push("tool-call recovery off".to_owned()),
        None => {}
    }
    if parts.is_empty() {
        return Ok(());
    }
    writeln!(out, "model: {}", parts.join(", "))
}

/// Quotes a word for display when a shell would split or expand it.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
