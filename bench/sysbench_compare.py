#!/usr/bin/env python3
"""Side-by-side comparison of `versus sysbench` and sysbench 1.0.20 against one sandboxed MariaDB.

Runs every configuration in interleaved rounds against the same server and tables, over TCP and over the
unix socket; the clients' order turns by one place each round (sysbench, versus, floor; then versus,
floor, sysbench; ...), so that no client always runs first or last. Measures, per run:
transactions per second (from the report), client CPU (user+sys of the client process, from wait4) per
transaction, server CPU, the 1-minute load average at its start, and the wall time of `prepare`. Writes
the medians over the rounds and the ratios to sysbench and to the floor client to BENCHMARKS.md (or --out),
and judges versus against issue 18's targets, setting each miss against the floor client (bench/targets.py).
`--load N` runs the whole run phase beside N busy processes (one spinning loop each, at normal priority),
for the same comparison on a loaded machine.

Usage: bench/sysbench_compare.py [--versus target/release/versus] [--time 10] [--rounds 3] [--load 0]
       [--out BENCHMARKS.md] [--raw runs.json]
Needs: a release build of versus and of the floor client (`cargo build --release --example floor_client`),
the distribution's MariaDB and /usr/bin/sysbench. Nothing is left running.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

import targets
from benchlib import CLIENT_BENCH_SETTINGS, RUN_TABLES, Server, client_paths, drawing_cpu, run_client
from targets import median


def tps_of(text):
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", text)
    return int(m.group(1)), float(m.group(2))


def table_shape(srv, tables):
    rows = []
    for t in range(1, tables + 1):
        r = srv.sql(f"SELECT COUNT(*), MIN(id), MAX(id), SUM(LENGTH(c)), SUM(LENGTH(pad)), COUNT(DISTINCT k) > 0 "
                    f"FROM sbtest.sbtest{t}").stdout.split()
        srv.sql(f"ANALYZE TABLE sbtest.sbtest{t}")
        r += srv.sql("SELECT data_length, index_length FROM information_schema.tables WHERE table_schema = 'sbtest' "
                     f"AND table_name = 'sbtest{t}'").stdout.split()
        rows.append(tuple(r))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    client_paths(ap)
    ap.add_argument("--time", type=int, default=10, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the report gives medians")
    ap.add_argument("--threads", default="1,4,16,64")
    ap.add_argument("--transports", default="tcp,socket")
    ap.add_argument("--prepare-rows", type=int, default=1_000_000)
    ap.add_argument("--skip-prepare", action="store_true")
    ap.add_argument("--out", default="BENCHMARKS.md")
    ap.add_argument("--raw", help="also write every run's figures to this JSON file (for another analysis)")
    ap.add_argument("--load", type=int, default=0,
                    help="busy processes (a spinning loop each) running beside the whole run phase")
    ap.add_argument("--variants", default="versus,floor",
                    help="clients to run besides sysbench: versus (thread per connection, lean client), "
                         "versus-mux1 / versus-mux2 (--client-threads=1/2), versus-crate (--client=crate), "
                         "versus-nice / sysbench-nice (at nice -5), "
                         "floor (bench/floor_client.rs: closed loop only), "
                         "floor-uring / floor-uring1 / floor-uring2 (the floor over io_uring: a ring per "
                         "connection, or 1 / 2 loop threads)")
    a = ap.parse_args()

    srv = Server(a.versus, CLIENT_BENCH_SETTINGS)
    via = srv.via()
    conn = via["tcp"]
    all_tools = {
        "sysbench": [a.sysbench],
        "versus": [a.versus, "sysbench"],
        "versus-mux1": [a.versus, "sysbench", "--client-threads=1"],
        "versus-mux2": [a.versus, "sysbench", "--client-threads=2"],
        "versus-crate": [a.versus, "sysbench", "--client=crate"],
        # The same client at a higher scheduling priority than the server's threads (needs root or
        # CAP_SYS_NICE): whether a client that waits behind server threads costs throughput.
        "versus-nice": ["nice", "-n", "-5", a.versus, "sysbench"],
        "sysbench-nice": ["nice", "-n", "-5", a.sysbench],
        "floor": [a.floor],
        # The floor client over io_uring: one ring per connection's thread, or (uring1/uring2) one or two
        # loop threads serving all connections from one ring each (bench/floor_uring.rs).
        "floor-uring": ["env", "FLOOR_IO=uring", a.floor],
        "floor-uring1": ["env", "FLOOR_IO=uring:1", a.floor],
        "floor-uring2": ["env", "FLOOR_IO=uring:2", a.floor],
    }
    order = ["sysbench"] + [v for v in a.variants.split(",") if v]
    tools = {k: all_tools[k] for k in order}
    load_before = open("/proc/loadavg").read().split()[:3]
    results = []
    prepare_rows = []
    hogs = []
    try:
        # Prepare speed: 2 tables x N rows at 2 threads, A B A B, table shapes compared.
        if not a.skip_prepare:
            popts = conn + ["--tables=2", f"--table-size={a.prepare_rows}", "--threads=2"]
            for rnd in range(2):
                for tool in ("sysbench", "versus"):
                    s0 = srv.cpu()
                    wall, cpu, _ = run_client(tools[tool] + ["oltp_read_write"] + popts + ["prepare"])
                    server_cpu = srv.cpu() - s0
                    shape = table_shape(srv, 2)
                    run_client(tools[tool] + ["oltp_read_write"] + popts + ["cleanup"])
                    prepare_rows.append(dict(tool=tool, wall=wall, cpu=cpu, server_cpu=server_cpu, shape=shape))
                    print(f"prepare {tool}: {wall:.2f}s wall, {cpu:.2f}s client CPU, {server_cpu:.2f}s server CPU, "
                          f"{shape}", flush=True)

        # Run phase: 4 tables x 100k rows, prepared once by sysbench.
        srv.prepare_run_tables(a.sysbench)
        configs = []
        for tr in a.transports.split(","):
            for test in ("oltp_point_select", "oltp_read_write"):
                for th in [int(x) for x in a.threads.split(",")]:
                    configs.append((test, th, 0, tr))
        configs += [("oltp_point_select", 4, 5000, "tcp"), ("oltp_read_write", 4, 300, "tcp")]
        for _ in range(a.load):
            hogs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True))
        for test, th, rate, tr in configs:
            for rnd in range(a.rounds):
                turn = rnd % len(order)
                for tool in order[turn:] + order[:turn]:
                    if rate and tool.startswith("floor"):
                        continue
                    extra = [f"--threads={th}", f"--time={a.time}", "--rand-type=uniform"]
                    if rate:
                        extra.append(f"--rate={rate}")
                    load = float(open("/proc/loadavg").read().split()[0])
                    s0 = srv.sched()
                    wall, cpu, text = run_client(tools[tool] + [test] + via[tr] + RUN_TABLES + extra + ["run"])
                    s1 = srv.sched()
                    cpu -= drawing_cpu(text)
                    events, tps = tps_of(text)
                    d = {k: s1[k] - s0[k] for k in s0}
                    results.append(dict(test=test, threads=th, rate=rate, via=tr, tool=tool, round=rnd, tps=tps,
                                        events=events, cpu=cpu, wall=wall, server_cpu=d["user"] + d["sys"],
                                        server_sys=d["sys"], server_sleeps=d["sleeps"], load=load))
                    print(f"{test} t={th} rate={rate} {tr} {tool}: {tps:.1f} tps, {cpu / events * 1e6:.1f} us CPU/txn, "
                          f"client {cpu / wall / os.cpu_count() * 100:.1f}% of all CPU, server sys "
                          f"{d['sys'] / events * 1e6:.1f} us/txn, server sleeps {d['sleeps'] / events:.2f}/txn "
                          f"(load {load})", flush=True)
    finally:
        # The busy loops were started here, in sessions of their own: stopped by their PIDs.
        for h in hogs:
            os.killpg(h.pid, signal.SIGKILL)
            h.wait()
        srv.stop()
    load_after = open("/proc/loadavg").read().split()[:3]
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump(dict(runs=results, prepare=prepare_rows, order=order, loads=[load_before, load_after]), f,
                      indent=1)
    write_report(a, results, prepare_rows, order, (load_before, load_after))


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def write_report(a, results, prepare_rows, order, loads):
    def pick(key, tool):
        return [r for r in results if (r["test"], r["threads"], r["rate"], r["via"], r["tool"]) == key + (tool,)]

    loads_all = [r["load"] for r in results]
    lines = [
        "# Benchmarks",
        "",
        "## versus sysbench vs sysbench 1.0.20 (side by side)",
        "",
        f"Produced by `bench/sysbench_compare.py --time {a.time} --rounds {a.rounds} --variants {','.join(order[1:])}"
        f"{f' --load {a.load}' if a.load else ''}` "
        f"on {time.strftime('%Y-%m-%d %H:%M')}: {os.cpu_count()} cores, one sandboxed MariaDB (system mariadbd 10.11, "
        "buffer pool 2G, innodb_flush_log_at_trx_commit=2), all clients on the same host, runs of "
        f"{a.time} s, {a.rounds} interleaved rounds, the clients' order turning by one place each round (first "
        f"round: {', '.join(order)}); every figure is the median "
        "over the rounds. Run phase: 4 tables x 100k rows, `--rand-type=uniform`. CPU is the client process's "
        "user+sys time (wait4) divided by its transactions (the floor's less the CPU it spent drawing its "
        "statements before its clock started, which it reports); server CPU likewise from /proc, with its system part "
        "and the server threads' sleeps (voluntary context switches) per transaction beside it. Load average "
        f"before/after: {' '.join(loads[0])} / {' '.join(loads[1])}; 1-minute load at the start of the runs: "
        f"median {median(loads_all):.2f}, range {min(loads_all, default=0):.2f}–{max(loads_all, default=0):.2f} "
        "(per row in the last column; other work on the machine adds noise)"
        + (f". **Loaded machine**: {a.load} busy process(es), a spinning loop each at normal priority, ran beside "
           "the whole run phase." if a.load else "."),
        "",
        "Clients: `versus` = lean client, one OS thread per connection (the default); `versus-mux1`/`-mux2` = "
        "event-loop workers, `--client-threads=1`/`2`; `versus-crate` = the mysql crate (`--client=crate`); "
        "`floor` = bench/floor_client.rs, the null client (pre-encoded packets replayed, responses not decoded: "
        "the least CPU any client that waits for each answer spends)"
        + ("; `floor-uring` = the same over io_uring, one ring per connection (a linked send and recv, one "
           "syscall per statement), `floor-uring1`/`-uring2` = one or two loop threads serving every "
           "connection from one ring each." if any(t.startswith("floor-uring") for t in order) else "."),
        "",
        "| test | threads | rate | via | client | tps | tps vs sysbench | CPU µs/txn | CPU vs sysbench | CPU vs floor "
        "| server CPU µs/txn | of it sys | server sleeps/txn | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    seen = []
    for r in results:
        key = (r["test"], r["threads"], r["rate"], r["via"])
        if key in seen:
            continue
        seen.append(key)

        def med(tool, f):
            return median([f(x) for x in pick(key, tool)])

        tps_b = med("sysbench", lambda x: x["tps"])
        cpu_b = med("sysbench", lambda x: x["cpu"] / x["events"] * 1e6)
        cpu_f = med("floor", lambda x: x["cpu"] / x["events"] * 1e6)
        for tool in order:
            if not pick(key, tool):
                continue
            tps = med(tool, lambda x: x["tps"])
            cpu = med(tool, lambda x: x["cpu"] / x["events"] * 1e6)
            srv_cpu = med(tool, lambda x: x["server_cpu"] / x["events"] * 1e6)
            srv_sys = med(tool, lambda x: x["server_sys"] / x["events"] * 1e6)
            srv_sleeps = med(tool, lambda x: x["server_sleeps"] / x["events"])
            load = med(tool, lambda x: x["load"])
            vs_floor = f"{cpu / cpu_f:.2f}" if cpu_f == cpu_f else "-"
            lines.append(f"| {key[0]} | {key[1]} | {key[2] or '-'} | {key[3]} | {tool} | {tps:.0f} | {tps / tps_b:.2f} | "
                         f"{cpu:.1f} | {cpu / cpu_b:.2f} | {vs_floor} | {srv_cpu:.1f} | {srv_sys:.1f} | "
                         f"{srv_sleeps:.2f} | {load:.2f} |")
    lines += targets.section(results)
    if prepare_rows:
        def prep(tool, key):
            return mean([r[key] for r in prepare_rows if r["tool"] == tool])

        ws, wv = prep("sysbench", "wall"), prep("versus", "wall")
        shapes = {r["tool"]: r["shape"] for r in prepare_rows}
        lines += [
            "",
            f"Prepare, 2 tables x {a.prepare_rows} rows, `--threads=2` (mean of 2 rounds): sysbench {ws:.2f} s, versus "
            f"{wv:.2f} s wall: **{ws / wv:.2f}x faster** (versus loads with LOAD DATA LOCAL INFILE).",
            "",
            "| prepare | wall s | client CPU s | server CPU s | all CPU / cores (a floor for the wall time) |",
            "|---|---|---|---|---|",
        ]
        for tool in ("sysbench", "versus"):
            c, sc = prep(tool, "cpu"), prep(tool, "server_cpu")
            lines.append(f"| {tool} | {prep(tool, 'wall'):.2f} | {c:.2f} | {sc:.2f} | {(c + sc) / os.cpu_count():.2f} |")
        lines += [
            "",
            "Table shape after prepare (rows, min id, max id, total length of c, total length of pad, k set, data length, "
            "index length) — "
            f"sysbench: `{shapes.get('sysbench')}`, versus: `{shapes.get('versus')}`.",
        ]
    lines.append("")
    # Keep the hand-written analysis below the marker of an existing file.
    marker = "<!-- analysis: kept by bench/sysbench_compare.py -->"
    tail = ""
    if os.path.exists(a.out):
        old = open(a.out).read()
        if marker in old:
            tail = old[old.index(marker):]
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + ("\n" + tail if tail else ""))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
