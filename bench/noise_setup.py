#!/usr/bin/env python3
"""Which set-up choices lower the between-run CV on this machine (issue 13, "less noise").

Runs A/A experiments with `versus run`: the distribution's MariaDB as two identical sandboxed targets
("A", "A again"), shuffled, oltp_read_only and oltp_write_only at 1 thread on small tables. First with the
current defaults, then with one set-up choice added, then the defaults again, then the next choice, and
so on (D C1 D C2 D C3 …, repeated --rounds times): each choice is measured next to the defaults, so a
drift of the machine hits both alike. Per experiment and workload the pooled between-run CV of tps is
sqrt((s²(ln A) + s²(ln A again)) / 2), as `versus calibrate` computes it; with it goes the mean 1-minute
load average sampled during the experiment (versus itself adds about 1 to it).

The choices (experiment-file keys, docs/experiments.md):
  warmup       warmup = "10s"   (the default is no warm-up)
  no_prewarm   prewarm = false  (the default prewarms: this shows what prewarm is worth)
  settle       settle = "5s"
  pin_cpus     pin_cpus = true  (needs ≥ 2 CPUs; skipped otherwise)
  drop_caches  drop_caches = true (needs root; skipped otherwise; drops the whole host's page cache)

Writes its section of docs/statistics.md (between markers, replacing an earlier one) or of --out;
`--out -` only prints it.

Usage: bench/noise_setup.py [--versus target/release/versus] [--duration 5] [--repetitions 3]
    [--rounds 1] [--table-size 10000] [--choices warmup,no_prewarm,settle,pin_cpus,drop_caches]
    [--out docs/statistics.md]
The defaults take about 20 minutes on a 2-core machine (the dry runs' estimates are printed first).
Needs a release build of versus and the distribution's MariaDB. Runs nothing else at the same time and
leaves nothing running; its temporary versus home is removed.
"""

import argparse
import math
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import replace_section

BEGIN = "<!-- noise_setup: written by bench/noise_setup.py -->"
END = "<!-- /noise_setup -->"
WORKLOADS = ["oltp_read_only", "oltp_write_only"]
CHOICES = {
    "warmup": 'warmup = "10s"',
    "no_prewarm": "prewarm = false",
    "settle": 'settle = "5s"',
    "pin_cpus": "pin_cpus = true",
    "drop_caches": "drop_caches = true",
}


def experiment_file(name, lines, a):
    text = f'name = "{name}"\nthreads = [1]\nduration = "{a.duration}s"\nrepetitions = {a.repetitions}\n'
    text += 'order = "shuffled"\n'
    text += "".join(line + "\n" for line in lines)
    for label in ["A", "A again"]:
        text += f'[[targets]]\nname = "{label}"\nbuild = "system"\n'
    for w in WORKLOADS:
        text += f'[[workloads]]\ntest = "{w}"\noptions = {{ tables = {a.tables}, table-size = {a.table_size} }}\n'
    return text


