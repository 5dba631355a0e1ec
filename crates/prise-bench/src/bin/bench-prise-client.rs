//! `bench-prise-client MODE ...`: prise's mount layer (prise-mcp) as a benchmark client.
//!
//! - `calls --calls N --warmup W [--protocol P] [--tool T] (--url URL | -- SERVER ARGS...)`:
//!   sequential `tools/call`s of `T` (default `echo`), one latency each.
//! - `concurrent --inflight K --calls N (--url URL | -- SERVER ARGS...)`: N calls, K at a
//!   time; prints the elapsed time.
//! - `mount --servers N -- SERVER ARGS...`: mounts N copies of the server at once;
//!   prints the time until all are listed and this process's peak RSS.

use std::sync::Arc;
use std::time::Instant;

use prise_mcp::{MountOptions, Mounts, Source};

// One thread, as the prise binary runs: see its `runtime()`.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let number = |name: &str, default: usize| {
        prise_bench::arg(&args, name)
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let protocol = prise_bench::arg(&args, "--protocol").unwrap_or_else(|| "auto".to_owned());
    let server = |name: String| match prise_bench::arg(&args, "--url") {
        Some(url) => serde_json::json!({ name: { "url": url, "protocol": protocol } }),
        None => {
            let command = &args[args.iter().position(|a| a == "--").expect("-- SERVER ARGS") + 1..];
            serde_json::json!({ name: { "command": command[0], "args": command[1..], "protocol": protocol, "restart": "never" } })
        }
    };
    let mode = args.get(1).map(String::as_str).unwrap_or("calls");
    let count = if mode == "mount" {
        number("--servers", 1)
    } else {
        1
    };
    let mut servers = serde_json::Map::new();
    for i in 0..count {
        servers.extend(server(format!("bench{i}")).as_object().cloned().unwrap());
    }
    let text = serde_json::json!({ "mcpServers": servers }).to_string();
    let config =
        prise_config::Config::parse(&text, "bench.json".as_ref(), &|_| None).expect("bench config");
    let options = MountOptions {
        log_dir: None,
        eras: None,
        ..MountOptions::default()
    };
    let started = Instant::now();
    let mounts = Arc::new(
        Mounts::start(
            config.servers.into_iter().map(Source::from).collect(),
            options,
        )
        .await,
    );
    let mount_time = started.elapsed();
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    let arguments = || serde_json::json!({"message": "hi"}).as_object().cloned();
    let tool = format!(
        "bench0__{}",
        prise_bench::arg(&args, "--tool").unwrap_or_else(|| "echo".to_owned())
    );
    let report = match mode {
        "mount" => serde_json::json!({
            "elapsed_ns": mount_time.as_nanos() as u64,
            "startups_ns": mounts.mounts().iter().map(|m| m.startup().as_nanos() as u64).collect::<Vec<_>>(),
            "peak_rss_kib": prise_bench::peak_rss_kib(),
        }),
        "concurrent" => {
            let (inflight, calls) = (number("--inflight", 8), number("--calls", 1000));
            let started = Instant::now();
            let mut tasks = tokio::task::JoinSet::new();
            for worker in 0..inflight {
                let (mounts, tool) = (mounts.clone(), tool.clone());
                let share = calls / inflight + usize::from(worker < calls % inflight);
                tasks.spawn(async move {
                    for _ in 0..share {
                        mounts
                            .call_tool(&tool, arguments())
                            .await
                            .expect("echo answers");
                    }
                });
            }
            while tasks.join_next().await.is_some() {}
            serde_json::json!({ "calls": calls, "elapsed_ns": started.elapsed().as_nanos() as u64 })
        }
        _ => {
            let (calls, warmup) = (number("--calls", 1000), number("--warmup", 100));
            let mut latencies = Vec::with_capacity(calls);
            for i in 0..warmup + calls {
                let started = Instant::now();
                mounts
                    .call_tool(&tool, arguments())
                    .await
                    .expect("echo answers");
                if i >= warmup {
                    latencies.push(started.elapsed().as_nanos() as u64);
                }
            }
            serde_json::json!({ "latencies_ns": latencies })
        }
    };
    if let Ok(mounts) = Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    println!("{report}");
}
