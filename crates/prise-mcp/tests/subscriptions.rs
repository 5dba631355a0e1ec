//! Listening to servers: resource subscriptions and list changes, against a server on
//! the official Python SDK (mcp 2.3). At 2026-07-28 it sends news only on a
//! `subscriptions/listen` stream, which prise opens for every connection and opens
//! again for each change of the resources subscribed to; at the dated versions it
//! offers no subscriptions, which prise says.

mod common;

use std::time::Duration;

use common::{fixture, mount_all, peers, quiet_options};
use prise_mcp::{CallError, MountEvent, Mounts};
use serde_json::json;
use tokio::sync::broadcast;

async fn mount(protocol: &str) -> Mounts {
    let config = json!({"mcpServers": {"l": {
        "command": peers().join("venv/bin/python"),
        "args": [fixture("listening_server.py")],
        "protocol": protocol,
        "timeout": {"startup": 60},
    }}});
    mount_all(&config, quiet_options()).await
}

/// The next event `wanted` picks, within 20 s.
async fn next<T>(
    events: &mut broadcast::Receiver<MountEvent>,
    wanted: impl Fn(MountEvent) -> Option<T>,
) -> Option<T> {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(found) = wanted(events.recv().await.ok()?) {
                return Some(found);
            }
        }
    })
    .await
    .ok()
    .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_tells_of_updates_and_list_changes_on_its_stream() {
    let mounts = mount("modern").await;
    let mut events = mounts.subscribe();
    // The stream every connection opens carries list changes.
    mounts.call_tool("l__grow", None).await.unwrap();
    let changed = next(&mut events, |e| match e {
        MountEvent::ListChanged { what, .. } => Some(what),
        _ => None,
    })
    .await;
    assert_eq!(changed, Some(prise_mcp::Listing::Tools));
    let names: Vec<String> = mounts.tools().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"l__grown_1".to_owned()), "{names:?}");

    mounts
        .subscribe_resource("notes://today", None)
        .await
        .unwrap();
    mounts.call_tool("l__touch", None).await.unwrap();
    let updated = next(&mut events, |e| match e {
        MountEvent::ResourceUpdated { server, uri } => Some((server, uri)),
        _ => None,
    })
    .await;
    assert_eq!(updated, Some(("l".to_owned(), "notes://today".to_owned())));

    // The stream opened again without the resource still carries list changes, and
    // no more updates.
    mounts
        .unsubscribe_resource("notes://today", None)
        .await
        .unwrap();
    mounts.call_tool("l__touch", None).await.unwrap();
    mounts.call_tool("l__grow", None).await.unwrap();
    let changed = next(&mut events, |e| match e {
        MountEvent::ListChanged { what, .. } => Some(what),
        MountEvent::ResourceUpdated { uri, .. } => panic!("an update after unsubscribing: {uri}"),
        _ => None,
    })
    .await;
    assert_eq!(changed, Some(prise_mcp::Listing::Tools));
    let names: Vec<String> = mounts.tools().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"l__grown_2".to_owned()), "{names:?}");
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_subscriptions_says_so() {
    let mounts = mount("legacy").await;
    let Err(CallError::Transport { cause, method, .. }) =
        mounts.subscribe_resource("notes://today", None).await
    else {
        panic!("subscribed to a server that offers no subscriptions");
    };
    assert_eq!(method, "resources/subscribe");
    assert!(
        cause.contains("does not offer resource subscriptions"),
        "{cause}"
    );
    mounts.close().await;
}
