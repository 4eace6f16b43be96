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

/// A client pinned to one CPU (`taskset -c 0`) against an unpinned one, 16 threads, 3 repetitions: the
/// pinned side's runs are client-bound, which every format says.
#[test]
fn a_client_bound_side_in_every_format() {
    use versus::sampler::client_load::ClientLoad;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let load = |client_cpus, usable_cpus, cpus_busy, client_share| ClientLoad {
        client_cpus,
        usable_cpus,
        cpus_busy: Some(cpus_busy),
        client_share: Some(client_share),
    };
    let sims = [
        Sim { client_load: Some(load(0.63, 2.0, 0.99, 0.32)), ..Sim::new("unpinned", "system", "default", 58_500.0) },
        Sim { client_load: Some(load(0.69, 1.0, 0.99, 0.70)), ..Sim::new("pinned", "system", "pinned", 30_000.0) },
    ];
    record(&mut store, &sims, &Plan::new("client", &[16], 3));
    let r = build(&store, Selection::default());
    let bound: Vec<_> = r.cells.iter().map(|c| c.client_bound.as_ref().map(|b| (b.runs, b.of))).collect();
    assert_eq!(bound, [None, Some((3, 3))]);
    snapshot_all("client_bound", &r);
}

/// A primary with a replica delayed by 3 s against a semi-synchronous one: the replicas' table in every
/// format, with lag, applied rate, catch-up and commit wait.
#[test]
fn replicas_in_every_format() {
    use versus::sampler::replication::ReplicationFigures;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let figures = |lag: f64, catch_up: f64, commit_wait: Option<f64>| ReplicationFigures {
        replicas: 1.0,
        lag_p50_ms: Some(lag),
        lag_p95_ms: Some(lag * 1.1),
        lag_max_ms: Some(lag * 1.3),
        seconds_behind_max: Some((lag / 1000.0).floor()),
        applied_per_s: Some(1200.0),
        catch_up_s: Some(catch_up),
        commit_wait_us: commit_wait,
        data_equal: Some(1.0),
        faults: 0.0,
        cpu_us_per_txn: Some(140.0 + lag / 100.0),
        write_kb_per_txn: Some(6.5),
    };
    let sims = [
        Sim { replication: Some(figures(3400.0, 2.9, None)), ..Sim::new("delayed", "system", "async", 1300.0) },
        Sim { replication: Some(figures(100.5, 0.004, Some(210.0))), ..Sim::new("semi", "system", "semi", 1250.0) },
    ];
    record(&mut store, &sims, &Plan::new("replicas", &[2], 3));
    let r = build(&store, Selection { metric: versus::metric::Metric::ReplicaLagP95, ..Selection::default() });
    assert_eq!(r.replication_metrics.len(), 8);
    assert_eq!(r.ratios[0].verdict, versus::report::Verdict::Faster, "{:?}", r.ratios[0]);
    snapshot_all("replicas", &r);
}

/// `page` rendered by headless Chromium at 1400 px (scripts/check-html.sh): every section of the table of
/// contents on the page in order, under 8,000 px high, nothing wider than the page. Skipped, with a
/// notice, where Debian's chromium is not installed.
fn check_in_chromium(page_html: &str, dir: &Path) {
    check_in_chromium_with(page_html, dir, &[]);
}

