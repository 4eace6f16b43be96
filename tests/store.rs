//! The results store end to end: experiments, cells and runs in, the same out; resume; constraints;
//! atomic finish; secrets kept out.

use hdrhistogram::Histogram;
use serde_json::json;
use versus::sampler::{DiskFacts, Efficiency, HostFacts};
use versus::store::{
    Interval, NewCell, NewExperiment, NewRun, RunResult, StartRun, Status, Store, StoredHistogram, Summary,
    decode_histogram, encode_histogram,
};

const DEFINITION: &str = "name = \"mariadb-vs-mysql\"\nbuilds = [\"a\", \"b\"]\nthreads = [1, 8]\n\
                          repetitions = 2\n[[targets]]\nlabel = \"ext\"\npassword = \"hunter2\"\n";

fn host() -> HostFacts {
    HostFacts {
        hostname: Some("bench1".into()),
        cpu_model: Some("AMD EPYC".into()),
        logical_cpus: Some(2),
        physical_cores: Some(1),
        memory_bytes: Some(24 << 30),
        kernel: Some("6.18.44".into()),
        os: Some("Debian GNU/Linux 12 (bookworm)".into()),
        datadir: Some(DiskFacts {
            path: "/data/sb".into(),
            mount_point: "/data".into(),
            fs_type: "xfs".into(),
            device: "/dev/nvme0n1".into(),
            options: "rw,noatime".into(),
        }),
    }
}

fn cell(key: &str, threads: u32) -> NewCell {
    NewCell {
        key: key.into(),
        target: "a/default".into(),
        build: Some("a".into()),
        config: Some("default".into()),
        workload: "oltp_read_write".into(),
        threads,
        workload_options: json!({"tables": 4, "table_size": 10000, "mysql-password": "hunter2"}),
    }
}

/// Two cells × two repetitions, interleaved: A1 B1 A2 B2.
fn experiment(name: &str) -> NewExperiment {
    NewExperiment {
        name: name.into(),
        file: Some("exp/compare.toml".into()),
        definition: DEFINITION.into(),
        seed: u64::MAX - 7,
        host: host(),
        cells: vec![cell("t=a;w=rw;threads=1", 1), cell("t=a;w=rw;threads=8", 8)],
        runs: vec![
            NewRun { cell: 0, repetition: 1 },
            NewRun { cell: 1, repetition: 1 },
            NewRun { cell: 0, repetition: 2 },
            NewRun { cell: 1, repetition: 2 },
        ],
    }
}

fn start() -> StartRun {
    StartRun {
        server_version: "10.11.19-MariaDB".into(),
        command: json!({"args": ["versus", "run", "--mysql-password=hunter2", "--threads=8"], "password": "hunter2"}),
    }
}

fn interval(t: f64) -> Interval {
    Interval {
        t_s: t,
        threads: Some(8),
        tps: 100.0 + t,
        qps: 2000.0 + t,
        reads_ps: 1400.0,
        writes_ps: 400.0,
        other_ps: 200.0,
        latency_p95_us: Some(12_000.0),
        latency_p99_us: Some(20_000.5),
        latency_max_us: None,
        errors_ps: 0.5,
        reconnects_ps: 0.0,
    }
}

fn histogram(values: &[u64]) -> Vec<u8> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for v in values {
        h.record(*v).unwrap();
    }
    encode_histogram(&h).unwrap()
}

