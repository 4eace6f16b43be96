//! `versus diff-vars`, `versus explain` and `versus series`: the variable diff between real sandboxes
//! (the distribution's MariaDB 10.11, a fetched 11.8 and MySQL 9.7), what B accepts of A's values, the
//! report sections on stores filled with synthetic runs (series with an injected step, a stored
//! explain experiment), the command lines, and — ignored by default, it takes minutes — the seed case
//! end to end.

mod common;

use std::time::Duration;

use assert_cmd::Command;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use versus::experiment::spec::WorkloadDef;
use versus::experiment::{ExperimentFile, Plan};
use versus::explain::bisect::{BisectStep, Probe, Purpose, Suspect};
use versus::explain::diffvars::{Change, Origin, VarDiff};
use versus::explain::runner::{ExplainOptions, SkipReason, step_experiment};
use versus::explain::targets::{TargetSpec, capture_live};
use versus::explain::{diff, series};
use versus::metric::Metric;
use versus::report::{self, Format, Selection};
use versus::sampler::HostFacts;
use versus::server::Home;
use versus::server::flavor::defaults;
use versus::store::{Interval, NewCell, NewExperiment, NewRun, RunResult, StartRun, Store, Summary};

fn home_with(builds: &[versus::server::Build]) -> (tempfile::TempDir, Home) {
    let dir = tempfile::Builder::new().prefix("versus-explain-").tempdir().unwrap();
    let home = Home::at(dir.path());
    for b in builds {
        home.register(b).unwrap();
    }
    (dir, home)
}

fn visible(d: &VarDiff) -> Vec<&versus::explain::VarRow> {
    d.visible(false).collect()
}

fn row<'a>(d: &'a VarDiff, name: &str) -> Option<&'a versus::explain::VarRow> {
    d.rows.iter().find(|r| r.name == name)
}

/// No visible difference is a path, a port, an id, a version or a host-sized value.
fn assert_no_host_noise(d: &VarDiff) {
    for r in visible(d) {
        for v in [&r.a, &r.b].into_iter().flatten() {
            assert!(!v.starts_with('/'), "{} = {v} is a path", r.name);
        }
        for n in
            ["port", "datadir", "basedir", "socket", "hostname", "version", "pid_file", "server_uuid", "server_uid"]
        {
            assert_ne!(r.name, n, "noise {n} is shown");
        }
    }
}

#[test]
fn diff_vars_between_mariadb_10_11_and_11_8_lists_the_default_changes() {
    let system = common::system_build();
    let m118 = common::fetched_build("mariadb-11.8");
    let (dir, home) = home_with(&[system.clone(), m118.clone()]);
    let a = TargetSpec::parse(&format!("{}:innodb_buffer_pool_size=64M", system.name), "A").unwrap();
    let b = TargetSpec::parse(&m118.name, "B").unwrap();
    let sa = capture_live(&home, &a, dir.path(), "a").unwrap();
    let sb = capture_live(&home, &b, dir.path(), "b").unwrap();
    let d = diff(&sa, &sb);
    // Real default changes of 11.x.
    let cs = row(&d, "character_set_server").expect("character_set_server differs");
    assert_eq!((cs.a.as_deref(), cs.b.as_deref(), cs.origin), (Some("latin1"), Some("utf8mb4"), Origin::Default));
    assert_eq!(
        row(&d, "innodb_snapshot_isolation").map(|r| (r.a.as_deref(), r.b.as_deref())),
        Some((Some("OFF"), Some("ON")))
    );
    assert_eq!(row(&d, "innodb_defragment").map(|r| r.change), Some(Change::Removed), "removed in 11.x");
    assert_eq!(row(&d, "binlog_gtid_index").map(|r| r.change), Some(Change::New), "new in 11.4");
    let bp = row(&d, "innodb_buffer_pool_size").unwrap();
    assert_eq!((bp.origin, bp.a.as_deref()), (Origin::SetOnA, Some("67108864")));
    // Host noise is classified and hidden.
    assert!(row(&d, "basedir").unwrap().noise.is_some());
    assert!(row(&d, "version").unwrap().noise.is_some());
    assert_no_host_noise(&d);
    let text =
        versus::report::explain::render_diff(&d, false, versus::report::explain::OutputFormat::Text, false).unwrap();
    assert!(text.contains("character_set_server") && !text.contains("basedir"), "{text}");
    let all =
        versus::report::explain::render_diff(&d, true, versus::report::explain::OutputFormat::Markdown, false).unwrap();
    assert!(all.contains("| basedir |") && all.contains("noise: path"), "{all}");
}

