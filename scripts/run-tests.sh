#!/usr/bin/env bash
# Runs every test binary of `cargo test --all-targets`, VERSUS_TEST_JOBS of them at a time (default 2).
# Most integration tests spend their time waiting on the servers they start, so on a 2-core machine two
# binaries at once take far less wall time than one after another. The binaries in ALONE measure
# something whose outcome the tests check against noise (an A/A calibration refuses a noisy host, an
# adaptive A/A experiment must not call a difference, a Slurm job is cancelled mid-block, a client
# pinned to one CPU must own most of its time, an A/A pair must show no off-CPU wait beyond the noise,
# two profiled runs a side must tell the general log's functions from the noise): they run afterwards,
# one at a time with nothing beside them. (tests/advise.rs measures at a wide noise band, so that its
# screening decides beside other tests too.) Each binary's output is kept and printed whole at the end,
# in a fixed order; the exit status is 1 when any binary failed, and the summary names them.
# Ctrl-C stops the running binaries (their servers are stopped by the tests' guards).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${VERSUS_TEST_JOBS:-2}"
case "$jobs" in
  ''|*[!0-9]*|0) echo "run-tests: VERSUS_TEST_JOBS must be a positive number, not '$jobs'" >&2; exit 1 ;;
esac
logs="$(mktemp -d "${TMPDIR:-/tmp}/versus-tests.XXXXXX")"
trap 'rm -rf "$logs"' EXIT
trap 'kill $(jobs -p) 2>/dev/null; wait; exit 130' INT TERM

cargo test --all-targets --no-run --message-format=json-render-diagnostics >"$logs/build.json"
# Test harnesses only: the `versus` binary itself is an artifact with an executable too.
mapfile -t built < <(grep '"profile":{[^}]*"test":true' "$logs/build.json" | grep -o '"executable":"[^"]*"' |
  sed 's/^"executable":"//; s/"$//')
[ ${#built[@]} -gt 0 ] || { echo "run-tests: cargo built no test binary" >&2; exit 1; }

# The longest first, so that the last two to finish end close together; ALONE last.
heavy=(store readme ibench advise versus efficiency sysbench explain experiment)
alone=(fleet adaptive calibrate client_bound profile profile_waits)
order=()
declare -A placed=()
for h in "${heavy[@]}"; do
  for exe in "${built[@]}"; do
    if [[ "$(basename "$exe")" =~ ^${h}-[0-9a-f]+$ ]]; then
      order+=("$exe")
      placed["$exe"]=1
    fi
  done
done
solo=()
for exe in "${built[@]}"; do
  for h in "${alone[@]}"; do
    if [[ "$(basename "$exe")" =~ ^${h}-[0-9a-f]+$ ]]; then
      solo+=("$exe")
      placed["$exe"]=1
    fi
  done
done
for exe in "${built[@]}"; do
  [ -n "${placed["$exe"]:-}" ] || order+=("$exe")
done

run_one() {
  local exe="$1" name start
  name="$(basename "$exe")"
  start=$SECONDS
  if "$exe" >"$logs/$name.log" 2>&1; then
    echo "run-tests: ok     ${name%-*} ($((SECONDS - start)) s)"
  else
    echo "run-tests: FAILED ${name%-*} ($((SECONDS - start)) s)"
    : >"$logs/$name.failed"
  fi
}

started=$SECONDS
running=0
for exe in "${order[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$exe" &
  running=$((running + 1))
done
wait
for exe in "${solo[@]}"; do
  run_one "$exe"
done
order+=("${solo[@]}")

failed=()
for exe in "${order[@]}"; do
  name="$(basename "$exe")"
  echo
  echo "==== ${name%-*} ($exe)"
  cat "$logs/$name.log"
  [ ! -e "$logs/$name.failed" ] || failed+=("${name%-*}")
done
totals="$(grep -h '^test result:' "$logs"/*.log | awk '{p += $4; f += $6; i += $8} END {printf "%d passed, %d failed, %d ignored", p, f, i}')"
echo
echo "run-tests: ${#order[@]} test binaries, $totals, in $((SECONDS - started)) s ($jobs at a time)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-tests: failed: ${failed[*]}" >&2
  exit 1
fi
