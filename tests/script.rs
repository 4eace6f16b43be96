//! Script workloads against real servers the tests start: weights and pgbench's distributions, the
//! per-statement figures, the same server work per transaction as `versus sysbench
//! oltp_point_select`, bad input as one-line errors, and a cross-version experiment whose slower
//! statement and changed plan the report names.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mysql::prelude::Queryable;
use versus::metric::Metric;
use versus::report::{self, Format, Selection};
use versus::server::Home;
use versus::stats::Verdict;
use versus::store::Store;
use versus::workload::script::{parse, random, run};
use versus::workload::sysbench::options;
use versus::workload::sysbench::runner::{self, Quiet, Source};

fn connect_args(s: &common::TestServer) -> Vec<String> {
    vec![
        format!("--mysql-host={}", s.host),
        format!("--mysql-port={}", s.port),
        format!("--mysql-user={}", s.user),
        format!("--mysql-password={}", s.password),
        format!("--mysql-db={}", s.db),
    ]
}

fn versus(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_versus")).args(args).output().expect("versus runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The options of a script run against `s`, from sysbench-style arguments.
fn run_options(s: &common::TestServer, extra: &[&str]) -> options::Options {
    let mut args = connect_args(s);
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut o = options::parse(&args).unwrap().options;
    o.connect.stmt_cache_size = 64;
    o
}

const DRAWS: &str = r#"-- @setup
CREATE TABLE draws (id BIGINT AUTO_INCREMENT PRIMARY KEY, kind INT NOT NULL, v INT NOT NULL);
-- @transaction gaussian
-- @weight 3
\set u random(1, 20)
\set g random_gaussian(1, 20, 2.5)
INSERT INTO draws (kind, v) VALUES (1, :u), (2, :g);
-- @transaction skewed
-- @weight 1
\set e random_exponential(1, 20, 3.0)
\set z random_zipfian(1, 20, 1.3)
BEGIN;
INSERT INTO draws (kind, v) VALUES (3, :e);
INSERT INTO draws (kind, v) VALUES (4, :z);
COMMIT;
"#;

/// A two-transaction script with weights 3 and 1 and four distributions: the transactions follow the
/// weights within 2 %, every distribution passes a chi-square test at 1 % on the rows the server
/// stored, and each statement's histogram holds exactly as many executions as the server saw.
#[test]
fn weights_distributions_and_per_statement_counts() {
    let server = common::start_server();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "draws.sql", DRAWS);
    let (s, _) = parse::load(Path::new(&file), 1, &[]).unwrap();
    let s = Arc::new(s);
    let o = run_options(&server, &["--threads=4", "--events=8000", "--time=0", "--rand-seed=7"]);
    let driver = versus::workload::sysbench::driver_for(&o);
    let mut c = driver.connect().unwrap();
    run::setup(&s, c.as_mut(), 1, &|_| {}).unwrap();

    let events = run::events(s.clone(), 4, Arc::new(AtomicBool::new(false)));
    let r =
        runner::run_source(Source::Custom(events.factory()), &o, driver, Arc::new(AtomicBool::new(false)), &mut Quiet)
            .unwrap();
    let f = events.figures();
    assert_eq!(r.counts.events, 8000);
    assert_eq!(f.transactions.iter().sum::<u64>(), 8000, "every finished event is one transaction");
    let share = f.transactions[0] as f64 / 8000.0;
    assert!((share - 0.75).abs() <= 0.02 * 0.75, "weight 3 of 4: {share}");

    let mut root = server.root_conn();
    let mut count = |kind: i32| -> u64 {
        root.query_first(format!("SELECT COUNT(*) FROM sbtest.draws WHERE kind = {kind}")).unwrap().unwrap()
    };
    // Statement 1 inserts kinds 1 and 2; statements 3 and 4 (after BEGIN) kinds 3 and 4.
    let hist_len = |n: usize| f.latency[n - 1].len();
    assert_eq!(hist_len(1), count(1));
    assert_eq!(hist_len(1), count(2));
    assert_eq!(hist_len(3), count(3));
    assert_eq!(hist_len(4), count(4));
    assert_eq!(hist_len(2), f.transactions[1], "BEGIN runs once per 'skewed' transaction");
    assert_eq!(hist_len(5), f.transactions[1]);
    assert_eq!(hist_len(1), f.transactions[0]);
    assert!(f.errors.iter().all(|e| *e == 0));

    for (kind, name, p) in [(1, "uniform", 0.0), (2, "gaussian", 2.5), (3, "exponential", 3.0), (4, "zipfian", 1.3)] {
        let rows: Vec<(i64, u64)> = root
            .query(format!("SELECT v, COUNT(*) FROM sbtest.draws WHERE kind = {kind} GROUP BY v ORDER BY v"))
            .unwrap();
        let mut counts = vec![0u64; 20];
        for (v, n) in rows {
            assert!((1..=20).contains(&v), "{name}: {v} is out of range");
            counts[(v - 1) as usize] = n;
        }
        let (x, critical) = random::chi_square(&counts, &random::probabilities(name, 1, 20, p));
        assert!(x < critical, "{name}: chi-square {x:.1} ≥ {critical:.1} at 1 %: {counts:?}");
        // The check can fail: the uniform draws are not Gaussian.
        if name == "uniform" {
            let (x, critical) = random::chi_square(&counts, &random::probabilities("gaussian", 1, 20, 2.5));
            assert!(x > critical, "the uniform draws do not pass as Gaussian");
        }
    }
}

