//! The harness pattern of the seed article, with prise as the library: mount MCP
//! servers, build an agent over their tools with a model, watch its events, run, close.
//!
//! ```sh
//! # any OpenAI-compatible endpoint; Ollama by default
//! cargo run -p prise-agent --example picnic -- http://localhost:11434/v1 qwen2.5
//! ```

use std::sync::Arc;

use prise_agent::{Agent, AgentEvent, AgentOptions};
use prise_llm::{Endpoint, OpenAiCompatible};
use prise_mcp::{MountOptions, Mounts, Source};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let base_url = args
        .next()
        .unwrap_or_else(|| "http://localhost:11434/v1".to_owned());
    let model_name = args.next().unwrap_or_else(|| "qwen2.5".to_owned());

    // 1. Mount each MCP server: a program prise starts, or a URL. Tools become
    //    `server__tool`, so two servers cannot clash.
    let config = prise_config::Config::parse(
        r#"{"mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "docs": {"command": "prise", "args": ["serve", "docs"]}
        }}"#,
        "picnic.json".as_ref(),
        &|name| std::env::var(name).ok(),
    )?;
    let sources = config.servers.into_iter().map(Source::from).collect();
    let mounts = Arc::new(Mounts::start(sources, MountOptions::default()).await);
    for failure in mounts.failures() {
        eprintln!("not mounted: {failure}");
    }

    // 2. An agent over those tools, with any OpenAI-compatible model.
    let model = OpenAiCompatible::new(
        Endpoint {
            base_url,
            api_key: None,
        },
        model_name,
    )?;
    let options = AgentOptions {
        max_turns: 10,
        yes: true,
        ..AgentOptions::default()
    };
    let mut agent = Agent::new(Box::new(model), mounts.clone(), options);

    // 3. Events for every step.
    let mut events = agent.subscribe();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let AgentEvent::ToolStart { name, .. } = event {
                eprintln!("→ {name}");
            }
        }
    });

    let answer = agent
        .run("What time is it in Paris, and what does prise do with a server that crashes?")
        .await;
    drop(agent);

    // 4. Hang up: stdio servers are processes of ours.
    if let Ok(mounts) = Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    println!("{}", answer?);
    Ok(())
}
