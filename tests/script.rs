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
use versus::workload::SectionOut;
use versus::workload::script::stored::Section;
use versus::workload::script::{parse, random, run, section};
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

    let events = run::events(s.clone(), 4, Arc::new(AtomicBool::new(false)), 7);
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

const BRANCHES: &str = r#"-- @setup
CREATE TABLE picks (id BIGINT AUTO_INCREMENT PRIMARY KEY, branch CHAR(4) NOT NULL, r INT NOT NULL,
  p BIGINT NOT NULL, h BIGINT NOT NULL, f BIGINT NOT NULL);
-- @transaction pick
\set r random(0, 99)
\set p permute(:r, 100, 7)
\if :r < 30 and not :r = 29
\set h hash(:r, 5432)
INSERT INTO picks (branch, r, p, h, f) VALUES ('low', :r, :p, :h, 0);
\elif :r >= 90 or :r = 29
\set h hash_murmur2(:r)
INSERT INTO picks (branch, r, p, h, f) VALUES ('edge', :r, :p, :h, 0);
\else
\set h hash_fnv1a(:r, 5432)
\set m :r & 7 | 8 << 1 # 1
INSERT INTO picks (branch, r, p, h, f) VALUES ('mid', :r, :p, :h, :m);
\endif
"#;

/// `\if`/`\elif`/`\else`, comparisons and logic, `hash*` and `permute` against a real server: every
/// row went through the branch its draw selects, with the values pgbench's functions give (computed
/// here by the library and compared with what the server stored), and each branch's statement counts
/// match the rows.
#[test]
fn conditionals_hash_and_permute() {
    let server = common::start_server();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "branches.sql", BRANCHES);
    let defines = [("default_seed".to_string(), versus::workload::script::expr::Value::Int(99))];
    let (s, _) = parse::load(Path::new(&file), 1, &defines).unwrap();
    let s = Arc::new(s);
    let o = run_options(&server, &["--threads=2", "--events=3000", "--time=0", "--rand-seed=11"]);
    let driver = versus::workload::sysbench::driver_for(&o);
    let mut c = driver.connect().unwrap();
    run::setup(&s, c.as_mut(), 1, &|_| {}).unwrap();
    let events = run::events(s.clone(), 2, Arc::new(AtomicBool::new(false)), 11);
    runner::run_source(Source::Custom(events.factory()), &o, driver, Arc::new(AtomicBool::new(false)), &mut Quiet)
        .unwrap();
    let f = events.figures();
    assert_eq!(f.transactions[0], 3000);

    let mut root = server.root_conn();
    let rows: Vec<(String, i64, i64, i64, i64)> = root.query("SELECT branch, r, p, h, f FROM sbtest.picks").unwrap();
    assert_eq!(rows.len(), 3000, "one insert per transaction, whichever branch");
    use versus::workload::script::hash;
    let mut seen = std::collections::BTreeMap::new();
    for (branch, r, p, h, fv) in &rows {
        let want_branch = if *r < 30 && *r != 29 {
            "low"
        } else if *r >= 90 || *r == 29 {
            "edge"
        } else {
            "mid"
        };
        assert_eq!(branch, want_branch, "r = {r}");
        assert_eq!(*p, hash::permute(*r, 100, 7), "permute({r}, 100, 7)");
        let want_h = match want_branch {
            "low" => hash::murmur2(*r, 5432),
            "edge" => hash::murmur2(*r, 99),
            _ => hash::fnv1a(*r, 5432),
        };
        assert_eq!(*h, want_h, "{branch} hash of {r}");
        assert_eq!(*fv, if want_branch == "mid" { (((r & 7) | 8) << 1) ^ 1 } else { 0 }, "left to right");
        seen.insert(*r, *p);
    }
    assert!(seen.len() > 90, "most of the 100 draws seen: {}", seen.len());
    let images: std::collections::BTreeSet<i64> = seen.values().copied().collect();
    assert_eq!(images.len(), seen.len(), "permute maps distinct draws to distinct values");
    let count = |b: &str| rows.iter().filter(|r| r.0 == b).count() as u64;
    // Statements 1, 2, 3 are the low, edge and mid inserts.
    assert_eq!(f.latency[0].len(), count("low"));
    assert_eq!(f.latency[1].len(), count("edge"));
    assert_eq!(f.latency[2].len(), count("mid"));
    assert!(count("low") > 0 && count("edge") > 0 && count("mid") > 0);
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
    // A bound beyond 64-bit integers is refused when the script is read, not rounded through a double.
    let wide = "\\set a random(1, 9223372036854775808)\nSELECT :a;\n";
    fails("wide.sql", wide, &["run"], "wide.sql:1:18: integer constant 9223372036854775808 is out of range");
    let wide = "\\set a random(1, 9.3e18)\nSELECT :a;\n";
    fails("wide2.sql", wide, &["run"], "a random bound must be an integer, not 9300000000000000000");
    for d in [&["--define", "n=9223372036854775808", "run"][..], &["--define=n=9223372036854775808", "run"]] {
        fails("define.sql", "SELECT :n;\n", d, "--define: n: 9223372036854775808 is out of the integer range");
    }
    fails("refused.sql", "SELECT 1;\nSELECT nosuchcolumn FROM mysql.user;\n", &["--time=2", "run"], "refused.sql:2:1:");
    let deep = format!("SELECT 1;\n\\set x {}1{}\nSELECT :x;\n", "(".repeat(3000), ")".repeat(3000));
    fails("deep.sql", &deep, &["run"], "deep.sql:2:");
    fails("deep2.sql", &deep, &["run"], "nests deeper than 64 levels");
    // FILE@0 would never run the file: refused like a file whose weights are all 0.
    let zero = write(dir.path(), "zero.sql", "SELECT 1;\n");
    let mut args = vec!["script".to_string(), format!("{zero}@0")];
    args.extend(connect_args(&server));
    args.push("run".into());
    let out = versus(&args);
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("zero.sql@0: the weight after @ must be at least 1") && err.lines().count() == 1, "{err}");
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
    // The plans are stored once per target (cell), by its first repetition.
    let exp_id = store.latest_experiment_named("script-versions").unwrap().unwrap().id;
    let with_plans: Vec<(String, u32)> = store
        .runs(exp_id)
        .unwrap()
        .iter()
        .map(|row| store.run(row.id).unwrap().unwrap())
        .filter(|d| d.command.as_ref().and_then(|c| c.get("plans")).is_some_and(|p| p.is_array()))
        .map(|d| (d.run.cell.target.clone(), d.run.repetition))
        .collect();
    assert_eq!(with_plans.len(), 2, "{with_plans:?}");
    assert!(with_plans.iter().all(|(_, rep)| *rep == 1), "{with_plans:?}");
    let r = report::build_report(&store, &Selection { metric: Metric::Tps, ..Selection::default() }).unwrap();
    let statements: Vec<Section> = r.sections.typed(section::KEY);
    assert_eq!(statements.len(), 1, "one script section");
    let sec = &statements[0];
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

