//! `prise serve docs`: the built-in documentation server, for any MCP client.

use std::io::Write;

use prise_servers::{DocsServer, Library};

use crate::cli::{Client, ServeDocsArgs};
use crate::failure::Failure;
use crate::output;

/// Serves a documentation folder (or prise's own docs) over stdio, or prints the
/// configuration snippet that mounts it in a client.
pub async fn docs(args: ServeDocsArgs) -> Result<(), Failure> {
    if let Some(client) = args.print_config {
        return print_config(client, args.dir.as_deref());
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
    if let Some(address) = &args.http {
        return http(server, address, &args).await;
    }
    prise_servers::serve::stdio(server)
        .await
        .map_err(|e| Failure::Job(anyhow::anyhow!("stdio transport failed: {e}")))
}

/// Serves over Streamable HTTP until interrupted.
async fn http(server: DocsServer, address: &str, args: &ServeDocsArgs) -> Result<(), Failure> {
    let token = match &args.token_env {
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.is_empty() => Some(token),
            _ => {
                return Err(Failure::usage(
                    format!("--token-env {var}: the variable is not set or empty"),
                    format!("export {var}=<a long random secret> and run again"),
                ));
            }
        },
        None => None,
    };
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
    writeln!(out, "http://{local}{}", prise_servers::serve::HTTP_PATH)?;
    out.flush()?;
    let options = prise_servers::serve::HttpOptions {
        token,
        extra_hosts: args.allow_host.clone(),
    };
    prise_servers::serve::http(server, listener, options, std::future::pending())
        .await
        .map_err(|e| Failure::Job(anyhow::anyhow!("HTTP server failed: {e}")))
}

/// The snippet that mounts this server in `client`, with absolute paths as clients
/// start servers from their own working directory.
fn print_config(client: Client, dir: Option<&std::path::Path>) -> Result<(), Failure> {
    let exe = std::env::current_exe()?;
    let mut args = vec!["serve".to_owned(), "docs".to_owned()];
    if let Some(dir) = dir {
        let dir = dir
            .canonicalize()
            .map_err(|e| Failure::usage(format!("cannot serve {}: {e}", dir.display()), None))?;
        args.push(dir.display().to_string());
    }
    let server = serde_json::json!({ "command": exe.display().to_string(), "args": args });
    let snippet = match client {
        Client::Claude | Client::Cursor => serde_json::json!({ "mcpServers": { "docs": server } }),
        Client::Vscode => {
            let mut server = server;
            server["type"] = "stdio".into();
            serde_json::json!({ "servers": { "docs": server } })
        }
    };
    let mut out = output::stdout();
    output::json(&mut out, &snippet)?;
    out.flush()?;
    Ok(())
}
