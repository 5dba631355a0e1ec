//! Running the clients: where they are, how many times, in which order.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use prise_bench::{Latencies, Summary, summarize};

use crate::plan::{Env, Plan, Target, run_json};

/// One client's results in a comparison.
pub struct Row {
    pub name: String,
    pub summary: Summary,
}

/// One mounting measurement: servers, time until all are listed, the slowest single
/// start in that run, and the peak RSS of the prise process (KiB).
pub type Mounting = (usize, Duration, Duration, Option<u64>);

/// Everything measured.
pub struct Results {
    pub stdio: Vec<Row>,
    pub http: Vec<Row>,
    /// (transport, in flight, calls per second)
    pub throughput: Vec<(&'static str, usize, f64)>,
    pub mounting: Vec<Mounting>,
    /// Median start time of one server alone.
    pub single_start: Duration,
    /// (command, median)
    pub startup: Vec<(String, Duration)>,
    /// Medians of an agent run with one turn, with a tool call (two turns), and of a
    /// bare request to the fake model.
    pub agent: (Duration, Duration, Duration),
    /// The echo server through gateways.
    pub gateways: crate::gateways::GatewayResults,
    /// `prise tools` with the echo server plain, sandboxed, and in bubblewrap.
    pub sandboxes: crate::sandboxes::SandboxResults,
    /// Tool search over 1,000 tools.
    pub search: crate::search::SearchResults,
}

/// A round-trip client: a name and its command line before the target arguments.
struct Client {
    name: &'static str,
    command: Vec<String>,
}

fn round_trip_clients(env: &Env, plan: &Plan, http: bool) -> Vec<Client> {
    let (calls, warmup) = (plan.calls.to_string(), plan.warmup.to_string());
    let rust = |bin: &str, extra: &[&str]| {
        let mut command = vec![env.path(bin)];
        command.extend(extra.iter().map(|s| s.to_string()));
        command.extend([
            "--calls".to_owned(),
            calls.clone(),
            "--warmup".to_owned(),
            warmup.clone(),
        ]);
        command
    };
    let mut clients = Vec::new();
    if !http {
        clients.push(Client {
            name: "floor (no SDK)",
            command: rust("bench-floor", &[]),
        });
    }
    clients.push(Client {
        name: "prise (auto)",
        command: rust("bench-prise-client", &["calls"]),
    });
    clients.push(Client {
        name: "prise (legacy)",
        command: rust("bench-prise-client", &["calls", "--protocol", "legacy"]),
    });
    clients.push(Client {
        name: "rmcp",
        command: rust("bench-rmcp-client", &[]),
    });
    clients.push(Client {
        name: "Python SDK",
        command: vec![
            env.peers.join("venv/bin/python").display().to_string(),
            env.clients.join("py_client.py").display().to_string(),
            calls.clone(),
            warmup.clone(),
        ],
    });
    clients.push(Client {
        name: "TypeScript SDK",
        command: vec![
            "node".to_owned(),
            env.clients.join("ts_client.mjs").display().to_string(),
            env.peers
                .join("npm/node_modules/@modelcontextprotocol/sdk")
                .display()
                .to_string(),
            calls,
            warmup,
        ],
    });
    clients
}

/// Runs every measurement of the plan.
pub fn all(env: &Env, plan: &Plan) -> Result<Results, String> {
    let stdio = compare(env, plan, &Target::Stdio(env.echo_server()), false)?;
    let server = HttpEcho::start(env)?;
    let http = compare(env, plan, &Target::Http(server.url.clone()), true)?;
    let mut throughput = Vec::new();
    for (transport, target) in [
        ("stdio", Target::Stdio(env.echo_server())),
        ("http", Target::Http(server.url.clone())),
    ] {
        for inflight in [1, 8, 64] {
            let mut command = vec![env.path("bench-prise-client"), "concurrent".to_owned()];
            command.extend([
                "--inflight".to_owned(),
                inflight.to_string(),
                "--calls".to_owned(),
                plan.throughput_calls.to_string(),
            ]);
            command.extend(target.args());
            let report = run_json(&command)?;
            let elapsed = report["elapsed_ns"].as_f64().ok_or("no elapsed_ns")? / 1e9;
            throughput.push((transport, inflight, plan.throughput_calls as f64 / elapsed));
        }
    }
    drop(server);
    let (mounting, single_start) = mounting(env, plan)?;
    let startup = startup(env, plan)?;
    let mut command = vec![
        env.path("bench-agent-client"),
        "--runs".to_owned(),
        plan.agent_runs.to_string(),
    ];
    command.extend(["--warmup".to_owned(), (plan.agent_runs / 10).to_string()]);
    command.extend(Target::Stdio(env.echo_server()).args());
    let report = run_json(&command)?;
    let ns = |key: &str| Duration::from_nanos(report[key].as_u64().unwrap_or(0));
    let agent = (ns("one_turn_ns"), ns("with_tool_ns"), ns("bare_model_ns"));
    let gateways = crate::gateways::measure(env, plan)?;
    let sandboxes = crate::sandboxes::measure(env, plan)?;
    let search = crate::search::measure(plan)?;
    Ok(Results {
        stdio,
        http,
        throughput,
        mounting,
        single_start,
        startup,
        agent,
        gateways,
        sandboxes,
        search,
    })
}

/// `command` held to one CPU with `taskset`, when there is one and two CPUs to spread
/// over. A stdio round trip costs twice as much when client and server wake each
/// other across cores as on one core, and the scheduler picks either by chance: the
/// client on CPU 0 and its server on CPU 1, always across, keeps runs comparable.
fn on_core(core: usize, command: Vec<String>) -> Vec<String> {
    let two = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let taskset = std::process::Command::new("taskset")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(two && taskset) {
        return command;
    }
    ["taskset".to_owned(), "-c".to_owned(), core.to_string()]
        .into_iter()
        .chain(command)
        .collect()
}

/// Runs the clients in turns and summarises each one's latencies.
fn compare(env: &Env, plan: &Plan, target: &Target, http: bool) -> Result<Vec<Row>, String> {
    let clients = round_trip_clients(env, plan, http);
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); clients.len()];
    for round in 0..plan.rounds {
        for turn in 0..clients.len() {
            let index = (turn + round) % clients.len();
            let mut command = on_core(0, clients[index].command.clone());
            command.extend(match target {
                Target::Stdio(server) => Target::Stdio(on_core(1, server.clone())).args(),
                Target::Http(_) => target.args(),
            });
            let report: Latencies =
                serde_json::from_value(run_json(&command)?).map_err(|e| e.to_string())?;
            samples[index].extend(report.latencies_ns);
        }
    }
    clients
        .iter()
        .zip(samples)
        .map(|(client, samples)| {
            let summary =
                summarize(&samples).ok_or_else(|| format!("{} measured nothing", client.name))?;
            Ok(Row {
                name: client.name.to_owned(),
                summary,
            })
        })
        .collect()
}

