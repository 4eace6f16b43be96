//! The results store end to end, on both engines (a SQLite file, and a real PostgreSQL cluster that
//! the test starts and stops): experiments, cells and runs in, the same out; resume; constraints;
//! atomic finish; secrets kept out; copies between engines; concurrent writers.

#[path = "common/disk.rs"]
mod disk;
#[path = "common/experiment.rs"]
mod experiment;
#[path = "common/postgres.rs"]
mod postgres;

use hdrhistogram::Histogram;
use postgres::TempPostgres;
use serde_json::json;
use versus::sampler::{DiskFacts, Efficiency, HostFacts};
use versus::store::{
    AttemptHost, AttemptStatus, BlockStart, Interval, Location, NewCell, NewExperiment, NewRun, RunResult, StartRun,
    Status, Store, StoredHistogram, Summary, decode_histogram, encode_histogram,
};

/// A fresh, empty results store on one engine, with raw SQL access for checks behind the API's back.
trait Fixture {
    fn location(&self) -> Location;
    fn open(&self) -> Store {
        Store::connect(&self.location()).unwrap()
    }
    /// The first column of the first row of `sql`, as text.
    fn scalar(&self, sql: &str) -> String;
    /// Runs `sql`, which must fail; returns the error.
    fn fails(&self, sql: &str) -> String;
}

struct SqliteFile(tempfile::TempDir);

impl SqliteFile {
    fn new() -> SqliteFile {
        SqliteFile(tempfile::tempdir().unwrap())
    }
    fn path(&self) -> std::path::PathBuf {
        self.0.path().join("results.db")
    }
}

