#!/usr/bin/env python3
"""Lua scripts under versus's LuaJIT against sysbench 1.0.20 running the same .lua files (issue 41).

For oltp_point_select.lua and oltp_read_write.lua (the files the sysbench package ships) and
examples/lua/tpcc_like.lua, at each thread count, A B A B against one sandboxed MariaDB and the same
tables: sysbench running the script, `versus sysbench SCRIPT --lua` running it, and for the shipped
scripts versus's built-in Rust test of the same name. Per run: events per second (from the report) and
the client's CPU (user + system, from wait4) per event. Targets: tps ≥ 1.0× and client CPU per event
≤ 0.9× sysbench's. Also the TPC-C-like script's prepare, wall time and client CPU, both tools at the
same threads.

Writes its section of BENCHMARKS.md (between markers, replacing an earlier one) or of --out; `--out -`
only prints it. Every figure is the median over the rounds.

Usage: bench/lua_vs_sysbench.py [--versus target/release/versus] [--time 10] [--rounds 2]
    [--threads 1,4,16,64] [--out BENCHMARKS.md]
Needs: a release build of versus, sysbench 1.0.20 and the distribution's MariaDB. Nothing is left running.
"""

import argparse
import os
import statistics
import time

from benchlib import Server, git_build, replace_section, run_client, transactions

BEGIN = "<!-- lua_vs_sysbench: written by bench/lua_vs_sysbench.py -->"
END = "<!-- /lua_vs_sysbench -->"
SHIPPED = "/usr/share/sysbench"
TPCC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "lua", "tpcc_like.lua"))
TPS_TARGET, CPU_TARGET = 1.0, 0.9




def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--sysbench", default="/usr/bin/sysbench")
    ap.add_argument("--time", type=int, default=10, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=2, help="A B rounds per thread count")
    ap.add_argument("--threads", default="1,4,16,64")
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--scale", type=int, default=4, help="warehouses of the TPC-C-like script's runs")
    ap.add_argument("--prepare-scale", type=int, default=40, help="warehouses of the prepare measured")
    ap.add_argument("--out", default="BENCHMARKS.md", help="file whose section is (re)written; - prints only")
    a = ap.parse_args()
    # sysbench looks for a script's modules in the working directory (not the script's folder, as versus
    # does too): run from the TPC-C-like script's folder.
    a.versus = os.path.abspath(a.versus)
    a.out = a.out if a.out == "-" else os.path.abspath(a.out)
    os.chdir(os.path.dirname(TPCC))

    load_before = open("/proc/loadavg").read().split()[:3]
    srv = Server(a.versus, ["innodb_buffer_pool_size=1G", "innodb_flush_log_at_trx_commit=2", "max_connections=300"])
    conn = ["--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=sbtest",
            "--mysql-password=sbpass", "--mysql-db=sbtest"]
    oltp = ["--tables=1", f"--table-size={a.table_size}"]
    results, prepares = [], []
    try:
        # The TPC-C-like prepare, both tools at the same threads, each into empty tables.
        tpcc_opts = [f"--scale={a.prepare_scale}", "--threads=2"]
        for name, cmd in [("sysbench", [a.sysbench, TPCC]), ("versus", [a.versus, "sysbench", TPCC])]:
            wall, cpu, _ = run_client([*cmd, *conn, *tpcc_opts, "prepare"])
            prepares.append((name, wall, cpu))
            print(f"tpcc_like prepare {name}: {wall:.1f} s wall, {cpu:.1f} s client CPU", flush=True)
            run_client([*cmd, *conn, "cleanup"])
        run_client([a.sysbench, TPCC, *conn, f"--scale={a.scale}", "--threads=2", "prepare"])
        run_client([a.sysbench, f"{SHIPPED}/oltp_read_write.lua", *conn, *oltp, "prepare"])
        cases = [
            ("oltp_point_select.lua", oltp, {
                "sysbench": [a.sysbench, f"{SHIPPED}/oltp_point_select.lua"],
                "versus lua": [a.versus, "sysbench", f"{SHIPPED}/oltp_point_select.lua", "--lua"],
                "versus built-in": [a.versus, "sysbench", "oltp_point_select"],
            }),
            ("oltp_read_write.lua", oltp, {
                "sysbench": [a.sysbench, f"{SHIPPED}/oltp_read_write.lua"],
                "versus lua": [a.versus, "sysbench", f"{SHIPPED}/oltp_read_write.lua", "--lua"],
                "versus built-in": [a.versus, "sysbench", "oltp_read_write"],
            }),
            ("tpcc_like.lua", [f"--scale={a.scale}"], {
                "sysbench": [a.sysbench, TPCC],
                "versus lua": [a.versus, "sysbench", TPCC],
            }),
        ]
        for script, opts, tools in cases:
            # One untimed run of each first, so that all find the buffer pool equally warm.
            for cmd in tools.values():
                run_client([*cmd, *conn, *opts, "--threads=1", "--time=1", "run"])
            for threads in [int(t) for t in a.threads.split(",")]:
                tps = {k: [] for k in tools}
                cpu = {k: [] for k in tools}
                for rnd in range(a.rounds):
                    for name, cmd in tools.items():
                        _, client, text = run_client([*cmd, *conn, *opts, f"--threads={threads}",
                                                      f"--time={a.time}", "run"])
                        n, rate = transactions(text)
                        tps[name].append(rate)
                        cpu[name].append(client * 1e6 / max(n, 1))
                        print(f"{script} threads={threads} round {rnd + 1} {name}: {rate:.0f} tps, "
                              f"{cpu[name][-1]:.1f} µs client CPU/event", flush=True)
                med = statistics.median
                results.append(dict(script=script, threads=threads, tps={k: med(v) for k, v in tps.items()},
                                    cpu={k: med(v) for k, v in cpu.items()}))
        run_client([a.sysbench, TPCC, *conn, "cleanup"])
        run_client([a.sysbench, f"{SHIPPED}/oltp_read_write.lua", *conn, *oltp, "cleanup"])
    finally:
        srv.stop()
    load_after = open("/proc/loadavg").read().split()[:3]
    write_report(a, results, prepares, load_before, load_after)


