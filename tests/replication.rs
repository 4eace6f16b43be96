//! Replication topologies against real servers (the distribution's MariaDB): a primary and replicas in
//! temporary sandboxes, writes that arrive, lag by heartbeat against a deliberately delayed replica,
//! the data check, and stops that leave nothing running.

mod common;

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use versus::sampler::replica_lag::ReplicaLagSampler;
use versus::server::SandboxSpec;
use versus::server::process;
use versus::server::replication::{Heartbeat, Topology, TopologySpec, catch_up, compare_data, probe_lag};

/// A topology of the system build with `replicas` replicas delayed by `delays`, in a temp dir.
fn topology(replicas: usize, delays: &[u32]) -> (Topology, tempfile::TempDir) {
    topology_of(common::system_build(), replicas, delays)
}

/// A primary with one replica that applies with four threads.
fn topology_with_parallel_replica() -> (Topology, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("versus-repl-").tempdir().unwrap();
    let mut primary = SandboxSpec::new("p", common::system_build(), dir.path().join("p"));
    primary.overrides = vec!["innodb_buffer_pool_size=64M".into()];
    let mut spec = TopologySpec::new(primary, 1);
    spec.replica_overrides = vec!["slave_parallel_threads=4".into()];
    (Topology::start(spec).unwrap_or_else(|e| panic!("topology did not start: {e}")), dir)
}

fn topology_of(build: versus::server::Build, replicas: usize, delays: &[u32]) -> (Topology, tempfile::TempDir) {
    topology_with(build, replicas, delays, false)
}

fn topology_with(
    build: versus::server::Build,
    replicas: usize,
    delays: &[u32],
    semi_sync: bool,
) -> (Topology, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("versus-repl-").tempdir().unwrap();
    let mut primary = SandboxSpec::new("p", build, dir.path().join("p"));
    primary.overrides = vec!["innodb_buffer_pool_size=64M".into(), "innodb_flush_log_at_trx_commit=2".into()];
    let mut spec = TopologySpec::new(primary, replicas);
    spec.delays = delays.to_vec();
    spec.semi_sync = semi_sync;
    let t = Topology::start(spec).unwrap_or_else(|e| panic!("topology did not start: {e}"));
    (t, dir)
}

fn one_value(c: &mut mysql::Conn, sql: &str) -> String {
    let v: Option<Option<String>> = c.query_first(sql).unwrap();
    v.flatten().unwrap_or_default()
}

#[test]
fn writes_on_the_primary_arrive_on_the_replica_and_stop_leaves_nothing() {
    let (mut t, _dir) = topology(1, &[]);
    let mut p = t.primary().connect_root().unwrap();
    let mut r = t.replicas()[0].connect_root().unwrap();
    // Binary log on the primary, distinct server ids, GTID positioning, a read-only replica.
    assert_eq!(one_value(&mut p, "SELECT @@log_bin"), "1");
    assert_eq!(one_value(&mut p, "SELECT @@server_id"), "1");
    assert_eq!(one_value(&mut r, "SELECT @@server_id"), "2");
    assert_eq!(one_value(&mut r, "SELECT @@read_only"), "1");
    assert!(t.primary().adjusted().is_empty(), "runs as configured: {:?}", t.primary().adjusted());
    let status: mysql::Row = r.query_first("SHOW SLAVE STATUS").unwrap().unwrap();
    assert_eq!(status.get::<String, _>("Using_Gtid").unwrap(), "Slave_Pos");
    assert_eq!(status.get::<String, _>("Master_Host").unwrap(), "127.0.0.1");
    // The replication account may replicate and nothing else.
    let grants: Vec<String> = p.query("SHOW GRANTS FOR 'versus_repl'@'127.0.0.1'").unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert!(grants[0].starts_with("GRANT REPLICATION SLAVE ON *.* TO `versus_repl`@`127.0.0.1`"), "{grants:?}");

    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))").unwrap();
    bench.query_drop("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')").unwrap();
    let caught = catch_up(&t, Duration::from_secs(30)).unwrap();
    assert!(caught[0].reached, "{caught:?}");
    assert!(caught[0].seconds < 5.0, "{caught:?}");
    let rows: Vec<(i32, String)> = r.query("SELECT id, v FROM sbtest.t ORDER BY id").unwrap();
    assert_eq!(rows, [(1, "one".into()), (2, "two".into()), (3, "three".into())]);
    let states = t.states().unwrap();
    assert_eq!((states[0].io_running.as_str(), states[0].sql_running.as_str()), ("Yes", "Yes"), "{states:?}");
    assert_eq!(states[0].last_error, "");
    let probe = probe_lag(&t, Duration::from_secs(5)).unwrap();
    assert!(probe[0].is_some_and(|d| d < Duration::from_secs(2)), "{probe:?}");

    // A restarted primary: its set-up stays out of the binary log, so the replica keeps its own
    // accounts, reconnects, and goes on applying.
    t.primary_mut().stop().unwrap();
    t.primary_mut().restart().unwrap();
    t.primary().connect().unwrap().query_drop("INSERT INTO t VALUES (4, 'four')").unwrap();
    let caught = catch_up(&t, Duration::from_secs(30)).unwrap();
    assert!(caught[0].reached, "{caught:?}");
    let mut r = t.replicas()[0].connect_root().expect("the replica's root password is its own");
    let n: Option<i64> = r.query_first("SELECT COUNT(*) FROM sbtest.t").unwrap();
    assert_eq!(n, Some(4));
    assert_eq!(t.states().unwrap()[0].last_error, "");

    let pids: Vec<u32> = std::iter::once(t.primary().pid()).chain(t.replicas().iter().map(|r| r.pid())).collect();
    assert!(pids.iter().all(|p| process::is_alive(*p)));
    drop((p, r));
    t.stop().unwrap();
    for pid in pids {
        assert!(!process::is_alive(pid), "server {pid} still running after stop");
    }
}