#[test]
fn diff_vars_between_mariadb_11_8_and_mysql_9_7() {
    let m118 = common::fetched_build("mariadb-11.8");
    let my97 = common::fetched_build("mysql-9.7");
    let (dir, home) = home_with(&[m118.clone(), my97.clone()]);
    let sa = capture_live(&home, &TargetSpec::parse(&m118.name, "A").unwrap(), dir.path(), "a").unwrap();
    let sb = capture_live(&home, &TargetSpec::parse(&my97.name, "B").unwrap(), dir.path(), "b").unwrap();
    let d = diff(&sa, &sb);
    for (name, a, b) in [("sync_binlog", "0", "1"), ("binlog_format", "MIXED", "ROW"), ("log_bin", "OFF", "ON")] {
        let r = row(&d, name).unwrap_or_else(|| panic!("{name} does not differ"));
        assert_eq!((r.a.as_deref(), r.b.as_deref(), r.origin), (Some(a), Some(b), Origin::Default), "{name}");
        assert!(r.noise.is_none());
    }
    // Sized from the host on MySQL (purge threads from the CPU count), not a default.
    assert!(row(&d, "innodb_purge_threads").is_none_or(|r| r.noise.is_some()));
    assert_no_host_noise(&d);
    // The table of changed defaults that annotates diff-vars agrees with each build's own defaults.
    for s in [&sa, &sb] {
        let server = defaults::server_of(s.server_version.as_deref().unwrap()).unwrap();
        let wrong = defaults::disagreements(server, &s.variables);
        let said: Vec<String> = wrong
            .iter()
            .map(|w| {
                format!(
                    "{} {}: table {} ({}), server {}",
                    w.row.variable, w.row.version, w.row.new, w.row.source, w.actual
                )
            })
            .collect();
        assert!(said.is_empty(), "{}: {said:#?}", s.label);
    }
}

/// B = the distribution's 10.11 given 11.8's values: variables 10.11 lacks are unexplainable, values it
/// refuses at startup are found and named, and nothing else is lost.
#[test]
fn explain_dry_run_sorts_out_what_b_accepts() {
    let system = common::system_build();
    let m118 = common::fetched_build("mariadb-11.8");
    let (_dir, home) = home_with(&[system.clone(), m118.clone()]);
    let mut store = Store::open(home.root().join("results.db")).unwrap();
    let a = TargetSpec::parse(&m118.name, "A").unwrap();
    let b = TargetSpec::parse(&system.name, "B").unwrap();
    let opts = options("dry", 60);
    let mut log = Vec::new();
    let r = versus::explain::runner::explain(
        &home,
        &mut store,
        &a,
        &b,
        &opts,
        true,
        versus::experiment::Progress::quiet(),
        &mut |l: &str| log.push(l.to_string()),
    )
    .unwrap();
    assert!(r.outcome.is_none() && r.experiments.is_empty(), "a dry run measures nothing");
    let names: Vec<&str> = r.candidates.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"character_set_server+collation_server"), "{names:?}");
    let reason = |n: &str| r.skipped.iter().find(|s| s.name == n).map(|s| s.reason.clone());
    assert_eq!(reason("binlog_gtid_index"), Some(SkipReason::NotOnB), "only on A (11.8)");
    assert_eq!(reason("innodb_defragment"), Some(SkipReason::OnlyOnB), "only on B (10.11)");
    // 10.11 does not know redirect_url, which 11.8 tracks by default.
    match reason("session_track_system_variables") {
        Some(SkipReason::Rejected(why)) => {
            assert!(why.contains("session_track_system_variables") || why.contains("redirect_url"), "{why}")
        }
        other => panic!("session_track_system_variables: {other:?}; log {log:?}"),
    }
    assert!(r.candidates.iter().all(|c| versus::explain::noise_kind(&c.name).is_none()));
    assert!(home.root().join("explain").join("dry").read_dir().is_err(), "the work directory is removed");
    let text = versus::report::explain::render_explain(&r, versus::report::explain::OutputFormat::Text, false).unwrap();
    assert!(text.contains("worst case") && text.contains("Variables not bisected"), "{text}");
    let total = r.total_estimate();
    assert!(total.starts_with("about ") && total.contains(" min in all: "), "{total}");
    assert_eq!(text.lines().filter(|l| *l == total).count(), 1, "one total line in the dry run: {text}");
    assert!(text.contains("noise band 2.0 %: given with --noise-band"), "{text}");
}

