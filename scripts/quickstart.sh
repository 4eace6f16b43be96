#!/usr/bin/env bash
# The quick start: install what is missing, build versus, run the default job on a sandboxed copy of
# the distribution's MariaDB.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "quickstart: building versus (a release build: a few minutes the first time, seconds after)" >&2
cargo build --release
exec target/release/versus quickstart "$@"
