//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// prise mounts Model Context Protocol servers, lets you inspect and call what they
/// offer, and runs a language model agent over them.
///
/// With no --config, prise reads the project's ./.mcp.json, ./.vscode/mcp.json and
/// ./.cursor/mcp.json, and the first of $XDG_CONFIG_HOME/prise/mcp.json,
/// ~/.config/prise/mcp.json and ~/.mcp.json, merged (the project's first).
#[derive(Debug, Parser)]
#[command(
    name = "prise",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub servers: ServerArgs,

    /// Log what prise does to stderr (-v: debug, -vv: trace); RUST_LOG also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// Where the servers come from, for every command that mounts them.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Read servers from this file (mcpServers or VS Code servers format), or from this
    /// JSON text when it starts with `{` (as Claude Code's --mcp-config).
    #[arg(
        short,
        long,
        global = true,
        value_name = "FILE|JSON",
        env = "PRISE_CONFIG"
    )]
    pub config: Option<String>,

    /// Also mount this server for this run: a command line ('uvx mcp-server-time') or
    /// a URL (http://127.0.0.1:8000/mcp; one ending in /sse is legacy SSE); NAME=...
    /// names it. Repeat for several.
    #[arg(long = "with", global = true, value_name = "[NAME=]COMMAND|URL")]
    pub with: Vec<String>,

    /// Offer this folder to every server as a root (repeat for several), instead of
    /// the configuration's "roots"; without either, no roots are offered and servers
    /// keep the folders their arguments give them.
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Vec<PathBuf>,
}

/// What prise is asked to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show which configuration file is used and the servers it defines, secrets masked.
    Config(Json),
    /// Start every configured server and show its state, protocol and what it offers.
    Servers(Json),
    /// List tools as the model sees them (server__tool), or show one in detail.
    Tools(ToolsArgs),
    /// Screen every tool's definition for text aimed at the model: hidden characters,
    /// instructions, secret files, shadowing, ways out for data (offline).
    Scan(ScanArgs),
    /// Show how a withheld tool changed since it was pinned, and accept its new
    /// definition.
    Trust(TrustArgs),
    /// Call one tool and print its result.
    Call(CallArgs),
    /// List resources and resource templates.
    Resources(ResourcesArgs),
    /// Read one resource by URI and print its contents.
    Read(ReadArgs),
    /// List prompts.
    Prompts(PromptsArgs),
    /// Get one prompt, filling its arguments.
    Prompt(PromptArgs),
    /// Run the agent once on a prompt and print the final answer.
    Run(RunArgs),
    /// Talk with the agent interactively.
    Chat(ChatArgs),
    /// Open a local web page: servers, tools, resources, prompts, a live trace, a chat
    /// with the agent, and MCP Apps.
    Ui(UiArgs),
    /// List saved sessions (chat --resume ID, run --session ID), the latest first.
    Sessions(Json),
    /// List the models the model endpoint serves (Ollama, llama.cpp, LM Studio, vLLM,
    /// OpenAI, Anthropic, Gemini).
    Models(ModelsArgs),
    /// Add a server to a configuration file (the project's .mcp.json unless --scope
    /// user or --config FILE).
    Add(AddArgs),
    /// Remove a server from a configuration file.
    Remove(RemoveArgs),
    /// Copy the servers of Claude Desktop, Cursor or VS Code into a configuration file.
    Import(ImportArgs),
    /// Sign in to remote servers that ask for it (OAuth), see sign-ins, sign out.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Serve a built-in MCP server.
    #[command(subcommand)]
    Serve(ServeCommand),
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

/// Which configuration file `add`, `remove` and `import` change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The project's ./.mcp.json.
    Project,
    /// prise's user file ($XDG_CONFIG_HOME/prise/mcp.json or ~/.config/prise/mcp.json,
    /// or ~/.mcp.json when that is the one in use).
    User,
}

/// Arguments of `prise add`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  prise add time -- uvx mcp-server-time --local-timezone UTC
  prise add fs --env LOG_LEVEL=warn -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  prise add github https://api.githubcopilot.com/mcp/ --header 'Authorization=Bearer ${GITHUB_TOKEN}'
  prise add legacy http://127.0.0.1:3001/sse --transport sse --scope user")]
