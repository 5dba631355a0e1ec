//! The configuration model: what a parsed file says, with variables expanded.

use std::path::PathBuf;
use std::time::Duration;

use globset::GlobSet;
use serde::Serialize;

use crate::secret::{MASK, looks_secret, redact_args, redact_url};

/// How long a server may take to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request to a server may take, unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest message a server may send, unless configured: 16 MiB, as rmcp's.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;
/// How many times in a row a crashed server is restarted under `on-failure`.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// A configuration file, read and checked.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// The file it came from (the first, when several were merged).
    pub path: PathBuf,
    /// Which family of tools writes files of this shape (the first file's).
    pub format: Format,
    /// Every file read, in order of precedence.
    pub files: Vec<PathBuf>,
    /// The servers, in the order of the file.
    pub servers: Vec<Server>,
    /// Which tool calls the agent may make without asking.
    pub approval: Approval,
    /// Whether a file had an `"approval"` section (else `approval` is the default).
    #[serde(skip)]
    pub sets_approval: bool,
    /// The model the agent talks to and the agent's limits (`"model"`), each unset
    /// field left to flags and defaults.
    pub model: ModelSettings,
    /// Folders offered as roots to every server without roots of its own (`"roots"`).
    pub roots: Vec<PathBuf>,
    /// Named views of the servers for the gateway's clients (`"profiles"`), by name.
    pub profiles: std::collections::BTreeMap<String, Profile>,
    /// What merging files decided (a server of a later file hidden by one of the same
    /// name in an earlier one), for `prise config` to show.
    pub notes: Vec<String>,
    /// Things in the file that prise accepted but ignores, for the user to see.
    pub warnings: Vec<String>,
}

impl Config {
    /// The servers whose tools are always sent in full (`"alwaysLoad": true`).
    pub fn always_loaded(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.always_load)
            .map(|s| s.name.clone())
            .collect()
    }
}

/// What one group of the gateway's clients sees (`"profiles": {"NAME": {...}}`): some
/// servers, and of their tools and prompts those a glob names.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Profile {
    /// The servers shown; every one when `None`.
    pub servers: Option<Vec<String>>,
    /// Globs on exposed names (`server__tool`, `server__prompt`) of the tools and
    /// prompts shown; every one of the servers shown when empty.
    pub tools: Vec<String>,
    #[serde(skip)]
    pub(crate) matchers: Vec<globset::GlobMatcher>,
}

impl Profile {
    /// Whether the profile shows `server`.
    pub fn shows_server(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|servers| servers.iter().any(|s| s == server))
    }

    /// Whether it shows the tool or prompt exposed as `exposed` of `server`.
    pub fn shows(&self, server: &str, exposed: &str) -> bool {
        self.shows_server(server)
            && (self.matchers.is_empty() || self.matchers.iter().any(|m| m.is_match(exposed)))
    }
}

/// The two shapes of MCP configuration files in the wild.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Format {
    /// `{"mcpServers": {...}}`: Claude Desktop, Claude Code, Cursor, mcphost.
    McpServers,
    /// `{"servers": {...}}`: VS Code's `.vscode/mcp.json`.
    VsCode,
}

/// One MCP server as configured.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    /// The name under which its tools are exposed (`name__tool`); `[A-Za-z0-9_-]+`.
    pub name: String,
    /// The file that defines it (`--with` for a server given on the command line).
    pub file: PathBuf,
    /// How to reach it.
    pub transport: Transport,
    /// A disabled server is kept in the configuration but never started.
    pub disabled: bool,
    /// Limit for starting the server and listing what it offers.
    #[serde(serialize_with = "seconds")]
    pub startup_timeout: Duration,
    /// Limit for each request, reset by progress notifications.
    #[serde(serialize_with = "seconds")]
    pub call_timeout: Duration,
    /// Which of its tools are shown to the model.
    pub tools: ToolFilter,
    /// What to do when a stdio server exits unexpectedly.
    pub restart: RestartPolicy,
    /// Which protocol era to speak.
    pub protocol: Protocol,
    /// The largest message (one JSON-RPC line over stdio, one response over HTTP)
    /// accepted from the server, in bytes.
    pub max_message_size: usize,
    /// Folders offered to the server as MCP roots: its own `"roots"`, else the file's
    /// top-level `"roots"`; empty offers none (the server keeps what its arguments
    /// give it).
    pub roots: Vec<PathBuf>,
    /// What a tool definition that differs from its pin does: its own `"pinning"`,
    /// else the file's top-level one, else strict.
    pub pinning: Pinning,
    /// Its tools are sent to the model in full even when tool search is on
    /// (`"alwaysLoad": true`).
    pub always_load: bool,
}

