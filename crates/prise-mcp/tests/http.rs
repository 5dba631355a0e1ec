//! Streamable HTTP and legacy HTTP+SSE: server-everything over both, and endpoints that
//! fail (500, 401, hanging), each a clear failure that leaves the other servers alone.

mod common;

use std::time::Duration;

use common::{Guard, everything, everything_http, everything_on, fixture, free_port, servers};
use prise_mcp::model::ContentBlock;
use prise_mcp::{MountOptions, Mounts, Source};

/// Starts the bad HTTP endpoint in `mode`.
fn bad_http(mode: &str) -> (Guard, u16) {
    let (guard, port) = common::python_fixture("bad_http_server.py", &[mode]);
    (guard, port.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http() {
    let (_server, port) = everything_http();
    let config = format!(
        r#"{{"mcpServers": {{"everything": {{"url": "http://127.0.0.1:{port}/mcp", "headers": {{"X-Trace": "prise-test"}}}}}}}}"#
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions::default(),
    )
    .await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(mounts.mounts()[0].transport(), "http");
    // 13, and one for elicitation, which prise offers (roots are offered when asked).
    assert_eq!(mounts.tools().len(), 14);
    let result = mounts
        .call_tool(
            "everything__echo",
            serde_json::json!({"message": "over http"})
                .as_object()
                .cloned(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&result.content[0], ContentBlock::Text(t) if t.text == "Echo: over http"),
        "{result:?}"
    );
    // Several calls in flight on one session.
    let calls = (0..8).map(|i| {
        mounts.call_tool(
            "everything__echo",
            serde_json::json!({"message": format!("n{i}")})
                .as_object()
                .cloned(),
        )
    });
    for (i, result) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        let result = result.unwrap();
        assert!(
            matches!(&result.content[0], ContentBlock::Text(t) if t.text == format!("Echo: n{i}"))
        );
    }
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_endpoints_are_reported_and_isolated() {
    let (_e500, p500) = bad_http("500");
    let (_e401, p401) = bad_http("401");
    let (_hang, phang) = bad_http("hang-headers");
    let (_stream, pstream) = bad_http("hang-stream");
    let refused = free_port();
    let (_everything, pev) = everything_http();
    let config = format!(
        r#"{{"mcpServers": {{
  "page": {{"url": "http://127.0.0.1:{pev}/wrong-path"}},
  "nowhere": {{"url": "http://no-such-host.invalid/mcp"}},
  "e500": {{"url": "http://127.0.0.1:{p500}/mcp"}},
  "e401": {{"url": "http://127.0.0.1:{p401}/mcp", "headers": {{"Authorization": "Bearer wrong"}}}},
  "hang": {{"url": "http://127.0.0.1:{phang}/mcp", "timeout": {{"startup": 1}}}},
  "stream": {{"url": "http://127.0.0.1:{pstream}/mcp", "timeout": {{"startup": 1}}}},
  "refused": {{"url": "http://127.0.0.1:{refused}/mcp"}},
  "docs": {{"command": "python3", "args": ["{bad}", "normal"]}}
}}}}"#,
        bad = fixture("bad_server.py")
    );
    let started = std::time::Instant::now();
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions::default(),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let cause = |name: &str| {
        mounts
            .failures()
            .iter()
            .find(|f| f.server == name)
            .map(|f| f.cause.clone())
            .unwrap_or_default()
    };
    assert!(
        cause("e500").starts_with("handshake failed: HTTP 500 Internal Server Error"),
        "{}",
        cause("e500")
    );
    // Express's 404 page (server-everything at a wrong path) is its title, once.
    assert_eq!(
        cause("page"),
        format!(
            "handshake failed: unexpected server response: HTTP 404 Not Found (an HTML page: \
             \"Error: Cannot POST /wrong-path\") (http://127.0.0.1:{pev}/wrong-path)"
        )
    );
    assert_eq!(
        cause("nowhere").matches("no-such-host.invalid").count(),
        1,
        "the URL once: {}",
        cause("nowhere")
    );
    assert!(
        cause("nowhere").starts_with("cannot connect: the host name does not resolve"),
        "{}",
        cause("nowhere")
    );
    assert!(
        cause("e401").starts_with("authorization required"),
        "{}",
        cause("e401")
    );
    assert!(
        cause("e401").contains("is the token in its headers set and valid?"),
        "{}",
        cause("e401")
    );
    assert!(
        cause("hang").contains("did not start within 1s (startup timeout; http"),
        "{}",
        cause("hang")
    );
    assert!(
        cause("stream").contains("did not start within 1s (startup timeout; http"),
        "{}",
        cause("stream")
    );
    assert!(
        cause("refused").starts_with("cannot connect: Connection refused"),
        "{}",
        cause("refused")
    );
    let kind = |name: &str| {
        mounts
            .failures()
            .iter()
            .find(|f| f.server == name)
            .map(|f| f.kind)
            .unwrap()
    };
    assert_eq!(kind("hang"), prise_mcp::MountFailure::Timeout);
    assert_eq!(kind("refused"), prise_mcp::MountFailure::Handshake);
    assert_eq!(mounts.failures().len(), 7);
    // The healthy neighbour is untouched.
    let result = mounts
        .call_tool(
            "docs__echo",
            serde_json::json!({"message": "ok"}).as_object().cloned(),
        )
        .await
        .unwrap();
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "echo: ok"));
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_legacy_sse() {
    let (_server, port) = everything("sse");
    let (_bad, bad_port) = bad_http("500");
    let config = format!(
        r#"{{"mcpServers": {{
  "old": {{"type": "sse", "url": "http://127.0.0.1:{port}/sse"}},
  "wrong": {{"type": "sse", "url": "http://127.0.0.1:{bad_port}/sse"}}
}}}}"#
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions::default(),
    )
    .await;
    let failure = &mounts.failures()[0];
    assert_eq!(failure.server, "wrong");
    assert!(
        failure
            .cause
            .starts_with("the event stream answered HTTP 405"),
        "{}",
        failure.cause
    );
    let mount = &mounts.mounts()[0];
    assert_eq!(mount.transport(), "sse");
    assert_eq!(mount.tools().len(), 14);
    let result = mounts
        .call_tool(
            "old__echo",
            serde_json::json!({"message": "legacy"})
                .as_object()
                .cloned(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&result.content[0], ContentBlock::Text(t) if t.text == "Echo: legacy"),
        "{result:?}"
    );
    // Resources travel the same way.
    let (_, resource) = &mounts.resources()[0];
    assert!(
        !mounts
            .read_resource(&resource.uri, None)
            .await
            .unwrap()
            .contents
            .is_empty()
    );
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_session_is_reinitialised_once() {
    let (server, port) = everything_http();
    let config =
        format!(r#"{{"mcpServers": {{"everything": {{"url": "http://127.0.0.1:{port}/mcp"}}}}}}"#);
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions::default(),
    )
    .await;
    let echo = |message: &'static str| {
        mounts.call_tool(
            "everything__echo",
            serde_json::json!({"message": message}).as_object().cloned(),
        )
    };
    assert!(echo("before").await.is_ok());
    // A restarted server has forgotten the session: server-everything answers 400.
    drop(server);
    let (_server, _) = everything_on("streamableHttp", port);
    // Bounded, so that a regression fails here rather than at the 60 s call timeout.
    let result = tokio::time::timeout(Duration::from_secs(10), echo("after"))
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&result.content[0], ContentBlock::Text(t) if t.text == "Echo: after"),
        "{result:?}"
    );
    mounts.close().await;
}

/// Over both HTTP transports, an answer that holds more JSON values than its size
/// limit allows (15 MiB of `[1,1,...]`) fails its call at once, unparsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_with_too_many_values_are_not_parsed() {
    for (mode, kind, path) in [("http", "http", "/mcp"), ("sse", "sse", "/sse")] {
        let (_server, base) = common::python_fixture("values_http_server.py", &[mode]);
        let config = format!(
            r#"{{"mcpServers": {{"v": {{"type": "{kind}", "url": "{}{path}", "protocol": "legacy"}}}}}}"#,
            base.trim()
        );
        let mounts = Mounts::start(
            servers(&config).into_iter().map(Source::from).collect(),
            common::quiet_options(),
        )
        .await;
        assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
        let error = mounts.call_tool("v__values", None).await.unwrap_err();
        assert!(
            matches!(error, prise_mcp::CallError::TooManyValues { .. }),
            "{mode}: {error}"
        );
        assert!(mounts.call_tool("v__echo", None).await.is_ok(), "{mode}");
        mounts.close().await;
    }
    assert!(
        common::peak_mib() < 160,
        "peak RSS {} MiB",
        common::peak_mib()
    );
}