pub struct AddArgs {
    /// The server's name (letters, digits, '_' and '-'); it prefixes its tools.
    pub name: String,
    /// The server's URL (http:// or https://), for a remote server.
    #[arg(required_unless_present = "command", conflicts_with = "command")]
    pub url: Option<String>,
    /// After `--`: the command that starts a local server, and its arguments.
    #[arg(last = true, value_name = "COMMAND ARGS")]
    pub command: Vec<String>,
    /// An environment variable for a command, KEY=VALUE (repeat for several).
    #[arg(short, long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Run the command in a sandbox: no reading secrets, no writes outside its
    /// folders, no network (`"sandbox": true`; widen it in the file).
    #[arg(long)]
    pub sandbox: bool,
    /// A header for a URL, KEY=VALUE (repeat for several); `${VAR}` is expanded when
    /// prise connects, not now.
    #[arg(long, value_name = "KEY=VALUE")]
    pub header: Vec<String>,
    /// The HTTP transport of a URL.
    #[arg(short, long, value_enum, default_value = "http")]
    pub transport: RemoteTransport,
    /// Which file to change.
    #[arg(short, long, value_enum, default_value = "project")]
    pub scope: Scope,
    /// Replace a server of the same name.
    #[arg(short, long)]
    pub force: bool,
}

/// The HTTP transports a URL can be reached over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RemoteTransport {
    /// Streamable HTTP.
    Http,
    /// The legacy HTTP+SSE transport.
    Sse,
}

/// Arguments of `prise remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The server's name.
    pub name: String,
    /// Which file to change.
    #[arg(short, long, value_enum, default_value = "project")]
    pub scope: Scope,
}

/// Arguments of `prise import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The app whose servers to copy.
    #[arg(value_enum)]
    pub app: ImportApp,
    /// Which file to write them to.
    #[arg(short, long, value_enum, default_value = "project")]
    pub scope: Scope,
    /// Replace servers of the same names instead of skipping them.
    #[arg(short, long)]
    pub force: bool,
}

/// Apps `prise import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportApp {
    /// Claude Desktop (claude_desktop_config.json).
    ClaudeDesktop,
    /// Cursor (~/.cursor/mcp.json).
    Cursor,
    /// VS Code (the user's mcp.json).
    Vscode,
}

/// A `--json` switch for commands whose output scripts read.
#[derive(Debug, Args)]
pub struct Json {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool, as `server__tool`.
    pub tool: String,
    /// Arguments as a JSON object, or `-` to read them from stdin.
    #[arg(default_value = "{}")]
    pub arguments: String,
    /// Print the whole result as JSON instead of its text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise tools`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  prise tools --search \"open a ticket for this bug\"   # the 10 best, with scores
  prise tools github --search \"list pull requests\" --limit 3 --json")]
pub struct ToolsArgs {
    /// Only this server's tools; or SERVER__TOOL: that tool in detail (parameters,
    /// annotations, output schema).
    #[arg(value_name = "SERVER|SERVER__TOOL")]
    pub target: Option<String>,
    /// Print JSON: each tool with its server's definition (input schema included); for
    /// one tool, also what the model is sent (its name and schema for the provider).
    #[arg(long)]
    pub json: bool,
    /// Only the tools that fit this task, best first (words matched on names, titles,
    /// descriptions, parameters and servers; offline).
    #[arg(long, value_name = "QUERY")]
    pub search: Option<String>,
    /// How many tools --search shows.
    #[arg(long, value_name = "K", default_value_t = 10, requires = "search")]
    pub limit: usize,
    /// How many tokens each tool's definition takes in a request to the model, and in
    /// all (estimated; see docs/agent.md).
    #[arg(long, conflicts_with = "search")]
    pub tokens: bool,
}

