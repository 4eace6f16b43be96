#!/usr/bin/env python3
"""Where a sysbench client's kernel time goes, per statement: sysbench 1.0.20, versus and the floor client.

Every client runs the same test against one sandboxed MariaDB. After two settling seconds, a window of the
run is measured from outside the client, so that no client measures itself:
  - syscalls by name and wake-ups the client issues (`perf stat --per-thread -p PID` on the
    syscalls:sys_enter_* and sched:sched_wakeup tracepoints),
  - user and system CPU time and voluntary (sleeps) and involuntary (preemptions) context switches of
    every thread (/proc/PID/task/*/stat and status at both ends of the window),
  - statements, transactions and bytes the server sent and received in the window (its global status),
    and the server's CPU time.
Figures are per statement (syscalls, switches, wake-ups) or per transaction (CPU), from the server's
counts; the client's own report is not used. Threads other than the connection workers (sysbench's main
thread, versus's reporter) are shown separately.

Usage: bench/kernel_profile.py [--versus target/release/versus] [--floor target/release/examples/floor_client]
       [--clients sysbench,versus,floor] [--tests oltp_point_select,oltp_read_write] [--threads 1,4,16,64]
       [--transports tcp,socket] [--time 8] [--out BENCHMARKS.md]
Client names: sysbench, versus, floor, and `versus:FLAGS` for versus with extra flags (e.g.
`versus:--client-threads=2`). Writes a section of --out between markers (or prints it with --out -).
Needs perf, sysbench, a release build of versus and of the floor client. Nothing is left running.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from benchlib import CLIENT_BENCH_SETTINGS, CLK, RUN_TABLES, Server, client_paths

SYSCALLS = {
    "send": ["sendto", "sendmsg", "write", "writev"],
    "recv": ["recvfrom", "recvmsg", "read", "readv"],
    "poll": ["poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2", "select", "pselect6"],
    "uring": ["io_uring_enter"],
    "futex": ["futex", "futex_wait", "futex_wake"],
    "sleep": ["clock_nanosleep", "nanosleep"],
    "yield": ["sched_yield"],
}
EVENTS = [f"syscalls:sys_enter_{n}" for ns in SYSCALLS.values() for n in ns] + ["sched:sched_wakeup"]


def threads_of(pid):
    """{tid: (name, utime+stime split, voluntary, involuntary)} from /proc."""
    out = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            fields = rest.split()
            st = {}
            with open(f"{base}/{tid}/status") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    st[k] = v.strip()
            out[int(tid)] = dict(name=head.split("(", 1)[1], user=int(fields[11]) / CLK, sys=int(fields[12]) / CLK,
                                 vol=int(st["voluntary_ctxt_switches"]), invol=int(st["nonvoluntary_ctxt_switches"]))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


STATEMENTS = ("Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin", "Com_commit", "Com_rollback")


def status(srv):
    """The server's statement counts (prepared and text alike) and bytes sent and received."""
    names = STATEMENTS + ("Bytes_sent", "Bytes_received")
    q = "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(f"'{n}'" for n in names) + ")"
    st = {k: int(v) for k, v in (line.split("\t") for line in srv.sql(q).stdout.splitlines())}
    st["statements"] = sum(st[n] for n in STATEMENTS)
    return st


def perf_per_thread(text):
    """{tid: {event: count}} from `perf stat --per-thread -x,` output."""
    out = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) < 4 or not f[1].strip().isdigit():
            continue
        tid = int(f[0].rsplit("-", 1)[1])
        out.setdefault(tid, {})[f[3].split(":")[-1].replace("sys_enter_", "")] = int(f[1])
    return out


def is_worker(tid, pid):
    """Every client here runs its connections on threads other than the main one (sysbench's main thread
    times and reports, versus's is the reporter, the floor's only waits)."""
    return tid != pid


class NoCounts(Exception):
    """perf attached but reported nothing (seen once on a heavily loaded machine)."""


