//! The Insert Benchmark against real sandboxed servers: every step on two versions with the Small Datum
//! tables, constant table size through the delete-per-insert steps, the target insert rate, an SLA
//! failure, Ctrl-C, a server that dies mid-step, the command line's errors, and an experiment whose
//! steps `versus compare` shows.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use versus::driver::Driver;
use versus::driver::mysql::MysqlDriver;
use versus::server::Sandbox;
use versus::workload::ibench::compare::{self, Colour, SideInput};
use versus::workload::ibench::{self, IbenchResult, NoProbe, Options, Quiet, ServerProbe, Step, StepStatus};

/// The tests that run servers take turns: a measurement beside another one on a small machine would
/// miss its insert-rate target for reasons that are not the server's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

const OVERRIDES: &[&str] =
    &["innodb_buffer_pool_size=256M", "innodb_flush_log_at_trx_commit=2", "innodb_log_file_size=256M"];

fn driver(sb: &Sandbox) -> Arc<dyn Driver> {
    Arc::new(MysqlDriver::new(versus::workload::ibench::experiment::sandbox_connect_options(sb.info())))
}

/// The sandbox's process for the efficiency figures.
struct Pid(u32);
impl ServerProbe for Pid {
    fn server_pid(&mut self) -> Option<u32> {
        Some(self.0)
    }
}

fn small() -> Options {
    Options {
        rows_load: 200_000,
        rows_write1: 40_000,
        rows_write2: 4_000,
        query_seconds: 4,
        rates: vec![100, 1000],
        cleanup_seconds: Some(1),
        count_rows: true,
        ..Options::default()
    }
}

/// Prints the interval lines (the test harness shows them when a test fails).
struct Lines;
impl ibench::StepObserver for Lines {
    fn step_started(&mut self, step: Step) {
        println!("{}", ibench::report::interval_header(step));
    }
    fn interval(&mut self, _: Step, l: &ibench::IntervalLine) {
        println!("{}", ibench::report::interval_text(l));
    }
}

fn run_all(sb: &Sandbox, label: &str) -> IbenchResult {
    let stop = Arc::new(AtomicBool::new(false));
    println!("{label}:");
    ibench::run(&small(), driver(sb), &mut Pid(sb.pid()), &mut Lines, stop, Some(label)).expect("ibench runs")
}

