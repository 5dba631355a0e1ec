//! A tool call is sent once. Against a hostile server (`fixtures/charging_server.py`)
//! whose event stream answers 401 all along, as a stream reconnecting with an old
//! token would: a call that fails for another reason, or whose outcome is unknown
//! (it timed out), is never sent again after a sign-in; a call whose own answer
//! was 401 is sent again once, after signing in again.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Guard, eventually, servers};
use prise_mcp::{CallError, MountOptions, Mounts, Source};

/// Starts the charging server; its base URL.
fn charging_server() -> (Guard, String) {
    let mut child = Command::new("python3")
        .arg(common::fixture("charging_server.py"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Guard(child), line.trim().to_owned())
}

/// `METHOD path` on the server's control endpoints, answered as JSON.
fn control(base: &str, method: &str, path: &str) -> serde_json::Value {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_default()
}

fn charges(base: &str) -> u64 {
    control(base, "GET", "/state")["charges"].as_u64().unwrap()
}

fn how(how: &str) -> Option<prise_mcp::model::JsonObject> {
    serde_json::json!({ "how": how }).as_object().cloned()
}

async fn mount(base: &str, auth: &std::path::Path) -> Mounts {
    let config = format!(
        r#"{{"mcpServers": {{"bank": {{"url": "{base}/mcp", "timeout": {{"call": 1}},
            "oauth": {{"clientId": "prise", "clientSecret": "s3cret", "clientCredentials": true}}}}}}}}"#
    );
    let options = MountOptions {
        auth_dir: Some(auth.to_owned()),
        log_dir: None,
        eras: None,
        ..MountOptions::default()
    };
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    mounts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_never_sent_twice() {
    let (_server, base) = charging_server();
    let auth = tempfile::tempdir().unwrap();
    let mounts = mount(&base, auth.path()).await;
    // The event stream reconnected and was refused: a 401 that no call received.
    let at = base.clone();
    let stream_refused = move || control(&at, "GET", "/state")["gets"].as_u64() >= Some(2);
    assert!(eventually(Duration::from_secs(10), stream_refused).await);

    // An ordinary error: the call ran once and its error is the answer.
    let failed = mounts.call_tool("bank__charge", how("error")).await;
    assert!(
        matches!(&failed, Err(CallError::Rejected { code: -32000, .. })),
        "{failed:?}"
    );
    assert_eq!(charges(&base), 1, "a call that got an error was sent again");

    // An unknown outcome: the call timed out after it ran; it is not sent again.
    let timed_out = mounts.call_tool("bank__charge", how("slow")).await;
    assert!(
        matches!(&timed_out, Err(CallError::Timeout { .. })),
        "{timed_out:?}"
    );
    assert_eq!(charges(&base), 2, "a call that timed out was sent again");

    // The call's own answer is 401 (every token revoked): it did not run, so it is
    // sent again once, signed in again, and runs once.
    control(&base, "POST", "/revoke");
    let charged = mounts.call_tool("bank__charge", how("ok")).await;
    assert!(charged.is_ok(), "{charged:?}");
    assert_eq!(charges(&base), 3);

    // A server that refuses every token: one sign-in, one more try, then an error
    // that says so; the call never ran.
    control(&base, "POST", "/refuse");
    let posts_before = control(&base, "GET", "/state")["posts"].as_u64().unwrap();
    let refused = mounts.call_tool("bank__charge", how("ok")).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(charges(&base), 3);
    let posts = control(&base, "GET", "/state")["posts"].as_u64().unwrap() - posts_before;
    assert!(posts <= 8, "{posts} requests for one refused call");
    mounts.close().await;
}
