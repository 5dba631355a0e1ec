#!/usr/bin/env bash
# Regenerates docs/BENCHMARKS.md and docs/benchmarks.svg: installs the pinned peers
# (the same script as the tests), builds in release mode, runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PRISE_PEERS=$(scripts/peers.sh)
export PRISE_PEERS
cargo build --locked --release -p prise -p prise-bench
exec target/release/prise-bench --out docs/BENCHMARKS.md "$@"
