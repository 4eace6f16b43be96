//! `versus sysbench`: same work as sysbench 1.0.20 (server counters per transaction), options and their
//! errors, the report layout, JSON output, legacy command lines, Ctrl-C and lost connections.

mod common;

use std::collections::BTreeMap;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use assert_cmd::Command;
use common::{TestServer, start_server};
use mysql::prelude::Queryable;
use versus::driver::DbError;
use versus::driver::mock::MockDriver;
use versus::workload::sysbench::options::{self, Test};
use versus::workload::sysbench::runner::{self, Quiet};
use versus::workload::sysbench::stats::{Latency, RunResult, ThreadFigures};
use versus::workload::sysbench::{json, report};

fn versus(args: &[&str]) -> Output {
    let mut c = Command::cargo_bin("versus").expect("versus binary");
    c.arg("sysbench").args(args).timeout(Duration::from_secs(300));
    c.output().expect("run versus")
}

fn sysbench(args: &[&str]) -> Output {
    std::process::Command::new("/usr/bin/sysbench").args(args).output().expect("run /usr/bin/sysbench")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn conn_args(s: &TestServer) -> Vec<String> {
    vec![
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", s.port),
        format!("--mysql-user={}", s.user),
        format!("--mysql-password={}", s.password),
        format!("--mysql-db={}", s.db),
    ]
}

fn status(c: &mut mysql::Conn) -> BTreeMap<String, i64> {
    let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").expect("SHOW GLOBAL STATUS");
    rows.into_iter()
        .filter(|(k, _)| k.starts_with("Com_") || k.starts_with("Handler_"))
        .filter_map(|(k, v)| v.parse::<i64>().ok().map(|v| (k, v)))
        .collect()
}

fn delta(a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    b.iter().map(|(k, v)| (k.clone(), v - a.get(k).copied().unwrap_or(0))).filter(|(_, v)| *v != 0).collect()
}

/// Counters that differ by construction, not by workload: statement preparation and closing happen per
/// connection (sysbench closes its statements at exit, the mysql crate does not).
const PER_CONNECTION: &[&str] = &["Com_stmt_prepare", "Com_stmt_close", "Com_stmt_reprepare"];

type Phase = (BTreeMap<String, i64>, BTreeMap<String, i64>);

/// Runs prepare, run and cleanup with one tool; returns the counter deltas of prepare and of run.
fn phases(root: &mut mysql::Conn, tool: &dyn Fn(&[String]) -> Output, args: &[String], run_extra: &[String]) -> Phase {
    let with = |cmd: &str, extra: &[String]| {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        a.push(cmd.into());
        let o = tool(&a);
        assert!(o.status.success(), "{a:?} failed:\n{}", text(&o));
        o
    };
    let s0 = status(root);
    with("prepare", &[]);
    let s1 = status(root);
    let out = with("run", run_extra);
    let s2 = status(root);
    with("cleanup", &[]);
    let t = text(&out);
    assert!(t.contains("SQL statistics:"), "{t}");
    (delta(&s0, &s1), delta(&s1, &s2))
}

fn compare(what: &str, a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>, per: f64, failures: &mut Vec<String>) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut worst = (0.0f64, String::new());
    for k in keys {
        if PER_CONNECTION.contains(&k.as_str()) {
            continue;
        }
        let (x, y) = (*a.get(k).unwrap_or(&0) as f64 / per, *b.get(k).unwrap_or(&0) as f64 / per);
        let tol = 0.01 * x.abs().max(y.abs());
        if x.max(y) >= 0.01 && (x - y).abs() * per > 2.0 && (x - y).abs() / x.abs().max(y.abs()) > worst.0 {
            worst = ((x - y).abs() / x.abs().max(y.abs()), k.clone());
        }
        // Counters below one per 100 transactions are connection or snapshot noise, not workload.
        if (x - y).abs() > tol && (x - y).abs() * per > 2.0 && x.max(y) >= 0.01 {
            failures.push(format!("{what}: {k} sysbench {x:.4} vs versus {y:.4} per transaction"));
        }
    }
    eprintln!("{what}: largest difference {:.3} % ({})", worst.0 * 100.0, worst.1);
}

