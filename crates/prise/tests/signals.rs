//! A prise that is interrupted (Ctrl-C, SIGTERM) ends its servers' whole process
//! groups, wrapper and grandchild alike, and exits with 128 + the signal.

mod common;

use common::{bad_server, processes_with, wait_until};

use std::process::{Command, Stdio};
use std::time::Duration;

fn interrupt_during_a_call(signal: &str, expected_code: i32) {
    let home = tempfile::tempdir().unwrap();
    let marker = format!("prise-signal-{signal}-{}", std::process::id());
    let script = bad_server();
    let config = home.path().join("c.json");
    // Like npx: a shell wrapper whose child is the real server.
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{"srv": {{"command": "sh", "args": ["-c", "python3 {} stubborn {marker}; true"]}}}}}}"#,
            script.display()
        ),
    )
    .unwrap();
    let prise = Command::new(common::prise_bin())
        .arg("--config")
        .arg(&config)
        .args(["call", "srv__slow"])
        .env("HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(&marker).len()
            == 2),
        "server did not start"
    );
    // Give prise the moment between mounting and sending the call.
    std::thread::sleep(Duration::from_millis(200));
    let status = Command::new("kill")
        .args([signal, &prise.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = prise.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(expected_code),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        wait_until(Duration::from_secs(5), || processes_with(&marker)
            .is_empty()),
        "left running: {:?}",
        processes_with(&marker)
    );
}

#[test]
fn sigterm_ends_the_server_process_groups() {
    interrupt_during_a_call("-TERM", 143);
}

#[test]
fn ctrl_c_ends_the_server_process_groups() {
    interrupt_during_a_call("-INT", 130);
}

/// Ctrl-C while servers are still starting, for a command and for chat: every
/// process ends, and prise names the servers it was waiting for.
#[test]
fn ctrl_c_while_mounting_names_the_servers_still_starting() {
    for command in [
        vec!["servers"],
        vec![
            "chat",
            "-m",
            "openai-compatible:x",
            "--base-url",
            "http://127.0.0.1:9",
        ],
    ] {
        let home = tempfile::tempdir().unwrap();
        let marker = format!("prise-mounting-{}-{}", command[0], std::process::id());
        let config = home.path().join("c.json");
        std::fs::write(
            &config,
            serde_json::json!({"mcpServers": {
                "slow": {"command": "python3", "args": [bad_server(), "silent", format!("{marker}-slow")]},
                "off": {"command": "x", "disabled": true}
            }})
            .to_string(),
        )
        .unwrap();
        let prise = Command::new(common::prise_bin())
            .arg("--config")
            .arg(&config)
            .args(&command)
            .env("HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(
            wait_until(Duration::from_secs(10), || !processes_with(&marker)
                .is_empty()),
            "server did not start"
        );
        let status = Command::new("kill")
            .args(["-INT", &prise.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output = prise.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(130), "{command:?}: {stderr}");
        assert!(
            stderr.contains("interrupted while mounting; still starting: slow\n"),
            "{command:?}: {stderr}"
        );
        assert!(
            wait_until(Duration::from_secs(5), || processes_with(&marker)
                .is_empty()),
            "{command:?} left running: {:?}",
            processes_with(&marker)
        );
    }
}
