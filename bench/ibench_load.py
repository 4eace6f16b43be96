#!/usr/bin/env python3
"""Is the Insert Benchmark's load step (l.i0) limited by versus? Side by side against one sandboxed MariaDB.

The peer is the `mariadb` command-line client (C, libmariadb) fed a file of pre-generated SQL with the same
statements versus sends in l.i0: the reference's table, multi-row INSERTs of 100 rows (dateandtime,
cashregisterid, customerid, productid, price as %.2f, data = filler 'a's plus a random base64 tail), one
connection, autocommit, text protocol. Generating the SQL is not timed, so the peer does strictly less work
than versus, which draws its rows while it loads.

Every round drops and recreates the table, then runs the peer and `versus ibench --steps l.i0` in turn
(A B A B). Per run: rows/s (rows over the client's wall time; for versus also its own measured rate),
client CPU µs per row (user+sys of the client process, from wait4) and server CPU µs per row (from
/proc/PID/stat). Appends a section to BENCHMARKS.md (or --out).

Usage: bench/ibench_load.py [--versus target/release/versus] [--rows 2000000] [--rounds 2] [--out BENCHMARKS.md]
Needs: a release build of versus, the distribution's MariaDB and its `mariadb` client. Nothing is left running.
"""

import argparse
import base64
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

from benchlib import Server

CREATE = ("CREATE TABLE pi1 (transactionid BIGINT NOT NULL AUTO_INCREMENT, dateandtime DATETIME, "
          "cashregisterid INT NOT NULL, customerid INT NOT NULL, productid INT NOT NULL, price INT NOT NULL, "
          "data VARCHAR(4000), PRIMARY KEY (transactionid)) ENGINE=innodb")


def generate(path, rows, rpc, seed):
    """Writes l.i0's INSERT statements, as versus draws them (same ranges and data shape)."""
    rnd = random.Random(seed)
    buf = base64.b64encode(rnd.randbytes(3 << 20)).decode()
    with open(path, "w") as f:
        done = 0
        while done < rows:
            n = min(rpc, rows - done)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            tuples = []
            for _ in range(n):
                length = rnd.randint(10, 20)
                tail = int(length * 0.75 * 50 / 100)
                at = rnd.randrange(len(buf) - tail + 1)
                data = "a" * (length - tail) + buf[at:at + tail]
                tuples.append(f"('{stamp}',{rnd.randrange(1000)},{rnd.randrange(100000)},{rnd.randrange(10000)},"
                              f"{rnd.randrange(500)}.00,'{data}')")
            f.write("INSERT INTO pi1 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES "
                    + ",".join(tuples) + ";\n")
            done += n


def run_client(cmd, stdin=None):
    """Runs cmd; returns (wall seconds, client CPU seconds, stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        if code != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.read().decode(errors='replace')[-3000:]}")
    return wall, ru.ru_utime + ru.ru_stime, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--buffer-pool", default="2G")
    ap.add_argument("--out", default="BENCHMARKS.md")
    a = ap.parse_args()
    if not os.access(a.versus, os.X_OK):
        raise SystemExit(f"{a.versus} is not an executable; build it (cargo build --release) or pass --versus")
    load_before = open("/proc/loadavg").read().split()[:3]
    work = tempfile.mkdtemp(prefix="vs-ibench-sql-", dir="/tmp")
    sql_file = os.path.join(work, "l.i0.sql")
    generate(sql_file, a.rows, 100, 1)
    srv = Server(a.versus, [f"innodb_buffer_pool_size={a.buffer_pool}", "innodb_log_file_size=512M", "innodb_flush_log_at_trx_commit=2"], database="ib")
    results = []
    try:
        for rnd in range(a.rounds):
            for tool in ("mariadb client", "versus"):
                srv.sql("DROP TABLE IF EXISTS ib.pi1; " + CREATE.replace("pi1", "ib.pi1"))
                cpu0 = srv.cpu()
                if tool == "versus":
                    out = os.path.join(work, "r.json")
                    wall, ccpu, _ = run_client([a.versus, "ibench", "--port", str(srv.port), "--user", "sbtest",
                                                "--password", "sbpass", "--steps", "l.i0", "--rows", str(a.rows),
                                                "--quiet", "--format", "json", "--output", out])
                    step = json.load(open(out))["steps"][0]
                    own = step["ips"]
                else:
                    with open(sql_file) as f:
                        wall, ccpu, _ = run_client(["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{srv.port}",
                                                    "-usbtest", "-psbpass", "ib"], stdin=f)
                    own = None
                scpu = srv.cpu() - cpu0
                n = int(srv.sql("SELECT COUNT(*) FROM ib.pi1").stdout.strip())
                if n != a.rows:
                    raise SystemExit(f"{tool} loaded {n} rows, expected {a.rows}")
                results.append(dict(round=rnd + 1, tool=tool, ips=n / wall, own=own, wall=wall,
                                    ccpu=ccpu * 1e6 / n, scpu=scpu * 1e6 / n))
                print(f"round {rnd + 1} {tool:15} {n / wall:9.0f} rows/s  client {ccpu * 1e6 / n:6.2f} µs/row  "
                      f"server {scpu * 1e6 / n:6.2f} µs/row", flush=True)
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = open("/proc/loadavg").read().split()[:3]
    write_report(a, results, load_before, load_after)


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def write_report(a, results, before, after):
    def m(tool, key):
        return mean([r[key] for r in results if r["tool"] == tool and r[key] is not None])

    base = m("mariadb client", "ips")
    lines = [
        "",
        "## Insert Benchmark load step (l.i0): versus vs a statement-equivalent loader",
        "",
        f"Produced by `bench/ibench_load.py --rows {a.rows} --rounds {a.rounds}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')}: {os.cpu_count()} cores, one sandboxed MariaDB (system mariadbd, buffer "
        f"pool {a.buffer_pool}, innodb_flush_log_at_trx_commit=2, no binary log), 1 client, {a.rows} rows in "
        "multi-row INSERTs of 100 rows into the reference's table (no secondary indexes), table dropped and "
        "recreated before every run, runs in the order peer, versus per round (means over the rounds). The peer is "
        "the `mariadb` command-line client fed pre-generated SQL with the same statements (generation not timed). "
        "rows/s = rows / wall time of the client process; versus's own figure (its measured l.i0 time, without "
        "connecting and creating the table) in parentheses. CPU µs/row: user+sys of the client process (wait4), "
        f"and of the server (/proc). Load average before/after: {' '.join(before)} / {' '.join(after)} (other work "
        "on the machine adds noise).",
        "",
        "| loader | rows/s | vs peer | client CPU µs/row | server CPU µs/row |",
        "|---|---|---|---|---|",
    ]
    for tool in ("mariadb client", "versus"):
        ips = m(tool, "ips")
        own = f" ({m(tool, 'own'):.0f})" if tool == "versus" else ""
        lines.append(f"| {tool} | {ips:.0f}{own} | {ips / base:.2f} | {m(tool, 'ccpu'):.2f} | {m(tool, 'scpu'):.2f} |")
    lines.append("")
    with open(a.out, "a") as f:
        f.write("\n".join(lines))
    print(f"appended to {a.out}")


if __name__ == "__main__":
    main()
