//! What a sandbox costs at start-up: `prise tools` mounting the echo server as it is,
//! in prise's sandbox (Landlock, a network namespace, seccomp), and wrapped in
//! bubblewrap with the same intent (read-only root, a private `/tmp`, the secrets
//! hidden, no network), the three taking turns.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prise_bench::summarize;
use serde_json::json;

use crate::plan::{Env, Plan};

/// (way, median of `prise tools`), bubblewrap's `None` when it is not installed.
pub type SandboxResults = Vec<(&'static str, Option<Duration>)>;

pub fn measure(env: &Env, plan: &Plan) -> Result<SandboxResults, String> {
    let home = std::env::temp_dir().join(format!("prise-bench-sandbox-{}", std::process::id()));
    std::fs::create_dir_all(home.join(".ssh")).map_err(|e| e.to_string())?;
    let server = env.echo_server();
    let plain = json!({"command": server[0], "args": &server[1..]});
    let mut landlock = plain.clone();
    landlock["sandbox"] = json!(true);
    let mut wrapped: Vec<String> = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-net",
        "--die-with-parent",
        "--tmpfs",
    ]
    .map(String::from)
    .into();
    wrapped.push(home.join(".ssh").display().to_string());
    wrapped.push("--".to_owned());
    wrapped.extend(server.iter().cloned());
    let bwrap = json!({"command": "bwrap", "args": wrapped});
    let has_bwrap = Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let mut ways: Vec<(&'static str, serde_json::Value)> =
        vec![("as it is", plain), ("prise's sandbox", landlock)];
    if has_bwrap {
        ways.push(("bubblewrap", bwrap));
    }
    let mut samples = vec![Vec::new(); ways.len()];
    for run in 0..plan.startup_runs {
        for turn in 0..ways.len() {
            let index = (turn + run) % ways.len();
            let (name, server) = &ways[index];
            let config = home.join(format!("{index}.json"));
            std::fs::write(&config, json!({"mcpServers": {"echo": server}}).to_string())
                .map_err(|e| e.to_string())?;
            samples[index]
                .push(time_tools(env, &home, &config).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    let mut results: SandboxResults = ways
        .iter()
        .zip(samples)
        .map(|((name, _), s)| (*name, summarize(&s).map(|s| s.median)))
        .collect();
    if !has_bwrap {
        results.push(("bubblewrap", None));
    }
    Ok(results)
}

fn time_tools(env: &Env, home: &Path, config: &Path) -> Result<u64, String> {
    let started = Instant::now();
    let output = Command::new(env.path("prise"))
        .arg("-c")
        .arg(config)
        .arg("tools")
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(home)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_nanos() as u64;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    Ok(elapsed)
}
