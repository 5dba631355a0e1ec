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
    if let Some(address) = args.http {
        return Err(Failure::Job(anyhow::anyhow!(
            "serving over HTTP ({address}) is not available in this build yet"
        )));
    }
    prise_servers::serve::stdio(server)
        .await
        .map_err(|e| Failure::Job(anyhow::anyhow!("stdio transport failed: {e}")))
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
