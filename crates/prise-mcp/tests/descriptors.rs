//! A wrapper's grandchildren are ended with it, and no descriptor is leaked. In a test
//! binary of its own, so that no other test opens descriptors while it counts them.

mod common;

use std::time::Duration;

use common::{alive, eventually, fixture, processes_with, servers};
use prise_mcp::{MountOptions, Mounts, Source};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grandchildren_of_a_wrapper_are_ended_and_descriptors_released() {
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let before = fds();
    let m = format!("prise-test-wrapper-{}", std::process::id());
    // Like npx: a shell that starts the real server as its child and waits.
    let config = format!(
        r#"{{"mcpServers": {{"wrapped": {{"command": "sh", "args": ["-c", "python3 {} stubborn {m}; echo done"]}}}}}}"#,
        fixture("bad_server.py")
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions {
            log_dir: None,
            ..MountOptions::default()
        },
    )
    .await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(
        processes_with(&m).len(),
        2,
        "the shell and its python child"
    );
    let pids = processes_with(&m);
    mounts.close().await;
    assert!(
        eventually(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))).await,
        "left running: {pids:?}"
    );
    assert!(
        eventually(Duration::from_secs(2), || fds() <= before).await,
        "descriptors: {before} before, {} after",
        fds()
    );
}