#[test]
fn a_delayed_replica_reads_as_its_delay_by_heartbeat() {
    let (t, _dir) = topology(2, &[0, 3]);
    let sampler = ReplicaLagSampler::start(&t, Heartbeat::DEFAULT_INTERVAL).unwrap();
    let recording = sampler.record(Duration::from_secs(1));
    // The primary is written to all along.
    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE w (id INT AUTO_INCREMENT PRIMARY KEY, v INT)").unwrap();
    let until = Instant::now() + Duration::from_secs(9);
    while Instant::now() < until {
        bench.query_drop("INSERT INTO w (v) VALUES (1)").unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let samples = recording.finish().unwrap();
    assert!(samples.len() >= 7, "one sample a second: {}", samples.len());
    // After the first 4 s every applied heartbeat is one that waited out the delay.
    let settled: Vec<_> = samples.iter().filter(|s| s.at_s >= 4.5).collect();
    let lag = |i: usize| -> Vec<f64> { settled.iter().map(|s| s.replicas[i].heartbeat_ms.unwrap()).collect() };
    let (prompt, delayed) = (lag(0), lag(1));
    eprintln!("heartbeat lag ms: prompt replica {prompt:?}, delayed replica {delayed:?}");
    eprintln!("seconds behind: {:?}", settled.iter().map(|s| s.replicas[1].seconds_behind).collect::<Vec<_>>());
    assert!(!delayed.is_empty());
    for ms in &delayed {
        assert!((2500.0..5000.0).contains(ms), "delayed replica read {ms} ms: {delayed:?}");
    }
    for ms in &prompt {
        assert!(*ms < 1000.0, "undelayed replica read {ms} ms: {prompt:?}");
    }
    assert!(settled.iter().all(|s| s.replicas[1].sql_running == "Yes"));
    // Catch-up after the load waits out the delay on the delayed replica only.
    let caught = catch_up(&t, Duration::from_secs(30)).unwrap();
    eprintln!("catch-up: {caught:?}");
    assert!(caught.iter().all(|c| c.reached), "{caught:?}");
    assert!(caught[0].seconds < 1.5, "{caught:?}");
    assert!((1.5..4.5).contains(&caught[1].seconds), "{caught:?}");
}

#[test]
fn the_data_check_catches_a_row_changed_on_a_replica() {
    let (t, _dir) = topology(1, &[]);
    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))").unwrap();
    bench.query_drop("CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(20))").unwrap();
    bench.query_drop("INSERT INTO a VALUES (1, 'x'), (2, 'y')").unwrap();
    bench.query_drop("INSERT INTO b VALUES (1, 'x'), (2, 'y')").unwrap();
    assert!(catch_up(&t, Duration::from_secs(30)).unwrap()[0].reached);
    let check = compare_data(&t).unwrap();
    assert_eq!(check.tables, 2, "{check:?}");
    assert!(check.equal(), "{check:?}");
    // A write behind replication's back (root passes read_only).
    t.replicas()[0].connect_root().unwrap().query_drop("UPDATE sbtest.b SET v = 'z' WHERE id = 2").unwrap();
    let check = compare_data(&t).unwrap();
    assert_eq!(check.differences.len(), 1, "{check:?}");
    let d = &check.differences[0];
    assert_eq!((d.replica.as_str(), d.table.as_str()), ("p-r1", "sbtest.b"), "{check:?}");
    assert_ne!(d.primary, d.replica_checksum);
    // A row written on the replica that the primary then writes too stops the applier with an error,
    // which its state reports.
    t.replicas()[0].connect_root().unwrap().query_drop("INSERT INTO sbtest.a VALUES (3, 'replica')").unwrap();
    bench.query_drop("INSERT INTO a VALUES (3, 'primary')").unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let mut state = t.states().unwrap().remove(0);
    while state.sql_running == "Yes" && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        state = t.states().unwrap().remove(0);
    }
    assert_eq!(state.sql_running, "No", "{state:?}");
    assert_eq!(state.io_running, "Yes", "{state:?}");
    assert_eq!(state.seconds_behind, None, "{state:?}");
    assert!(state.last_error.starts_with("applier: ") && state.last_error.contains("Duplicate entry"), "{state:?}");
    assert!(!catch_up(&t, Duration::from_secs(1)).unwrap()[0].reached);
}

