//! Shared pieces of prise's benchmark suite: what every client prints, and statistics.
//!
//! Every benchmark client is a separate program (Rust, Python, TypeScript) that
//! prints one JSON object on stdout; the `prise-bench` driver runs them interleaved
//! and writes `docs/BENCHMARKS.md`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a round-trip client reports: one latency per timed call, in nanoseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Latencies {
    /// Per-call latencies.
    pub latencies_ns: Vec<u64>,
}

/// Median and 99th percentile of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// 50th percentile.
    pub median: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

/// Median and p99 of `samples` (nanoseconds); `None` when empty.
pub fn summarize(samples: &[u64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let at =
        |q: f64| Duration::from_nanos(sorted[((sorted.len() - 1) as f64 * q).round() as usize]);
    Some(Summary {
        median: at(0.5),
        p99: at(0.99),
    })
}

/// `--name value` from an argument list.
pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The peak resident set size of this process so far, in KiB (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p99() {
        let samples: Vec<u64> = (1..=100).collect();
        let summary = summarize(&samples).unwrap();
        assert_eq!(summary.median, Duration::from_nanos(51));
        assert_eq!(summary.p99, Duration::from_nanos(99));
        assert!(summarize(&[]).is_none());
    }
}