/// [`check_in_chromium`] with the script's environment (which tables, how many sections) set by `env`.
fn check_in_chromium_with(page_html: &str, dir: &Path, env: &[(&str, &str)]) {
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
        .envs(env.iter().copied())
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

/// Twelve targets (three builds × four configs) at 1 and 4 threads: the layout past a handful of
/// sides. Throughput over time is drawn as small multiples (one panel per target on shared scales),
/// latency percentiles as ranked rows on a log scale, numbers never wrap, and the page renders in
/// Chromium within the height limit.
#[test]
fn twelve_targets_get_panels_ranked_rows_and_unbroken_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    type Vars = &'static [(&'static str, &'static str)];
    let configs: [(&str, Vars, f64); 4] = [
        ("trx1", &[("innodb_flush_log_at_trx_commit", "1"), ("innodb_buffer_pool_size", "134217728")], 900.0),
        ("trx2", &[("innodb_flush_log_at_trx_commit", "2"), ("innodb_buffer_pool_size", "134217728")], 1500.0),
        ("bp1g", &[("innodb_flush_log_at_trx_commit", "1"), ("innodb_buffer_pool_size", "1073741824")], 950.0),
        ("bp1g-trx2", &[("innodb_flush_log_at_trx_commit", "2"), ("innodb_buffer_pool_size", "1073741824")], 1600.0),
    ];
    let mut sims = Vec::new();
    for (build, speed) in [("system", 1.0), ("mariadb-11.8", 0.95), ("mariadb-10.5", 1.05)] {
        for (config, vars, tps) in configs {
            let label: &'static str = format!("{build}/{config}").leak();
            sims.push(Sim { vars, ..Sim::new(label, build, config, tps * speed) });
        }
    }
    record(&mut store, &sims, &Plan { intervals: 20, ..Plan::new("twelve", &[1, 4], 3) });
    let r = build(&store, Selection::default());
    assert_eq!(r.sides.len(), 12);
    let html = report::render(&r, Format::Html).unwrap();
    assert_eq!(html.matches("the same scales in every panel").count(), 2, "one set of panels per case");
    assert_eq!(html.matches("log scale; rows ranked by p99.9").count(), 2, "ranked latency rows per case");
    // No number in a table cell that may wrap: every bare number carries the class that keeps it whole.
    let bare: Vec<&str> = html
        .split("<td>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</td>").map(|(cell, _)| cell))
        .filter(|cell| !cell.is_empty() && cell.parse::<f64>().is_ok())
        .collect();
    assert!(bare.is_empty(), "numbers that can wrap: {bare:?}");
    assert!(html.contains("<td class=\"nb\">134217728</td>"));
    check_in_chromium(&html, dir.path());
}

/// A confirmation experiment as `versus advise` stores it (`NAME-confirm-N`, its description marked):
/// the current config (MariaDB 10.11's defaults), the innodb_dedicated_server equivalent and the advice,
/// at 2 and 8 threads, 5 repetitions.
fn advise_confirmation(dir: &Path) -> Store {
    advise_confirmation_with(dir, 610.0, "")
}

/// The same with the advice at `advised` tps and `why` after the description's first line (what
/// `versus advise` records about the baseline's settings the advice does not share).
fn advise_confirmation_with(dir: &Path, advised: f64, why: &str) -> Store {
    let mut store = Store::open(dir.join("results.db")).unwrap();
    let definition = "name = \"advise-confirm-9\"\n\
                      description = \"versus advise: build system (advise-confirm-9)WHY\"\n\
                      threads = [2, 8]\nrepetitions = 5\norder = \"shuffled\"\nseed = 9\n\n\
                      [[targets]]\nname = \"current\"\nbuild = \"system\"\n\n\
                      [[targets]]\nname = \"dedicated\"\nbuild = \"system\"\n\
                      set = { innodb_buffer_pool_size = \"3G\", innodb_log_file_size = \"768M\" }\n\n\
                      [[targets]]\nname = \"advised\"\nbuild = \"system\"\n\
                      set = { innodb_buffer_pool_size = \"3G\", innodb_log_file_size = \"1G\", innodb_io_capacity = \"1000\" }\n\n\
                      [[workloads]]\ntest = \"oltp_read_write\"\n";
    let rw = |label, tps, vars| Sim {
        workload: "oltp_read_write",
        test: "oltp_read_write",
        base: server_variables("mariadb-10.11"),
        server_version: Some(MARIADB_10_11),
        vars,
        ..Sim::new(label, "system", "default", tps)
    };
    let sims = [
        rw("current", 400.0, &[]),
        rw("dedicated", 560.0, &[("innodb_buffer_pool_size", "3221225472"), ("innodb_log_file_size", "805306368")]),
        rw(
            "advised",
            advised,
            &[
                ("innodb_buffer_pool_size", "3221225472"),
                ("innodb_log_file_size", "1073741824"),
                ("innodb_io_capacity", "1000"),
            ],
        ),
    ];
    let definition = definition.replace("WHY", why);
    let plan = Plan { definition: Some(definition), ..Plan::new("advise-confirm-9", &[2, 8], 5) };
    record(&mut store, &sims, &plan);
    store
}

