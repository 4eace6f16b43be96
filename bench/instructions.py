#!/usr/bin/env python3
"""User-space instructions per transaction: versus vs the floor client, counted, not timed.

CPU time per transaction moves by several per cent from run to run on a shared machine; instruction counts
do not. This script counts the instructions each client executes in user space (its own code and libc's
send/recv wrappers; the kernel is not counted) with `valgrind --tool=callgrind`, at 1 thread, twice per
client with two run lengths, and divides the difference in instructions by the difference in
transactions, so that start-up, connecting, preparing and the floor's drawing of its statements before its
clock starts cancel out. versus's runs are bounded by --events, the floor's by --time (it has no --events).

For versus, the functions that account for the difference are listed too (callgrind's exclusive counts,
difference between the two runs, per transaction), so that a change to the per-statement path can be
judged by what it removed.

Usage: bench/instructions.py [--versus target/release/versus] [--floor target/release/examples/floor_client]
       [--tests oltp_point_select,oltp_read_write] [--via tcp|socket] [--top 15]
Prints its table (markdown). Needs valgrind, sysbench (to prepare), a release build of versus and of the
floor client, the distribution's MariaDB. Nothing is left running.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

from benchlib import CLIENT_BENCH_SETTINGS, RUN_TABLES, Server, client_paths
from sysbench_compare import tps_of

# Transactions per run, short and long, per test, for versus (under callgrind a point select takes ~50x
# its usual time).
EVENTS = {"oltp_point_select": (2000, 12000), "oltp_read_write": (200, 1200)}
# Seconds per run, short and long, for the floor.
SECONDS = (2, 6)


def callgrind(cmd):
    """Runs cmd under callgrind; returns (total instructions, {function: exclusive instructions}, output)."""
    with tempfile.TemporaryDirectory(prefix="vs-callgrind-") as d:
        out = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} under callgrind failed ({r.returncode}):\n{r.stderr[-3000:]}")
        ann = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", out], capture_output=True, text=True,
                             check=True).stdout
    total = int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", ann).group(1).replace(",", ""))
    funcs = {}
    # Lines are "count (share) file:function [object]"; code inlined from another file has its own line,
    # without the object.
    for m in re.finditer(r"^\s*([\d,]+) \([\s\d.]+%\)\s+[^\s:]+:(.+?)(?: \[[^\]]*\])?$", ann, re.M):
        name = m.group(2).strip()
        funcs[name] = funcs.get(name, 0) + int(m.group(1).replace(",", ""))
    return total, funcs, r.stdout


def per_txn(runs):
    """(instructions per transaction, {function: instructions per transaction}) from two runs."""
    (i0, f0, n0), (i1, f1, n1) = runs
    dn = n1 - n0
    if dn <= 0:
        raise SystemExit("the longer run made no more transactions than the shorter one")
    funcs = {k: (f1.get(k, 0) - f0.get(k, 0)) / dn for k in set(f0) | set(f1)}
    return (i1 - i0) / dn, funcs


def short(name):
    """A function's name for the table: `<T as Trait>::f` as `T::f`, without generic arguments and without
    the `versus::` prefix."""
    name = re.sub(r"<([^<>]*?) as [^<>]*>", r"\1", name)
    name = re.sub(r"^<([^<>]*)>", r"\1", name)
    for _ in range(3):
        name = re.sub(r"<[^<>]*>", "", name)
    name = name.removeprefix("versus::")
    return name if len(name) <= 90 else name[:87] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    client_paths(ap)
    ap.add_argument("--tests", default="oltp_point_select,oltp_read_write")
    ap.add_argument("--via", choices=["tcp", "socket"], default="tcp")
    ap.add_argument("--top", type=int, default=15, help="versus's functions to list per test")
    a = ap.parse_args()
    tests = a.tests.split(",")
    for t in tests:
        if t not in EVENTS:
            raise SystemExit(f"--tests: {t} is not one of {', '.join(EVENTS)}")

    srv = Server(a.versus, CLIENT_BENCH_SETTINGS)
    results = {}
    try:
        srv.prepare_run_tables(a.sysbench)
        common = srv.via()[a.via] + RUN_TABLES + ["--threads=1", "--rand-type=uniform"]
        for t in tests:
            v = []
            for n in EVENTS[t]:
                total, funcs, text = callgrind([a.versus, "sysbench", t] + common + [f"--events={n}", "--time=0", "run"])
                v.append((total, funcs, tps_of(text)[0]))
            f = []
            for s in SECONDS:
                total, funcs, text = callgrind([a.floor, t] + common + [f"--time={s}", "run"])
                f.append((total, funcs, tps_of(text)[0]))
            results[t] = (per_txn(v), per_txn(f))
    finally:
        srv.stop()

    print(f"User-space instructions per transaction (callgrind), 1 thread, {a.via}:\n")
    print("| test | versus | floor | versus / floor |")
    print("|---|---|---|---|")
    for t in tests:
        (vi, _), (fi, _) = results[t]
        print(f"| {t} | {vi:,.0f} | {fi:,.0f} | {vi / fi:.2f} |")
    for t in tests:
        (_, funcs), _ = results[t]
        print(f"\nversus, {t}: the functions with the most instructions per transaction (exclusive):\n")
        print("| function | instructions/txn |")
        print("|---|---|")
        for k, n in sorted(funcs.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"| `{short(k)}` | {n:,.0f} |")


if __name__ == "__main__":
    sys.exit(main())
