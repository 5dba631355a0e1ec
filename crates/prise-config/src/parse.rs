//! From text to [`Config`], with every error placed at its line and column.
//!
//! serde_json reports positions only for its own errors. To place ours (an unknown
//! `type`, a duplicate name, an unset variable) just as precisely, each object is first
//! read as a list of `(key, raw value)` pairs: a [`RawValue`] borrows the exact slice of
//! the file it came from, so its offset in the file is known.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::ConfigError;
use crate::expand::{ExpandError, expand};
use crate::jsonc::blank_comments;
use crate::model::*;
use crate::suggest::closest;

/// The keys of a server's `"oauth"` object.
const OAUTH_KEYS: [&str; 10] = [
    "clientId",
    "clientSecret",
    "scopes",
    "callbackPort",
    "clientMetadataUrl",
    "clientCredentials",
    "privateKey",
    "workloadToken",
    "workloadTokenFile",
    "enterprise",
];

/// The keys of the model section.
const MODEL_KEYS: [&str; 16] = [
    "toolSearch",
    "name",
    "baseUrl",
    "apiKey",
    "maxTurns",
    "systemPrompt",
    "maxToolOutput",
    "toolCallRecovery",
    "toolCallRetries",
    "images",
    "idleTimeout",
    "maxOutputTokens",
    "temperature",
    "topP",
    "seed",
    "toolChoice",
];

/// The keys a server may have, for "did you mean".
const SERVER_KEYS: [&str; 22] = [
    "type",
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "inheritEnv",
    "url",
    "headers",
    "disabled",
    "timeout",
    "allowedTools",
    "excludedTools",
    "restart",
    "maxRestarts",
    "protocol",
    "roots",
    "pinning",
    "maxMessageSize",
    "oauth",
    "sandbox",
    "alwaysLoad",
];

/// The keys of a server's `"sandbox"` object.
const SANDBOX_KEYS: [&str; 5] = [
    "allowWrite",
    "denyRead",
    "allowRead",
    "allowNetwork",
    "allowUnixSockets",
];

type Env<'e> = &'e dyn Fn(&str) -> Option<String>;

impl Config {
    /// Parses configuration text; `path` names the file in errors and anchors relative
    /// `cwd`s; `env` looks up variables for `${VAR}` expansion.
    pub fn parse(text: &str, path: &Path, env: Env<'_>) -> Result<Config, ConfigError> {
        let text = blank_comments(text);
        let base = base_dir(path);
        // VS Code's predefined variables, for files written for it (and harmless in
        // others): the folder the configuration belongs to, the home folder, `/`.
        let with_predefined = |name: &str| match name {
            "workspaceFolder" => Some(base.display().to_string()),
            "workspaceFolderBasename" => base.file_name().map(|n| n.to_string_lossy().into_owned()),
            "userHome" => env("HOME"),
            "pathSeparator" => Some("/".to_owned()),
            _ => env(name),
        };
        let mut parser = Parser {
            text: &text,
            path,
            base: &base,
            env: &with_predefined,
            warnings: Vec::new(),
        };
        let document = parser.document()?;
        Ok(Config {
            path: path.to_owned(),
            format: document.format,
            files: vec![path.to_owned()],
            servers: document.servers,
            approval: document.approval.unwrap_or_default(),
            model: document.model,
            roots: document.roots,
            profiles: document.profiles,
            sets_approval: document.approval_set,
            notes: Vec::new(),
            warnings: parser.warnings,
        })
    }

    /// Reads and parses a file, expanding variables from the process environment.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::parse(&text, path, &|name| std::env::var(name).ok())
    }
}

/// Whether `name` may name a server or a profile: it prefixes tool names, which
/// model APIs restrict, or ends a URL.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A JSON object's entries in file order, duplicates kept, values not yet parsed.
pub(crate) struct Entries<'a>(pub Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// The raw values of one server's known keys.
#[derive(Default)]
struct Fields<'a> {
    kind: Option<&'a RawValue>,
    command: Option<&'a RawValue>,
    args: Option<&'a RawValue>,
    env: Option<&'a RawValue>,
    cwd: Option<&'a RawValue>,
    inherit_env: Option<&'a RawValue>,
    url: Option<&'a RawValue>,
    headers: Option<&'a RawValue>,
    disabled: Option<&'a RawValue>,
    timeout: Option<&'a RawValue>,
    allowed_tools: Option<&'a RawValue>,
    excluded_tools: Option<&'a RawValue>,
    restart: Option<&'a RawValue>,
    max_restarts: Option<&'a RawValue>,
    protocol: Option<&'a RawValue>,
    roots: Option<&'a RawValue>,
    pinning: Option<&'a RawValue>,
    max_message_size: Option<&'a RawValue>,
    env_file: Option<&'a RawValue>,
    oauth: Option<&'a RawValue>,
    sandbox: Option<&'a RawValue>,
    always_load: Option<&'a RawValue>,
}

/// Which transport a `type` value asks for.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stdio,
    Http,
    Sse,
}

struct Parser<'a> {
    text: &'a str,
    path: &'a Path,
    /// Where relative paths start: the folder of the file, or for a file in a
    /// `.vscode` or `.cursor` folder, the project folder that holds it.
    base: &'a Path,
    env: Env<'a>,
    warnings: Vec<String>,
}

/// What a file's top level holds.
struct Document {
    format: Format,
    servers: Vec<Server>,
    approval: Option<Approval>,
    approval_set: bool,
    model: ModelSettings,
    roots: Vec<PathBuf>,
    profiles: std::collections::BTreeMap<String, Profile>,
}

/// The folder relative paths in the file at `path` start from: VS Code and Cursor keep
/// their file in `.vscode/` or `.cursor/` and mean the project folder above it.
pub(crate) fn base_dir(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new(""));
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(".vscode" | ".cursor") => dir.parent().unwrap_or(Path::new("")).to_owned(),
        _ => dir.to_owned(),
    }
}