/// `SELECT c FROM sbtest1 WHERE id=:id`, prepared, is what `versus sysbench oltp_point_select` sends:
/// the server does the same work per transaction (within 1 %).
#[test]
fn a_point_select_script_costs_the_server_what_oltp_point_select_costs() {
    let server = common::start_server();
    let dir = tempfile::tempdir().unwrap();
    let mut sb = vec!["oltp_point_select".to_string(), "--tables=1".into(), "--table-size=10000".into()];
    sb.extend(connect_args(&server));
    let mut prepare = sb.clone();
    prepare.push("prepare".into());
    let out = common::versus_sysbench(&prepare.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", common::output_text(&out));
    let counters =
        ["Questions", "Com_stmt_execute", "Handler_read_key", "Rows_read", "Rows_sent", "Bytes_received", "Bytes_sent"];
    let mut root = server.root_conn();
    let mut status = || -> Vec<f64> {
        let rows: Vec<(String, String)> = root.query("SHOW GLOBAL STATUS").unwrap();
        counters.iter().map(|c| rows.iter().find(|(k, _)| k == c).unwrap().1.parse().unwrap()).collect()
    };
    const EVENTS: f64 = 20000.0;
    let mut run = sb.clone();
    run.extend(["--threads=2".into(), "--events=20000".into(), "--time=0".into(), "run".into()]);
    let before = status();
    let out = common::versus_sysbench(&run.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", common::output_text(&out));
    let sysbench: Vec<f64> = status().iter().zip(&before).map(|(a, b)| (a - b) / EVENTS).collect();

    let file = write(dir.path(), "point.sql", "\\set id random(1, 10000)\nSELECT c FROM sbtest1 WHERE id=:id;\n");
    let mut args = vec![file];
    args.extend(connect_args(&server));
    args.extend(["--threads=2".into(), "--events=20000".into(), "--time=0".into(), "run".into()]);
    let before = status();
    let mut full = vec!["script".to_string()];
    full.extend(args);
    let out = versus(&full);
    assert!(out.status.success(), "{}", common::output_text(&out));
    let script: Vec<f64> = status().iter().zip(&before).map(|(a, b)| (a - b) / EVENTS).collect();
    for (i, c) in counters.iter().enumerate() {
        let (a, b) = (sysbench[i], script[i]);
        assert!(a > 0.0, "{c} counts the point selects");
        assert!((b / a - 1.0).abs() <= 0.01, "{c} per transaction: sysbench {a:.3}, script {b:.3}");
    }
}

/// Syntax errors, unknown variables, an empty file and a statement the server refuses are one-line
/// errors naming the file and line; `--ignore-errors` counts refused statements as sysbench does.
#[test]
fn bad_input_is_one_line_naming_the_file_and_line() {
    let server = common::start_server();
    let dir = tempfile::tempdir().unwrap();
    let fails = |name: &str, text: &str, extra: &[&str], want: &str| {
        let file = write(dir.path(), name, text);
        let mut args = vec!["script".to_string(), file];
        args.extend(connect_args(&server));
        args.extend(extra.iter().map(|a| a.to_string()));
        let out = versus(&args);
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        assert!(!out.status.success(), "{name} fails");
        assert!(err.contains(want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    };
    fails("syntax.sql", "\\set a random(1,\nSELECT :a;\n", &["run"], "syntax.sql:1:17: the expression ends too early");
    fails("unknown.sql", "SELECT 1;\nSELECT :nope;\n", &["run"], "unknown.sql:2:8: unknown variable :nope");
    fails("empty.sql", "", &["run"], "empty.sql:1:1: the script is empty");
    fails("refused.sql", "SELECT 1;\nSELECT nosuchcolumn FROM mysql.user;\n", &["--time=2", "run"], "refused.sql:2:1:");
    server.root_exec(&["CREATE TABLE sbtest.one (id INT PRIMARY KEY)", "INSERT INTO sbtest.one VALUES (1)"]);
    // Without --ignore-errors the duplicate key stops the run; with it, it is counted and retried.
    let file = write(dir.path(), "dup2.sql", "INSERT INTO one VALUES (1);\n");
    let mut args = vec!["script".to_string(), file.clone()];
    args.extend(connect_args(&server));
    args.extend(["--time=2".into(), "run".into()]);
    let out = versus(&args);
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert!(!out.status.success() && err.contains("dup2.sql:1:1: statement 1:") && err.contains("1062"), "{err}");
    args.insert(2, "--ignore-errors=1062".into());
    let out = versus(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let ignored: u64 = text
        .lines()
        .find(|l| l.trim_start().starts_with("ignored errors:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(ignored > 0, "{text}");
    let per_statement = text.lines().find(|l| l.contains("dup2.sql:1")).unwrap();
    assert!(
        per_statement.split_whitespace().any(|w| w == ignored.to_string()),
        "the statement's failures: {per_statement}"
    );
}

const OR_SCRIPT: &str = r#"-- @setup
CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, pad CHAR(100), KEY ka (a), KEY kb (b));
INSERT INTO t SELECT seq, seq, seq, 'x' FROM seq_1_to_30000;
ANALYZE TABLE t;
-- @transaction point
\set id random(1, 30000)
SELECT pad FROM t WHERE id = :id;
-- @transaction either
\set x random(1, 30000)
\set y random(1, 30000)
SELECT count(*) FROM t WHERE a = :x OR b = :y;
"#;

/// The same script on MariaDB 10.11 and 11.8, with the index merge switched off on 11.8: the OR query's
/// plan changes (an index merge becomes a scan), the report calls it slower and flags the plan.
#[test]
fn a_statement_slower_on_another_version_is_named_with_its_changed_plan() {
    let system = common::system_build();
    let m118 = common::fetched_build("mariadb-11.8");
    let dir = tempfile::Builder::new().prefix("versus-script-").tempdir().unwrap();
    let home = Home::at(dir.path());
    home.register(&system).unwrap();
    home.register(&m118).unwrap();
    std::fs::write(dir.path().join("or.sql"), OR_SCRIPT).unwrap();
    let exp = format!(
        r#"
name = "script-versions"
duration = 3
repetitions = 3
threads = [2]
order = "interleaved"
[[targets]]
name = "10.11"
build = "{}"
[[targets]]
name = "11.8"
build = "{}"
set = {{ optimizer_switch = "index_merge=off" }}
[[workloads]]
script = "or.sql"
"#,
        system.name, m118.name
    );
    std::fs::write(dir.path().join("exp.toml"), &exp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["run", &dir.path().join("exp.toml").display().to_string()])
        .env("VERSUS_HOME", dir.path())
        .env_remove("VERSUS_DB")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::output_text(&out));
    let store = Store::open(dir.path().join("results.db")).unwrap();
    let r = report::build_report(&store, &Selection { metric: Metric::Tps, ..Selection::default() }).unwrap();
    assert_eq!(r.statements.len(), 1, "one script section");
    let sec = &r.statements[0];
    assert_eq!(sec.sides, ["10.11", "11.8"]);
    let or = &sec.statements[1];
    assert!(or.text.contains("a = :x OR b = :y"));
    let c = &or.comparisons[0];
    assert!(c.plan_changed, "plans: {:?} vs {:?}", or.sides[0].plan, or.sides[1].plan);
    assert!(or.sides[0].plan.as_deref().unwrap().contains("index_merge"), "{:?}", or.sides[0].plan);
    assert_eq!(c.verdict, Some(Verdict::Slower), "{c:?}");
    assert!(c.ratio.unwrap() > 2.0, "{c:?}");
    assert!(or.sides.iter().all(|s| s.count > 0 && s.runs == 3), "{:?}", or.sides);
    let md = report::render(&r, Format::Markdown).unwrap();
    let line = md.lines().find(|l| l.contains("statement 2 of or.sql")).unwrap_or_else(|| panic!("{md}"));
    assert!(line.contains("slower on 11.8") && line.contains("plan changed"), "{line}");
    let html = report::render(&r, Format::Html).unwrap();
    assert!(html.contains("Statements of or.sql") && html.contains("changed"));
    let json: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(json["statements"][0]["statements"][1]["comparisons"][0]["plan_changed"], true);
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/compare-report.schema.json").unwrap()).unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
