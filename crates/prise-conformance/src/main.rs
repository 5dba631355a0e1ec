//! `prise-conformance-client`: the client the conformance suite drives.
//!
//! The suite starts a test server, then runs this program with the server's URL as
//! the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. It mounts
//! the URL exactly as `prise` would (through prise-config and prise-mcp, protocol
//! `auto`), does what the scenario asks of a client, and exits 0, or 1 with the error.

use std::process::ExitCode;
use std::sync::Arc;

use prise_mcp::{MountOptions, Mounts, Source};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: prise-conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}

/// Mounts the test server as `test` and runs the scenario's client side.
async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let text = serde_json::json!({ "mcpServers": { "test": { "url": url } } }).to_string();
    let config = prise_config::Config::parse(&text, "conformance.json".as_ref(), &|_| None)
        .map_err(|e| e.to_string())?;
    // The elicitation scenario checks that a client fills in the schema's defaults.
    let options = MountOptions {
        elicitor: Arc::new(prise_mcp::elicit::AcceptDefaults),
        log_dir: None,
        ..MountOptions::default()
    };
    let mounts = Mounts::start(
        config.servers.into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    if let Some(failure) = mounts.failures().first() {
        return Err(failure.to_string());
    }
    let call = match scenario {
        "tools_call" => Some(("test__add_numbers", serde_json::json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => Some((
            "test__test_client_elicitation_defaults",
            serde_json::json!({}),
        )),
        "sse-retry" => Some(("test__test_reconnection", serde_json::json!({}))),
        // `initialize` and anything unknown: mounting (handshake and listing) is the test.
        _ => None,
    };
    let outcome = match call {
        Some((tool, arguments)) => mounts
            .call_tool(tool, arguments.as_object().cloned())
            .await
            .map(|result| {
                eprintln!(
                    "{tool}: {}",
                    serde_json::to_string(&result).unwrap_or_default()
                )
            })
            .map_err(|e| e.to_string()),
        None => Ok(()),
    };
    mounts.close().await;
    outcome
}