#[test]
fn every_step_on_two_versions_gives_the_small_datum_tables() {
    let _turn = turn();
    let a = common::start(common::system_build(), OVERRIDES);
    let b = common::start(common::fetched_build("mariadb-11.8"), OVERRIDES);
    let ra = run_all(&a, "10.11");
    let rb = run_all(&b, "11.8");
    for r in [&ra, &rb] {
        let names: Vec<String> = r.steps.iter().map(|s| s.step.name()).collect();
        assert_eq!(
            names,
            ["l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr1000", "qp1000"],
            "{}",
            r.label
        );
        for s in &r.steps {
            assert_eq!(s.status, StepStatus::Done, "{} {}: {:?}", r.label, s.step, s.error);
        }
        let rows = |step: Step| r.step(step).and_then(|s| s.rows_after);
        assert_eq!(rows(Step::Load), Some(200_000));
        assert_eq!(rows(Step::Index), Some(200_100));
        for step in [Step::Write1, Step::Write2] {
            assert_eq!(rows(step), Some(200_100), "{}: deletes keep the table size in {step}", r.label);
            let s = r.step(step).unwrap();
            assert_eq!(s.inserted_rows, s.deleted_rows);
        }
        let lx = r.step(Step::Index).unwrap();
        assert_eq!(lx.indexed_rows, Some(200_100));
        for s in r.steps.iter().filter(|s| s.step.is_query()) {
            assert_eq!(s.rows_after, Some(200_100), "{} {}", r.label, s.step);
            let sla = s.sla.unwrap();
            assert!(sla.passed, "{} {}: {sla:?}", r.label, s.step);
            assert!(
                (sla.ratio - 1.0).abs() <= 0.05,
                "{} {}: insert rate {sla:?} not within 5 % of the target",
                r.label,
                s.step
            );
            let f = s.fetched.unwrap();
            assert!(f.fetched_per_query > 9.0 && f.expected_per_query == 10.0, "{} {}: {f:?}", r.label, s.step);
            assert!(s.queries > 0 && s.efficiency.server_cpu_us_per_op.is_some_and(|c| c > 0.0));
            assert!(s.efficiency.write_kb_per_insert.is_some());
        }
        let load = r.step(Step::Load).unwrap();
        assert!(load.efficiency.client_cpu_us_per_row.is_some_and(|c| c > 0.0));
        assert!(load.efficiency.server_rss_max_bytes.is_some_and(|b| b > 10 << 20));
        assert!(load.latency.iter().any(|l| l.buckets.iter().sum::<u64>() == l.count));
    }

    let text = ibench::report::run_text(&ra, false);
    assert!(text.contains("SLA passed") && text.contains("queries hit live rows"), "{text}");
    // The benchmark account has no SUPER: the cleanup cannot change the flush settings, and says so
    // instead of "done".
    let cleanup = ra.step(Step::Cleanup).unwrap();
    assert!(cleanup.fell_short(), "{:?}", cleanup.notes);
    assert!(text.contains("partly done") && text.contains("SYSTEM_VARIABLES_ADMIN or SUPER"), "{text}");

    let t = compare::build(&[SideInput::of(&ra), SideInput::of(&rb)]);
    assert_eq!(t.sides, ["10.11", "11.8"]);
    assert_eq!(t.steps.len(), 8, "every step but the cleanup");
    assert!(t.cells[0].iter().all(|c| c.relative == Some(1.0)));
    assert!(t.cells[1].iter().all(|c| c.relative.is_some_and(|r| r > 0.0)));
    assert_eq!(t.targets.iter().flatten().count(), 4);
    let table = ibench::report::comparison_text(&t, false);
    for want in
        ["Throughput (operations/s", "Relative to 10.11", "Insert rate achieved", "qp1000: efficiency per query"]
    {
        assert!(table.contains(want), "missing {want}:\n{table}");
    }

    // A rate far above what the server can do is an SLA failure, not an error.
    let stop = Arc::new(AtomicBool::new(false));
    let hot = Step::Query { point: false, rate: 2_000_000 };
    let o = Options { query_seconds: 2, rates: vec![2_000_000], steps: vec![hot], ..small() };
    let rh = ibench::run(&o, driver(&a), &mut NoProbe, &mut Quiet, stop, Some("10.11 hot")).unwrap();
    let s = &rh.steps[0];
    assert_eq!(s.status, StepStatus::Done);
    assert!(s.sla_failed(), "{:?}", s.sla);
    assert!(s.seconds < 6.0, "the time cap ends it: {}", s.seconds);
    assert!(ibench::report::run_text(&rh, false).contains("SLA FAILED"));
    let t = compare::build(&[SideInput::of(&ra), SideInput::of(&rh)]);
    let j = t.steps.iter().position(|x| *x == hot).unwrap();
    assert_eq!((t.cells[1][j].colour, t.cells[1][j].achieved_colour), (Colour::Gray, Colour::Red));
}

/// More connections than the server's max_connections are refused before any step runs: 20 clients
/// open 60 connections in a query step, 20 in the load.
#[test]
fn clients_above_max_connections_are_refused_before_any_step() {
    let _turn = turn();
    let sb = common::start(common::system_build(), &[OVERRIDES, &["max_connections=50"]].concat());
    let stop = Arc::new(AtomicBool::new(false));
    let o = Options { clients: 20, steps: vec![Step::Load, Step::Query { point: false, rate: 100 }], ..small() };
    let e = ibench::run(&o, driver(&sb), &mut NoProbe, &mut Quiet, stop.clone(), None).unwrap_err().to_string();
    assert_eq!(
        e,
        "--clients: 20 clients open 60 connections at once in these steps, more than the server allows (max_connections = 50); use at most 16 clients, or raise max_connections"
    );
    let o = Options { clients: 20, steps: vec![Step::Load], rows_load: 2_000, ..small() };
    let r = ibench::run(&o, driver(&sb), &mut NoProbe, &mut Quiet, stop, None).unwrap();
    assert_eq!(r.steps[0].status, StepStatus::Done, "20 connections fit under 50");
}

#[test]
fn ctrl_c_and_a_dying_server_keep_what_was_measured() {
    let _turn = turn();
    let mut sb = common::start(common::system_build(), OVERRIDES);
    let o = Options { rows_load: 20_000_000, steps: vec![Step::Load, Step::Index], ..small() };

    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        flag.store(true, Ordering::SeqCst);
    });
    let r = ibench::run(&o, driver(&sb), &mut NoProbe, &mut Quiet, stop, None).unwrap();
    t.join().unwrap();
    assert!(r.interrupted);
    let s = &r.steps[0];
    assert_eq!(s.status, StepStatus::Interrupted);
    assert!(s.inserted_rows > 0 && s.seconds < 10.0, "{} rows in {} s", s.inserted_rows, s.seconds);
    assert_eq!(r.skipped[0].reason, "skipped: interrupted during l.i0");

    let pid = sb.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL);
    });
    let stop = Arc::new(AtomicBool::new(false));
    let r = ibench::run(&o, driver(&sb), &mut Pid(pid), &mut Quiet, stop, None).unwrap();
    killer.join().unwrap();
    let s = &r.steps[0];
    assert_eq!(s.status, StepStatus::Failed);
    assert!(s.inserted_rows > 0, "the rows inserted before the server died are kept");
    let e = s.error.as_deref().unwrap_or_default();
    assert!(e.contains("lost the connection") && !e.contains('\n'), "{e}");
    assert!(r.skipped[0].reason.starts_with("skipped: l.i0 failed:"), "{:?}", r.skipped);
    assert!(ibench::report::run_text(&r, false).contains("l.i0 FAILED"));
    // The connection drops before a killed server with a large buffer pool has finished exiting.
    let gone = Instant::now() + Duration::from_secs(10);
    while sb.is_running() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!sb.is_running(), "the killed server still runs after 10 s");
}