/// A `SHOW GLOBAL STATUS` value of the sandbox in `dir` (root over the socket).
fn status_of(dir: &std::path::Path, name: &str) -> String {
    let pw = std::fs::read_to_string(dir.join("root.password")).unwrap();
    let mut c = versus::server::admin::connect_socket(&dir.join("mysqld.sock"), "root", Some(pw.trim())).unwrap();
    let row: Option<(String, String)> = c.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap();
    row.map(|(_, v)| v).unwrap_or_default()
}

/// Runs `versus server stop p` when dropped, so that a failed assertion leaves no server running.
struct StopOnDrop<'a>(&'a common::home::Home);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["server", "stop", "p"]);
    }
}

#[test]
fn server_start_with_replicas_status_and_stop_as_a_user() {
    let home = common::home::Home::new("versus-repl-cli-");
    let _stop = StopOnDrop(&home);
    let (code, out, err) = home.output(&["server", "start", "system", "--name", "p", "--replicas", "1", "--semi-sync"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("started p-r1: replica, server_id 2"), "{out}");
    assert!(out.contains("replication: semi-synchronous"), "{out}");
    assert!(err.is_empty(), "no warning: {err}");
    let sandboxes = home.path().join("sandboxes");
    // Semi-synchronous: the replica is the primary's acknowledging client, and commits wait for it.
    assert_eq!(status_of(&sandboxes.join("p"), "Rpl_semi_sync_master_status"), "ON");
    assert_eq!(status_of(&sandboxes.join("p"), "Rpl_semi_sync_master_clients"), "1");
    let before: u64 = status_of(&sandboxes.join("p"), "Rpl_semi_sync_master_yes_tx").parse().unwrap();
    let (code, out, err) = home.output(&["server", "status", "p", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v[0]["replication"][0];
    assert_eq!(
        (r["name"].as_str(), r["io_running"].as_str(), r["sql_running"].as_str()),
        (Some("p-r1"), Some("Yes"), Some("Yes")),
        "{r}"
    );
    assert!(r["lag_ms"].as_f64().is_some_and(|l| l < 2000.0), "{r}");
    // The status probe's heartbeat was one acknowledged commit.
    let after: u64 = status_of(&sandboxes.join("p"), "Rpl_semi_sync_master_yes_tx").parse().unwrap();
    assert!(after > before, "{before} → {after}");
    let (code, out, _) = home.output(&["server", "status", "p"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.contains("p-r1") && l.contains("Yes  Yes")), "{out}");
    let pids: Vec<u32> =
        ["p", "p-r1"].iter().map(|n| versus::server::sandbox::read_info(&sandboxes.join(n)).unwrap().pid).collect();
    assert!(pids.iter().all(|p| process::is_alive(*p)));
    // Catch-up time and the data check from the command line; a row changed on the replica is found.
    let (code, out, err) = home.output(&["server", "verify", "p"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("p-r1: caught up in") && out.contains("tables equal"), "{out}");
    let pw = std::fs::read_to_string(sandboxes.join("p/root.password")).unwrap();
    let mut c =
        versus::server::admin::connect_socket(&sandboxes.join("p/mysqld.sock"), "root", Some(pw.trim())).unwrap();
    c.query_drop("CREATE TABLE sbtest.k (id INT PRIMARY KEY)").unwrap();
    c.query_drop("INSERT INTO sbtest.k VALUES (1), (2)").unwrap();
    let pw = std::fs::read_to_string(sandboxes.join("p-r1/root.password")).unwrap();
    let mut c =
        versus::server::admin::connect_socket(&sandboxes.join("p-r1/mysqld.sock"), "root", Some(pw.trim())).unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while c.query_first::<i64, _>("SELECT COUNT(*) FROM sbtest.k").ok().flatten() != Some(2) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    c.query_drop("DELETE FROM sbtest.k WHERE id = 2").unwrap();
    let (code, out, _) = home.output(&["server", "verify", "p"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("p-r1: sbtest.k differs"), "{out}");
    let (code, out, err) = home.output(&["server", "stop", "p"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("p-r1: stopped") && out.contains("p: stopped"), "{out}");
    for pid in pids {
        assert!(!process::is_alive(pid), "server {pid} still running after `server stop p`");
    }
    assert!(common::processes::processes_mentioning(&sandboxes.display().to_string()).is_empty());
}

#[test]
fn mysql_9_7_replicates_semi_synchronously_with_change_replication_source() {
    let (mut t, _dir) = topology_with(common::fetched_build("mysql-9.7"), 1, &[], true);
    let mut p = t.primary().connect_root().unwrap();
    let status = |c: &mut mysql::Conn, name: &str| -> String {
        let row: Option<(String, String)> = c.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap();
        row.map(|(_, v)| v).unwrap_or_default()
    };
    assert_eq!(status(&mut p, "Rpl_semi_sync_source_status"), "ON");
    assert_eq!(status(&mut p, "Rpl_semi_sync_source_clients"), "1");
    let acked: u64 = status(&mut p, "Rpl_semi_sync_source_yes_tx").parse().unwrap();
    let mut r = t.replicas()[0].connect_root().unwrap();
    let row: mysql::Row = r.query_first("SHOW REPLICA STATUS").unwrap().unwrap();
    assert_eq!(row.get::<String, _>("Auto_Position").unwrap(), "1");
    assert_eq!(one_value(&mut r, "SELECT @@gtid_mode"), "ON");
    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))").unwrap();
    bench.query_drop("INSERT INTO t VALUES (1, 'one'), (2, 'two')").unwrap();
    let caught = catch_up(&t, Duration::from_secs(30)).unwrap();
    assert!(caught[0].reached, "{caught:?}");
    let n: Option<i64> = r.query_first("SELECT COUNT(*) FROM sbtest.t").unwrap();
    assert_eq!(n, Some(2));
    let states = t.states().unwrap();
    assert_eq!((states[0].io_running.as_str(), states[0].sql_running.as_str()), ("Yes", "Yes"), "{states:?}");
    assert!(compare_data(&t).unwrap().equal());
    let after: u64 = status(&mut p, "Rpl_semi_sync_source_yes_tx").parse().unwrap();
    assert!(after >= acked + 2, "both writes were acknowledged: {acked} → {after}");
    drop(p);
    let probe = probe_lag(&t, Duration::from_secs(5)).unwrap();
    assert!(probe[0].is_some(), "{probe:?}");
    drop(r);
    let pids = [t.primary().pid(), t.replicas()[0].pid()];
    t.stop().unwrap();
    assert!(pids.iter().all(|p| !process::is_alive(*p)));
}

#[test]
fn a_sysbench_load_on_the_primary_is_sampled_each_second_and_the_replica_ends_equal() {
    let (t, _dir) = topology(1, &[]);
    let port = format!("--mysql-port={}", t.primary().port());
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["oltp_write_only", "--tables=2", "--table-size=2000", "--mysql-user=sbtest"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend([port.clone(), "--mysql-password=sbpass".into()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        let o = common::versus_sysbench(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", common::output_text(&o));
        common::output_text(&o)
    };
    run(&["prepare"]);
    let recording = ReplicaLagSampler::start(&t, Heartbeat::DEFAULT_INTERVAL).unwrap().record(Duration::from_secs(1));
    let report = run(&["--threads=2", "--time=6", "run"]);
    let samples = recording.finish().unwrap();
    let lags: Vec<Option<f64>> = samples.iter().map(|s| s.replicas[0].heartbeat_ms).collect();
    let applied: Vec<f64> = samples.iter().filter_map(|s| s.replicas[0].applied_per_s).collect();
    eprintln!("applied transactions per second on the replica: {applied:?}");
    // The load's seconds (all but the first sample's and the last's) apply far more than the heartbeat's 10.
    assert!(applied.iter().filter(|a| **a > 100.0).count() >= 3, "{applied:?}");
    let tps = report.lines().find(|l| l.contains("transactions:")).unwrap_or_default().trim().to_string();
    eprintln!("{tps}; heartbeat lag ms each second: {lags:?}");
    assert!(samples.len() >= 5, "one sample a second: {}", samples.len());
    for s in &samples {
        let r = &s.replicas[0];
        assert_eq!((r.io_running.as_str(), r.sql_running.as_str()), ("Yes", "Yes"), "{s:?}");
        assert!(r.heartbeat_ms.is_some_and(|ms| ms < 10_000.0), "{s:?}");
    }
    let caught = catch_up(&t, Duration::from_secs(60)).unwrap();
    eprintln!("catch-up after the load: {:.3} s", caught[0].seconds);
    assert!(caught[0].reached, "{caught:?}");
    let check = compare_data(&t).unwrap();
    assert_eq!(check.tables, 2, "{check:?}");
    assert!(check.equal(), "{check:?}");
}

#[test]
fn a_semi_synchronous_primarys_commit_wait_is_sampled() {
    let (t, _dir) = topology_with(common::system_build(), 1, &[], true);
    let mut sampler = ReplicaLagSampler::start(&t, Heartbeat::DEFAULT_INTERVAL).unwrap();
    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE s (id INT AUTO_INCREMENT PRIMARY KEY, v INT)").unwrap();
    sampler.sample().unwrap();
    for _ in 0..50 {
        bench.query_drop("INSERT INTO s (v) VALUES (1)").unwrap();
    }
    let s = sampler.sample().unwrap();
    let w = s.commit_wait.clone().expect("a semi-synchronous topology samples the commit wait");
    eprintln!("commit wait: {w:?}");
    assert!(w.active, "{w:?}");
    // Each of the 50 inserts (and any heartbeat written meanwhile) was acknowledged by the replica.
    // Those whose acknowledgement was not there yet waited for it (17 to 50 of them in the runs seen).
    assert!(w.acknowledged >= 50, "{w:?}");
    assert!(w.waits <= w.acknowledged, "{w:?}");
    assert_eq!(w.mean_wait_us.is_some(), w.waits > 0, "{w:?}");
    assert!(w.mean_wait_us.is_none_or(|us| us > 0.0 && us < 1_000_000.0), "{w:?}");
    assert_eq!((w.unacknowledged, w.fallbacks), (0, 0), "{w:?}");
    // An asynchronous topology has none.
    let (a, _adir) = topology(1, &[]);
    assert_eq!(ReplicaLagSampler::start(&a, Heartbeat::DEFAULT_INTERVAL).unwrap().sample().unwrap().commit_wait, None);
}

#[test]
fn a_replica_killed_during_writes_restarts_catches_up_and_ends_equal() {
    let (mut t, _dir) = topology_with_parallel_replica();
    // The per-role option reached the replica only.
    let mut r = t.replicas()[0].connect_root().unwrap();
    assert_eq!(one_value(&mut r, "SELECT @@slave_parallel_threads"), "4");
    assert_eq!(one_value(&mut t.primary().connect_root().unwrap(), "SELECT @@slave_parallel_threads"), "0");
    drop(r);
    let mut bench = t.primary().connect().unwrap();
    bench.query_drop("CREATE TABLE k (id INT AUTO_INCREMENT PRIMARY KEY, v INT)").unwrap();
    let insert = |bench: &mut mysql::Conn, n: usize| {
        for i in 0..n {
            bench.exec_drop("INSERT INTO k (v) VALUES (?)", (i,)).unwrap();
        }
    };
    insert(&mut bench, 200);
    let pid = t.replicas()[0].pid();
    common::processes::kill9(pid);
    // A killed server's threads take a moment to go; its death is then reported.
    let until = Instant::now() + Duration::from_secs(10);
    while t.replicas_mut()[0].check_alive().is_ok() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let died = t.replicas_mut()[0].check_alive().unwrap_err().to_string();
    assert!(died.contains("the server died (signal: 9"), "{died}");
    assert!(!process::is_alive(pid));
    // The primary goes on while its replica is down.
    insert(&mut bench, 300);
    t.replicas_mut()[0].restart().unwrap();
    insert(&mut bench, 100);
    let caught = catch_up(&t, Duration::from_secs(60)).unwrap();
    eprintln!("catch-up after the restart: {caught:?}");
    assert!(caught[0].reached, "{caught:?}");
    let n: Option<i64> = t.replicas()[0].connect_root().unwrap().query_first("SELECT COUNT(*) FROM sbtest.k").unwrap();
    assert_eq!(n, Some(600));
    assert!(compare_data(&t).unwrap().equal());
    let s = t.states().unwrap().remove(0);
    assert_eq!((s.io_running.as_str(), s.sql_running.as_str(), s.last_error.as_str()), ("Yes", "Yes", ""), "{s:?}");
}

/// The upgrade question from the command line: replicas of a newer MariaDB than their primary start,
/// replicate and end equal; a replica older than its primary, or of the other family, is refused before
/// anything starts, in one line that says what would work.
#[test]
fn replicas_of_a_newer_build_than_the_primary_and_the_refusals() {
    let home = common::home::Home::new("versus-repl-up-");
    let lib = versus::server::Home::at(home.path());
    lib.register(&common::fetched_build("mariadb-11.8")).unwrap();
    lib.register(&common::fetched_build("mysql-9.7")).unwrap();
    let _stop = StopOnDrop(&home);
    let (code, out, err) = home.output(&[
        "server",
        "start",
        "system",
        "--name",
        "p",
        "--replicas",
        "1",
        "--replica-build",
        "mariadb-11.8",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("started p-r1: replica") && l.contains("11.8.")), "{out}");
    let pw = std::fs::read_to_string(home.path().join("sandboxes/p/root.password")).unwrap();
    let mut c =
        versus::server::admin::connect_socket(&home.path().join("sandboxes/p/mysqld.sock"), "root", Some(pw.trim()))
            .unwrap();
    c.query_drop("CREATE TABLE sbtest.u (id INT PRIMARY KEY, v VARCHAR(10))").unwrap();
    c.query_drop("INSERT INTO sbtest.u VALUES (1, 'one'), (2, 'two')").unwrap();
    let (code, out, err) = home.output(&["server", "verify", "p"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("p-r1: caught up in") && out.contains("tables equal"), "{out}");
    let (code, out, _) = home.output(&["server", "status", "p"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.contains("p-r1") && l.contains("Yes  Yes")), "{out}");
    let (code, _, err) = home.output(&["server", "stop", "p"]);
    assert_eq!(code, 0, "{err}");
    for (primary, replica, wanted) in [
        ("mariadb-11.8", "system", "is older than the primary's mariadb-11.8"),
        ("system", "mysql-9.7", "cannot replicate from a mariadb 10.11"),
    ] {
        let (code, out, err) =
            home.output(&["server", "start", primary, "--name", "q", "--replicas", "1", "--replica-build", replica]);
        assert_ne!(code, 0, "{out}");
        assert!(err.starts_with("versus: error: --replica-build: ") && err.contains(wanted), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!home.path().join("sandboxes/q/mysqld.sock").exists(), "nothing started");
    }
}
