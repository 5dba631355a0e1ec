//! The gateway scaled out: two replicas of `prise serve gateway --http` behind HAProxy
//! with the shipped `deploy/haproxy.cfg`, a dated-era client and a 2026-07-28 client
//! (the official Python SDK) making 1,000 calls each. Every call is answered; the
//! dated client's session stays on one replica, the stateless client is spread over
//! both.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{HttpServer, peers, wait_until};
use serde_json::{Value, json};

const CALLS: usize = 1000;

/// HAProxy in the foreground, stopped when dropped.
struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn two_replicas_behind_haproxy_serve_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let servers = json!({"mcpServers": {"bad": {"command": "python3", "args": [common::bad_server(), "normal"]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let config = config.display().to_string();
    let replica = |name: &str| {
        let log = dir.path().join(format!("{name}.jsonl"));
        let log_arg = log.display().to_string();
        let server = HttpServer::start(
            &[
                "--config",
                &config,
                "serve",
                "gateway",
                "--request-log",
                &log_arg,
            ],
            &[],
        );
        (server, log)
    };
    let (a, a_log) = replica("a");
    let (b, b_log) = replica("b");
    let authority = |server: &HttpServer| {
        server
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    };
    let port = free_port();
    let haproxy = Haproxy(
        Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/haproxy.cfg"))
            .env("GATEWAY_LISTEN", format!("127.0.0.1:{port}"))
            .env("GATEWAY_A", authority(&a))
            .env("GATEWAY_B", authority(&b))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy is installed by scripts/peers.sh"),
    );
    assert!(
        wait_until(Duration::from_secs(10), || std::net::TcpStream::connect((
            "127.0.0.1",
            port
        ))
        .is_ok()),
        "haproxy did not listen"
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_gateway_load.py");
    let client = |mode: &str, name: &str| {
        let mut command = Command::new(peers().join("venv/bin/python"));
        command
            .arg(&script)
            .args([mode, &url, &CALLS.to_string(), name])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().unwrap()
    };
    // Both at once.
    let dated = client("legacy", "dated-client");
    let modern = client("2026-07-28", "modern-client");
    for (name, child) in [("dated", dated), ("modern", modern)] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got["ok"], CALLS, "{name}: {got}");
    }
    drop(haproxy);
    let (a_lines, b_lines) = (log_lines(&a_log), log_lines(&b_log));
    let count =
        |lines: &[Value], client: &str| lines.iter().filter(|l| l["client"] == client).count();
    // Nothing lost: each call was forwarded once, by one replica or the other.
    assert_eq!(
        count(&a_lines, "dated-client") + count(&b_lines, "dated-client"),
        CALLS
    );
    assert_eq!(
        count(&a_lines, "modern-client") + count(&b_lines, "modern-client"),
        CALLS
    );
    // The dated client's session stayed where it began.
    assert!(
        count(&a_lines, "dated-client") == CALLS || count(&b_lines, "dated-client") == CALLS,
        "a: {}, b: {}",
        count(&a_lines, "dated-client"),
        count(&b_lines, "dated-client")
    );
    // The stateless client was spread over both.
    assert!(
        count(&a_lines, "modern-client") > 0 && count(&b_lines, "modern-client") > 0,
        "a: {}, b: {}",
        count(&a_lines, "modern-client"),
        count(&b_lines, "modern-client")
    );
    assert!(a_lines.iter().chain(&b_lines).all(|l| l["outcome"] == "ok"));
}

/// The shipped Kubernetes manifest is valid for Kubernetes 1.37 (schemas bundled with
/// kubernetes-validate; strict: no property Kubernetes does not know).
#[test]
fn the_kubernetes_manifest_is_valid() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes.yaml");
    let out = Command::new(peers().join("venv/bin/kubernetes-validate"))
        .args(["--strict", "--kubernetes-version", "1.37.0"])
        .arg(&manifest)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for kind in ["configmap", "secret", "deployment", "service"] {
        assert!(
            said.contains(&format!("passed for resource {kind}/prise-gateway")),
            "{said}"
        );
    }
}
