#!/usr/bin/env bash
# Runs the whole test suite (unit, property, snapshot and integration tests against real sandboxed
# servers), after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
# Without arguments, the test binaries build while the packages install: the build needs none of them
# (its C parts are vendored and gcc comes with the toolchain). Its output is not shown here: run-tests.sh
# builds again (nothing left to do, or the same errors, printed there). Stopped if the install fails.
build=""
if [ $# -eq 0 ]; then
  cargo test --all-targets --no-run --quiet >/dev/null 2>&1 &
  build=$!
  trap '[ -z "$build" ] || kill "$build" 2>/dev/null || true' EXIT
fi
bash scripts/install-deps.sh --tests
if [ -n "$build" ]; then
  wait "$build" || true
  build=""
fi
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
