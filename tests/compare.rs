//! `versus compare` / `versus report` on stores filled with synthetic runs through the Store API:
//! snapshots of every export format, the same numbers across formats, the JSON schema, simulated A/A
//! and known-effect comparisons, bad input, the command line, and the HTML page in headless Chromium.

mod common;

use std::path::Path;

use common::reports::{Plan, Sim, host, normalize, record};
use versus::metric::Metric;
use versus::report::{self, CompareReport, Dimension, Format, Selection, Verdict};
use versus::sampler::HostFacts;
use versus::store::Store;

/// The durability-like fixture: two builds × two configs, 1 and 4 threads, 3 repetitions.
fn durability(dir: &Path) -> (Store, i64) {
    let mut store = Store::open(dir.join("results.db")).unwrap();
    let trx1: &[(&str, &str)] = &[("innodb_flush_log_at_trx_commit", "1"), ("sync_binlog", "1"), ("log_bin", "ON")];
    let trx2: &[(&str, &str)] = &[("innodb_flush_log_at_trx_commit", "2"), ("sync_binlog", "0"), ("log_bin", "ON")];
    let sims = vec![
        Sim { vars: trx1, fsyncs: 3.0, ..Sim::new("10.11/trx1", "10.11", "trx1", 1000.0) },
        Sim { vars: trx2, fsyncs: 0.1, ..Sim::new("10.11/trx2", "10.11", "trx2", 1600.0) },
        Sim { vars: trx1, fsyncs: 3.0, cpu_us: 1000.0, ..Sim::new("11.8/trx1", "11.8", "trx1", 930.0) },
        Sim { vars: trx2, fsyncs: 0.1, cpu_us: 1000.0, ..Sim::new("11.8/trx2", "11.8", "trx2", 1580.0) },
    ];
    let id = record(&mut store, &sims, &Plan::new("durability", &[1, 4], 3));
    (store, id)
}

fn build(store: &Store, sel: Selection) -> CompareReport {
    normalize(report::build_report(store, &sel).unwrap())
}

fn by_build() -> Selection {
    Selection { vs: Dimension::Build, ..Selection::default() }
}

#[test]
fn snapshot_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = durability(dir.path());
    let r = build(&store, by_build());
    insta::assert_snapshot!("terminal_by_build", report::terminal::render(&r, false));
    insta::assert_snapshot!("markdown_by_build", report::render(&r, Format::Markdown).unwrap());
    insta::assert_snapshot!("json_by_build", report::render(&r, Format::Json).unwrap());
    insta::assert_snapshot!("csv_by_build", report::render(&r, Format::Csv).unwrap());
    insta::assert_snapshot!("html_by_build", report::render(&r, Format::Html).unwrap());
    let targets = build(&store, Selection { threads: vec![4], ..Selection::default() });
    insta::assert_snapshot!("terminal_by_target_4_threads", report::terminal::render(&targets, false));
}

/// The fields of one CSV line (RFC 4180 quoting, no line breaks inside fields).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// Lines (or HTML rows) of `text` that contain `needle`.
fn rows_with<'a>(text: &'a str, needle: &str, html: bool) -> Vec<&'a str> {
    let parts: Vec<&str> = if html { text.split("<tr>").collect() } else { text.lines().collect() };
    parts.into_iter().filter(|l| l.contains(needle)).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// Every export of one comparison carries the same numbers: JSON and CSV unrounded and equal to the
