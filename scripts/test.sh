#!/usr/bin/env bash
# The whole test suite, as CI runs it on a fresh clone: installs the pinned peers,
# then checks formatting, lints, and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null 2>&1 || {
  echo "error: cargo is required; install Rust 1.95 with rustup" >&2
  exit 2
}

PRISE_PEERS=$(scripts/peers.sh)
export PRISE_PEERS
# Logs and remembered protocol eras of the test run stay in target/, fresh each run.
export PRISE_STATE_DIR="$PWD/target/test-state"
rm -rf "$PRISE_STATE_DIR"

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check

echo "== cargo clippy" >&2
cargo clippy --locked --workspace --all-targets -- -D warnings

echo "== tests" >&2
if cargo nextest --version >/dev/null 2>&1; then
  # nextest does not run doctests; run them first so that nextest's summary closes the log.
  cargo test --locked --workspace --doc
  cargo nextest run --locked --workspace --no-fail-fast
else
  echo "note: cargo-nextest not found, using cargo test (cargo install cargo-nextest for nicer output)" >&2
  cargo test --locked --workspace --no-fail-fast
fi
