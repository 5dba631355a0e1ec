//! The page over the servers of a configuration file, without a chat:
//! `cargo run -p prise-ui --example page -- .mcp.json`, then open the URL it prints.
//! Ctrl-C ends it and the servers it started.

use std::sync::Arc;

use prise_mcp::{MountOptions, Mounts, Source};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: page CONFIG.json");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path)?;
    let config =
        prise_config::Config::parse(&text, path.as_ref(), &|name| std::env::var(name).ok())?;
    let approval = config.approval.clone();
    let sources = config.servers.into_iter().map(Source::from).collect();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut page = prise_ui::Page::new(listener, "127.0.0.1")?;
    let options = page.mount_options(MountOptions::default());
    let mounts = Arc::new(Mounts::start(sources, options).await);
    eprintln!("open {}", page.url());

    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    page.serve(mounts.clone(), None, approval, stop).await?;
    // A tab still open holds the page's state, and with it the mounts.
    match Arc::try_unwrap(mounts) {
        Ok(mounts) => mounts.close().await,
        Err(_) => prise_mcp::kill_all_children(),
    }
    Ok(())
}
