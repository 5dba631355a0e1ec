//! `prise add`, `prise remove` and `prise import`: changing a configuration file,
//! everything else in it kept as it was (see `prise_config::edit`).

use std::io::Write;
use std::path::{Path, PathBuf};

use prise_config::edit::{self, EditError};
use prise_config::{App, Config};
use serde_json::{Map, Value, json};

use crate::cli::{AddArgs, ImportApp, ImportArgs, RemoteTransport, RemoveArgs, Scope, ServerArgs};
use crate::failure::Failure;
use crate::output;

/// `prise add NAME URL` or `prise add NAME -- COMMAND ARGS...`.
pub fn add(servers: &ServerArgs, args: AddArgs) -> Result<(), Failure> {
    check_name(&args.name)?;
    let entry = entry(&args)?;
    let path = file(servers, args.scope)?;
    let text = read(&path)?;
    let changed = edit::add_server(
        &text,
        edit::servers_key(&path),
        &args.name,
        &entry,
        args.force,
    )
    .map_err(|e| edit_failure(e, &path))?;
    write(&path, &changed)?;
    say(format!("added {} to {}", args.name, path.display()))
}

/// `prise remove NAME`.
pub fn remove(servers: &ServerArgs, args: RemoveArgs) -> Result<(), Failure> {
    let path = file(servers, args.scope)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::usage(
                format!(
                    "no server named {} in {}: the file does not exist",
                    args.name,
                    path.display()
                ),
                other_scope_hint(args.scope),
            ));
        }
        Err(e) => {
            return Err(Failure::Job(anyhow::anyhow!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let changed = edit::remove_server(&text, &args.name).map_err(|e| match e {
        EditError::Missing(name) => Failure::usage(
            format!("no server named {name} in {}", path.display()),
            other_scope_hint(args.scope),
        ),
        other => edit_failure(other, &path),
    })?;
    write(&path, &changed)?;
    say(format!("removed {} from {}", args.name, path.display()))
}

/// `prise import APP`: each server of the app's file copied as written (variables
/// are expanded when prise uses them, not now); names already there are skipped
/// unless `--force`.
pub fn import(servers: &ServerArgs, args: ImportArgs) -> Result<(), Failure> {
    let app = match args.app {
        ImportApp::ClaudeDesktop => App::ClaudeDesktop,
        ImportApp::Cursor => App::Cursor,
        ImportApp::Vscode => App::VsCode,
    };
    let env = |name: &str| std::env::var(name).ok();
    let candidates = prise_config::app_files(app, &env);
    let Some(source) = candidates.iter().find(|p| p.is_file()) else {
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure::usage(
            format!(
                "found no configuration of {:?}; looked for {}",
                args.app,
                looked.join(", ")
            ),
            None,
        ));
    };
    let entries = edit::server_entries(&read(source)?).map_err(|e| edit_failure(e, source))?;
    let path = file(servers, args.scope)?;
    let mut text = read(&path)?;
    let key = edit::servers_key(&path);
    let mut out = output::stdout();
    let (mut added, mut skipped) = (0, 0);
    for (name, entry) in &entries {
        match edit::add_server(&text, key, name, entry, args.force) {
            Ok(changed) => {
                text = changed;
                added += 1;
                writeln!(out, "imported {name}")?;
                // Say now what prise will not be able to use, rather than at mount.
                if let Err(e) = usable(name, entry) {
                    eprintln!("warning: {name}: {e}");
                }
            }
            Err(EditError::Exists(_)) => {
                skipped += 1;
                writeln!(
                    out,
                    "skipped {name}: a server of that name is already in {} (--force replaces it)",
                    path.display()
                )?;
            }
            Err(other) => return Err(edit_failure(other, &path)),
        }
    }
    if added > 0 {
        write(&path, &text)?;
    }
    writeln!(
        out,
        "{added} of {} servers of {} copied to {}{}",
        entries.len(),
        source.display(),
        path.display(),
        if skipped > 0 {
            format!(" ({skipped} skipped)")
        } else {
            String::new()
        }
    )?;
    out.flush()?;
    Ok(())
}

/// The entry `prise add` writes.
fn entry(args: &AddArgs) -> Result<Value, Failure> {
    let pairs = |items: &[String], what: &str| -> Result<Map<String, Value>, Failure> {
        let mut map = Map::new();
        for item in items {
            let Some((key, value)) = item.split_once('=').filter(|(k, _)| !k.trim().is_empty())
            else {
                return Err(Failure::usage(
                    format!("--{what} {item:?} is not KEY=VALUE"),
                    format!("e.g. --{what} LOG_LEVEL=warn"),
                ));
            };
            map.insert(key.trim().to_owned(), Value::String(value.to_owned()));
        }
        Ok(map)
    };
    if let Some(url) = &args.url {
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(Failure::usage(
                format!("{url} is not an http:// or https:// URL"),
                "for a command, write it after --: prise add NAME -- COMMAND ARGS".to_owned(),
            ));
        }
        if !args.env.is_empty() {
            return Err(Failure::usage(
                "--env is for a command; a URL takes --header",
                None,
            ));
        }
        if args.sandbox {
            return Err(Failure::usage(
                "--sandbox is for a command; a remote server runs elsewhere",
                None,
            ));
        }
        let kind = match args.transport {
            RemoteTransport::Http => "http",
            RemoteTransport::Sse => "sse",
        };
        let mut entry = json!({"type": kind, "url": url});
        let headers = pairs(&args.header, "header")?;
        if !headers.is_empty() {
            entry["headers"] = Value::Object(headers);
        }
        return Ok(entry);
    }
    if !args.header.is_empty() {
        return Err(Failure::usage(
            "--header is for a URL; a command takes --env",
            None,
        ));
    }
    let mut entry = json!({"command": args.command[0], "args": args.command[1..]});
    let env = pairs(&args.env, "env")?;
    if !env.is_empty() {
        entry["env"] = Value::Object(env);
    }
    if args.sandbox {
        entry["sandbox"] = Value::Bool(true);
    }
    Ok(entry)
}

