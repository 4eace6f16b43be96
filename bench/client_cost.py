#!/usr/bin/env python3
"""Client CPU per transaction of `versus sysbench oltp_write_only`, measured from outside, A/B interleaved.

Issue 45 item 5: the quick start stored 156 µs of client CPU per transaction for relaxed commits at 1
thread against 48.8 µs for durable ones. This script measures the same client (a copy of the release
binary) against one sandboxed MariaDB (the distribution's, started with `versus --home HOME server
start`, binary log on as in examples/quickstart.toml), switching between the quick start's two configs
with SET GLOBAL (both variables are dynamic) so that A and B run against the same server, interleaved
A B A B.

Per run it records, for the versus process:
  - perf stat (attached before exec, inherited by every thread): task-clock, context-switches,
    cpu-migrations;
  - wait4's rusage (user + system; what `versus run` stores is getrusage(RUSAGE_SELF) of the same
    kind) and the zombie's /proc/PID/stat utime + stime (clock ticks), read before it is reaped;
  - per thread (polled /proc/PID/task/*/schedstat): the workers' ("sysbench-N") share of the run time;
and, for the same interval, the server's CPU (/proc/SPID/stat) and the host's /proc/stat (busy CPUs,
steal), so that other work on the machine (a compiler beside the runs) shows in the table.

Experiments (--exp, comma-separated):
  durability  relaxed vs durable, --threads (default 1), client affinity follow
  affinity    --client-affinity=follow vs off, relaxed, --threads
  threads     relaxed at 1 vs 4 threads, follow
  placement   relaxed, client pinned to CPU 0, server pinned to CPU 0 (same) vs CPU 1 (split)
  placement-durable  the same with durable commits
  load        relaxed, 1 thread, idle machine vs one spinning process per CPU beside the run (no pinning)

The default (--exp durability,placement) is the main measurement: relaxed at 1 thread costs several
times durable's client CPU per transaction only in runs where the client and the server thread end up
on different vCPUs (each hand-over then wakes an idle vCPU); pinning both to one CPU vs to two shows it
directly. Figures depend on what else runs on the machine (the 'other' column): compare ratios.

Usage: python3 bench/client_cost.py [--versus target/release/versus] [--exp durability,affinity]
       [--pairs 3] [--time 10] [--home DIR] [--port 3611] [--json out.json]
Without --home the sandbox lives in a temporary versus home that is removed at the end. The sandbox is
started if it is not running, and stopped at the end unless --keep-server. Results: BENCHMARKS.md,
"Client CPU per transaction: where the client and the server thread run".
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLK = os.sysconf("SC_CLK_TCK")
SANDBOX = "costbench"
CONFIGS = {
    "relaxed": {"innodb_flush_log_at_trx_commit": 2, "sync_binlog": 0},
    "durable": {"innodb_flush_log_at_trx_commit": 1, "sync_binlog": 1},
}


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=check, **kw)


class Sandbox:
    def __init__(self, versus, home, port):
        self.versus, self.home, self.port = versus, home, port
        self.started = False

    def v(self, *args, check=True):
        return sh([self.versus, "--home", self.home, *args], check=check)

    def start(self):
        self.v("server", "fetch", "system")
        st = self.v("server", "status", SANDBOX, "--json", check=False)
        info = None
        if st.returncode == 0 and st.stdout.strip():
            try:
                info = json.loads(st.stdout)[0]
            except (ValueError, IndexError):
                info = None
        if not info or not info.get("running"):
            args = ["server", "start", "system", "--name", SANDBOX, "--port", str(self.port),
                    "--set", "log-bin", "--set", "server-id=1",
                    "--set", "innodb_flush_log_at_trx_commit=2", "--set", "sync_binlog=0"]
            r = self.v(*args, check=False)
            if r.returncode != 0:
                raise SystemExit(f"server start failed: {r.stderr.strip()}")
            self.started = True
            info = json.loads(self.v("server", "status", SANDBOX, "--json").stdout)[0]
        self.port, self.pid, self.sock, self.dir = info["port"], info["pid"], info["socket"], info["dir"]

    def sql(self, q):
        env = dict(os.environ, MYSQL_PWD=open(os.path.join(self.dir, "root.password")).read().strip())
        return sh(["mariadb", "--no-defaults", "-S", self.sock, "-uroot", "-N", "-e", q], env=env).stdout

    def configure(self, name):
        sets = ", ".join(f"GLOBAL {k}={v}" for k, v in CONFIGS[name].items())
        self.sql(f"SET {sets}")
        got = self.sql("SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog").split()
        want = [str(v) for v in CONFIGS[name].values()]
        assert got == want, (got, want)

    def login(self):
        return ["--mysql-host=127.0.0.1", f"--mysql-port={self.port}", "--mysql-user=sbtest",
                "--mysql-password=sbpass", "--mysql-db=sbtest"]

    def stop(self):
        # The script's own sandbox (name costbench in its home): stopped whether this call started it or not.
        self.v("server", "stop", SANDBOX, check=False)


def stat_ticks(pid):
    """(utime, stime) clock ticks of /proc/PID/stat (the whole thread group)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def threads_schedstat(pid):
    """{tid: (comm, run ns, wait ns, timeslices)} of the live threads of pid."""
    out = {}
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"{base}/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/{tid}/schedstat") as f:
                run, wait, slices = (int(x) for x in f.read().split())
            out[tid] = (comm, run, wait, slices)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
    return out