/// Arguments of `prise scan`.
#[derive(Debug, Args)]
#[command(after_help = "Exits 1 when any tool has a finding. --json prints \
[{\"tool\": \"server__tool\", \"pin\": \"pinned\", \"findings\": [{\"kind\": ..., \"detail\": ...}]}], \
with an empty list for a clean tool; pin is pinned, changed or added (both withheld), or off.")]
pub struct ScanArgs {
    /// Only this server's tools (each is still compared with every other server's).
    pub server: Option<String>,
    /// Print JSON: each tool with its findings.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise trust`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  prise trust github                  # each withheld tool, prompt, template of github: what changed; accept it? [y/N]
  prise trust github create_issue --yes   # accept without asking (scripts)")]
pub struct TrustArgs {
    /// The server.
    pub server: String,
    /// Only this tool or prompt (as the server names it), or resource template (its
    /// URI template).
    #[arg(value_name = "NAME")]
    pub tool: Option<String>,
    /// Accept without asking.
    #[arg(long)]
    pub yes: bool,
}

/// Arguments of `prise resources`.
#[derive(Debug, Args)]
pub struct ResourcesArgs {
    /// Only this server's resources and templates.
    pub server: Option<String>,
    /// Print JSON: each resource or template as its server describes it, with its
    /// server's name.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise prompts`.
#[derive(Debug, Args)]
pub struct PromptsArgs {
    /// Only this server's prompts.
    pub server: Option<String>,
    /// Print JSON: each prompt as its server describes it (arguments included), with
    /// its exposed name.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The resource URI, e.g. `docs://index.md`.
    pub uri: String,
    /// The server to ask, when no server lists the URI and it fits no single server's
    /// template (a template's URI needs no --server).
    #[arg(long)]
    pub server: Option<String>,
    /// Write the contents to FILE as they are (binary contents decoded: images,
    /// archives) instead of printing them.
    #[arg(short, long, value_name = "FILE", conflicts_with = "json")]
    pub output: Option<std::path::PathBuf>,
    /// Print the whole result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise prompt`.
#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The prompt, as `server__prompt`.
    pub name: String,
    /// Its arguments: name=value, or values in the order the prompt declares them; a
    /// prompt with one argument takes all the words.
    pub arguments: Vec<String>,
    /// Print the whole result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt; read from stdin when absent.
    #[arg(short, long)]
    pub prompt: Option<String>,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Continue (or start) the saved session ID, and save this exchange to it.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// text: the answer; json: the answer with turns, tool calls and token usage;
    /// stream-json: one JSON event per line as the run goes, then the answer.
    #[arg(long, value_enum, default_value = "text")]
    pub output: Output,
}

/// Arguments of `prise chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Continue a saved session: the one named, or the latest.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
}

/// Arguments of `prise ui`.
#[derive(Debug, Args)]
#[command(
    after_help = "The page's URL, with a token for this run, is printed on stderr; \
only requests that carry it are served."
)]
pub struct UiArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The port to serve on (0: any free one).
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub port: u16,
    /// Serve on this address instead of 127.0.0.1 (another machine can then reach the
    /// page, with the token).
    #[arg(long, value_name = "ADDRESS")]
    pub listen: Option<String>,
    /// Do not open the page in the browser.
    #[arg(long)]
    pub no_open: bool,
}

/// Which model, and where it is served.
#[derive(Debug, Args)]
pub struct WhichModel {
    /// The model, as provider:model (ollama:qwen2.5, openai:gpt-4o-mini,
    /// anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash, openai-compatible:NAME with
    /// --base-url) [default: the config's "model", else
    /// ollama:qwen2.5].
    #[arg(short, long, env = "PRISE_MODEL")]
    pub model: Option<String>,
    /// The provider's base URL (e.g. http://127.0.0.1:8000/v1).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The API key (better: OPENAI_API_KEY or ANTHROPIC_API_KEY).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
}

/// Arguments of `prise models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(flatten)]
    pub which: WhichModel,
    /// Print JSON: the names, as an array.
    #[arg(long)]
    pub json: bool,
}

/// The model and the agent's limits, for `run` and `chat`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub which: WhichModel,
    /// Model turns allowed before giving up [default: the config's "maxTurns", else 20].
    #[arg(long)]
    pub max_turns: Option<usize>,
    /// Allow the tool calls the approval policy would ask about (it still denies what
    /// it denies).
    #[arg(short, long)]
    pub yes: bool,
    /// Sampling temperature [default: the config's "temperature", else 0.2 for local
    /// models (ollama, openai-compatible) and the provider's own for hosted ones].
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,
    /// Nucleus sampling (top_p) [default: the config's "topP", else the provider's].
    #[arg(long, value_name = "P")]
    pub top_p: Option<f64>,
    /// Sampling seed, for repeatable runs where the server supports it.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Whether the model must call a tool (required), may (auto) or must not (none).
    #[arg(long, value_name = "CHOICE", value_parser = ["auto", "required", "none"])]
    pub tool_choice: Option<String>,
    /// Send the model a tool to search the tools instead of every definition: auto
    /// (when they would take over 10,000 tokens), always or never [default: the
    /// config's "toolSearch", else auto].
    #[arg(long, value_name = "WHEN", value_parser = parse_tool_search)]
    pub tool_search: Option<prise_config::ToolSearch>,
}

fn parse_tool_search(text: &str) -> Result<prise_config::ToolSearch, String> {
    text.parse()
}

impl AgentArgs {
    /// What these flags say about the model, for `prise_agent::configured`.
    pub fn model_choice(&self) -> prise_agent::configured::ModelChoice {
        prise_agent::configured::ModelChoice {
            temperature: self.temperature,
            top_p: self.top_p,
            seed: self.seed,
            tool_choice: self.tool_choice.as_deref().and_then(|c| c.parse().ok()),
            ..self.which.model_choice()
        }
    }
}

