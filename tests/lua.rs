//! `versus sysbench SCRIPT.lua`: users' sysbench Lua scripts run in versus's LuaJIT against real servers.
//! The scripts sysbench ships send the same statements as under sysbench (server counters per
//! transaction); a TPC-C-like script of our own prepares, runs, checks and cleans up; bad scripts fail
//! in one place with the file and line.

mod common;

use std::path::Path;
use std::process::Output;

use common::counters::{compare, conn_args, phases, sysbench};
use common::{output_text as text, start_server, versus_sysbench as versus};

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Every script the distribution's sysbench ships, run from its `.lua` file by versus (`--lua`), sends
/// the statements sysbench sends for it: prepare's and run's server counters agree within 1 %.
#[test]
fn shipped_scripts_send_the_same_statements_as_under_sysbench() {
    let s = start_server();
    let mut root = s.root_conn();
    let mut failures = Vec::new();
    // (script, events, options), sized as the built-in tests' own comparison: enough events that the
    // counters that depend on the random rows agree within 1 %.
    let cases: [(&str, u32, &[&str]); 11] = [
        ("oltp_read_write", 500, &["--tables=2"]),
        ("oltp_read_only", 500, &["--tables=2"]),
        ("oltp_write_only", 1000, &["--tables=2"]),
        ("oltp_point_select", 2000, &["--tables=2"]),
        ("oltp_update_index", 1000, &["--tables=2"]),
        ("oltp_update_non_index", 1000, &["--tables=2"]),
        ("oltp_insert", 1000, &["--tables=2"]),
        ("oltp_delete", 1000, &["--table-size=200000", "--rand-type=uniform"]),
        ("select_random_points", 20_000, &["--rand-type=uniform"]),
        ("select_random_ranges", 6000, &["--rand-type=uniform"]),
        ("bulk_insert", 1000, &[]),
    ];
    for (name, events, extra) in cases {
        let path = format!("/usr/share/sysbench/{name}.lua");
        assert!(Path::new(&path).is_file(), "the sysbench package ships {path}");
        let mut args = vec![path.clone()];
        args.extend(conn_args(&s));
        args.extend(["--table-size=5000", "--threads=2"].map(String::from));
        args.extend(extra.iter().map(|x| x.to_string()));
        let run_extra = vec![format!("--events={events}"), "--time=0".to_string()];
        let sb = phases(&mut root, &|a| sysbench(&strs(a)), &args, &run_extra);
        let vs = phases(
            &mut root,
            &|a| {
                let mut a = strs(a);
                a.insert(1, "--lua");
                versus(&a)
            },
            &args,
            &run_extra,
        );
        compare(&format!("{name}: prepare"), &sb.0, &vs.0, 1.0, &mut failures);
        // Whether the ranges' plan pushes conditions down to the index depends on when InnoDB last
        // sampled the new table's statistics, not on the statements (sysbench against itself gives
        // 0 or ~35 per transaction from one run to the next).
        let plan_free = |m: &std::collections::BTreeMap<String, i64>| {
            m.iter().filter(|(k, _)| !k.starts_with("Handler_icp_")).map(|(k, v)| (k.clone(), *v)).collect()
        };
        compare(&format!("{name}: run"), &plan_free(&sb.1), &plan_free(&vs.1), events as f64, &mut failures);
    }
    assert!(failures.is_empty(), "counters differ:\n{}", failures.join("\n"));
}

fn tpcc(s: &common::TestServer, extra: &[&str]) -> Output {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lua/tpcc_like.lua");
    let mut args = vec![script.to_string()];
    args.extend(conn_args(s));
    args.extend(extra.iter().map(|x| x.to_string()));
    versus(&strs(&args))
}

/// The TPC-C-like script (options, a parallel custom prepare and check, bulk inserts, foreign keys,
/// isolation per connection, ffi counters, require of its sibling) prepares, runs with JSON output,
/// passes its consistency check and cleans up; its rollbacks count as errors through `sb_counter_inc`.
#[test]
fn a_tpcc_like_script_prepares_runs_checks_and_cleans_up() {
    tpcc_round_trip(&start_server());
}

/// The same on MySQL 9.7 (caching_sha2_password, its own information_schema and foreign keys).
#[test]
fn a_tpcc_like_script_runs_on_mysql_9_7() {
    tpcc_round_trip(&common::start_server_of(common::fetched_build("mysql-9.7"), &[]));
}

