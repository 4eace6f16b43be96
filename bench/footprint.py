#!/usr/bin/env python3
"""Memory a client touches per transaction: versus vs the floor client, traced, not timed.

After every wake-up a client finds its caches and TLBs cold: the server's threads ran on the same CPUs
in between. What it then pays depends less on how many instructions it runs than on how many distinct
cache lines and pages of code and data they touch. This script traces every user-space instruction
fetch and data access of each client (`valgrind --tool=lackey --trace-mem=yes`, 1 thread, over TCP),
cuts the trace into transactions at an instruction that runs exactly once per transaction, and counts,
over the second half of the transactions, the distinct 64-byte lines and 4-KiB pages of code and of data
that each one touched, on average. The kernel's share is not traced. A second table says where the data
pages lie: in which of the process's mappings (read from /proc while it runs), for example the binary's
writable data, its read-only data, libc's, the worker thread's stack or an anonymous heap mapping.

Usage: bench/footprint.py [--versus target/release/versus] [--floor target/release/examples/floor_client]
       [--test oltp_point_select] [--events 1500]
Prints its table (markdown). Needs valgrind, sysbench (to prepare), a release build of versus and of the
floor client, the distribution's MariaDB. Nothing is left running; the traces (about 50 KB per point
select) are written to a temporary directory and removed.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

from benchlib import CLIENT_BENCH_SETTINGS, RUN_TABLES, Server, client_paths
from sysbench_compare import tps_of

ACCESS = re.compile(r"^ ?([ILSM])\s+([0-9a-f]+),(\d+)")


def trace(cmd, path):
    """Runs cmd under lackey, its trace to path; returns (the transactions it reported, its mappings).

    The mappings are read from /proc every 0.2 s while it runs, and kept all (the guest runs in valgrind's
    process, so its maps list the client's own mappings among valgrind's)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={path}", *cmd],
                             stdout=out, stderr=err, text=True)
        maps = set()
        while p.poll() is None:
            try:
                maps.update(read_maps(p.pid))
            except OSError:
                pass
            time.sleep(0.2)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} under lackey failed ({p.returncode}):\n{err.read()[-3000:]}")
        if not maps:
            raise SystemExit(f"{' '.join(cmd)}: ended before its mappings could be read")
        return tps_of(out.read())[0], sorted(maps)


def read_maps(pid):
    """(start, end, label) per mapping: the file's name and permissions, or anon and its size."""
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            name = os.path.basename(parts[5].strip()) if len(parts) > 5 else ""
            if name.startswith("lackey-") or name.startswith("vgpreload"):
                continue
            label = f"{name or f'anon {(hi - lo) >> 10} KiB'} {parts[1]}"
            maps.append((lo, hi, label))
    return maps


def where(maps, page):
    """The label of the mapping that holds page (a page number), or one that says none of the client's does."""
    a = page << 12
    for lo, hi, label in maps:
        if lo <= a < hi:
            return label
    return "other (valgrind's or unmapped)"


def footprint(path, txns, maps):
    """Average distinct code and data lines and pages per transaction in the trace's second half, and the
    data pages per transaction by the mapping that holds them."""
    fetches = collections.Counter()
    with open(path) as f:
        for line in f:
            if line.startswith("I"):
                fetches[line[3:line.index(",")]] += 1
    # An instruction that ran once per transaction marks where each one starts (the same point in each).
    marks = [a for a, n in fetches.items() if n == txns]
    if not marks:
        raise SystemExit(f"{path}: no instruction ran exactly once per transaction ({txns})")
    mark = marks[0]
    sums = collections.Counter()
    by_map = collections.Counter()
    labels = {}  # page -> its mapping's label: the same few pages recur in every transaction
    counted = seen = 0
    cur = None
    with open(path) as f:
        for line in f:
            m = ACCESS.match(line)
            if not m:
                continue
            kind, addr, size = m.group(1), int(m.group(2), 16), int(m.group(3))
            if kind == "I" and m.group(2) == mark:
                seen += 1
                if cur is not None and seen > txns // 2:
                    counted += 1
                    for k, v in cur.items():
                        sums[k] += len(v) if isinstance(v, set) else v
                    for page in cur["data pages"]:
                        if page not in labels:
                            labels[page] = where(maps, page)
                        by_map[labels[page]] += 1
                cur = {"instructions": 0, "code lines": set(), "code pages": set(), "data lines": set(),
                       "data pages": set()}
            if cur is None:
                continue
            if kind == "I":
                cur["instructions"] += 1
                cur["code lines"].add(addr >> 6)
                cur["code pages"].add(addr >> 12)
            else:
                for a in {addr, addr + size - 1}:
                    cur["data lines"].add(a >> 6)
                    cur["data pages"].add(a >> 12)
    return {k: v / counted for k, v in sums.items()}, {k: v / counted for k, v in by_map.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    client_paths(ap)
    ap.add_argument("--test", default="oltp_point_select")
    ap.add_argument("--events", type=int, default=1500, help="versus's transactions (the floor runs 3 s)")
    a = ap.parse_args()

    srv = Server(a.versus, CLIENT_BENCH_SETTINGS)
    results, places = {}, {}
    try:
        srv.prepare_run_tables(a.sysbench)
        common = srv.via()["tcp"] + RUN_TABLES + ["--threads=1", "--rand-type=uniform"]
        with tempfile.TemporaryDirectory(prefix="vs-lackey-") as d:
            path = os.path.join(d, "trace")
            for name, cmd in (("versus", [a.versus, "sysbench", a.test, *common, f"--events={a.events}", "--time=0",
                                          "run"]),
                              ("floor", [a.floor, a.test, *common, "--time=3", "run"])):
                results[name], places[name] = footprint(path, *trace(cmd, path))
                os.remove(path)
    finally:
        srv.stop()

    print(f"Distinct memory touched per transaction (valgrind lackey), {a.test}, 1 thread, tcp:\n")
    print("| per transaction | versus | floor | versus / floor |")
    print("|---|---|---|---|")
    for k in ("instructions", "code lines", "code pages", "data lines", "data pages"):
        v, f = results["versus"][k], results["floor"][k]
        print(f"| {k} | {v:,.1f} | {f:,.1f} | {v / f:.2f} |")
    print("\nData pages per transaction by the mapping that holds them (a library's or binary's name and its")
    print("permissions; anon with its size: thread stacks and heap arenas):\n")
    for name in ("versus", "floor"):
        print(f"| {name}: mapping | pages per transaction |")
        print("|---|---|")
        for label, n in sorted(places[name].items(), key=lambda x: -x[1]):
            print(f"| {label} | {n:.1f} |")
        print()


if __name__ == "__main__":
    sys.exit(main())