/// A = the distribution's 10.11, B = 11.8: 10.11's optimizer_switch is given to 11.8 flag by flag
/// (B starts with them and reports each with A's value), the flags only one side has are listed, the
/// retyped optimizer_adjust_secondary_key_costs is not given (unused from 11.0), the character set and
/// collation move together and shape the data, and the connections' session collation (which 11.8
/// maps from the same handshake to utf8mb4_uca1400_ai_ci) is a client-side candidate B accepts.
/// `--resume --dry-run` with nothing stored fails as the real run would, in one line naming --resume.
#[test]
fn explain_resume_dry_run_with_nothing_stored_is_refused() {
    let system = common::system_build();
    let (_dir, home) = home_with(std::slice::from_ref(&system));
    let mut store = Store::open(home.root().join("results.db")).unwrap();
    let a = TargetSpec::parse(&format!("{}:sync_binlog=0", system.name), "A").unwrap();
    let b = TargetSpec::parse(&format!("{}:sync_binlog=1", system.name), "B").unwrap();
    let opts = ExplainOptions { resume: true, ..options("nothing", 60) };
    let run = |store: &mut Store| {
        versus::explain::runner::explain(
            &home,
            store,
            &a,
            &b,
            &opts,
            true,
            versus::experiment::Progress::quiet(),
            &mut |_| {},
        )
    };
    let err = run(&mut store).unwrap_err().to_string();
    assert_eq!(
        err,
        "--resume: no stored experiment is named 'nothing-gap': nothing to resume; start it with the same arguments, or without --resume"
    );
    // With the first step stored, the dry run goes through.
    store
        .create_experiment(&NewExperiment {
            name: "nothing-gap".into(),
            file: None,
            definition: String::new(),
            seed: 1,
            host: HostFacts::default(),
            cells: vec![],
            runs: vec![],
        })
        .unwrap();
    assert!(run(&mut store).is_ok());
}

