#!/usr/bin/env bash
# How long does a cell's restore-and-restart take, compared with preparing the data again?
# Prepares 4 × 100k rows (sysbench oltp tables) in a sandbox of the distribution's MariaDB, snapshots
# the datadir, then restores it and restarts the server REPS times, timing each step with the same
# clock. Prints one line per measurement and a summary; writes nothing else.
#
#   bash bench/restore_vs_prepare.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
V=target/release/versus
[ -x "$V" ] || cargo build --release --quiet
export VERSUS_HOME=$(mktemp -d /tmp/versus-bench-restore.XXXXXX)
trap '$V server stop --all >/dev/null 2>&1 || true; rm -rf "$VERSUS_HOME"' EXIT
now() { date +%s.%N; }
$V server fetch system >/dev/null
$V server start system --name bench >/dev/null
PORT=$($V server status bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["port"])')
CONN="--mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-password=sbpass --mysql-db=sbtest"
t0=$(now)
$V sysbench oltp_read_write --tables=4 --table-size=100000 --threads=2 $CONN prepare >/dev/null
t1=$(now)
prepare=$(python3 -c "print(f'{$t1-$t0:.2f}')")
echo "prepare 4 x 100k rows (2 threads): ${prepare} s"
$V server stop bench >/dev/null
t0=$(now); $V server snapshot bench >/dev/null; t1=$(now)
echo "snapshot: $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
total=0
for i in $(seq 1 "$REPS"); do
  t0=$(now)
  $V server restore bench >/dev/null     # copy the snapshot back and start the server until it accepts queries
  t1=$(now)
  $V server stop bench >/dev/null
  d=$(python3 -c "print(f'{$t1-$t0:.2f}')")
  echo "restore + restart #$i: ${d} s"
  total=$(python3 -c "print($total+$t1-$t0)")
done
python3 -c "m=$total/$REPS; print(f'mean restore + restart: {m:.2f} s; re-preparing takes {$prepare:.2f} s ({$prepare/m:.1f}x longer)')"
