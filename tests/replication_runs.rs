//! Targets with replicas in experiments: each run's replicas measured (lag, applied rate, catch-up,
//! commit wait, their own cost), stored and compared; impossible topologies refused before anything
//! starts; a replica killed during a run restarted and counted; MySQL 9.7 and a replica of a newer
//! version than its primary. Every server is a real one the tests start in a temporary home.

mod common;

use std::time::{Duration, Instant};

use versus::server::process;

/// An experiment whose targets have replicas: the lag of a replica delayed by 3 s reads as about that
/// delay, a prompt semi-synchronous one reads as about one heartbeat interval, and both are compared
/// with intervals like any metric.
#[test]
fn an_experiment_measures_and_compares_its_targets_replicas() {
    let home = common::home::Home::new("versus-repl-exp-");
    let file = home.file(
        "repl",
        r#"
name = "repl"
threads = [2]
duration = "4s"
warmup = "1s"
order = "interleaved"

[[targets]]
name = "delayed"
build = "system"
replication = { replicas = 2, delay = [0, 3] }

[[targets]]
name = "semi"
build = "system"
replication = { replicas = 1, semi_sync = true, replica_set = { slave_parallel_threads = 2 } }

[[workloads]]
test = "oltp_write_only"
options = { tables = 1, table-size = 1000 }
"#,
    );
    let file = file.to_str().unwrap();
    let (code, out, err) = home.output(&["run", file, "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("delayed                  build system; with 2 replicas, asynchronous, delays 0,3 s"),
        "{out}"
    );
    assert!(out.contains("with 1 replica, semi-synchronous, replicas set slave_parallel_threads=2"), "{out}");
    let (code, out, err) = home.output(&["run", file]);
    assert_eq!(code, 0, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("starting the primary with 2 replicas") && all.contains("waiting for the replicas"), "{all}");
    assert!(!all.contains("warning"), "{all}");
    let r = home.report_json(&["report", "repl", "--metric", "replica-lag-p95", "--format", "json"]);
    let names: Vec<&str> =
        r["replication_metrics"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "replica-lag-p50",
            "replica-lag-p95",
            "replica-lag-max",
            "replica-applied",
            "catch-up",
            "commit-wait",
            "replica-cpu-per-txn",
            "replica-write-kb-per-txn"
        ]
    );
    let value = |side: u64, metric: &str| -> Option<f64> {
        let row = r["replication"].as_array().unwrap().iter().find(|v| v["side"] == side).unwrap();
        row["values"].as_array().unwrap().iter().find(|v| v["metric"] == metric).unwrap()["mean"].as_f64()
    };
    // A 3 s delay reads between 3 and 4 s (the server applies it against whole-second event times) plus
    // up to one heartbeat interval; a prompt replica within a few heartbeat intervals.
    let delayed = value(0, "replica-lag-p50").unwrap();
    assert!((2900.0..4200.0).contains(&delayed), "delayed replica's lag {delayed} ms");
    let prompt = value(1, "replica-lag-p95").unwrap();
    assert!(prompt < 600.0, "semi-synchronous replica's lag {prompt} ms");
    let catch_up = value(0, "catch-up").unwrap();
    assert!((1.0..4.5).contains(&catch_up), "the delayed replica drains its last seconds: {catch_up} s");
    assert!(value(1, "catch-up").unwrap() < 1.0);
    assert!(value(1, "commit-wait").is_some_and(|w| w > 0.0), "semi-synchronous commits waited");
    assert_eq!(value(0, "commit-wait"), None, "no semi-synchronous commits");
    assert!(value(1, "replica-applied").is_some_and(|a| a > 10.0));
    // The replica's own cost: it applies every transaction, so its CPU per transaction is well above 0.
    assert!(value(1, "replica-cpu-per-txn").is_some_and(|c| c > 1.0), "{}", r["replication"]);
    let ratio = &r["ratios"][0];
    assert!(ratio["ratio"].as_f64().is_some_and(|x| x < 0.3), "{ratio}");
    // One run a side: a ratio without an interval (tests/reports.rs has the intervals of repetitions).
    assert!(ratio["note"].as_str().is_some_and(|n| n.contains("one run per side")), "{ratio}");
    // The stored figures say the replicas ended equal to the primary, without faults.
    let (code, out, _) = home.output(&["show", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("replicas: 2, faults 0, their data equal the primary's"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("  catch-up after the load: ")), "{out}");
    let (_, text, _) = home.output(&["compare"]);
    assert!(text.contains("Replicas relative to delayed"), "{text}");
    assert!(common::processes::processes_mentioning(&home.path().display().to_string()).is_empty());
}

/// A topology an experiment cannot run is refused before anything starts, naming the key at fault.
#[test]
fn an_experiments_impossible_topology_is_refused_in_one_line() {
    let home = common::home::Home::new("versus-repl-bad-");
    let body = |repl: &str| {
        format!(
            "name = \"bad\"\n[[targets]]\nname = \"t\"\nbuild = \"system\"\nreplication = {repl}\n[[workloads]]\ntest = \"oltp_read_only\"\n"
        )
    };
    for (repl, wanted) in [
        ("{ replicas = 12 }", "target t: replication.replicas: 12 is too many; give 1 to 9 replicas"),
        ("{ replicas = 1, delay = [1, 2] }", "target t: replication.delay: more delays than replicas"),
        ("{ replicas = 1, replica_set = { port = 1 } }", "target t: replication.replica_set:"),
        ("{ replicas = 1, lag = 3 }", "unknown field `lag`"),
    ] {
        let file = home.file("bad", &body(repl));
        let (code, out, err) = home.output(&["run", file.to_str().unwrap(), "--dry-run"]);
        assert_ne!(code, 0, "{repl}: {out}");
        assert!(err.contains(wanted), "{repl}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let file = home.file(
        "ext",
        "name = \"ext\"\n[[targets]]\nname = \"e\"\naddress = \"127.0.0.1:1\"\nreplication = { replicas = 1 }\n[[workloads]]\ntest = \"oltp_read_only\"\n",
    );
    let (code, _, err) = home.output(&["run", file.to_str().unwrap(), "--dry-run"]);
    assert_ne!(code, 0);
    assert!(err.contains("target e: replication needs a server versus starts"), "{err}");
}

/// A replica killed with -9 during an experiment's run: the run is kept, the replica is restarted,
/// catches up and is checked equal, and the run's figures count it as a fault.
#[test]
fn a_replica_killed_during_an_experiments_run_is_restarted_and_counted() {
    let home = common::home::Home::new("versus-repl-kill-");
    let file = home.file(
        "kill",
        r#"
name = "kill"
threads = [2]
duration = "6s"
prewarm = false

[[targets]]
name = "t"
build = "system"
replication = { replicas = 1 }

[[workloads]]
test = "oltp_write_only"
options = { tables = 1, table-size = 1000 }
"#,
    );
    let child = home
        .versus(&["run", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The replica's sandbox appears when the run starts its servers; kill it while the load runs.
    let replica = home.path().join("experiments/kill/run-r1");
    let until = Instant::now() + Duration::from_secs(120);
    let pid = loop {
        let primary_up = versus::server::sandbox::read_info(&home.path().join("experiments/kill/run")).is_ok();
        if let (true, Ok(info)) = (primary_up, versus::server::sandbox::read_info(&replica))
            && process::is_alive(info.pid)
        {
            break info.pid;
        }
        assert!(Instant::now() < until, "the run's replica never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(3));
    common::processes::kill9(pid);
    let out = child.wait_with_output().unwrap();
    let all = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("warning: server run-r1: the server died") && all.contains("restarting it"), "{all}");
    let (code, show, _) = home.output(&["show", "1"]);
    assert_eq!(code, 0, "{show}");
    assert!(show.contains("replicas: 1, faults 1, their data equal the primary's"), "{show}");
    assert!(!process::is_alive(pid));
    assert!(common::processes::processes_mentioning(&home.path().display().to_string()).is_empty());
}

/// The same on MySQL 9.7: a semi-synchronous replica restored from the primary's data (with a server
/// UUID of its own) replicates by `CHANGE REPLICATION SOURCE`, and the run stores its figures.
#[test]
fn an_experiment_on_mysql_9_7_measures_a_semi_synchronous_replica() {
    let home = common::home::Home::new("versus-repl-my-");
    versus::server::Home::at(home.path()).register(&common::fetched_build("mysql-9.7")).unwrap();
    let file = home.file(
        "my",
        r#"
name = "my"
threads = [2]
duration = "4s"
warmup = "1s"

[[targets]]
name = "semi"
build = "mysql-9.7"
replication = { replicas = 1, semi_sync = true, replica_set = { replica_parallel_workers = 2 } }

[[workloads]]
test = "oltp_write_only"
options = { tables = 1, table-size = 1000 }
"#,
    );
    let (code, out, err) = home.output(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!format!("{out}{err}").contains("warning"), "{out}{err}");
    let (code, show, _) = home.output(&["show", "1"]);
    assert_eq!(code, 0, "{show}");
    assert!(show.contains("replicas: 1, faults 0, their data equal the primary's"), "{show}");
    assert!(show.contains("semi-synchronous commit wait: "), "{show}");
    let store = home.store();
    let run = store.run(1).unwrap().unwrap();
    let figures = run.efficiency.replication.expect("replication figures");
    assert!(figures.lag_p95_ms.is_some_and(|l| l < 1000.0), "{figures:?}");
    assert!(figures.applied_per_s.is_some_and(|a| a > 10.0), "{figures:?}");
    assert!(!run.replica_seconds.is_empty() && run.replica_seconds.iter().all(|s| s.replica == "run-r1"));
    assert!(common::processes::processes_mentioning(&home.path().display().to_string()).is_empty());
}

/// A replica of a newer version than its primary in an experiment: it starts from the primary's data,
/// applies the load and ends equal; an older one is refused on `--dry-run`, naming the key.
#[test]
fn an_experiments_replica_may_run_a_newer_build() {
    let home = common::home::Home::new("versus-repl-newer-");
    versus::server::Home::at(home.path()).register(&common::fetched_build("mariadb-11.8")).unwrap();
    let file = |primary: &str, replica: &str| {
        home.file(
            "newer",
            &format!(
                "name = \"newer\"\nthreads = [2]\nduration = \"3s\"\n[[targets]]\nname = \"up\"\nbuild = \"{primary}\"\n\
                 replication = {{ replicas = 1, build = \"{replica}\" }}\n[[workloads]]\ntest = \"oltp_write_only\"\n\
                 options = {{ tables = 1, table-size = 1000 }}\n"
            ),
        )
    };
    let older = file("mariadb-11.8", "system");
    let (code, _, err) = home.output(&["run", older.to_str().unwrap(), "--dry-run"]);
    assert_ne!(code, 0);
    assert!(err.contains("target up: replication.build: replica build system") && err.contains("is older"), "{err}");
    let newer = file("system", "mariadb-11.8");
    let (code, out, err) = home.output(&["run", newer.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("with 1 replica, asynchronous, replicas on build mariadb-11.8"), "{out}");
    let (code, out, err) = home.output(&["run", newer.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, show, _) = home.output(&["show", "1"]);
    assert_eq!(code, 0, "{show}");
    assert!(show.contains("replicas: 1, faults 0, their data equal the primary's"), "{out}{err}{show}");
    assert!(common::processes::processes_mentioning(&home.path().display().to_string()).is_empty());
}