fn mounting(env: &Env, plan: &Plan) -> Result<(Vec<Mounting>, Duration), String> {
    let mut rows = Vec::new();
    let mut singles = Vec::new();
    for round in 0..plan.rounds.max(1) {
        for &size in &plan.mount_sizes {
            let mut command = vec![
                env.path("bench-prise-client"),
                "mount".to_owned(),
                "--servers".to_owned(),
                size.to_string(),
            ];
            command.extend(Target::Stdio(env.echo_server()).args());
            let report = run_json(&command)?;
            let elapsed = Duration::from_nanos(report["elapsed_ns"].as_u64().unwrap_or(0));
            let startups: Vec<u64> = report["startups_ns"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_u64())
                .collect();
            let max = Duration::from_nanos(startups.iter().copied().max().unwrap_or(0));
            if size == 1 {
                singles.push(elapsed.as_nanos() as u64);
            }
            if round + 1 == plan.rounds.max(1) {
                rows.push((size, elapsed, max, report["peak_rss_kib"].as_u64()));
            }
        }
    }
    let single = summarize(&singles).map(|s| s.median).unwrap_or_default();
    Ok((rows, single))
}

/// Whole-process start-up, the two commands interleaved.
fn startup(env: &Env, plan: &Plan) -> Result<Vec<(String, Duration)>, String> {
    let home = std::env::temp_dir().join(format!("prise-bench-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let commands: [&[&str]; 2] = [&["--version"], &["tools"]];
    let mut samples = vec![Vec::new(), Vec::new()];
    for _ in 0..plan.startup_runs {
        for (i, args) in commands.iter().enumerate() {
            let started = Instant::now();
            let status = Command::new(env.path("prise"))
                .args(*args)
                .env_clear()
                .env("HOME", &home)
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .current_dir(&home)
                .stdout(Stdio::null())
                .status()
                .map_err(|e| e.to_string())?;
            samples[i].push(started.elapsed().as_nanos() as u64);
            if !status.success() {
                return Err(format!("prise {} failed", args.join(" ")));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    Ok(commands
        .iter()
        .zip(samples)
        .map(|(args, s)| {
            (
                format!("prise {}", args.join(" ")),
                summarize(&s).map(|s| s.median).unwrap_or_default(),
            )
        })
        .collect())
}

/// The echo server over Streamable HTTP, stopped when dropped.
struct HttpEcho {
    child: Child,
    url: String,
}

impl HttpEcho {
    fn start(env: &Env) -> Result<HttpEcho, String> {
        use std::io::BufRead;
        let mut child = Command::new(env.path("bench-echo-server"))
            .args(["--http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .map_err(|e| e.to_string())?;
        Ok(HttpEcho {
            child,
            url: url.trim().to_owned(),
        })
    }
}

impl Drop for HttpEcho {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