impl<'a> Parser<'a> {
    fn document(&mut self) -> Result<Document, ConfigError> {
        let top: Entries<'a> = serde_json::from_str(self.text)
            .map_err(|e| self.serde_error(0, self.text, "invalid JSON", &e))?;
        let mut found: Option<(Format, &'a RawValue)> = None;
        let mut approval = None;
        let mut model = ModelSettings::default();
        let mut roots = Vec::new();
        let mut pinning = Pinning::default();
        let mut profiles = None;
        for (key, raw) in &top.0 {
            let format = match key.as_str() {
                "mcpServers" => Format::McpServers,
                "servers" => Format::VsCode,
                "roots" => {
                    roots = self.roots(raw, "top level", false)?;
                    continue;
                }
                "pinning" => {
                    pinning = self.pinning(raw, "top level")?;
                    continue;
                }
                "approval" => {
                    approval = Some(self.approval(raw)?);
                    continue;
                }
                "model" => {
                    model = self.model(raw)?;
                    continue;
                }
                "profiles" => {
                    profiles = Some(raw);
                    continue;
                }
                _ => continue,
            };
            if found.is_some() {
                return Err(self.error(
                    self.key_offset(raw),
                    format!("second \"{key}\" object; a file holds one \"mcpServers\" or one \"servers\" object"),
                    Some("merge the two into one".into()),
                ));
            }
            found = Some((format, raw));
        }
        let Some((format, raw)) = found else {
            return Err(self.error(
                0,
                "no \"mcpServers\" (Claude Desktop, Claude Code, Cursor) or \"servers\" (VS Code) object".into(),
                Some(r#"a minimal file: {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#.into()),
            ));
        };
        let key = match format {
            Format::McpServers => "\"mcpServers\"",
            Format::VsCode => "\"servers\"",
        };
        let entries: Entries<'a> = self.value(raw, key)?;
        let mut servers: Vec<Server> = Vec::with_capacity(entries.0.len());
        for (name, raw) in entries.0 {
            let at = self.key_offset(raw);
            if !is_name(&name) {
                return Err(self.error(
                    at,
                    format!("server name \"{name}\" may only contain letters, digits, '_' and '-'"),
                    Some("the name prefixes each tool (name__tool), which model APIs restrict to those characters".into()),
                ));
            }
            if servers.iter().any(|s| s.name == name) {
                return Err(self.error(
                    at,
                    format!("duplicate server name \"{name}\""),
                    Some("rename or remove one of them".into()),
                ));
            }
            servers.push(self.server(name, raw, &roots, pinning)?);
        }
        let profiles = match profiles {
            Some(raw) => self.profiles(raw, &servers)?,
            None => Default::default(),
        };
        Ok(Document {
            format,
            servers,
            approval_set: approval.is_some(),
            approval,
            model,
            roots,
            profiles,
        })
    }

    /// `"roots": ["~/notes", "src"]`: folders, `${VAR}` expanded, `~/` meaning the home
    /// folder, relative ones taken from the file's directory.
    fn roots(
        &self,
        raw: &'a RawValue,
        what: &str,
        lenient: bool,
    ) -> Result<Vec<PathBuf>, ConfigError> {
        self.paths(raw, what, "roots", lenient)
    }

    /// A list of paths, read as [`Parser::roots`] reads folders.
    fn paths(
        &self,
        raw: &'a RawValue,
        what: &str,
        key: &str,
        lenient: bool,
    ) -> Result<Vec<PathBuf>, ConfigError> {
        let strings = Strings {
            parser: self,
            server: what,
            lenient,
        };
        let dir = self.base;
        let items: Vec<&'a RawValue> = self.value(raw, &format!("{what}: {key}"))?;
        let mut roots = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let text = strings.string(item, &format!("{key}[{i}]"))?;
            if text.trim().is_empty() {
                return Err(self.error(
                    self.offset(item),
                    format!("{what}: {key}[{i}] is empty"),
                    Some("name a folder, e.g. \"~/notes\"".into()),
                ));
            }
            let path = match text.strip_prefix("~/").or((text == "~").then_some("")) {
                Some(rest) => match (self.env)("HOME").filter(|h| !h.is_empty()) {
                    Some(home) => Path::new(&home).join(rest),
                    None => {
                        return Err(self.error(
                            self.offset(item),
                            format!("{what}: {key}[{i}] starts with ~ but HOME is not set"),
                            None,
                        ));
                    }
                },
                None => dir.join(&text),
            };
            roots.push(path);
        }
        Ok(roots)
    }

    /// `"profiles": {"NAME": {"servers": ["github"], "tools": ["github__search_*"]}}`,
    /// each server named checked against those of the file.
    fn profiles(
        &self,
        raw: &'a RawValue,
        servers: &[Server],
    ) -> Result<std::collections::BTreeMap<String, Profile>, ConfigError> {
        let mut profiles = std::collections::BTreeMap::new();
        let entries: Entries<'a> = self.value(raw, "profiles")?;
        for (name, raw) in entries.0 {
            let at = self.key_offset(raw);
            if !is_name(&name) {
                return Err(self.error(
                    at,
                    format!(
                        "profile name \"{name}\" may only contain letters, digits, '_' and '-'"
                    ),
                    Some("the name is the end of the gateway's URL: /mcp/NAME".into()),
                ));
            }
            let mut profile = Profile::default();
            let fields: Entries<'a> = self.value(raw, &format!("profiles.{name}"))?;
            for (key, value) in fields.0 {
                match key.as_str() {
                    "servers" => {
                        let named: Vec<String> =
                            self.value(value, &format!("profiles.{name}.servers"))?;
                        if let Some(unknown) = named
                            .iter()
                            .find(|n| !servers.iter().any(|s| &&s.name == n))
                        {
                            return Err(self.error(
                                self.key_offset(value),
                                format!(
                                    "profiles.{name}.servers: no server is named \"{unknown}\""
                                ),
                                Some(format!(
                                    "the servers of this file are: {}",
                                    servers
                                        .iter()
                                        .map(|s| s.name.as_str())
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )),
                            ));
                        }
                        profile.servers = Some(named);
                    }
                    "tools" => {
                        let globs: Vec<String> =
                            self.value(value, &format!("profiles.{name}.tools"))?;
                        for pattern in globs {
                            let glob = Glob::new(&pattern).map_err(|e| {
                                self.error(
                                    self.key_offset(value),
                                    format!(
                                        "profiles.{name}.tools: bad glob \"{pattern}\": {}",
                                        e.kind()
                                    ),
                                    None,
                                )
                            })?;
                            profile.matchers.push(glob.compile_matcher());
                            profile.tools.push(pattern);
                        }
                    }
                    other => {
                        return Err(self.error(
                            self.key_offset(value),
                            format!("profiles.{name}: unknown key \"{other}\""),
                            Some("use \"servers\" and \"tools\"".into()),
                        ));
                    }
                }
            }
            profiles.insert(name, profile);
        }
        Ok(profiles)
    }

    /// `"approval": {"default": "ask", "allowReadOnly": true, "tools": {"glob": "allow"}}`.
    fn approval(&self, raw: &'a RawValue) -> Result<Approval, ConfigError> {
        let mut approval = Approval::default();
        let entries: Entries<'a> = self.value(raw, "approval")?;
        for (key, value) in entries.0 {
            match key.as_str() {
                "default" => approval.default = self.decision(value, "approval.default")?,
                "allowReadOnly" => {
                    approval.allow_read_only = self.value(value, "approval.allowReadOnly")?
                }
                "tools" => {
                    let rules: Entries<'a> = self.value(value, "approval.tools")?;
                    for (pattern, decision) in rules.0 {
                        let glob = Glob::new(&pattern).map_err(|e| {
                            self.error(
                                self.key_offset(decision),
                                format!("approval.tools: bad glob \"{pattern}\": {}", e.kind()),
                                None,
                            )
                        })?;
                        let decision =
                            self.decision(decision, &format!("approval.tools.{pattern}"))?;
                        approval.matchers.push(glob.compile_matcher());
                        approval.rules.push((pattern, decision));
                    }
                }
                other => {
                    return Err(self.error(
                        self.key_offset(value),
                        format!("approval: unknown key \"{other}\""),
                        Some("use \"default\", \"allowReadOnly\" and \"tools\"".into()),
                    ));
                }
            }
        }
        Ok(approval)
    }

    /// `"model": "ollama:qwen2.5"` or `"model": {"name": ..., "baseUrl": ..., "apiKey":
    /// ..., "maxTurns": ..., "systemPrompt": ..., "maxToolOutput": ...,
    /// "toolCallRecovery": ..., "images": ..., "idleTimeout": ..., "maxOutputTokens": ...}`.
    fn model(&mut self, raw: &'a RawValue) -> Result<ModelSettings, ConfigError> {
        let string = |parser: &Self, raw: &'a RawValue, key: &str| {
            Strings {
                parser,
                server: "model",
                lenient: false,
            }
            .string(raw, key)
        };
        if raw.get().starts_with('"') {
            return Ok(ModelSettings {
                name: Some(string(self, raw, "name")?),
                ..ModelSettings::default()
            });
        }
        let mut model = ModelSettings::default();
        let entries: Entries<'a> = self.value(raw, "model")?;
        let positive =
            |parser: &Self, value: &'a RawValue, key: &str| -> Result<usize, ConfigError> {
                match parser.value::<usize>(value, &format!("model.{key}"))? {
                    0 => Err(parser.error(
                        parser.offset(value),
                        format!("model.{key} must be at least 1"),
                        None,
                    )),
                    n => Ok(n),
                }
            };
        for (key, value) in entries.0 {
            match key.as_str() {
                "name" => model.name = Some(string(self, value, "name")?),
                "baseUrl" => model.base_url = Some(string(self, value, "baseUrl")?),
                "apiKey" => model.api_key = Some(string(self, value, "apiKey")?),
                "idleTimeout" => {
                    model.idle_timeout = Some(self.duration(value, "model", "idleTimeout")?)
                }
                "systemPrompt" => {
                    model.system_prompt = Some(self.value(value, "model.systemPrompt")?)
                }
                "maxTurns" => model.max_turns = Some(positive(self, value, "maxTurns")?),
                "maxOutputTokens" => {
                    model.max_output_tokens = Some(positive(self, value, "maxOutputTokens")?)
                }
                "maxToolOutput" => {
                    model.max_tool_output = Some(positive(self, value, "maxToolOutput")?)
                }
                "toolCallRecovery" => {
                    model.tool_call_recovery = Some(self.value(value, "model.toolCallRecovery")?)
                }
                "images" => model.images = Some(self.value(value, "model.images")?),
                "temperature" => {
                    model.temperature = Some(self.ranged(value, "temperature", 0.0..=2.0)?)
                }
                "topP" => model.top_p = Some(self.ranged(value, "topP", 0.0..=1.0)?),
                "seed" => model.seed = Some(self.value(value, "model.seed")?),
                "toolCallRetries" => {
                    model.tool_call_retries = Some(self.value(value, "model.toolCallRetries")?)
                }
                "toolSearch" => {
                    let text: String = self.value(value, "model.toolSearch")?;
                    model.tool_search = Some(text.parse().map_err(|e: String| {
                        self.error(self.offset(value), format!("model.toolSearch: {e}"), None)
                    })?);
                }
                "toolChoice" => {
                    let choice: String = self.value(value, "model.toolChoice")?;
                    if !["auto", "required", "none"].contains(&choice.as_str()) {
                        return Err(self.error(
                            self.offset(value),
                            format!("model.toolChoice: unknown choice \"{choice}\""),
                            Some("use \"auto\" (the model decides), \"required\" (it must call a tool) or \"none\"".into()),
                        ));
                    }
                    model.tool_choice = Some(choice);
                }
                other => {
                    let typo = closest(other, MODEL_KEYS)
                        .map(|k| format!("did you mean \"{k}\"? "))
                        .unwrap_or_default();
                    return Err(self.error(
                        self.key_offset(value),
                        format!("model: unknown key \"{other}\""),
                        Some(format!(
                            "{typo}the keys are {}",
                            MODEL_KEYS.map(|k| format!("\"{k}\"")).join(", ")
                        )),
                    ));
                }
            }
        }
        Ok(model)
    }

    /// A number of the model section within `range`.
    fn ranged(
        &self,
        raw: &'a RawValue,
        key: &str,
        range: std::ops::RangeInclusive<f64>,
    ) -> Result<f64, ConfigError> {
        let value: f64 = self.value(raw, &format!("model.{key}"))?;
        if range.contains(&value) {
            Ok(value)
        } else {
            Err(self.error(
                self.offset(raw),
                format!(
                    "model.{key} must be between {} and {}",
                    range.start(),
                    range.end()
                ),
                None,
            ))
        }
    }

    fn decision(&self, raw: &'a RawValue, what: &str) -> Result<Decision, ConfigError> {
        match self.value::<String>(raw, what)?.as_str() {
            "allow" => Ok(Decision::Allow),
            "ask" => Ok(Decision::Ask),
            "deny" => Ok(Decision::Deny),
            other => Err(self.error(
                self.offset(raw),
                format!("{what}: unknown decision \"{other}\""),
                Some("use \"allow\", \"ask\" or \"deny\"".into()),
            )),
        }
    }

    fn server(
        &mut self,
        name: String,
        raw: &'a RawValue,
        shared_roots: &[PathBuf],
        shared_pinning: Pinning,
    ) -> Result<Server, ConfigError> {
        let what = format!("server \"{name}\"");
        let entries: Entries<'a> = self.value(raw, &what)?;
        let mut f = Fields::default();
        let mut unknown = Vec::new();
        for (key, value) in entries.0 {
            let slot = match key.as_str() {
                "type" => &mut f.kind,
                "command" => &mut f.command,
                "args" => &mut f.args,
                "env" => &mut f.env,
                "cwd" => &mut f.cwd,
                "inheritEnv" => &mut f.inherit_env,
                "url" => &mut f.url,
                "headers" => &mut f.headers,
                "disabled" => &mut f.disabled,
                "timeout" => &mut f.timeout,
                "allowedTools" => &mut f.allowed_tools,
                "excludedTools" => &mut f.excluded_tools,
                "restart" => &mut f.restart,
                "maxRestarts" => &mut f.max_restarts,
                "protocol" => &mut f.protocol,
                "roots" => &mut f.roots,
                "pinning" => &mut f.pinning,
                "maxMessageSize" => &mut f.max_message_size,
                "envFile" => &mut f.env_file,
                "oauth" => &mut f.oauth,
                "sandbox" => &mut f.sandbox,
                "alwaysLoad" => &mut f.always_load,
                _ => {
                    let (line, column) = position(self.text, self.key_offset(value));
                    let typo = closest(&key, SERVER_KEYS)
                        .map(|k| format!("; did you mean \"{k}\"?"))
                        .unwrap_or_default();
                    self.warnings.push(format!(
                        "{}:{line}:{column}: {what}: unknown key \"{key}\" ignored{typo}",
                        self.path.display()
                    ));
                    unknown.push(key);
                    continue;
                }
            };
            if slot.is_some() {
                return Err(self.error(
                    self.key_offset(value),
                    format!("{what}: duplicate key \"{key}\""),
                    None,
                ));
            }
            *slot = Some(value);
        }

        let disabled = self
            .optional::<bool>(f.disabled, &format!("{what}: disabled"))?
            .unwrap_or(false);
        // A disabled server is never started, so a variable it needs may well be unset.
        let strings = Strings {
            parser: self,
            server: &what,
            lenient: disabled,
        };
        let kind = match f.kind {
            None => None,
            Some(raw) => Some((strings.parser.kind(raw, &what)?, raw)),
        };
        let transport = match (f.command, f.url) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    self.key_offset(raw),
                    format!("{what} has both \"command\" and \"url\""),
                    Some("keep \"command\" for a server prise starts, \"url\" for one it connects to".into()),
                ));
            }
            (None, None) => {
                let typo = unknown.iter().find_map(|key| {
                    closest(key, ["command", "url"]).map(|k| format!("\"{key}\" should be \"{k}\""))
                });
                return Err(self.error(
                    self.key_offset(raw),
                    format!("{what} has neither \"command\" nor \"url\""),
                    Some(typo.unwrap_or_else(|| "add \"command\": \"program\" to start it, or \"url\": \"https://...\" to connect to it".into())),
                ));
            }
            (Some(command), None) => {
                if let Some((k, at)) = kind
                    && k != Kind::Stdio
                {
                    return Err(self.mismatch(
                        &what,
                        at,
                        "needs \"url\", but the server has \"command\"",
                    ));
                }
                self.ignored(f.headers, &what, "headers", "stdio");
                self.ignored(f.oauth, &what, "oauth", "stdio");
                Transport::Stdio(self.stdio(&what, disabled, command, &f)?)
            }
            (None, Some(url)) => {
                if let Some((Kind::Stdio, at)) = kind {
                    return Err(self.mismatch(
                        &what,
                        at,
                        "needs \"command\", but the server has \"url\"",
                    ));
                }
                for (key, field) in [
                    ("args", f.args),
                    ("env", f.env),
                    ("envFile", f.env_file),
                    ("cwd", f.cwd),
                    ("inheritEnv", f.inherit_env),
                    ("sandbox", f.sandbox),
                ] {
                    self.ignored(field, &what, key, "remote");
                }
                let strings = Strings {
                    parser: self,
                    server: &what,
                    lenient: disabled,
                };
                let url_text = strings.string(url, "url")?;
                let web = ["http://", "https://"]
                    .iter()
                    .any(|scheme| starts_with_ignore_case(&url_text, scheme));
                if !disabled && !web {
                    return Err(self.error(
                        self.offset(url),
                        format!("{what}: url \"{url_text}\" is not an http:// or https:// URL"),
                        None,
                    ));
                }
                let headers = match f.headers {
                    None => Vec::new(),
                    Some(raw) => strings.map(raw, "headers")?,
                };
                let oauth = match f.oauth {
                    None => None,
                    Some(raw) => Some(self.oauth(raw, &strings)?),
                };
                let remote = Remote {
                    url: url_text,
                    headers,
                    oauth,
                };
                match kind {
                    Some((Kind::Sse, _)) => Transport::Sse(remote),
                    _ => Transport::Http(remote),
                }
            }
        };

        let (startup_timeout, call_timeout) = self.timeouts(f.timeout, &what)?;
        let tools = ToolFilter::new(
            self.globs(f.allowed_tools, &what, "allowedTools")?,
            self.globs(f.excluded_tools, &what, "excludedTools")?
                .unwrap_or_default(),
        );
        let tools = tools.map_err(|(glob, e)| {
            self.error(0, format!("{what}: bad tool glob \"{glob}\": {e}"), None)
        })?;
        let restart = self.restart(f.restart, f.max_restarts, &what)?;
        let protocol = match f.protocol {
            None => Protocol::Auto,
            Some(raw) => match self
                .value::<String>(raw, &format!("{what}: protocol"))?
                .as_str()
            {
                "auto" => Protocol::Auto,
                "legacy" => Protocol::Legacy,
                "modern" => Protocol::Modern,
                other => {
                    return Err(self.error(
                        self.offset(raw),
                        format!("{what}: unknown protocol \"{other}\""),
                        Some("use \"auto\" (the default), \"legacy\" (initialize, up to 2025-11-25) or \"modern\" (2026-07-28)".into()),
                    ));
                }
            },
        };
        let roots = match f.roots {
            Some(raw) => self.roots(raw, &what, disabled)?,
            None => shared_roots.to_vec(),
        };
        let max_message_size = match f.max_message_size {
            None => DEFAULT_MAX_MESSAGE_SIZE,
            Some(raw) => self.size(raw, &what, "maxMessageSize")?,
        };
        let pinning = match f.pinning {
            Some(raw) => self.pinning(raw, &what)?,
            None => shared_pinning,
        };
        let always_load = self
            .optional::<bool>(f.always_load, &format!("{what}: alwaysLoad"))?
            .unwrap_or(false);
        Ok(Server {
            name,
            file: self.path.to_owned(),
            transport,
            disabled,
            startup_timeout,
            call_timeout,
            tools,
            restart,
            protocol,
            max_message_size,
            roots,
            pinning,
            always_load,
        })
    }

    /// `"pinning": "strict" | "warn" | "off"`.
    fn pinning(&self, raw: &'a RawValue, what: &str) -> Result<Pinning, ConfigError> {
        match self.value::<String>(raw, &format!("{what}: pinning"))?.as_str() {
            "strict" => Ok(Pinning::Strict),
            "warn" => Ok(Pinning::Warn),
            "off" => Ok(Pinning::Off),
            other => Err(self.error(
                self.offset(raw),
                format!("{what}: unknown pinning \"{other}\""),
                Some("use \"strict\" (the default: a changed tool is withheld until `prise trust`), \"warn\" or \"off\"".into()),
            )),
        }
    }

    /// `"sandbox": true | false | {"allowWrite": [...], "denyRead": [...], "allowRead":
    /// [...], "allowNetwork": true | false | ["host:port"], "allowUnixSockets": bool}`.
    /// Unknown keys are errors here, not warnings: a misspelt `denyRead` would leave
    /// open what the person meant to close.
    fn sandbox(
        &self,
        raw: &'a RawValue,
        what: &str,
        lenient: bool,
    ) -> Result<Option<Sandbox>, ConfigError> {
        if let Ok(on) = serde_json::from_str::<bool>(raw.get()) {
            return Ok(on.then(Sandbox::default));
        }
        let entries: Entries<'a> = self.value(raw, &format!("{what}: sandbox"))?;
        let mut sandbox = Sandbox::default();
        for (key, value) in entries.0 {
            let key_what = format!("sandbox.{key}");
            match key.as_str() {
                "allowWrite" => {
                    sandbox.allow_write = self.paths(value, what, &key_what, lenient)?
                }
                "denyRead" => sandbox.deny_read = self.paths(value, what, &key_what, lenient)?,
                "allowRead" => sandbox.allow_read = self.paths(value, what, &key_what, lenient)?,
                "allowUnixSockets" => {
                    sandbox.allow_unix_sockets =
                        self.value(value, &format!("{what}: {key_what}"))?
                }
                "allowNetwork" => sandbox.allow_network = self.allow_network(value, what)?,
                other => {
                    let hint = match closest(other, SANDBOX_KEYS) {
                        Some(k) => format!("did you mean \"{k}\"?"),
                        None => format!("the keys are {}", SANDBOX_KEYS.join(", ")),
                    };
                    return Err(self.error(
                        self.key_offset(value),
                        format!("{what}: unknown key \"{other}\" in sandbox"),
                        Some(hint),
                    ));
                }
            }
        }
        Ok(Some(sandbox))
    }

    /// `"allowNetwork": true | false | ["api.github.com:443", "[::1]:8080"]`.
    fn allow_network(&self, raw: &'a RawValue, what: &str) -> Result<AllowNetwork, ConfigError> {
        if let Ok(on) = serde_json::from_str::<bool>(raw.get()) {
            return Ok(if on {
                AllowNetwork::All
            } else {
                AllowNetwork::None
            });
        }
        let items: Vec<&'a RawValue> = self.value(raw, &format!("{what}: sandbox.allowNetwork"))?;
        let mut allowed = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let text: String = self.value(item, &format!("{what}: sandbox.allowNetwork[{i}]"))?;
            let parsed = text
                .rsplit_once(':')
                .and_then(|(host, port)| {
                    Some((host, port.parse::<u16>().ok().filter(|p| *p != 0)?))
                })
                .filter(|(host, _)| !host.is_empty());
            match parsed {
                Some((host, port)) => {
                    allowed.push((host.trim_matches(['[', ']']).to_owned(), port))
                }
                None => {
                    return Err(self.error(
                        self.offset(item),
                        format!("{what}: sandbox.allowNetwork[{i}] \"{text}\" is not host:port"),
                        Some("write the host and port it connects to, e.g. \"api.github.com:443\", or true for any".into()),
                    ));
                }
            }
        }
        Ok(AllowNetwork::Only(allowed))
    }

    fn stdio(
        &self,
        what: &str,
        disabled: bool,
        command: &'a RawValue,
        f: &Fields<'a>,
    ) -> Result<Stdio, ConfigError> {
        let strings = Strings {
            parser: self,
            server: what,
            lenient: disabled,
        };
        // mcphost writes the command and its arguments as one array.
        let mut words = if command.get().starts_with('[') {
            strings.list(command, "command")?
        } else {
            vec![strings.string(command, "command")?]
        };
        if words.first().is_none_or(|c| c.trim().is_empty()) {
            return Err(self.error(
                self.offset(command),
                format!("{what}: \"command\" is empty"),
                Some("name the program to run, e.g. \"npx\"".into()),
            ));
        }
        let program = words.remove(0);
        if let Some(args) = f.args {
            words.extend(strings.list(args, "args")?);
        }
        // VS Code's envFile: its variables first, so that `env` overrides them.
        let mut env = match f.env_file {
            None => Vec::new(),
            Some(raw) => {
                let file = self.base.join(strings.string(raw, "envFile")?);
                match std::fs::read_to_string(&file) {
                    Ok(text) => parse_env_file(&text),
                    Err(_) if disabled => Vec::new(),
                    Err(e) => {
                        return Err(self.error(
                            self.offset(raw),
                            format!("{what}: envFile {}: {e}", file.display()),
                            Some("point envFile at a file of KEY=value lines, relative to the project folder".into()),
                        ));
                    }
                }
            }
        };
        if let Some(raw) = f.env {
            for (key, value) in strings.map(raw, "env")? {
                env.retain(|(k, _)| *k != key);
                env.push((key, value));
            }
        }
        let cwd = match f.cwd {
            None => None,
            Some(raw) => {
                let cwd = strings.string(raw, "cwd")?;
                Some(self.base.join(cwd))
            }
        };
        let inherit_env = self
            .optional::<bool>(f.inherit_env, &format!("{what}: inheritEnv"))?
            .unwrap_or(false);
        let sandbox = match f.sandbox {
            None => None,
            Some(raw) => self.sandbox(raw, what, disabled)?,
        };
        Ok(Stdio {
            command: program,
            args: words,
            env,
            cwd,
            inherit_env,
            sandbox,
        })
    }

    /// `"oauth": {...}` (the keys are [`OAUTH_KEYS`]).
    fn oauth(&self, raw: &'a RawValue, strings: &Strings<'_, 'a>) -> Result<OAuth, ConfigError> {
        let what = strings.server;
        let entries: Entries<'a> = self.value(raw, &format!("{what}: oauth"))?;
        let mut oauth = OAuth::default();
        for (key, value) in entries.0 {
            match key.as_str() {
                "clientId" => oauth.client_id = Some(strings.string(value, "oauth.clientId")?),
                "clientSecret" => {
                    oauth.client_secret = Some(strings.string(value, "oauth.clientSecret")?)
                }
                "scopes" => oauth.scopes = strings.list(value, "oauth.scopes")?,
                "privateKey" => {
                    oauth.private_key = Some(strings.string(value, "oauth.privateKey")?)
                }
                "clientCredentials" => {
                    oauth.client_credentials =
                        self.value(value, &format!("{what}: oauth.clientCredentials"))?
                }
                "callbackPort" => {
                    oauth.callback_port =
                        Some(self.value(value, &format!("{what}: oauth.callbackPort"))?)
                }
                "workloadToken" => {
                    let token = strings.string(value, "oauth.workloadToken")?;
                    oauth.workload_token = Some(TokenSource::Value(token));
                }
                "workloadTokenFile" => {
                    let file = strings.string(value, "oauth.workloadTokenFile")?;
                    oauth.workload_token = Some(TokenSource::File(self.base.join(file)));
                }
                "enterprise" => oauth.enterprise = Some(self.enterprise(value, strings)?),
                "clientMetadataUrl" => {
                    let url = strings.string(value, "oauth.clientMetadataUrl")?;
                    if !starts_with_ignore_case(&url, "https://") {
                        return Err(self.error(
                            self.offset(value),
                            format!("{what}: oauth.clientMetadataUrl must be an https:// URL"),
                            None,
                        ));
                    }
                    oauth.client_metadata_url = Some(url);
                }
                other => {
                    let typo = closest(other, OAUTH_KEYS)
                        .map(|k| format!("did you mean \"{k}\"? "))
                        .unwrap_or_default();
                    return Err(self.error(
                        self.key_offset(value),
                        format!("{what}: oauth: unknown key \"{other}\""),
                        Some(format!("{typo}the keys are {}", OAUTH_KEYS.join(", "))),
                    ));
                }
            }
        }
        if oauth.client_credentials
            && (oauth.client_id.is_none()
                || (oauth.client_secret.is_none() && oauth.private_key.is_none()))
        {
            return Err(self.error(
                self.offset(raw),
                format!("{what}: oauth.clientCredentials needs oauth.clientId and oauth.clientSecret or oauth.privateKey"),
                None,
            ));
        }
        if oauth.client_secret.is_some() && oauth.client_id.is_none() {
            return Err(self.error(
                self.offset(raw),
                format!("{what}: oauth.clientSecret without oauth.clientId"),
                Some(
                    "a secret belongs to a client registered beforehand: give its clientId too"
                        .into(),
                ),
            ));
        }
        Ok(oauth)
    }

    /// `"enterprise": {"issuer", "clientId", "idToken" | "idTokenFile"}`.
    fn enterprise(
        &self,
        raw: &'a RawValue,
        strings: &Strings<'_, 'a>,
    ) -> Result<Enterprise, ConfigError> {
        let what = strings.server;
        let entries: Entries<'a> = self.value(raw, &format!("{what}: oauth.enterprise"))?;
        let (mut issuer, mut client_id, mut id_token) = (None, None, None);
        for (key, value) in entries.0 {
            match key.as_str() {
                "issuer" => issuer = Some(strings.string(value, "oauth.enterprise.issuer")?),
                "clientId" => client_id = Some(strings.string(value, "oauth.enterprise.clientId")?),
                "idToken" => {
                    let token = strings.string(value, "oauth.enterprise.idToken")?;
                    id_token = Some(TokenSource::Value(token));
                }
                "idTokenFile" => {
                    let file = strings.string(value, "oauth.enterprise.idTokenFile")?;
                    id_token = Some(TokenSource::File(self.base.join(file)));
                }
                other => {
                    return Err(self.error(
                        self.key_offset(value),
                        format!("{what}: oauth.enterprise: unknown key \"{other}\""),
                        Some("the keys are issuer, clientId, idToken and idTokenFile".into()),
                    ));
                }
            }
        }
        let (Some(issuer), Some(id_token)) = (issuer, id_token) else {
            return Err(self.error(
                self.offset(raw),
                format!(
                    "{what}: oauth.enterprise needs \"issuer\" and \"idToken\" (or \"idTokenFile\")"
                ),
                None,
            ));
        };
        Ok(Enterprise {
            issuer,
            client_id,
            id_token,
        })
    }

    fn kind(&self, raw: &'a RawValue, what: &str) -> Result<Kind, ConfigError> {
        let kind = self.value::<String>(raw, &format!("{what}: type"))?;
        match kind.as_str() {
            "stdio" | "local" => Ok(Kind::Stdio),
            "http" | "streamable-http" | "streamableHttp" | "remote" => Ok(Kind::Http),
            "sse" => Ok(Kind::Sse),
            other => Err(self.error(
                self.offset(raw),
                format!("{what}: unknown type \"{other}\""),
                Some("use \"stdio\" (a command prise starts), \"http\" (Streamable HTTP) or \"sse\" (legacy HTTP+SSE)".into()),
            )),
        }
    }

    fn mismatch(&self, what: &str, at: &RawValue, problem: &str) -> ConfigError {
        let kind: String = serde_json::from_str(at.get()).unwrap_or_default();
        self.error(
            self.offset(at),
            format!("{what}: type \"{kind}\" {problem}"),
            None,
        )
    }

    fn ignored(&mut self, field: Option<&RawValue>, what: &str, key: &str, transport: &str) {
        if let Some(raw) = field {
            let (line, column) = position(self.text, self.key_offset(raw));
            self.warnings.push(format!(
                "{}:{line}:{column}: {what}: \"{key}\" does not apply to a {transport} server and is ignored",
                self.path.display()
            ));
        }
    }

    fn timeouts(
        &mut self,
        raw: Option<&'a RawValue>,
        what: &str,
    ) -> Result<(Duration, Duration), ConfigError> {
        let Some(raw) = raw else {
            return Ok((DEFAULT_STARTUP_TIMEOUT, DEFAULT_CALL_TIMEOUT));
        };
        if raw.get().starts_with('{') {
            let entries: Entries<'a> = self.value(raw, &format!("{what}: timeout"))?;
            let (mut startup, mut call) = (DEFAULT_STARTUP_TIMEOUT, DEFAULT_CALL_TIMEOUT);
            for (key, value) in entries.0 {
                match key.as_str() {
                    "startup" => startup = self.duration(value, what, "timeout.startup")?,
                    "call" => call = self.duration(value, what, "timeout.call")?,
                    other => {
                        return Err(self.error(
                            self.key_offset(value),
                            format!("{what}: unknown timeout \"{other}\""),
                            Some("use {\"startup\": 30, \"call\": 60} (seconds), or one number for both".into()),
                        ));
                    }
                }
            }
            Ok((startup, call))
        } else {
            let both = self.duration(raw, what, "timeout")?;
            Ok((both, both))
        }
    }

    fn duration(
        &mut self,
        raw: &'a RawValue,
        what: &str,
        key: &str,
    ) -> Result<Duration, ConfigError> {
        let text = raw.get();
        let parsed = if text.starts_with('"') {
            serde_json::from_str::<String>(text)
                .ok()
                .and_then(|s| parse_duration(&s))
        } else {
            serde_json::from_str::<f64>(text).ok().and_then(seconds)
        };
        let Some(duration) = parsed else {
            return Err(self.error(
                self.offset(raw),
                format!("{what}: {key} must be a positive number of seconds or a duration such as \"500ms\", \"30s\", \"2m\""),
                None,
            ));
        };
        if !text.starts_with('"') && duration > Duration::from_secs(3600) {
            let (line, column) = position(self.text, self.offset(raw));
            self.warnings.push(format!(
                "{}:{line}:{column}: {what}: {key} is {text} seconds; if you meant milliseconds, write \"{text}ms\"",
                self.path.display()
            ));
        }
        Ok(duration)
    }

    /// A size in bytes: a number, or a string such as `"32MiB"`, `"500KB"`, `"1GB"`.
    fn size(&self, raw: &'a RawValue, what: &str, key: &str) -> Result<usize, ConfigError> {
        let text = raw.get();
        let parsed = if text.starts_with('"') {
            serde_json::from_str::<String>(text)
                .ok()
                .and_then(|s| parse_size(&s))
        } else {
            serde_json::from_str::<u64>(text).ok()
        };
        match parsed.and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n >= 1024 => Ok(n),
            _ => Err(self.error(
                self.offset(raw),
                format!("{what}: {key} must be a size of at least 1 KiB: a number of bytes, or \"32MiB\", \"500KB\", \"1GB\""),
                None,
            )),
        }
    }

    fn globs(
        &self,
        raw: Option<&'a RawValue>,
        what: &str,
        key: &str,
    ) -> Result<Option<Vec<(String, Glob)>>, ConfigError> {
        let Some(raw) = raw else { return Ok(None) };
        let items: Vec<&'a RawValue> = self.value(raw, &format!("{what}: {key}"))?;
        let mut globs = Vec::with_capacity(items.len());
        for item in items {
            let pattern: String = self.value(item, &format!("{what}: {key}"))?;
            let glob = Glob::new(&pattern).map_err(|e| {
                self.error(
                    self.offset(item),
                    format!("{what}: {key}: bad glob \"{pattern}\": {}", e.kind()),
                    None,
                )
            })?;
            globs.push((pattern, glob));
        }
        Ok(Some(globs))
    }

    fn restart(
        &self,
        raw: Option<&'a RawValue>,
        max: Option<&'a RawValue>,
        what: &str,
    ) -> Result<RestartPolicy, ConfigError> {
        let max_restarts = self
            .optional::<u32>(max, &format!("{what}: maxRestarts"))?
            .unwrap_or(DEFAULT_MAX_RESTARTS);
        let Some(raw) = raw else {
            return Ok(RestartPolicy::OnFailure { max_restarts });
        };
        match self
            .value::<String>(raw, &format!("{what}: restart"))?
            .as_str()
        {
            "never" => Ok(RestartPolicy::Never),
            "on-failure" => Ok(RestartPolicy::OnFailure { max_restarts }),
            other => Err(self.error(
                self.offset(raw),
                format!("{what}: unknown restart policy \"{other}\""),
                Some("use \"on-failure\" (the default) or \"never\"".into()),
            )),
        }
    }

    fn optional<T: Deserialize<'a>>(
        &self,
        raw: Option<&'a RawValue>,
        what: &str,
    ) -> Result<Option<T>, ConfigError> {
        raw.map(|raw| self.value(raw, what)).transpose()
    }

    /// Deserializes one raw value, placing serde's error in the file.
    fn value<T: Deserialize<'a>>(&self, raw: &'a RawValue, what: &str) -> Result<T, ConfigError> {
        serde_json::from_str(raw.get())
            .map_err(|e| self.serde_error(self.offset(raw), raw.get(), what, &e))
    }

    fn serde_error(
        &self,
        base: usize,
        slice: &str,
        what: &str,
        e: &serde_json::Error,
    ) -> ConfigError {
        // Each value is deserialized on its own, so a data error (a wrong type) concerns
        // the whole slice: point at its start rather than where serde stopped reading.
        let within = match e.classify() {
            serde_json::error::Category::Data => 0,
            _ => offset_of(slice, e.line(), e.column()),
        };
        let mut at = base + within;
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        self.error(at, format!("{what}: {message}"), None)
    }

    fn offset(&self, raw: &RawValue) -> usize {
        raw.get().as_ptr() as usize - self.text.as_ptr() as usize
    }

    /// Where the key of the entry whose value is `raw` starts, so that errors about an
    /// entry point at its name.
    fn key_offset(&self, raw: &RawValue) -> usize {
        let value = self.offset(raw);
        key_start(self.text.as_bytes(), value).unwrap_or(value)
    }

    fn error(&self, offset: usize, message: String, hint: Option<String>) -> ConfigError {
        let (line, column) = position(self.text, offset);
        ConfigError::Invalid {
            path: self.path.to_owned(),
            line,
            column,
            message,
            hint,
        }
    }
}

