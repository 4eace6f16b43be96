//! Server counters per transaction, compared between sysbench and versus running the same work: the
//! check that both send the same statements.

use std::collections::BTreeMap;
use std::process::Output;

use mysql::prelude::Queryable;

use super::{TestServer, output_text as text};

/// `/usr/bin/sysbench ARGS`.
pub fn sysbench(args: &[&str]) -> Output {
    std::process::Command::new("/usr/bin/sysbench").args(args).output().expect("run /usr/bin/sysbench")
}

/// The `--mysql-*` options that reach `s` as the benchmark user.
pub fn conn_args(s: &TestServer) -> Vec<String> {
    vec![
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", s.port),
        format!("--mysql-user={}", s.user),
        format!("--mysql-password={}", s.password),
        format!("--mysql-db={}", s.db),
    ]
}

/// The server's `Com_*` and `Handler_*` counters.
pub fn status(c: &mut mysql::Conn) -> BTreeMap<String, i64> {
    let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").expect("SHOW GLOBAL STATUS");
    rows.into_iter()
        .filter(|(k, _)| k.starts_with("Com_") || k.starts_with("Handler_"))
        .filter_map(|(k, v)| v.parse::<i64>().ok().map(|v| (k, v)))
        .collect()
}

/// What changed from `a` to `b`.
pub fn delta(a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    b.iter().map(|(k, v)| (k.clone(), v - a.get(k).copied().unwrap_or(0))).filter(|(_, v)| *v != 0).collect()
}

/// Counters that differ by construction, not by workload: statement preparation and closing happen per
/// connection (sysbench closes its statements at exit, the mysql crate does not).
pub const PER_CONNECTION: &[&str] = &["Com_stmt_prepare", "Com_stmt_close", "Com_stmt_reprepare"];

pub type Phase = (BTreeMap<String, i64>, BTreeMap<String, i64>);

/// Runs prepare, run and cleanup with one tool; returns the counter deltas of prepare and of run.
pub fn phases(
    root: &mut mysql::Conn,
    tool: &dyn Fn(&[String]) -> Output,
    args: &[String],
    run_extra: &[String],
) -> Phase {
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

/// Adds to `failures` the counters that differ by more than 1 % per transaction (`per` transactions).
pub fn compare(what: &str, a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>, per: f64, failures: &mut Vec<String>) {
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
