#!/usr/bin/env python3
"""What the server does per transaction for two clients of the same test: versus and the floor client.

Runs one test (one thread count, one transport) with the two clients alternately, A B B A A B ..., against
one sandboxed MariaDB, and measures, per run: throughput, the client's CPU per transaction (wait4; the
floor's less what it spent drawing its statements before its clock started), the
server's user and system CPU per transaction, and its threads' sleeps (voluntary context switches) and
preemptions (involuntary ones) per transaction (/proc). Then it compares every global status counter of
the server per transaction, median against median, and lists those that differ by more than 2 %: if the
two clients made the server do different work (other statements, other bytes, other handler calls), it
shows here; if they did not, a difference in the server's CPU per transaction comes from how its threads
were scheduled (how often they slept), not from what it was asked to do.

Usage: bench/server_side.py [--versus target/release/versus] [--floor target/release/examples/floor_client]
       [--test oltp_point_select] [--threads 4] [--via tcp|socket] [--rounds 6] [--time 5]
Prints its table (markdown). Needs sysbench (to prepare), a release build of versus and of the floor
client, the distribution's MariaDB. Nothing is left running.
"""

import argparse
import sys

from benchlib import CLIENT_BENCH_SETTINGS, RUN_TABLES, Server, client_paths, drawing_cpu, run_client
from sysbench_compare import tps_of
from targets import median


def status(srv):
    """Every numeric global status counter of the server."""
    out = {}
    for line in srv.sql("SHOW GLOBAL STATUS").stdout.splitlines():
        k, _, v = line.partition("\t")
        if v.lstrip("-").isdigit():
            out[k] = int(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    client_paths(ap)
    ap.add_argument("--test", default="oltp_point_select")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--via", choices=["tcp", "socket"], default="tcp")
    ap.add_argument("--rounds", type=int, default=6, help="runs per client, alternating A B B A ...")
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    a = ap.parse_args()

    srv = Server(a.versus, CLIENT_BENCH_SETTINGS)
    via = srv.via()[a.via]
    clients = {"versus": [a.versus, "sysbench"], "floor": [a.floor]}
    runs = {c: [] for c in clients}
    try:
        srv.prepare_run_tables(a.sysbench)
        for rnd in range(a.rounds):
            for c in (["versus", "floor"] if rnd % 2 == 0 else ["floor", "versus"]):
                s0, st0 = srv.sched(), status(srv)
                _, cpu, text = run_client(clients[c] + [a.test] + via + RUN_TABLES + [
                    f"--threads={a.threads}", f"--time={a.time}", "--rand-type=uniform", "run"])
                s1, st1 = srv.sched(), status(srv)
                cpu -= drawing_cpu(text)
                events, tps = tps_of(text)
                row = dict(tps=tps, client_us=cpu / events * 1e6,
                           server_user_us=(s1["user"] - s0["user"]) / events * 1e6,
                           server_sys_us=(s1["sys"] - s0["sys"]) / events * 1e6,
                           server_sleeps=(s1["sleeps"] - s0["sleeps"]) / events,
                           server_preempt=(s1["preempt"] - s0["preempt"]) / events,
                           counters={k: (st1[k] - st0.get(k, 0)) / events for k in st1})
                runs[c].append(row)
                print(f"{c}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items() if k != "counters"), flush=True)
    finally:
        srv.stop()

    print(f"\n{a.test}, {a.threads} threads, {a.via}, {a.rounds} runs of {a.time} s per client, medians "
          "(range):\n")
    print("| per transaction | versus | floor | versus / floor |")
    print("|---|---|---|---|")
    for k in ("tps", "client_us", "server_user_us", "server_sys_us", "server_sleeps", "server_preempt"):
        v = [r[k] for r in runs["versus"]]
        f = [r[k] for r in runs["floor"]]
        print(f"| {k} | {median(v):.2f} ({min(v):.2f}–{max(v):.2f}) | {median(f):.2f} ({min(f):.2f}–{max(f):.2f}) "
              f"| {median(v) / median(f):.2f} |")
    names = sorted(set().union(*(r["counters"] for c in runs for r in runs[c])))
    differ = []
    for k in names:
        v = median([r["counters"].get(k, 0) for r in runs["versus"]])
        f = median([r["counters"].get(k, 0) for r in runs["floor"]])
        # A gauge (a size, an age, a position) can fall between two readings; only counters are compared.
        if any(r["counters"].get(k, 0) < 0 for c in runs for r in runs[c]):
            continue
        if max(abs(v), abs(f)) >= 0.001 and abs(v - f) > 0.02 * max(abs(v), abs(f)):
            differ.append((k, v, f))
    print(f"\nStatus counters per transaction that differ by more than 2 % ({len(differ)} of {len(names)}):")
    for k, v, f in differ:
        print(f"  {k}: versus {v:.4f}, floor {f:.4f}")


if __name__ == "__main__":
    sys.exit(main())
