#!/usr/bin/env python3
"""One load from 1, 2 and 4 client processes (issue 43, `versus sysbench --clients N`): the same total
threads against one sandboxed MariaDB, the client counts interleaved in every round (1 2 4 1 2 4 …), on
oltp_point_select, where the client's cost is the largest share of a statement's. Per run: tps, p95,
the clients' start skew and the client-bound verdict. Reported as ratios to one client, per round, and
the skew's range.

On one host the clients share the server's CPUs, so more client processes cannot add capacity: the
ratios measure what splitting costs (more processes, the barrier, the merge) and must stay near 1.

Writes its section of BENCHMARKS.md (between markers, replacing an earlier one) or of --out; `--out -`
only prints it.

Usage: bench/split_clients.py [--versus target/release/versus] [--time 5] [--rounds 2] [--threads 8,16]
    [--clients 1,2,4] [--out BENCHMARKS.md]
Needs: a release build of versus and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import json
import os
import subprocess

from benchlib import Server, git_build, prepare, span, tcp_login, write_table_section

BEGIN = "<!-- split_clients: written by bench/split_clients.py -->"
END = "<!-- /split_clients -->"


def run(versus, conn, threads, clients, seconds):
    cmd = [versus, "sysbench", "oltp_point_select", *conn, "--tables=1", "--table-size=10000",
           f"--threads={threads}", f"--clients={clients}", f"--time={seconds}", "--format=json", "run"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    doc = json.loads(r.stdout)
    skew = doc.get("clients", {}).get("skew_ms")
    return {
        "tps": doc["totals"]["tps"],
        "p95": doc["latency_ms"]["percentiles"]["95"],
        "skew": skew,
        "bound": doc["client"]["client_bound"] if "client" in doc else None,
    }



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of every client count per thread count")
    ap.add_argument("--threads", default="8,16")
    ap.add_argument("--clients", default="1,2,4")
    ap.add_argument("--out", default="BENCHMARKS.md", help="file whose section is (re)written; - prints only")
    a = ap.parse_args()
    a.versus = os.path.abspath(a.versus)
    counts = [int(x) for x in a.clients.split(",")]

    srv = Server(a.versus, ["innodb_buffer_pool_size=256M", "innodb_flush_log_at_trx_commit=2"])
    conn = tcp_login(srv)
    rows = []
    try:
        prepare(a.versus, conn, ["--tables=1", "--table-size=10000"])
        for t in [int(x) for x in a.threads.split(",")]:
            got = {c: [] for c in counts}
            for _ in range(a.rounds):
                for c in counts:
                    got[c].append(run(a.versus, conn, t, c, a.time))
                    print(f"{t} thr, {c} client(s): {got[c][-1]}", flush=True)
            base = got[counts[0]]
            for c in counts:
                rs = got[c]
                tps_ratio = [r["tps"] / b["tps"] for r, b in zip(rs, base)]
                p95_ratio = [r["p95"] / b["p95"] for r, b in zip(rs, base)]
                skews = [r["skew"] for r in rs if r["skew"] is not None]
                rows.append([
                    str(t), str(c),
                    span([r["tps"] for r in rs], "{:,.0f}"),
                    span(tps_ratio, "{:.2f}×"),
                    span(p95_ratio, "{:.2f}×"),
                    span(skews, "{:.1f} ms") if skews else "-",
                    "/".join(sorted({"yes" if r["bound"] else "no" for r in rs})),
                ])
    finally:
        srv.stop()

    text = (f"`bench/split_clients.py` at {git_build()}: oltp_point_select (one table of 10,000 rows) against "
            f"one sandboxed MariaDB, the same total threads from {', '.join(map(str, counts))} client processes "
            f"(`--clients`), interleaved, {a.rounds} rounds of {a.time} s; ratios to one client in the same "
            "round, ranges over the rounds. All on one host: the ratios are what splitting costs, not "
            "capacity a second host would add. docs/fleet.md explains the merge.")
    columns = [("threads", True), ("clients", True), ("tps", True), ("tps vs 1 client", True),
               ("p95 vs 1 client", True), ("start skew", True), ("client-bound", False)]
    write_table_section(a.out, BEGIN, END, "## One load from several client processes", text, columns, rows)

if __name__ == "__main__":
    main()
