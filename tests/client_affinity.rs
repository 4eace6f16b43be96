//! `--client-affinity`: over loopback TCP and over a unix socket each worker thread of `versus sysbench`
//! moves to the CPU its server thread runs on (the default), and stays where the scheduler puts it with
//! `off`, or when it may use one CPU only. Read from the running process's threads in /proc, against
//! the distribution's MariaDB in a temporary sandbox.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestServer, start_server, start_server_of, sysbench_fails_with as fails_with, versus_sysbench as versus};

fn login(s: &TestServer, tcp: bool) -> Vec<String> {
    let mut a = vec![format!("--mysql-user={}", s.user), format!("--mysql-password={}", s.password)];
    a.push(format!("--mysql-db={}", s.db));
    if tcp {
        a.extend(["--mysql-host=127.0.0.1".to_string(), format!("--mysql-port={}", s.port)]);
    } else {
        a.push(format!("--mysql-socket={}", s.socket.display()));
    }
    a
}

/// `versus sysbench oltp_point_select ... run` for 20 s (killed once read), with `extra` options.
fn start_run(s: &TestServer, tcp: bool, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["sysbench", "oltp_point_select", "--tables=1", "--table-size=1000", "--threads=2", "--time=20"])
        .args(login(s, tcp))
        .args(extra)
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start versus")
}

/// The `Cpus_allowed_list` of a thread's /proc status.
fn allowed_list(status: &str) -> String {
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).expect("Cpus_allowed_list").trim().to_string()
}