/// model, and the terminal, markdown and HTML tables show each ratio with its interval, means and verdict
/// in one row.
#[test]
fn every_format_carries_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = durability(dir.path());
    for sel in [by_build(), Selection::default(), Selection { metric: Metric::P99, ..Selection::default() }] {
        let r = build(&store, sel);
        let text = report::terminal::render(&r, false);
        let md = report::render(&r, Format::Markdown).unwrap();
        let html = report::render(&r, Format::Html).unwrap();
        let csv = report::render(&r, Format::Csv).unwrap();
        let json: CompareReport = report::json::parse(&report::render(&r, Format::Json).unwrap()).unwrap();

        // JSON: the same model.
        assert_eq!(json.ratios.len(), r.ratios.len());
        for (a, b) in json.ratios.iter().zip(&r.ratios) {
            for (x, y) in
                [(a.ratio, b.ratio), (a.ci_lo, b.ci_lo), (a.ci_hi, b.ci_hi), (a.candidate_mean, b.candidate_mean)]
            {
                assert!(close(x.unwrap(), y.unwrap()), "{x:?} vs {y:?}");
            }
            assert_eq!(a.verdict, b.verdict);
            assert_eq!(a.detectable, b.detectable);
            assert!(a.detectable.is_some(), "every row with an interval says what it could detect");
        }

        // CSV: one row per cell, values exactly as in the model.
        let mut lines = csv.lines();
        let header: Vec<String> = csv_fields(lines.next().unwrap());
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
        assert_eq!(rows.len(), r.cells.len());
        for (row, cell) in rows.iter().zip(&r.cells) {
            assert_eq!(row[col("mean")].parse::<f64>().unwrap(), cell.mean.unwrap());
            assert_eq!(row[col("n")], cell.n.to_string());
            assert_eq!(row[col("side")], r.sides[cell.side].label);
            if cell.side > 0 {
                let x = r.ratio(cell.case, cell.side).unwrap();
                assert_eq!(row[col("ratio")].parse::<f64>().unwrap(), x.ratio.unwrap());
                assert_eq!(row[col("ci_lo")].parse::<f64>().unwrap(), x.ci_lo.unwrap());
                assert_eq!(row[col("ci_hi")].parse::<f64>().unwrap(), x.ci_hi.unwrap());
                let d = x.detectable.as_ref().unwrap();
                assert_eq!(row[col("detectable_increase")].parse::<f64>().unwrap(), d.increase);
                assert_eq!(row[col("detectable_decrease")].parse::<f64>().ok(), d.decrease);
                assert_eq!(row[col("repetitions_for_target")], d.plan.map(report::fmt::plan).unwrap());
            }
            let eff = r.efficiency.iter().find(|e| e.case == cell.case && e.side == cell.side).unwrap();
            let cpu = eff.values.iter().find(|v| v.metric == "cpu-per-txn").unwrap();
            assert_eq!(row[col("efficiency:cpu-per-txn")].parse::<f64>().unwrap(), cpu.mean.unwrap());
        }

        // Text formats: each ratio row shows ratio, interval, both means and the verdict together.
        for x in &r.ratios {
            let ci = report::fmt::ci(x.ci_lo.unwrap(), x.ci_hi.unwrap());
            let want = [
                format!("{:.2}", x.ratio.unwrap()),
                format!("{} ({})", report::fmt::num(x.baseline_mean.unwrap()), x.baseline_n),
                format!("{} ({})", report::fmt::num(x.candidate_mean.unwrap()), x.candidate_n),
                report::fmt::verdict(&r, x.verdict).to_string(),
                r.sides[x.side].label.clone(),
                report::fmt::plus_minus(x.detectable.as_ref().unwrap().either_way()),
            ];
            for (name, out, html) in [("terminal", &text, false), ("markdown", &md, false), ("html", &html, true)] {
                let hits = rows_with(out, &ci, html);
                assert!(
                    hits.iter().any(|row| want.iter().all(|w| row.contains(w.as_str()))),
                    "{name}: no row with {ci} and {want:?}"
                );
            }
        }
        // Efficiency means appear in every text format.
        for row in &r.efficiency {
            for v in &row.values {
                let s = report::fmt::opt_num(v.mean);
                assert!(text.contains(&s) && md.contains(&s) && html.contains(&s), "efficiency {s}");
            }
        }
    }
}

#[test]
fn json_export_matches_its_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/compare-report.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = durability(dir.path());
    // A second experiment with one repetition and no costs or histograms: nulls and within-run intervals.
    let sims = vec![Sim::new("x", "10.11", "a", 800.0), Sim::new("y", "11.8", "a", 760.0)];
    let single = record(&mut store, &sims, &Plan { full: false, ..Plan::new("single", &[2], 1) });
    let first = || vec!["1".to_string()];
    for sel in [
        Selection { experiments: first(), ..by_build() },
        Selection { experiments: first(), metric: Metric::CpuPerTxn, ..Selection::default() },
        Selection { experiments: vec![single.to_string()], ..Selection::default() },
        Selection { experiments: vec![single.to_string()], metric: Metric::P95, ..Selection::default() },
    ] {
        let r = report::build_report(&store, &sel).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json).unwrap()).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // The schema is strict enough to notice drift.
    let r = build(&store, Selection { experiments: first(), ..by_build() });
    let mut doc = serde_json::to_value(&r).unwrap();
    doc["ratios"][0]["verdict"] = "maybe".into();
    assert!(!validator.is_valid(&doc));
    let mut doc = serde_json::to_value(&r).unwrap();
    doc["cells"][0]["extra"] = 1.into();
    assert!(!validator.is_valid(&doc));
}

/// A/A: one build and config against itself with 10 repetitions per side, 40 simulated experiments
/// (between-run CV 3 %, 1-s CV 5 %). At 95 % confidence a few false calls are expected by chance; the
/// noise band must keep them rare.
#[test]
fn aa_with_ten_repetitions_is_not_called_a_change() {
    let mut called = Vec::new();
    for seed in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("results.db")).unwrap();
        let a = Sim { cv_between: 0.03, cv_within: 0.05, ..Sim::new("a", "10.11", "default", 1000.0) };
        let again = Sim { label: "a-again", ..a.clone() };
        record(&mut store, &[a, again], &Plan { intervals: 10, seed, ..Plan::new("aa", &[4], 10) });
        let r = report::build_report(&store, &Selection::default()).unwrap();
        let x = &r.ratios[0];
        assert_eq!((x.baseline_n, x.candidate_n), (10, 10));
        assert_eq!(x.ci_kind, Some(report::CiKind::BetweenRepetitions));
        assert!(x.ci_lo.unwrap() < x.ratio.unwrap() && x.ratio.unwrap() < x.ci_hi.unwrap());
        if x.verdict != Verdict::NoSignificantChange {
            called.push((seed, x.ratio, x.ci_lo, x.ci_hi));
        }
    }
    eprintln!("A/A: a change was called in {} of 40 simulated experiments", called.len());
    assert!(called.len() <= 2, "A/A called a change in {} of 40 experiments: {called:?}", called.len());
}

