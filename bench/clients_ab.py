#!/usr/bin/env python3
"""Two or more client builds (or flags) side by side on one test: A B C, B C A, C A B, ...

For judging one change to the client: say the build before it against the build after it, with the
floor client as the reference. Every client runs the same test against one sandboxed MariaDB (the
set-up of the other client comparisons), the order turning by one place each round, and per run it
records throughput, the client's user and system CPU per transaction (wait4; the floor's less what it
spent drawing its statements before its clock started), its voluntary context switches per transaction,
the server's CPU and its threads' sleeps per transaction, and the share of the host's CPU time that
its hypervisor stole meanwhile (steal_pct, from /proc/stat). It prints each run, then the medians and
ranges per client.

Usage: bench/clients_ab.py --client NAME=COMMAND [--client NAME=COMMAND ...] [--test oltp_point_select]
       [--threads 64] [--via tcp|socket] [--rounds 6] [--time 5] [--setting NAME=VALUE ...]
COMMAND is split on spaces and gets the test and its options appended, e.g.
  --client "before=/tmp/versus-before sysbench" --client "after=target/release/versus sysbench"
  --client "nohist=target/release/versus sysbench --percentile=0"
  --client "floor=target/release/examples/floor_client"
Needs sysbench (to prepare) and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import sys

from benchlib import (CLIENT_BENCH_SETTINGS, RUN_TABLES, Server, drawing_cpu, host_cpu, run_client_usage,
                      steal_share)
from sysbench_compare import tps_of
from targets import median

FIGURES = ("tps", "user_us", "sys_us", "cpu_us", "sleeps", "server_us", "server_sleeps", "steal_pct")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", action="append", required=True, help="NAME=COMMAND (repeat)")
    ap.add_argument("--versus", default="target/release/versus", help="the versus that starts the server")
    ap.add_argument("--sysbench", default="/usr/bin/sysbench")
    ap.add_argument("--test", default="oltp_point_select")
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--via", choices=["tcp", "socket"], default="tcp")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    ap.add_argument("--setting", action="append", default=[],
                    help="NAME=VALUE for the server's my.cnf besides the usual ones, e.g. "
                         "thread_handling=pool-of-threads (repeat)")
    a = ap.parse_args()
    clients = {}
    for c in a.client:
        name, sep, cmd = c.partition("=")
        if not sep or not name or not cmd.split():
            raise SystemExit(f"--client {c}: give NAME=COMMAND")
        if name in clients:
            raise SystemExit(f"--client {c}: {name} is given twice")
        clients[name] = cmd.split()

    for st in a.setting:
        if "=" not in st:
            raise SystemExit(f"--setting {st}: give NAME=VALUE")
    srv = Server(a.versus, CLIENT_BENCH_SETTINGS + a.setting)
    runs = {c: [] for c in clients}
    try:
        via = srv.via()[a.via]
        srv.prepare_run_tables(a.sysbench)
        names = list(clients)
        for r in range(a.rounds):
            for c in names[r % len(names):] + names[:r % len(names)]:
                s0, h0 = srv.sched(), host_cpu()
                _, ru, text = run_client_usage(clients[c] + [a.test] + via + RUN_TABLES + [
                    f"--threads={a.threads}", f"--time={a.time}", "--rand-type=uniform", "run"])
                s1, h1 = srv.sched(), host_cpu()
                user, sys_, nvcsw = ru.ru_utime - drawing_cpu(text), ru.ru_stime, ru.ru_nvcsw
                events, tps = tps_of(text)
                row = dict(tps=tps, user_us=user / events * 1e6, sys_us=sys_ / events * 1e6,
                           cpu_us=(user + sys_) / events * 1e6, sleeps=nvcsw / events,
                           server_us=(s1["user"] + s1["sys"] - s0["user"] - s0["sys"]) / events * 1e6,
                           server_sleeps=(s1["sleeps"] - s0["sleeps"]) / events,
                           steal_pct=100 * steal_share(h0, h1))
                runs[c].append(row)
                print(f"{c}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    finally:
        srv.stop()

    print(f"\n{a.test}, {a.threads} threads, {a.via}, {a.rounds} runs of {a.time} s per client, medians (range):\n")
    print("| client | " + " | ".join(FIGURES) + " |")
    print("|---" * (len(FIGURES) + 1) + "|")
    for c, rows in runs.items():
        cells = []
        for k in FIGURES:
            v = [x[k] for x in rows]
            cells.append(f"{median(v):.2f} ({min(v):.2f}–{max(v):.2f})")
        print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
