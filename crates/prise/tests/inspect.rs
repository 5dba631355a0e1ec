//! The inspector commands on the embedded docs server (no configuration, no network)
//! and on real peers, with their exit codes.

mod common;

use common::{peers, prise};

use predicates::prelude::*;
use serde_json::json;

#[test]
fn with_no_configuration_the_embedded_docs_are_mounted() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .arg("tools")
        .assert()
        .success()
        .stdout(predicate::str::contains("docs__grep_docs"))
        .stdout(predicate::str::contains("docs__read_doc"))
        .stdout(predicate::str::contains("docs__list_docs"));
    prise(home.path())
        .args(["call", "docs__grep_docs", r#"{"keyword":"config"}"#])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"^[\w/.-]+\.md:\d+: ").unwrap())
        .stdout(predicate::str::contains("\nREADME.md:"));
    prise(home.path())
        .args([
            "call",
            "docs__read_doc",
            r#"{"path":"docs-server.md","start":1,"end":1}"#,
        ])
        .assert()
        .success()
        .stdout("1: # The documentation server\n");
    prise(home.path())
        .args(["read", "docs://mounting.md"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("# Mounting servers\n"));
    prise(home.path())
        .args([
            "prompt",
            "docs__cite_answer",
            "question=How do I mount a server?",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Question: How do I mount a server?",
        ));
}

#[test]
fn tool_errors_exit_1_and_wrong_names_exit_2() {
    let home = tempfile::tempdir().unwrap();
    // isError: the result is printed, and the job failed.
    prise(home.path())
        .args(["call", "docs__read_doc", r#"{"path":"../etc/passwd"}"#])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "error: path must not contain '..'",
        ))
        .stderr("error: docs__read_doc reported an error\n");
    prise(home.path())
        .args(["call", "docs__grep_doc", "{}"])
        .assert()
        .code(2)
        .stderr("error: no tool named docs__grep_doc; did you mean docs__grep_docs?\nhint: `prise tools` lists the tools\n");
    prise(home.path())
        .args(["call", "docs__grep_docs", "[1]"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: tool arguments must be a JSON object",
        ));
    // Arguments from stdin.
    prise(home.path())
        .args(["call", "docs__grep_docs", "-"])
        .write_stdin(r#"{"keyword":"zzz-no-such-word"}"#)
        .assert()
        .success()
        .stdout("no match for zzz-no-such-word\n");
}

#[test]
fn json_output_parses() {
    let home = tempfile::tempdir().unwrap();
    let out = prise(home.path())
        .args(["tools", "--json"])
        .output()
        .unwrap();
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 3);
    assert_eq!(
        tools[0]["tool"]["inputSchema"]["properties"]["keyword"]["type"],
        "string"
    );
    let out = prise(home.path())
        .args(["servers", "--json"])
        .output()
        .unwrap();
    let servers: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(servers[0]["name"], "docs");
    assert_eq!(servers[0]["state"], "ready");
    assert_eq!(servers[0]["tools"], 3);
}

#[test]
fn servers_shows_healthy_and_failed_peers() {
    let home = tempfile::tempdir().unwrap();
    let npm = peers().join("npm/node_modules/.bin");
    let config = home.path().join(".mcp.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{
  "everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}},
  "broken": {{"command": "sh", "args": ["-c", "echo 'no such module' >&2; exit 1"]}},
  "off": {{"command": "x", "disabled": true}}
}}}}"#,
            npm.display()
        ),
    )
    .unwrap();
    // Health by exit code: an enabled server failed.
    prise(home.path())
        .arg("servers")
        .assert()
        .code(1)
        .stderr("error: 1 of 2 enabled servers could not be mounted: broken\n")
        .stdout(predicate::str::is_match(r"everything\s+ready\s+stdio\s+2025-11-25\s+mcp-servers/everything \S+\s+14\s+\d+\s+7\s+4\s+\d+ ms").unwrap())
        // The total of what the tools cost every request, under the table.
        .stdout(predicate::str::is_match(r"\n14 tools: about \d+ tokens of definitions in each request").unwrap())
        .stdout(predicate::str::is_match(r"broken\s+failed").unwrap())
        .stdout(predicate::str::is_match(r"off\s+disabled").unwrap())
        .stdout(predicate::str::contains("server broken: closed the connection during the handshake"))
        .stdout(predicate::str::contains("  | no such module"));
    prise(home.path())
        .args(["call", "everything__echo", r#"{"message":"hi"}"#])
        .assert()
        .success()
        .stdout("Echo: hi\n")
        // The call needs one server: the broken one is not even started.
        .stderr("");
}

/// A command that names a server starts only that server: a slow one and a broken
/// one elsewhere in the file cost it nothing, and names that are wrong or disabled
/// are said to be, with exit 2.
#[test]
fn commands_that_name_a_server_start_only_that_server() {
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# A\nthe answer is 42\n").unwrap();
    let started = home.path().join("slow-started");
    std::fs::write(
        home.path().join(".mcp.json"),
        json!({"mcpServers": {
            "slow": {"command": "sh", "args": ["-c", format!("touch {}; sleep 30", started.display())]},
            "broken": {"command": "sh", "args": ["-c", "echo 'no such module' >&2; exit 1"]},
            "mine": {"command": common::prise_bin(), "args": ["serve", "docs", docs]},
            "off": {"command": "x", "disabled": true}
        }})
        .to_string(),
    )
    .unwrap();
    prise(home.path())
        .args(["call", "mine__grep_docs", r#"{"keyword":"ANSWER"}"#])
        .assert()
        .success()
        .stdout("a.md:2: the answer is 42\n")
        .stderr("");
    prise(home.path())
        .args(["tools", "mine"])
        .assert()
        .success()
        .stdout(predicate::str::contains("mine__read_doc"))
        .stderr("");
    prise(home.path())
        .args(["prompt", "mine__cite_answer", "question=why"])
        .assert()
        .success();
    assert!(!started.exists(), "the slow server was started");

    // Names that lead nowhere.
    prise(home.path())
        .args(["tools", "ghost"])
        .assert()
        .code(2)
        .stderr(
            "error: no server named ghost\nhint: `prise servers` lists the configured servers\n",
        );
    prise(home.path())
        .args(["call", "mne__grep_docs"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: no server named mne (in mne__grep_docs); did you mean mine?\n",
        ));
    prise(home.path())
        .args(["call", "mine__grep_doc"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean mine__grep_docs?"));
    // A disabled server says so, whichever command names it.
    for args in [
        vec!["call", "off__anything"],
        vec!["tools", "off"],
        vec!["prompts", "off"],
        vec!["prompt", "off__p"],
        vec!["read", "x://y", "--server", "off"],
    ] {
        prise(home.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with(
                "error: server off is disabled\nhint: set \"disabled\": false for it in ",
            ));
    }
    // The named server failing is the command's error, with its own words.
    prise(home.path())
        .args(["tools", "broken"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: server broken: closed the connection",
        ))
        .stderr(predicate::str::contains("  | no such module"));
    assert!(!started.exists(), "the slow server was started");
}

/// server-filesystem configured on `notes`, prise run from another folder: the server
/// keeps its folder, every time; roots are offered only when asked for, and then they
/// are in force for the very first call.
#[test]
fn a_server_keeps_its_configured_folder_unless_roots_are_asked_for() {
    let home = tempfile::tempdir().unwrap();
    let base = home.path().canonicalize().unwrap();
    for dir in ["notes", "code", "other"] {
        std::fs::create_dir(base.join(dir)).unwrap();
        std::fs::write(base.join(dir).join("x.txt"), format!("in {dir}\n")).unwrap();
    }
    let fs = peers().join("npm/node_modules/.bin/mcp-server-filesystem");
    let config = |roots: &str| {
        format!(
            r#"{{"mcpServers": {{"fs": {{"command": "node", "args": ["{}", "{}"]{roots}}}}}}}"#,
            fs.display(),
            base.join("notes").display()
        )
    };
    std::fs::write(base.join("fs.json"), config("")).unwrap();
    let read = |extra: &[&str], dir: &str| {
        let path = base.join(dir).join("x.txt");
        let mut cmd = prise(home.path());
        cmd.current_dir(base.join("code"))
            .arg("-c")
            .arg(base.join("fs.json"))
            .args(extra)
            .args(["call", "fs__read_text_file"])
            .arg(json!({ "path": path }).to_string());
        cmd.assert()
    };
    // The call comes right after mounting: before the fix it raced the server's
    // switch to the working directory and was denied or allowed by luck.
    for _ in 0..5 {
        read(&[], "notes").success().stdout("in notes\n");
        read(&[], "code")
            .code(1)
            .stdout(predicate::str::contains("outside allowed directories"));
    }
    let other = base.join("other");
    for _ in 0..5 {
        read(&["--root", other.to_str().unwrap()], "other")
            .success()
            .stdout("in other\n");
    }
    // The same from the configuration: a server's own "roots".
    std::fs::write(
        base.join("fs.json"),
        config(&format!(r#", "roots": ["{}"]"#, other.display())),
    )
    .unwrap();
    read(&[], "other").success().stdout("in other\n");
    read(&[], "notes").code(1);

    // server-everything lists get-roots-list only to clients that offer roots.
    let npm = peers().join("npm/node_modules/.bin");
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}/mcp-server-everything", "stdio"]}}}}}}"#, npm.display()),
    )
    .unwrap();
    prise(home.path())
        .args(["call", "everything__get-roots-list"])
        .assert()
        .code(2);
    prise(home.path())
        .arg("--root")
        .arg(&other)
        .args(["call", "everything__get-roots-list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "URI: file://{}\n",
            other.display()
        )))
        .stdout(predicate::str::contains("(1 total)"));
    prise(home.path())
        .args(["--root", "/no/such/dir", "tools"])
        .assert()
        .code(2);
}

#[test]
fn prise_mounts_its_own_docs_server_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# A\nthe answer is 42\n").unwrap();
    let bin = common::prise_bin();
    std::fs::write(
        home.path().join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"mine": {{"command": "{}", "args": ["serve", "docs", "{}"]}}}}}}"#,
            bin.display(),
            docs.display()
        ),
    )
    .unwrap();
    prise(home.path())
        .args(["call", "mine__grep_docs", r#"{"keyword":"ANSWER"}"#])
        .assert()
        .success()
        .stdout("a.md:2: the answer is 42\n");
}

/// Servers for one run: `--with 'COMMAND ARGS'` beside the configured ones, and a
/// whole configuration given inline with `-c '{...}'`.
#[test]
fn servers_given_on_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    let everything = peers().join("npm/node_modules/.bin/mcp-server-everything");
    let time = peers().join("venv/bin/mcp-server-time");
    let with_time = format!("{} --local-timezone UTC", time.display());
    prise(home.path())
        .args(["--with", &format!("node '{}' stdio", everything.display())])
        .args(["call", "mcp-server-everything__echo", r#"{"message":"hi"}"#])
        .assert()
        .success()
        .stdout("Echo: hi\n");
    // Beside a configuration file; a clash of names is an error, not a replacement.
    std::fs::write(
        home.path().join(".mcp.json"),
        json!({"mcpServers": {"time": {"command": time, "args": ["--local-timezone", "UTC"]}}})
            .to_string(),
    )
    .unwrap();
    prise(home.path())
        .args(["--with", &format!("clock={with_time}"), "tools"])
        .assert()
        .success()
        .stdout(predicate::str::contains("time__get_current_time"))
        .stdout(predicate::str::contains("clock__get_current_time"));
    prise(home.path())
        .args(["--with", &format!("time={with_time}"), "tools"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "server \"time\" is also defined in",
        ))
        .stderr(predicate::str::contains("hint: give it another name"));
    // Inline JSON instead of a file; its mistakes are placed like a file's.
    let inline =
        json!({"mcpServers": {"t": {"command": time, "args": ["--local-timezone", "UTC"]}}})
            .to_string();
    prise(home.path())
        .args(["-c", &inline, "tools"])
        .assert()
        .success()
        .stdout(predicate::str::contains("t__convert_time"))
        .stdout(predicate::str::contains("time__").not());
    prise(home.path())
        .args([
            "-c",
            r#"{"mcpServers": {"t": {"type": "websocket", "url": "ws://x"}}}"#,
            "tools",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: --config:1:31: server \"t\": unknown type \"websocket\"",
        ));
}

/// `prise read` of a URI made from a template needs no --server, even beside another
/// server with resources; `-o FILE` writes binary contents as their bytes.
#[test]
fn read_finds_the_server_of_a_template_and_writes_files() {
    let home = tempfile::tempdir().unwrap();
    common::mount_everything_beside_docs(home.path());
    prise(home.path())
        .args(["read", "demo://resource/dynamic/text/7"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "Resource 7: This is a plaintext resource",
        ));
    let out = home.path().join("blob.bin");
    prise(home.path())
        .args(["read", "demo://resource/dynamic/blob/7", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::starts_with("wrote "));
    let bytes = std::fs::read(&out).unwrap();
    assert!(
        bytes.starts_with(b"Resource 7: This is a base64 blob"),
        "{bytes:?}"
    );
    prise(home.path())
        .args(["read", "demo://nowhere/1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no mounted server lists demo://nowhere/1 or has a resource template it fits",
        ))
        .stderr(predicate::str::contains(
            "hint: `prise resources` lists the resources and templates",
        ));
}

/// `prise tools SERVER__TOOL`: one tool in detail, and with --json both the server's
/// schema and the one the model is sent.
#[test]
fn one_tool_in_detail() {
    let home = tempfile::tempdir().unwrap();
    let npm = peers().join("npm/node_modules/.bin");
    std::fs::write(
        home.path().join(".mcp.json"),
        json!({"mcpServers": {"everything": {"command": "node", "args": [npm.join("mcp-server-everything"), "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    prise(home.path())
        .args(["tools", "everything__get-structured-content"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "everything__get-structured-content\n  Get Structured Content Tool\n  server everything, tool get-structured-content\n",
        ))
        .stdout(predicate::str::contains(
            "  location (string, required, one of \"New York\" | \"Chicago\" | \"Los Angeles\")\n      Choose city\n",
        ))
        .stdout(predicate::str::contains(
            "Annotations (hints from the server): read-only: yes, destructive: no, idempotent: yes, open world: no",
        ))
        .stdout(predicate::str::contains("Output schema:\n  {\n"));
    // The embedded docs: the model's schema loses what OpenAI-style APIs reject.
    let empty = tempfile::tempdir().unwrap();
    let out = prise(empty.path())
        .args(["tools", "docs__read_doc", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let detail: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(detail["server"], "docs");
    assert_eq!(
        detail["tool"]["inputSchema"]["properties"]["start"]["format"],
        "uint"
    );
    assert_eq!(detail["model"]["name"], "docs__read_doc");
    assert!(detail["model"]["parameters"].get("$schema").is_none());
    assert!(
        detail["model"]["parameters"]["properties"]["start"]
            .get("format")
            .is_none()
    );
    prise(empty.path())
        .args(["tools", "docs__read_docs"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: no tool named docs__read_docs; did you mean docs__read_doc?\n",
        ));
}

/// `prise prompt` reads arguments as chat does (by name or in order, one argument
/// takes every word) and checks the required ones before asking the server.
#[test]
fn prompt_arguments_by_name_or_in_order_checked_first() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".mcp.json"),
        json!({"mcpServers": {"everything": {"command": "node", "args": [peers().join("npm/node_modules/.bin/mcp-server-everything"), "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    prise(home.path())
        .args(["prompt", "everything__args-prompt", "Paris", "France"])
        .assert()
        .success()
        .stdout("user: What's weather in Paris, France?\n");
    prise(home.path())
        .args(["prompt", "everything__args-prompt", "state=Texas", "Austin"])
        .assert()
        .success()
        .stdout("user: What's weather in Austin, Texas?\n");
    prise(home.path())
        .args(["prompt", "everything__args-prompt", "state=Texas"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: everything__args-prompt needs city; e.g. prise prompt everything__args-prompt city=...\n",
        ));
    prise(home.path())
        .args(["prompt", "everything__args-prompt", "a", "b", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("\"c\" is one too many"));
    let empty = tempfile::tempdir().unwrap();
    prise(empty.path())
        .args([
            "prompt",
            "docs__cite_answer",
            "How",
            "are",
            "servers",
            "restarted?",
        ])
        .assert()
        .success()
        .stdout(predicate::str::ends_with(
            "Question: How are servers restarted?\n",
        ));
}

#[test]
fn empty_stdin_for_arguments_is_said() {
    let home = tempfile::tempdir().unwrap();
    prise(home.path())
        .args(["call", "docs__grep_docs", "-"])
        .write_stdin("  \n")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: no arguments on stdin"));
}
