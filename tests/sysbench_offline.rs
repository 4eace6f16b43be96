//! `versus sysbench` without a server: options and their errors, help, the report layout, the JSON schema,
//! and the run loop (events, errors, --rate, warm-up, checkpoints, forced shutdown) on the mock driver.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::{
    output_text as text, sysbench_fails_with as fails_with, sysbench_schema_errors as schema_errors,
    versus_sysbench as versus,
};
use versus::driver::DbError;
use versus::driver::mock::MockDriver;
use versus::workload::sysbench::options::{self, Test};
use versus::workload::sysbench::runner::{self, Quiet};
use versus::workload::sysbench::stats::{Latency, RunResult, ThreadFigures};
use versus::workload::sysbench::{json, report};

// ---------- options and bad input (no server) ----------

#[test]
fn bad_input_is_a_one_line_error() {
    fails_with(&["oltp_read_write", "--threads=0", "run"], "--threads");
    fails_with(&["oltp_read_write", "--rand-type=foo", "run"], "--rand-type");
    fails_with(&["oltp_read_write", "--time=-1", "run"], "--time");
    fails_with(&["oltp_read_write", "--tabels=3", "run"], "did you mean --tables?");
    fails_with(&["oltp_read_wirte", "run"], "did you mean 'oltp_read_write'");
    fails_with(&["oltp_read_write"], "command is required");
    fails_with(&["oltp_read_write", "frobnicate"], "unknown command");
    fails_with(&["oltp_read_write", "--histogram", "--percentile=0", "run"], "--histogram");
    fails_with(&["oltp_read_write", "--db-ps-mode=sometimes", "run"], "--db-ps-mode");
    fails_with(&["oltp_read_write", "--skip-trx=maybe", "run"], "--skip-trx");
    // sysbench's boolean spellings only (on/off/true/false/1/0), and its SIZE check.
    fails_with(&["oltp_read_write", "--skip-trx=yes", "run"], "--skip-trx");
    fails_with(&["oltp_read_write", "--thread-stack-size=64Q", "run"], "--thread-stack-size");
    fails_with(&["oltp_read_write", "--thread-stack-size=2G", "run"], "--thread-stack-size");
    fails_with(&["oltp_read_write", "--rand-spec-res=101", "run"], "--rand-spec-res");
    fails_with(&["oltp_read_write", "--random-points=3", "run"], "not an option of oltp_read_write");
    fails_with(&["oltp_read_write", "--mysql-port=99999", "run"], "--mysql-port");
    // Counts are whole numbers in range, never truncated or read through a double.
    let whole = "expected a whole number from 0 to 4294967295";
    fails_with(&["oltp_read_write", "--tables=2.5", "run"], &format!("--tables: invalid value '2.5': {whole}"));
    fails_with(
        &["oltp_read_write", "--table-size=9.2e18", "run"],
        &format!("--table-size: invalid value '9.2e18': {whole}"),
    );
    fails_with(&["oltp_read_write", "--table-size=4294967296", "run"], whole);
    fails_with(
        &["oltp_read_write", "--point-selects=-1", "run"],
        "--point-selects: invalid value '-1': must not be negative",
    );
}