#[test]
fn same_work_as_sysbench_per_transaction() {
    let s = start_server();
    let mut root = s.root_conn();
    let base: Vec<String> =
        conn_args(&s).into_iter().chain(["--tables=2".to_string(), "--threads=1".to_string()]).collect();
    // (test, events, options for both tools, options for versus only)
    let cases: &[(&str, u64, &[&str], &[&str])] = &[
        ("oltp_read_write", 500, &["--table-size=5000"], &[]),
        ("oltp_read_only", 500, &["--table-size=5000"], &[]),
        ("oltp_write_only", 1000, &["--table-size=5000"], &[]),
        ("oltp_point_select", 5000, &["--table-size=5000"], &[]),
        ("oltp_update_index", 3000, &["--table-size=5000"], &[]),
        ("oltp_update_non_index", 3000, &["--table-size=5000"], &[]),
        ("oltp_insert", 3000, &["--table-size=5000"], &[]),
        // Deletes that hit an id deleted earlier in the run are random (about n²/2N of n): with 200k rows
        // their spread per transaction is ~0.2 %, far inside the 1 % tolerance.
        ("oltp_delete", 1000, &["--table-size=200000", "--rand-type=uniform", "--tables=1"], &[]),
        ("select_random_points", 40_000, &["--table-size=5000", "--rand-type=uniform", "--tables=1"], &[]),
        ("select_random_ranges", 40_000, &["--table-size=5000", "--rand-type=uniform", "--tables=1"], &[]),
        ("bulk_insert", 200_000, &[], &[]),
        (
            "oltp_read_write",
            300,
            &["--table-size=5000", "--db-ps-mode=disable", "--skip-trx", "--rand-type=pareto"],
            &[],
        ),
        (
            "oltp_read_only",
            300,
            &["--table-size=5000", "--range-selects=off", "--point-selects=3", "--rand-type=gaussian"],
            &[],
        ),
        // The mysql crate client, and the event-loop workers.
        ("oltp_read_write", 300, &["--table-size=5000"], &["--client=crate"]),
        ("oltp_read_only", 400, &["--table-size=5000", "--threads=4"], &["--client-threads=2"]),
        ("oltp_write_only", 500, &["--table-size=5000"], &["--client-threads=1"]),
        ("bulk_insert", 100_000, &["--threads=2"], &["--client-threads=1"]),
    ];
    // Event counts are chosen so that the random part of data-dependent counters (rows matched per k
    // value, ids hit by deletes) stays well below 1 %: about 3 standard deviations or more.
    let mut failures = Vec::new();
    for (test, events, extra, versus_only) in cases {
        let mut args = vec![test.to_string()];
        args.extend(base.iter().cloned());
        args.extend(extra.iter().map(|x| x.to_string()));
        let run_extra = vec![format!("--events={events}"), "--time=0".to_string()];
        let sb = phases(&mut root, &|a| sysbench(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>()), &args, &run_extra);
        // sysbench's INSERT batches, so that prepare's counters can be compared too (the default LOAD DATA
        // path gives the same table contents, see prepare_methods_give_identical_tables).
        let vs_prepare = |a: &[String]| {
            let mut a: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
            a.insert(1, "--prepare-method=insert");
            for (i, o) in versus_only.iter().enumerate() {
                a.insert(2 + i, o);
            }
            versus(&a)
        };
        let vs = phases(&mut root, &vs_prepare, &args, &run_extra);
        let label = format!("{test} {}", extra.iter().chain(versus_only.iter()).copied().collect::<Vec<_>>().join(" "));
        compare(&format!("{label}: prepare"), &sb.0, &vs.0, 1.0, &mut failures);
        compare(&format!("{label}: run"), &sb.1, &vs.1, *events as f64, &mut failures);
    }
    assert!(failures.is_empty(), "counters differ:\n{}", failures.join("\n"));
}

// ---------- options and bad input (no server) ----------