/// How to reach a server.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin and stdout.
    Stdio(Stdio),
    /// Streamable HTTP.
    Http(Remote),
    /// The legacy HTTP+SSE transport (GET an event stream, POST to its endpoint).
    Sse(Remote),
}

impl Transport {
    /// The transport's name as written in configuration files.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio(_) => "stdio",
            Transport::Http(_) => "http",
            Transport::Sse(_) => "sse",
        }
    }
}

/// A server run as a child process.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stdio {
    /// The program to run, looked up in `PATH` when it has no slash.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, in file order, on top of the minimal environment.
    #[serde(serialize_with = "pairs")]
    pub env: Vec<(String, String)>,
    /// Its working directory; relative paths in the file are resolved against the
    /// file's directory.
    pub cwd: Option<PathBuf>,
    /// Pass prise's whole environment instead of the minimal one.
    pub inherit_env: bool,
    /// Run it in a sandbox (`"sandbox": true` or an object); `None` runs it with the
    /// person's full rights.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
}

/// What a stdio server in a sandbox may reach beyond the defaults: reading anything but
/// secrets, writing its `cwd`, the folders in its arguments and a private temporary
/// folder, and no network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sandbox {
    /// More paths it may write (`"allowWrite"`).
    pub allow_write: Vec<PathBuf>,
    /// More paths it must not read (`"denyRead"`).
    pub deny_read: Vec<PathBuf>,
    /// Paths of the built-in secrets list it may read after all (`"allowRead"`).
    pub allow_read: Vec<PathBuf>,
    /// Its network (`"allowNetwork"`).
    pub allow_network: AllowNetwork,
    /// Whether it may connect to Unix sockets by path (`"allowUnixSockets"`).
    pub allow_unix_sockets: bool,
}

/// `"allowNetwork"`: `false` (the default), `true`, or a list of `"host:port"`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowNetwork {
    /// No network at all.
    #[default]
    None,
    /// Any connection.
    All,
    /// TCP to these hosts and ports; the kernel enforces the ports (see
    /// docs/security.md).
    Only(Vec<(String, u16)>),
}

/// A server reached over HTTP.
#[derive(Debug, Clone, Serialize)]
pub struct Remote {
    /// Its endpoint, `http://` or `https://`.
    pub url: String,
    /// Headers sent with every request, in file order.
    #[serde(serialize_with = "pairs")]
    pub headers: Vec<(String, String)>,
    /// How to sign in to it, when it needs OAuth (`"oauth"`); without it prise
    /// registers itself with the authorization server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuth>,
}

impl Remote {
    /// Whether an `Authorization` header is configured: the person's own token, which
    /// prise sends as it is and never replaces with a sign-in of its own.
    pub fn has_own_token(&self) -> bool {
        self.headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    }

    /// Whether it signs in with no person (see [`OAuth::signs_in_by_itself`]).
    pub fn signs_in_by_itself(&self) -> bool {
        self.oauth.as_ref().is_some_and(OAuth::signs_in_by_itself)
    }
}

/// A server's `"oauth"` settings: a client registered beforehand, or a Client ID
/// Metadata Document, and what to ask for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret, for confidential clients.
    pub client_secret: Option<String>,
    /// The scopes to ask for (else those the server names).
    pub scopes: Vec<String>,
    /// The port of the loopback address the browser is sent back to (else a free
    /// one; some pre-registered clients allow one redirect URI only).
    pub callback_port: Option<u16>,
    /// An HTTPS URL of a Client ID Metadata Document describing prise, used as the
    /// client id where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// `true`: sign in as a machine, with the client's own credentials (OAuth's
    /// client credentials grant; no person, no browser): `clientSecret`, or
    /// `privateKey` for `private_key_jwt`.
    pub client_credentials: bool,
    /// A PKCS#8 PEM private key (P-256) that signs the client's assertions
    /// (`private_key_jwt`, RFC 7523), usually `${VAR}`.
    pub private_key: Option<String>,
    /// A token the platform gives this workload (a CI job's or a cluster's OIDC
    /// token), traded for an access token with the JWT bearer grant (RFC 7523,
    /// workload identity federation): `"workloadToken"` or `"workloadTokenFile"`.
    pub workload_token: Option<TokenSource>,
    /// Enterprise-managed authorization (SEP-990): an ID token from the company's
    /// identity provider, exchanged there for an identity assertion grant that the
    /// server's authorization server takes instead of a sign-in.
    pub enterprise: Option<Enterprise>,
}

