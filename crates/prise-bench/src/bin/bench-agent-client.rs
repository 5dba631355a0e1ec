//! `bench-agent-client --runs N --warmup W -- SERVER ARGS...`: the time prise's agent
//! adds, outside the model and the tool.
//!
//! The model is a stand-in served from this process (a scripted fake, as the tests
//! use, answering at once): it asks for the `echo` tool when the conversation does not
//! end with a tool result, and answers otherwise. Three things are timed: a run with
//! no tool call (one turn), a run with one tool call (two turns), and one bare HTTP
//! request to the fake model (what a turn costs outside prise). Prints medians.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prise_agent::{Agent, AgentOptions};
use prise_llm::{Endpoint, OpenAiCompatible};
use prise_mcp::{MountOptions, Mounts, Source};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let number = |name: &str, default: usize| {
        prise_bench::arg(&args, name)
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let (runs, warmup) = (number("--runs", 200), number("--warmup", 20));
    let command = &args[args.iter().position(|a| a == "--").expect("-- SERVER ARGS") + 1..];
    let config = serde_json::json!({"mcpServers": {"bench": {"command": command[0], "args": command[1..], "protocol": "legacy"}}});
    let config = prise_config::Config::parse(&config.to_string(), "bench.json".as_ref(), &|_| None)
        .expect("config");
    let options = MountOptions {
        log_dir: None,
        eras: None,
        ..MountOptions::default()
    };
    let mounts = Arc::new(
        Mounts::start(
            config.servers.into_iter().map(Source::from).collect(),
            options,
        )
        .await,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(fake_model(listener));
    let base_url = format!("http://{address}/v1");

    let agent = |prompt_needs_tool: bool| {
        let model = OpenAiCompatible::new(
            Endpoint {
                base_url: base_url.clone(),
                api_key: None,
            },
            "fake",
        )
        .unwrap();
        let options = AgentOptions {
            yes: true,
            ..AgentOptions::default()
        };
        let prompt = if prompt_needs_tool {
            "use the tool"
        } else {
            "just answer"
        };
        (Agent::new(Box::new(model), mounts.clone(), options), prompt)
    };
    let mut one_turn = Vec::new();
    let mut with_tool = Vec::new();
    let mut bare = Vec::new();
    for i in 0..warmup + runs {
        for needs_tool in [false, true] {
            let (mut agent, prompt) = agent(needs_tool);
            let started = Instant::now();
            agent
                .run(prompt)
                .await
                .expect("the run ends with an answer");
            let elapsed = started.elapsed().as_nanos() as u64;
            if i >= warmup {
                if needs_tool {
                    with_tool.push(elapsed)
                } else {
                    one_turn.push(elapsed)
                }
            }
        }
        let started = Instant::now();
        bare_request(address).await;
        if i >= warmup {
            bare.push(started.elapsed().as_nanos() as u64);
        }
    }
    let median = |s: &[u64]| {
        prise_bench::summarize(s)
            .map(|s| s.median)
            .unwrap_or(Duration::ZERO)
            .as_nanos() as u64
    };
    println!(
        "{}",
        serde_json::json!({"one_turn_ns": median(&one_turn), "with_tool_ns": median(&with_tool), "bare_model_ns": median(&bare)})
    );
}

/// Answers every request at once: a tool call unless the last message is a tool result.
async fn fake_model(listener: tokio::net::TcpListener) {
    while let Ok((mut socket, _)) = listener.accept().await {
        tokio::spawn(async move {
            let body = read_body(&mut socket).await;
            let wants_tool =
                body.contains("\"use the tool\"") && !body.contains("\"role\":\"tool\"");
            let event = if wants_tool {
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bench__echo","arguments":"{\"message\":\"hi\"}"}}]},"finish_reason":"tool_calls"}]}"#
            } else {
                r#"{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}"#
            };
            let payload = format!("data: {event}\n\ndata: [DONE]\n\n");
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
                payload.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        });
    }
}

async fn read_body(socket: &mut tokio::net::TcpStream) -> String {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = socket.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return String::from_utf8_lossy(&buffer[end + 4..]).into_owned();
            }
        }
    }
    String::from_utf8_lossy(&buffer).into_owned()
}

/// One request to the fake model without prise: connect, send, read to the end.
async fn bare_request(address: std::net::SocketAddr) {
    let body =
        r#"{"model":"fake","messages":[{"role":"user","content":"just answer"}],"stream":true}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let _ = socket.read_to_end(&mut response).await;
}