/// Stores a script experiment of two targets without a server (the figures are made up, the store and
/// the reports are real): three repetitions each; statement 1 costs the same on both, statement 2 is
/// ten times slower on "11.8" and its plan's shape differs.
fn synthetic_script_store(path: &Path) -> Store {
    use versus::store::{NewCell, NewExperiment, NewRun, RunResult, StartRun, StoredHistogram, Summary};
    let mut store = Store::open(path).unwrap();
    let cells: Vec<NewCell> = ["10.11", "11.8"]
        .iter()
        .map(|t| NewCell {
            key: format!("target={t};workload=or.sql;threads=2"),
            target: t.to_string(),
            build: Some(t.to_string()),
            config: Some("default".into()),
            workload: "or.sql".into(),
            threads: 2,
            workload_options: serde_json::json!({ "script": "or.sql", "text": OR_SCRIPT }),
        })
        .collect();
    let runs = (1..=3).flat_map(|rep| (0..2).map(move |cell| NewRun { cell, repetition: rep })).collect();
    let id = store
        .create_experiment(&NewExperiment {
            name: "script-synthetic".into(),
            file: None,
            definition: "name = \"script-synthetic\"\n".into(),
            seed: 1,
            host: Default::default(),
            cells,
            runs,
        })
        .unwrap();
    let plan = |access: &str, key: Option<&str>| {
        let mut table = serde_json::json!({ "table_name": "t", "access_type": access });
        if let Some(k) = key {
            table["key"] = k.into();
        }
        serde_json::json!({ "query_block": { "table": table } })
    };
    for row in store.runs(id).unwrap() {
        let slow = row.cell.target == "11.8";
        let rep = f64::from(row.repetition);
        let command = if row.repetition == 1 {
            let either = if slow { plan("ALL", None) } else { plan("index_merge", Some("ka")) };
            serde_json::json!({ "plans": [
                { "statement": 1, "plan": plan("const", Some("PRIMARY")) },
                { "statement": 2, "plan": either },
            ] })
        } else {
            serde_json::json!({})
        };
        store.start_run(row.id, &StartRun { server_version: format!("{}-MariaDB", row.cell.target), command }).unwrap();
        // Per statement: 100 executions around a mean that moves a little with the repetition.
        let means =
            [100.0 + 2.0 * (rep - 2.0), if slow { 2000.0 + 40.0 * (rep - 2.0) } else { 200.0 - 3.0 * (rep - 2.0) }];
        let mut histograms = Vec::new();
        for (i, mean) in means.iter().enumerate() {
            let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
            for q in 0..100u64 {
                h.record((mean * (0.5 + q as f64 / 99.0)) as u64).unwrap();
            }
            histograms.push(StoredHistogram {
                kind: versus::workload::script::stored::histogram_kind(i + 1),
                t_s: None,
                data: versus::store::encode_histogram(&h).unwrap(),
            });
        }
        let status_deltas = vec![
            (versus::workload::script::stored::errors_key(1), 0),
            (versus::workload::script::stored::errors_key(2), if slow { 1 } else { 0 }),
            (versus::workload::script::stored::transaction_key(1), 100),
            (versus::workload::script::stored::transaction_key(2), 100),
        ];
        let summary = Summary {
            events: 200,
            tps: if slow { 20.0 } else { 60.0 } + rep,
            qps: 40.0,
            duration_s: 10.0,
            ..Summary::default()
        };
        let result = RunResult { summary, histograms, status_deltas, ..RunResult::default() };
        store.finish_run(row.id, &result).unwrap();
    }
    store
}