fn versus() -> Command {
    Command::cargo_bin("versus").expect("the versus binary")
}

#[test]
fn out_of_range_options_are_one_line_errors() {
    for (args, want) in [
        (&["--rpc-load", "0"][..], "--rpc-load: 0 is out of range; rows per statement must be at least 1"),
        (&["--rates", "100,0"][..], "--rates: 0 is out of range; a target rate must be at least 1 insert/s per client"),
        (
            &["--query-seconds", "-5"][..],
            "--query-seconds: -5 is out of range; seconds per query step must be at least 1",
        ),
        (&["--rows", "-1"][..], "--rows: -1 is out of range; a row count cannot be negative"),
        (&["--steps", "qr700"][..], "--steps: step qr700 needs rate 700 in --rates"),
        (
            &["--steps", "l.i1,l.i0"][..],
            "--steps: l.i0 runs before l.i1, not after; list the steps in the order they run: l.i0,l.i1",
        ),
    ] {
        let out = versus().arg("ibench").args(args).arg("--port").arg("1").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("versus: error: ") && err.contains(want), "{args:?}: {err}");
    }
    let out = versus().args(["ibench", "--port", "1", "--rows", "10"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("cannot connect") && err.lines().count() == 1, "{err}");
}

#[test]
fn an_experiment_stores_every_step_and_compare_shows_them() {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let db = dir.path().join("results.db");
    versus().arg("--home").arg(&home).args(["server", "fetch", "system"]).assert().success();
    let file = dir.path().join("ib.toml");
    std::fs::write(
        &file,
        r#"
name = "ib-e2e"
builds = ["system"]
profile = true
[[configs]]
name = "a"
set = { innodb_buffer_pool_size = "128M", innodb_flush_log_at_trx_commit = 2 }
[[configs]]
name = "b"
set = { innodb_buffer_pool_size = "128M", innodb_flush_log_at_trx_commit = 1 }
[[workloads]]
test = "ibench"
options = { rows = 20000, rows-i1 = 2000, rows-i2 = 200, query-seconds = 2, rates = [100], cleanup-seconds = 1 }
"#,
    )
    .unwrap();
    let out = versus().arg("--home").arg(&home).arg("run").arg(&file).arg("--db").arg(&db).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Profiled: every step that ran long enough has the server's stacks over the step, per operation.
    let store = versus::store::Store::open(&db).unwrap();
    let e = store.latest_experiment_named("ib-e2e").unwrap().unwrap();
    let mut sampled = Vec::new();
    for r in store.runs(e.id).unwrap() {
        let d = store.run(r.id).unwrap().unwrap();
        let p = store.profile(r.id).unwrap().unwrap_or_else(|| panic!("step run {} has no profile row", r.id));
        // Whether the client was the step's limit is measured for every step (docs/fleet.md).
        let load = d.efficiency.client_load.unwrap_or_else(|| panic!("step run {} has no client load", r.id));
        assert!(load.client_cpus > 0.0 && load.usable_cpus >= 1.0, "{}: {load:?}", d.run.cell.workload);
        if p.is_sampled() {
            assert_eq!(p.transactions, d.run.summary.as_ref().unwrap().events, "per operation of the step");
            sampled.push(d.run.cell.workload.clone());
        }
    }
    for step in ["l.i0", "qr100"] {
        assert!(sampled.iter().any(|w| w.ends_with(step)), "no sampled profile of {step}: {sampled:?}");
    }
    let out =
        versus().arg("--home").arg(&home).args(["compare", "--color", "never", "--db"]).arg(&db).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for step in ["ibench/l.i0", "ibench/l.x", "ibench/l.i1", "ibench/l.i2", "ibench/qr100", "ibench/qp100"] {
        assert!(text.contains(step), "no row for {step}:\n{text}");
    }
    for want in [
        "Insert Benchmark ibench, 1 client(s)",
        "Relative to system/a",
        "Insert rate achieved",
        "l.i1: efficiency per insert",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    let out = versus().arg("--home").arg(&home).args(["report", "--format", "json", "--db"]).arg(&db).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(json["ibench"][0]["tables"]["steps"].as_array().map(Vec::len), Some(6));
    // The HTML report's Insert Benchmark section: in the table of contents, the report's table markup,
    // and no single-dot chart for steps shorter than a few samples (l.x takes well under a second).
    let out = versus().arg("--home").arg(&home).args(["report", "--format", "html", "--db"]).arg(&db).output().unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    for want in
        ["<li><a href=\"#ibench-0\">", "<table class=\"data\" id=\"table-ibench-0-throughput\">", "No chart for "]
    {
        assert!(html.contains(want), "missing {want}");
    }
    let short = html.lines().find(|l| l.contains("No chart for ")).unwrap_or_default();
    assert!(short.contains("l.x"), "l.x is named as too short: {short}");
    assert!(!html.contains("per second — ibench/l.x @"), "no chart for the sub-second l.x");
}

#[test]
fn saved_results_are_compared_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        rows_load: 500,
        query_seconds: 1,
        rates: vec![100],
        steps: vec![Step::Load, Step::Query { point: true, rate: 100 }],
        ..Options::default()
    };
    let mock = versus::driver::mock::MockDriver::new().with_delay(Duration::from_micros(200));
    let stop = Arc::new(AtomicBool::new(false));
    let r = ibench::run(&o, Arc::new(mock), &mut NoProbe, &mut Quiet, stop, Some("mock")).unwrap();
    let paths: Vec<_> = ["a.json", "b.json"].iter().map(|n| dir.path().join(n)).collect();
    for p in &paths {
        std::fs::write(p, serde_json::to_string(&r).unwrap()).unwrap();
    }
    let out = versus().args(["ibench", "compare", "--format", "markdown"]).args(&paths).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for want in ["**Relative to mock", "| mock#2 | 1.00 | 1.00 |", "qp100: efficiency per query", "| target | 100 |"] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    // The HTML is a page of its own, with the report's look, the files it came from and their options.
    let out = versus().args(["ibench", "compare", "--format", "html"]).args(&paths).output().unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "<!DOCTYPE html>",
        "<meta charset=\"utf-8\">",
        "<nav><ol>",
        "<table class=\"data\" id=\"table-ibench-throughput\">",
        "Throughput per step relative to mock",
        "a.json",
        "&quot;rows_load&quot;: 500",
        "</html>",
    ] {
        assert!(html.contains(want), "missing {want}:\n{html}");
    }
    std::fs::write(&paths[1], "{}").unwrap();
    let out = versus().args(["ibench", "compare"]).args(&paths).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("b.json: not a `versus ibench --format json` result") && err.lines().count() == 1, "{err}");
}

