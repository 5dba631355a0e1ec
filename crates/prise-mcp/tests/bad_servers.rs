//! Misbehaving servers (tests/fixtures/bad_server.py): each failure is clear, touches
//! nothing else, and leaves no process or file descriptor behind.

mod common;

use std::time::{Duration, Instant};

use common::{alive, eventually, fixture, peak_mib, processes_with, servers};
use prise_mcp::model::{ContentBlock, JsonObject};
use prise_mcp::{CallError, MountOptions, Mounts, Source};

/// Mounts the bad server in `mode` next to a well-behaved one, with short timeouts.
async fn mount(mode: &str, marker: &str) -> Mounts {
    mount_with(mode, marker, 2).await
}

/// [`mount`], with a call timeout of `call` seconds.
async fn mount_with(mode: &str, marker: &str, call: u64) -> Mounts {
    let script = fixture("bad_server.py");
    let config = format!(
        r#"{{"mcpServers": {{
  "bad": {{"command": "python3", "args": ["{script}", "{mode}", "{marker}"], "timeout": {{"startup": 3, "call": {call}}}, "restart": "never"}},
  "good": {{"command": "python3", "args": ["{script}", "normal", "{marker}-good"]}}
}}}}"#
    );
    let options = MountOptions {
        log_dir: None,
        ..MountOptions::default()
    };
    Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options,
    )
    .await
}

fn args(message: &str) -> Option<JsonObject> {
    serde_json::json!({"message": message}).as_object().cloned()
}

fn text(result: &prise_mcp::model::CallToolResult) -> String {
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("{other:?}"),
    }
}

/// The good neighbour still answers.
async fn good_still_works(mounts: &Mounts) {
    let result = mounts.call_tool("good__echo", args("fine")).await.unwrap();
    assert_eq!(text(&result), "echo: fine");
}

/// Closes and checks that no process with `marker` remains.
async fn close_cleanly(mounts: Mounts, marker: &str) {
    let pids = processes_with(marker);
    mounts.close().await;
    assert!(
        eventually(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))).await,
        "left running: {pids:?}"
    );
    assert!(processes_with(marker).is_empty());
}

/// The server (the first mount) reports on stderr that it received
/// `notifications/cancelled`.
async fn assert_cancelled_on_server(mounts: &Mounts) {
    let mount = &mounts.mounts()[0];
    let cancelled = || {
        mount
            .stderr_tail()
            .iter()
            .any(|l| l.starts_with("cancelled: "))
    };
    assert!(
        eventually(Duration::from_secs(3), cancelled).await,
        "{:?}",
        mount.stderr_tail()
    );
}

