//! Gateways: the echo server reached directly and through `prise serve gateway`,
//! mcp-proxy and supergateway, by the same client (prise's mount layer, dated era),
//! the routes taking turns like the clients of the round-trip tables.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use prise_bench::{Latencies, Summary, summarize};

use crate::plan::{Env, Plan, Target, run_json};

/// One way to reach the echo server, and its results.
pub struct GatewayRow {
    pub name: String,
    pub summary: Summary,
    /// Calls per second at 1, 8 and 64 in flight (HTTP routes only).
    pub throughput: Vec<(usize, f64)>,
}

/// Everything measured about gateways.
pub struct GatewayResults {
    pub rows: Vec<GatewayRow>,
    /// Peak RSS of `prise serve gateway --http` with 1 and with 50 upstreams (KiB).
    pub rss: Vec<(usize, Option<u64>)>,
}

/// A way to reach the echo server: the target the client is given, the tool name
/// there, and the gateway process, ended when dropped.
struct Route {
    name: &'static str,
    target: Target,
    tool: String,
    http: bool,
    _process: Option<Background>,
}

pub fn measure(env: &Env, plan: &Plan) -> Result<GatewayResults, String> {
    let scratch = Scratch::new()?;
    let one = scratch.config(env, 1)?;
    let routes = vec![
        Route {
            name: "direct (stdio)",
            target: Target::Stdio(env.echo_server()),
            tool: "echo".to_owned(),
            http: false,
            _process: None,
        },
        Route {
            name: "relay floor (copies lines), stdio → stdio",
            target: Target::Stdio(relay(env)),
            tool: "echo".to_owned(),
            http: false,
            _process: None,
        },
        Route {
            name: "prise gateway, stdio → stdio",
            target: Target::Stdio(prise_gateway(env, &one, &scratch)),
            tool: "echo0__echo".to_owned(),
            http: false,
            _process: None,
        },
        {
            let (process, url) = Background::prise_http(env, &one, &scratch)?;
            Route {
                name: "prise gateway, HTTP → stdio",
                target: Target::Http(url),
                tool: "echo0__echo".to_owned(),
                http: true,
                _process: Some(process),
            }
        },
        {
            let port = free_port()?;
            let mut command = vec![
                env.peers
                    .join("mcp-proxy/bin/mcp-proxy")
                    .display()
                    .to_string(),
                "--port".to_owned(),
                port.to_string(),
                "--".to_owned(),
            ];
            command.extend(env.echo_server());
            Route {
                name: "mcp-proxy 0.13.0, HTTP → stdio",
                _process: Some(Background::listening(&command, port)?),
                target: Target::Http(format!("http://127.0.0.1:{port}/mcp")),
                tool: "echo".to_owned(),
                http: true,
            }
        },
        {
            let port = free_port()?;
            let command = vec![
                "node".to_owned(),
                env.peers
                    .join("npm/node_modules/.bin/supergateway")
                    .display()
                    .to_string(),
                "--stdio".to_owned(),
                env.echo_server().join(" "),
                "--outputTransport".to_owned(),
                "streamableHttp".to_owned(),
                "--port".to_owned(),
                port.to_string(),
            ];
            Route {
                name: "supergateway 4.0.0, HTTP → stdio",
                _process: Some(Background::listening(&command, port)?),
                target: Target::Http(format!("http://127.0.0.1:{port}/mcp")),
                tool: "echo".to_owned(),
                http: true,
            }
        },
    ];
    let client = |route: &Route, mode: &[&str]| {
        let mut command = vec![env.path("bench-prise-client")];
        command.extend(mode.iter().map(|s| s.to_string()));
        command.extend([
            "--protocol".to_owned(),
            "legacy".to_owned(),
            "--tool".to_owned(),
            route.tool.clone(),
        ]);
        command.extend(route.target.args());
        command
    };
    let (calls, warmup) = (plan.calls.to_string(), plan.warmup.to_string());
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); routes.len()];
    for round in 0..plan.rounds {
        for turn in 0..routes.len() {
            let index = (turn + round) % routes.len();
            let command = client(
                &routes[index],
                &["calls", "--calls", &calls, "--warmup", &warmup],
            );
            let report: Latencies =
                serde_json::from_value(run_json(&command)?).map_err(|e| e.to_string())?;
            samples[index].extend(report.latencies_ns);
        }
    }
    let mut rows = Vec::new();
    for (route, samples) in routes.iter().zip(samples) {
        let summary =
            summarize(&samples).ok_or_else(|| format!("{} measured nothing", route.name))?;
        let mut throughput = Vec::new();
        if route.http {
            for inflight in [1, 8, 64] {
                let (k, n) = (inflight.to_string(), plan.throughput_calls.to_string());
                let command = client(route, &["concurrent", "--inflight", &k, "--calls", &n]);
                let report = run_json(&command)?;
                let elapsed = report["elapsed_ns"].as_f64().ok_or("no elapsed_ns")? / 1e9;
                throughput.push((inflight, plan.throughput_calls as f64 / elapsed));
            }
        }
        rows.push(GatewayRow {
            name: route.name.to_owned(),
            summary,
            throughput,
        });
    }
    drop(routes);
    let mut rss = Vec::new();
    for upstreams in [1, 50] {
        let config = scratch.config(env, upstreams)?;
        let (process, url) = Background::prise_http(env, &config, &scratch)?;
        // A call through, so that the gateway has done its work once.
        let mut command = vec![env.path("bench-prise-client")];
        command.extend(["calls", "--calls", "1", "--warmup", "0", "--tool"].map(str::to_owned));
        command.push("echo0__echo".to_owned());
        command.extend(Target::Http(url).args());
        run_json(&command)?;
        rss.push((upstreams, process.peak_rss_kib()));
    }
    Ok(GatewayResults { rows, rss })
}