impl OAuth {
    /// Whether it signs in with no person: the client credentials grant, a workload
    /// token, or an enterprise identity provider.
    pub fn signs_in_by_itself(&self) -> bool {
        self.client_credentials || self.workload_token.is_some() || self.enterprise.is_some()
    }
}

/// Where a token comes from: the configuration (usually `${VAR}`), or a file read at
/// each sign-in (such files are rewritten as the tokens in them rotate).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenSource {
    /// The token itself.
    Value(String),
    /// A file holding it.
    File(PathBuf),
}

impl TokenSource {
    /// The token, read now.
    pub fn read(&self) -> Result<String, String> {
        match self {
            TokenSource::Value(token) => Ok(token.trim().to_owned()),
            TokenSource::File(path) => std::fs::read_to_string(path)
                .map(|t| t.trim().to_owned())
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display())),
        }
    }
}

/// `"oauth": {"enterprise": {...}}`: the company's identity provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enterprise {
    /// The identity provider's issuer URL (its metadata says where to exchange).
    pub issuer: String,
    /// prise's client at the identity provider.
    pub client_id: Option<String>,
    /// The person's ID token from that provider: `"idToken"` or `"idTokenFile"`.
    pub id_token: TokenSource,
}

/// What happens to a tool whose definition is not the one pinned at first sight (or
/// that a pinned server adds later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pinning {
    /// It is withheld (from the model, the gateway and `prise call`) until trusted.
    #[default]
    Strict,
    /// It is used, with a warning.
    Warn,
    /// Nothing is pinned or compared.
    Off,
}

/// Which protocol era to speak to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Find out per server.
    #[default]
    Auto,
    /// The dated versions up to 2025-11-25, through `initialize`.
    Legacy,
    /// The stateless 2026-07-28 revision, through `server/discover`.
    Modern,
}

/// What to do when a stdio server exits on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum RestartPolicy {
    /// Leave it stopped and report it.
    Never,
    /// Restart it with exponential backoff, at most `max_restarts` times in a row.
    OnFailure {
        /// Consecutive restarts allowed before giving up.
        #[serde(rename = "maxRestarts")]
        max_restarts: u32,
    },
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy::OnFailure {
            max_restarts: DEFAULT_MAX_RESTARTS,
        }
    }
}

/// Per-server tool selection, from `allowedTools` and `excludedTools` globs.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFilter {
    /// Globs a tool must match to be shown; `None` shows every tool.
    pub allowed: Option<Vec<String>>,
    /// Globs that hide a tool even when it is allowed.
    pub excluded: Vec<String>,
    #[serde(skip)]
    pub(crate) allowed_set: Option<GlobSet>,
    #[serde(skip)]
    pub(crate) excluded_set: GlobSet,
}

impl ToolFilter {
    /// Whether a tool (by its name on the server, not the namespaced one) is shown.
    pub fn permits(&self, tool: &str) -> bool {
        self.allowed_set
            .as_ref()
            .is_none_or(|set| set.is_match(tool))
            && !self.excluded_set.is_match(tool)
    }
}

impl Server {
    /// A copy fit to show a person: header values, secret-looking environment values
    /// and arguments, and URL credentials replaced by [`MASK`].
    pub fn redacted(&self) -> Server {
        let mut server = self.clone();
        match &mut server.transport {
            Transport::Stdio(stdio) => {
                for (key, value) in &mut stdio.env {
                    if looks_secret(key) {
                        *value = MASK.to_owned();
                    }
                }
                redact_args(&mut stdio.args);
            }
            Transport::Http(remote) | Transport::Sse(remote) => {
                remote.url = redact_url(&remote.url);
                for (_, value) in &mut remote.headers {
                    *value = MASK.to_owned();
                }
                if let Some(oauth) = remote.oauth.as_mut() {
                    for secret in [&mut oauth.client_secret, &mut oauth.private_key]
                        .into_iter()
                        .flatten()
                    {
                        *secret = MASK.to_owned();
                    }
                    let tokens = [
                        oauth.workload_token.as_mut(),
                        oauth.enterprise.as_mut().map(|e| &mut e.id_token),
                    ];
                    for token in tokens.into_iter().flatten() {
                        if let TokenSource::Value(value) = token {
                            *value = MASK.to_owned();
                        }
                    }
                }
            }
        }
        server
    }
}

