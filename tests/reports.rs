//! Reports worth posting, for the two comparisons users post most: the README's durability example (10
//! targets: 2 MariaDB builds × 5 configs) and MySQL against MariaDB (two flavors, ~600 server variables
//! each, from real servers' `SHOW GLOBAL VARIABLES`). Snapshots of every export format, the layout rules
//! each format must keep (widths, what comes first, counts), and the HTML as rendered by headless
//! Chromium at 1400 px (scripts/check-report.sh).

mod common;

use std::path::Path;

use common::reports::{Plan, Sim, normalize, record, server_variables};
use versus::report::{self, CompareReport, Format, Selection};
use versus::store::Store;

const DURABILITY: &str = include_str!("../examples/durability.toml");

const MARIADB_10_11: &str = "10.11.19-MariaDB-0+deb12u1";
const MARIADB_11_8: &str = "11.8.9-MariaDB-0+deb13u1";

/// The durability example's 10 targets with their configs' variables, as `versus run` stores them.
fn durability(dir: &Path) -> Store {
    let mut store = Store::open(dir.join("results.db")).unwrap();
    type Vars = &'static [(&'static str, &'static str)];
    let configs: [(&str, Vars, f64, f64); 5] = [
        (
            "trx1-nobinlog",
            &[("innodb_flush_log_at_trx_commit", "1"), ("log_bin", "OFF"), ("sync_binlog", "0")],
            900.0,
            1.0,
        ),
        (
            "trx2-nobinlog",
            &[("innodb_flush_log_at_trx_commit", "2"), ("log_bin", "OFF"), ("sync_binlog", "0")],
            1500.0,
            0.02,
        ),
        (
            "trx1-binlog-sync1",
            &[("innodb_flush_log_at_trx_commit", "1"), ("log_bin", "ON"), ("sync_binlog", "1"), ("server_id", "1")],
            520.0,
            3.0,
        ),
        (
            "trx1-binlog-sync0",
            &[("innodb_flush_log_at_trx_commit", "1"), ("log_bin", "ON"), ("sync_binlog", "0"), ("server_id", "1")],
            800.0,
            1.1,
        ),
        (
            "trx2-binlog-sync0",
            &[("innodb_flush_log_at_trx_commit", "2"), ("log_bin", "ON"), ("sync_binlog", "0"), ("server_id", "1")],
            1400.0,
            0.05,
        ),
    ];
    let mut sims = Vec::new();
    for (build, dump, version, speed) in
        [("system", "mariadb-10.11", MARIADB_10_11, 1.0), ("mariadb-11.8", "mariadb-11.8", MARIADB_11_8, 0.96)]
    {
        let base = server_variables(dump);
        for (config, vars, tps, fsyncs) in configs {
            let label: &'static str = format!("{build}/{config}").leak();
            let binlog = vars.contains(&("log_bin", "ON"));
            let version: &'static str = if binlog { format!("{version}-log").leak() } else { version };
            sims.push(Sim {
                vars,
                fsyncs,
                base: base.clone(),
                server_version: Some(version),
                ..Sim::new(label, build, config, tps * speed)
            });
        }
    }
    let plan = Plan { definition: Some(DURABILITY.to_string()), ..Plan::new("durability", &[4], 3) };
    record(&mut store, &sims, &plan);
    store
}

/// MariaDB 10.11 against MySQL 9.7, both with their defaults, at 1 and 4 threads.
fn flavors(dir: &Path) -> Store {
    let mut store = Store::open(dir.join("results.db")).unwrap();
    let definition = "name = \"flavors\"\nbuilds = [\"system\", \"mysql-9.7\"]\nthreads = [1, 4]\nrepetitions = 3\n\n\
                      [[workloads]]\ntest = \"oltp_read_write\"\n";
    let rw = |label, build, tps, version, dump| Sim {
        workload: "read_write",
        test: "oltp_read_write",
        base: server_variables(dump),
        server_version: Some(version),
        ..Sim::new(label, build, "default", tps)
    };
    let sims = [
        rw("system", "system", 700.0, MARIADB_10_11, "mariadb-10.11"),
        rw("mysql-9.7", "mysql-9.7", 610.0, "9.7.4", "mysql-9.7"),
    ];
    let plan = Plan { definition: Some(definition.to_string()), ..Plan::new("flavors", &[1, 4], 3) };
    record(&mut store, &sims, &plan);
    store
}

fn build(store: &Store, sel: Selection) -> CompareReport {
    normalize(report::build_report(store, &sel).unwrap())
}

/// Every format of `r`, named `{name}_{format}`.
fn snapshot_all(name: &str, r: &CompareReport) {
    for format in Format::ALL {
        insta::assert_snapshot!(format!("{name}_{format}"), report::render(r, format).unwrap());
    }
}

#[test]
fn durability_example_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = durability(dir.path());
    let r = build(&store, Selection::default());
    assert_eq!(r.sides.len(), 10);
    snapshot_all("durability", &r);
}

#[test]
fn mysql_against_mariadb_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = flavors(dir.path());
    let r = build(&store, Selection::default());
    assert_eq!(r.sides.len(), 2);
    snapshot_all("flavors", &r);
}

/// `page` rendered by headless Chromium at 1400 px (scripts/check-html.sh): every section of the table of
/// contents on the page in order, under 8,000 px high, nothing wider than the page. Skipped, with a
/// notice, where Debian's chromium is not installed.
fn check_in_chromium(page_html: &str, dir: &Path) {
    if std::process::Command::new("chromium").arg("--version").output().is_err() {
        eprintln!("skipped: chromium is not installed (apt-get install -y chromium; or run scripts/check-html.sh)");
        return;
    }
    let page = dir.join("report.html");
    std::fs::write(&page, page_html).unwrap();
    let out = std::process::Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-html.sh"))
        .arg(&page)
        .arg(dir.join("check"))
        .env("VERSUS_NO_INSTALL", "1")
        .env("VERSUS_SECTION_SHOTS", "0")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !log.contains("FAIL"), "{log}");
    for want in ["ok: page height", "ok: every section in the table of contents is on the page", "in page order"] {
        assert!(log.contains(want), "{want}: {log}");
    }
}

#[test]
fn both_pages_render_in_headless_chromium_within_the_height_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (d, f) = (dir.path().join("durability"), dir.path().join("flavors"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::create_dir_all(&f).unwrap();
    let durable = build(&durability(&d), Selection::default());
    check_in_chromium(&report::render(&durable, Format::Html).unwrap(), &d);
    let cross = build(&flavors(&f), Selection::default());
    check_in_chromium(&report::render(&cross, Format::Html).unwrap(), &f);
}