def host_stat():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    # user nice system idle iowait irq softirq steal
    return {"busy": v[0] + v[1] + v[2] + v[5] + v[6], "idle": v[3] + v[4], "steal": v[7]}


def spinner_start(n):
    """n busy-looping processes (the 'load' experiment)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def wait_quiet(limit_s, server_pid, busy_max=0.25):
    """Waits (at most limit_s) for a second in which the host's CPUs, apart from the idle server, are
    busy less than busy_max CPUs: other work on the machine (a compiler, tests) skews every figure."""
    t_end = time.monotonic() + limit_s
    while True:
        h0, s0 = host_stat(), sum(stat_ticks(server_pid))
        time.sleep(1)
        h1, s1 = host_stat(), sum(stat_ticks(server_pid))
        busy = ((h1["busy"] - h0["busy"]) - (s1 - s0)) / CLK
        if busy < busy_max or time.monotonic() >= t_end:
            return busy


def one_run(sb, versus, spec, seconds, home, quiet=0):
    """Runs versus sysbench oltp_write_only with spec; returns a dict of measurements."""
    before = wait_quiet(quiet, sb.pid) if quiet else float("nan")
    sb.configure(spec["config"])
    spinners = spinner_start(spec.get("load", 0))
    ncpu = os.cpu_count()
    if "server_cpu" in spec:
        sh(["taskset", "-a", "-p", "-c", spec["server_cpu"], str(sb.pid)])
    pin = ["taskset", "-c", spec["client_cpu"]] if "client_cpu" in spec else []
    cmd = [*pin, versus, "--home", home, "sysbench", "oltp_write_only", "--tables=2", "--table-size=20000",
           f"--threads={spec['threads']}", f"--time={seconds}", "--report-interval=1",
           f"--client-affinity={spec['affinity']}", *sb.login(), "run"]
    out = tempfile.TemporaryFile()
    perf_out = tempfile.NamedTemporaryFile(suffix=".perf", delete=False).name
    # A shell that waits for one line on stdin, then execs versus: perf attaches to it first, so every
    # thread versus makes inherits the counters, and this script stays the parent (it reads the zombie).
    p = subprocess.Popen(["sh", "-c", 'read x; exec "$@"', "sh", *cmd], stdin=subprocess.PIPE,
                         stdout=out, stderr=subprocess.STDOUT)
    perf = subprocess.Popen(["perf", "stat", "-x", ",", "-o", perf_out, "-e",
                             "task-clock,context-switches,cpu-migrations", "-p", str(p.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    h0, s0, t_start = host_stat(), stat_ticks(sb.pid), time.monotonic()
    sthreads0 = threads_schedstat(sb.pid)
    p.stdin.write(b"go\n")
    p.stdin.close()
    last = {}
    while True:
        r = os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if r is not None:
            break
        for tid, v in threads_schedstat(p.pid).items():
            last[tid] = v
        time.sleep(0.05)
    wall = time.monotonic() - t_start
    h1, s1 = host_stat(), stat_ticks(sb.pid)
    sthreads1 = threads_schedstat(sb.pid)
    zu, zs = stat_ticks(p.pid)  # the zombie: whole-group totals
    try:
        with open(f"/proc/{p.pid}/schedstat") as f:
            zsched = [int(x) for x in f.read().split()]
    except OSError:
        zsched = None
    _, status, ru = os.wait4(p.pid, 0)
    try:
        perf.wait(timeout=5)
    except subprocess.TimeoutExpired:
        perf.send_signal(signal.SIGINT)
        perf.wait()
    if "server_cpu" in spec:
        sh(["taskset", "-a", "-p", "-c", f"0-{ncpu - 1}", str(sb.pid)])
    for s in spinners:
        s.kill()
        s.wait()
    out.seek(0)
    text = out.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"versus failed:\n{text[-2000:]}")
    counters = {}
    for line in open(perf_out):
        f = line.strip().split(",")
        if len(f) >= 3 and f[0] and f[0][0].isdigit():
            counters[f[2]] = float(f[0])
    os.unlink(perf_out)
    txns = int(re.search(r"transactions:\s+(\d+)", text).group(1))
    worker_ns = sum(v[1] for v in last.values() if v[0].startswith("sysbench"))
    all_ns = sum(v[1] for v in last.values())
    # Server threads alive both before and after: context switches not needed, run ns and slices are.
    srv_run = sum(sthreads1[t][1] - sthreads0[t][1] for t in sthreads1 if t in sthreads0)
    hb = h1["busy"] - h0["busy"]
    hi = h1["idle"] - h0["idle"]
    hs = h1["steal"] - h0["steal"]
    rusage_s = ru.ru_utime + ru.ru_stime
    client_ticks_s = (zu + zs) / CLK
    server_s = ((s1[0] - s0[0]) + (s1[1] - s0[1])) / CLK
    return {
        **spec, "busy_before": before, "txns": txns, "tps": txns / seconds, "wall": wall,
        "task_clock_us": counters.get("task-clock", float("nan")) * 1000 / txns,  # perf gives msec
        "rusage_us": rusage_s * 1e6 / txns,
        "rusage_user_us": ru.ru_utime * 1e6 / txns, "rusage_sys_us": ru.ru_stime * 1e6 / txns,
        "stat_ticks_us": client_ticks_s * 1e6 / txns,
        "cs_per_txn": counters.get("context-switches", float("nan")) / txns,
        "migr_per_txn": counters.get("cpu-migrations", float("nan")) / txns,
        "nvcsw_per_txn": ru.ru_nvcsw / txns, "nivcsw_per_txn": ru.ru_nivcsw / txns,
        "worker_share": worker_ns / all_ns if all_ns else float("nan"),
        "nonworker_ms": (all_ns - worker_ns) / 1e6,
        "server_us": server_s * 1e6 / txns,
        "server_sched_us": srv_run / 1e3 / txns,
        # Busy CPU-seconds of the host over the run that were neither this client's nor the server's.
        "other_busy_cpus": max(0.0, hb / CLK - rusage_s - server_s) / wall,
        "host_busy_frac": hb / max(1, hb + hi + hs), "steal_frac": hs / max(1, hb + hi + hs),
        "leader_schedstat_ms": zsched[0] / 1e6 if zsched else None,
    }


EXPERIMENTS = {
    "durability": lambda t: ("relaxed", {"config": "relaxed", "threads": t, "affinity": "follow"},
                             "durable", {"config": "durable", "threads": t, "affinity": "follow"}),
    "affinity": lambda t: ("follow", {"config": "relaxed", "threads": t, "affinity": "follow"},
                           "off", {"config": "relaxed", "threads": t, "affinity": "off"}),
    "threads": lambda t: ("1 thread", {"config": "relaxed", "threads": 1, "affinity": "follow"},
                          "4 threads", {"config": "relaxed", "threads": 4, "affinity": "follow"}),
    # Placement by hand (both pinned, so the follower has nothing to do): the ping-pong on one CPU
    # against a ping-pong across the two CPUs, relaxed commits.
    "placement": lambda t: ("same CPU", {"config": "relaxed", "threads": t, "affinity": "off",
                                         "client_cpu": "0", "server_cpu": "0"},
                            "split CPUs", {"config": "relaxed", "threads": t, "affinity": "off",
                                           "client_cpu": "0", "server_cpu": "1"}),
    "placement-durable": lambda t: ("same CPU", {"config": "durable", "threads": t, "affinity": "off",
                                                 "client_cpu": "0", "server_cpu": "0"},
                                    "split CPUs", {"config": "durable", "threads": t, "affinity": "off",
                                                   "client_cpu": "0", "server_cpu": "1"}),
    "load": lambda t: ("idle", {"config": "relaxed", "threads": t, "affinity": "follow", "load": 0},
                       "2 spinners", {"config": "relaxed", "threads": t, "affinity": "follow", "load": 2}),
}

COLS = [("tps", "{:8.0f}"), ("task_clock_us", "{:7.1f}"), ("rusage_us", "{:7.1f}"), ("stat_ticks_us", "{:7.1f}"),
        ("rusage_sys_us", "{:6.1f}"), ("cs_per_txn", "{:5.2f}"), ("migr_per_txn", "{:7.4f}"),
        ("nivcsw_per_txn", "{:6.3f}"), ("worker_share", "{:5.3f}"), ("server_us", "{:6.1f}"),
        ("other_busy_cpus", "{:5.2f}"), ("steal_frac", "{:5.3f}")]
HEAD = ("run", "tps", "tclk/tx", "rusg/tx", "tick/tx", "sys/tx", "cs/tx", "migr/tx", "invol", "wshr",
        "srv/tx", "other", "steal")


def row(label, r):
    return f"{label:<14}" + " ".join(fmt.format(r[k]) for k, fmt in COLS)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--versus", default=os.path.join(repo, "target", "release", "versus"))
    ap.add_argument("--home", help="versus home for the sandbox (default: a temporary one, removed at the end)")
    ap.add_argument("--port", type=int, default=3611)
    ap.add_argument("--exp", default="durability,placement")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--quiet-wait", type=float, default=30,
                    help="seconds to wait at most, before each run, for the machine to be idle (0: no wait)")
    ap.add_argument("--json", help="append every run as a JSON line to this file")
    ap.add_argument("--keep-server", action="store_true")
    a = ap.parse_args()
    versus = os.path.abspath(a.versus)
    made_home = a.home is None
    if made_home:
        a.home = tempfile.mkdtemp(prefix="versus-client-cost-")
    sb = Sandbox(versus, a.home, a.port)
    sb.start()
    try:
        have = sb.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest'").strip()
        if have != "2":
            sh([versus, "--home", a.home, "sysbench", "oltp_write_only", "--tables=2", "--table-size=20000",
                *sb.login(), "prepare"])
        print(f"server pid {sb.pid} port {sb.port}; {a.pairs} pairs of {a.time}-s runs per experiment; "
              f"load before: {open('/proc/loadavg').read().split()[:3]}", flush=True)
        print("columns: tclk = perf task-clock, rusg = wait4 user+sys, tick = zombie /proc stat utime+stime, "
              "sys = rusage sys, all µs per txn; cs/migr/invol per txn; wshr = worker threads' share of the "
              "client's run time; srv = server CPU µs/txn; other = CPUs busy with neither; steal = host steal share")
        for name in a.exp.split(","):
            la, sa, lb, sbspec = EXPERIMENTS[name](a.threads)
            print(f"\n== {name}: {la} (A) vs {lb} (B)", flush=True)
            print(f"{'':<14}" + " ".join(f"{h:>{len(fmt.format(0))}}" for h, (_, fmt) in zip(HEAD[1:], COLS)))
            runs = {la: [], lb: []}
            for i in range(a.pairs):
                for label, spec in ((la, sa), (lb, sbspec)):
                    r = one_run(sb, versus, spec, a.time, a.home, a.quiet_wait)
                    r["exp"], r["label"], r["pair"] = name, label, i
                    runs[label].append(r)
                    print(row(f"{label}#{i + 1}", r), flush=True)
                    if a.json:
                        with open(a.json, "a") as f:
                            f.write(json.dumps(r) + "\n")
            print("medians:")
            for label in (la, lb):
                med = {k: statistics.median(x[k] for x in runs[label]) for k, _ in COLS}
                print(row(label, med))
            ratios = {k: [rb[k] / ra[k] if ra[k] else float("nan") for ra, rb in zip(runs[la], runs[lb])]
                      for k in ("tps", "task_clock_us", "rusage_us", "cs_per_txn", "server_us")}
            print(f"B/A per pair ({lb}/{la}): " + "; ".join(
                f"{k} " + ", ".join(f"{v:.2f}" for v in vs) for k, vs in ratios.items()))
    finally:
        if not a.keep_server:
            sb.stop()
            if made_home:
                shutil.rmtree(a.home, ignore_errors=True)


if __name__ == "__main__":
    main()