/// What a report says could be detected matches what simulated experiments of that noise detect: an
/// A/A experiment (between-run CV 3 %, 5 repetitions) states its detectable effect; experiments with a
/// true change of that size are called in about 80 % of cases, with half of it rarely, and the A/A
/// summary says what could have been detected and what it would take to detect ±5 %.
#[test]
fn stated_detectable_effect_matches_simulated_experiments() {
    let run = |effect: f64, seed: u64| {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("results.db")).unwrap();
        let a = Sim { cv_between: 0.03, ..Sim::new("a", "10.11", "default", 1000.0) };
        let b = Sim { label: "b", tps: 1000.0 * (1.0 + effect), ..a.clone() };
        record(&mut store, &[a, b], &Plan { intervals: 10, seed, ..Plan::new("e", &[4], 5) });
        report::build_report(&store, &Selection::default()).unwrap()
    };
    let aa = run(0.0, 1);
    let d = aa.ratios[0].detectable.clone().unwrap();
    assert!(d.increase > 0.03 && d.increase < 0.2, "{d:?}");
    let summary = report::summary::summary_lines(&aa).join("\n");
    if aa.ratios[0].verdict == Verdict::NoSignificantChange {
        assert!(summary.contains("could detect only changes beyond"), "{summary}");
        assert!(summary.contains("repetitions per side would detect ±5 %"), "{summary}");
    }
    // Calibrate against the noise the simulation has (CV 3 % between runs plus the mean of ten 1-s
    // rates with CV 4 %), not one sample's estimate of it.
    let cv = (0.03f64.powi(2) + 0.04f64.powi(2) / 10.0).sqrt();
    let side = versus::stats::SideNoise::repetitions(cv, 5);
    let planned =
        versus::stats::detectable_effect(versus::stats::SampleLevel::Repetitions, side, side, 0.95, aa.noise_band, 0.8)
            .unwrap()
            .increase;
    let called = |effect: f64| (0..40).filter(|&s| run(effect, 100 + s).ratios[0].verdict == Verdict::Faster).count();
    let (at, half) = (called(planned), called(planned / 2.0));
    eprintln!(
        "stated +{:.1} % (planned +{:.1} %): called {at}/40 at it, {half}/40 at half",
        d.increase * 100.0,
        planned * 100.0
    );
    assert!((24..=38).contains(&at), "a change of the detectable size was called in {at} of 40");
    assert!(half <= 18, "half the detectable change was called in {half} of 40");
}

/// An adaptive experiment looked after every round, so its report shows the repeated intervals of its
/// group-sequential design: the same runs give a wider interval than a fixed plan's, named as such,
/// with a note that says why.
#[test]
fn adaptive_experiments_are_reported_with_repeated_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let a = Sim { cv_between: 0.03, ..Sim::new("a", "10.11", "default", 1000.0) };
    let b = Sim { label: "b", tps: 1030.0, ..a.clone() };
    let fixed = record(&mut store, &[a.clone(), b.clone()], &Plan::new("fixed", &[4], 8));
    let definition = "name = \"adaptive\"\nbuilds = [\"10.11\"]\nrepetitions = { min = 3, max = 10 }\n\
                      [[workloads]]\ntest = \"oltp_write_only\"\n";
    let adaptive =
        record(&mut store, &[a, b], &Plan { definition: Some(definition.into()), ..Plan::new("adaptive", &[4], 8) });
    let report_of = |id: i64| {
        let sel = Selection { experiments: vec![id.to_string()], ..Selection::default() };
        report::build_report(&store, &sel).unwrap()
    };
    let (f, r) = (report_of(fixed), report_of(adaptive));
    let (fx, rx) = (&f.ratios[0], &r.ratios[0]);
    assert_eq!(rx.ci_method.as_deref(), Some("repeated-log-delta-welch"));
    assert_ne!(fx.ci_method.as_deref(), Some("repeated-log-delta-welch"));
    assert!((fx.ratio.unwrap() - rx.ratio.unwrap()).abs() < 1e-12, "the same runs");
    let (rw, fw) = (rx.ci_hi.unwrap() / rx.ci_lo.unwrap(), fx.ci_hi.unwrap() / fx.ci_lo.unwrap());
    assert!(rw > fw, "repeated {rx:?} vs fixed {fx:?}");
    // The detectable effect is the repeated interval's (wider: a larger figure), not the fixed plan's.
    let (rd, fd) = (rx.detectable.as_ref().unwrap(), fx.detectable.as_ref().unwrap());
    assert!(rd.increase > fd.increase * 1.05, "repeated {rd:?} vs fixed {fd:?}");
    // "n for ±5 %" of the adaptive row is its design's (the first look of 3..=10 that detects it, or
    // more than 10), not the fixed plan's.
    use versus::stats::RepetitionsNeeded::{MoreThan, PerSide};
    match (rd.plan, fd.plan) {
        (Some(MoreThan(10)), Some(PerSide(_))) => {}
        (Some(PerSide(rn)), Some(PerSide(fnn))) => assert!((3..=10).contains(&rn) && rn > fnn, "{rn} vs {fnn}"),
        other => panic!("plans {other:?}"),
    }
    assert!(r.notes.iter().any(|n| n.contains("Adaptive experiment (3–10 rounds")), "{:?}", r.notes);
    assert!(!f.notes.iter().any(|n| n.contains("Adaptive")));
}

