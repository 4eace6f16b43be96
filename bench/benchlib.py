"""Shared pieces of the benchmark scripts: a throw-away sandboxed MariaDB started by versus itself.

The server is the distribution's MariaDB, started with `versus server start` in a temporary versus home
(so with the same generated my.cnf, loopback-only listener and user sbtest/sbpass as every other
versus sandbox), and stopped by `versus server stop`, which signals its PID.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

CLK = os.sysconf("SC_CLK_TCK")

# The server of the client comparisons (sysbench_compare, kernel_profile, server_side): the run phase's
# tables in memory, the redo log flushed once a second, room for 64 connections' prepared statements.
CLIENT_BENCH_SETTINGS = ["innodb_buffer_pool_size=2G", "innodb_log_file_size=512M",
                         "innodb_flush_log_at_trx_commit=2", "max_connections=1000",
                         "max_prepared_stmt_count=100000"]

# The run phase's tables of the client comparisons: 4 x 100k rows, prepared by sysbench.
RUN_TABLES = ["--tables=4", "--table-size=100000"]


def client_paths(ap):
    """The --versus, --floor and --sysbench options of the client comparisons."""
    ap.add_argument("--versus", default="target/release/versus")
    ap.add_argument("--floor", default="target/release/examples/floor_client")
    ap.add_argument("--sysbench", default="/usr/bin/sysbench")


class Server:
    """A sandbox of the distribution's MariaDB with `settings` (name=value strings) in its my.cnf, and
    `replicas` replica sandboxes beside it (`versus server start --replicas`)."""

    def __init__(self, versus, settings, database="sbtest", replicas=0):
        self.versus = versus
        self.home = tempfile.mkdtemp(prefix="vs-bench-", dir="/tmp")
        self.env = dict(os.environ, VERSUS_HOME=self.home)
        self._versus("server", "fetch", "system")
        args = ["server", "start", "system", "--name", "bench"]
        if replicas:
            args += ["--replicas", str(replicas)]
        for s in settings:
            args += ["--set", s]
        self._versus(*args)
        info = json.loads(self._versus("server", "status", "bench", "--json"))[0]
        self.port, self.pid, self.sock = info["port"], info["pid"], info["socket"]
        self.dir = info["dir"]
        if database != "sbtest":
            self.sql(f"CREATE DATABASE IF NOT EXISTS {database}")

    def _versus(self, *args):
        try:
            r = subprocess.run([self.versus, *args], env=self.env, capture_output=True, text=True)
        except OSError as e:
            self.stop()
            raise SystemExit(f"{self.versus}: {e.strerror}; build it (cargo build --release) or give --versus")
        if r.returncode != 0:
            self.stop()
            raise SystemExit(f"versus {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def sql(self, q, check=True):
        """Runs q as root over the socket (with the sandbox's generated root password, passed in the
        environment rather than on the command line)."""
        env = dict(os.environ)
        pw = os.path.join(self.dir, "root.password")
        if os.path.exists(pw):
            env["MYSQL_PWD"] = open(pw).read().strip()
        return subprocess.run(["mariadb", "--no-defaults", "-S", self.sock, "-uroot", "-N", "-e", q],
                              capture_output=True, text=True, check=check, env=env)

    def via(self):
        """sysbench's options to reach this server as the sandbox's user, by transport ("tcp", "socket")."""
        login = ["--mysql-user=sbtest", "--mysql-password=sbpass", "--mysql-db=sbtest"]
        return {"tcp": ["--mysql-host=127.0.0.1", f"--mysql-port={self.port}"] + login,
                "socket": [f"--mysql-socket={self.sock}"] + login}

    def prepare_run_tables(self, sysbench):
        """Prepares and prewarms the RUN_TABLES with `sysbench` (4 threads, over TCP)."""
        prep = [sysbench, "oltp_read_write"] + self.via()["tcp"] + RUN_TABLES + ["--threads=4"]
        run_client(prep + ["prepare"])
        run_client(prep + ["prewarm"])

    def _user_sys(self):
        """The server's user and system CPU seconds so far (the process's, exited threads included)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) / CLK, int(fields[12]) / CLK

    def cpu(self):
        """The server's user + system CPU seconds so far."""
        return sum(self._user_sys())

    def sched(self):
        """The server's user and system CPU seconds so far and the voluntary (sleeps) and involuntary
        (preemptions) context switches of its live threads."""
        user, sys_ = self._user_sys()
        out = dict(user=user, sys=sys_, sleeps=0, preempt=0)
        base = f"/proc/{self.pid}/task"
        for tid in os.listdir(base):
            try:
                with open(f"{base}/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            out["sleeps"] += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            out["preempt"] += int(line.split()[1])
            except (FileNotFoundError, ProcessLookupError):
                pass
        return out

    def stop(self):
        try:
            subprocess.run([self.versus, "server", "stop", "--all"], env=self.env, capture_output=True)
        except OSError:
            pass  # no versus binary, so no server was started
        shutil.rmtree(self.home, ignore_errors=True)


# The fields of /proc/stat's "cpu" line, in jiffies summed over all CPUs (proc(5)).
HOST_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def host_cpu():
    """The whole host's CPU time so far by kind (HOST_FIELDS), in seconds summed over its CPUs."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:1 + len(HOST_FIELDS)]
    return {k: int(v) / CLK for k, v in zip(HOST_FIELDS, fields)}


def steal_share(before, after):
    """The share of the host's CPU time between two host_cpu() readings that its hypervisor gave to
    others (steal): time in which neither the server nor a client could run, whatever they asked."""
    total = sum(after[k] - before[k] for k in HOST_FIELDS)
    return (after["steal"] - before["steal"]) / total if total > 0 else 0.0


def run_client_usage(cmd):
    """Runs cmd; returns (wall seconds, its resource usage from wait4, its output)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        except OSError as e:
            raise SystemExit(f"{cmd[0]}: {e.strerror}")
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{text[-3000:]}")
    return wall, ru, text


def run_client(cmd):
    """Runs cmd; returns (wall seconds, client CPU seconds from wait4, its output)."""
    wall, ru, text = run_client_usage(cmd)
    return wall, ru.ru_utime + ru.ru_stime, text


def drawing_cpu(text):
    """The CPU seconds the floor client spent drawing its statements before its clock started (its report
    says so; 0 for any other client). Part of the process's CPU time, not of the replay it measures."""
    m = re.search(r"CPU drawing statements before start:\s+([\d.]+)s", text)
    return float(m.group(1)) if m else 0.0


def git_build():
    """The short hash of the checkout's HEAD, for the line that says which build a section measured."""
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def transactions(text):
    """(transactions, per second) from a sysbench-style final report."""
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", text)
    if not m:
        raise SystemExit(f"no 'transactions:' line in:\n{text[-2000:]}")
    return int(m.group(1)), float(m.group(2))


def replace_section(path, begin, end, section):
    """Writes `section` (which starts with `begin` and ends with `end`) into the file at `path` in place
    of the text between those markers, or appends it when the markers are not there yet."""
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        new = old[:old.index(begin)] + section + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(new)


def tcp_login(srv):
    """The `versus sysbench` options that reach `srv` over loopback TCP as sbtest."""
    return ["--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=sbtest",
            "--mysql-password=sbpass", "--mysql-db=sbtest"]


def prepare(versus, conn, table_args, test="oltp_point_select"):
    """`versus sysbench TEST ... prepare`; exits with its error when it fails."""
    r = subprocess.run([versus, "sysbench", test, *conn, *table_args, "prepare"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"prepare: {r.stderr.strip()}")


def span(values, fmt):
    """`lo-hi` of `values` formatted with `fmt`, or one figure when both ends read the same."""
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}-{fmt.format(hi)}"


def write_table_section(out, begin, end, heading, text, columns, rows):
    """Prints a BENCHMARKS.md section (`heading`, the paragraph `text`, a table of `rows` under
    `columns` given as (name, right_aligned) pairs) between the markers, and writes it into the file
    `out` unless it is `-`."""
    lines = [begin, heading, "", text, "",
             "| " + " | ".join(c for c, _ in columns) + " |",
             "|" + "|".join("---:" if right else "---" for _, right in columns) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", end]
    section = "\n".join(lines)
    print(section)
    if out != "-":
        replace_section(out, begin, end, section)