#[test]
fn optimizer_switch_of_10_11_is_given_to_11_8_flag_by_flag() {
    let system = common::system_build();
    let m118 = common::fetched_build("mariadb-11.8");
    let (_dir, home) = home_with(&[system.clone(), m118.clone()]);
    let mut store = Store::open(home.root().join("results.db")).unwrap();
    let a = TargetSpec::parse(&system.name, "A").unwrap();
    let b = TargetSpec::parse(&m118.name, "B").unwrap();
    let mut log = Vec::new();
    let r = versus::explain::runner::explain(
        &home,
        &mut store,
        &a,
        &b,
        &options("flags", 60),
        true,
        versus::experiment::Progress::quiet(),
        &mut |l: &str| log.push(l.to_string()),
    )
    .unwrap();
    let cand = |n: &str| r.candidates.iter().find(|c| c.name == n);
    for flag in ["hash_join_cardinality", "cset_narrowing"] {
        let c = cand(&format!("optimizer_switch:{flag}")).unwrap_or_else(|| panic!("{flag}: {:?} {log:?}", r.skipped));
        assert_eq!((c.a.as_str(), c.b.as_str()), ("off", "on"));
        assert_eq!(c.transfer.options, [format!("optimizer_switch={flag}=off")]);
    }
    assert!(cand("optimizer_switch").is_none(), "the list is never given whole");
    let reason = |n: &str| r.skipped.iter().find(|s| s.name == n).map(|s| s.reason.clone());
    assert_eq!(reason("optimizer_switch:engine_condition_pushdown"), Some(SkipReason::NotOnB));
    assert_eq!(reason("optimizer_switch:sargable_casefold"), Some(SkipReason::OnlyOnB));
    match reason("optimizer_adjust_secondary_key_costs") {
        Some(SkipReason::NotGiven(why)) => assert!(why.contains("unused from 11.0.0"), "{why}"),
        other => panic!("optimizer_adjust_secondary_key_costs: {other:?}"),
    }
    let cs = cand("character_set_server+collation_server").expect("the character set and collation move together");
    assert_eq!(cs.transfer.options, ["character_set_server=latin1", "collation_server=latin1_swedish_ci"]);
    assert!(cs.transfer.shapes_data);
    // Both change the data: 11.8 creates 3 undo tablespaces when the datadir is made, 10.11 none.
    assert_eq!(r.shaping, ["character_set_server+collation_server", "innodb_undo_tablespaces"]);
    assert_eq!(r.extra_preparations, 3, "every combination of the two but B's own");
    assert_eq!(reason("character_set_database"), Some(SkipReason::Follows("character_set_server".into())));
    assert_eq!(reason("collation_connection"), Some(SkipReason::Client));
    let conn = cand("connection_charset").expect("the workload connections' collation differs");
    assert_eq!(
        conn.transfer.charset.as_ref().map(|c| c.statement()).as_deref(),
        Some("SET NAMES utf8mb4 COLLATE utf8mb4_general_ci")
    );
    assert_eq!(conn.b, "utf8mb4 / utf8mb4_uca1400_ai_ci");
    let text = versus::report::explain::render_explain(&r, versus::report::explain::OutputFormat::Text, false).unwrap();
    for want in [
        "How A's values are given to B",
        "flag by flag: B gets A's value of 2 flag(s) (hash_join_cardinality=off, cset_narrowing=off)",
        "only A has engine_condition_pushdown=off (not given)",
        "only B has sargable_casefold=on (B keeps them)",
        "connections: SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
        "2 variable(s) shape the data (character_set_server+collation_server, innodb_undo_tablespaces)",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let row = text.lines().find(|l| l.starts_with("character_set_server+collation_server ")).unwrap();
    assert!(
        row.contains("character_set_server=latin1 collation_server=latin1_swedish_ci")
            && row.contains("prepared under it"),
        "{row}"
    );
}

/// Two targets of one build that differ only in the server's character set and collation: the
/// probes run on data prepared under each (B's own; A's, which the probe giving B A's values shares),
/// and the report names the character set as the setting B is given.
#[test]
fn explain_probes_run_on_data_prepared_under_each_character_set() {
    let system = common::system_build();
    let (_dir, home) = home_with(std::slice::from_ref(&system));
    let mut store = Store::open(home.root().join("results.db")).unwrap();
    let a = TargetSpec::parse("system:character_set_server=latin1,collation_server=latin1_swedish_ci", "A").unwrap();
    let b = TargetSpec::parse("system:character_set_server=utf8mb4,collation_server=utf8mb4_general_ci", "B").unwrap();
    let mut opts = options("charsets", 40);
    opts.workload.test = "oltp_read_only".into();
    opts.workload.options = toml::from_str("tables = 1\ntable-size = 2000").unwrap();
    opts.threads = vec![2];
    opts.duration = Duration::from_secs(2);
    opts.repetitions = 2;
    let r = versus::explain::runner::explain(
        &home,
        &mut store,
        &a,
        &b,
        &opts,
        false,
        versus::experiment::Progress::quiet(),
        &mut |l: &str| eprintln!("{l}"),
    )
    .unwrap();
    let names: Vec<&str> = r.candidates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["character_set_server+collation_server"], "skipped: {:?}", r.skipped);
    let latin1 = ["character_set_server=latin1".to_string(), "collation_server=latin1_swedish_ci".into()];
    let utf8 = ["character_set_server=utf8mb4".to_string(), "collation_server=utf8mb4_general_ci".into()];
    let data = |options: &[String]| r.prepared.iter().find(|d| d.options == options);
    assert_eq!(r.prepared.len(), 2, "B's data and A's, each prepared once: {:?}", r.prepared);
    assert_eq!(data(&utf8).map(|d| d.probes.clone()), Some(vec!["B".to_string()]), "{:?}", r.prepared);
    let on_latin1 = &data(&latin1).expect("data prepared under A's character set").probes;
    assert!(on_latin1.contains(&"A".to_string()), "{on_latin1:?}");
    assert!(
        on_latin1.contains(&"B+character_set_server+collation_server".to_string()),
        "the probe giving B A's character set runs on data prepared under it: {on_latin1:?}"
    );
    let o = r.outcome.as_ref().unwrap();
    let text = versus::report::explain::render_explain(&r, versus::report::explain::OutputFormat::Text, false).unwrap();
    assert!(
        text.contains("Data prepared")
            && text.contains("character_set_server=latin1 collation_server=latin1_swedish_ci"),
        "{text}"
    );
    if !o.findings.is_empty() {
        // When it matters, the attribution names it as the options set on B.
        assert!(
            text.contains("Setting character_set_server=latin1, collation_server=latin1_swedish_ci on B"),
            "{text}"
        );
    }
    assert!(home.root().join("explain").join("charsets").read_dir().is_err(), "the work directory is removed");

    // Started again with --resume: every step is stored and finished, so nothing is measured, and the
    // stored samples lead the search down the same path to the same end.
    let stored = store.list_experiments().unwrap().len();
    opts.resume = true;
    let again = versus::explain::runner::explain(
        &home,
        &mut store,
        &a,
        &b,
        &opts,
        false,
        versus::experiment::Progress::quiet(),
        &mut |l: &str| eprintln!("{l}"),
    )
    .unwrap();
    assert_eq!(store.list_experiments().unwrap().len(), stored, "no new experiment");
    assert_eq!(again.experiments, r.experiments);
    assert_eq!(again.prepared, r.prepared, "the data the reused steps ran on");
    let o2 = again.outcome.as_ref().unwrap();
    assert_eq!((&o2.steps, &o2.findings, o2.conclusion), (&o.steps, &o.findings, o.conclusion));
    assert!(o2.notes.iter().any(|n| n.starts_with("--resume: step 1 (charsets-gap")), "{:?}", o2.notes);
}