fn fails_with(args: &[&str], needle: &str) {
    let o = versus(args);
    let t = text(&o);
    assert!(!o.status.success(), "{args:?} should fail:\n{t}");
    assert!(t.contains(needle), "{args:?}: expected '{needle}' in:\n{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1, "one-line error expected:\n{t}");
}

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
    let doc = json::report(Test::OltpPointSelect, &o, &r);
    assert_eq!(doc["forced_shutdown_unfinished"], 1);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    r.forced_unfinished = None;
    assert!(json::report(Test::OltpPointSelect, &o, &r)["forced_shutdown_unfinished"].is_null());
}

// ---------- the run loop on the mock driver ----------

fn mock_run(test: Test, extra: &str, driver: MockDriver) -> versus::Result<RunResult> {
    let mut args: Vec<String> = vec![test.name().to_string()];
    args.extend(extra.split_whitespace().map(String::from));
    args.push("run".into());
    let inv = options::parse(&args)?;
    runner::run(test, &inv.options, Arc::new(driver), Arc::new(AtomicBool::new(false)), &mut Quiet)
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

/// Where `doc` breaks schemas/sysbench-report.schema.json (empty when it is valid).
fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../schemas/sysbench-report.schema.json")).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    validator.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect()
}

#[test]
fn json_report_validates_against_schema() {
    let o =
        options::parse(&["oltp_read_write".into(), "--report-interval=1".into(), "--rate=100".into(), "run".into()])
            .unwrap()
            .options;
    let mut r = mock_run(Test::OltpReadWrite, "--time=2 --report-interval=1 --rate=200", MockDriver::new()).unwrap();
    r.interrupted = false;
    let doc = json::report(Test::OltpReadWrite, &o, &r);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!doc["intervals"].as_array().unwrap().is_empty());
    assert!(!doc["histogram"]["buckets"].as_array().unwrap().is_empty());
    let fixed = json::report(Test::OltpReadWrite, &o, &fixed_result());
    assert!(schema_errors(&fixed).is_empty());
    assert_eq!(fixed["totals"]["reads"], 1400);
    let mut broken = fixed.clone();
    broken["totals"]["tps"] = serde_json::json!("fast");
    assert!(!schema_errors(&broken).is_empty(), "the schema must reject a string tps");
}

// ---------- against a real server ----------

#[test]
fn server_errors_are_one_line() {
    let s = start_server();
    let port = format!("--mysql-port={}", s.port);
    let base = ["oltp_point_select", "--mysql-host=127.0.0.1", &port, "--mysql-user=sbtest"];
    let with = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    let f = |a: Vec<String>, needle: &str| fails_with(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>(), needle);
    f(with(&["--mysql-password=wrong", "--time=1", "run"]), "1045");
    f(with(&["--mysql-password=sbpass", "--mysql-db=nope", "--time=1", "run"]), "create the database");
    f(with(&["--mysql-password=sbpass", "--time=1", "run"]), "run prepare first");
    // Its statement is sent over several lines, as sysbench's; the error stays on one.
    let mut points = with(&["--mysql-password=sbpass", "--time=1", "run"]);
    points[0] = "select_random_points".into();
    f(points, "run prepare first");
    f(
        vec![
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            "--mysql-port=1".into(),
            "--time=1".into(),
            "run".into(),
        ],
        "unable to connect",
    );
    let ok = versus(
        &with(&["--mysql-password=sbpass", "--table-size=100", "prepare"])
            .iter()
            .map(|x| x.as_str())
            .collect::<Vec<_>>(),
    );
    assert!(ok.status.success(), "{}", text(&ok));
    f(with(&["--mysql-password=sbpass", "--table-size=100", "prepare"]), "run cleanup first");
}