/// More worker threads than the machine lets a user start are refused before anything connects:
/// here the soft RLIMIT_NPROC is lowered to 2000 for the command; --client-threads fits under it.
#[test]
fn threads_above_the_machine_limit_are_refused() {
    let run = |threads: &str, extra: &[&str]| {
        let mut c = std::process::Command::new("prlimit");
        c.args(["--nproc=2000:", "--", env!("CARGO_BIN_EXE_versus"), "sysbench", "oltp_read_only"]);
        c.args([threads, "--mysql-port=1", "--time=1"]).args(extra).arg("run");
        c.output().expect("prlimit runs")
    };
    let o = run("--threads=5000", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        err.starts_with("versus: error: --threads: invalid value '5000': 5000 worker threads are more than this machine lets a user start (2000:"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Multiplexed on 4 threads, the same connections pass the check and get as far as connecting.
    let o = run("--threads=5000", &["--client-threads=4", "--mysql-host=127.0.0.1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unable to connect") && !err.contains("worker threads"), "{}", text(&o));
}

#[test]
fn warnings_go_to_stdout_like_sysbench() {
    // Printed before connecting, so an unreachable port is enough.
    let o = versus(&[
        "oltp_point_select",
        "--num-threads=2",
        "--time=0",
        "--events=0",
        "--mysql-host=127.0.0.1",
        "--mysql-port=1",
        "run",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("WARNING: --num-threads is deprecated, use --threads instead\n"), "{out}");
    assert!(out.contains("WARNING: Both event and time limits are disabled, running an endless test\n"), "{out}");
    assert!(!o.status.success());
    // With --format=json stdout stays JSON-only.
    let o = versus(&["oltp_point_select", "--num-threads=2", "--format=json", "--mysql-port=1", "run"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("WARNING"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("WARNING: --num-threads is deprecated"));
}

#[test]
fn options_take_both_spellings_and_sysbench_defaults() {
    let p = |s: &str| options::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap();
    let a = p("oltp_read_write --table-size=500 --mysql_storage_engine=myisam --skip_trx --range-selects=off run");
    let b = p("oltp_read_write --table_size=5e2 --mysql-storage-engine=myisam --skip-trx=on --range_selects=0 run");
    assert_eq!(a.options, b.options);
    let o = &a.options;
    assert_eq!(
        (o.oltp.table_size, o.oltp.storage_engine.as_str(), o.oltp.skip_trx, o.oltp.range_selects),
        (500, "myisam", true, false)
    );
    let d = p("oltp_point_select run").options;
    assert_eq!(
        (d.threads, d.time, d.events, d.percentile, d.oltp.tables, d.oltp.table_size),
        (1, 10, 0, 95, 1, 10_000)
    );
    assert_eq!(d.rand.rand_type, options::RandType::Special);
    assert_eq!(d.oltp.point_selects, 1, "oltp_point_select forces one point select");
    assert_eq!(d.ignore_errors, options::IgnoreErrors::Codes(vec![1213, 1020, 1205]));
    let dep = p("oltp_read_write --max-time=7 --num-threads=3 --max-requests=9 run");
    assert_eq!((dep.options.time, dep.options.threads, dep.options.events), (7, 3, 9));
    assert_eq!(dep.warnings.len(), 3);
    let all = p("oltp_read_write --mysql-ignore-errors=all run");
    assert!(all.options.ignore_errors.contains(1062));
    let none = p("oltp_read_write --mysql-ignore-errors= run");
    assert!(!none.options.ignore_errors.contains(1213));
    let none = p("oltp_read_write --mysql-ignore-errors=none run");
    assert!(!none.options.ignore_errors.contains(1213) && !none.options.ignore_errors.contains(0));
}

#[test]
fn help_lists_test_options_in_sysbench_layout() {
    let o = versus(&["oltp_read_write", "help"]);
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success());
    let (head, body) = t.split_once("\n\n").expect("version line, blank line");
    assert!(head.starts_with("sysbench 1.0.20 compatible"), "{t}");
    assert!(body.starts_with("oltp_read_write options:\n  --auto_inc[=on|off] "), "{t}");
    assert!(t.contains("  --tables=N") && t.contains("Number of tables [1]\n\n"), "{t}");
    let o = versus(&["select_random_points", "help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--random_points=N"));
    let o = versus(&["bulk_insert", "help"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("'bulk_insert' test does not implement the 'help' command."), "{}", text(&o));
    // General options with dashes, empty defaults shown as [] (sysbench --help).
    let t = String::from_utf8_lossy(&versus(&["--help"]).stdout).to_string();
    assert!(t.contains("  --threads=N ") && t.contains("  --report-interval=N "), "{t}");
    assert!(t.contains("MySQL password []\n") && t.contains("Report checkpoints are off by default. []\n"), "{t}");
}

// ---------- report format (deterministic result) ----------

fn fixed_result() -> RunResult {
    let mut r = RunResult::empty(Test::OltpReadWrite, 2);
    r.total_time = Duration::from_millis(1233);
    r.time_interval = Duration::from_micros(1_234_500);
    r.counts = versus::workload::sysbench::session::Counts {
        events: 100,
        reads: 1400,
        writes: 400,
        other: 200,
        errors: 1,
        reconnects: 0,
    };
    let mut lat = Latency::default();
    for i in 0..100u64 {
        let ns = 8_610_000 + i * i * 1_300;
        lat.record(ns);
        r.histogram.record(ns / 1000).unwrap();
    }
    r.latency = lat;
    r.per_thread = vec![
        ThreadFigures { events: 55, time_ns: lat.sum_ns / 2 + 10_000_000 },
        ThreadFigures { events: 45, time_ns: lat.sum_ns / 2 - 10_000_000 },
    ];
    r
}

#[test]
fn final_report_has_sysbench_layout() {
    let o = options::Options::default();
    insta::assert_snapshot!(report::final_report(&fixed_result(), &o), @r"
    SQL statistics:
        queries performed:
            read:                            1400
            write:                           400
            other:                           200
            total:                           2000
        transactions:                        100    (81.00 per sec.)
        queries:                             2000   (1620.09 per sec.)
        ignored errors:                      1      (0.81 per sec.)
        reconnects:                          0      (0.00 per sec.)

    General statistics:
        total time:                          1.2330s
        total number of events:              100

    Latency (ms):
             min:                                    8.61
             avg:                                   12.88
             max:                                   21.35
             95th percentile:                       20.11
             sum:                                 1287.86

    Threads fairness:
        events (avg/stddev):           50.0000/5.00
        execution time (avg/stddev):   0.6439/0.01
    ");
}

#[test]
fn histogram_and_percentile_off_layout() {
    let mut o = options::Options { histogram: true, ..Default::default() };
    let t = report::final_report(&fixed_result(), &o);
    assert!(t.starts_with(
        "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n"
    ));
    let bars: Vec<&str> = t.lines().skip(2).take_while(|l| *l != " ").collect();
    assert!(bars.iter().all(|l| l.len() >= 54 && &l[12..14] == " |"), "{bars:?}");
    let total: u64 = bars.iter().map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(total, 100);
    o.histogram = false;
    o.percentile = 0;
    assert!(report::final_report(&fixed_result(), &o).contains("         percentile stats:               disabled\n"));
    o.percentile = 99;
    assert!(report::final_report(&fixed_result(), &o).contains("         99th percentile:"));
    // No events: the title and the closing single-space line only, as sysbench.
    let mut empty = fixed_result();
    empty.histogram.reset();
    o.histogram = true;
    assert!(
        report::final_report(&empty, &o)
            .starts_with("Latency histogram (values are in milliseconds)\n \nSQL statistics:\n")
    );
}

#[test]
fn forced_shutdown_lines_where_sysbench_prints_them() {
    let o = options::parse(&["oltp_point_select", "--time=2", "--forced-shutdown=1", "run"].map(String::from))
        .unwrap()
        .options;
    let p = report::preamble(&o);
    assert!(p.ends_with("current time\n\nForcing shutdown in 3 seconds\n\n"), "{p}");
    assert!(report::preamble(&options::Options::default()).ends_with("current time\n\n\n"));
    let mut r = fixed_result();
    r.forced_unfinished = Some(1);
    let t = report::final_report(&r, &o);
    let at = t.find("\n\nNumber of unfinished transactions on forced shutdown: 1\n\nGeneral statistics:\n");
    assert!(at.is_some_and(|i| t[..i].contains("    reconnects:")), "{t}");
    // In JSON the count is a field (the FATAL line goes to stderr, so stdout stays one document).
    let doc = json::report(Test::OltpPointSelect.name(), &o, &r);
    assert_eq!(doc["forced_shutdown_unfinished"], 1);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    r.forced_unfinished = None;
    assert!(json::report(Test::OltpPointSelect.name(), &o, &r)["forced_shutdown_unfinished"].is_null());
}

// ---------- the run loop on the mock driver ----------

fn mock_run(test: Test, extra: &str, driver: MockDriver) -> versus::Result<RunResult> {
    mock_run_seen(test, extra, driver, &mut Quiet)
}

/// [`mock_run`] that tells `obs` of the warm-up's end and of checkpoints.
fn mock_run_seen(
    test: Test,
    extra: &str,
    driver: MockDriver,
    obs: &mut dyn runner::IntervalObserver,
) -> versus::Result<RunResult> {
    let mut args: Vec<String> = vec![test.name().to_string()];
    args.extend(extra.split_whitespace().map(String::from));
    args.push("run".into());
    let inv = options::parse(&args)?;
    runner::run(test, &inv.options, Arc::new(driver), Arc::new(AtomicBool::new(false)), obs)
}

#[test]
fn event_counts_match_sysbench_regression_numbers() {
    let r = mock_run(Test::OltpReadWrite, "--events=100 --time=0 --threads=3", MockDriver::new()).unwrap();
    assert_eq!((r.counts.events, r.counts.reads, r.counts.writes, r.counts.other), (100, 1400, 400, 200));
    assert_eq!(r.per_thread.iter().map(|t| t.events).sum::<u64>(), 100);
    let r = mock_run(Test::OltpReadOnly, "--events=10 --time=0 --skip-trx", MockDriver::new()).unwrap();
    assert_eq!((r.counts.reads, r.counts.other), (140, 0));
    let r = mock_run(Test::OltpPointSelect, "--events=100 --time=0", MockDriver::new()).unwrap();
    assert_eq!(r.counts.queries(), 100);
}

#[test]
fn read_write_statement_sequence() {
    let d = MockDriver::new().recording();
    mock_run(Test::OltpReadWrite, "--events=1 --time=0 --tables=4 --table-size=1000", d.clone()).unwrap();
    let log = d.log();
    let shape: Vec<String> =
        log.iter().map(|s| s.split(|c: char| c.is_ascii_digit()).next().unwrap().to_string()).collect();
    let mut expected = vec!["BEGIN".to_string()];
    expected.extend(std::iter::repeat_n("SELECT c FROM sbtest".to_string(), 14));
    expected.extend(
        ["UPDATE sbtest", "UPDATE sbtest", "DELETE FROM sbtest", "INSERT INTO sbtest", "COMMIT"].map(String::from),
    );
    assert_eq!(shape.len(), 20, "{log:#?}");
    assert_eq!(shape[0], "BEGIN");
    assert_eq!(shape[19], "COMMIT");
    assert!(log[1..11].iter().all(|s| s.contains(" WHERE id=")));
    assert!(log[11].contains("BETWEEN") && log[12].starts_with("SELECT SUM(k)") && log[13].ends_with("ORDER BY c"));
    assert!(log[14].starts_with("SELECT DISTINCT c"));
    assert!(log[15].contains("SET k=k+1") && log[16].contains("SET c='"));
    let del_id = log[17].rsplit('=').next().unwrap();
    assert!(log[18].contains(&format!("VALUES ({del_id}, ")), "insert reuses the deleted id: {}", log[18]);
    // One table per statement group: all ten point selects use the same table.
    let table = |s: &str| s.split("sbtest").nth(1).unwrap().split(' ').next().unwrap().to_string();
    assert!(log[1..11].iter().all(|s| table(s) == table(&log[1])));
    let _ = expected;
}

#[test]
fn deadlocks_are_retried_and_counted_other_errors_stop_the_run() {
    // Execution 5 (a point select of the first event) fails with a deadlock: the event restarts.
    let d = MockDriver::new().fail_at(5, DbError::server(1213, "Deadlock found"));
    let r = mock_run(Test::OltpReadWrite, "--events=10 --time=0", d.clone()).unwrap();
    assert_eq!((r.counts.events, r.counts.errors), (10, 1));
    assert_eq!(d.executions(), 10 * 20 + 5 + 1, "the failed attempt's statements stay sent");
    let d = MockDriver::new().fail_at(3, DbError::lost("gone"));
    let r = mock_run(Test::OltpPointSelect, "--events=10 --time=0", d.clone()).unwrap();
    assert_eq!((r.counts.events, r.counts.reconnects, r.counts.errors), (10, 1, 0));
    assert_eq!(d.reconnects(), 1);
    let d = MockDriver::new().fail_at(2, DbError::server(1062, "Duplicate entry '5' for key 'PRIMARY'"));
    let e = mock_run(Test::OltpWriteOnly, "--events=10 --time=0", d).unwrap_err().to_string();
    assert!(e.contains("DELETE FROM sbtest1 WHERE id=?") || e.contains("UPDATE sbtest1"), "{e}");
    assert!(e.contains("1062") && !e.contains('\n'), "{e}");
}

#[test]
fn rate_limit_counts_queue_time_and_reports_intervals() {
    // 5 ms per statement, one thread, 400 events/s offered: the queue grows, latency includes it.
    let d = MockDriver::new().with_delay(Duration::from_millis(5));
    let r = mock_run(Test::OltpPointSelect, "--time=2 --rate=400 --report-interval=1", d).unwrap();
    assert!(r.counts.events > 200 && r.counts.events < 420, "{}", r.counts.events);
    assert!(r.latency.max_ns > 100_000_000, "queue time must be in latency: max {}", r.latency.max_ns);
    assert!(!r.intervals.is_empty());
    assert!(r.intervals[0].queue.is_some_and(|(q, _)| q > 10), "{:?}", r.intervals[0].queue);
    // Concurrency: events in service, at most one per thread.
    assert!(r.intervals.iter().all(|i| i.queue.is_some_and(|(_, c)| c <= 1)), "{:?}", r.intervals);
    let line = report::interval_line(&r.intervals[0], 95);
    assert!(line.starts_with("[ 1s ] thds: 1 tps: ") && line.contains("\n[ 1s ] queue length: "), "{line}");
}

#[test]
fn errors_count_in_the_interval_they_happen() {
    // The first 8 executions (0.3 s each) fail with lock-wait timeouts: one event retried for ~2.4 s.
    // Its errors show up second by second, as sysbench's counters do, not all when it finally ends.
    let mut d = MockDriver::new().with_delay(Duration::from_millis(300));
    for n in 0..8 {
        d = d.fail_at(n, DbError::server(1205, "Lock wait timeout exceeded"));
    }
    let r = mock_run(Test::OltpPointSelect, "--time=3 --report-interval=1", d).unwrap();
    assert_eq!(r.counts.errors, 8);
    let errors: Vec<u64> = r.intervals.iter().map(|i| i.counts.errors).collect();
    assert!(errors.len() >= 2 && errors[0] >= 2 && errors[1] >= 2, "{errors:?}");
    assert_eq!(r.intervals[0].counts.events, 0);
}

#[test]
fn sparse_rate_runs_until_the_time_limit() {
    // 1 event/s over 2 s: the next arrival usually falls after the limit, yet the run lasts the full 2 s
    // (as sysbench's) and reports both intervals, so rates are not inflated by a short window.
    for threads in ["--threads=1", "--threads=2"] {
        let extra = format!("--time=2 --rate=1 --report-interval=1 {threads}");
        let r = mock_run(Test::OltpPointSelect, &extra, MockDriver::new()).unwrap();
        assert!(r.total_time >= Duration::from_secs(2), "{threads}: {:?}", r.total_time);
        assert!(r.total_time < Duration::from_millis(2500), "{threads}: {:?}", r.total_time);
        let secs: Vec<u64> = r.intervals.iter().map(|i| i.time.round() as u64).collect();
        assert_eq!(secs, [1, 2], "{threads}");
        assert!(r.intervals.iter().all(|i| i.threads as usize == r.per_thread.len()), "{threads}");
    }
}

#[test]
fn json_report_validates_against_schema() {
    let o =
        options::parse(&["oltp_read_write".into(), "--report-interval=1".into(), "--rate=100".into(), "run".into()])
            .unwrap()
            .options;
    let mut r = mock_run(Test::OltpReadWrite, "--time=2 --report-interval=1 --rate=200", MockDriver::new()).unwrap();
    r.interrupted = false;
    let doc = json::report(Test::OltpReadWrite.name(), &o, &r);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!doc["intervals"].as_array().unwrap().is_empty());
    assert!(!doc["histogram"]["buckets"].as_array().unwrap().is_empty());
    let fixed = json::report(Test::OltpReadWrite.name(), &o, &fixed_result());
    assert!(schema_errors(&fixed).is_empty());
    assert_eq!(fixed["totals"]["reads"], 1400);
    let mut broken = fixed.clone();
    broken["totals"]["tps"] = serde_json::json!("fast");
    assert!(!schema_errors(&broken).is_empty(), "the schema must reject a string tps");
}

#[test]
fn forced_shutdown_and_dry_run() {
    let t0 = std::time::Instant::now();
    let d = MockDriver::new().with_delay(Duration::from_secs(4));
    let r = mock_run(Test::OltpPointSelect, "--time=1 --forced-shutdown=1", d).unwrap();
    assert_eq!(r.forced_unfinished, Some(1));
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    // Fairness counts the stuck event and its 2 s so far, as sysbench's timers do: events 1/0,
    // execution time 0 (no finished event) with a stddev of 2 s.
    let [em, esd, tm, tsd] = r.fairness();
    assert_eq!((r.counts.events, em, esd, tm), (0, 1.0, 0.0, 0.0));
    assert!((tsd - 2.0).abs() < 0.2, "{tsd}");
    // --mysql-dry-run sends nothing and counts every statement as other, as sysbench does.
    let o = versus(&["oltp_read_write", "--mysql-dry-run", "--events=100", "--time=0", "--mysql-port=1", "run"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("        other:                           2000\n"), "{t}");
    // JSON: progress lines on stderr, checkpoint reports kept in the document, schema-valid.
    let o = versus(&[
        "oltp_point_select",
        "--mysql-dry-run",
        "--time=2",
        "--report-interval=1",
        "--report-checkpoints=1",
        "--format=json",
        "--mysql-port=1",
        "run",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    let cps = doc["checkpoints"].as_array().expect("checkpoints");
    assert_eq!(cps.len(), 1);
    assert!(cps[0]["totals"]["events"].as_u64().unwrap() > 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("[ 1s ] thds: 1 tps: "), "{}", text(&o));
}

#[test]
fn rand_seed_makes_single_thread_runs_reproducible() {
    let log = |seed: &str| {
        let d = MockDriver::new().recording();
        mock_run(Test::OltpReadWrite, &format!("--events=20 --time=0 --tables=3 --rand-seed={seed}"), d.clone())
            .unwrap();
        d.log()
    };
    let a = log("42");
    assert_eq!(a.len(), 400);
    assert_eq!(a, log("42"));
    assert_ne!(a, log("43"));
}

#[test]
fn warmup_then_exactly_the_requested_events() {
    // Events in flight when the warm-up ends must not add to --events (they began unmeasured).
    for threads in [1, 4] {
        let d = MockDriver::new().with_delay(Duration::from_millis(1));
        let extra = format!("--warmup-time=1 --events=300 --time=0 --threads={threads}");
        let r = mock_run(Test::OltpPointSelect, &extra, d).unwrap();
        assert_eq!(r.counts.events, 300, "--threads={threads}");
        let per_thread: u64 = r.per_thread.iter().map(|t| t.events).sum();
        assert_eq!(per_thread, 300, "--threads={threads}");
    }
}

#[test]
fn warmup_and_checkpoints() {
    struct Seen {
        warmups: usize,
        checkpoints: Vec<u64>,
    }
    impl runner::IntervalObserver for Seen {
        fn warmup_done(&mut self) {
            self.warmups += 1;
        }
        fn checkpoint(&mut self, r: &RunResult) {
            self.checkpoints.push(r.counts.events);
        }
    }
    let d = MockDriver::new().with_delay(Duration::from_millis(2));
    let mut seen = Seen { warmups: 0, checkpoints: Vec::new() };
    let r = mock_run_seen(Test::OltpPointSelect, "--time=2 --warmup-time=1", d.clone(), &mut seen).unwrap();
    assert_eq!(seen.warmups, 1);
    // Only the 2 measured seconds count: about 2 s / 2 ms events, not 3 s worth.
    assert!((r.time_interval.as_secs_f64() - 2.0).abs() < 0.3, "{:?}", r.time_interval);
    assert!((r.total_time.as_secs_f64() - 2.0).abs() < 0.3, "total time excludes the warm-up: {:?}", r.total_time);
    assert!(r.counts.events < d.executions() as u64 * 4 / 5, "{} of {}", r.counts.events, d.executions());
    let mut seen = Seen { warmups: 0, checkpoints: Vec::new() };
    let d = MockDriver::new().with_delay(Duration::from_millis(2));
    let r = mock_run_seen(Test::OltpPointSelect, "--time=2 --report-checkpoints=1", d.clone(), &mut seen).unwrap();
    assert_eq!(seen.checkpoints.len(), 1);
    assert_eq!(seen.checkpoints[0] + r.counts.events, d.executions() as u64, "checkpoint resets the counts");
}

/// A stop flag that a Ctrl-C sets after `delay`.
fn stop_after(delay: Duration) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    stop
}

#[test]
fn ctrl_c_reports_after_a_grace_when_statements_hang() {
    // Every statement takes 30 s (a lock wait, say). A Ctrl-C 0.5 s in must not wait for them: after the
    // grace the report covers what was measured and counts the events left running.
    let stop = stop_after(Duration::from_millis(500));
    let inv = options::parse(&["oltp_point_select", "--time=60", "--threads=3", "run"].map(String::from)).unwrap();
    let t0 = std::time::Instant::now();
    let d = MockDriver::new().with_delay(Duration::from_secs(30));
    let r = runner::run(Test::OltpPointSelect, &inv.options, Arc::new(d), stop, &mut Quiet).unwrap();
    let took = t0.elapsed();
    assert!(took >= runner::INTERRUPT_GRACE && took < Duration::from_secs(10), "{took:?}");
    assert!(r.interrupted);
    assert_eq!((r.interrupted_unfinished, r.forced_unfinished, r.counts.events), (Some(3), None, 0));
    let t = report::final_report(&r, &inv.options);
    assert!(t.contains("    reconnects:                          0      (0.00 per sec.)\n\nNumber of unfinished transactions on interrupt: 3\n\nGeneral statistics:\n"), "{t}");
    let doc = json::report(Test::OltpPointSelect.name(), &inv.options, &r);
    assert_eq!(doc["interrupted_unfinished"], 3);
    assert!(schema_errors(&doc).is_empty());
    // Statements that end within the grace are waited for: nothing is left unfinished.
    let stop = stop_after(Duration::from_millis(500));
    let d = MockDriver::new().with_delay(Duration::from_millis(300));
    let r = runner::run(Test::OltpPointSelect, &inv.options, Arc::new(d), stop, &mut Quiet).unwrap();
    assert!(r.interrupted && r.counts.events > 0);
    assert_eq!(r.interrupted_unfinished, None);
    assert!(json::report(Test::OltpPointSelect.name(), &inv.options, &r)["interrupted_unfinished"].is_null());
}

#[test]
fn a_fatal_error_is_not_lost_when_a_ctrl_c_leaves_hung_workers_behind() {
    // One worker hangs in a 30 s statement (execution 0); the other then fails (execution 1) with an error
    // that is not ignored. The user's Ctrl-C ends the wait after the grace, and the run ends with the error.
    let d = MockDriver::new()
        .slow_at(0, Duration::from_secs(30))
        .fail_at(1, DbError::server(1062, "Duplicate entry '5' for key 'PRIMARY'"));
    let inv = options::parse(&["oltp_point_select", "--time=60", "--threads=2", "run"].map(String::from)).unwrap();
    let t0 = std::time::Instant::now();
    let r = runner::run(
        Test::OltpPointSelect,
        &inv.options,
        Arc::new(d),
        stop_after(Duration::from_millis(300)),
        &mut Quiet,
    );
    let e = r.map(|r| r.counts.events).unwrap_err().to_string();
    assert!(e.contains("1062"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

#[test]
fn intervals_after_the_time_limit_count_the_workers_still_running() {
    // One worker hangs in its first statement past the time limit; the other stops at the limit. The
    // interval ending at the limit counts both, the next one only the hung worker.
    let d = MockDriver::new().slow_at(0, Duration::from_secs(10));
    let r = mock_run(Test::OltpPointSelect, "--time=1 --report-interval=1 --forced-shutdown=2 --threads=2", d).unwrap();
    let threads: Vec<u32> = r.intervals.iter().map(|i| i.threads).collect();
    assert!(threads.len() >= 2 && threads[0] == 2 && threads[1] == 1, "{threads:?}");
    assert_eq!(r.forced_unfinished, Some(1));
}

// ---------- the per-statement path's code layout ----------

/// The functions every statement goes through sit together in the binary (`.text.hot.versus` sections,
/// kept together by the linker: see the crate docs), not spread over its megabytes of code, where after
/// each wake-up every page of them cost a page walk.
#[test]
fn the_per_statement_path_is_laid_out_together() {
    const PATH: [&str; 10] = [
        "versus::workload::sysbench::runner::worker",
        "versus::workload::sysbench::oltp::Workload::event",
        "versus::workload::sysbench::oltp::Workload::points",
        "versus::workload::sysbench::rng::Random::default",
        "<versus::workload::sysbench::session::Session as versus::workload::sysbench::oltp::Exec>::exec",
        "<versus::driver::lean::LeanConnection as versus::driver::Connection>::execute",
        "versus::driver::wire::Wire::send_execute",
        "versus::driver::wire::Wire::read_result",
        "versus::driver::response::scan",
        "versus::workload::sysbench::shared::Shared::record",
    ];
    let bin = env!("CARGO_BIN_EXE_versus");
    let out = std::process::Command::new("nm")
        .args(["--defined-only", "--demangle", "--print-size", bin])
        .output()
        .expect("nm (binutils) reads the binary's symbols");
    assert!(out.status.success(), "nm {bin}: {}", String::from_utf8_lossy(&out.stderr));
    let mut found = Vec::new();
    let (mut text_start, mut text_end) = (u64::MAX, 0u64);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // "address size type name"
        let mut f = line.splitn(4, ' ');
        let (Some(addr), Some(size), Some(kind), Some(name)) = (f.next(), f.next(), f.next(), f.next()) else {
            continue;
        };
        if !kind.eq_ignore_ascii_case("t") {
            continue;
        }
        let (addr, size) = (u64::from_str_radix(addr, 16).unwrap(), u64::from_str_radix(size, 16).unwrap());
        text_start = text_start.min(addr);
        text_end = text_end.max(addr + size);
        if PATH.contains(&name) {
            found.push((addr, addr + size, name.to_string()));
        }
    }
    let missing: Vec<_> = PATH.iter().filter(|p| !found.iter().any(|f| f.2 == **p)).collect();
    assert!(missing.is_empty(), "not in the binary's symbols: {missing:?}");
    let lo = found.iter().map(|f| f.0).min().unwrap();
    let hi = found.iter().map(|f| f.1).max().unwrap();
    let size: u64 = found.iter().map(|f| f.1 - f.0).sum();
    found.sort();
    // Together: what spans them is mostly themselves and the rest of the hot path, a small share of the code.
    assert!(hi - lo < (4 * size).max(64 * 1024), "the path spans {} bytes for {size} of its own: {found:#x?}", hi - lo);
    let code = text_end - text_start;
    assert!(code > 32 * (hi - lo), "the binary's code ({code} bytes) is not much larger than the span");
}
