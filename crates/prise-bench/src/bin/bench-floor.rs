//! `bench-floor --calls N --warmup W -- SERVER ARGS...`: the floor. A minimal client
//! with no SDK: it writes each JSON-RPC line itself and reads the reply line, so it
//! measures the server and the pipes and nothing else.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

struct Wire {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Wire {
    fn send(&mut self, message: &str) {
        self.stdin.write_all(message.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads lines until its reply.
    fn request(&mut self, id: usize, body: &str) {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#));
        let needle = format!(r#""id":{id}"#);
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line).unwrap() == 0 {
                panic!("the server closed its stdout");
            }
            if self.line.contains(&needle) {
                return;
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let calls: usize = prise_bench::arg(&args, "--calls")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let warmup: usize = prise_bench::arg(&args, "--warmup")
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let server = &args[args.iter().position(|a| a == "--").expect("-- SERVER ARGS") + 1..];
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut wire = Wire {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        line: String::new(),
    };
    wire.request(
        0,
        r#""method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"0"}}"#,
    );
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let call = r#""method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}"#;
    let mut latencies = Vec::with_capacity(calls);
    for i in 1..=warmup + calls {
        let started = Instant::now();
        wire.request(i, call);
        if i > warmup {
            latencies.push(started.elapsed().as_nanos() as u64);
        }
    }
    drop(wire);
    let _ = child.kill();
    let _ = child.wait();
    println!("{}", serde_json::json!({ "latencies_ns": latencies }));
}
