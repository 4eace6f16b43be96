#!/usr/bin/env python3
"""What profiling costs the server (issue 40): throughput with `profile = true` against without, A B A B.

Runs the same experiment twice per round with `versus run` in one temporary versus home: once without
profiling ("off") and once with it ("on", at --hz samples per second), alternating which goes first
from round to round (off on, on off, …) so a drift of the machine hits both alike. Each experiment is
the distribution's MariaDB in a sandbox, oltp_read_only on small in-memory tables, at 1, 4 and 16
threads, one run per thread count. Per thread count: the mean tps of each side over the rounds, the
ratio on/off with the per-round ratios, and the sampled CPU per transaction of the "on" runs against
the /proc figure of the same runs (the profile's own accuracy).

With --waits the "on" runs also record off-CPU waits (`profile_waits = true`: every context switch
on every CPU with its stack), and the table adds the switches folded per run.

Prints a markdown section (for BENCHMARKS.md, "Profiling overhead").

Usage: bench/profile_overhead.py [--versus target/release/versus] [--rounds 3] [--duration 15]
    [--hz 199] [--threads 1,4,16] [--test oltp_read_only] [--waits]
The defaults take about 10 minutes on a 2-core machine. Needs a release build of versus, perf and the
distribution's MariaDB; runs nothing else at the same time and leaves nothing running; its temporary
versus home is removed.
"""

import argparse
import gzip
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile


def experiment(name, threads, duration, test, hz, waits):
    profile = f"profile = true\nprofile_hz = {hz}\n" if hz else ""
    if hz and waits:
        profile += "profile_waits = true\n"
    return f"""name = "{name}"
builds = ["system"]
threads = [{", ".join(str(t) for t in threads)}]
duration = "{duration}s"
warmup = "2s"
repetitions = 1
order = "sequential"
{profile}
[[configs]]
name = "default"

[[workloads]]
test = "{test}"
options = {{ tables = 2, table-size = 10000 }}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=15)
    ap.add_argument("--hz", type=int, default=199)
    ap.add_argument("--threads", default="1,4,16")
    ap.add_argument("--test", default="oltp_read_only")
    ap.add_argument("--waits", action="store_true", help="record off-CPU waits too in the 'on' runs")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    versus = os.path.abspath(a.versus)
    if not os.access(versus, os.X_OK):
        sys.exit(f"{versus}: not found; build it (cargo build --release) or give --versus")
    home = tempfile.mkdtemp(prefix="vs-profile-bench-", dir="/tmp")
    env = dict(os.environ, VERSUS_HOME=home)
    env.pop("VERSUS_DB", None)
    try:
        subprocess.run([versus, "server", "fetch", "system"], env=env, check=True, capture_output=True)
        names = {"off": [], "on": []}
        for r in range(a.rounds):
            order = ["off", "on"] if r % 2 == 0 else ["on", "off"]
            for mode in order:
                name = f"{mode}-{r + 1}"
                path = os.path.join(home, f"{name}.toml")
                with open(path, "w") as f:
                    f.write(experiment(name, threads, a.duration, a.test, a.hz if mode == "on" else 0, a.waits))
                print(f"round {r + 1}: {mode}", file=sys.stderr, flush=True)
                p = subprocess.run([versus, "run", path], env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"versus run {name} failed:\n{p.stdout}{p.stderr}")
                names[mode].append(name)
        report(os.path.join(home, "results.db"), names, threads, a)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def report(db_path, names, threads, a):
    db = sqlite3.connect(db_path)
    q = """SELECT c.threads, r.tps, r.id FROM runs r JOIN cells c ON c.id = r.cell_id
           JOIN experiments e ON e.id = r.experiment_id WHERE e.name = ? AND r.status = 'done'"""
    tps = {m: {t: [] for t in threads} for m in names}
    accuracy = {t: [] for t in threads}
    samples = {t: [] for t in threads}
    switches = {t: [] for t in threads}
    for mode, exps in names.items():
        for name in exps:
            for t, v, run_id in db.execute(q, (name,)):
                tps[mode][t].append(v)
                if mode != "on":
                    continue
                row = db.execute("SELECT samples, transactions, folded, note FROM profiles "
                                 "WHERE run_id = ? AND event = 'cpu-clock'", (run_id,)).fetchone()
                waits = db.execute("SELECT samples FROM profiles WHERE run_id = ? AND event = 'sched:sched_switch' "
                                   "AND note IS NULL", (run_id,)).fetchone()
                if waits:
                    switches[t].append(waits[0])
                eff = dict(db.execute("SELECT metric, value FROM efficiency WHERE run_id = ?", (run_id,)))
                if row and row[3] is None and row[1] > 0:
                    total = sum(int(l.rsplit(" ", 1)[1]) for l in gzip.decompress(row[2]).decode().splitlines())
                    proc = eff.get("server_cpu_user_us_per_txn", 0) + eff.get("server_cpu_system_us_per_txn", 0)
                    if proc > 0:
                        accuracy[t].append(total / 1000 / row[1] / proc)
                    samples[t].append(row[0])
    what = ", with waits" if a.waits else ""
    print(f"### Profiling overhead ({a.test}, {a.duration} s runs, {a.hz} Hz{what}, {a.rounds} rounds A B A B)\n")
    extra = " switches per run |" if a.waits else ""
    print(f"| threads | tps off | tps on | on/off | per round | sampled / /proc CPU per txn | samples per run |{extra}")
    print("|---:|---:|---:|---:|---|---:|---:|" + ("---:|" if a.waits else ""))
    for t in threads:
        off, on = tps["off"][t], tps["on"][t]
        if not off or not on:
            continue
        rounds = ", ".join(f"{b / a_:.3f}" for a_, b in zip(off, on))
        acc = f"{statistics.mean(accuracy[t]):.3f}" if accuracy[t] else "—"
        smp = f"{statistics.mean(samples[t]):.0f}" if samples[t] else "—"
        sw = (f" {statistics.mean(switches[t]):.0f} |" if switches[t] else " — |") if a.waits else ""
        print(f"| {t} | {statistics.mean(off):.0f} | {statistics.mean(on):.0f} | "
              f"{statistics.mean(on) / statistics.mean(off):.3f} | {rounds} | {acc} | {smp} |{sw}")


if __name__ == "__main__":
    main()
