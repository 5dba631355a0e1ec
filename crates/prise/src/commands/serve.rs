//! `prise serve`: the built-in documentation server and the gateway, for any MCP
//! client, over stdio or Streamable HTTP.

use std::io::Write;

use prise_servers::serve::{HTTP_PATH, ServerHandler, Token};
use prise_servers::{DocsServer, Library};

use crate::cli::{Client, ServeDocsArgs, ServeGatewayArgs, ServeTransportArgs};
use crate::commands::mounted::{Servers, Wanted, warn_of_failures};
use crate::failure::Failure;
use crate::output;

/// Serves a documentation folder (or prise's own docs) over stdio, or prints the
/// configuration snippet that mounts it in a client.
pub async fn docs(args: ServeDocsArgs) -> Result<(), Failure> {
    if let Some(client) = args.transport.print_config {
        let mut served = vec!["serve".to_owned(), "docs".to_owned()];
        if let Some(dir) = &args.dir {
            let dir = dir.canonicalize().map_err(|e| {
                Failure::usage(format!("cannot serve {}: {e}", dir.display()), None)
            })?;
            served.push(dir.display().to_string());
        }
        return print_config(client, "docs", served);
    }
    let server = match &args.dir {
        Some(dir) => {
            let library = Library::load(dir).map_err(|e| {
                Failure::usage(
                    format!("cannot serve {}: {e}", dir.display()),
                    "give a folder of Markdown files".to_owned(),
                )
            })?;
            tracing::info!(
                "serving {} documents from {}",
                library.docs().len(),
                dir.display()
            );
            DocsServer::new("prise-docs", library)
        }
        None => prise_servers::embedded_docs(),
    };
    serve(vec![(HTTP_PATH.to_owned(), server)], &args.transport, &[]).await
}

/// Mounts every configured server and serves them as one, or prints the configuration
/// snippet that mounts the gateway in a client.
pub async fn gateway(servers: Servers, args: ServeGatewayArgs) -> Result<(), Failure> {
    if let Some(client) = args.transport.print_config {
        let mut served = vec!["serve".to_owned(), "gateway".to_owned()];
        // A client starts the gateway from a folder of its own: the configuration
        // found here is named, so that the gateway serves the same servers there.
        if let Some(config) = &servers.config {
            let path = config.path.canonicalize().unwrap_or(config.path.clone());
            served.splice(0..0, ["--config".to_owned(), path.display().to_string()]);
        }
        return print_config(client, "prise", served);
    }
    // Only a policy the configuration states is the gateway's to apply: its clients
    // ask their users themselves.
    let approval = servers
        .config
        .as_ref()
        .filter(|c| c.sets_approval)
        .map(|c| c.approval.clone());
    let profiles = servers
        .config
        .as_ref()
        .map(|c| c.profiles.clone())
        .unwrap_or_default();
    let names: Vec<String> = profiles.keys().cloned().collect();
    let served_at_mcp = match &args.profile {
        None => None,
        Some(name) => Some(
            profiles
                .get(name)
                .cloned()
                .ok_or_else(|| no_profile(name, &names))?,
        ),
    };
    let always_loaded = servers
        .config
        .as_ref()
        .map(prise_config::Config::always_loaded)
        .unwrap_or_default();
    let mut gateway = servers
        .start(Wanted::All, prise_gateway::Gateway::start)
        .await?;
    if let Some(approval) = approval {
        gateway = gateway.with_approval(approval);
    }
    gateway = gateway.with_calls_per_client(args.max_calls_per_client);
    if args.bare_names {
        gateway = gateway.with_bare_names();
    }
    if args.meta_tools {
        gateway = gateway.with_meta_tools(always_loaded);
    }
    if let Some(path) = &args.request_log {
        gateway = gateway.with_request_log(request_log(path)?);
    }
    // What failed to mount is said once, as for every command, when it is known; the
    // rest is served meanwhile.
    let starting = gateway.clone();
    tokio::spawn(async move { warn_of_failures(&starting.started().await) });
    let at_mcp = match served_at_mcp {
        Some(profile) => gateway.with_profile(profile),
        None => gateway.clone(),
    };
    let mut routes = vec![(HTTP_PATH.to_owned(), at_mcp)];
    for (name, profile) in profiles {
        routes.push((format!("{HTTP_PATH}/{name}"), gateway.with_profile(profile)));
    }
    let served = serve(routes, &args.transport, &names).await;
    gateway.close().await;
    served
}