fn marker(name: &str) -> String {
    format!("prise-test-{name}-{}", std::process::id())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_and_partial_lines_are_skipped() {
    let m = marker("junk");
    let mounts = mount("junk", &m).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(
        text(&mounts.call_tool("bad__echo", args("a")).await.unwrap()),
        "echo: a"
    );
    good_still_works(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_is_skipped() {
    let m = marker("utf8");
    let mounts = mount("utf8", &m).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(
        text(&mounts.call_tool("bad__echo", args("b")).await.unwrap()),
        "echo: b"
    );
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mib_line_is_refused_at_once_with_bounded_memory() {
    let m = marker("huge");
    let mounts = mount("huge", &m).await;
    // Before, the dropped answer left the call waiting for its timeout (2 s here).
    let started = Instant::now();
    let error = mounts.call_tool("bad__huge", None).await.unwrap_err();
    let CallError::TooLarge { size, limit, .. } = &error else {
        panic!("{error}");
    };
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // 100 MiB of text and the JSON around it.
    assert!((100 << 20..(100 << 20) + 200).contains(size), "{size}");
    assert_eq!(*limit, 16 << 20);
    assert_eq!(
        error.to_string(),
        "server bad's answer to tools/call was 100.0 MiB, over its limit of 16.0 MiB; \
         raise \"maxMessageSize\" for bad in the configuration to accept it"
    );
    // The connection survives the dropped line.
    assert_eq!(
        text(&mounts.call_tool("bad__echo", args("after")).await.unwrap()),
        "echo: after"
    );
    // Lines over 16 MiB are dropped instead of buffered: the peak stays far
    // below the 100 MiB that was written.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(peak_kib < 96 * 1024, "peak RSS {peak_kib} KiB");
    close_cleanly(mounts, &m).await;
}

/// An answer that is not UTF-8, or holds more JSON values than its size limit
/// allows (parsing costs memory by the value), fails its call at once instead of
/// waiting for its timeout or taking memory by the gigabyte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_out_of_bounds_fail_at_once_with_bounded_memory() {
    let m = marker("answers");
    let mounts = mount("answers", &m).await;
    // Before, the line was dropped by rmcp and the call waited for its timeout.
    let error = mounts.call_tool("bad__badutf8", None).await.unwrap_err();
    assert!(matches!(error, CallError::NotUtf8 { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "server bad's answer to tools/call is not valid UTF-8, as JSON text must be; it was dropped"
    );
    // 15 MiB of `1,`: under the size limit, 7.8 million values over the value limit.
    let error = mounts.call_tool("bad__values", None).await.unwrap_err();
    let CallError::TooManyValues { limit, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(*limit, (16 << 20) / 32);
    assert!(error.to_string().contains("raise it for bad"), "{error}");
    assert_eq!(
        text(&mounts.call_tool("bad__echo", args("after")).await.unwrap()),
        "echo: after"
    );
    // Parsed, that answer took 957 MiB; dropped, the peak stays low.
    assert!(peak_mib() < 96, "peak RSS {} MiB", peak_mib());
    close_cleanly(mounts, &m).await;
}

/// A flood of `list_changed` costs a listing or two, not one per notification, and
/// nothing kept per notification (80,000 took 1.1 GB when each started a listing;
/// 20,000 here, some 280 MB that way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_list_changes_is_coalesced() {
    let m = marker("changes");
    // Reading 20,000 notifications takes a debug build a second or two.
    let mounts = mount_with("changes", &m, 60).await;
    let mut events = mounts.subscribe();
    let count = serde_json::json!({"count": 20_000}).as_object().cloned();
    let flooded = mounts.call_tool("bad__flood", count).await.unwrap();
    assert_eq!(text(&flooded), "echo: ");
    // The call waits for the listings under way, so it counts them all.
    let listed = mounts.call_tool("bad__listed", None).await.unwrap();
    let listings: u32 = text(&listed).parse().unwrap();
    // The first listing at mount, one when the flood began, one after it, and a few
    // more when notifications are handled after a listing's answer (rmcp handles
    // each on a task of its own): a handful, never one per notification.
    assert!((2..=10).contains(&listings), "{listings} listings");
    let mut changes = 0;
    while let Ok(event) = events.try_recv() {
        if let prise_mcp::MountEvent::ListChanged { what, .. } = event {
            assert_eq!(what, prise_mcp::Listing::Tools);
            changes += 1;
        }
    }
    assert!((1..=10).contains(&changes), "{changes} events");
    assert!(peak_mib() < 96, "peak RSS {} MiB", peak_mib());
    close_cleanly(mounts, &m).await;
}

/// The limit is the server's `maxMessageSize`; an answer whose id comes last (the
/// TypeScript SDK's order) is matched to its request too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_size_limit_is_configurable_and_ids_are_found_at_either_end() {
    let m = marker("huge-limit");
    let script = fixture("bad_server.py");
    let config = format!(
        r#"{{"mcpServers": {{"bad": {{"command": "python3", "args": ["{script}", "huge", "{m}"], "maxMessageSize": "3MiB", "timeout": {{"call": 20}}}}}}}}"#
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        MountOptions {
            log_dir: None,
            ..MountOptions::default()
        },
    )
    .await;
    let huge = |mib: u64, id_last: bool| {
        serde_json::json!({"mib": mib, "id_last": id_last})
            .as_object()
            .cloned()
    };
    for id_last in [false, true] {
        let error = mounts
            .call_tool("bad__huge", huge(4, id_last))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, CallError::TooLarge { limit, .. } if *limit == 3 << 20),
            "{error}"
        );
        let result = mounts
            .call_tool("bad__huge", huge(2, id_last))
            .await
            .unwrap();
        assert_eq!(text(&result).len(), 2 << 20);
    }
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_times_out_at_startup_without_delaying_the_others() {
    let m = marker("silent");
    let started = Instant::now();
    let mounts = mount("silent", &m).await;
    let failure = &mounts.failures()[0];
    assert_eq!(failure.server, "bad");
    assert!(
        failure.timed_out() && !failure.needs_sign_in(),
        "{failure:?}"
    );
    assert!(
        failure.cause.contains("did not start within 3s"),
        "{}",
        failure.cause
    );
    // Bounded by the startup timeout, not by the server.
    assert!(started.elapsed() < Duration::from_secs(10));
    good_still_works(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exiting_during_a_call_is_a_clear_error() {
    let m = marker("exit");
    let mounts = mount("exit", &m).await;
    let error = mounts.call_tool("bad__exit", None).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, CallError::Closed { .. }), "{message}");
    assert!(
        message.contains("server bad closed the connection during tools/call"),
        "{message}"
    );
    assert!(message.contains("exit status: 7"), "{message}");
    assert!(message.contains("fatal: exiting mid-call"), "{message}");
    // A later call fails at once rather than hanging.
    let again = tokio::time::timeout(
        Duration::from_secs(5),
        mounts.call_tool("bad__echo", args("x")),
    )
    .await;
    assert!(matches!(again, Ok(Err(_))), "{again:?}");
    good_still_works(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_with_the_wrong_id_times_out_naming_server_and_method() {
    let m = marker("wrongid");
    let mounts = mount("wrong-id", &m).await;
    let error = mounts.call_tool("bad__echo", args("x")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "server bad did not answer tools/call within 2 s"
    );
    good_still_works(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_flood_does_not_block_the_server() {
    let m = marker("flood");
    let mounts = mount("flood", &m).await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    assert_eq!(
        text(&mounts.call_tool("bad__echo", args("c")).await.unwrap()),
        "echo: c"
    );
    let tail = mounts.mounts()[0].stderr_tail();
    assert_eq!(tail.len(), 20);
    assert!(tail.iter().all(|l| l.chars().count() <= 400));
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_tool_names_are_listed_once() {
    let m = marker("dup");
    let mounts = mount("duplicate", &m).await;
    let names: Vec<String> = mounts
        .tools()
        .into_iter()
        .filter(|t| t.server == "bad")
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["bad__echo", "bad__other"]);
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tools_across_pages() {
    let m = marker("many");
    let mounts = mount("many", &m).await;
    let tools = mounts.tools();
    assert_eq!(tools.iter().filter(|t| t.server == "bad").count(), 10_000);
    assert_eq!(tools[9_999].name, "bad__t09999");
    let result = mounts.call_tool("bad__t05000", args("deep")).await.unwrap();
    assert_eq!(text(&result), "echo: deep");
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    let m = marker("cancel");
    let mounts = mount("normal", &m).await;
    let error = mounts.call_tool("bad__slow", None).await.unwrap_err();
    assert!(matches!(error, CallError::Timeout { .. }), "{error}");
    assert_cancelled_on_server(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_is_cancelled_on_the_server() {
    let m = marker("drop");
    let mounts = mount("normal", &m).await;
    // The caller gives up long before the call timeout.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(200),
        mounts.call_tool("bad__slow", None),
    )
    .await;
    assert!(gave_up.is_err());
    assert_cancelled_on_server(&mounts).await;
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_reported_as_events() {
    let m = marker("progress");
    let mounts = mount("normal", &m).await;
    let mut events = mounts.subscribe();
    let result = mounts.call_tool("bad__progress", args("p")).await.unwrap();
    assert_eq!(text(&result), "echo: p");
    let mut seen = Vec::new();
    while let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(500), events.recv()).await
    {
        if let prise_mcp::MountEvent::Progress {
            server,
            progress,
            total,
            message,
            ..
        } = event
        {
            seen.push((server, progress, total, message));
        }
    }
    // rmcp handles notifications concurrently: their order is not guaranteed.
    seen.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert_eq!(
        seen,
        [
            ("bad".to_owned(), 1.0, Some(2.0), Some("step 1".to_owned())),
            ("bad".to_owned(), 2.0, Some(2.0), Some("step 2".to_owned()))
        ]
    );
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_notifications_relist_the_tools() {
    let m = marker("grow");
    let mounts = mount("normal", &m).await;
    let before = mounts.tools().len();
    mounts.call_tool("bad__grow", None).await.unwrap();
    assert!(
        eventually(Duration::from_secs(3), || mounts.tools().len()
            == before + 1)
        .await
    );
    let grown = mounts
        .tools()
        .into_iter()
        .find(|t| t.name.starts_with("bad__grown"))
        .unwrap();
    // The new tool is routed like the others.
    let result = mounts.call_tool(&grown.name, args("new")).await.unwrap();
    assert_eq!(text(&result), "echo: new");
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_get_a_minimal_environment() {
    let m = marker("env");
    let script = fixture("bad_server.py");
    let config = format!(
        r#"{{"mcpServers": {{
  "min": {{"command": "python3", "args": ["{script}", "normal", "{m}"], "env": {{"GIVEN": "yes"}}}},
  "all": {{"command": "python3", "args": ["{script}", "normal", "{m}-all"], "inheritEnv": true}}
}}}}"#
    );
    let options = MountOptions {
        log_dir: None,
        ..MountOptions::default()
    };
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    let names = |tool: &'static str| {
        let mounts = &mounts;
        async move { text(&mounts.call_tool(tool, None).await.unwrap()) }
    };
    let minimal = names("min__env").await;
    let inherited = names("all__env").await;
    // Cargo sets CARGO_* variables for tests: a full environment has them, a minimal one not.
    assert!(!minimal.contains("CARGO"), "{minimal}");
    assert!(minimal.split(' ').any(|v| v == "GIVEN"), "{minimal}");
    assert!(minimal.split(' ').any(|v| v == "PATH"), "{minimal}");
    assert!(inherited.contains("CARGO_MANIFEST_DIR"), "{inherited}");
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_restarted_with_backoff() {
    let m = marker("restart");
    let script = fixture("bad_server.py");
    let config = format!(
        r#"{{"mcpServers": {{
  "flaky": {{"command": "python3", "args": ["{script}", "normal", "{m}"], "restart": "on-failure", "maxRestarts": 2}},
  "fragile": {{"command": "python3", "args": ["{script}", "normal", "{m}-fragile"], "restart": "never"}}
}}}}"#
    );
    let options = MountOptions {
        log_dir: None,
        ..MountOptions::default()
    };
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    let mut events = mounts.subscribe();
    let first_pid = mounts.mounts()[0].pid().unwrap();

    // The call in flight when the server dies gets a clear error, not a hang.
    let error = mounts.call_tool("flaky__crash", None).await.unwrap_err();
    assert!(matches!(error, CallError::Closed { .. }), "{error}");
    assert!(error.to_string().contains("exit status: 9"), "{error}");

    let mut restarted = false;
    while let Ok(Ok(event)) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
        match event {
            prise_mcp::MountEvent::Restarting {
                server,
                attempt,
                delay,
            } => {
                assert_eq!(
                    (server.as_str(), attempt, delay),
                    ("flaky", 1, Duration::from_millis(500))
                );
            }
            prise_mcp::MountEvent::Ready { server, .. } if server == "flaky" => {
                restarted = true;
                break;
            }
            _ => {}
        }
    }
    assert!(restarted);
    let second_pid = mounts.mounts()[0].pid().unwrap();
    assert_ne!(first_pid, second_pid);
    assert!(!alive(first_pid));
    assert_eq!(
        text(&mounts.call_tool("flaky__echo", args("back")).await.unwrap()),
        "echo: back"
    );

    // With `restart: never`, a crashed server stays down and says so at once.
    let _ = mounts.call_tool("fragile__crash", None).await.unwrap_err();
    let again = tokio::time::timeout(
        Duration::from_secs(2),
        mounts.call_tool("fragile__echo", args("x")),
    )
    .await;
    assert!(
        matches!(again, Ok(Err(CallError::Closed { .. }))),
        "{again:?}"
    );
    close_cleanly(mounts, &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_era_is_remembered_and_asked_directly() {
    let m = marker("eras");
    let state = tempfile::tempdir().unwrap();
    let eras = prise_mcp::eras::EraCache::at(state.path().join("eras.json"));
    let config = format!(
        r#"{{"mcpServers": {{"srv": {{"command": "python3", "args": ["{}", "normal", "{m}"]}}}}}}"#,
        fixture("bad_server.py")
    );
    let methods = |mounts: &Mounts| -> Vec<String> {
        mounts.mounts()[0]
            .stderr_tail()
            .into_iter()
            .filter_map(|l| l.strip_prefix("method: ").map(str::to_owned))
            .collect()
    };
    let options = MountOptions {
        log_dir: None,
        eras: Some(eras.clone()),
        ..MountOptions::default()
    };
    let first = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options.clone(),
    )
    .await;
    assert_eq!(methods(&first)[..2], ["server/discover", "initialize"]);
    close_cleanly(first, &m).await;
    let remembered = std::fs::read_to_string(state.path().join("eras.json")).unwrap();
    assert!(remembered.contains("\"legacy\""), "{remembered}");

    let second = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    assert_eq!(methods(&second)[0], "initialize");
    close_cleanly(second, &m).await;
}
