//! A soak of the gateway over Streamable HTTP: 100,000 calls, 64 in flight, from
//! prise's own mount layer as the client, while the gateway's two servers (prise-mcp's
//! bad_server.py) are killed at random and restarted. Every call ends, with its
//! answer or a clear error; nothing hangs; no server process is left when it is over;
//! the gateway's memory stays flat. Bounded in count and time, loopback only.

#[path = "../../prise-mcp/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::processes_with;
use prise_config::Config;
use prise_gateway::Gateway;
use prise_mcp::{MountOptions, Mounts, Source};

const CALLS: usize = 100_000;
const IN_FLIGHT: usize = 64;

fn bad_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise-mcp/tests/fixtures/bad_server.py")
}

fn servers(json: &serde_json::Value) -> Vec<Source> {
    Config::parse(&json.to_string(), Path::new("soak.json"), &|_| None)
        .expect("soak config")
        .servers
        .into_iter()
        .map(Source::from)
        .collect()
}

/// This process's resident set, in KiB (the gateway runs in it).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_calls_while_servers_are_killed() {
    // On a task of its own: in a debug build the whole of it is too large a future
    // for the test thread's stack.
    tokio::spawn(soak()).await.unwrap();
}

async fn soak() {
    let marker = format!("prise-soak-{}", std::process::id());
    let upstream = |n: usize| {
        serde_json::json!({
            "command": "python3",
            "args": [bad_server(), "normal", format!("{marker}-{n}")],
            "maxRestarts": 10_000,
            "timeout": {"call": 10},
        })
    };
    let config = serde_json::json!({"mcpServers": {"a": upstream(1), "b": upstream(2)}});
    let options = MountOptions {
        log_dir: None,
        eras: None,
        ..MountOptions::default()
    };
    let gateway = Gateway::start(servers(&config), options).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = tokio::spawn(prise_servers::serve::http(
        gateway.clone(),
        listener,
        prise_servers::serve::HttpOptions::default(),
        std::future::pending(),
    ));

    let client_config =
        serde_json::json!({"mcpServers": {"gw": {"url": url, "timeout": {"call": 30}}}});
    let client = Arc::new(
        Mounts::start(
            servers(&client_config),
            MountOptions {
                log_dir: None,
                eras: None,
                ..MountOptions::default()
            },
        )
        .await,
    );
    assert!(client.failures().is_empty(), "{:?}", client.failures());

    // Killing at random while the calls run.
    let done = Arc::new(AtomicBool::new(false));
    let killer = {
        let (done, marker) = (done.clone(), marker.clone());
        tokio::spawn(async move {
            let mut kills = 0usize;
            let mut turn = 0usize;
            while !done.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(500)).await;
                let pids = processes_with(&marker);
                if let Some(pid) = pids.get(turn % pids.len().max(1)) {
                    let _ = std::process::Command::new("kill")
                        .args(["-9", &pid.to_string()])
                        .status();
                    kills += 1;
                }
                turn += 1;
            }
            kills
        })
    };

    let (answered, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let warm_rss = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    let next = Arc::new(AtomicUsize::new(0));
    for _ in 0..IN_FLIGHT {
        let (client, next, answered, failed, warm_rss) = (
            client.clone(),
            next.clone(),
            answered.clone(),
            failed.clone(),
            warm_rss.clone(),
        );
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= CALLS {
                    return;
                }
                if i == CALLS / 10 {
                    warm_rss.store(rss_kib() as usize, Ordering::Relaxed);
                }
                let tool = if i % 2 == 0 {
                    "gw__a__echo"
                } else {
                    "gw__b__echo"
                };
                let message = format!("m{i}");
                let arguments = serde_json::json!({"message": message}).as_object().cloned();
                match client.call_tool(tool, arguments).await {
                    Ok(result) if result.is_error != Some(true) => {
                        let text: String = result
                            .content
                            .iter()
                            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                            .collect();
                        assert_eq!(text, format!("echo: {message}"), "a wrong answer");
                        answered.fetch_add(1, Ordering::Relaxed);
                    }
                    // A server killed under the call, or restarting: said in words.
                    Ok(result) => {
                        let text: String = result
                            .content
                            .iter()
                            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                            .collect();
                        assert!(text.starts_with("server "), "an unclear error: {text}");
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("the gateway itself failed a call: {e}"),
                }
            }
        });
    }
    // A hang is calls that stop ending, however slow the machine: the soak fails
    // when none has ended for 90 s (each call's own timeout is 30 s), never because
    // the whole took long.
    let ended = || answered.load(Ordering::Relaxed) + failed.load(Ordering::Relaxed);
    let (mut seen, mut since) = (ended(), Instant::now());
    while !workers.is_empty() {
        tokio::select! {
            _ = workers.join_next() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        if ended() != seen {
            (seen, since) = (ended(), Instant::now());
        }
        assert!(
            since.elapsed() < Duration::from_secs(90),
            "no call ended for 90 s after {seen} of {CALLS}: a hang"
        );
    }
    done.store(true, Ordering::Relaxed);
    let kills = killer.await.unwrap();
    let (answered, failed) = (
        answered.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed),
    );
    let end_rss = rss_kib();
    eprintln!(
        "{CALLS} calls in {:.1} s: {answered} answered, {failed} failed cleanly, {kills} kills; RSS {} → {end_rss} KiB",
        started.elapsed().as_secs_f64(),
        warm_rss.load(Ordering::Relaxed)
    );
    assert_eq!(answered + failed, CALLS);
    assert!(kills >= 2, "the servers were not killed ({kills})");
    // Between kills the servers answer; while one restarts (with backoff), its calls
    // fail at once, in words.
    assert!(answered > 0, "no call was answered");
    // Flat: the RSS once warm, and at the end, within 32 MiB (the client and the
    // gateway share this process).
    let warm = warm_rss.load(Ordering::Relaxed) as u64;
    assert!(
        end_rss < warm + 32 * 1024,
        "RSS grew from {warm} to {end_rss} KiB"
    );

    if let Ok(client) = Arc::try_unwrap(client) {
        client.close().await;
    }
    serving.abort();
    gateway.close().await;
    let gone = async {
        while !processes_with(&marker).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .unwrap_or_else(|_| panic!("left running: {:?}", processes_with(&marker)));
}