/// Reads string values of one server, expanding `${VAR}`.
struct Strings<'p, 'a> {
    parser: &'p Parser<'a>,
    server: &'p str,
    /// Keep unexpandable references as written instead of failing.
    lenient: bool,
}

impl<'a> Strings<'_, 'a> {
    fn string(&self, raw: &'a RawValue, key: &str) -> Result<String, ConfigError> {
        let value: String = self.parser.value(raw, &format!("{}: {key}", self.server))?;
        match expand(&value, self.parser.env) {
            Ok(expanded) => Ok(expanded),
            Err(_) if self.lenient => Ok(value),
            Err(e) => Err(self.expand_error(raw, key, e)),
        }
    }

    fn list(&self, raw: &'a RawValue, key: &str) -> Result<Vec<String>, ConfigError> {
        let items: Vec<&'a RawValue> =
            self.parser.value(raw, &format!("{}: {key}", self.server))?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| self.string(item, &format!("{key}[{i}]")))
            .collect()
    }

    fn map(&self, raw: &'a RawValue, key: &str) -> Result<Vec<(String, String)>, ConfigError> {
        let entries: Entries<'a> = self.parser.value(raw, &format!("{}: {key}", self.server))?;
        let mut pairs: Vec<(String, String)> = Vec::with_capacity(entries.0.len());
        for (name, value) in entries.0 {
            if pairs.iter().any(|(seen, _)| *seen == name) {
                return Err(self.parser.error(
                    self.parser.key_offset(value),
                    format!("{}: duplicate key \"{name}\" in {key}", self.server),
                    None,
                ));
            }
            let value = self.string(value, &format!("{key}.{name}"))?;
            pairs.push((name, value));
        }
        Ok(pairs)
    }

    fn expand_error(&self, raw: &RawValue, key: &str, e: ExpandError) -> ConfigError {
        let server = self.server;
        let (message, hint) = match e {
            ExpandError::Unset(var) => (
                format!("{server}: {key} uses ${{{var}}}, which is not set"),
                format!("set {var} in the environment, or give a default: ${{{var}:-value}}"),
            ),
            ExpandError::Malformed(text) => (
                format!("{server}: {key}: malformed variable reference \"{text}\""),
                "write ${NAME} or ${NAME:-default}".to_owned(),
            ),
            ExpandError::Input(id) => (
                format!(
                    "{server}: {key}: ${{input:{id}}} asks VS Code to prompt for a value, which prise cannot do"
                ),
                "use ${NAME} and set NAME in the environment".to_owned(),
            ),
        };
        self.parser
            .error(self.parser.offset(raw), message, Some(hint))
    }
}