def measure(cmd, srv, settle, window):
    """Runs cmd and measures the window [settle, settle + window] from outside; returns the raw figures.

    perf attaches with its events disabled and counts exactly while the window is open (its control
    fifo), so that its counts, the threads' figures and the server's status cover the same interval."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as out:
        ctl, ack, data = f"{tmp}/ctl", f"{tmp}/ack", f"{tmp}/perf.csv"
        os.mkfifo(ctl)
        os.mkfifo(ack)
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        perf = subprocess.Popen(["perf", "stat", "--per-thread", "-x,", "-o", data, "-p", str(p.pid), "-D", "-1",
                                 "--control", f"fifo:{ctl},{ack}", "-e", ",".join(EVENTS)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            with open(ctl, "w") as c, open(ack) as k:
                def command(word):
                    c.write(word + "\n")
                    c.flush()
                    k.readline()

                time.sleep(settle)
                if p.poll() is not None:
                    out.seek(0)
                    raise SystemExit(f"{' '.join(cmd)} ended early:\n{out.read().decode(errors='replace')[-2000:]}")
                command("enable")
                st0, t0, s0, w0 = status(srv), threads_of(p.pid), srv.cpu(), time.monotonic()
                time.sleep(window)
                st1, t1, s1, wall = status(srv), threads_of(p.pid), srv.cpu(), time.monotonic() - w0
                command("disable")
                alive = p.poll() is None
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait()
            p.wait()
        out.seek(0)
        text = out.read().decode(errors="replace")
        counts = perf_per_thread(open(data).read())
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{text[-2000:]}")
    if not alive:
        raise SystemExit(f"{' '.join(cmd)} ended inside the measured window: give a longer --time")
    if not counts:
        raise NoCounts(f"perf stat gave no counts ({perf.stderr.read().decode(errors='replace').strip()[-300:]})")
    threads = {}
    for tid, a in t1.items():
        b = t0.get(tid, dict(user=0, sys=0, vol=0, invol=0))
        threads[tid] = dict(name=a["name"], user=a["user"] - b["user"], sys=a["sys"] - b["sys"],
                            vol=a["vol"] - b["vol"], invol=a["invol"] - b["invol"], ev=counts.get(tid, {}))
    delta = {k: st1[k] - st0[k] for k in st0}
    return dict(pid=p.pid, threads=threads, status=delta, server_cpu=s1 - s0, wall=wall)


def summarize(client, test, raw):
    st = raw["status"]
    stmts = max(st["statements"], 1)
    txns = max(st["Com_commit"] if st["Com_commit"] else st["statements"], 1)

    def group(workers):
        ts = [t for tid, t in raw["threads"].items() if is_worker(tid, raw["pid"]) == workers]
        ev = {}
        for t in ts:
            for k, v in t["ev"].items():
                ev[k] = ev.get(k, 0) + v
        g = dict(n=len(ts), user=sum(t["user"] for t in ts), sys=sum(t["sys"] for t in ts),
                 vol=sum(t["vol"] for t in ts), invol=sum(t["invol"] for t in ts),
                 wakeups=ev.get("sched_wakeup", 0))
        for cat, names in SYSCALLS.items():
            g[cat] = sum(ev.get(n, 0) for n in names)
        return g

    w, o = group(True), group(False)
    recvs = w["recv"] + o["recv"]
    return dict(client=client, test=test, tps=txns / raw["wall"], stmts_per_txn=stmts / txns, workers=w, other=o,
                per_stmt={k: (w[k] + o[k]) / stmts for k in list(SYSCALLS) + ["vol", "invol", "wakeups"]},
                bytes_per_recv=st["Bytes_sent"] / recvs if recvs else 0.0,
                user_us=(w["user"] + o["user"]) / txns * 1e6, sys_us=(w["sys"] + o["sys"]) / txns * 1e6,
                other_us=(o["user"] + o["sys"]) / txns * 1e6, other_calls=sum(o[k] for k in SYSCALLS) / stmts,
                server_us=raw["server_cpu"] / txns * 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    client_paths(ap)
    ap.add_argument("--clients", default="sysbench,versus,floor")
    ap.add_argument("--tests", default="oltp_point_select,oltp_read_write")
    ap.add_argument("--threads", default="1,4,16,64")
    ap.add_argument("--transports", default="tcp,socket")
    ap.add_argument("--time", type=int, default=8, help="seconds per run; the window is the run less 4 s")
    ap.add_argument("--out", default="BENCHMARKS.md")
    a = ap.parse_args()

    srv = Server(a.versus, CLIENT_BENCH_SETTINGS)
    via = srv.via()

    def command(client):
        name, _, flags = client.partition(":")
        base = {"sysbench": [a.sysbench], "versus": [a.versus, "sysbench"], "floor": [a.floor]}[name]
        return base + [f for f in flags.split(" ") if f]

    load_before = open("/proc/loadavg").read().split()[:3]
    rows = []
    try:
        srv.prepare_run_tables(a.sysbench)
        for test in a.tests.split(","):
            for th in [int(x) for x in a.threads.split(",")]:
                for tr in a.transports.split(","):
                    for client in a.clients.split(","):
                        cmd = command(client) + [test] + via[tr] + RUN_TABLES + [
                            f"--threads={th}", f"--time={a.time}", "--rand-type=uniform", "run"]
                        load = open("/proc/loadavg").read().split()[0]
                        try:
                            raw = measure(cmd, srv, 2, a.time - 4)
                        except NoCounts as e:
                            print(f"{test} {th} {tr} {client}: {e}; measuring again", flush=True)
                            raw = measure(cmd, srv, 2, a.time - 4)
                        r = summarize(client, test, raw)
                        r.update(threads=th, transport=tr, load=load)
                        rows.append(r)
                        ps = r["per_stmt"]
                        print(f"{test} {th} {tr} {client}: {r['tps']:.0f} tps, per stmt send {ps['send']:.2f} "
                              f"recv {ps['recv']:.2f} poll {ps['poll']:.2f} futex {ps['futex']:.3f} "
                              f"sleeps {ps['vol']:.2f} preempt {ps['invol']:.3f} wakeups {ps['wakeups']:.2f}, "
                              f"{r['bytes_per_recv']:.0f} B/recv, user {r['user_us']:.1f} sys {r['sys_us']:.1f} "
                              f"us/txn, server {r['server_us']:.1f} us/txn (load {load})", flush=True)
    finally:
        srv.stop()
    load_after = open("/proc/loadavg").read().split()[:3]
    write(a, rows, (load_before, load_after))


def write(a, rows, loads):
    lines = [
        "<!-- kernel_profile: written by bench/kernel_profile.py -->",
        "## Where the client's kernel time goes, per statement",
        "",
        f"Produced by `bench/kernel_profile.py --time {a.time} --clients {a.clients}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')}: {os.cpu_count()} cores, one sandboxed MariaDB (system mariadbd, buffer "
        "pool 2G, innodb_flush_log_at_trx_commit=2), 4 tables x 100k rows, `--rand-type=uniform`. Each run is "
        f"measured from outside over a window of {a.time - 4} s after two settling seconds: syscalls and wake-ups "
        "by `perf stat --per-thread` (tracepoints), CPU and context switches per thread from /proc, statements, "
        "transactions and bytes from the server's status. Load average before/after: "
        f"{' '.join(loads[0])} / {' '.join(loads[1])}; the 1-minute load at the start of each run is in the "
        "last column.",
        "",
        "Per statement: send = sendto/write calls, recv = recvfrom/read calls, poll = poll/epoll waits, "
        "sleeps = voluntary context switches, preempt = involuntary ones, wake = wake-ups the client issued "
        "(of server threads and its own). B/recv = bytes the server sent per client read. Per transaction: "
        "client user and system CPU, of which threads other than the connection workers (reporter, timer, "
        "main), and the server's CPU.",
        "",
        "| test | threads | via | client | tps | send | recv | poll | futex | sleeps | preempt | wake | B/recv "
        "| user µs/txn | sys µs/txn | other threads µs/txn | server µs/txn | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = r["per_stmt"]
        lines.append(
            f"| {r['test']} | {r['threads']} | {r['transport']} | {r['client']} | {r['tps']:.0f} | {p['send']:.2f} | "
            f"{p['recv']:.2f} | {p['poll'] + p['uring']:.2f} | {p['futex']:.3f} | {p['vol']:.2f} | {p['invol']:.3f} | "
            f"{p['wakeups']:.2f} | {r['bytes_per_recv']:.0f} | {r['user_us']:.1f} | {r['sys_us']:.1f} | "
            f"{r['other_us']:.1f} | {r['server_us']:.1f} | {r['load']} |")
    lines += ["", "<!-- /kernel_profile -->"]
    section = "\n".join(lines) + "\n"
    if a.out == "-":
        print(section)
        return
    old = open(a.out).read() if os.path.exists(a.out) else ""
    start, end = "<!-- kernel_profile:", "<!-- /kernel_profile -->"
    if start in old and end in old:
        new = old[:old.index(start)] + section + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    with open(a.out, "w") as f:
        f.write(new)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
