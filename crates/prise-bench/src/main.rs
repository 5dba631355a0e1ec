//! `prise-bench`: runs prise's benchmark suite and writes `docs/BENCHMARKS.md`.
//!
//! ```sh
//! ./scripts/bench.sh            # release build, full run, rewrites docs/BENCHMARKS.md
//! prise-bench --smoke --out X   # one iteration of everything, to check the harness
//! ```
//!
//! Every client is a separate process measured against the same rmcp echo server, and
//! clients take turns (A B C, then B C A, ...) so that a noisy machine slows them
//! alike: the ratios are what to read, not the absolute times.

mod gateways;
mod plan;
mod report;
mod run;
mod sandboxes;
mod search;

use std::path::PathBuf;

const USAGE: &str = "usage: prise-bench [--smoke] [--out FILE.md]
  runs the benchmark suite and writes FILE.md (default docs/BENCHMARKS.md) and
  benchmarks.svg beside it; --smoke runs one iteration of everything";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Anything else is a mistake, and a full run rewrites the report: refuse first.
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--smoke" => {}
            "--out" => {
                if rest.next().is_none() {
                    eprintln!("error: --out needs a file\n{USAGE}");
                    std::process::exit(2);
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => {
                eprintln!("error: unexpected argument {other:?}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let smoke = args.iter().any(|a| a == "--smoke");
    let out = prise_bench::arg(&args, "--out")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("docs/BENCHMARKS.md"));
    let plan = if smoke {
        plan::Plan::smoke()
    } else {
        plan::Plan::full()
    };
    let env = match plan::Env::discover() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let results = match run::all(&env, &plan) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let chart = out.with_file_name("benchmarks.svg");
    if let Err(e) = report::write(&env, &plan, &results, &out, &chart) {
        eprintln!("error: cannot write {}: {e}", out.display());
        std::process::exit(1);
    }
    eprintln!("wrote {} and {}", out.display(), chart.display());
}