impl ToolFilter {
    fn new(
        allowed: Option<Vec<(String, Glob)>>,
        excluded: Vec<(String, Glob)>,
    ) -> Result<ToolFilter, (String, globset::Error)> {
        fn set(globs: &[(String, Glob)]) -> Result<GlobSet, (String, globset::Error)> {
            let mut builder = GlobSetBuilder::new();
            for (_, glob) in globs {
                builder.add(glob.clone());
            }
            builder.build().map_err(|e| {
                (
                    globs
                        .iter()
                        .map(|(p, _)| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    e,
                )
            })
        }
        let names =
            |globs: &[(String, Glob)]| globs.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        Ok(ToolFilter {
            allowed_set: allowed.as_deref().map(set).transpose()?,
            allowed: allowed.as_deref().map(names),
            excluded_set: set(&excluded)?,
            excluded: names(&excluded),
        })
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && value > 0.0 && value < 1e9).then(|| Duration::from_secs_f64(value))
}

/// `12.5kb` as (12.5, "kb"): a number and the unit after it.
fn number_and_unit(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    Some((number.parse().ok()?, unit.trim()))
}

/// `500ms`, `30s`, `2m`, `1h`, or a bare number of seconds.
fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = number_and_unit(text)?;
    let scale = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    seconds(number * scale)
}

