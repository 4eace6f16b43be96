#!/usr/bin/env bash
# Runs the whole test suite (unit, property, snapshot and integration tests against real sandboxed
# servers), after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
# With arguments (a test name, `--test FILE`, …) this is plain `cargo test --all-targets ARGS`; without,
# every test binary runs, two at a time (scripts/run-tests.sh).
if [ $# -gt 0 ]; then
  exec cargo test --all-targets "$@"
fi
exec bash scripts/run-tests.sh
