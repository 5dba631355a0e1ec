//! A tool call is sent once. Against a hostile server (`fixtures/charging_server.py`)
//! whose event stream answers 401 all along, as a stream reconnecting with an old
//! token would: a call that fails for another reason, or whose outcome is unknown
//! (it timed out), is never sent again after a sign-in; a call whose own answer
//! was 401 is sent again once, after signing in again.

mod common;

use std::time::Duration;

use common::{eventually, http_json, python_fixture};
use prise_mcp::{CallError, Mounts};

fn charges(base: &str) -> u64 {
    http_json(base, "GET", "/state")["charges"]
        .as_u64()
        .unwrap()
}

fn how(how: &str) -> Option<prise_mcp::model::JsonObject> {
    serde_json::json!({ "how": how }).as_object().cloned()
}

async fn mount(base: &str, auth: &std::path::Path) -> Mounts {
    let config = format!(
        r#"{{"mcpServers": {{"bank": {{"url": "{base}/mcp", "timeout": {{"call": 1}},
            "oauth": {{"clientId": "prise", "clientSecret": "s3cret", "clientCredentials": true}}}}}}}}"#
    );
    let mounts = common::mount_signing_in(&config, auth).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    mounts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_never_sent_twice() {
    let (_server, base) = python_fixture("charging_server.py", &[]);
    let auth = tempfile::tempdir().unwrap();
    let mounts = mount(&base, auth.path()).await;
    // The event stream reconnected and was refused: a 401 that no call received.
    let at = base.clone();
    let stream_refused = move || http_json(&at, "GET", "/state")["gets"].as_u64() >= Some(2);
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
    http_json(&base, "POST", "/revoke");
    let charged = mounts.call_tool("bank__charge", how("ok")).await;
    assert!(charged.is_ok(), "{charged:?}");
    assert_eq!(charges(&base), 3);

    // A server that refuses every token: one sign-in, one more try, then an error
    // that says so; the call never ran.
    http_json(&base, "POST", "/refuse");
    let posts_before = http_json(&base, "GET", "/state")["posts"].as_u64().unwrap();
    let refused = mounts.call_tool("bank__charge", how("ok")).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(charges(&base), 3);
    let posts = http_json(&base, "GET", "/state")["posts"].as_u64().unwrap() - posts_before;
    assert!(posts <= 8, "{posts} requests for one refused call");
    mounts.close().await;
}
