#!/usr/bin/env python3
"""The client-bound check's figures (issue 43): the same load from versus unpinned and pinned to one CPU
with `taskset -c 0`, against one sandboxed MariaDB that runs on every CPU, A B A B at each thread
count. Per run: tps, and the `client` object of `versus sysbench --format=json` (the client's CPUs, the
busy share of the CPUs it may run on, its share of that busy time, and the verdict). The check must flag
the pinned runs whose throughput the pinning cuts, and nothing else.

Writes its section of BENCHMARKS.md (between markers, replacing an earlier one) or of --out; `--out -`
only prints it. Figures are the rounds' range.

Usage: bench/client_bound.py [--versus target/release/versus] [--time 5] [--rounds 2] [--threads 1,4,16]
    [--out BENCHMARKS.md]
Needs: a release build of versus, util-linux's taskset and the distribution's MariaDB. Nothing is left
running.
"""

import argparse
import json
import os
import subprocess

from benchlib import Server, git_build, prepare, span, tcp_login, write_table_section

BEGIN = "<!-- client_bound: written by bench/client_bound.py -->"
END = "<!-- /client_bound -->"


def run(versus, conn, threads, seconds, pinned):
    cmd = [versus, "sysbench", "oltp_point_select", *conn, "--tables=1", "--table-size=10000",
           f"--threads={threads}", f"--time={seconds}", "--format=json", "run"]
    if pinned:
        cmd = ["taskset", "-c", "0", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    doc = json.loads(r.stdout)
    return doc["totals"]["tps"], doc["client"]



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=2, help="A B rounds per thread count")
    ap.add_argument("--threads", default="1,4,16")
    ap.add_argument("--out", default="BENCHMARKS.md", help="file whose section is (re)written; - prints only")
    a = ap.parse_args()
    a.versus = os.path.abspath(a.versus)

    srv = Server(a.versus, ["innodb_buffer_pool_size=256M", "innodb_flush_log_at_trx_commit=2"])
    conn = tcp_login(srv)
    rows = []
    try:
        prepare(a.versus, conn, ["--tables=1", "--table-size=10000"])
        for t in [int(x) for x in a.threads.split(",")]:
            got = {False: [], True: []}
            for _ in range(a.rounds):
                for pinned in (False, True):
                    got[pinned].append(run(a.versus, conn, t, a.time, pinned))
                    print(f"{t} thr {'pinned' if pinned else 'unpinned'}: {got[pinned][-1]}", flush=True)
            for pinned in (False, True):
                rs = got[pinned]
                load = [c["load"] for _, c in rs]
                rows.append([
                    "`taskset -c 0`" if pinned else "unpinned", str(t),
                    span([tps for tps, _ in rs], "{:,.0f}"),
                    span([l["client_cpus"] for l in load], "{:.2f}") + f" of {load[0]['usable_cpus']:g}",
                    span([100 * l.get("cpus_busy", 0) for l in load], "{:.0f}") + " %",
                    span([100 * l.get("client_share", 0) for l in load], "{:.0f}") + " %",
                    "/".join(sorted({"yes" if c["client_bound"] else "no" for _, c in rs})),
                ])
    finally:
        srv.stop()

    text = (f"`bench/client_bound.py` at {git_build()}: oltp_point_select (one table of 10,000 rows) against "
            f"one sandboxed MariaDB on every CPU, versus unpinned and pinned to CPU 0, {a.rounds} A B rounds of "
            f"{a.time} s per thread count; ranges over the rounds. docs/fleet.md explains the rule.")
    columns = [("client", False), ("threads", True), ("tps", True), ("client CPU", True), ("its CPUs busy", True),
               ("client's share", True), ("client-bound", False)]
    write_table_section(a.out, BEGIN, END, "## The client-bound check", text, columns, rows)

if __name__ == "__main__":
    main()