/// The per-statement section in every format (snapshots), with the same numbers in each: statement 2
/// is slower on 11.8 with its changed plan flagged, statement 1 is not called a change.
#[test]
fn statement_tables_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = synthetic_script_store(&dir.path().join("results.db"));
    let r = report::build_report(&store, &Selection { metric: Metric::Tps, ..Selection::default() }).unwrap();
    let statements: Vec<Section> = r.sections.typed(section::KEY);
    assert_eq!(statements.len(), 1);
    let sec = &statements[0];
    let slow = &sec.statements[1].comparisons[0];
    assert_eq!(slow.verdict, Some(Verdict::Slower), "{slow:?}");
    assert!(slow.plan_changed);
    let ratio = slow.ratio.unwrap();
    assert!((ratio - 10.0).abs() < 0.5, "{ratio}");
    assert_ne!(sec.statements[0].comparisons[0].verdict, Some(Verdict::Slower));
    assert!(!sec.statements[0].comparisons[0].plan_changed);

    // One section, written once against the Writer interface, in each format's markup.
    let mut terminal = String::new();
    r.sections.write(&mut SectionOut::Text { out: &mut terminal, color: false });
    insta::assert_snapshot!("statements_terminal", terminal);
    let mut md = String::new();
    r.sections.write(&mut SectionOut::Markdown(&mut md));
    insta::assert_snapshot!("statements_markdown", md);
    let mut html = String::new();
    r.sections.write(&mut SectionOut::Html(&mut html));
    insta::assert_snapshot!("statements_html", html);
    let json: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
    insta::assert_snapshot!("statements_json", serde_json::to_string_pretty(&json["statements"]).unwrap());
    let csv = report::render(&r, Format::Csv).unwrap();
    let statement_rows: Vec<&str> = csv.lines().filter(|l| l.contains(",statement ")).collect();
    insta::assert_snapshot!("statements_csv", statement_rows.join("\n"));

    // The same ratio, interval and verdict in every format.
    let (lo, hi) = (slow.ci_low.unwrap(), slow.ci_high.unwrap());
    let csv_row = statement_rows.iter().find(|l| l.contains("statement 2 latency") && l.contains(",11.8,")).unwrap();
    let fields: Vec<&str> = csv_row.split(',').collect();
    assert_eq!(fields[13].parse::<f64>().unwrap(), ratio, "{csv_row}");
    assert_eq!(fields[14].parse::<f64>().unwrap(), lo, "{csv_row}");
    assert_eq!(fields[15].parse::<f64>().unwrap(), hi, "{csv_row}");
    assert_eq!(fields[19], "slower", "{csv_row}");
    assert!(csv_row.contains("plan changed: t:index_merge:ka -> t:ALL:-"), "{csv_row}");
    assert_eq!(json["statements"][0]["statements"][1]["comparisons"][0]["ratio"].as_f64(), Some(ratio));
    // `versus show` of a stored script run prints its per-statement figures (pgbench -r's table).
    let exp = store.latest_experiment_named("script-synthetic").unwrap().unwrap();
    let run_id = store.runs(exp.id).unwrap().iter().find(|r| r.cell.target == "11.8").unwrap().id;
    let db = dir.path().join("results.db").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["show", &run_id.to_string(), "--db", &db])
        .env("VERSUS_HOME", dir.path())
        .output()
        .unwrap();
    let text = common::output_text(&out);
    assert!(out.status.success(), "{text}");
    let row = text.lines().find(|l| l.contains("or.sql:11")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.split_whitespace().any(|w| w == "100"), "100 executions: {row}");
    let shown = format!("{ratio:.2}");
    for text in [&terminal, &md, &html] {
        let line = text.lines().find(|l| l.contains("statement 2 of or.sql")).unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains(&format!("{shown}× slower on 11.8")), "{line}");
        assert!(line.contains("plan changed"), "{line}");
    }
}