#[test]
fn advise_confirmation_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = advise_confirmation(dir.path());
    let r = build(&store, Selection::default());
    let [s] = r.advise.as_slice() else { panic!("one advise section: {:?}", r.advise) };
    assert_eq!(s.confirmation.labels, ["current", "dedicated", "advised"]);
    assert!(s.confirmation.holds, "the advice is 50 % faster at both thread counts: {s:?}");
    let advised = &s.configs[2];
    assert_eq!(advised.sets, ["innodb_buffer_pool_size=3G", "innodb_io_capacity=1000", "innodb_log_file_size=1G"]);
    let html = report::render(&r, Format::Html).unwrap();
    assert!(html.contains("<h2 id=\"advised\">Advised: advise-confirm-9"), "{html}");
    assert!(html.contains("tps by thread count") && html.contains("ratio to the current config"), "two charts");
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../schemas/compare-report.schema.json")).expect("schema is JSON");
    let json: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
    let errors: Vec<String> =
        jsonschema::validator_for(&schema).unwrap().iter_errors(&json).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(json["advise"][0]["confirmation"]["labels"][2], "advised");
    snapshot_all("advise", &r);
}

/// When the advice does not beat the dedicated baseline, every format says why: the measured comparison
/// and each setting of the baseline the advice does not share, as `versus advise` recorded it (or, for a
/// confirmation stored without it, from the configs' settings).
#[test]
fn every_format_says_why_the_advice_does_not_beat_dedicated() {
    let why = "\\ninnodb_log_file_size: dedicated sets 768M, the current config has 100663296, the advice 1G: \
               the advice sets 1G by its rule (the redo rate), measured +4.0 points";
    for (recorded, want) in [
        (why, "innodb_log_file_size: dedicated sets 768M, the current config has 100663296, the advice 1G"),
        ("", "dedicated sets innodb_log_file_size=768M, the advice innodb_log_file_size=1G"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = advise_confirmation_with(dir.path(), 560.0, recorded);
        let r = build(&store, Selection::default());
        let [s] = r.advise.as_slice() else { panic!("one advise section: {:?}", r.advise) };
        assert_eq!(s.description, "build system (advise-confirm-9)", "the first line only");
        for format in [Format::Text, Format::Markdown, Format::Html] {
            let text = report::render(&r, format).unwrap();
            assert!(
                text.contains("Why the advice does not beat innodb_dedicated_server: advised vs dedicated: "),
                "{format:?}: {text}"
            );
            assert!(text.contains(" over the thread counts, no significant change"), "{format:?}: {text}");
            assert!(text.contains(want), "{format:?}: {text}");
        }
        // JSON: the comparison is in the confirmation's rows, the recorded lines beside it.
        let json: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
        let a = &json["advise"][0];
        assert_eq!(a["confirmation"]["rows"][2]["advised_vs_dedicated"]["verdict"], "NoSignificantChange", "{a}");
        let recorded_lines = a["dedicated_unshared"].as_array().map_or(0, Vec::len);
        assert_eq!(recorded_lines, usize::from(!recorded.is_empty()), "{a}");
    }
    // The advice that beats the baseline needs no such lines.
    let dir = tempfile::tempdir().unwrap();
    let r = build(&advise_confirmation(dir.path()), Selection::default());
    let text = report::render(&r, Format::Markdown).unwrap();
    assert!(!text.contains("Why the advice"), "{text}");
}

/// Three servers through every Insert Benchmark step, as `versus ibench compare` reads them: rates that
/// differ by orders of magnitude between steps, query steps with an SLA (one missed), a sub-second step.
fn ibench_page() -> String {
    use versus::workload::ibench::compare::{self, SideInput, StepFigures};
    use versus::workload::ibench::options::Step;
    use versus::workload::ibench::page::{Page, Source, Timeline, page};
    use versus::workload::ibench::result::{StepEfficiency, StepStatus};
    use versus::workload::ibench::stats::{Kind, Latency};

    let steps: Vec<Step> = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let base_rate = [98_000.0, 410_000.0, 31_000.0, 12_500.0, 2_400.0, 9_800.0, 2_100.0, 9_100.0, 1_700.0, 8_300.0];
    let servers = [("mysql-8.4.7", 1.0), ("mariadb-10.11.19", 0.83), ("mariadb-11.8.9", 1.12)];
    let mut sides = Vec::new();
    let mut timelines = Vec::new();
    for (side, (label, speed)) in servers.iter().enumerate() {
        let mut figures = Vec::new();
        for (j, step) in steps.iter().enumerate() {
            let rate = base_rate[j] * speed * (1.0 + 0.01 * j as f64);
            let target = step.is_query().then(|| 100.0 * f64::from(step.name()[2..].parse::<u32>().unwrap() / 100));
            // mariadb-10.11 misses the insert rate in qp1000.
            let ips = target.map_or(rate, |t| if side == 1 && j == 9 { 0.9 * t } else { t });
            let us = (1e6 / rate * 4.0) as u64;
            figures.push(StepFigures {
                step: *step,
                status: StepStatus::Done,
                rate,
                ips,
                target_ips: target,
                efficiency: StepEfficiency {
                    per: if step.is_query() { "query" } else { "insert" }.into(),
                    operations: (rate * 60.0) as u64,
                    host_cpu_us_per_op: Some(40.0 / speed),
                    host_cpu_pct: Some(62.0 + side as f64),
                    host_cs_per_op: Some(0.4 * (1 + side) as f64),
                    server_cpu_us_per_op: Some(31.0 / speed),
                    server_cs_per_op: Some(0.2),
                    client_cpu_us_per_op: Some(3.5),
                    read_kb_per_op: Some(0.01 * j as f64),
                    write_kb_per_op: Some(1.5 / speed),
                    write_kb_per_insert: Some(1.4),
                    server_rss_max_bytes: Some((1u64 << 30) + side as u64 * (200 << 20)),
                    ..Default::default()
                },
                latency: Some(Latency {
                    kind: if step.is_query() { Kind::Query } else { Kind::Insert },
                    count: (rate * 60.0) as u64,
                    min_us: us / 3,
                    avg_us: us as f64,
                    p50_us: us,
                    p90_us: 2 * us,
                    p95_us: 3 * us,
                    p99_us: 6 * us,
                    p999_us: 20 * us,
                    max_us: 90_000 + 1000 * side as u64,
                    buckets: [6000, 3000, 800, 150, 40, 9, 1, 0, 0, 0],
                }),
                rates: vec![rate],
            });
            // Per-interval rates: l.x has none, qp1000 ran for under a second (one interval).
            let n = match j {
                1 => 0,
                9 => 1,
                0 => 12,
                _ => 6,
            };
            let points: Vec<(f64, f64)> = (1..=n)
                .map(|k| (5.0 * k as f64, rate * (1.0 - 0.004 * k as f64) * if k % 4 == 0 { 0.93 } else { 1.0 }))
                .collect();
            if !points.is_empty() {
                timelines.push(Timeline { side, step: *step, points });
            }
        }
        sides.push(SideInput { label: label.to_string(), steps: figures });
    }
    let c = compare::build(&sides);
    page(&Page {
        comparison: &c,
        sources: servers
            .iter()
            .map(|(label, _)| Source {
                label: label.to_string(),
                server_version: Some(format!("{}-log", &label[label.find('-').unwrap() + 1..])),
                file: format!("{label}.json"),
                options: "{\n  \"clients\": 1,\n  \"max_rows\": 1000000\n}".into(),
            })
            .collect(),
        timelines,
        versus_version: "0.0.0-test".into(),
    })
}

#[test]
fn ibench_compare_html_is_a_styled_page() {
    let html = ibench_page();
    insta::assert_snapshot!("ibench_html", html);
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<meta charset=\"utf-8\">"));
    assert!(html.contains("table.data th, table.data td { border"), "the report's CSS");
    assert!(html.contains("<nav><ol>") && html.contains("<a href=\"#ibench-throughput\">"), "a table of contents");
    assert!(html.contains("<td class=\"num"), "numbers right-aligned");
    assert!(html.contains("class=\"num ib-gray\""), "the SLA miss is gray");
    // One chart over time per step with a few intervals; none for l.x and the sub-second qp1000.
    assert_eq!(html.matches("per report interval</title>").count(), 8, "8 timelines");
    assert!(!html.contains("l.x — inserted rows/s per report interval"), "l.x has no per-interval rate");
    assert!(html.contains("No chart for qp1000"), "the short step is named");
    assert!(html.contains("Throughput per step relative to mysql-8.4.7"));
}