impl WhichModel {
    /// The model and endpoint these flags name.
    pub fn model_choice(&self) -> prise_agent::configured::ModelChoice {
        prise_agent::configured::ModelChoice {
            name: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            ..Default::default()
        }
    }
}

/// How `prise run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The final answer.
    Text,
    /// One JSON object at the end.
    Json,
    /// JSON lines as events happen.
    StreamJson,
}

/// `prise auth`: sign-ins to remote servers.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in to a remote server now, in the browser; prise also signs in when a
    /// server first asks, if it runs in a terminal.
    Login(LoginArgs),
    /// Show each remote server's sign-in: scopes, expiry, issuer (never the tokens).
    Status(AuthStatusArgs),
    /// Sign out of a server: its tokens are revoked where the authorization server
    /// allows it, and forgotten.
    Logout(LogoutArgs),
}

/// Arguments of `prise auth login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server, as configured.
    pub server: String,
    /// Open no browser here (over SSH, say): sign in with a code entered on another
    /// device when the authorization server offers it (the device flow), else print
    /// the address to open, and take back the address the browser ends on.
    #[arg(long)]
    pub no_browser: bool,
}

/// Arguments of `prise auth status`.
#[derive(Debug, Args)]
pub struct AuthStatusArgs {
    /// Only this server.
    pub server: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `prise auth logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server, as configured.
    pub server: String,
}

/// Built-in servers.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Serve a folder of Markdown documentation (grep_docs, read_doc, list_docs).
    Docs(ServeDocsArgs),
    /// Serve every configured server as one MCP server, for other clients: tools and
    /// prompts named server__name as `prise tools` shows them, resources as their
    /// servers give them, servers' questions passed to the client that made the call.
    Gateway(ServeGatewayArgs),
}

/// How a server is served: stdio, or Streamable HTTP with its guards.
#[derive(Debug, Args)]
pub struct ServeTransportArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8000;
    /// port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Require `Authorization: Bearer TOKEN`, TOKEN read from this environment variable;
    /// repeat for several tokens. `VAR=PROFILE` (gateway): that token reaches only
    /// `/mcp/PROFILE`.
    #[arg(long, value_name = "VAR[=PROFILE]", requires = "http")]
    pub token_env: Vec<String>,
    /// Also accept this name in the Host header (loopback names always are).
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,
    /// Sessions (dated-era clients) open at once at most; one more gets 503.
    #[arg(long, value_name = "N", requires = "http", default_value_t = prise_servers::serve::DEFAULT_MAX_SESSIONS)]
    pub max_sessions: usize,
    /// Print the configuration snippet that mounts this server in a client, and exit.
    #[arg(long, value_name = "CLIENT")]
    pub print_config: Option<Client>,
}

/// Arguments of `prise serve gateway`.
#[derive(Debug, Args)]
pub struct ServeGatewayArgs {
    #[command(flatten)]
    pub transport: ServeTransportArgs,
    /// Write one JSON line per request forwarded to a server (client, server, method,
    /// name, ms, outcome) to this file, appended; `-` for stderr.
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    /// Serve tools and prompts under their servers' own names (echo, not
    /// everything__echo), as a proxy of one server; a name two servers share is
    /// served from the first.
    #[arg(long)]
    pub bare_names: bool,
    /// Calls one client may have in flight at once; one more is refused.
    #[arg(long, value_name = "N", default_value_t = prise_gateway::DEFAULT_CALLS_PER_CLIENT)]
    pub max_calls_per_client: usize,
    /// Serve this profile of the configuration's "profiles" (over stdio, or at /mcp);
    /// over HTTP every profile is also served at /mcp/PROFILE.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// List two meta-tools, search_tools and call_tool, in place of the tools (and the
    /// tools of servers with "alwaysLoad"), for clients that choke on many tools.
    #[arg(long)]
    pub meta_tools: bool,
}

/// Arguments of `prise serve docs`.
#[derive(Debug, Args)]
pub struct ServeDocsArgs {
    /// The documentation folder; prise's own docs when absent.
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub transport: ServeTransportArgs,
}

/// MCP clients whose configuration format prise can print.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Client {
    /// Claude Desktop and Claude Code (mcpServers).
    Claude,
    /// Cursor (mcpServers).
    Cursor,
    /// VS Code (.vscode/mcp.json servers).
    Vscode,
}