fn options(name: &str, max_runs: usize) -> ExplainOptions {
    ExplainOptions {
        name: name.into(),
        workload: WorkloadDef {
            name: None,
            test: "oltp_write_only".into(),
            script: None,
            threads: None,
            options: toml::from_str("tables = 2\ntable-size = 5000").unwrap(),
        },
        threads: vec![4],
        duration: Duration::from_secs(5),
        warmup: Duration::ZERO,
        repetitions: 5,
        max_runs,
        confirm: true,
        singles_max: 4,
        extra_rounds: 1,
        adaptive: None,
        metric: Metric::Tps,
        noise_band: 0.02,
        noise_band_source: "given with --noise-band".into(),
        confidence: 0.95,
        seed: 1,
        resume: false,
        profile: false,
    }
}

// ---------------------------------------------------------------------------------------------------
// Synthetic stores.

fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Stores an experiment with `definition` whose targets (label, build, mean tps, variables) run
/// `reps` repetitions at 4 threads with 2 % noise; returns its id.
fn record(store: &mut Store, name: &str, definition: &str, targets: &[Sim], reps: u32, seed: u64) -> i64 {
    let cells: Vec<NewCell> = targets
        .iter()
        .map(|(label, build, _, _)| NewCell {
            key: format!("target={label};workload=oltp_write_only;threads=4"),
            target: label.clone(),
            build: Some(build.clone()),
            config: Some("default".into()),
            workload: "oltp_write_only".into(),
            threads: 4,
            workload_options: serde_json::json!({ "test": "oltp_write_only", "tables": 2 }),
        })
        .collect();
    let runs = (1..=reps).flat_map(|r| (0..cells.len()).map(move |c| NewRun { cell: c, repetition: r })).collect();
    let id = store
        .create_experiment(&NewExperiment {
            name: name.into(),
            file: None,
            definition: definition.into(),
            seed,
            host: HostFacts::default(),
            cells,
            runs,
        })
        .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for row in store.runs(id).unwrap() {
        let (_, build, tps, vars) = targets.iter().find(|t| t.0 == row.cell.target).unwrap();
        store
            .start_run(row.id, &StartRun { server_version: format!("{build}-MariaDB"), command: serde_json::json!({}) })
            .unwrap();
        let tps = tps * (1.0 + 0.02 * normal(&mut rng));
        let summary =
            Summary { events: (tps * 10.0) as u64, tps, qps: tps * 6.0, duration_s: 10.0, ..Summary::default() };
        let intervals = (1..=10).map(|t| Interval { t_s: t as f64, tps, ..Interval::default() }).collect();
        let mut variables =
            vec![("port".to_string(), format!("{}", 30000 + row.id)), ("datadir".into(), format!("/sb/{}/", row.id))];
        variables.extend(vars.iter().cloned());
        store.finish_run(row.id, &RunResult { summary, intervals, variables, ..RunResult::default() }).unwrap();
    }
    id
}

/// A synthetic target: label, build, mean tps, variables beyond port and datadir.
type Sim = (String, String, f64, Vec<(String, String)>);

