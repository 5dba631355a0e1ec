//! Stdio servers in a sandbox (`"sandbox": true`): a hostile server
//! (`fixtures/hostile_server.py`) is refused a key under `~/.ssh`, a write outside the
//! folder it was given, a TCP connection and a datagram to local ports, all of which
//! it gets without the sandbox; the reference servers and the launchers people start
//! them with work inside it; and a server the sandbox stops gets an error that says so.

mod common;

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};

use common::{peers, prise};
use serde_json::{Value, json};

fn npm(bin: &str) -> PathBuf {
    peers().join("npm/node_modules/.bin").join(bin)
}

fn venv(bin: &str) -> PathBuf {
    peers().join("venv/bin").join(bin)
}

/// A home folder with a key, and a project folder in it.
fn home_with_a_key() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    std::fs::create_dir_all(home.path().join("proj")).unwrap();
    home
}

fn write_config(home: &Path, servers: Value) {
    std::fs::write(
        home.join(".mcp.json"),
        json!({"mcpServers": servers}).to_string(),
    )
    .unwrap();
}

/// `prise call TOOL ARGS`: its stdout, after checking it succeeded.
fn call(home: &Path, tool: &str, arguments: Value) -> String {
    let out = prise(home)
        .args(["call", tool, &arguments.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the hostile server got for each attempt, and what reached the test's ports.
struct Attempts {
    read: String,
    write_outside: String,
    write_inside: String,
    connect: String,
    datagram: String,
    connections: usize,
    datagrams: usize,
}

fn attempt_everything(sandbox: Value) -> Attempts {
    let home = home_with_a_key();
    let home = home.path();
    let proj = home.join("proj");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_server.py");
    write_config(
        home,
        json!({"hostile": {"command": venv("python"), "args": [script, &proj], "sandbox": sandbox}}),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let tcp_port = listener.local_addr().unwrap().port();
    let udp_port = udp.local_addr().unwrap().port();
    let attempts = Attempts {
        read: call(home, "hostile__read", json!({"path": "~/.ssh/id_ed25519"})),
        write_outside: call(
            home,
            "hostile__write",
            json!({"path": home.join("planted.sh"), "content": "x"}),
        ),
        write_inside: call(
            home,
            "hostile__write",
            json!({"path": proj.join("notes.txt"), "content": "x"}),
        ),
        connect: call(home, "hostile__connect", json!({"port": tcp_port})),
        datagram: call(home, "hostile__datagram", json!({"port": udp_port})),
        connections: std::iter::from_fn(|| listener.accept().ok()).count(),
        datagrams: std::iter::from_fn(|| udp.recv(&mut [0; 8]).ok()).count(),
    };
    assert_eq!(
        home.join("planted.sh").exists(),
        attempts.write_outside.starts_with("done")
    );
    attempts
}

#[test]
fn a_hostile_server_is_refused_in_the_sandbox_and_not_outside_it() {
    let free = attempt_everything(json!(false));
    assert!(free.read.contains("done: PRIVATE KEY"), "{}", free.read);
    for outcome in [
        &free.write_outside,
        &free.write_inside,
        &free.connect,
        &free.datagram,
    ] {
        assert!(outcome.starts_with("done"), "{outcome}");
    }
    assert_eq!((free.connections, free.datagrams), (1, 1));

    let boxed = attempt_everything(json!(true));
    assert!(
        boxed.read.contains("refused: [Errno 13] Permission denied"),
        "{}",
        boxed.read
    );
    assert!(
        boxed
            .write_outside
            .contains("refused: [Errno 13] Permission denied"),
        "{}",
        boxed.write_outside
    );
    assert!(
        boxed.write_inside.starts_with("done"),
        "the folder it was given stays writable: {}",
        boxed.write_inside
    );
    assert!(boxed.connect.starts_with("refused"), "{}", boxed.connect);
    assert!(boxed.datagram.starts_with("refused"), "{}", boxed.datagram);
    assert_eq!(
        (boxed.connections, boxed.datagrams),
        (0, 0),
        "nothing reached the test's ports"
    );
}

#[test]
fn the_network_opens_as_far_as_allowed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let home = home_with_a_key();
    let home = home.path();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_server.py");
    write_config(
        home,
        json!({"hostile": {"command": venv("python"), "args": [script],
               "sandbox": {"allowNetwork": [format!("127.0.0.1:{port}")]}}}),
    );
    assert!(call(home, "hostile__connect", json!({"port": port})).starts_with("done"));
    assert!(call(home, "hostile__connect", json!({"port": other_port})).starts_with("refused"));
    assert!(
        call(home, "hostile__read", json!({"path": "~/.ssh/id_ed25519"})).starts_with("refused")
    );
}

#[test]
fn reference_servers_work_in_the_default_sandbox() {
    let home = home_with_a_key();
    let home = home.path();
    let proj = home.join("proj");
    common::git_repository(&proj);
    write_config(
        home,
        json!({
            "fs": {"command": "node", "args": [npm("mcp-server-filesystem"), &proj], "sandbox": true},
            "everything": {"command": "node", "args": [npm("mcp-server-everything"), "stdio"], "sandbox": true},
            "time": {"command": venv("mcp-server-time"), "args": ["--local-timezone", "UTC"], "sandbox": true},
            "git": {"command": venv("mcp-server-git"), "args": ["--repository", &proj], "sandbox": true},
            // npx finding the package installed where it runs, as in a project.
            "npx": {"command": "npx", "args": ["mcp-server-everything"], "cwd": peers().join("npm"), "sandbox": true},
        }),
    );
    let written = call(
        home,
        "fs__write_file",
        json!({"path": proj.join("a.txt"), "content": "inside"}),
    );
    assert!(written.contains("Successfully wrote"), "{written}");
    assert_eq!(
        std::fs::read_to_string(proj.join("a.txt")).unwrap(),
        "inside"
    );
    assert!(
        call(
            home,
            "fs__read_text_file",
            json!({"path": proj.join("a.txt")})
        )
        .contains("inside")
    );
    assert!(call(home, "everything__echo", json!({"message": "boxed"})).contains("Echo: boxed"));
    assert!(call(home, "npx__echo", json!({"message": "launched"})).contains("Echo: launched"));
    assert!(
        call(
            home,
            "time__get_current_time",
            json!({"timezone": "Europe/Paris"})
        )
        .contains("Europe/Paris")
    );
    let status = call(home, "git__git_status", json!({"repo_path": proj}));
    assert!(status.contains("a.txt"), "{status}");
}

#[test]
fn launchers_start_what_they_fetched_before_without_network() {
    // peers.sh ran each once with network, into caches of their own; in the sandbox
    // they run offline, writing only their caches (npm rewrites its index, uv locks).
    let home = home_with_a_key();
    let home = home.path();
    write_config(
        home,
        json!({
            "npx": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"],
                    "env": {"npm_config_cache": peers().join("npm-cache")}, "sandbox": true},
            "uvx": {"command": venv("uvx"), "args": ["--from", "mcp-server-time==2026.10.19", "mcp-server-time"],
                    "env": {"UV_CACHE_DIR": peers().join("uv-cache")}, "sandbox": true},
        }),
    );
    assert!(call(home, "npx__echo", json!({"message": "cached"})).contains("Echo: cached"));
    assert!(
        call(home, "uvx__get_current_time", json!({"timezone": "UTC"}))
            .contains("\"timezone\": \"UTC\"")
    );
}

#[test]
fn a_server_the_sandbox_stops_gets_an_error_that_says_so() {
    let home = home_with_a_key();
    let home = home.path();
    write_config(
        home,
        json!({"needy": {"command": "sh", "args": ["-c", "echo state > \"$HOME/needy.state\" || exit 3"], "sandbox": true}}),
    );
    let out = prise(home).args(["tools", "needy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the sandbox likely refused this (\"sh: 1: cannot create"),
        "{stderr}"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        stderr.contains("allowWrite") && stderr.contains("set it to false"),
        "{stderr}"
    );
    assert!(!home.join("needy.state").exists());

    // A path to write that does not exist is named before anything starts.
    write_config(
        home,
        json!({"needy": {"command": "sh", "args": ["-c", "true"], "sandbox": {"allowWrite": [home.join("missing")]}}}),
    );
    let out = prise(home).args(["tools", "needy"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "sandbox: cannot let it write {}",
            home.join("missing").display()
        )),
        "{stderr}"
    );
}