/// A known effect: MariaDB with innodb_flush_log_at_trx_commit=1, sync_binlog=1 and the binary log on,
/// against =2 / sync_binlog=0, on oltp_write_only: much slower, with many more fsyncs per transaction.
#[test]
fn known_effect_durable_commit_is_slower() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let durable = Sim { fsyncs: 3.0, cv_between: 0.05, ..Sim::new("trx1-sync1", "10.11", "trx1-sync1", 620.0) };
    let relaxed = Sim { fsyncs: 0.05, cv_between: 0.05, ..Sim::new("trx2-sync0", "10.11", "trx2-sync0", 1000.0) };
    for reps in [3, 5] {
        let id = record(&mut store, &[relaxed.clone(), durable.clone()], &Plan::new("durability", &[4], reps));
        let sel = Selection { experiments: vec![id.to_string()], ..Selection::default() };
        let r = report::build_report(&store, &sel).unwrap();
        assert_eq!(r.baseline, "trx2-sync0");
        let x = &r.ratios[0];
        assert_eq!(x.verdict, Verdict::Slower, "{x:?}");
        assert!(x.ci_hi.unwrap() < 1.0 && x.ratio.unwrap() < 0.7, "{x:?}");
        let method = if reps >= 5 { "bootstrap-bca-expanded" } else { "log-delta-welch" };
        assert_eq!(x.ci_method.as_deref(), Some(method));

        let sel = Selection { metric: Metric::FsyncsPerTxn, ..sel };
        let r = report::build_report(&store, &sel).unwrap();
        assert_eq!(r.ratios[0].verdict, Verdict::Slower, "more fsyncs per transaction is worse");
        assert!(report::terminal::render(&r, false).contains("costlier"));
    }
    // The durable config as baseline: the relaxed one is faster.
    let sel = Selection { baseline: Some("trx1-sync1".into()), ..Selection::default() };
    let r = report::build_report(&store, &sel).unwrap();
    assert_eq!(r.ratios[0].verdict, Verdict::Faster);
    assert!(r.ratios[0].ci_lo.unwrap() > 1.0);
}

#[test]
fn single_repetition_says_the_interval_is_within_run_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let sims = vec![Sim::new("old", "10.11", "d", 1000.0), Sim::new("new", "11.8", "d", 700.0)];
    record(&mut store, &sims, &Plan { intervals: 8, partial_last: true, ..Plan::new("single", &[1], 1) });
    let r = report::build_report(&store, &Selection::default()).unwrap();
    let x = &r.ratios[0];
    assert_eq!(x.ci_kind, Some(report::CiKind::WithinRunOnly));
    assert_eq!(x.verdict, Verdict::Slower);
    // One ratio: that of the means printed beside it, with the interval around it.
    let (b, c) = (x.baseline_mean.unwrap(), x.candidate_mean.unwrap());
    assert_eq!(x.ratio, Some(c / b), "{x:?}");
    assert!((x.change.unwrap() - (c / b - 1.0)).abs() < 1e-12);
    assert!(x.ci_lo.unwrap() < c / b && c / b < x.ci_hi.unwrap(), "{x:?}");
    let series_ratio = {
        let mean = |side: usize| {
            let v: Vec<f64> =
                r.runs.iter().filter(|run| run.side == side).flat_map(|run| run.series.iter().map(|p| p[1])).collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        mean(1) / mean(0)
    };
    assert!((series_ratio - c / b).abs() > 1e-6, "the test needs whole-run rates that differ from the 1-s means");
    let csv = report::csv::render(&r);
    assert!(csv.contains(&format!("{}", c / b)), "the CSV carries the same ratio:\n{csv}");
    let text = report::terminal::render(&r, false);
    assert!(text.contains("reflects only within-run noise"), "{text}");
    assert!(text.contains("(interval from within-run noise only)"), "{text}");
    // p95 has no 1-s series: no interval, and the report says why.
    let r = report::build_report(&store, &Selection { metric: Metric::P95, ..Selection::default() }).unwrap();
    assert_eq!(r.ratios[0].verdict, Verdict::NotComputed);
    assert!(r.ratios[0].note.as_deref().unwrap().contains("no 1-s series"), "{:?}", r.ratios[0].note);
}

#[test]
fn two_experiments_of_the_same_target_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let a = Sim::new("10.11/default", "10.11", "default", 1000.0);
    let first = record(&mut store, std::slice::from_ref(&a), &Plan::new("monday", &[4], 3));
    let second = record(&mut store, &[a], &Plan { seed: 99, ..Plan::new("tuesday", &[4], 3) });
    let sel = Selection { experiments: vec!["monday".into(), "tuesday".into()], ..Selection::default() };
    let r = report::build_report(&store, &sel).unwrap();
    let labels: Vec<&str> = r.sides.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, [format!("10.11/default@{first}"), format!("10.11/default@{second}")]);
    assert_eq!(r.ratios[0].verdict, Verdict::NoSignificantChange, "{:?}", r.ratios[0]);
}