#[test]
fn ibench_page_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    check_in_chromium_with(
        &ibench_page(),
        dir.path(),
        &[
            ("VERSUS_REQUIRE_IDS", "table-ibench-throughput table-ibench-relative table-ibench-insert-rate"),
            ("VERSUS_MIN_TOC", "5"),
        ],
    );
}

/// What a hostile label carries: HTML, a table break, code, emphasis, a fake heading on a new line, a
/// javascript link, the end of a collapsed section, strike-through and a terminal escape sequence.
const HOSTILE: &str =
    "<script>alert(1)</script>|`tick`*star*_u_\n# injected\n[x](javascript:alert(1))</details>~~s~~\x1b[31mred\r";

/// Every format with hostile target, config, workload, experiment and variable names and values:
/// nothing the labels carry acts as markup, breaks a table row or reaches the terminal as a control.
#[test]
fn hostile_names_are_text_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let leak = |s: String| -> &'static str { s.leak() };
    let var: &'static str = leak(format!("evil_{HOSTILE}"));
    let sims: Vec<Sim> = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, side)| Sim {
            workload: leak(format!("=HYPERLINK(\"http://x\"){HOSTILE}")),
            vars: Box::leak(vec![(var, leak(format!("{side}{HOSTILE}")))].into_boxed_slice()),
            ..Sim::new(
                leak(format!("{side}{HOSTILE}")),
                "system",
                leak(format!("c{side}{HOSTILE}")),
                500.0 + 100.0 * i as f64,
            )
        })
        .collect();
    let plan = Plan::new(leak(format!("e{HOSTILE}")), &[1], 3);
    record(&mut store, &sims, &plan);
    let r = build(&store, Selection::default());
    assert!(!r.variable_changes.is_empty() && !r.variables.rows.is_empty(), "the variable sections are there");

    let md = report::render(&r, Format::Markdown).unwrap();
    // The stored definition is shown in a code fence, where text is literal: checked apart.
    let (prose, fenced) = outside_fences(&md);
    assert!(fenced.iter().all(|f| !f.lines().any(|l| l.starts_with("```"))), "a fence closed early");
    for raw in ["<script", "`tick`", "*star*", "[x](", "~~s~~", "\x1b", "\r"] {
        assert!(!prose.contains(raw), "markdown carries {raw:?} raw:\n{prose}");
    }
    assert_eq!(prose.matches("<details>").count(), prose.matches("</details>").count(), "{prose}");
    assert!(!prose.lines().any(|l| l.starts_with("# injected")), "{prose}");
    let mut table: Option<usize> = None;
    for line in prose.lines() {
        if !line.starts_with('|') {
            table = None;
            continue;
        }
        let pipes = line.char_indices().filter(|&(i, c)| c == '|' && (i == 0 || &line[i - 1..i] != "\\")).count();
        assert_eq!(*table.get_or_insert(pipes), pipes, "a table row breaks: {line}");
    }

    let html = report::render(&r, Format::Html).unwrap();
    assert!(!html.contains("<script>alert") && !html.contains("href=\"javascript"), "raw HTML from a label");
    assert_eq!(html.matches("<details").count(), html.matches("</details>").count());

    let text = report::render(&r, Format::Text).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\r'), "a control character reaches the terminal");
    assert!(!text.lines().any(|l| l.starts_with("# injected")), "{text}");

    let csv = report::render(&r, Format::Csv).unwrap();
    let records = parse_csv(&csv);
    assert!(records.len() > 1);
    assert!(records.iter().all(|rec| rec.len() == records[0].len()), "a CSV row breaks");
    assert!(records.iter().flatten().any(|f| f.contains("<script>")), "labels are kept whole in CSV");
    assert!(!records.iter().flatten().any(|f| f.starts_with('=')), "a field a spreadsheet would run");

    let json: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
    assert!(json.to_string().contains(&serde_json::to_string(&format!("a{HOSTILE}")).unwrap()), "labels kept whole");
}

/// The markdown outside code fences, and the fenced blocks.
fn outside_fences(md: &str) -> (String, Vec<String>) {
    let (mut prose, mut fenced, mut open): (String, Vec<String>, Option<String>) = (String::new(), vec![], None);
    for line in md.lines() {
        match &mut open {
            None if line.starts_with("```") => {
                let fence: String = line.chars().take_while(|&c| c == '`').collect();
                open = Some(fence);
                fenced.push(String::new());
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
            Some(f) if line.trim_end() == f.as_str() => open = None,
            Some(_) => {
                let last = fenced.last_mut().unwrap();
                last.push_str(line);
                last.push('\n');
            }
        }
    }
    (prose, fenced)
}

/// RFC 4180 records.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field, mut quoted) = (vec![], vec![], String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => record.push(std::mem::take(&mut field)),
            ('\n', false) => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (c, _) => field.push(c),
        }
    }
    records
}
