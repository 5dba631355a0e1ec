//! `prise ui`: the local web page of `prise-ui`, started here and nothing more: the
//! page answers the servers' questions and the approval policy's, sees every message
//! of the mounts (their trace), and chats with the configured model.

use std::sync::Arc;

use prise_agent::Agent;
use prise_mcp::Mounts;

use crate::cli::UiArgs;
use crate::commands::mounted::{Servers, Wanted, report};
use crate::commands::run::{agent_options, model, model_spec};
use crate::failure::Failure;

/// Mounts every server, serves the page until Ctrl-C, then ends the servers.
pub async fn run(servers: Servers, args: UiArgs) -> Result<(), Failure> {
    let model_name = model_spec(&args.agent, servers.config.as_ref())?.to_string();
    let model = model(&args.agent, servers.config.as_ref())?;
    let options = agent_options(servers.config.as_ref(), &args.agent);
    let approval = options.approval.clone();
    let host = args.listen.as_deref().unwrap_or("127.0.0.1");
    // Requests must name the page's address in their Host header (DNS rebinding);
    // "every address" is not one a browser can be pointed at.
    if host
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified())
    {
        return Err(Failure::usage(
            format!("--listen {host} names no address a browser can open"),
            "give the address others reach this machine at, e.g. --listen 192.168.1.20".to_owned(),
        ));
    }
    let listener = tokio::net::TcpListener::bind((host, args.port))
        .await
        .map_err(|e| {
            Failure::usage(
                format!("cannot serve the page on {host}:{}: {e}", args.port),
                "choose another --port (0 picks a free one)".to_owned(),
            )
        })?;
    let mut page = prise_ui::Page::new(listener, host)?;
    let mounts = servers
        .start(Wanted::All, |sources, options| {
            Mounts::start(sources, page.mount_options(options))
        })
        .await?;
    let mounts = Arc::new(report(mounts));
    let agent = Agent::new(model, mounts.clone(), options).with_approver(page.approver());
    let url = page.url();
    eprintln!("prise ui: {url}");
    if !args.no_open && !crate::browser::open(&url) {
        eprintln!(
            "could not start a browser ($BROWSER, or the desktop's opener); open the URL above"
        );
    }
    page.serve(
        mounts,
        Some((agent, model_name)),
        approval,
        std::future::pending(),
    )
    .await?;
    Ok(())
}