#[test]
fn different_host_classes_are_refused_unless_forced_and_then_every_output_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let a = Sim::new("10.11/default", "10.11", "default", 1000.0);
    record(&mut store, std::slice::from_ref(&a), &Plan::new("small", &[4], 3));
    let big = HostFacts { logical_cpus: Some(64), hostname: Some("bench-9".into()), ..host() };
    record(&mut store, &[a], &Plan { seed: 99, host: big, ..Plan::new("big", &[4], 3) });
    let sel = Selection { experiments: vec!["small".into(), "big".into()], ..Selection::default() };
    let e = error(&store, sel.clone());
    assert!(e.starts_with("--force: the selected runs were measured on 2 host classes (hc-"), "{e}");
    assert!(e.contains("2 CPUs") && e.contains("64 CPUs") && e.contains("pass --force"), "{e}");

    // The same host name on other hardware is another class too; the same hardware under another name is not.
    let renamed = HostFacts { hostname: Some("bench-2".into()), ..host() };
    record(
        &mut store,
        &[Sim::new("10.11/default", "10.11", "default", 1000.0)],
        &Plan { host: renamed, ..Plan::new("renamed", &[4], 3) },
    );
    let same = Selection { experiments: vec!["small".into(), "renamed".into()], ..Selection::default() };
    assert!(report::build_report(&store, &same).unwrap().notes.iter().all(|n| !n.contains("host classes")));

    let r = report::build_report(&store, &Selection { force: true, ..sel }).unwrap();
    let note = r.notes.iter().find(|n| n.contains("host classes")).expect("a note on the forced comparison").clone();
    assert!(note.starts_with("--force: runs from 2 host classes are compared"), "{note}");
    let head = "runs from 2 host classes are compared";
    assert!(report::terminal::render(&r, false).contains(head));
    for format in [Format::Markdown, Format::Json, Format::Csv, Format::Html] {
        assert!(report::render(&r, format).unwrap().contains(head), "{format} does not say so");
    }
}

fn error(store: &Store, sel: Selection) -> String {
    let e = report::build_report(store, &sel).unwrap_err().to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut empty = Store::open(dir.path().join("empty.db")).unwrap();
    assert!(error(&empty, Selection::default()).contains("has no experiments yet"));
    let (mut store, _) = durability(dir.path());

    let e = error(&store, Selection { experiments: vec!["nope".into()], ..Selection::default() });
    assert!(e.contains("experiment 'nope' is not in the results store") && e.contains("durability (id 1)"), "{e}");
    let e = error(&store, Selection { baseline: Some("12.0".into()), ..by_build() });
    assert!(e.starts_with("--baseline: build '12.0' is not among the selected runs; choose one of 10.11, 11.8"), "{e}");
    let e = error(&store, Selection { targets: vec!["9.9/x".into()], ..Selection::default() });
    assert!(e.starts_with("--target: no runs of '9.9/x'"), "{e}");
    let e = error(&store, Selection { threads: vec![64], ..Selection::default() });
    assert!(e.starts_with("--threads: no runs at 64 threads; choose from 1, 4"), "{e}");

    // A baseline whose runs all failed.
    let sims = vec![Sim::new("a", "10.11", "d", 1000.0), Sim::new("b", "11.8", "d", 900.0)];
    let id = record(&mut empty, &sims, &Plan { failing: vec!["a"], ..Plan::new("broken", &[1], 3) });
    let e = error(&empty, Selection { experiments: vec![id.to_string()], ..Selection::default() });
    assert!(e.contains("--baseline: target 'a' has no finished runs (3 failed, 0 not finished)"), "{e}");
    assert!(e.contains("target with finished runs: b (3 finished); choose one with --baseline LABEL"), "{e}");
    assert!(e.ends_with(&format!("or finish its runs with `versus run --resume-id {id}`")), "{e}");
    let ok = report::build_report(&empty, &Selection { baseline: Some("b".into()), ..Selection::default() }).unwrap();
    assert!(ok.notes.iter().any(|n| n.contains("3 selected run(s) are failed")), "{:?}", ok.notes);

    // Metrics missing from old runs: refused when no run has them, noted when some lack them.
    let old = record(&mut store, &sims, &Plan { full: false, ..Plan::new("old", &[1], 2) });
    for (metric, why) in [(Metric::P50, "without a latency histogram"), (Metric::CpuPerTxn, "per-transaction costs")] {
        let e = error(&store, Selection { experiments: vec![old.to_string()], metric, ..Selection::default() });
        assert!(e.starts_with(&format!("--metric: {metric} is not stored for any of the 4 selected runs")), "{e}");
        assert!(e.contains(why), "{e}");
    }
    let sel = Selection {
        experiments: vec!["1".into(), old.to_string()],
        metric: Metric::CpuPerTxn,
        force: true,
        ..Default::default()
    };
    let r = report::build_report(&store, &sel).unwrap();
    assert!(r.notes.iter().any(|n| n.contains("cpu-per-txn is missing for 4 of 28 runs")), "{:?}", r.notes);

    // Different workloads: refused with the reason, compared with --force.
    let rw = |label| Sim { workload: "read_write", test: "oltp_read_write", ..Sim::new(label, "11.8", "d", 500.0) };
    let other = record(&mut store, &[rw("c")], &Plan::new("rw", &[1], 2));
    let sel = Selection { experiments: vec![old.to_string(), other.to_string()], ..Selection::default() };
    let e = error(&store, sel.clone());
    assert!(
        e.starts_with("--force: runs of different workloads: the baseline ran write_only but 'c' ran read_write"),
        "{e}"
    );
    let r = report::build_report(&store, &Selection { force: true, ..sel.clone() }).unwrap();
    assert!(r.forced && r.notes.iter().any(|n| n.contains("--force")), "{:?}", r.notes);
    assert_eq!(r.cases[0].workload, "write_only / read_write");
    // The same workload name with other options is refused too.
    let bigger =
        record(&mut store, &[Sim::new("c", "11.8", "d", 500.0)], &Plan { table_size: 99, ..Plan::new("big", &[1], 2) });
    let e = error(&store, Selection { experiments: vec![old.to_string(), bigger.to_string()], ..Selection::default() });
    assert!(e.contains("runs of different workloads: 'write_only' is") && e.contains("table_size=99"), "{e}");

    // --vs build where two targets share build and config.
    let twins = vec![Sim::new("t1", "10.11", "d", 1000.0), Sim::new("t2", "10.11", "d", 1000.0)];
    let id = record(&mut store, &twins, &Plan::new("twins", &[1], 2));
    let e = error(&store, Selection { experiments: vec![id.to_string()], ..by_build() });
    assert!(e.starts_with("--vs: targets 't1' and 't2' share build '10.11' and config 'd'"), "{e}");
}

