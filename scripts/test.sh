#!/usr/bin/env bash
# Runs the whole test suite (unit, property, snapshot and integration tests against real sandboxed
# servers), after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
exec cargo test --all-targets "$@"
