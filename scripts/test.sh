#!/usr/bin/env bash
# Runs the whole test suite (unit, property, snapshot and integration tests against real sandboxed
# servers), after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
# With arguments this is plain `cargo test ARGS`: a target selection (`--test FILE`, `--lib`, …) runs that
# target alone, anything else (a test name filter) runs over `--all-targets`. Without arguments every
# test binary runs, two at a time (scripts/run-tests.sh).
if [ $# -gt 0 ]; then
  for a in "$@"; do
    case "$a" in
      --test|--test=*|--lib|--bin|--bin=*|--bins|--doc|--example|--example=*|--examples|--bench|--bench=*|--benches|--tests|--all-targets)
        exec cargo test "$@" ;;
      --) break ;;
    esac
  done
  exec cargo test --all-targets "$@"
fi
exec bash scripts/run-tests.sh