fn versus() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("versus").unwrap();
    cmd.env_remove("VERSUS_HOME").env("NO_COLOR", "1");
    cmd
}

#[test]
fn command_line() {
    let dir = tempfile::tempdir().unwrap();
    drop(durability(dir.path()));
    let db = dir.path().join("results.db");
    let db = db.to_str().unwrap();

    let out = versus().args(["compare", "--db", db, "--vs", "build", "--color", "never"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("tps relative to 10.11") && text.contains("0.9056–0.9995") && !text.contains('\x1b'),
        "{text}"
    );

    // Colour: ratios beyond ±5 % in red or green, the verdict too.
    let out =
        versus().args(["compare", "--db", db, "--color", "always", "--brief", "--threads", "4"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("\x1b[1m\x1b[32m") && text.contains("\x1b[1m\x1b[31m"), "{text:?}");
    assert!(!text.contains("Stability"), "--brief prints the ratio table only");

    // Through the home directory, as the default store.
    let home = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("results.db"), home.path().join("results.db")).unwrap();
    versus().args(["--home", home.path().to_str().unwrap(), "compare", "durability"]).assert().success();

    let html = dir.path().join("report.html");
    versus().args(["report", "--db", db, "--vs", "build", "-o", html.to_str().unwrap()]).assert().success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg") && !page.contains("<script"));
    let out = versus().args(["report", "--db", db, "--format", "json", "--metric", "p99"]).assert().success();
    let r = report::json::parse(std::str::from_utf8(&out.get_output().stdout).unwrap()).unwrap();
    assert_eq!(r.metric.name, "p99");

    for (args, want) in [
        (vec!["compare", "--db", db, "nope"], "versus: error: experiment 'nope' is not in the results store"),
        (vec!["compare", "--db", "/nonexistent/results.db"], "no results store here"),
        (vec!["report", "--db", db, "-o", "/tmp/x.pdf"], "--format: cannot tell the format from '/tmp/x.pdf'"),
        (vec!["compare", "--db", db, "--metric", "speed"], "unknown metric 'speed'"),
        (vec!["compare", "--db", db, "--noise-band", "150%"], "must lie in [0, 1)"),
    ] {
        let out = versus().args(&args).assert().failure();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The HTML page as a reader sees it: rendered by headless Chromium at 1400 px (scripts/check-html.sh).
/// Skipped, with a notice, where Debian's chromium is not installed.
#[test]
fn html_renders_in_headless_chromium() {
    if std::process::Command::new("chromium").arg("--version").output().is_err() {
        eprintln!("skipped: chromium is not installed (apt-get install -y chromium; or run scripts/check-html.sh)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = durability(dir.path());
    let page = dir.path().join("report.html");
    std::fs::write(&page, report::render(&build(&store, by_build()), Format::Html).unwrap()).unwrap();
    let out = std::process::Command::new("bash")
        .arg("scripts/check-html.sh")
        .arg(&page)
        .arg(dir.path().join("check"))
        .env("VERSUS_NO_INSTALL", "1")
        .env("VERSUS_SECTION_SHOTS", "0")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("ok: screenshot is 1400 px wide") && !log.contains("FAIL"), "{log}");
    let dom = std::fs::read_to_string(dir.path().join("check/dom.html")).unwrap();
    assert!(dom.contains("id=\"table-ratios\"") && dom.contains("class=\"chart\""));
}

#[test]
fn near_zero_figures_get_no_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let sims = vec![Sim::new("old", "10.11", "d", 1000.0), Sim::new("new", "11.8", "d", 700.0)];
    record(&mut store, &sims, &Plan::new("dust", &[4], 3));
    // Both sides read 0 KB per transaction (the data is cached).
    let sel = Selection { metric: Metric::ReadKbPerTxn, ..Selection::default() };
    let r = report::build_report(&store, &sel).unwrap();
    let x = &r.ratios[0];
    assert_eq!((x.ratio, x.verdict), (None, Verdict::NotComputed), "{x:?}");
    assert!(x.note.as_deref().unwrap_or("").starts_with("both ≈ 0"), "{x:?}");
    let read = |r: &report::CompareReport| {
        r.efficiency
            .iter()
            .find(|row| row.side == 1)
            .unwrap()
            .values
            .iter()
            .find(|v| v.metric == "read-kb-per-txn")
            .cloned()
    };
    let v = read(&r).unwrap();
    assert!(v.both_near_zero && v.ratio.is_none(), "{v:?}");
    let text = report::terminal::render(&r, false);
    assert!(text.contains("—, both ≈ 0"), "{text}");
    assert!(!text.contains("costlier") && !text.contains("cheaper"), "{text}");
    // Figures well above the floor keep their ratio.
    let sel = Selection { metric: Metric::CpuPerTxn, ..Selection::default() };
    let r = report::build_report(&store, &sel).unwrap();
    assert!(r.ratios[0].ratio.is_some(), "{:?}", r.ratios[0]);
}

#[test]
fn fleet_blocks_on_three_hosts_are_compared_by_per_host_differences() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    let base = Sim { cv_between: 0.005, cv_within: 0.01, ..Sim::new("10.11/default", "10.11", "default", 1000.0) };
    let cand = Sim { cv_between: 0.005, cv_within: 0.01, ..Sim::new("11.8/default", "11.8", "default", 1050.0) };
    let id = record(&mut store, &[base, cand], &Plan::new("fleet", &[4], 6));
    // Block k (repetition k + 1) ran on host k mod 3; the hosts differ in speed far more than the
    // versions do, which only the pairing can see through.
    let db = rusqlite::Connection::open(&path).unwrap();
    let speed = [1.0, 1.35, 0.7];
    for k in 0..6i64 {
        let host = k % 3;
        db.execute(
            "INSERT INTO block_attempts (experiment_id, block, attempt, status, host, host_class, started_at) \
             VALUES (?1, ?2, 1, 'done', ?3, 'hc-000000000001', ?2)",
            rusqlite::params![id, k, format!("node-{host}")],
        )
        .unwrap();
        db.execute(
            "UPDATE runs SET tps = tps * ?3, attempt_id = last_insert_rowid() WHERE experiment_id = ?1 AND repetition = ?2",
            rusqlite::params![id, k + 1, speed[host as usize]],
        )
        .unwrap();
    }
    let sel = Selection { experiments: vec![id.to_string()], ..by_build() };
    let blocked = report::build_report(&store, &sel).unwrap();
    let x = &blocked.ratios[0];
    assert_eq!(x.ci_method.as_deref(), Some("blocked-hosts"), "{x:?}");
    assert_eq!(x.verdict, Verdict::Faster, "{x:?}");
    assert!(x.ci_lo.unwrap() > 1.0 && x.ci_hi.unwrap() < 1.1, "{x:?}");
    assert_eq!(x.note.as_deref(), Some("blocked: 6 block(s) on 3 hosts, interval over per-host mean differences"));
    for format in [Format::Markdown, Format::Json, Format::Csv] {
        assert!(report::render(&blocked, format).unwrap().contains("blocked"), "{format}");
    }

    // The same numbers without the hosts (as if one host had run them all): the unpaired interval is
    // swamped by the hosts' differences and calls nothing.
    db.execute("UPDATE runs SET attempt_id = NULL", []).unwrap();
    db.execute("DELETE FROM block_attempts", []).unwrap();
    let unpaired = report::build_report(&store, &sel).unwrap();
    let y = &unpaired.ratios[0];
    assert_ne!(y.ci_method.as_deref(), Some("blocked-hosts"));
    assert_eq!(y.verdict, Verdict::NoSignificantChange, "{y:?}");
    assert!(y.ci_hi.unwrap() - y.ci_lo.unwrap() > 3.0 * (x.ci_hi.unwrap() - x.ci_lo.unwrap()), "{x:?} {y:?}");

    // A block measured on a host of another class is refused unless --force.
    for k in 0..6i64 {
        let class = if k == 5 { "hc-000000000002" } else { "hc-000000000001" };
        db.execute(
            "INSERT INTO block_attempts (experiment_id, block, attempt, status, host, host_class, started_at) \
             VALUES (?1, ?2, 1, 'done', ?3, ?4, ?2)",
            rusqlite::params![id, k, format!("node-{}", k % 3), class],
        )
        .unwrap();
    }
    let e = error(&store, sel.clone());
    assert!(e.contains("2 host classes") && e.contains("hc-000000000002: host node-2"), "{e}");
    let forced = report::build_report(&store, &Selection { force: true, ..sel }).unwrap();
    assert!(forced.notes.iter().any(|n| n.starts_with("--force: runs from 2 host classes")), "{:?}", forced.notes);
}

/// The noise band comes from `versus calibrate` when one is stored for the host class, workload and
/// threads of the runs (the largest of several; the default counts for cases not calibrated), from
/// --noise-band when given, else the default; every output says which.
#[test]
fn a_calibrated_noise_band_is_used_and_named() {
    use versus::store::Calibration;
    let dir = tempfile::tempdir().unwrap();
    let (mut store, id) = durability(dir.path());
    let class = versus::sampler::Fingerprint::of(&host()).class();
    let r = build(&store, by_build());
    assert_eq!(r.noise_band, 0.02);
    assert!(
        r.noise_band_source.starts_with("the default (no tps calibration for host class"),
        "{}",
        r.noise_band_source
    );

    let cal = |threads: u32, band: f64, host_class: &str| Calibration {
        id: 0,
        host_class: host_class.into(),
        host: "bench".into(),
        workload: "write_only".into(),
        threads,
        metric: "tps".into(),
        repetitions: 5,
        cv: 0.04,
        band,
        confidence: 0.95,
        experiment_id: Some(id),
        target: "system".into(),
        created_at: 0,
    };
    // Another host class's calibration does not apply.
    store.save_calibration(&cal(1, 0.30, "hc-000000000009")).unwrap();
    assert_eq!(build(&store, by_build()).noise_band, 0.02);
    // One thread count calibrated: its band, and the default for the other.
    store.save_calibration(&cal(1, 0.012, &class)).unwrap();
    let r = build(&store, by_build());
    assert_eq!(r.noise_band, 0.02, "the default counts for 4 threads");
    // Each row uses the band of its own thread count, and says which.
    for x in &r.ratios {
        let want = if r.cases[x.case].threads == 1 { 0.012 } else { 0.02 };
        assert_eq!(r.band_of(x.case).band, want, "{:?}", r.cases[x.case]);
    }
    let text = report::terminal::render(&r, false);
    assert!(text.contains("1.2 % calibrated") && text.contains("2.0 % default"), "{text}");
    assert!(
        r.noise_band_source.contains(&format!(
            "write_only @ 1 thr 1.2 % (CV 4.0 %, 5 repetitions per side of system, experiment {id}"
        )) && r.noise_band_source.contains("not calibrated: write_only @ 4 thr"),
        "{}",
        r.noise_band_source
    );
    let one = build(&store, Selection { threads: vec![1], ..by_build() });
    assert_eq!(one.noise_band, 0.012);
    // Both calibrated: each thread count its own band; the wide 4-thread one changes only the 4-thread
    // verdicts (the 4-thread 11.8/trx1 change is -5 %), and the 1-thread rows keep their 1.2 %.
    store.save_calibration(&cal(4, 0.25, &class)).unwrap();
    let r = build(&store, by_build());
    assert_eq!(r.noise_band, 0.25, "the largest band of any case");
    assert!(r.noise_band_source.contains("each row uses the band of its own"), "{}", r.noise_band_source);
    for x in &r.ratios {
        let band = r.band_of(x.case).band;
        assert_eq!(band, if r.cases[x.case].threads == 1 { 0.012 } else { 0.25 });
        assert!(x.verdict != Verdict::Slower || x.change.unwrap().abs() > band, "{x:?}");
    }
    assert!(
        r.ratios.iter().any(|x| r.cases[x.case].threads == 1 && x.verdict == Verdict::Slower),
        "a 1-thread regression beyond 1.2 % is still called"
    );
    // Every format says it.
    for f in [Format::Markdown, Format::Html, Format::Csv, Format::Json, Format::Text] {
        let text = report::render(&r, f).unwrap();
        // Markdown escapes the line's backticks (its labels are text, never markup): it reads the same.
        let said = if f == Format::Markdown {
            r"calibrated by \`versus calibrate\` on host class"
        } else {
            "calibrated by `versus calibrate` on host class"
        };
        assert!(text.contains(said), "{f}: {text}");
    }
    // --noise-band wins.
    let given = build(&store, Selection { noise_band: 0.03, use_calibration: false, ..by_build() });
    assert_eq!((given.noise_band, given.noise_band_source.as_str()), (0.03, "given with --noise-band"));
}

/// Colour means a call: a candidate 10 % faster on average whose runs scatter by 10 % (a draw that came out 14 % faster) is not
/// called,
/// and then neither the ratio table nor the relative tables highlight it, in any format; the same
/// candidate measured tightly is called, highlighted and marked.
#[test]
fn only_a_called_ratio_is_highlighted() {
    let highlighted = |cv: f64, seed: u64| {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("results.db")).unwrap();
        let a = Sim { cv_between: cv, cv_within: 0.02, ..Sim::new("a", "10.11", "a", 1000.0) };
        let b = Sim { cv_between: cv, cv_within: 0.02, ..Sim::new("b", "10.11", "b", 1100.0) };
        record(&mut store, &[a, b], &Plan { intervals: 10, seed, ..Plan::new("colour", &[4], 3) });
        let r = report::build_report(&store, &Selection::default()).unwrap();
        let md = report::render(&r, Format::Markdown).unwrap();
        let html = report::render(&r, Format::Html).unwrap();
        let ratio = r.ratios[0].ratio.unwrap();
        let text = format!("{ratio:.2}");
        (r.ratios[0].verdict, ratio, md.contains(&format!("**{text}")), html.contains(&format!("better\">{text}")))
    };
    let (verdict, ratio, bold, coloured) = highlighted(0.1, 2);
    assert_eq!(verdict, Verdict::NoSignificantChange, "ratio {ratio}");
    assert!(ratio > 1.05, "the fixture must be beyond the old ±5 % rule: {ratio}");
    assert!(!bold && !coloured, "an uncalled ratio {ratio} is highlighted (bold {bold}, colour {coloured})");
    let (verdict, ratio, bold, coloured) = highlighted(0.005, 7);
    assert_eq!(verdict, Verdict::Faster, "ratio {ratio}");
    assert!(bold && coloured, "a called ratio {ratio} is not highlighted (bold {bold}, colour {coloured})");
}