fn result(variables: &[(&str, &str)]) -> RunResult {
    RunResult {
        summary: Summary {
            events: 6000,
            queries: 120_000,
            reads: 84_000,
            writes: 24_000,
            other: 12_000,
            errors: 3,
            reconnects: 0,
            tps: 100.0,
            qps: 2000.0,
            latency_min_us: 1500.0,
            latency_avg_us: 9950.25,
            latency_max_us: 80_000.0,
            latency_p95_us: 12_000.0,
            latency_p99_us: 20_000.0,
            latency_sum_us: 59_701_500.0,
            duration_s: 60.0,
            fairness_events_avg: Some(750.0),
            fairness_events_stddev: Some(4.5),
            fairness_time_avg_s: Some(59.9),
            fairness_time_stddev_s: None,
        },
        intervals: vec![interval(1.0), interval(2.0), interval(3.0)],
        histograms: vec![
            StoredHistogram { kind: "interval".into(), t_s: Some(1.0), data: histogram(&[900, 1200]) },
            StoredHistogram { kind: "total".into(), t_s: None, data: histogram(&[900, 1200, 1500, 80_000]) },
            StoredHistogram { kind: "interval".into(), t_s: Some(2.0), data: histogram(&[1500, 80_000]) },
        ],
        variables: variables.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        status_deltas: vec![("Innodb_data_fsyncs".into(), 1200), ("Com_select".into(), 84_000), ("X".into(), -2)],
        efficiency: Efficiency {
            server_cpu_user_us: Some(310.5),
            client_cpu_us: Some(42.0),
            innodb_data_fsyncs: Some(0.2),
            ..Efficiency::default()
        },
    }
}

const VARS: &[(&str, &str)] =
    &[("version", "10.11.19-MariaDB"), ("innodb_buffer_pool_size", "134217728"), ("autocommit", "ON")];

#[test]
fn experiment_and_runs_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_experiment(&experiment("cmp")).unwrap();

    let e = store.experiment(id).unwrap().unwrap();
    assert_eq!(e.name, "cmp");
    assert_eq!(e.file.as_deref(), Some("exp/compare.toml"));
    assert_eq!(e.status, Status::Planned);
    assert_eq!(e.seed, u64::MAX - 7);
    assert_eq!(e.host, host());
    assert!(!e.definition.contains("hunter2"), "{}", e.definition);
    assert!(e.definition.starts_with("name = \"mariadb-vs-mysql\"\nbuilds = [\"a\", \"b\"]\n"));
    assert_eq!(e.definition_hash, versus::store::content_hash(&e.definition));
    assert!(e.created_at > 1_700_000_000);

    let runs = store.runs(id).unwrap();
    let order: Vec<(u32, u32, u32)> = runs.iter().map(|r| (r.order_index, r.cell.threads, r.repetition)).collect();
    assert_eq!(order, [(0, 1, 1), (1, 8, 1), (2, 1, 2), (3, 8, 2)]);
    assert!(runs.iter().all(|r| r.status == Status::Planned && r.summary.is_none() && r.experiment_id == id));
    let c = &runs[1].cell;
    assert_eq!(
        (c.key.as_str(), c.build.as_deref(), c.config.as_deref()),
        ("t=a;w=rw;threads=8", Some("a"), Some("default"))
    );
    assert_eq!(c.workload_options["table_size"], 10000);
    assert_eq!(c.workload_options["mysql-password"], versus::store::REDACTED);
    assert_eq!(runs[0].cell.id, runs[2].cell.id);

    // Run it: start, finish with everything, reload.
    let run_id = runs[1].id;
    store.start_run(run_id, &start()).unwrap();
    store.set_experiment_status(id, Status::Running).unwrap();
    let r = result(VARS);
    store.finish_run(run_id, &r).unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    let d = store.run(run_id).unwrap().unwrap();
    assert_eq!(d.run.status, Status::Done);
    assert_eq!(d.run.server_version.as_deref(), Some("10.11.19-MariaDB"));
    assert!(d.run.started_at.is_some() && d.run.finished_at >= d.run.started_at);
    assert_eq!(d.run.summary.as_ref(), Some(&r.summary));
    assert_eq!(d.intervals, r.intervals);
    // Whole-run histogram first, then by time.
    let kinds: Vec<(&str, Option<f64>)> = d.histograms.iter().map(|h| (h.kind.as_str(), h.t_s)).collect();
    assert_eq!(kinds, [("total", None), ("interval", Some(1.0)), ("interval", Some(2.0))]);
    let total = decode_histogram(&d.histograms[0].data).unwrap();
    assert_eq!(total.len(), 4);
    assert!(total.max() >= 80_000 && total.max() < 80_100);
    let mut vars = r.variables.clone();
    vars.sort();
    assert_eq!(d.variables, vars);
    assert_eq!(
        d.status_deltas,
        [("Com_select".to_string(), 84_000), ("Innodb_data_fsyncs".to_string(), 1200), ("X".to_string(), -2)]
    );
    assert_eq!(d.efficiency, r.efficiency);
    let command = d.command.unwrap();
    assert!(!command.to_string().contains("hunter2"), "{command}");
    assert_eq!(command["args"][3], "--threads=8");

    let list = store.list_experiments().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].id, list[0].runs, list[0].done, list[0].failed), (id, 4, 1, 0));
    assert_eq!(list[0].status, Status::Running);
    assert!(store.run(run_id + 1000).unwrap().is_none());
    assert!(store.experiment(id + 1000).unwrap().is_none());
}