fn vars(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn validate(r: &report::CompareReport) {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/compare-report.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&report::render(r, Format::Json).unwrap()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Six point releases, tps 20 % lower from the fourth on: the series command and the report find the
/// step there, and the report lists each release's changed defaults against the first.
#[test]
fn series_of_stored_releases_finds_the_injected_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let targets: Vec<Sim> = (0..6)
        .map(|i| {
            let v = format!("10.11.{}", 10 + i);
            let tps = if i >= 3 { 800.0 } else { 1000.0 };
            let flush = if i >= 3 { "O_DIRECT" } else { "fsync" };
            (v.clone(), v, tps, vars(&[("innodb_flush_method", flush), ("version", &format!("10.11.{}", 10 + i))]))
        })
        .collect();
    let id = record(&mut store, "releases", "name = \"releases\"\n", &targets, 3, 11);
    let s = series::from_store(&store, &[id.to_string()], &[], Metric::Tps, 0.95, 0.05).unwrap();
    assert_eq!(s.labels.len(), 6);
    assert_eq!(s.min_segment, 2);
    let c = &s.cases[0];
    assert_eq!(c.changes.len(), 1, "{:?}", c.changes);
    assert_eq!((c.changes[0].index, c.changes[0].label.as_str()), (3, "10.11.13"));
    assert!((c.changes[0].step + 0.2).abs() < 0.03, "{:?}", c.changes[0]);
    assert!((c.points[5].relative.unwrap() - 0.8).abs() < 0.03);
    // A reordered series moves the step.
    let order: Vec<String> =
        ["10.11.13", "10.11.14", "10.11.15", "10.11.10", "10.11.11", "10.11.12"].map(String::from).into();
    let s2 = series::from_store(&store, &[id.to_string()], &order, Metric::Tps, 0.95, 0.05).unwrap();
    assert!(s2.cases[0].changes.iter().any(|x| x.label == "10.11.10" && x.step > 0.15), "{:?}", s2.cases[0].changes);

    let r = report::build_report(&store, &Selection::default()).unwrap();
    let rs = r.series.as_ref().expect("three sides or more make a series");
    assert_eq!(rs.cases[0].changes.iter().map(|c| c.index).collect::<Vec<_>>(), [3]);
    assert_eq!(r.variable_changes.len(), 3, "the releases after the step changed innodb_flush_method");
    let ch = &r.variable_changes[0];
    assert_eq!(ch.rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["innodb_flush_method"]);
    validate(&r);
    let md = report::render(&r, Format::Markdown).unwrap();
    assert!(md.contains("## Version series") && md.contains("at 10.11.13 tps stepped −"), "{md}");
    assert!(md.contains("## Changed defaults and settings") && md.contains("10.11.13 against 10.11.10: "), "{md}");
    let html = report::render(&r, Format::Html).unwrap();
    assert!(html.contains("id=\"series\"") && html.contains("stroke-dasharray"), "the chart marks the step");

    // The command line reads the same runs.
    let db = dir.path().join("r.db");
    let out = versus_cmd(dir.path())
        .args(["series", "--from", "releases", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cases"][0]["changes"][0]["label"], "10.11.13");
    let out = versus_cmd(dir.path())
        .args(["series", "--from", "releases", "--color", "never", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("relative to first") && text.contains("▼ −"), "{text}");
    let out =
        versus_cmd(dir.path()).args(["series", "--from", "releases", "nope", "x", "--db"]).arg(&db).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--order"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_flat_series_has_no_change_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let targets: Vec<Sim> = (0..8).map(|i| (format!("v{i}"), format!("v{i}"), 1000.0, vec![])).collect();
    let id = record(&mut store, "flat", "name = \"flat\"\n", &targets, 3, 5);
    let s = series::from_store(&store, &[id.to_string()], &[], Metric::Tps, 0.95, 0.05).unwrap();
    assert!(s.cases[0].changes.is_empty(), "{:?}", s.cases[0].changes);
}

fn versus_cmd(home: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("versus").unwrap();
    c.env("VERSUS_HOME", home).env_remove("VERSUS_DB");
    c
}

/// A confirmation experiment as `versus explain` stores it: the report recomputes the attribution from
/// its runs and names sync_binlog first, then innodb_flush_log_at_trx_commit.
#[test]
fn the_report_explains_a_stored_explain_experiment() {
    let a = TargetSpec::parse("system:log-bin,sync_binlog=0,innodb_flush_log_at_trx_commit=2", "A").unwrap();
    let b = TargetSpec::parse("system:log-bin,sync_binlog=1,innodb_flush_log_at_trx_commit=1", "B").unwrap();
    let c = vec![Suspect::new("innodb_flush_log_at_trx_commit", "2", "1"), Suspect::new("sync_binlog", "0", "1")];
    let step = BisectStep {
        number: 3,
        purpose: Purpose::Confirm,
        probes: vec![Probe::B, Probe::A, Probe::Set(vec![1]), Probe::Set(vec![0]), Probe::Set(vec![0, 1])],
        repetitions: None,
    };
    let file = step_experiment(&a, &b, &c, &step, &options("explain", 60), "B against A").unwrap();
    let definition = toml::to_string(&file).unwrap();
    let plan = Plan::new(&ExperimentFile::parse(&definition).unwrap(), std::path::Path::new("/")).unwrap();
    let labels: Vec<String> = plan.targets.iter().map(|t| t.label.clone()).collect();
    assert_eq!(labels, ["B", "A", "B+sync_binlog", "B+innodb_flush_log_at_trx_commit", "B+all"]);
    // B 1000, A 2000; sync_binlog=0 alone gives 1500, the flush alone 1200, both 1900.
    let tps = [1000.0, 2000.0, 1500.0, 1200.0, 1900.0];
    let targets: Vec<Sim> = labels.iter().zip(tps).map(|(l, t)| (l.clone(), "system".to_string(), t, vec![])).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    record(&mut store, &file.name, &definition, &targets, 5, 3);
    let r = report::build_report(&store, &Selection { baseline: Some("B".into()), ..Selection::default() }).unwrap();
    assert_eq!(r.explain.len(), 1);
    assert!(r.series.is_none(), "the probes of an explain step are not a version series");
    let s = &r.explain[0];
    let gap = s.gap.unwrap();
    assert!((gap.points + 50.0).abs() < 3.0, "B is 50 % slower: {}", gap.points);
    let names: Vec<String> = s.effects.iter().map(|e| e.names.join(",")).collect();
    assert_eq!(names, ["sync_binlog=0", "innodb_flush_log_at_trx_commit=2"]);
    // sync_binlog first: 25 points; the flush then recovers 20 more (alone only 10).
    assert!((s.effects[0].increment.points.unwrap() - 25.0).abs() < 3.0, "{:?}", s.effects[0]);
    assert!(s.effects[0].alone.is_none());
    assert!((s.effects[1].increment.points.unwrap() - 20.0).abs() < 3.0, "{:?}", s.effects[1]);
    assert!((s.effects[1].alone.as_ref().unwrap().points.unwrap() - 10.0).abs() < 3.0, "{:?}", s.effects[1]);
    let together = s.together.as_ref().unwrap();
    assert!((together.points.unwrap() - 45.0).abs() < 3.0);
    // What the findings leave of the −50-point gap, in the gap's sign.
    assert!((s.unexplained_points.unwrap() + 5.0).abs() < 4.0, "{:?}", s.unexplained_points);
    // What each comparison could have detected, from its own repetitions (5 per side, the synthetic
    // runs' noise): a few percent, never below the noise band.
    for d in [gap.detectable, s.effects[0].increment.detectable, s.effects[1].increment.detectable] {
        let d = d.expect("every measured comparison has a detectable effect");
        assert!(d.increase >= 0.02 && d.either_way() < 0.5 && d.power == 0.8, "{d:?}");
    }
    validate(&r);
    let md = report::render(&r, Format::Markdown).unwrap();
    assert!(md.contains("| detectable |") && md.contains("±"), "{md}");
    assert!(md.contains("B is 50.") && md.contains("Setting sync_binlog=0 on B recovers 2"), "{md}");
    assert!(md.contains("With that, setting innodb_flush_log_at_trx_commit=2 on B recovers 2"), "{md}");
    let html = report::render(&r, Format::Html).unwrap();
    assert!(html.contains("id=\"explained\"") && html.contains("sync_binlog=0"));
}

/// A confirmation cut to the budget (B, A, the first finding alone, both together; the second finding
/// not alone): the report still gives both increments and the total, and no "alone" for the second.
#[test]
fn the_report_reads_a_confirmation_cut_to_the_budget() {
    let a = TargetSpec::parse("system:log-bin,sync_binlog=0,innodb_flush_log_at_trx_commit=2", "A").unwrap();
    let b = TargetSpec::parse("system:log-bin,sync_binlog=1,innodb_flush_log_at_trx_commit=1", "B").unwrap();
    let c = vec![Suspect::new("innodb_flush_log_at_trx_commit", "2", "1"), Suspect::new("sync_binlog", "0", "1")];
    let step = BisectStep {
        number: 3,
        purpose: Purpose::Confirm,
        probes: vec![Probe::B, Probe::A, Probe::Set(vec![1]), Probe::Set(vec![0, 1])],
        repetitions: None,
    };
    let file = step_experiment(&a, &b, &c, &step, &options("explain", 60), "B against A").unwrap();
    let definition = toml::to_string(&file).unwrap();
    let labels = ["B", "A", "B+sync_binlog", "B+all"];
    let tps = [1000.0, 2000.0, 1500.0, 1900.0];
    let targets: Vec<Sim> =
        labels.iter().zip(tps).map(|(l, t)| (l.to_string(), "system".to_string(), t, vec![])).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    record(&mut store, &file.name, &definition, &targets, 5, 3);
    let r = report::build_report(&store, &Selection { baseline: Some("B".into()), ..Selection::default() }).unwrap();
    let s = &r.explain[0];
    let names: Vec<String> = s.effects.iter().map(|e| e.names.join(",")).collect();
    assert_eq!(names, ["sync_binlog=0", "innodb_flush_log_at_trx_commit=2"]);
    assert!((s.effects[0].increment.points.unwrap() - 25.0).abs() < 3.0, "{:?}", s.effects[0]);
    assert!((s.effects[1].increment.points.unwrap() - 20.0).abs() < 3.0, "{:?}", s.effects[1]);
    assert!(s.effects[1].alone.is_none(), "not measured alone");
    assert!((s.together.as_ref().unwrap().points.unwrap() - 45.0).abs() < 3.0);
    validate(&r);
}

/// `versus diff-vars --from` reads stored variables; settings of the definition are told from defaults.
#[test]
fn diff_vars_from_a_stored_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let definition = r#"
name = "pair"
[[targets]]
name = "old"
build = "system"
set = { sync_binlog = 0 }
[[targets]]
name = "new"
build = "system"
[[workloads]]
test = "oltp_write_only"
"#;
    let targets = vec![
        ("old".to_string(), "system".to_string(), 1000.0, vars(&[("sync_binlog", "0"), ("binlog_format", "MIXED")])),
        ("new".to_string(), "system".to_string(), 900.0, vars(&[("sync_binlog", "1"), ("binlog_format", "ROW")])),
    ];
    record(&mut store, "pair", definition, &targets, 2, 1);
    drop(store);
    let out = versus_cmd(dir.path())
        .args(["diff-vars", "--from", "pair", "old", "new", "--format", "json", "--db"])
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let what: Vec<(String, String)> =
        rows.iter().map(|r| (r["name"].as_str().unwrap().into(), r["origin"].as_str().unwrap().into())).collect();
    assert_eq!(what, [("binlog_format".into(), "default".into()), ("sync_binlog".into(), "set_on_a".into())]);
    assert_eq!(json["noise_hidden"], 2, "port and datadir");
    let out = versus_cmd(dir.path())
        .args(["diff-vars", "--from", "pair", "old", "missing", "--db"])
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no target 'missing'") && err.contains("old"), "{err}");
}

#[test]
fn command_line_errors_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = versus_cmd(dir.path()).args(["explain", "system", "system"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workload"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = versus_cmd(dir.path())
        .args(["explain", "system:port=1", "system", "--workload", "oltp_write_only"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("managed by versus"));
    let out = versus_cmd(dir.path()).args(["diff-vars", "nosuchbuild", "system"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown build 'nosuchbuild'"));
    let out = versus_cmd(dir.path()).args(["series", "system"]).output().unwrap();
    assert!(!out.status.success());
    // Adaptive steps need a maximum, at least --repetitions.
    let explain = |extra: &[&str]| {
        let mut args = vec!["explain", "system", "system", "--workload", "oltp_write_only"];
        args.extend_from_slice(extra);
        let out = versus_cmd(dir.path()).args(&args).output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = explain(&["--until", "±3%"]);
    assert!(err.contains("--until") && err.contains("--max-repetitions"), "{err}");
    let err = explain(&["--max-repetitions", "2", "--repetitions", "3"]);
    assert!(err.contains("--max-repetitions"), "{err}");
}

/// The seed case on MariaDB: A = binary log with sync_binlog=0 and innodb_flush_log_at_trx_commit=2,
/// B = the same build with sync_binlog=1 and innodb_flush_log_at_trx_commit=1 and a buffer pool 4 times
/// the size (that does not matter: the data are 10 MB). `versus explain` must name sync_binlog and the
/// redo flush, in the order of their effect, and not blame the buffer pool, within its budget. It takes
/// 10–20 minutes on a 2-core machine; run it with `cargo test --test explain -- --ignored` (a recorded
/// run is in docs/explain.md).
#[test]
#[ignore]
fn explain_seed_case_end_to_end() {
    let system = common::system_build();
    let (_dir, home) = home_with(std::slice::from_ref(&system));
    let mut store = Store::open(home.root().join("results.db")).unwrap();
    let a = TargetSpec::parse(
        "system:log-bin,sync_binlog=0,innodb_flush_log_at_trx_commit=2,innodb_buffer_pool_size=128M",
        "A",
    )
    .unwrap();
    let b = TargetSpec::parse(
        "system:log-bin,sync_binlog=1,innodb_flush_log_at_trx_commit=1,innodb_buffer_pool_size=512M",
        "B",
    )
    .unwrap();
    // The defaults of `versus explain`: 4 tables of 10 000 rows, 4 threads, 3 repetitions of 10 s.
    let mut opts = options("seed", 150);
    opts.workload.options = toml::from_str("tables = 4\ntable-size = 10000").unwrap();
    opts.duration = Duration::from_secs(10);
    opts.repetitions = 3;
    let r = versus::explain::runner::explain(
        &home,
        &mut store,
        &a,
        &b,
        &opts,
        false,
        versus::experiment::Progress::stderr(),
        &mut |l: &str| eprintln!("{l}"),
    )
    .unwrap();
    eprintln!(
        "{}",
        versus::report::explain::render_explain(&r, versus::report::explain::OutputFormat::Text, false).unwrap()
    );
    let o = r.outcome.unwrap();
    assert!(o.runs_used <= opts.max_runs);
    let culprits: Vec<&str> = o.culprits().map(|f| f.names[0].as_str()).collect();
    assert!(
        culprits.contains(&"sync_binlog") && culprits.contains(&"innodb_flush_log_at_trx_commit"),
        "{culprits:?} {:?}",
        o.notes
    );
    assert!(!culprits.contains(&"innodb_buffer_pool_size"));
    let bp = o.candidates.iter().position(|c| c.name == "innodb_buffer_pool_size").unwrap();
    assert!(o.cleared.contains(&bp));
    assert_eq!(culprits[0], "sync_binlog", "sync_binlog first: it masks the redo flush");
}
