//! Counter-based costs on every server line this machine runs (MariaDB 10.5, 10.11 of the distribution,
//! 11.8 and MySQL 9.7): `fsyncs-per-txn` from a real experiment at one thread is one per transaction
//! with `innodb_flush_log_at_trx_commit=1` and the binary log off, and `sync_binlog=1` adds the binary
//! log's sync to it.

mod common;

use std::process::{Command, Stdio};

use versus::metric::{Metric, RunValues};
use versus::server::Build;
use versus::store::{Status, Store};

const EXPERIMENT: &str = r#"
name = "fsyncs"
builds = ["BUILD"]
threads = [1]
duration = "6s"
warmup = "1s"
repetitions = 1
seed = 7

[[configs]]
name = "nobinlog"
set = { innodb_flush_log_at_trx_commit = 1, skip-log-bin = true }

[[configs]]
name = "binlog-sync1"
set = { innodb_flush_log_at_trx_commit = 1, log-bin = true, server-id = 1, sync_binlog = 1 }

[[configs]]
name = "binlog-sync0"
set = { innodb_flush_log_at_trx_commit = 1, log-bin = true, server-id = 1, sync_binlog = 0 }

[[workloads]]
test = "oltp_write_only"
options = { tables = 1, table-size = 2000 }
"#;

fn versus(home: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(args)
        .env("VERSUS_HOME", home)
        .env_remove("VERSUS_DB")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Runs the experiment on `build` and returns (config, fsyncs-per-txn, binlog-syncs-per-txn) per run.
fn fsyncs_on(build: Build, spec: &str) -> Vec<(String, f64, f64)> {
    let home = tempfile::Builder::new().prefix("versus-eff-").tempdir().unwrap();
    let (ok, out) = versus(home.path(), &["server", "fetch", spec, "--name", "line"]);
    assert!(ok, "{}: registering failed:\n{out}", build.name);
    let file = home.path().join("fsyncs.toml");
    std::fs::write(&file, EXPERIMENT.replace("BUILD", "line")).unwrap();
    let (ok, out) = versus(home.path(), &["run", file.to_str().unwrap()]);
    assert!(ok, "{}: the experiment failed:\n{out}", build.name);
    let (ok, out) = versus(home.path(), &["compare", "fsyncs", "--metric", "fsyncs-per-txn", "--color", "never"]);
    assert!(ok && out.contains("binlog-sync1"), "{}: compare failed:\n{out}", build.name);

    let store = Store::open(home.path().join("results.db")).unwrap();
    let e = store.latest_experiment_named("fsyncs").unwrap().unwrap();
    let mut got = Vec::new();
    for r in store.runs(e.id).unwrap() {
        assert_eq!(r.status, Status::Done, "{}: {r:?}", build.name);
        let d = store.run(r.id).unwrap().unwrap();
        let summary = d.run.summary.clone().unwrap();
        let v = RunValues { summary: &summary, efficiency: &d.efficiency, histogram: None };
        let fsyncs = Metric::FsyncsPerTxn.of_run(&v);
        let binlog = Metric::BinlogSyncsPerTxn.of_run(&v);
        let (Some(f), Some(b)) = (fsyncs, binlog) else {
            panic!(
                "{}: {:?} has no fsyncs figure: {:?}\n{:?}",
                build.name, r.cell.config, d.efficiency, d.status_deltas
            )
        };
        got.push((r.cell.config.clone().unwrap_or_default(), f, b));
    }
    got
}

fn check(build: Build, spec: &str) {
    let name = build.name.clone();
    let got = fsyncs_on(build, spec);
    eprintln!("{name}: (config, fsyncs/txn, binlog syncs/txn) {got:?}");
    let of = |config: &str| got.iter().find(|(c, _, _)| c == config).unwrap_or_else(|| panic!("{name}: {got:?}"));
    let (_, off, off_binlog) = of("nobinlog");
    assert!((0.9..=1.1).contains(off), "{name}: {off} fsyncs per transaction with the binary log off: {got:?}");
    assert_eq!(*off_binlog, 0.0, "{name}: {got:?}");
    let (_, sync1, sync1_binlog) = of("binlog-sync1");
    assert!((0.9..=1.1).contains(sync1_binlog), "{name}: binary log syncs at sync_binlog=1: {got:?}");
    assert!(*sync1 > off + 0.7, "{name}: sync_binlog=1 must add the binary log's syncs: {got:?}");
    let (_, sync0, sync0_binlog) = of("binlog-sync0");
    assert!(*sync0_binlog < 0.05, "{name}: the server never syncs the binary log at sync_binlog=0: {got:?}");
    assert!(*sync0 < sync1 - 0.7, "{name}: {got:?}");
}

#[test]
fn mariadb_10_11_of_the_distribution() {
    check(common::system_build(), "system");
}

#[test]
fn mariadb_10_5() {
    let b = common::fetched_build("mariadb-10.5");
    let root = b.root.display().to_string();
    check(b, &root);
}

#[test]
fn mariadb_11_8() {
    let b = common::fetched_build("mariadb-11.8");
    let root = b.root.display().to_string();
    check(b, &root);
}

#[test]
fn mysql_9_7() {
    let b = common::fetched_build("mysql-9.7");
    let root = b.root.display().to_string();
    check(b, &root);
}
