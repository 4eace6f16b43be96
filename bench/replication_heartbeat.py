#!/usr/bin/env python3
"""What measuring replica lag costs the primary (issue 42): oltp_write_only on a sandboxed MariaDB
primary with one replica, with and without versus's lag sampling beside the load (`versus server lag`:
a heartbeat row updated on the primary every 100 ms and every replica read each second, as an
experiment does during each run of a target with replicas). A B and B A in alternate rounds; reported
as the primary's tps with sampling over its tps without, per round.

Writes its section of BENCHMARKS.md (between markers, replacing an earlier one) or of --out; `--out -`
only prints it.

Usage: bench/replication_heartbeat.py [--versus target/release/versus] [--time 20] [--rounds 6]
    [--threads 4] [--out BENCHMARKS.md]
Needs: a release build of versus and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import json
import os
import statistics
import subprocess

from benchlib import Server, git_build, prepare, span, tcp_login, write_table_section

BEGIN = "<!-- replication_heartbeat: written by bench/replication_heartbeat.py -->"
END = "<!-- /replication_heartbeat -->"
TABLES = ["--tables=2", "--table-size=10000"]


def load(versus, conn, threads, seconds):
    """The primary's tps over one `versus sysbench oltp_write_only` run."""
    cmd = [versus, "sysbench", "oltp_write_only", *conn, *TABLES, f"--threads={threads}", f"--time={seconds}",
           "--format=json", "run"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return json.loads(r.stdout)["totals"]["tps"]


def watch(srv, seconds):
    """Starts `versus server lag` on the topology for `seconds`."""
    return subprocess.Popen([srv.versus, "server", "lag", "bench", "--seconds", str(seconds)], env=srv.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc):
    """Waits for a `watch`: its CPU seconds and the lags it read (ms)."""
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"versus server lag: {err.strip()}")
    lags = [float(line.split()[2]) for line in out.splitlines()[1:] if line.split()[2] != "-"]
    return usage.ru_utime + usage.ru_stime, lags


def sampled(srv, threads, seconds, conn):
    """The tps of one run with `versus server lag` sampling beside it, and the lag it read (ms)."""
    proc = watch(srv, seconds + 2)
    try:
        tps = load(srv.versus, conn, threads, seconds)
    finally:
        _, lags = finish(proc)
    return tps, lags


def idle_cost(srv, seconds):
    """The primary's CPU seconds a second without and with sampling when nothing else runs, and the
    sampling process's own."""
    c0 = srv.cpu()
    subprocess.run(["sleep", str(seconds)])
    quiet = (srv.cpu() - c0) / seconds
    c0 = srv.cpu()
    own, _ = finish(watch(srv, seconds))
    busy = (srv.cpu() - c0) / seconds
    return quiet, busy, own / seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--time", type=int, default=20, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=6, help="rounds of one run without and one with sampling")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--out", default="BENCHMARKS.md", help="file whose section is (re)written; - prints only")
    a = ap.parse_args()
    a.versus = os.path.abspath(a.versus)

    srv = Server(a.versus, ["innodb_buffer_pool_size=256M", "innodb_flush_log_at_trx_commit=2", "sync_binlog=0"],
                 replicas=1)
    conn = tcp_login(srv)
    off, on, lags, loaded_cpu = [], [], [], []
    try:
        prepare(a.versus, conn, TABLES, test="oltp_write_only")
        quiet, busy, own = idle_cost(srv, a.time)
        print(f"idle primary: {quiet * 1e3:.1f} ms CPU/s without sampling, {busy * 1e3:.1f} with; "
              f"the sampling process {own * 1e3:.1f} ms CPU/s", flush=True)
        for i in range(a.rounds):
            for sampling in ([False, True] if i % 2 == 0 else [True, False]):
                c0 = srv.cpu()
                if sampling:
                    tps, seen = sampled(srv, a.threads, a.time, conn)
                    on.append(tps)
                    lags += seen
                else:
                    off.append(load(a.versus, conn, a.threads, a.time))
                    loaded_cpu.append((srv.cpu() - c0) / a.time)
                print(f"round {i + 1}, sampling {'on' if sampling else 'off'}: "
                      f"{(on if sampling else off)[-1]:,.0f} tps", flush=True)
    finally:
        srv.stop()

    ratios = [b / a_ for a_, b in zip(off, on)]
    heartbeat = busy - quiet
    share = heartbeat / statistics.median(loaded_cpu)
    rows = [[str(a.threads), span(off, "{:,.0f}"), span(on, "{:,.0f}"), span(ratios, "{:.3f}×"),
             f"{statistics.median(ratios):.3f}×", f"{heartbeat * 1e3:.1f} ms/s ({share * 100:.2f} %)",
             f"{own * 1e3:.1f} ms/s", span(lags, "{:.0f} ms") if lags else "-"]]
    text = (f"`bench/replication_heartbeat.py` at {git_build()}: oltp_write_only (2 tables of 10,000 rows, "
            f"{a.threads} threads) on a sandboxed MariaDB primary with one asynchronous replica, {a.rounds} rounds "
            f"of {a.time} s without and with `versus server lag` beside the load (the heartbeat every 100 ms on "
            "the primary, the replica read each second: what an experiment does during each run of a target "
            "with replicas), A B then B A. The ratio is the primary's tps with sampling over its tps without, "
            "in the same round. The heartbeat's cost is also measured directly, on the idle primary: its CPU a "
            "second with sampling minus without, and that as a share of its CPU a second under the load "
            "without sampling (median over the rounds); then the sampling process's own CPU.")
    columns = [("threads", True), ("tps without", True), ("tps with sampling", True), ("ratio per round", True),
               ("median ratio", True), ("heartbeat on the primary", True), ("sampler's CPU", True),
               ("lag read", True)]
    write_table_section(a.out, BEGIN, END, "## Replica lag sampling: its cost to the primary", text, columns, rows)


if __name__ == "__main__":
    main()