#[test]
fn identical_variable_snapshots_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_experiment(&experiment("dedup")).unwrap();
    let runs = store.runs(id).unwrap();
    let reordered: Vec<(&str, &str)> = VARS.iter().rev().copied().collect();
    let other: Vec<(&str, &str)> = vec![("version", "10.11.19-MariaDB"), ("autocommit", "OFF")];
    for (run, vars) in runs.iter().zip([VARS, &reordered[..], &other[..]]) {
        store.start_run(run.id, &start()).unwrap();
        store.finish_run(run.id, &result(vars)).unwrap();
    }
    drop(store);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let sets: i64 = conn.query_row("SELECT count(*) FROM variable_sets", [], |r| r.get(0)).unwrap();
    assert_eq!(sets, 2, "the same variables in another order are the same snapshot");
    // The run_variables view gives them back as rows.
    let autocommit: String = conn
        .query_row("SELECT value FROM run_variables WHERE run_id = ?1 AND name = 'autocommit'", [runs[2].id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(autocommit, "OFF");
    let n: i64 =
        conn.query_row("SELECT count(*) FROM run_variables WHERE run_id = ?1", [runs[0].id], |r| r.get(0)).unwrap();
    assert_eq!(n, 3);
}

#[test]
fn resume_finds_what_is_left_and_restarts_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_experiment(&experiment("resume")).unwrap();
    let runs = store.runs(id).unwrap();

    store.start_run(runs[0].id, &start()).unwrap();
    store.finish_run(runs[0].id, &result(VARS)).unwrap();
    store.start_run(runs[1].id, &start()).unwrap();
    store.fail_run(runs[1].id, "server died: signal 9", &[interval(1.0)]).unwrap();
    store.start_run(runs[2].id, &start()).unwrap();
    store.interrupt_run(runs[2].id, &[interval(1.0), interval(2.0)]).unwrap();
    // Run 3 is left "running": the process died without a word.
    store.start_run(runs[3].id, &start()).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let pending: Vec<(i64, Status)> = store.pending_runs(id).unwrap().iter().map(|r| (r.id, r.status)).collect();
    assert_eq!(pending, [(runs[2].id, Status::Interrupted), (runs[3].id, Status::Running)]);

    let failed = store.run(runs[1].id).unwrap().unwrap();
    assert_eq!(failed.run.status, Status::Failed);
    assert_eq!(failed.run.error.as_deref(), Some("server died: signal 9"));
    assert_eq!(failed.intervals.len(), 1);
    assert!(failed.run.summary.is_none());
    let interrupted = store.run(runs[2].id).unwrap().unwrap();
    assert_eq!(interrupted.intervals.len(), 2);

    // Restarting the interrupted run drops its partial data; finishing it stores only the new data.
    store.start_run(runs[2].id, &start()).unwrap();
    assert!(store.run(runs[2].id).unwrap().unwrap().intervals.is_empty());
    let mut r = result(VARS);
    r.intervals = vec![interval(5.0)];
    store.finish_run(runs[2].id, &r).unwrap();
    assert_eq!(store.run(runs[2].id).unwrap().unwrap().intervals, [interval(5.0)]);

    let pending: Vec<i64> = store.pending_runs(id).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(pending, [runs[3].id]);
    let list = store.list_experiments().unwrap();
    assert_eq!((list[0].done, list[0].failed), (2, 1));
}