impl Fixture for SqliteFile {
    fn location(&self) -> Location {
        Location::Sqlite(self.path())
    }
    fn scalar(&self, sql: &str) -> String {
        let conn = rusqlite::Connection::open(self.path()).unwrap();
        conn.query_row(sql, [], |r| {
            Ok(match r.get_ref(0)? {
                rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
        })
        .unwrap()
    }
    fn fails(&self, sql: &str) -> String {
        rusqlite::Connection::open(self.path()).unwrap().execute(sql, []).unwrap_err().to_string()
    }
}

/// A fresh database in a shared test cluster.
struct PgDatabase<'a> {
    pg: &'a TempPostgres,
    name: String,
    url: String,
}

impl<'a> PgDatabase<'a> {
    fn new(pg: &'a TempPostgres, name: &str) -> PgDatabase<'a> {
        PgDatabase { pg, name: name.to_string(), url: pg.url(name) }
    }
}

impl Fixture for PgDatabase<'_> {
    fn location(&self) -> Location {
        Location::Postgres(self.url.clone())
    }
    fn scalar(&self, sql: &str) -> String {
        self.pg.sql(&self.name, sql)
    }
    fn fails(&self, sql: &str) -> String {
        let out = std::process::Command::new("psql")
            .args(["-X", "-h", "127.0.0.1", "-U", "versus", "-p", &self.pg.port().to_string(), "-d", &self.name])
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{sql} should have failed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

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
            model: Some("SAMSUNG MZQL2960HCJR".into()),
            rotational: Some(false),
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
        status_ends: vec![("Innodb_checkpoint_age".into(), 52_428_800), ("Innodb_buffer_pool_pages_dirty".into(), 17)],
        efficiency: Efficiency {
            server_cpu_user_us: Some(310.5),
            client_cpu_us: Some(42.0),
            innodb_data_fsyncs: Some(0.2),
            replication: Some(versus::sampler::replication::ReplicationFigures {
                replicas: 2.0,
                lag_p95_ms: Some(3402.5),
                catch_up_s: Some(2.9),
                data_equal: Some(1.0),
                cpu_us_per_txn: Some(150.25),
                ..Default::default()
            }),
            ..Efficiency::default()
        },
        replica_seconds: vec![
            versus::store::ReplicaSecond {
                replica: "run-r1".into(),
                t_s: 1.0,
                lag_ms: Some(101.5),
                seconds_behind: Some(0),
                applied_ps: None,
            },
            versus::store::ReplicaSecond {
                replica: "run-r2".into(),
                t_s: 1.0,
                lag_ms: None,
                seconds_behind: None,
                applied_ps: Some(1200.0),
            },
        ],
        profile: Some(versus::profile::Profile {
            event: "cpu-clock".into(),
            hz: 199,
            samples: 3,
            transactions: 6000,
            stacks: vec![
                ("mariadbd;do_command;JOIN::exec".into(), 10_050_251),
                ("mariadbd;[mariadbd]".into(), 5_025_125),
            ],
            note: None,
        }),
        waits: Some(versus::profile::Profile {
            event: "sched:sched_switch".into(),
            hz: 0,
            samples: 2,
            transactions: 6000,
            stacks: vec![("server;[mariadbd];fdatasync;do_fsync_[k]".into(), 4_000_000)],
            note: None,
        }),
    }
}

const VARS: &[(&str, &str)] =
    &[("version", "10.11.19-MariaDB"), ("innodb_buffer_pool_size", "134217728"), ("autocommit", "ON")];

fn experiment_and_runs_round_trip(f: &dyn Fixture) {
    let mut store = f.open();
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

    let store = f.open();
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
    assert_eq!(
        d.status_ends,
        [("Innodb_buffer_pool_pages_dirty".to_string(), 17), ("Innodb_checkpoint_age".to_string(), 52_428_800)]
    );
    assert_eq!(d.efficiency, r.efficiency);
    assert_eq!(d.replica_seconds, r.replica_seconds, "each replica's seconds, NULLs kept");
    assert_eq!(store.profile(run_id).unwrap(), r.profile);
    assert_eq!(store.waits(run_id).unwrap(), r.waits, "the off-CPU profile is kept beside the on-CPU one");
    assert!(store.profile(runs[0].id).unwrap().is_none(), "a run without a profile has one");
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

fn identical_variable_snapshots_are_stored_once(f: &dyn Fixture) {
    let mut store = f.open();
    let id = store.create_experiment(&experiment("dedup")).unwrap();
    let runs = store.runs(id).unwrap();
    let reordered: Vec<(&str, &str)> = VARS.iter().rev().copied().collect();
    let other: Vec<(&str, &str)> = vec![("version", "10.11.19-MariaDB"), ("autocommit", "OFF")];
    for (run, vars) in runs.iter().zip([VARS, &reordered[..], &other[..]]) {
        store.start_run(run.id, &start()).unwrap();
        store.finish_run(run.id, &result(vars)).unwrap();
    }
    drop(store);

    assert_eq!(
        f.scalar("SELECT count(*) FROM variable_sets"),
        "2",
        "the same variables in another order are one snapshot"
    );
    // The run_variables view gives them back as rows.
    let autocommit =
        f.scalar(&format!("SELECT value FROM run_variables WHERE run_id = {} AND name = 'autocommit'", runs[2].id));
    assert_eq!(autocommit, "OFF");
    assert_eq!(f.scalar(&format!("SELECT count(*) FROM run_variables WHERE run_id = {}", runs[0].id)), "3");
}

fn resume_finds_what_is_left_and_restarts_cleanly(f: &dyn Fixture) {
    let mut store = f.open();
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

    let mut store = f.open();
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

fn duplicates_are_refused_and_leave_nothing_behind(f: &dyn Fixture) {
    let mut store = f.open();
    let shown = f.location().to_string();

    let mut dup_run = experiment("dup-run");
    dup_run.runs.push(NewRun { cell: 1, repetition: 2 });
    let err = store.create_experiment(&dup_run).unwrap_err().to_string();
    assert!(err.contains(&shown) && err.contains("dup-run") && err.to_lowercase().contains("unique"), "{err}");

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
    let dup = f.fails(&format!(
        "INSERT INTO runs (experiment_id, cell_id, repetition, order_index) VALUES ({id}, {}, {}, 99)",
        runs[0].cell.id, runs[0].repetition
    ));
    assert!(
        dup.contains("UNIQUE constraint failed: runs.cell_id, runs.repetition")
            || dup.contains("duplicate key value violates unique constraint \"runs_cell_id_repetition_key\""),
        "{dup}"
    );
}

fn finishing_is_all_or_nothing(f: &dyn Fixture) {
    let mut store = f.open();
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
    assert!(
        d.variables.is_empty()
            && d.status_deltas.is_empty()
            && d.status_ends.is_empty()
            && d.efficiency.metrics().is_empty()
            && d.replica_seconds.is_empty()
    );

    store.finish_run(run, &result(VARS)).unwrap();
    let err = store.finish_run(run, &result(VARS)).unwrap_err().to_string();
    assert!(err.contains("done, not running"), "{err}");
    assert!(store.start_run(run, &start()).unwrap_err().to_string().contains("already done"));
    assert!(store.interrupt_run(run, &[]).unwrap_err().to_string().contains("already done"));
    assert!(store.start_run(run + 100, &start()).unwrap_err().to_string().contains("no run with id"));
}

fn latest_experiment_by_name_and_two_handles(f: &dyn Fixture) {
    let mut a = f.open();
    let b = f.open();
    let first = a.create_experiment(&experiment("nightly")).unwrap();
    let second = a.create_experiment(&experiment("nightly")).unwrap();
    a.create_experiment(&experiment("other")).unwrap();
    // The second handle sees the first one's commits (WAL on a shared file; a second connection).
    assert_eq!(b.latest_experiment_named("nightly").unwrap().map(|e| e.id), Some(second));
    assert!(second > first);
    assert!(b.latest_experiment_named("missing").unwrap().is_none());
    let names: Vec<String> = b.list_experiments().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["other", "nightly", "nightly"]);
    assert!(a.set_experiment_status(9999, Status::Done).is_err());
}

/// The scenarios above, each on a fresh store.
/// A named check run against one fresh store.
type Scenario = (&'static str, fn(&dyn Fixture));

const SCENARIOS: &[Scenario] = &[
    ("round_trip", experiment_and_runs_round_trip),
    ("variable_sets", identical_variable_snapshots_are_stored_once),
    ("resume", resume_finds_what_is_left_and_restarts_cleanly),
    ("duplicates", duplicates_are_refused_and_leave_nothing_behind),
    ("atomic_finish", finishing_is_all_or_nothing),
    ("two_handles", latest_experiment_by_name_and_two_handles),
    ("concurrent_writers", concurrent_writers_lose_nothing),
];

#[test]
fn every_scenario_on_sqlite() {
    for (_, scenario) in SCENARIOS {
        scenario(&SqliteFile::new());
    }
}

#[test]
fn every_scenario_on_postgres() {
    let pg = TempPostgres::start();
    for (name, scenario) in SCENARIOS {
        scenario(&PgDatabase::new(&pg, name));
    }
}

fn concurrent_writers_lose_nothing(f: &dyn Fixture) {
    let location = f.location();
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let location = location.clone();
            std::thread::spawn(move || {
                let mut store = Store::connect(&location).unwrap();
                for n in 0..3 {
                    let id = store.create_experiment(&experiment(&format!("w{w}-{n}"))).unwrap();
                    for run in store.runs(id).unwrap() {
                        store.start_run(run.id, &start()).unwrap();
                        store.finish_run(run.id, &result(VARS)).unwrap();
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("a writer failed");
    }
    let store = f.open();
    let list = store.list_experiments().unwrap();
    assert_eq!(list.len(), 9);
    assert!(list.iter().all(|e| e.runs == 4 && e.done == 4), "{list:?}");
    // Identical variable snapshots written at once are still found again (one set, or one per race).
    let sets: i64 = f.scalar("SELECT count(*) FROM variable_sets").parse().unwrap();
    assert!((1..=3).contains(&sets), "{sets}");
}

/// Everything a store holds that a user can see, without row ids (which differ between stores).
fn contents(store: &Store) -> String {
    let mut out = String::new();
    let mut list = store.list_experiments().unwrap();
    list.sort_by_key(|e| e.id);
    for s in list {
        let e = store.experiment(s.id).unwrap().unwrap();
        out += &format!(
            "{} {:?} {} {} {} {:?} {} {:?} {} runs={} done={} failed={}\n",
            e.name,
            e.file,
            e.definition,
            e.definition_hash,
            e.created_at,
            e.status,
            e.seed,
            e.host,
            e.versus_version,
            s.runs,
            s.done,
            s.failed
        );
        for r in store.runs(e.id).unwrap() {
            let mut d = store.run(r.id).unwrap().unwrap();
            let profile = store.profile(r.id).unwrap();
            (d.run.id, d.run.experiment_id, d.run.cell.id) = (0, 0, 0);
            out += &format!("  {d:?}\n  {profile:?}\n");
        }
    }
    out
}

/// Fails with the first line that differs (the contents are long).
fn same(got: &str, expected: &str, what: &str) {
    if got != expected {
        let diff = got.lines().zip(expected.lines()).find(|(g, e)| g != e);
        panic!("{what}: contents differ; first difference (got, expected): {diff:?}");
    }
}

/// A source store: one experiment fully run, one with a failed, a done and two planned runs.
fn fill(store: &mut Store) -> i64 {
    let full = store.create_experiment(&experiment("full")).unwrap();
    for run in store.runs(full).unwrap() {
        store.start_run(run.id, &start()).unwrap();
        store.finish_run(run.id, &result(VARS)).unwrap();
    }
    store.set_experiment_status(full, Status::Done).unwrap();
    let partial = store.create_experiment(&experiment("partial")).unwrap();
    let runs = store.runs(partial).unwrap();
    store.start_run(runs[0].id, &start()).unwrap();
    store.fail_run(runs[0].id, "server died", &[interval(1.0)]).unwrap();
    store.start_run(runs[1].id, &start()).unwrap();
    store.finish_run(runs[1].id, &result(&[("autocommit", "OFF")])).unwrap();
    partial
}

/// A `versus calibrate` result of oltp_read_only at 4 threads.
fn calibration(experiment_id: Option<i64>, band: f64) -> versus::store::Calibration {
    versus::store::Calibration {
        id: 0,
        host_class: "hc-0123456789ab".into(),
        host: "2 CPUs".into(),
        workload: "oltp_read_only".into(),
        threads: 4,
        metric: "tps".into(),
        repetitions: 5,
        cv: band / 2.0,
        band,
        confidence: 0.95,
        experiment_id,
        target: "system".into(),
        created_at: 0,
    }
}

#[test]
fn copies_between_sqlite_and_postgres_are_identical_and_idempotent() {
    let pg = TempPostgres::start();
    let (a, b, c) = (SqliteFile::new(), PgDatabase::new(&pg, "team"), SqliteFile::new());
    let mut source = a.open();
    let partial = fill(&mut source);
    // A calibration of the A/A experiment "partial", and one whose experiment is not stored here.
    source.save_calibration(&calibration(Some(partial), 0.041)).unwrap();
    source.save_calibration(&calibration(None, 0.063)).unwrap();
    let mut team = b.open();

    let r = source.copy_into(&mut team).unwrap();
    assert_eq!((r.experiments_added, r.experiments_present, r.runs_copied, r.runs_unchanged), (2, 0, 8, 0));
    assert_eq!((r.calibrations_copied, r.calibrations_present), (2, 0));
    let mut back = c.open();
    let r = team.copy_into(&mut back).unwrap();
    assert_eq!((r.calibrations_copied, r.calibrations_present), (2, 0));
    let cals = |s: &Store| -> Vec<(String, f64, i64, Option<String>)> {
        let mut v: Vec<_> = s
            .calibrations(None)
            .unwrap()
            .into_iter()
            .map(|c| {
                let from = c.experiment_id.map(|id| s.experiment(id).unwrap().unwrap().name);
                (c.workload, c.band, c.created_at, from)
            })
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        v
    };
    let expected_cals = cals(&source);
    assert_eq!(expected_cals[0].3.as_deref(), Some("partial"), "{expected_cals:?}");
    assert_eq!(cals(&team), expected_cals, "calibrations SQLite -> PostgreSQL, pointing at the copied experiment");
    assert_eq!(cals(&back), expected_cals, "calibrations PostgreSQL -> SQLite");
    assert_eq!(
        back.calibration_for("hc-0123456789ab", "oltp_read_only", 4, "tps").unwrap().map(|c| c.band),
        Some(0.063),
        "the copied calibrations are the ones in use"
    );
    let expected = contents(&source);
    assert!(expected.contains("partial") && expected.contains("server died"), "{expected}");
    same(&contents(&team), &expected, "SQLite -> PostgreSQL");
    same(&contents(&back), &expected, "PostgreSQL -> SQLite");

    // Copying again adds nothing.
    let r = source.copy_into(&mut team).unwrap();
    assert_eq!((r.experiments_added, r.experiments_present, r.runs_copied, r.runs_unchanged), (0, 2, 0, 8));
    assert_eq!((r.calibrations_copied, r.calibrations_present), (0, 2));
    assert_eq!(cals(&team), expected_cals, "calibrations copied twice");
    same(&contents(&team), &expected, "copied twice");

    // A run finished later in the source completes the same run in the destination, and only that one.
    let left = source.pending_runs(partial).unwrap();
    for run in &left {
        source.start_run(run.id, &start()).unwrap();
        source.finish_run(run.id, &result(VARS)).unwrap();
    }
    source.set_experiment_status(partial, Status::Done).unwrap();
    let r = source.copy_into(&mut team).unwrap();
    assert_eq!((r.runs_copied, r.runs_unchanged), (2, 6));
    same(&contents(&team), &contents(&source), "merged");
    assert_eq!(b.scalar("SELECT count(*) FROM runs WHERE status = 'done'"), "7");
}

/// (block, attempt, status, host) of every attempt of the experiment with `uid`.
fn attempts_of(store: &Store, uid: &str) -> Vec<(u32, u32, AttemptStatus, Option<String>)> {
    let id = store.experiment_by_uid(uid).unwrap().expect("the experiment was copied");
    store.block_attempts(id).unwrap().into_iter().map(|a| (a.block, a.attempt, a.status, a.host)).collect()
}

#[test]
fn block_attempts_are_copied_and_per_task_files_merge_into_one_attempt_history() {
    let pg = TempPostgres::start();
    let (a, b, back) = (SqliteFile::new(), SqliteFile::new(), SqliteFile::new());
    let t = PgDatabase::new(&pg, "merged");
    let uid = "p-0123456789abcdef";
    let e = experiment("fleet");
    let on = |name: &str| AttemptHost {
        host: Some(name.into()),
        class: Some("hc-000000000001".into()),
        fingerprint: json!({ "cpu_model": "Example CPU" }),
        canary: Some(json!({ "cpu_loop_ms": 12.5, "fsync_us": 800.0 })),
    };
    let measure = |store: &mut Store, experiment: i64, repetition: u32| {
        for r in store.runs(experiment).unwrap().iter().filter(|r| r.repetition == repetition) {
            store.start_run(r.id, &start()).unwrap();
            store.finish_run(r.id, &result(VARS)).unwrap();
        }
    };
    // Task files of two hosts. Host a: block 0 to the end.
    let mut sa = a.open();
    let ea = sa.ensure_experiment(&e, uid).unwrap();
    let BlockStart::Started { attempt_id, .. } = sa.begin_block(ea, 0, &on("a")).unwrap() else { panic!("new block") };
    measure(&mut sa, ea, 1);
    assert!(sa.end_block(attempt_id, None).unwrap());
    // Host b: block 0 as well, killed half way (its attempt left running), then block 1 to the end.
    let mut sb = b.open();
    let eb = sb.ensure_experiment(&e, uid).unwrap();
    sb.begin_block(eb, 0, &on("b")).unwrap();
    let BlockStart::Started { attempt_id, .. } = sb.begin_block(eb, 1, &on("b")).unwrap() else { panic!("new block") };
    measure(&mut sb, eb, 2);
    assert!(sb.end_block(attempt_id, None).unwrap());

    let mut team = t.open();
    sa.copy_into(&mut team).unwrap();
    let r = sb.copy_into(&mut team).unwrap();
    assert_eq!((r.experiments_present, r.runs_copied, r.runs_unchanged), (1, 2, 2));
    let expected = vec![
        (0, 1, AttemptStatus::Done, Some("a".to_string())),
        (0, 2, AttemptStatus::Running, Some("b".to_string())),
        (1, 1, AttemptStatus::Done, Some("b".to_string())),
    ];
    assert_eq!(attempts_of(&team, uid), expected, "b's attempt at block 0 comes after a's");
    // Every run points at the done attempt of its block, on the host that measured it.
    let linked = "SELECT count(*) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id \
                  WHERE r.status = 'done' AND a.status = 'done' AND a.block = r.repetition - 1";
    assert_eq!(t.scalar(linked), "4");
    assert_eq!(
        t.scalar("SELECT string_agg(DISTINCT a.host, ' ' ORDER BY a.host) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id"),
        "a b"
    );
    assert_eq!(
        t.scalar("SELECT canary FROM block_attempts WHERE host = 'a'"),
        r#"{"cpu_loop_ms":12.5,"fsync_us":800.0}"#
    );

    // Merging again adds nothing.
    sa.copy_into(&mut team).unwrap();
    let r = sb.copy_into(&mut team).unwrap();
    assert_eq!((r.runs_copied, r.runs_unchanged), (0, 4));
    assert_eq!(attempts_of(&team, uid), expected);

    // The team store back into a SQLite file: the same attempts and links.
    let mut copy = back.open();
    team.copy_into(&mut copy).unwrap();
    assert_eq!(attempts_of(&copy, uid), expected);
    assert_eq!(back.scalar(linked), "4");
    same(&contents(&copy), &contents(&team), "PostgreSQL -> SQLite");
}

#[path = "store/commands.rs"]
mod commands;

#[test]
fn two_full_stores_of_the_same_name_keep_both_measured_runs() {
    // Every default store is `results.db`, and a store's first experiment and run have the same ids
    // everywhere: two full disks at once fail over to the same temporary directory.
    let t = tempfile::tempdir().unwrap();
    let disks: Vec<disk::SmallDisk> =
        (0..2).map(|i| disk::SmallDisk::mount(&t.path().join(format!("disk{i}")), "2m")).collect();
    let barrier = std::sync::Barrier::new(2);
    let saved: Vec<(std::path::PathBuf, Location, f64)> = std::thread::scope(|s| {
        let workers: Vec<_> = disks
            .iter()
            .enumerate()
            .map(|(i, disk)| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut store = Store::open(disk.dir.join("results.db")).unwrap();
                    let id = store.create_experiment(&experiment("full")).unwrap();
                    let run = store.runs(id).unwrap()[0].id;
                    store.start_run(run, &start()).unwrap();
                    disk.fill("filler");
                    let mut measured = result(&[]);
                    measured.summary.tps = 100.0 + i as f64;
                    barrier.wait();
                    let error = versus::error::Error::Other("no space left on device".into());
                    let path = store.save_recovery(id, run, &measured, &error).unwrap();
                    (path, store.location().clone(), measured.summary.tps)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_ne!(saved[0].0, saved[1].0, "both went to the same file");
    for (path, location, tps) in &saved {
        assert!(path.starts_with(std::env::temp_dir()), "the full disk took it: {}", path.display());
        let r = versus::store::recovery::load(path).unwrap();
        assert_eq!((r.store.as_str(), r.result.summary.tps), (location.to_string().as_str(), *tps));
    }
    for (path, ..) in &saved {
        std::fs::remove_file(path).unwrap();
    }
}

/// Another program's SQLite file given as the store (`versus runs --db OTHER_APP.db`, a write to it)
/// is refused with one line, and left exactly as it was: not turned to WAL mode, no `-wal` or `-shm`
/// file beside it, not one byte changed.
#[test]
fn a_foreign_sqlite_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other_app.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');",
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let listing = |d: &std::path::Path| {
        let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    let files = listing(dir.path());
    let err = Store::open(&path).unwrap_err().to_string();
    assert!(err.contains("not a versus results store"), "{err}");
    let err = Store::connect_read(&Location::Sqlite(path.clone())).unwrap_err().to_string();
    assert!(err.contains("not a versus results store"), "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["--home", &dir.path().join("home").to_string_lossy(), "runs", "--db", &path.to_string_lossy()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("versus: error: ") && stderr.contains("other_app.db"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the foreign file was changed");
    let mut after = listing(dir.path());
    after.retain(|n| n != "home");
    assert_eq!(after, files, "files appeared beside the foreign file");

    // Another program that sets a schema version of its own: not migrated, refused, unchanged.
    let versioned = dir.path().join("versioned.db");
    rusqlite::Connection::open(&versioned)
        .unwrap()
        .execute_batch("PRAGMA journal_mode = DELETE; PRAGMA user_version = 2; CREATE TABLE experiments (x);")
        .unwrap();
    let before = std::fs::read(&versioned).unwrap();
    let err = Store::open(&versioned).unwrap_err().to_string();
    assert!(err.contains("not a versus results store"), "{err}");
    assert_eq!(std::fs::read(&versioned).unwrap(), before, "the versioned foreign file was changed");

    // Not SQLite at all: refused the same way, unchanged.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database\n").unwrap();
    let err = Store::open(&text).unwrap_err().to_string();
    assert!(err.contains("not a versus results store"), "{err}");
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "not a database\n");
}
