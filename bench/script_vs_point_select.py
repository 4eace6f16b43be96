#!/usr/bin/env python3
"""Client CPU per transaction of a script workload against `versus sysbench oltp_point_select`.

The script reproduces oltp_point_select's statement (`\\set id random(1, N)` then
`SELECT c FROM sbtest1 WHERE id=:id`, prepared). Both run A B A B against one sandboxed MariaDB and the
same table, and per run this measures transactions per second (from the report) and the client's CPU
(user + system, from wait4) per transaction. The target: the script costs at most 1.2x the client CPU
per transaction of `versus sysbench oltp_point_select`. Prints a markdown table for BENCHMARKS.md (or
appends it to --out).

Usage: bench/script_vs_point_select.py [--versus target/release/versus] [--time 15] [--rounds 3]
    [--threads 1,4] [--out BENCHMARKS.md]
Needs: a release build of versus and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import os
import re
import shutil
import statistics
import tempfile

from benchlib import Server, run_client


def transactions(text):
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", text)
    return int(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--time", type=int, default=15, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=3, help="A B rounds per thread count")
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--out", help="append the table to this file")
    a = ap.parse_args()

    srv = Server(a.versus, ["innodb_buffer_pool_size=512M", "innodb_flush_log_at_trx_commit=2", "max_connections=200"])
    work = tempfile.mkdtemp(prefix="vs-bench-script-", dir="/tmp")
    try:
        conn = ["--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=sbtest",
                "--mysql-password=sbpass", "--mysql-db=sbtest"]
        run_client([a.versus, "sysbench", "oltp_point_select", "--tables=1", f"--table-size={a.table_size}",
                    *conn, "prepare"])
        script = os.path.join(work, "point_select.sql")
        with open(script, "w") as f:
            f.write(f"\\set id random(1, {a.table_size})\nSELECT c FROM sbtest1 WHERE id=:id;\n")
        tools = {
            "sysbench oltp_point_select": [a.versus, "sysbench", "oltp_point_select", "--tables=1",
                                           f"--table-size={a.table_size}"],
            "script": [a.versus, "script", script],
        }
        rows = []
        for threads in [int(t) for t in a.threads.split(",")]:
            cpu = {name: [] for name in tools}
            tps = {name: [] for name in tools}
            for _ in range(a.rounds):
                for name, cmd in tools.items():
                    _, client, text = run_client([*cmd, *conn, f"--threads={threads}", f"--time={a.time}", "run"])
                    n, rate = transactions(text)
                    cpu[name].append(client * 1e6 / max(n, 1))
                    tps[name].append(rate)
            base, mine = statistics.median(cpu["sysbench oltp_point_select"]), statistics.median(cpu["script"])
            rows.append((threads, statistics.median(tps["sysbench oltp_point_select"]), statistics.median(tps["script"]),
                         base, mine, mine / base))
        lines = [
            "| threads | tps sysbench test | tps script | client CPU µs/txn sysbench test | client CPU µs/txn script | ratio (target ≤ 1.2) |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for t, tb, ts, cb, cs, r in rows:
            lines.append(f"| {t} | {tb:.0f} | {ts:.0f} | {cb:.1f} | {cs:.1f} | {r:.2f} |")
        table = "\n".join(lines)
        print(table)
        if a.out:
            with open(a.out, "a") as f:
                f.write("\n" + table + "\n")
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
