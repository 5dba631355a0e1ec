//! `bench-rmcp-client --calls N --warmup W (--url URL | -- SERVER ARGS...)`: a bare
//! rmcp client, the SDK prise is built on, with nothing of prise around it.

use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let calls: usize = prise_bench::arg(&args, "--calls")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let warmup: usize = prise_bench::arg(&args, "--warmup")
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let params = || {
        CallToolRequestParams::new("echo").with_arguments(
            serde_json::json!({"message": "hi"})
                .as_object()
                .cloned()
                .unwrap(),
        )
    };
    // The stdio server's process, killed when this is dropped at the end of main.
    let mut _server = None;
    let client = match prise_bench::arg(&args, "--url") {
        Some(url) => {
            // reqwest is built without a default crypto provider (see prise-mcp's http.rs).
            let _ = rustls::crypto::ring::default_provider().install_default();
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
            ().serve(transport).await.expect("connects")
        }
        None => {
            let server = &args[args.iter().position(|a| a == "--").expect("-- SERVER ARGS") + 1..];
            let mut child = tokio::process::Command::new(&server[0])
                .args(&server[1..])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("server starts");
            let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
            _server = Some(child);
            ().serve(transport).await.expect("connects")
        }
    };
    let mut latencies = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let started = Instant::now();
        client.call_tool(params()).await.expect("echo answers");
        if i >= warmup {
            latencies.push(started.elapsed().as_nanos() as u64);
        }
    }
    let _ = client.cancel().await;
    println!("{}", serde_json::json!({ "latencies_ns": latencies }));
}