/// The CPU lists of the process's worker threads (named `sysbench-N`) once both have run for a second.
fn worker_cpus(child: &mut Child) -> Vec<String> {
    let t0 = Instant::now();
    let mut seen = Vec::new();
    while t0.elapsed() < Duration::from_secs(15) {
        assert!(child.try_wait().expect("wait").is_none(), "the run ended early");
        if worker_cpus_now(child.id()).len() == 2 {
            // Connected and running: give each worker more than one check's worth of events.
            std::thread::sleep(Duration::from_secs(1));
            seen = worker_cpus_now(child.id());
            if seen.len() == 2 {
                return seen;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("no two worker threads within 15 s (saw {seen:?})");
}

/// The CPU lists of the worker threads of process `pid` now.
fn worker_cpus_now(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim().starts_with("sysbench-") {
            out.push(allowed_list(&std::fs::read_to_string(task.path().join("status")).unwrap_or_default()));
        }
    }
    out
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The CPU list of this (test) process, which the child inherits.
fn own_list() -> String {
    allowed_list(&std::fs::read_to_string("/proc/self/status").expect("own status"))
}

fn one_cpu(list: &str) -> bool {
    list.parse::<usize>().is_ok()
}

/// `versus sysbench oltp_point_select ... prepare` of the table the runs read.
fn prepare(s: &TestServer) {
    let prep = login(s, true);
    let mut args: Vec<&str> = vec!["oltp_point_select", "--tables=1", "--table-size=1000"];
    args.extend(prep.iter().map(|x| x.as_str()));
    args.push("prepare");
    let o = versus(&args);
    assert!(o.status.success(), "prepare: {}", String::from_utf8_lossy(&o.stderr));
}

/// The first value of `sql`, run as root.
fn root_value(s: &TestServer, sql: &str) -> Option<String> {
    use mysql::prelude::Queryable;
    s.root_conn().query_first::<Option<String>, _>(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).flatten()
}

#[test]
fn workers_follow_their_server_threads_unless_told_not_to() {
    let s = start_server();
    prepare(&s);
    let all = own_list();
    let many = !one_cpu(&all);

    // The default, over TCP to 127.0.0.1 and over the unix socket (where the server names its thread):
    // each worker is held on one CPU, where its server thread ran.
    for tcp in [true, false] {
        let mut c = start_run(&s, tcp, &[]);
        let followed = worker_cpus(&mut c);
        stop(c);
        for l in &followed {
            if many {
                assert!(one_cpu(l), "tcp {tcp}: a following worker may use CPUs {l}, not one (the process: {all})");
            } else {
                assert_eq!(l, &all, "with one CPU there is nowhere to move");
            }
        }
    }

    // Off: the inherited mask, over either transport.
    for tcp in [true, false] {
        let mut c = start_run(&s, tcp, &["--client-affinity=off"]);
        let lists = worker_cpus(&mut c);
        stop(c);
        assert!(lists.iter().all(|l| l == &all), "tcp {tcp}, off: workers on {lists:?}, the process on {all}");
    }

    // Given one CPU (taskset), a worker has nowhere to move and stays on it. (A mask of several CPUs
    // that leaves the server's out would need more CPUs than CI machines have.)
    if many {
        let first = all.split([',', '-']).next().expect("a CPU").to_string();
        let mut c = Command::new("taskset")
            .args(["-c", &first, env!("CARGO_BIN_EXE_versus")])
            .args(["sysbench", "oltp_point_select", "--tables=1", "--table-size=1000", "--threads=2", "--time=20"])
            .args(login(&s, true))
            .arg("run")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start taskset");
        let lists = worker_cpus(&mut c);
        stop(c);
        assert!(lists.iter().all(|l| l == &first), "under taskset -c {first}: workers on {lists:?}");
    }
}

/// The CPU lists of the workers of a default run over the unix socket.
fn socket_run_cpus(s: &TestServer) -> Vec<String> {
    let mut c = start_run(s, false, &[]);
    let lists = worker_cpus(&mut c);
    stop(c);
    lists
}

#[test]
fn under_a_thread_pool_socket_workers_stay_where_the_scheduler_puts_them() {
    let s = start_server_of(common::system_build(), &["innodb_log_file_size=64M", "thread_handling=pool-of-threads"]);
    assert_eq!(root_value(&s, "SELECT @@thread_handling").as_deref(), Some("pool-of-threads"));
    // MariaDB 10.11's pool names no thread (TID 0), so this run would stay put on the process list alone;
    // that versus asks @@thread_handling first, for servers that name a pool thread, is checked by the
    // follower's unit tests. Here: a pooled server runs, and nothing is moved.
    let tid = root_value(&s, "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()");
    assert!(tid.is_some_and(|t| t.parse::<u64>().is_ok()), "a TID column");
    prepare(&s);
    let all = own_list();
    let lists = socket_run_cpus(&s);
    assert!(lists.iter().all(|l| l == &all), "pool-of-threads: workers on {lists:?}, the process on {all}");
}

#[test]
fn on_mysql_socket_workers_follow_the_thread_the_performance_schema_names_when_the_account_may_read_it() {
    let s = start_server_of(common::fetched_build("mysql-9.7"), &[]);
    assert_eq!(root_value(&s, "SELECT @@thread_handling").as_deref(), Some("one-thread-per-connection"));
    // MySQL has no TID in its process list: the performance schema names the thread.
    let os_id = "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()";
    assert!(root_value(&s, os_id).is_some_and(|t| t.parse::<u64>().is_ok()), "MySQL names its thread");
    prepare(&s);
    let all = own_list();
    // The sandbox's benchmark account may not read performance_schema.threads: nothing is followed,
    // and the run goes on.
    let lists = socket_run_cpus(&s);
    assert!(lists.iter().all(|l| l == &all), "no grant: workers on {lists:?}, the process on {all}");

    s.root_exec(&["GRANT SELECT ON performance_schema.threads TO 'sbtest'@'localhost'"]);
    let lists = socket_run_cpus(&s);
    for l in &lists {
        if one_cpu(&all) {
            assert_eq!(l, &all, "with one CPU there is nowhere to move");
        } else {
            assert!(one_cpu(l), "MySQL over the socket: a following worker may use CPUs {l}, not one ({all})");
        }
    }
}

#[test]
fn a_bad_affinity_is_a_one_line_error() {
    fails_with(&["oltp_point_select", "--client-affinity=sometimes", "run"], "--client-affinity");
}
