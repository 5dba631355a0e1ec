//! Servers that take long to start (a first `npx` or `uvx` download, a loaded
//! machine) mount on their first process, in either era, with `protocol: auto`:
//! the probe for the era waits for its own answer, and a late one is never taken
//! for the answer to `initialize`. So does a server that never answers the probe.

mod common;

use common::{fixture, peers, servers};
use prise_mcp::eras::{Era, EraCache};
use prise_mcp::{MountOptions, Mounts, Source};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_servers_of_both_eras_mount_on_their_first_process() {
    let dir = tempfile::tempdir().unwrap();
    let python = peers().join("venv/bin/python");
    let script = fixture("slow_start.py");
    let server = |name: &str, kind: &str, delay: u32, drops: bool| {
        let starts = dir.path().join(format!("{name}.starts"));
        let args = if kind == "dated" {
            format!(r#"["{script}", "dated", "normal"]"#)
        } else {
            format!(r#"["{script}", "sdk"]"#)
        };
        format!(
            r#""{name}": {{"command": "{}", "args": {args}, "timeout": {{"startup": 45}},
                "env": {{"START_DELAY": "{delay}", "STARTS_FILE": "{}"{}}}}}"#,
            python.display(),
            starts.display(),
            if drops {
                r#", "DROP_DISCOVER": "1""#
            } else {
                ""
            }
        )
    };
    let config = format!(
        r#"{{"mcpServers": {{ {}, {}, {}, {}, {} }}}}"#,
        server("dated12", "dated", 12, false),
        server("dated20", "dated", 20, false),
        server("sdk12", "sdk", 12, false),
        server("sdk20", "sdk", 20, false),
        server("dropper", "dated", 0, true),
    );
    let eras = EraCache::at(dir.path().join("eras.json"));
    let options = MountOptions {
        log_dir: None,
        eras: Some(eras.clone()),
        ..MountOptions::default()
    };
    let configured = servers(&config);
    let mounts = Mounts::start(
        configured.iter().cloned().map(Source::from).collect(),
        options,
    )
    .await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    for name in ["dated12", "dated20", "sdk12", "sdk20", "dropper"] {
        let starts = std::fs::read_to_string(dir.path().join(format!("{name}.starts"))).unwrap();
        assert_eq!(starts.lines().count(), 1, "{name} was started {starts:?}");
    }
    let echo = serde_json::json!({"message": "late"}).as_object().cloned();
    assert!(mounts.call_tool("dated20__echo", echo).await.is_ok());
    let hello = serde_json::json!({"name": "late"}).as_object().cloned();
    assert!(mounts.call_tool("sdk20__hello", hello).await.is_ok());
    mounts.close().await;
    // The era each answered in is remembered, the SDK's own (2026-07-28) though it
    // was mounted the dated way: the next mount asks it directly.
    for server in &configured {
        let expected = if server.name.starts_with("sdk") {
            Era::Modern
        } else {
            Era::Legacy
        };
        assert_eq!(eras.get(server), Some(expected), "{}", server.name);
    }
}