def write_report(a, results, prepares, before, after):
    lines = [
        BEGIN,
        "## Lua scripts: versus's LuaJIT vs sysbench 1.0.20 on the same .lua files (issue 41)",
        "",
        f"Produced by `bench/lua_vs_sysbench.py --time {a.time} --rounds {a.rounds} --threads {a.threads}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')} (build {git_build()}): {os.cpu_count()} cores, one sandboxed MariaDB "
        "(system mariadbd, buffer pool 1G, innodb_flush_log_at_trx_commit=2), the oltp scripts on 1 table x "
        f"{a.table_size} rows, the TPC-C-like script at scale {a.scale}; runs of {a.time} s in the order sysbench, "
        "versus running the .lua file (`--lua`), versus's built-in test; medians over the rounds. Client CPU = "
        "user+sys of the client process (wait4) per event. Client and server share the 2 cores, so a client that "
        f"costs less leaves the server more CPU. Load average before/after: {' '.join(before)} / {' '.join(after)}.",
        "",
        "| script | threads | tps sysbench | tps versus lua | tps ratio | CPU µs/event sysbench | CPU µs/event "
        "versus lua | CPU ratio | CPU µs/event built-in |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        sb, vl = "sysbench", "versus lua"
        builtin = r["cpu"].get("versus built-in")
        lines.append(
            f"| {r['script']} | {r['threads']} | {r['tps'][sb]:.0f} | {r['tps'][vl]:.0f} | "
            f"{r['tps'][vl] / r['tps'][sb]:.2f} | {r['cpu'][sb]:.1f} | {r['cpu'][vl]:.1f} | "
            f"{r['cpu'][vl] / r['cpu'][sb]:.2f} | {'—' if builtin is None else f'{builtin:.1f}'} |")
    lines.append("")
    met_tps = sum(1 for r in results if r["tps"]["versus lua"] / r["tps"]["sysbench"] >= TPS_TARGET)
    met_cpu = sum(1 for r in results if r["cpu"]["versus lua"] / r["cpu"]["sysbench"] <= CPU_TARGET)
    lines.append(f"- tps ≥ {TPS_TARGET}× sysbench in {met_tps} of {len(results)} cells; client CPU per event "
                 f"≤ {CPU_TARGET}× sysbench's in {met_cpu} of {len(results)} cells.")
    for name, wall, cpu in prepares:
        lines.append(f"- TPC-C-like prepare (scale {a.prepare_scale}, 2 threads), {name}: {wall:.1f} s wall, "
                     f"{cpu:.2f} s client CPU.")
    lines += ["", END]
    section = "\n".join(lines)
    print(section)
    if a.out == "-":
        return
    replace_section(a.out, BEGIN, END, section)


if __name__ == "__main__":
    main()