class Load:
    """Samples the 1-minute load average every 5 s while it runs."""

    def __init__(self):
        self.samples, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self.stop.wait(5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join()

    def mean(self):
        return statistics.fmean(self.samples) if self.samples else float("nan")


def pooled_cv(db, experiment_id, workload):
    rows = db.execute(
        "SELECT c.target, r.tps FROM runs r JOIN cells c ON c.id = r.cell_id "
        "WHERE r.experiment_id = ? AND c.workload = ? AND r.status = 'done' AND r.tps > 0",
        (experiment_id, workload)).fetchall()
    by_target = {}
    for target, tps in rows:
        by_target.setdefault(target, []).append(math.log(tps))
    variances = [statistics.variance(v) for v in by_target.values() if len(v) >= 2]
    if len(variances) != 2:
        raise SystemExit(f"experiment {experiment_id}: not enough runs of {workload} on both targets: {rows}")
    return math.sqrt(sum(variances) / 2), sum(len(v) for v in by_target.values())



def estimate_seconds(dry_run: str, setup: str) -> int:
    """The seconds of a dry run's 'estimated duration: about 1 h 05 min | 4 min 10 s | 42 s' line."""
    m = re.search(r"estimated duration: about ([^\n(]+)", dry_run)
    if not m:
        raise SystemExit(f"{setup}: the dry run printed no 'estimated duration: about …' line")
    units = {"h": 3600, "min": 60, "s": 1}
    parts = re.findall(r"(\d+) (h|min|s)\b", m.group(1))
    if not parts:
        raise SystemExit(f"{setup}: cannot read the dry run's estimate {m.group(1).strip()!r}")
    return sum(int(n) * units[u] for n, u in parts)

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--versus", default="target/release/versus")
    p.add_argument("--duration", type=int, default=5, help="measured seconds per run")
    p.add_argument("--repetitions", type=int, default=3, help="repetitions per target (≥ 3)")
    p.add_argument("--rounds", type=int, default=1, help="how many times the D C1 D C2 … sequence runs")
    p.add_argument("--tables", type=int, default=1)
    p.add_argument("--table-size", type=int, default=10000)
    p.add_argument("--choices", default=",".join(CHOICES))
    p.add_argument("--out", default="docs/statistics.md")
    a = p.parse_args()
    if a.repetitions < 3:
        raise SystemExit("--repetitions must be at least 3 (a CV from fewer is meaningless)")
    versus = os.path.abspath(a.versus)
    if not os.access(versus, os.X_OK):
        raise SystemExit(f"{versus} is not an executable; build it with cargo build --release")
    choices = [c.strip() for c in a.choices.split(",") if c.strip()]
    unknown = [c for c in choices if c not in CHOICES]
    if unknown:
        raise SystemExit(f"unknown choice(s) {', '.join(unknown)}; known: {', '.join(CHOICES)}")
    skipped = {}
    if "drop_caches" in choices and os.geteuid() != 0:
        skipped["drop_caches"] = "needs root"
    if "pin_cpus" in choices and len(os.sched_getaffinity(0)) < 2:
        skipped["pin_cpus"] = "needs at least 2 CPUs"
    choices = [c for c in choices if c not in skipped]

    home = tempfile.mkdtemp(prefix="vs-noise-", dir="/tmp")
    env = dict(os.environ, VERSUS_HOME=home)
    results = []  # (round, setup, workload, cv, runs, load, experiment id)
    try:
        r = subprocess.run([versus, "server", "fetch", "system"], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"versus server fetch system: {r.stderr.strip()}")
        sequence = []
        for rnd in range(1, a.rounds + 1):
            for c in choices:
                sequence += [(rnd, "defaults", []), (rnd, c, [CHOICES[c]])]
        files, total = [], 0
        for i, (rnd, setup, lines) in enumerate(sequence):
            path = os.path.join(home, f"noise-{i}.toml")
            with open(path, "w") as f:
                f.write(experiment_file(f"noise-{i}-{setup}", lines, a))
            dry = subprocess.run([versus, "run", path, "--dry-run"], env=env, capture_output=True, text=True)
            if dry.returncode != 0:
                raise SystemExit(f"{setup}: {dry.stderr.strip()}")
            total += estimate_seconds(dry.stdout, setup)
            files.append(path)
        print(f"{len(sequence)} experiments, estimated {total // 60} min {total % 60} s", file=sys.stderr)
        started = time.monotonic()
        for (rnd, setup, _), path in zip(sequence, files):
            print(f"[{time.monotonic() - started:6.0f} s] round {rnd}: {setup}", file=sys.stderr)
            with Load() as load:
                run = subprocess.run([versus, "run", path], env=env, capture_output=True, text=True)
            if run.returncode != 0:
                raise SystemExit(f"{setup}: versus run failed:\n{run.stderr[-3000:]}")
            m = re.search(r"experiment (\d+) finished", run.stderr)
            if not m:
                raise SystemExit(f"{setup}: no experiment id in:\n{run.stderr[-2000:]}")
            db = sqlite3.connect(os.path.join(home, "results.db"))
            for w in WORKLOADS:
                cv, n = pooled_cv(db, int(m.group(1)), w)
                results.append((rnd, setup, w, cv, n, load.mean(), int(m.group(1))))
            db.close()
        elapsed = time.monotonic() - started
    finally:
        subprocess.run([versus, "server", "stop", "--all"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)

    section = render(results, choices, skipped, a, elapsed)
    if a.out == "-":
        print(section)
    else:
        replace_section(a.out, BEGIN, END, section)
        print(section)
        print(f"wrote {a.out}", file=sys.stderr)


def pct(x):
    return f"{100 * x:.1f} %"


def render(results, choices, skipped, a, elapsed):
    build = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [BEGIN, "",
             f"Measured by `bench/noise_setup.py` (versus {build or 'unknown'}, {time.strftime('%Y-%m-%d')}, "
             f"{os.cpu_count()} CPUs): A/A experiments of the distribution's MariaDB, {a.repetitions} runs of "
             f"{a.duration} s per target, {a.tables} table(s) of {a.table_size} rows, 1 thread, shuffled; "
             f"{a.rounds} round(s) of defaults and choice, interleaved; {elapsed / 60:.0f} min in all. "
             "CV = pooled between-run CV of tps; load = mean 1-minute load average during the experiment.", "",
             "| choice | workload | CV, defaults next to it | CV with the choice | ratio | load (defaults / choice) |",
             "|---|---|---|---|---|---|"]
    defaults_cvs = {w: [] for w in WORKLOADS}
    for c in choices:
        for w in WORKLOADS:
            d = [x for x in results if x[2] == w and x[1] == "defaults" and choice_of(results, x) == c]
            t = [x for x in results if x[2] == w and x[1] == c]
            if not d or not t:
                continue
            dcv, tcv = statistics.fmean(x[3] for x in d), statistics.fmean(x[3] for x in t)
            defaults_cvs[w] += [x[3] for x in d]
            dl, tl = statistics.fmean(x[5] for x in d), statistics.fmean(x[5] for x in t)
            lines.append(f"| `{CHOICES[c]}` | {w} | {pct(dcv)} | {pct(tcv)} | {tcv / dcv:.2f} | {dl:.1f} / {tl:.1f} |")
    lines.append("")
    for w in WORKLOADS:
        v = defaults_cvs[w]
        if v:
            lines.append(f"The defaults' CV of {w} ranged over {pct(min(v))}–{pct(max(v))} across their "
                         f"{len(v)} experiments: a choice helps only if its CV lies clearly below that range.")
    for c, why in skipped.items():
        lines.append(f"`{CHOICES[c]}` was not measured: it {why}.")
    lines += ["", END]
    return "\n".join(lines)


def choice_of(results, d):
    """The choice measured right after the defaults experiment `d` (the sequence is D C D C …)."""
    i = results.index(d)
    following = [x for x in results[i + 1:] if x[1] != "defaults" and x[2] == d[2]]
    return following[0][1] if following else None


if __name__ == "__main__":
    main()