/// `bench-relay` in front of the echo server.
fn relay(env: &Env) -> Vec<String> {
    let mut command = vec![env.path("bench-relay"), "--".to_owned()];
    command.extend(env.echo_server());
    command
}

/// `prise --config CONFIG serve gateway` with its state in the scratch folder.
fn prise_gateway(env: &Env, config: &Path, scratch: &Scratch) -> Vec<String> {
    // The client starts it as a child: its state folder comes through `env`.
    vec![
        "env".to_owned(),
        format!("PRISE_STATE_DIR={}", scratch.0.join("state").display()),
        env.path("prise"),
        "--config".to_owned(),
        config.display().to_string(),
        "serve".to_owned(),
        "gateway".to_owned(),
    ]
}

/// A folder of configurations and state, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("prise-bench-gw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        Ok(Scratch(dir))
    }

    /// A configuration with `n` echo servers, `echo0`...
    fn config(&self, env: &Env, n: usize) -> Result<PathBuf, String> {
        let servers: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| {
                let server =
                    serde_json::json!({"command": env.echo_server()[0], "restart": "never"});
                (format!("echo{i}"), server)
            })
            .collect();
        let path = self.0.join(format!("gateway-{n}.json"));
        std::fs::write(
            &path,
            serde_json::json!({"mcpServers": servers}).to_string(),
        )
        .map_err(|e| e.to_string())?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A gateway running while the routes are measured.
struct Background(Child);

impl Background {
    /// `prise serve gateway --http 127.0.0.1:0` and the URL it prints.
    fn prise_http(
        env: &Env,
        config: &PathBuf,
        scratch: &Scratch,
    ) -> Result<(Background, String), String> {
        use std::io::BufRead;
        let mut child = Command::new(env.path("prise"))
            .arg("--config")
            .arg(config)
            .args(["serve", "gateway", "--http", "127.0.0.1:0"])
            .env("PRISE_STATE_DIR", scratch.0.join("state"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start prise serve gateway: {e}"))?;
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?)
            .read_line(&mut url)
            .map_err(|e| e.to_string())?;
        Ok((Background(child), url.trim().to_owned()))
    }

    /// `command`, once it accepts connections on `port`.
    fn listening(command: &[String], port: u16) -> Result<Background, String> {
        let child = Command::new(&command[0])
            .args(&command[1..])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", command[0]))?;
        let process = Background(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(process);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "{} did not listen on {port} within 30 s",
            command[0]
        ))
    }

    /// The process's peak resident set (`VmHWM`), children excluded.
    fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }
}

impl Drop for Background {
    /// SIGTERM first, so that a gateway ends the servers it started (a SIGKILL would
    /// orphan them); SIGKILL after five seconds.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.0.id().to_string())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}
