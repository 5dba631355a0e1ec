//! What an authorization server answers is read up to a bound. A hostile one
//! (`fixtures/endless_auth_server.py`) answers each sign-in step with 512 MiB: the
//! sign-in fails at once with an error that names the endpoint, and prise's memory
//! stays far below the size of the answer.
//!
//! Each test reads the peak memory of its own process, so each runs alone in one
//! (nextest's way; `cargo test` runs them in one process, where the bound still
//! holds for both together).

mod common;

use std::sync::Arc;

use common::{Guard, peak_mib, python_fixture, servers};
use prise_mcp::MountOptions;
use prise_mcp::auth::{BoxFuture, Loopback, Show};

/// Far below the 512 MiB answers; far above what a test process needs.
const PEAK_MIB: u64 = 160;

fn endless_server() -> (Guard, String) {
    python_fixture("endless_auth_server.py", &[])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_token_answer_is_cut_at_the_bound() {
    let (_server, base) = endless_server();
    let state = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{{"mcpServers": {{"s": {{"url": "{base}/mcp", "timeout": 30,
            "oauth": {{"clientId": "prise", "workloadToken": "eyJhbGciOiJub25lIn0.e30."}}}}}}}}"#
    );
    let mounts = common::mount_signing_in(&config, state.path()).await;
    let error = mounts.failures()[0].to_string();
    assert!(
        error.contains(&format!("{base}/token")) && error.contains("over 1024 KiB"),
        "{error}"
    );
    assert!(peak_mib() < PEAK_MIB, "peak memory {} MiB", peak_mib());
}

/// A server that asks for a sign-in nobody here can make says so, as a kind a
/// program can act on, and the words say what to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_nobody_can_make_is_said_as_such() {
    let (_server, base) = endless_server();
    let state = tempfile::tempdir().unwrap();
    let config = format!(r#"{{"mcpServers": {{"s": {{"url": "{base}/mcp"}}}}}}"#);
    let mounts = common::mount_signing_in(&config, state.path()).await;
    let failure = &mounts.failures()[0];
    assert!(failure.needs_sign_in(), "{failure:?}");
    assert!(failure.cause.contains("prise auth login s"), "{failure}");
}

/// A person who is never asked anything: the device flow fails before a code.
#[derive(Debug)]
struct Nobody;

impl Show for Nobody {
    fn show(&self, _server: &str, _url: &str) -> BoxFuture<'static, Option<String>> {
        panic!("no browser is opened in this test")
    }

    fn show_code(&self, _server: &str, _code: &prise_mcp::auth::device::DeviceCode) {
        panic!("no code is shown in this test")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_registration_answer_is_cut_at_the_bound() {
    let (_server, base) = endless_server();
    let state = tempfile::tempdir().unwrap();
    let config = format!(r#"{{"mcpServers": {{"s": {{"url": "{base}/mcp"}}}}}}"#);
    let server = servers(&config).remove(0);
    let options = MountOptions {
        sign_in: Some(Arc::new(Loopback::new(Arc::new(Nobody)))),
        auth_dir: Some(state.path().to_owned()),
        log_dir: None,
        ..MountOptions::default()
    };
    let error = prise_mcp::accounts::login(&server, &options, true)
        .await
        .unwrap_err();
    assert!(
        matches!(error, prise_mcp::accounts::AccountError::SignIn(_)),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(
        error.contains(&format!("{base}/register")) && error.contains("over 1024 KiB"),
        "{error}"
    );
    assert!(peak_mib() < PEAK_MIB, "peak memory {} MiB", peak_mib());
}