#[test]
fn socket_json_ctrl_c_and_lost_connections() {
    let mut s = start_server();
    let sock = format!("--mysql-socket={}", s.socket.display());
    let base = [
        "oltp_read_write",
        sock.as_str(),
        "--mysql-user=sbtest",
        "--mysql-password=sbpass",
        "--table-size=1000",
        "--tables=2",
    ];
    let args = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    let run = |a: Vec<String>| versus(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(run(args(&["--threads=2", "prepare"])).status.success());
    let o = run(args(&["--threads=2", "prewarm"]));
    assert!(o.status.success() && text(&o).contains("Prewarming table sbtest2"), "{}", text(&o));

    // JSON over the unix socket, validated against the schema.
    let o = run(args(&["--time=2", "--threads=2", "--report-interval=1", "--format=json", "run"]));
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(doc["totals"]["events"].as_u64().unwrap() > 0);

    // Ctrl-C: the report of what was measured, and a non-zero exit.
    let bin = assert_cmd::cargo::cargo_bin("versus");
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=60", "run"]))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{t}");
    assert!(t.contains("SQL statistics:") && t.contains("Threads fairness:"), "{t}");
    // `timeout -s INT` signals the child and then its process group at once: still one Ctrl-C.
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=60", "--threads=2", "run"]))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    for _ in 0..2 {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT)
            .unwrap();
        // Two deliveries (not merged into one pending signal), yet well within one request.
        std::thread::sleep(Duration::from_micros(300));
    }
    let out = child.wait_with_output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{t}");
    assert!(t.contains("SQL statistics:"), "a double signal sent at once must still give the report: {t}");

    // Lost connections: kill the workers' connections mid-run; they reconnect and are counted, in both
    // threading models.
    for model in ["--client-threads=0", "--client-threads=1"] {
        let child = std::process::Command::new(&bin)
            .arg("sysbench")
            .args(args(&["--time=4", "--threads=2", model, "run"]))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let mut root = s.root_conn();
        let ids: Vec<u64> = root.query("SELECT id FROM information_schema.processlist WHERE user='sbtest'").unwrap();
        assert!(!ids.is_empty());
        for id in &ids {
            let _ = root.query_drop(format!("KILL {id}"));
        }
        let out = child.wait_with_output().unwrap();
        let t = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{t}");
        let reconnects: u64 = t
            .lines()
            .find(|l| l.trim_start().starts_with("reconnects:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .expect("reconnects line");
        assert!(reconnects >= 1, "{model}: {t}");
    }

    // The server away for a while (restarted mid-run): said once on stderr; the workers reconnect.
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=6", "--threads=2", "run"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    s.sandbox().stop().expect("stop the server mid-run");
    std::thread::sleep(Duration::from_millis(500));
    s.sandbox().restart().expect("start it again");
    let out = child.wait_with_output().unwrap();
    let (t, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{t}{err}");
    assert_eq!(err.matches("the server cannot be reached").count(), 1, "{err}");
    assert!(t.contains("reconnects:") && !t.contains("reconnects:                           0 "), "{t}");
    assert!(run(args(&["cleanup"])).status.success());
}

// ---------- legacy command lines from the field (issue appendix), with small tables ----------

#[test]
fn appendix_command_lines_run() {
    let s = start_server();
    let sock = s.socket.display().to_string();
    let port = s.port.to_string();
    let run = |line: &str| -> Output {
        let line = line.replace("SOCK", &sock).replace("PORT", &port);
        let args: Vec<&str> = line.split_whitespace().collect();
        let o = versus(&args);
        assert!(o.status.success(), "{line}\n{}", text(&o));
        o
    };
    // 1: 1.0 style over a socket as root (tables prepared first).
    let l1 = "oltp_read_write --report-interval=1 --time=2 --threads=24 --tables=10 --table-size=100 --mysql-user=root --mysql-socket=SOCK --mysql-db=sbtest";
    run(&format!("{l1} prepare"));
    let o = run(&format!("{l1} run"));
    let t = text(&o);
    assert!(
        t.contains("Number of threads: 24") && t.contains("[ 1s ] thds: 24 tps: ") && t.contains("SQL statistics:"),
        "{t}"
    );
    run(&format!("{l1} cleanup"));

    // 2: a script path as the test name, storage engine with underscores.
    let l2 = "--db-driver=mysql --mysql-user=sbtest --mysql-password=sbpass --mysql-db=sbtest --mysql-host=127.0.0.1 --mysql-port=PORT --mysql_storage_engine=innodb --table_size=1000 --tables=2 --threads=2 /usr/share/sysbench/oltp_read_write.lua";
    let o = run(&format!("{l2} prepare"));
    assert!(text(&o).contains("Inserting 1000 records into 'sbtest2'"));
    run(&format!("{l2} cleanup"));

    // 3: sysbench 0.4, incupdate, batch mode.
    let l3 = "--batch --batch-delay=1 --test=oltp --mysql-host=127.0.0.1 --mysql-port=PORT --mysql-user=sbtest --mysql-password=sbpass --mysql-db=sbtest --oltp-table-size=1000 --max-time=2 --max-requests=0 --mysql-table-engine=innodb --db-ps-mode=disable --mysql-engine-trx=yes --oltp-table-name=sbtest1 --oltp-skip-trx --oltp-test-mode=incupdate --oltp-dist-type=uniform --oltp-range-size=10 --oltp-connect-delay=0 --percentile=99 --num-threads=1 --seed-rng=1413171854";
    run(&format!("{l3} prepare"));
    let o = run(&format!("{l3} run"));
    let t = text(&o);
    assert!(t.contains("legacy command line mapped to: versus sysbench oltp_inc_update "), "{t}");
    assert!(t.contains("99th percentile:") && t.contains("[ 1s ] thds: 1"), "{t}");
    let writes: u64 = t
        .lines()
        .find(|l| l.trim_start().starts_with("write:"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(writes > 0, "{t}");
    let mut root = s.root_conn();
    let numeric: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.sbtest1 WHERE c NOT LIKE '%-%'").unwrap().unwrap();
    assert!(numeric > 0, "incupdate must have incremented c");
    run(&format!("{l3} cleanup"));

    // 4: sysbench 0.5 oltp.lua with client-side ids.
    let l4 = "--report-interval=1 --oltp-auto-inc=off --max-time=2 --max-requests=0 --mysql-engine-trx=yes --test=/usr/share/doc/sysbench/tests/db/oltp.lua --init-rng=on --oltp_index_updates=10 --oltp_non_index_updates=10 --oltp_distinct_ranges=15 --oltp_order_ranges=15 --oltp_tables_count=1 --num-threads=4 --oltp_table_size=1000 --mysql-db=sbtest --mysql-user=root --db-driver=mysql --mysql-socket=SOCK";
    run(&format!("{l4} prepare"));
    let o = run(&format!("{l4} run"));
    let t = text(&o);
    assert!(t.contains("mapped to: versus sysbench oltp_read_write ") && t.contains(" --auto-inc=off "), "{t}");
    assert!(t.contains("--index-updates=10") && t.contains("Number of threads: 4"), "{t}");
    run(&format!("{l4} cleanup"));
}

#[test]
fn forced_shutdown_and_dry_run() {
    let t0 = std::time::Instant::now();
    let d = MockDriver::new().with_delay(Duration::from_secs(4));
    let r = mock_run(Test::OltpPointSelect, "--time=1 --forced-shutdown=1", d).unwrap();
    assert_eq!(r.forced_unfinished, Some(1));
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
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
fn prepare_methods_give_identical_tables() {
    let s = start_server();
    let mut root = s.root_conn();
    let conn: Vec<String> = conn_args(&s);
    let checksum = |root: &mut mysql::Conn| -> Vec<(String, u64)> {
        root.query("CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2").unwrap()
    };
    for auto_inc in ["--auto-inc=on", "--auto-inc=off"] {
        let mut sums = Vec::new();
        for method in ["--prepare-method=insert", "--prepare-method=load", "--prepare-method=auto"] {
            let mut a: Vec<String> =
                vec!["oltp_read_write".into(), "--tables=2".into(), "--table-size=20000".into(), "--threads=2".into()];
            a.extend(conn.iter().cloned());
            a.push(auto_inc.into());
            a.push(method.into());
            let args = |cmd: &str| -> Vec<String> { a.iter().cloned().chain([cmd.to_string()]).collect() };
            let o = versus(&args("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
            assert!(o.status.success(), "{}", text(&o));
            let count: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.sbtest2").unwrap().unwrap();
            assert_eq!(count, 20_000);
            sums.push(checksum(&mut root));
            assert!(versus(&args("cleanup").iter().map(|x| x.as_str()).collect::<Vec<_>>()).status.success());
        }
        assert_eq!(sums[0], sums[1], "{auto_inc}: LOAD DATA and INSERT must give identical tables");
        assert_eq!(sums[0], sums[2]);
    }
    // Against sysbench's own prepare: the same shape and the same size on disk (values differ: other
    // random streams).
    let shape = |root: &mut mysql::Conn| -> Vec<Vec<String>> {
        root.query_drop("ANALYZE TABLE sbtest.sbtest1, sbtest.sbtest2").unwrap();
        let q = "SELECT t.table_name, t.data_length, t.index_length, (SELECT COUNT(*) FROM information_schema.statistics \
                 s WHERE s.table_schema = t.table_schema AND s.table_name = t.table_name) FROM information_schema.tables t \
                 WHERE t.table_schema = 'sbtest' ORDER BY 1";
        let mut rows: Vec<Vec<String>> = root
            .query_map(q, |(n, d, i, k): (String, u64, u64, u64)| vec![n, d.to_string(), i.to_string(), k.to_string()])
            .unwrap();
        for (t, row) in rows.iter_mut().enumerate() {
            let cols: (u64, u64, u64, u64, u64, u64) = root
                .query_first(format!(
                    "SELECT COUNT(*), MIN(id), MAX(id), SUM(LENGTH(c)), SUM(LENGTH(pad)), \
                     SUM(k BETWEEN 1 AND 20000) FROM sbtest.sbtest{}",
                    t + 1
                ))
                .unwrap()
                .unwrap();
            row.push(format!("{cols:?}"));
        }
        rows
    };
    let mut a: Vec<String> =
        vec!["oltp_read_write".into(), "--tables=2".into(), "--table-size=20000".into(), "--threads=2".into()];
    a.extend(conn.iter().cloned());
    let with = |cmd: &str| -> Vec<String> { a.iter().cloned().chain([cmd.to_string()]).collect() };
    let o = sysbench(&with("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    let theirs = shape(&mut root);
    assert!(sysbench(&with("cleanup").iter().map(|x| x.as_str()).collect::<Vec<_>>()).status.success());
    let o = versus(&with("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(shape(&mut root), theirs, "versus's prepare must give sysbench's table shape and size");
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
    impl runner::Observer for Seen {
        fn warmup_done(&mut self) {
            self.warmups += 1;
        }
        fn checkpoint(&mut self, r: &RunResult) {
            self.checkpoints.push(r.counts.events);
        }
    }
    let d = MockDriver::new().with_delay(Duration::from_millis(2));
    let inv = options::parse(&["oltp_point_select", "--time=2", "--warmup-time=1", "run"].map(String::from)).unwrap();
    let mut seen = Seen { warmups: 0, checkpoints: Vec::new() };
    let r = runner::run(
        Test::OltpPointSelect,
        &inv.options,
        Arc::new(d.clone()),
        Arc::new(AtomicBool::new(false)),
        &mut seen,
    )
    .unwrap();
    assert_eq!(seen.warmups, 1);
    // Only the 2 measured seconds count: about 2 s / 2 ms events, not 3 s worth.
    assert!((r.time_interval.as_secs_f64() - 2.0).abs() < 0.3, "{:?}", r.time_interval);
    assert!((r.total_time.as_secs_f64() - 2.0).abs() < 0.3, "total time excludes the warm-up: {:?}", r.total_time);
    assert!(r.counts.events < d.executions() as u64 * 4 / 5, "{} of {}", r.counts.events, d.executions());
    let inv =
        options::parse(&["oltp_point_select", "--time=2", "--report-checkpoints=1", "run"].map(String::from)).unwrap();
    let mut seen = Seen { warmups: 0, checkpoints: Vec::new() };
    let d = MockDriver::new().with_delay(Duration::from_millis(2));
    let r = runner::run(
        Test::OltpPointSelect,
        &inv.options,
        Arc::new(d.clone()),
        Arc::new(AtomicBool::new(false)),
        &mut seen,
    )
    .unwrap();
    assert_eq!(seen.checkpoints.len(), 1);
    assert_eq!(seen.checkpoints[0] + r.counts.events, d.executions() as u64, "checkpoint resets the counts");
}