/// The variables of a `.env` file: `KEY=value` lines, `export ` allowed before them,
/// `#` comments, values in single quotes kept as written, in double quotes with `\n`
/// and `\"` read as escapes. No `${...}` inside: the file is data.
fn parse_env_file(text: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let value = value.trim();
        let value = if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.split_once('\'')) {
            inner.0.to_owned()
        } else if let Some(inner) = value.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => out.push('\n'),
                        Some(other) => out.push(other),
                        None => {}
                    },
                    c => out.push(c),
                }
            }
            out
        } else {
            // A bare value ends at a ` #` comment.
            value.split(" #").next().unwrap_or("").trim_end().to_owned()
        };
        pairs.retain(|(k, _)| k != key);
        pairs.push((key.to_owned(), value));
    }
    pairs
}

/// `32MiB`, `500KB`, `1GB`, `2048` (bytes): decimal and binary units alike.
fn parse_size(text: &str) -> Option<u64> {
    let (number, unit) = number_and_unit(text)?;
    let scale: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = number * scale;
    (0.0..1e15).contains(&bytes).then_some(bytes as u64)
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The byte offset in `slice` of serde_json's 1-based line and byte column.
fn offset_of(slice: &str, line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        slice
            .match_indices('\n')
            .nth(line - 2)
            .map_or(slice.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(slice.len())
}

/// Walks back from a value over `:` to the opening quote of its key.
pub(crate) fn key_start(bytes: &[u8], value: usize) -> Option<usize> {
    let mut i = value;
    let skip_space = |i: &mut usize| {
        while *i > 0 && bytes[*i - 1].is_ascii_whitespace() {
            *i -= 1;
        }
    };
    skip_space(&mut i);
    (i > 0 && bytes[i - 1] == b':').then_some(())?;
    i -= 1;
    skip_space(&mut i);
    (i > 0 && bytes[i - 1] == b'"').then_some(())?;
    i -= 1;
    while i > 0 {
        i -= 1;
        if bytes[i] == b'"' {
            let backslashes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
            if backslashes % 2 == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("-3s"), None);
        assert_eq!(parse_duration("3 days"), None);
    }

    #[test]
    fn env_files() {
        let text = "# comment\nA=1\nexport B = two words # note\nC='$kept #as is'\nD=\"x\\ny\\\"z\"\nbad line\nA=again\n";
        assert_eq!(
            parse_env_file(text),
            [
                ("B".to_owned(), "two words".to_owned()),
                ("C".to_owned(), "$kept #as is".to_owned()),
                ("D".to_owned(), "x\ny\"z".to_owned()),
                ("A".to_owned(), "again".to_owned()),
            ]
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32MiB"), Some(32 << 20));
        assert_eq!(parse_size("500 KB"), Some(500_000));
        assert_eq!(parse_size("1gib"), Some(1 << 30));
        assert_eq!(parse_size("2048"), Some(2048));
        assert_eq!(parse_size("12 parsecs"), None);
    }

    #[test]
    fn keys_are_found_before_their_values() {
        let text = br#"{ "a\"b" :  1 }"#;
        let value = text.iter().position(|&b| b == b'1').unwrap();
        assert_eq!(key_start(text, value), Some(2));
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(position("ab\ncé d", 7), (2, 4));
        assert_eq!(position("x", 0), (1, 1));
    }
}
