#!/usr/bin/env python3
"""A point-select script workload against `versus sysbench oltp_point_select`: server counters and client CPU.

The script reproduces oltp_point_select's statement (`\\set id random(1, N)` then
`SELECT c FROM sbtest1 WHERE id=:id`, prepared; sysbench's test runs one such statement per transaction,
and here with `--rand-type=uniform` to draw ids like random()). Both run A B A B against one sandboxed
MariaDB and the same table. Per run this measures transactions per second (from the report), the client's
CPU (user + system, from wait4) per transaction and the server's status counters per transaction
(SHOW GLOBAL STATUS before and after). Issue 14's targets: the same server counters per transaction
(within 1 %) and at most 1.2x the client CPU per transaction of `versus sysbench oltp_point_select`.

Writes its section of BENCHMARKS.md (between markers, replacing an earlier one) or of --out; `--out -`
only prints it. Every figure is the median over the rounds.

Usage: bench/script_vs_point_select.py [--versus target/release/versus] [--time 15] [--rounds 3]
    [--threads 1,4] [--out BENCHMARKS.md]
Needs: a release build of versus and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import os
import shutil
import statistics
import tempfile
import time

from benchlib import Server, git_build, replace_section, run_client, transactions

BEGIN = "<!-- script_vs_point_select: written by bench/script_vs_point_select.py -->"
END = "<!-- /script_vs_point_select -->"
SYSBENCH, SCRIPT = "sysbench oltp_point_select", "script"
# Server counters compared per transaction: what the statement costs the server, whatever the client.
COUNTERS = ["Questions", "Com_stmt_execute", "Com_select", "Handler_read_key", "Rows_read",
            "Innodb_buffer_pool_read_requests", "Bytes_sent"]
CPU_TARGET, COUNTER_TARGET = 1.2, 0.01



def status(srv):
    out = srv.sql("SHOW GLOBAL STATUS").stdout
    values = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    missing = [name for name in COUNTERS if name not in values]
    if missing:
        raise SystemExit(f"the server has no status variable {', '.join(missing)}")
    return {name: int(values[name]) for name in COUNTERS}



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--time", type=int, default=15, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=3, help="A B rounds per thread count")
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--out", default="BENCHMARKS.md", help="file whose section is (re)written; - prints only")
    a = ap.parse_args()

    load_before = open("/proc/loadavg").read().split()[:3]
    srv = Server(a.versus, ["innodb_buffer_pool_size=512M", "innodb_flush_log_at_trx_commit=2", "max_connections=200"])
    work = tempfile.mkdtemp(prefix="vs-bench-script-", dir="/tmp")
    rows = []
    try:
        conn = ["--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=sbtest",
                "--mysql-password=sbpass", "--mysql-db=sbtest"]
        run_client([a.versus, "sysbench", "oltp_point_select", "--tables=1", f"--table-size={a.table_size}",
                    *conn, "prepare"])
        script = os.path.join(work, "point_select.sql")
        with open(script, "w") as f:
            f.write(f"\\set id random(1, {a.table_size})\nSELECT c FROM sbtest1 WHERE id=:id;\n")
        tools = {
            SYSBENCH: [a.versus, "sysbench", "oltp_point_select", "--tables=1", f"--table-size={a.table_size}",
                       "--rand-type=uniform"],
            SCRIPT: [a.versus, "script", script],
        }
        # One untimed run of each first, so that both find the buffer pool equally warm.
        for cmd in tools.values():
            run_client([*cmd, *conn, "--threads=1", "--time=1", "run"])
        for threads in [int(t) for t in a.threads.split(",")]:
            cpu = {name: [] for name in tools}
            tps = {name: [] for name in tools}
            per_txn = {name: {c: [] for c in COUNTERS} for name in tools}
            for rnd in range(a.rounds):
                for name, cmd in tools.items():
                    before = status(srv)
                    _, client, text = run_client([*cmd, *conn, f"--threads={threads}", f"--time={a.time}", "run"])
                    after = status(srv)
                    n, rate = transactions(text)
                    cpu[name].append(client * 1e6 / max(n, 1))
                    tps[name].append(rate)
                    for c in COUNTERS:
                        per_txn[name][c].append((after[c] - before[c]) / max(n, 1))
                    print(f"threads={threads} round {rnd + 1} {name}: {rate:.0f} tps, {cpu[name][-1]:.1f} µs client "
                          f"CPU/txn, Handler_read_key/txn {per_txn[name]['Handler_read_key'][-1]:.4f}", flush=True)
            med = statistics.median
            rows.append(dict(
                threads=threads,
                tps={k: med(v) for k, v in tps.items()},
                cpu={k: med(v) for k, v in cpu.items()},
                counters={k: {c: med(v[c]) for c in COUNTERS} for k, v in per_txn.items()},
            ))
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = open("/proc/loadavg").read().split()[:3]
    write_report(a, rows, load_before, load_after)


def counter_ratio(row, c):
    base, mine = row["counters"][SYSBENCH][c], row["counters"][SCRIPT][c]
    return mine / base if base else float("nan")


def write_report(a, rows, before, after):
    threads = ",".join(str(r["threads"]) for r in rows)
    lines = [
        BEGIN,
        "## Script workload vs versus sysbench oltp_point_select (issue 14)",
        "",
        f"Produced by `bench/script_vs_point_select.py --time {a.time} --rounds {a.rounds} --threads {threads}` "
        f"on {time.strftime('%Y-%m-%d %H:%M')} (build {git_build()}): {os.cpu_count()} cores, one sandboxed MariaDB "
        "(system mariadbd, buffer pool 512M, innodb_flush_log_at_trx_commit=2), 1 table x "
        f"{a.table_size} rows, runs of {a.time} s in the order sysbench test, script, {a.rounds} round{'s' if a.rounds != 1 else ''} per "
        "thread count, medians over the rounds. The script is `\\set id random(1, N)` + "
        "`SELECT c FROM sbtest1 WHERE id=:id;`; the sysbench test runs with `--rand-type=uniform`. Client CPU = "
        "user+sys of the client process (wait4) per transaction; server counters from SHOW GLOBAL STATUS "
        f"before/after each run, per transaction. Load average before/after: {' '.join(before)} / "
        f"{' '.join(after)}.",
        "",
        "| threads | tps sysbench test | tps script | client CPU µs/txn sysbench test | client CPU µs/txn script "
        f"| CPU ratio (target ≤ {CPU_TARGET}) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cb, cs = r["cpu"][SYSBENCH], r["cpu"][SCRIPT]
        lines.append(f"| {r['threads']} | {r['tps'][SYSBENCH]:.0f} | {r['tps'][SCRIPT]:.0f} | {cb:.1f} | {cs:.1f} "
                     f"| {cs / cb:.2f} |")
    lines += ["", "Server counters per transaction (sysbench test / script / ratio; target: within 1 %):", "",
              "| threads | " + " | ".join(COUNTERS) + " |", "|---:|" + "---|" * len(COUNTERS)]
    for r in rows:
        cells = [f"{r['counters'][SYSBENCH][c]:.3f} / {r['counters'][SCRIPT][c]:.3f} / {counter_ratio(r, c):.3f}"
                 for c in COUNTERS]
        lines.append(f"| {r['threads']} | " + " | ".join(cells) + " |")
    lines.append("")
    # The ratio lines: one per target and thread count, with the verdict.
    for r in rows:
        ratio = r["cpu"][SCRIPT] / r["cpu"][SYSBENCH]
        verdict = "met" if ratio <= CPU_TARGET else "NOT met"
        lines.append(f"- {r['threads']} thread{'s' if r['threads'] != 1 else ''}: client CPU per transaction, "
                     f"script / sysbench test = **{ratio:.2f}×** (target ≤ {CPU_TARGET}×: {verdict}).")
    for r in rows:
        worst = max(COUNTERS, key=lambda c: abs(counter_ratio(r, c) - 1))
        off = abs(counter_ratio(r, worst) - 1)
        verdict = "met" if off <= COUNTER_TARGET else "NOT met"
        lines.append(f"- {r['threads']} thread{'s' if r['threads'] != 1 else ''}: server counters per transaction, "
                     f"largest difference {worst} {counter_ratio(r, worst):.3f}× (target within 1 %: {verdict}).")
    lines += ["", END]
    section = "\n".join(lines)
    print(section)
    if a.out == "-":
        return
    replace_section(a.out, BEGIN, END, section)


if __name__ == "__main__":
    main()