/// Whether prise can mount `entry`, read as it will be (unset variables aside).
fn usable(name: &str, entry: &Value) -> Result<(), String> {
    let text = json!({"mcpServers": {name: entry}}).to_string();
    Config::parse(&text, Path::new("import"), &|_| Some(String::new()))
        .map(drop)
        .map_err(|e| {
            let message = e.to_string();
            message
                .strip_prefix("import:1:")
                .and_then(|m| m.split_once(": "))
                .map_or(message.clone(), |(_, m)| m.to_owned())
        })
}

fn check_name(name: &str) -> Result<(), Failure> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Failure::usage(
            format!("server name {name:?} may only contain letters, digits, '_' and '-'"),
            "the name prefixes each tool (name__tool), which model APIs restrict to those characters".to_owned(),
        ));
    }
    Ok(())
}

/// The file to change: `--config FILE`, else the scope's.
fn file(servers: &ServerArgs, scope: Scope) -> Result<PathBuf, Failure> {
    if let Some(config) = servers.config.as_deref() {
        if config.trim_start().starts_with('{') {
            return Err(Failure::usage(
                "--config holds JSON here; add, remove and import change a file",
                "name the file with --config FILE, or use --scope".to_owned(),
            ));
        }
        return Ok(PathBuf::from(config));
    }
    Ok(match scope {
        Scope::Project => std::env::current_dir()?.join(".mcp.json"),
        Scope::User => {
            let env = |name: &str| std::env::var(name).ok();
            let files = prise_config::user_files(&env);
            match files.iter().find(|p| p.is_file()).or(files.first()) {
                Some(path) => path.clone(),
                None => {
                    return Err(Failure::usage(
                        "no home folder for the user's configuration",
                        "set HOME, or name the file with --config".to_owned(),
                    ));
                }
            }
        }
    })
}

fn other_scope_hint(scope: Scope) -> Option<String> {
    Some(match scope {
        Scope::Project => "`prise config` shows where each server is defined; --scope user changes the user's file".to_owned(),
        Scope::User => "`prise config` shows where each server is defined; --scope project changes ./.mcp.json".to_owned(),
    })
}

/// The file's text; a file that does not exist yet is empty.
fn read(path: &Path) -> Result<String, Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Failure::Job(anyhow::anyhow!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Replaces the file at once (a new file beside it, renamed over it), keeping its
/// permissions: a reader never sees half a file, and a failed write changes nothing.
fn write(path: &Path, text: &str) -> Result<(), Failure> {
    let fail =
        |e: std::io::Error| Failure::Job(anyhow::anyhow!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.prise-{}", std::process::id()));
    std::fs::write(&temporary, text).map_err(fail)?;
    if let Ok(metadata) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temporary, metadata.permissions());
    }
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail(e)
    })
}

fn edit_failure(error: EditError, path: &Path) -> Failure {
    match error {
        EditError::Exists(name) => Failure::usage(
            format!("a server named {name} is already in {}", path.display()),
            "--force replaces it, or choose another name".to_owned(),
        ),
        other => Failure::usage(format!("{}: {other}", path.display()), None),
    }
}

fn say(line: String) -> Result<(), Failure> {
    let mut out = output::stdout();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}