fn seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

fn pairs<S: serde::Serializer>(
    pairs: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// What to do when the model calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user (in a terminal; elsewhere it is a refusal unless `--yes`).
    Ask,
    /// Refuse it; the model is told.
    Deny,
}

/// The approval policy: per exposed tool name (`server__tool`) globs, first match wins.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// `(glob, decision)` in file order.
    pub rules: Vec<(String, Decision)>,
    /// For tools no rule matches.
    pub default: Decision,
    /// Allow tools that declare `readOnlyHint: true` without asking (unless a rule says
    /// otherwise).
    pub allow_read_only: bool,
    #[serde(skip)]
    pub(crate) matchers: Vec<globset::GlobMatcher>,
}

impl Default for Approval {
    /// Ask for everything but read-only tools.
    fn default() -> Self {
        Approval {
            rules: Vec::new(),
            default: Decision::Ask,
            allow_read_only: true,
            matchers: Vec::new(),
        }
    }
}

impl Approval {
    /// The decision for a tool, before any question is asked.
    pub fn decide(&self, exposed: &str, read_only: bool) -> Decision {
        if let Some(i) = self.matchers.iter().position(|m| m.is_match(exposed)) {
            return self.rules[i].1;
        }
        if read_only && self.allow_read_only {
            Decision::Allow
        } else {
            self.default
        }
    }
}

/// The `"model"` section: which model the agent asks, where, and the agent's limits.
/// A field is `None` when the file does not set it; command-line flags win over it,
/// and it wins over the environment and defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// `provider:model`, e.g. `ollama:qwen2.5`.
    pub name: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// The provider's API key (usually `${OPENAI_API_KEY}` or the like).
    pub api_key: Option<String>,
    /// Model turns allowed before giving up.
    pub max_turns: Option<usize>,
    /// The system prompt, replacing prise's.
    pub system_prompt: Option<String>,
    /// Characters of one tool result the model reads before the rest is cut.
    pub max_tool_output: Option<usize>,
    /// Whether tool calls written as JSON text count as calls.
    pub tool_call_recovery: Option<bool>,
    /// Whether the model accepts images (tools' screenshots and charts).
    pub images: Option<bool>,
    /// The most tokens one reply may have.
    pub max_output_tokens: Option<usize>,
    /// How long the endpoint may stay silent (before or during a reply) before the
    /// request is given up and tried again.
    #[serde(serialize_with = "optional_seconds")]
    pub idle_timeout: Option<Duration>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling (`top_p`).
    pub top_p: Option<f64>,
    /// Sampling seed, for repeatable runs where the server supports it.
    pub seed: Option<u64>,
    /// `auto`, `required` or `none`.
    pub tool_choice: Option<String>,
    /// How many times a model whose tool call could not be read is asked again.
    pub tool_call_retries: Option<usize>,
    /// Whether the model is sent a search tool instead of every tool's definition.
    pub tool_search: Option<ToolSearch>,
}

/// `"toolSearch"`: whether the model gets every tool's definition, or a tool to search
/// them (and the tools it found, used, or that are always loaded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearch {
    /// Search when the definitions would take much of the context (the default).
    #[default]
    Auto,
    /// Always search.
    Always,
    /// Never: every definition in every request.
    Never,
}

impl std::str::FromStr for ToolSearch {
    type Err = String;

    fn from_str(text: &str) -> Result<ToolSearch, String> {
        match text {
            "auto" => Ok(ToolSearch::Auto),
            "always" => Ok(ToolSearch::Always),
            "never" => Ok(ToolSearch::Never),
            other => Err(format!(
                "unknown tool search \"{other}\": use \"auto\" (when the tools' definitions are large), \"always\" or \"never\""
            )),
        }
    }
}

fn optional_seconds<S: serde::Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => seconds(duration, serializer),
        None => serializer.serialize_none(),
    }
}

impl ModelSettings {
    /// A copy fit to show a person: the key masked.
    pub fn redacted(&self) -> ModelSettings {
        ModelSettings {
            api_key: self.api_key.as_ref().map(|_| MASK.to_owned()),
            base_url: self.base_url.as_deref().map(redact_url),
            ..self.clone()
        }
    }
}
