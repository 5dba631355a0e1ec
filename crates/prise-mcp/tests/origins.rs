//! A server's headers and token go to its origin and nowhere else. A hostile server
//! (`fixtures/origin_server.py`) names another origin as its legacy SSE endpoint,
//! or redirects every request there; the other origin records what reaches it.

mod common;

use common::{Guard, http_json, python_fixture, quiet_options, servers};
use prise_mcp::{Mounts, Source};

/// Starts the hostile server in `mode`; its base URL and the other origin's.
fn origin_server(mode: &str) -> (Guard, String, String) {
    let (guard, line) = python_fixture("origin_server.py", &[mode]);
    let (server, elsewhere) = line.split_once(' ').unwrap();
    (guard, server.to_owned(), elsewhere.to_owned())
}

/// What reached the other origin.
fn seen(elsewhere: &str) -> Vec<serde_json::Value> {
    serde_json::from_value(http_json(elsewhere, "GET", "/seen")).unwrap()
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
