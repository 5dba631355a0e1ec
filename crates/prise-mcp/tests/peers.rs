//! Mounting real third-party servers: the npm reference servers, mcp-server-time
//! (Python, speaks 2026-07-28), and a server written with the official Python SDK.

mod common;

use std::time::Duration;

use common::{alive, eventually, fixture, peers, servers};
use prise_mcp::model::{ContentBlock, ResourceContents};
use prise_mcp::{MountOptions, Mounts, Source, State};

fn text_of(result: &prise_mcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn options(logs: &std::path::Path) -> MountOptions {
    MountOptions {
        log_dir: Some(logs.to_owned()),
        ..MountOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_servers_mount_side_by_side_with_a_broken_one() {
    let peers = peers();
    let npm = peers.join("npm/node_modules/.bin");
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("hello.txt"), "hello from a file\n").unwrap();
    let logs = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{{"mcpServers": {{
  "everything": {{"command": "node", "args": ["{npm}/mcp-server-everything", "stdio"]}},
  "filesystem": {{"command": "node", "args": ["{npm}/mcp-server-filesystem", "{files}"]}},
  "time": {{"command": "{venv}/bin/mcp-server-time", "args": ["--local-timezone", "UTC"]}},
  "broken": {{"command": "sh", "args": ["-c", "echo 'broken: cannot find module' >&2; exit 3"]}}
}}}}"#,
        npm = npm.display(),
        files = files.path().display(),
        venv = peers.join("venv").display(),
    );
    let sources = servers(&config).into_iter().map(Source::from).collect();
    // server-filesystem serves the client's roots, when it offers some, instead of the
    // folders on its command line.
    let mounts = Mounts::start(
        sources,
        MountOptions {
            roots: Some(vec![prise_mcp::folder_root(files.path()).unwrap()]),
            eras: Some(prise_mcp::eras::EraCache::at(logs.path().join("eras.json"))),
            ..options(logs.path())
        },
    )
    .await;

    let states: Vec<(String, bool)> = mounts
        .statuses()
        .into_iter()
        .map(|status| (status.name, status.state == State::Ready))
        .collect();
    assert_eq!(
        states,
        [
            ("everything".into(), true),
            ("filesystem".into(), true),
            ("time".into(), true),
            ("broken".into(), false)
        ]
    );
    let broken = &mounts.failures()[0];
    assert_eq!(broken.server, "broken");
    assert!(broken.cause.contains("exit status: 3"), "{}", broken.cause);
    assert_eq!(broken.stderr_tail, ["broken: cannot find module"]);
    assert!(
        std::fs::read_to_string(logs.path().join("broken.log"))
            .unwrap()
            .contains("cannot find module")
    );

    let by_server = |server: &str| {
        mounts
            .tools()
            .into_iter()
            .filter(|t| t.server == server)
            .collect::<Vec<_>>()
    };
    // server-everything lists 13 tools to a client without capabilities; prise offers
    // roots and elicitation, which add one tool each (sampling would add a 16th).
    let everything = by_server("everything");
    assert_eq!(
        everything.len(),
        15,
        "{:?}",
        everything.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert!(everything.iter().any(|t| t.name == "everything__echo"));
    assert!(
        everything
            .iter()
            .any(|t| t.name == "everything__trigger-elicitation-request")
    );
    assert_eq!(by_server("filesystem").len(), 14);
    let time: Vec<String> = by_server("time").into_iter().map(|t| t.name).collect();
    assert_eq!(time, ["time__get_current_time", "time__convert_time"]);

    // The eras: the reference servers speak the dated versions, mcp-server-time the
    // stateless revision.
    let version = |name: &str| {
        let mount = mounts.mounts().iter().find(|m| m.name() == name).unwrap();
        mount.peer_info().unwrap().protocol_version.to_string()
    };
    assert_eq!(version("everything"), "2025-11-25");
    assert_eq!(version("time"), "2026-07-28");
    // ... and prise remembers which is which, to ask directly next time.
    let eras: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(logs.path().join("eras.json")).unwrap())
            .unwrap();
    let era = |name: &str| {
        eras.iter()
            .find(|(k, _)| k.starts_with(&format!("{name} ")))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(era("everything"), Some("legacy".into()));
    assert_eq!(era("time"), Some("modern".into()));

    let echo = mounts
        .call_tool(
            "everything__echo",
            Some(
                serde_json::json!({"message": "hi"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&echo), "Echo: hi");
    assert_ne!(echo.is_error, Some(true));

    let read = mounts
        .call_tool(
            "filesystem__read_text_file",
            Some(
                serde_json::json!({"path": files.path().join("hello.txt")})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&read).trim(), "hello from a file");

    let now = mounts
        .call_tool(
            "time__get_current_time",
            Some(
                serde_json::json!({"timezone": "UTC"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert!(
        text_of(&now).contains("\"timezone\": \"UTC\""),
        "{}",
        text_of(&now)
    );

    // A tool error is a result with isError, not a transport error.
    let bad = mounts
        .call_tool(
            "time__get_current_time",
            Some(
                serde_json::json!({"timezone": "Mars/Olympus"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));

    // Resources and prompts.
    let resources = mounts.resources();
    assert_eq!(
        resources.iter().filter(|(s, _)| s == "everything").count(),
        7
    );
    assert_eq!(mounts.resource_templates().len(), 2);
    let (_, first) = &resources[0];
    let contents = mounts.read_resource(&first.uri, None).await.unwrap();
    assert!(
        matches!(&contents.contents[0], ResourceContents::TextResourceContents { text, .. } if !text.is_empty())
    );
    assert_eq!(mounts.prompts().len(), 4);
    let prompt = mounts
        .get_prompt(
            "everything__args-prompt",
            Some(
                serde_json::json!({"city": "Lyon"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert!(serde_json::to_string(&prompt).unwrap().contains("Lyon"));

    // Closing leaves nothing behind.
    let pids: Vec<u32> = mounts.mounts().iter().filter_map(|m| m.pid()).collect();
    assert_eq!(pids.len(), 3, "{pids:?}");
    mounts.close().await;
    assert!(
        eventually(Duration::from_secs(5), || pids
            .iter()
            .all(|&pid| !alive(pid)))
        .await,
        "left running: {pids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_resource_then_tool() {
    let peers = peers();
    let logs = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{{"mcpServers": {{"weather": {{"command": "{}", "args": ["{}"]}}}}}}"#,
        peers.join("venv/bin/python").display(),
        fixture("weather_server.py")
    );
    let mounts = Mounts::start(
        servers(&config).into_iter().map(Source::from).collect(),
        options(logs.path()),
    )
    .await;
    assert!(mounts.failures().is_empty(), "{:?}", mounts.failures());
    // The flow of the seed article: read the cities, then ask for one.
    let cities = mounts
        .read_resource("weather://cities", None)
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &cities.contents[0] else {
        panic!("{cities:?}")
    };
    assert_eq!(text, "beijing, guangzhou, shanghai");
    let weather = mounts
        .call_tool(
            "weather__get_weather",
            Some(
                serde_json::json!({"city": "Beijing"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    let structured = weather.structured_content.clone().unwrap_or_default();
    assert!(
        text_of(&weather).contains("rainy") || structured.to_string().contains("rainy"),
        "{weather:?}"
    );
    let unsupported = mounts
        .call_tool(
            "weather__get_weather",
            Some(
                serde_json::json!({"city": "Atlantis"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(unsupported.is_error, Some(true));
    // The SDK words the error itself ("Error executing tool get_weather").
    assert!(
        text_of(&unsupported).contains("get_weather"),
        "{}",
        text_of(&unsupported)
    );
    mounts.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_is_answered_by_the_configured_elicitor() {
    let npm = peers().join("npm/node_modules/.bin");
    let config = format!(
        r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}}}}}}"#,
        npm.display()
    );
    for (elicitor, expected) in [
        (
            std::sync::Arc::new(prise_mcp::elicit::Decline)
                as std::sync::Arc<dyn prise_mcp::Elicitor>,
            "\"action\": \"decline\"",
        ),
        (
            std::sync::Arc::new(prise_mcp::elicit::AcceptDefaults),
            "\"action\": \"accept\"",
        ),
    ] {
        let options = MountOptions {
            elicitor,
            log_dir: None,
            ..MountOptions::default()
        };
        let mounts = Mounts::start(
            servers(&config).into_iter().map(Source::from).collect(),
            options,
        )
        .await;
        let result = mounts
            .call_tool("everything__trigger-elicitation-request", None)
            .await
            .unwrap();
        assert!(text_of(&result).contains(expected), "{}", text_of(&result));
        mounts.close().await;
    }
}