#[test]
fn duplicates_are_refused_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();

    let mut dup_run = experiment("dup-run");
    dup_run.runs.push(NewRun { cell: 1, repetition: 2 });
    let err = store.create_experiment(&dup_run).unwrap_err().to_string();
    assert!(err.contains("results.db") && err.contains("dup-run") && err.contains("UNIQUE"), "{err}");

    let mut dup_cell = experiment("dup-cell");
    dup_cell.cells[1].key = dup_cell.cells[0].key.clone();
    assert!(store.create_experiment(&dup_cell).is_err());

    let mut bad_index = experiment("bad-index");
    bad_index.runs.push(NewRun { cell: 9, repetition: 1 });
    let err = store.create_experiment(&bad_index).unwrap_err().to_string();
    assert!(err.contains("cell 9"), "{err}");

    assert!(store.list_experiments().unwrap().is_empty(), "failed creations must store nothing");

    // The schema itself refuses a second run of the same cell and repetition.
    let id = store.create_experiment(&experiment("ok")).unwrap();
    let runs = store.runs(id).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let dup = conn.execute(
        "INSERT INTO runs (experiment_id, cell_id, repetition, order_index) VALUES (?1, ?2, ?3, 99)",
        [id, runs[0].cell.id, i64::from(runs[0].repetition)],
    );
    assert!(dup.unwrap_err().to_string().contains("UNIQUE constraint failed: runs.cell_id, runs.repetition"));
}

#[test]
fn finishing_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let id = store.create_experiment(&experiment("atomic")).unwrap();
    let run = store.runs(id).unwrap()[0].id;

    // Not started yet.
    let err = store.finish_run(run, &result(VARS)).unwrap_err().to_string();
    assert!(err.contains("planned, not running"), "{err}");

    store.start_run(run, &start()).unwrap();
    let mut bad = result(VARS);
    bad.intervals.push(interval(2.0)); // two intervals at t = 2 s violate the primary key
    assert!(store.finish_run(run, &bad).is_err());
    let d = store.run(run).unwrap().unwrap();
    assert_eq!(d.run.status, Status::Running);
    assert!(d.run.summary.is_none() && d.intervals.is_empty() && d.histograms.is_empty());
    assert!(d.variables.is_empty() && d.status_deltas.is_empty() && d.efficiency.metrics().is_empty());

    store.finish_run(run, &result(VARS)).unwrap();
    let err = store.finish_run(run, &result(VARS)).unwrap_err().to_string();
    assert!(err.contains("done, not running"), "{err}");
    assert!(store.start_run(run, &start()).unwrap_err().to_string().contains("already done"));
    assert!(store.interrupt_run(run, &[]).unwrap_err().to_string().contains("already done"));
    assert!(store.start_run(run + 100, &start()).unwrap_err().to_string().contains("no run with id"));
}

#[test]
fn latest_experiment_by_name_and_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut a = Store::open(&path).unwrap();
    let b = Store::open(&path).unwrap();
    let first = a.create_experiment(&experiment("nightly")).unwrap();
    let second = a.create_experiment(&experiment("nightly")).unwrap();
    a.create_experiment(&experiment("other")).unwrap();
    // The second handle sees the first one's commits (WAL, shared file).
    assert_eq!(b.latest_experiment_named("nightly").unwrap().map(|e| e.id), Some(second));
    assert!(second > first);
    assert!(b.latest_experiment_named("missing").unwrap().is_none());
    let names: Vec<String> = b.list_experiments().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["other", "nightly", "nightly"]);
    assert!(a.set_experiment_status(9999, Status::Done).is_err());
}