/// A `--profile` or `--token-env VAR=PROFILE` naming a profile the configuration
/// does not have.
fn no_profile(name: &str, names: &[String]) -> Failure {
    let hint = if names.is_empty() {
        "the configuration has no \"profiles\"; add one: \"profiles\": {\"NAME\": {\"servers\": [...]}}".to_owned()
    } else {
        format!("its profiles are: {}", names.join(", "))
    };
    Failure::usage(
        format!("no profile named \"{name}\" in the configuration"),
        hint,
    )
}

/// The request log at `path` (appended), or on stderr for `-`.
fn request_log(path: &std::path::Path) -> Result<prise_gateway::RequestLog, Failure> {
    if path == std::path::Path::new("-") {
        return Ok(prise_gateway::RequestLog::new(Box::new(std::io::stderr())));
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            Failure::usage(
                format!("--request-log {}: {e}", path.display()),
                "give a file in a folder that exists and can be written".to_owned(),
            )
        })?;
    Ok(prise_gateway::RequestLog::new(Box::new(file)))
}

/// Serves the server of `/mcp` on stdin and stdout, or every route over Streamable
/// HTTP until interrupted; `profiles` are those a token may be limited to.
async fn serve<S>(
    mut routes: Vec<(String, S)>,
    transport: &ServeTransportArgs,
    profiles: &[String],
) -> Result<(), Failure>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let Some(address) = &transport.http else {
        let (_, server) = routes.swap_remove(0);
        return prise_servers::serve::stdio(server)
            .await
            .map_err(|e| Failure::Job(anyhow::anyhow!("stdio transport failed: {e}")));
    };
    let mut tokens = Vec::new();
    for given in &transport.token_env {
        let (var, only) = match given.split_once('=') {
            Some((var, profile)) => {
                if !profiles.iter().any(|p| p == profile) {
                    return Err(no_profile(profile, profiles));
                }
                (var, Some(format!("{HTTP_PATH}/{profile}")))
            }
            None => (given.as_str(), None),
        };
        match std::env::var(var) {
            Ok(secret) if !secret.is_empty() => tokens.push(Token { secret, only }),
            _ => {
                return Err(Failure::usage(
                    format!("--token-env {var}: the variable is not set or empty"),
                    format!("export {var}=<a long random secret> and run again"),
                ));
            }
        }
    }
    let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
        Failure::usage(
            format!("cannot listen on {address}: {e}"),
            "give a free address such as 127.0.0.1:8000".to_owned(),
        )
    })?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "warning: listening on {local}, reachable from other machines; consider --token-env"
        );
    }
    // The address goes to stdout so that scripts (and tests) can read the port chosen
    // for `:0`; everything else goes to stderr.
    let mut out = output::stdout();
    writeln!(out, "http://{local}{HTTP_PATH}")?;
    out.flush()?;
    let options = prise_servers::serve::HttpOptions {
        tokens,
        extra_hosts: transport.allow_host.clone(),
        max_sessions: transport.max_sessions,
        ..Default::default()
    };
    prise_servers::serve::http_routes(routes, listener, options, std::future::pending())
        .await
        .map_err(|e| Failure::Job(anyhow::anyhow!("HTTP server failed: {e}")))
}

/// The snippet that mounts prise, started with `args`, in `client` as `name`, with
/// absolute paths as clients start servers from their own working directory.
fn print_config(client: Client, name: &str, args: Vec<String>) -> Result<(), Failure> {
    let exe = std::env::current_exe()?;
    let server = serde_json::json!({ "command": exe.display().to_string(), "args": args });
    let snippet = match client {
        Client::Claude | Client::Cursor => serde_json::json!({ "mcpServers": { name: server } }),
        Client::Vscode => {
            let mut server = server;
            server["type"] = "stdio".into();
            serde_json::json!({ "servers": { name: server } })
        }
    };
    let mut out = output::stdout();
    output::json(&mut out, &snippet)?;
    out.flush()?;
    Ok(())
}