fn tpcc_round_trip(s: &common::TestServer) {
    let ok = |o: Output, what: &str| {
        assert!(o.status.success(), "{what} failed:\n{}", text(&o));
        text(&o)
    };
    let t = ok(tpcc(s, &["--threads=2", "--scale=2", "prepare"]), "prepare");
    assert!(t.contains("Loading warehouse 2 of set 1"), "{t}");
    let mut root = s.root_conn();
    use mysql::prelude::Queryable;
    let customers: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.customer1").unwrap().unwrap();
    assert_eq!(customers, 2 * 10 * 30);
    let fks: u64 = root
        .query_first(
            "SELECT COUNT(*) FROM information_schema.referential_constraints WHERE constraint_schema = 'sbtest'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(fks, 4, "use_fk=1 creates the foreign keys");
    let o = tpcc(s, &["--threads=2", "--events=400", "--time=0", "--trx_level=RC", "--format=json", "run"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(doc["totals"]["events"], 400, "{doc}");
    assert!(doc["test"].as_str().unwrap().ends_with("tpcc_like.lua"));
    assert!(common::sysbench_schema_errors(&doc).is_empty(), "{:?}", common::sysbench_schema_errors(&doc));
    let orders: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.orders1").unwrap().unwrap();
    assert!(orders > 600, "new orders were written: {orders}");
    let t = ok(tpcc(s, &["--threads=2", "check"]), "check");
    assert_eq!(t.matches("consistency checks passed").count(), 2, "{t}");
    // A broken invariant is caught by the check, which fails.
    root.query_drop("UPDATE sbtest.district1 SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 1").unwrap();
    let o = tpcc(s, &["--threads=2", "check"]);
    assert!(!o.status.success() && text(&o).contains("consistency checks failed"), "{}", text(&o));
    ok(tpcc(s, &["cleanup"]), "cleanup");
    let left: u64 = root
        .query_first("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'")
        .unwrap()
        .unwrap();
    assert_eq!(left, 0);
}

/// A script of one's own: declared options typed, rows read back through query, query_row and fetch_row,
/// prepared statements with parameters, ffi counters, and errors that name the script's line.
#[test]
fn a_script_of_ones_own_reads_rows_and_fails_at_its_line() {
    let s = start_server();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("mine.lua");
    std::fs::write(
        &script,
        r#"
sysbench.cmdline.options = { rows = {"Rows", 5}, word = {"A word", "abc"}, fail = {"Fail in event", false},
  ins = {"Insert a row with a NULL per event", false} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE n (id INT PRIMARY KEY, v INT NULL)")
  con:query("INSERT INTO n VALUES (1, 0), (1000001, 0)")
  con:query("CREATE TABLE t (id INT PRIMARY KEY, w VARCHAR(20))")
  con:bulk_insert_init("INSERT INTO t VALUES")
  for i = 1, sysbench.opt.rows do con:bulk_insert_next(string.format("(%d, '%s')", i, sysbench.opt.word)) end
  con:bulk_insert_done()
end
function cleanup() sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS t, n") end
function sysbench.hooks.sql_error_ignorable(err) return err.sql_errno == 1062 end
function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("SELECT w FROM t WHERE id = ?")
  p = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(p)
  ins = con:prepare("INSERT INTO n VALUES (?, ?)")
  a, b = ins:bind_create(sysbench.sql.type.INT), ins:bind_create(sysbench.sql.type.INT)
  ins:bind_param(a, b)
  counter = 0
end
function event()
  local n, w = con:query_row("SELECT COUNT(*), MAX(w) FROM t")
  assert(n == tostring(sysbench.opt.rows) and w == sysbench.opt.word, "rows read back: " .. tostring(n) .. " " .. tostring(w))
  local rs = con:query("SELECT id FROM t ORDER BY id")
  assert(rs.nrows == sysbench.opt.rows and rs.nfields == 1)
  assert(rs:fetch_row()[1] == "1")
  p:set(sysbench.rand.uniform(1, sysbench.opt.rows))
  stmt:execute()
  if sysbench.opt.ins then
    -- The first id of each thread exists: a duplicate key the script's hook calls ignorable.
    counter = counter + 1
    a:set(sysbench.tid * 1000000 + counter)
    b:set(nil)
    ins:execute()
  end
  if sysbench.opt.fail then
    error("failing on purpose")
  end
end
"#,
    )
    .unwrap();
    let path = script.display().to_string();
    let mut base = vec![path.clone()];
    base.extend(conn_args(&s));
    let run = |extra: &[&str]| {
        let mut a = base.clone();
        a.extend(extra.iter().map(|x| x.to_string()));
        versus(&strs(&a))
    };
    let o = run(&["--rows=7", "--word=xyz", "prepare"]);
    assert!(o.status.success(), "{}", text(&o));
    let o =
        run(&["--rows=7", "--word=xyz", "--ins=on", "--events=50", "--time=0", "--threads=2", "--format=json", "run"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Per event: a COUNT, a SELECT with rows, a prepared SELECT (three reads) and an INSERT; the first
    // event of each thread ran twice, its duplicate key ignored through the script's hook.
    assert_eq!(doc["totals"]["events"], 50);
    assert_eq!(doc["totals"]["reads"], 150 + 2 * 3, "{}", doc["totals"]);
    assert_eq!(doc["totals"]["errors"], 2, "{}", doc["totals"]);
    use mysql::prelude::Queryable;
    let nulls: u64 = s.root_conn().query_first("SELECT COUNT(*) FROM sbtest.n WHERE v IS NULL").unwrap().unwrap();
    assert_eq!(nulls, 50, "a parameter set to nil is bound as NULL");
    // A Lua error in event: non-zero exit, the file and line named once, the script's message.
    let o = run(&["--rows=7", "--word=xyz", "--fail=on", "--time=2", "run"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("mine.lua:41:") && t.contains("failing on purpose"), "{t}");
    assert_eq!(t.matches("failing on purpose").count(), 1, "{t}");
    assert!(!t.contains("panicked"), "{t}");
    // A wrong option: one line naming it and the script's options.
    let o = run(&["--rowz=3", "run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--rowz") && err.contains("fail, ins, rows, word"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(run(&["cleanup"]).status.success());
}

/// A syntax error is reported with the file and line before any server is touched: the port below has
/// no server, and the error is the script's, not a connection failure.
#[test]
fn a_syntax_error_stops_before_any_server_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.lua");
    std::fs::write(&script, "function event()\n  local x = = 1\nend\n").unwrap();
    let path = script.display().to_string();
    let o = versus(&[&path, "--mysql-host=127.0.0.1", "--mysql-port=1", "--time=1", "run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(err.contains("broken.lua:2:") && err.contains("syntax error"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).is_empty(), "{}", text(&o));
}

/// A Lua script is a workload of experiments: prepared once per server and shape, run per config, stored
/// and compared like the built-in tests.
#[test]
fn a_lua_script_runs_in_an_experiment_and_compares() {
    let home = common::home::Home::new("versus-lua-");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lua/tpcc_like.lua");
    let file = home.file(
        "tpcc",
        &format!(
            r#"name = "tpcc-test"
builds = ["system"]
threads = [2]
duration = "2s"
repetitions = 1

[[configs]]
name = "durable"
set = {{ innodb_flush_log_at_trx_commit = 1 }}

[[configs]]
name = "relaxed"
set = {{ innodb_flush_log_at_trx_commit = 2 }}

[[workloads]]
script = "{script}"
options = {{ scale = 2, trx_level = "RC" }}
"#
        ),
    );
    let f = file.display().to_string();
    common::home::ok(home.output(&["server", "fetch", "system"]), "fetch");
    let (code, out, err) = home.output(&["run", &f]);
    assert!(code == 0 && format!("{out}{err}").contains("2 run(s) done"), "{out}{err}");
    let out = common::home::ok(home.output(&["report", "tpcc-test", "--format", "json"]), "report");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let text = doc.to_string();
    assert!(text.contains("tpcc_like.lua") && text.contains("system/relaxed"), "{text}");
}

/// `versus calibrate --script` measures a Lua script's noise band: the A/A experiment runs the script
/// (with its own options, without the sysbench tests' tables and sizes) and the band is filed under its
/// workload when the runs are quiet enough for one.
#[test]
fn calibrate_measures_a_lua_script() {
    let home = common::home::Home::new("versus-lua-");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lua/tpcc_like.lua");
    let args = ["calibrate", "system", "--script", script, "--option", "scale=1", "--threads", "2"];
    let more = ["--duration", "1s", "--repetitions", "3"];
    let all: Vec<&str> = args.iter().chain(&more).copied().collect();
    let dry: Vec<&str> = all.iter().copied().chain(["--dry-run"]).collect();
    let file = common::home::ok(home.output(&dry), "calibrate --dry-run");
    assert!(file.contains(&format!("script = \"{script}\"")) && file.contains("scale = 1"), "{file}");
    assert!(!file.contains("table-size"), "a script gets no sysbench sizes: {file}");

    let (code, out, err) = home.output(&all);
    assert!(code == 0 || (code == 1 && err.contains("nothing was calibrated")), "{out}{err}");
    let store = home.store();
    let e = store.latest_experiment_named("calibrate").unwrap().expect("the A/A experiment is stored");
    let runs = store.runs(e.id).unwrap();
    assert_eq!(runs.iter().filter(|r| r.status.to_string() == "done").count(), 6, "3 runs a side: {out}{err}");
    assert!(runs.iter().all(|r| r.cell.workload.contains("tpcc_like")), "{:?}", runs[0].cell.workload);
    let list = common::home::ok(home.output(&["calibrate", "--list"]), "calibrate --list");
    assert_eq!(code == 0, list.contains("tpcc_like"), "{list}");
}

/// An `event()` that never returns does not hold the run: it is stopped a grace after `--time`, with
/// the report of what was measured and a line that says why.
#[test]
fn an_event_that_never_returns_is_stopped_after_the_time_limit() {
    let s = start_server();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("stuck.lua");
    std::fs::write(&script, "function event()\n  while true do end\nend\n").unwrap();
    let path = script.display().to_string();
    let mut args = vec![path];
    args.extend(conn_args(&s));
    args.extend(["--time=1", "run"].map(String::from));
    let t0 = std::time::Instant::now();
    let o = versus(&strs(&args));
    let took = t0.elapsed();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("had not returned") && t.contains("SQL statistics:"), "{t}");
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
}