/// `versus ibench run --profile` against a sandbox: after the report, each step long enough to be
/// sampled has the server's CPU per operation and its top functions; a step too short says so; and
/// the JSON result carries the same per step. Without a known server process it is refused up front.
#[test]
fn a_profiled_run_prints_each_steps_server_profile() {
    let _turn = turn();
    let sb = common::start(common::system_build(), OVERRIDES);
    let info = sb.info();
    let conn = [
        "--port".to_string(),
        sb.port().to_string(),
        "--user".to_string(),
        info.user.clone(),
        "--password".to_string(),
        info.password.clone(),
    ];
    let size = ["--rows", "20000", "--rows-i1", "2000", "--rows-i2", "200", "--query-seconds", "2", "--rates", "100"];
    let steps = ["--steps", "l.i0,l.x,qr100", "--quiet"];
    let out = versus().arg("ibench").args(&conn).args(size).args(steps).arg("--profile").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for step in ["l.i0", "qr100"] {
        let at = text.find(&format!("Step {step} (per operation")).unwrap_or_else(|| panic!("no {step}:\n{text}"));
        assert!(text[at..].contains("CPU per transaction:"), "{text}");
    }
    let out = versus()
        .arg("ibench")
        .args(&conn)
        .args(size)
        .args(["--steps", "l.i0,l.x,qr100", "--quiet", "--format", "json", "--profile", "--profile-hz", "499"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON result");
    let steps = doc["server_profiles"].as_array().unwrap();
    let p = steps.iter().find(|p| p["step"] == "qr100").unwrap_or_else(|| panic!("no qr100 profile: {steps:?}"));
    assert_eq!(p["server_profile"]["hz"], 499);
    assert!(p["server_profile"]["samples"].as_u64().unwrap() > 50, "{p}");

    let out = versus().args(["ibench", "--host", "192.0.2.1", "--port", "1", "--profile"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--profile") && err.lines().count() == 1, "{err}");
}
