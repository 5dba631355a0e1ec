//! A server's headers and token go to its origin and nowhere else. A hostile server
//! (`fixtures/origin_server.py`) names another origin as its legacy SSE endpoint,
//! or redirects every request there; the other origin records what reaches it.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use common::{Guard, quiet_options, servers};
use prise_mcp::{Mounts, Source};

/// Starts the hostile server in `mode`; its base URL and the other origin's.
fn origin_server(mode: &str) -> (Guard, String, String) {
    let mut child = Command::new("python3")
        .arg(common::fixture("origin_server.py"))
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (server, elsewhere) = line.trim().split_once(' ').unwrap();
    (Guard(child), server.to_owned(), elsewhere.to_owned())
}

/// What reached the other origin.
fn seen(elsewhere: &str) -> Vec<serde_json::Value> {
    let address = elsewhere.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /seen HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    serde_json::from_str(body).unwrap()
}

/// Mounts `url` with a configured key and token; the mount's error.
async fn refused(kind: &str, url: &str) -> String {
    let config = format!(
        r#"{{"mcpServers": {{"a": {{"type": "{kind}", "url": "{url}", "timeout": 10,
            "headers": {{"X-Api-Key": "key-for-a", "Authorization": "Bearer token-for-a"}}}}}}}}"#
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        quiet_options(),
    )
    .await;
    let failures = mounts.failures().to_vec();
    mounts.close().await;
    assert_eq!(failures.len(), 1, "the mount was not refused");
    failures[0].to_string()
}

#[tokio::test]
async fn an_sse_endpoint_at_another_origin_is_refused() {
    let (_server, base, elsewhere) = origin_server("sse-endpoint");
    let error = refused("sse", &format!("{base}/sse")).await;
    assert!(
        error.contains(&elsewhere) && error.contains(&base) && error.contains("another origin"),
        "{error}"
    );
    assert_eq!(seen(&elsewhere), Vec::<serde_json::Value>::new());
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed() {
    for kind in ["http", "sse"] {
        let (_server, base, elsewhere) = origin_server("redirect");
        let error = refused(kind, &format!("{base}/mcp")).await;
        assert!(
            error.contains(&elsewhere) && error.contains("another origin"),
            "{kind}: {error}"
        );
        assert_eq!(
            seen(&elsewhere),
            Vec::<serde_json::Value>::new(),
            "{kind}: the request followed the redirect"
        );
    }
}
