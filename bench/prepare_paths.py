#!/usr/bin/env python3
"""How fast can the server take sysbench's table at all? Server CPU per load path, one table at a time.

`prepare` of 2 tables x 1M rows at 2 threads is bound by the server on a 2-core machine: whatever the
client does, the wall time cannot fall below (server CPU + client CPU) / cores. This script measures the
server CPU of every way to fill one sbtest table of N rows (sysbench's DDL, its row shape, its secondary
index built afterwards unless said otherwise), so that the floor for any client can be read off:

- sysbench 1.0.20 `prepare` (multi-row INSERTs of 512 KiB), and versus with `--prepare-method=insert`
  (the same statements) and `--prepare-method=load` (LOAD DATA LOCAL INFILE, the default);
- the `mariadb` client loading a pre-written file (generation not timed) with LOAD DATA LOCAL INFILE:
  plain (autocommit), with MariaDB's bulk-insert path for empty tables (unique_checks=0,
  foreign_key_checks=0, one transaction), and with the secondary index declared in CREATE TABLE.

Runs each path `--rounds` times in turn against one sandboxed MariaDB (the same settings as
sysbench_compare.py) and writes a section of BENCHMARKS.md (or --out), replacing its previous version.

Usage: bench/prepare_paths.py [--versus target/release/versus] [--rows 1000000] [--rounds 2]
Needs: a release build of versus, the distribution's MariaDB, its `mariadb` client and /usr/bin/sysbench.
Nothing is left running.
"""

import argparse
import os
import random
import subprocess
import tempfile
import time

from benchlib import Server, replace_section

DDL = ("CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, "
       "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id){extra}) ENGINE=innodb")
BEGIN, END = "<!-- prepare_paths: written by bench/prepare_paths.py -->", "<!-- /prepare_paths -->"


def write_tsv(path, rows):
    """Rows of sysbench's shape: id, k in [1, rows], c = 10 and pad = 5 groups of 11 digits joined by '-'."""
    rnd = random.Random(1)

    def groups(n):
        return "-".join("%011d" % rnd.randrange(10**11) for _ in range(n))

    with open(path, "w") as f:
        for i in range(1, rows + 1):
            f.write(f"{i}\t{rnd.randint(1, rows)}\t{groups(10)}\t{groups(5)}\n")


def timed(srv, cmd):
    """Runs cmd; returns (wall s, client CPU s, server CPU s)."""
    s0, t0 = srv.cpu(), time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.read().decode()[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, srv.cpu() - s0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--sysbench", default="/usr/bin/sysbench")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="BENCHMARKS.md")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="vs-paths-", dir="/tmp")
    tsv = os.path.join(work, "sbtest1.tsv")
    write_tsv(tsv, a.rows)
    srv = Server(a.versus, ["innodb_buffer_pool_size=2G", "innodb_log_file_size=512M",
                            "innodb_flush_log_at_trx_commit=2", "local_infile=1"])
    conn = ["--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=sbtest", "--mysql-password=sbpass",
            "--mysql-db=sbtest", "--tables=1", f"--table-size={a.rows}", "--threads=1"]
    client = ["mariadb", "--no-defaults", "--local-infile=1", "-S", srv.sock, "-uroot", "sbtest", "-e"]
    load = f"LOAD DATA LOCAL INFILE '{tsv}' INTO TABLE sbtest1 (id, k, c, pad)"
    index = "CREATE INDEX k_1 ON sbtest1(k)"
    # name -> (setup SQL or None, command)
    paths = {
        "sysbench prepare (INSERT)": (None, [a.sysbench, "oltp_read_write", *conn, "prepare"]),
        "versus prepare, --prepare-method=insert": (None, [a.versus, "sysbench", "oltp_read_write", *conn,
                                                            "--prepare-method=insert", "prepare"]),
        "versus prepare (LOAD DATA)": (None, [a.versus, "sysbench", "oltp_read_write", *conn, "prepare"]),
        "mariadb client: LOAD DATA, then index": (DDL.format(extra=""), client + [f"{load}; {index}"]),
        "mariadb client: bulk-insert path (unique_checks=0, one transaction), then index":
            (DDL.format(extra=""),
             client + [f"SET unique_checks=0, foreign_key_checks=0; BEGIN; {load}; COMMIT; {index}"]),
        "mariadb client: LOAD DATA, index declared in CREATE TABLE": (DDL.format(extra=", KEY k_1 (k)"),
                                                                      client + [load]),
    }
    results = {name: [] for name in paths}
    load_before = open("/proc/loadavg").read().split()[:3]
    try:
        for rnd in range(a.rounds):
            for name, (setup, cmd) in paths.items():
                srv.sql("DROP TABLE IF EXISTS sbtest.sbtest1")
                if setup:
                    srv.sql(f"USE sbtest; {setup}")
                r = timed(srv, cmd)
                results[name].append(r)
                print(f"{name}: {r[0]:.2f} s wall, client {r[1]:.2f} s, server {r[2]:.2f} s CPU", flush=True)
        srv.sql("DROP TABLE IF EXISTS sbtest.sbtest1")
    finally:
        srv.stop()
        subprocess.run(["rm", "-rf", work])
    load_after = open("/proc/loadavg").read().split()[:3]
    write_report(a, results, load_before, load_after)


def write_report(a, results, before, after):
    def mean(xs):
        return sum(xs) / len(xs)

    cores = os.cpu_count()
    lines = [
        BEGIN,
        "## Prepare: server CPU per load path (the floor for any client)",
        "",
        f"Produced by `bench/prepare_paths.py --rows {a.rows} --rounds {a.rounds}` on {time.strftime('%Y-%m-%d %H:%M')}: "
        f"{cores} cores, one sandboxed MariaDB (system mariadbd, buffer pool 2G, redo log 512M, "
        "innodb_flush_log_at_trx_commit=2), one table of sysbench's shape filled at a time, one connection, "
        f"means of {a.rounds} rounds. Server CPU from /proc/PID/stat, client CPU from wait4. The last column is the "
        f"floor for preparing two such tables at `--threads=2`: 2 x (server + client CPU) / {cores} cores. "
        f"Load average before/after: {' '.join(before)} / {' '.join(after)}.",
        "",
        "| load path | wall s | client CPU s | server CPU s | floor for 2 tables, s |",
        "|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        w, c, s = (mean([r[i] for r in rs]) for i in range(3))
        lines.append(f"| {name} | {w:.2f} | {c:.2f} | {s:.2f} | {2 * (s + c) / cores:.2f} |")
    lines += ["", END]
    section = "\n".join(lines)
    replace_section(a.out, BEGIN, END, section)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
