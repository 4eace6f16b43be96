//! `versus calibrate`: flags to [`crate::experiment::calibrate`], the stored bands to the terminal.

use std::time::Duration;

use clap::Args;
use comfy_table::{Table, presets::NOTHING};

use super::DbArg;
use super::explain::MeasureArgs;
use crate::error::{Error, Result};
use crate::experiment::calibrate::{CalibrateOptions, experiment, from_runs, target_label};
use crate::experiment::spec::parse_duration;
use crate::explain::targets::TargetSpec;
use crate::metric::Metric;
use crate::report::fmt::percent;
use crate::server::Home;
use crate::store::Calibration;

/// `versus calibrate`.
#[derive(Debug, Args)]
pub(super) struct CalibrateArgs {
    /// The target measured twice: BUILD or BUILD:NAME=VALUE,… (e.g. system or system:sync_binlog=0).
    #[arg(default_value = "system")]
    target: String,
    /// The sysbench test to run (oltp_read_only, oltp_write_only, oltp_point_select …).
    #[arg(long, value_name = "TEST", conflicts_with = "script")]
    workload: Option<String>,
    /// Or a script to run: a sysbench Lua script (docs/lua.md) or a pgbench-style SQL script.
    #[arg(long, value_name = "FILE")]
    script: Option<std::path::PathBuf>,
    /// An option of the workload (repeatable), e.g. --option range_size=10 or, for a script, one of its
    /// own options (--option scale=2).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Tables of the workload [default: 4 for a sysbench test; a script's own otherwise].
    #[arg(long)]
    tables: Option<u32>,
    /// Rows per table [default: 10000 for a sysbench test; a script's own otherwise].
    #[arg(long)]
    table_size: Option<u64>,
    /// Client thread counts (comma-separated); each gets its own band.
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "1")]
    threads: Vec<u32>,
    /// Measured time per run (as long as the runs the band is for).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// Warm-up per run, not measured.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// Pause after each server start (after prewarm), before the run (the experiment file's `settle`).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    settle: Duration,
    /// The server on one half of the CPUs, the client on the other (`pin_cpus`; needs ≥ 2 CPUs).
    #[arg(long)]
    pin_cpus: bool,
    /// Drop the OS page cache (the whole host's) before each restore (`drop_caches`; needs root).
    #[arg(long)]
    drop_caches: bool,
    /// Repetitions per side (as many as the comparisons the band is for; at least 3).
    #[arg(long, default_value_t = 5)]
    repetitions: u32,
    /// Confidence level of the A/A interval (that of the comparisons).
    #[arg(long, value_name = "LEVEL", default_value_t = crate::stats::DEFAULT_CONFIDENCE)]
    confidence: f64,
    /// Seed of the run order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Name of the stored A/A experiment.
    #[arg(long, default_value = "calibrate")]
    name: String,
    /// List the stored calibrations (every host class) and measure nothing.
    #[arg(long)]
    list: bool,
    /// Print the A/A experiment file and measure nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    db: DbArg,
}

/// Runs `versus calibrate`.
pub(super) fn calibrate_cmd(home: &Home, a: CalibrateArgs) -> Result<i32> {
    if a.list {
        let store = a.db.open_read(home)?;
        let all = store.calibrations(None)?;
        if all.is_empty() {
            println!("no calibrations stored; `versus calibrate BUILD --workload TEST` measures one");
        } else {
            println!("{}", calibration_table(&all, true));
        }
        return Ok(0);
    }
    if !(a.confidence > 0.0 && a.confidence < 1.0) {
        return Err(Error::option("--confidence", "must lie in (0, 1), e.g. 0.95"));
    }
    crate::owned::check_name("--name", &a.name)?;
    let spec = TargetSpec::parse(&a.target, "TARGET")?;
    if spec.charset.is_some() {
        return Err(Error::option("TARGET", "a calibration target takes server options only"));
    }
    let measure = MeasureArgs {
        workload: a.workload.clone(),
        options: a.options.clone(),
        script: a.script.clone(),
        // A script has the options it declares, which need not include these.
        tables: if a.script.is_some() { a.tables } else { Some(a.tables.unwrap_or(4)) },
        table_size: if a.script.is_some() { a.table_size } else { Some(a.table_size.unwrap_or(10_000)) },
        threads: a.threads.clone(),
        duration: a.duration,
        warmup: a.warmup,
        repetitions: a.repetitions,
        metric: Metric::Tps,
        confidence: a.confidence,
        seed: a.seed,
    };
    let mut set = toml::Table::new();
    for o in &spec.overrides {
        let (k, v) = match o.split_once('=') {
            Some((k, v)) => (k.trim(), toml::Value::String(v.trim().to_string())),
            None => (o.trim(), toml::Value::Boolean(true)),
        };
        set.insert(k.to_string(), v);
    }
    let opts = CalibrateOptions {
        name: a.name.clone(),
        build: spec.build.clone(),
        set,
        workload: measure.workload()?,
        threads: a.threads.clone(),
        duration: a.duration,
        warmup: a.warmup,
        settle: a.settle,
        pin_cpus: a.pin_cpus,
        drop_caches: a.drop_caches,
        repetitions: a.repetitions,
        confidence: a.confidence,
        seed: a.seed,
    };
    let (file, text) = experiment(&opts)?;
    // The set-up choices this host cannot do are refused before anything runs.
    if let Some(problem) = crate::experiment::setup::problems(&file).into_iter().next() {
        return Err(Error::Other(problem));
    }
    // An unknown build fails the dry run as it would fail the real one.
    home.build(&opts.build)?;
    if a.dry_run {
        print!("{text}");
        return Ok(0);
    }
    let dir = home.root().join("calibrate");
    crate::owned::create_dir_all(&dir)?;
    let plan = crate::experiment::Plan::new(&file, &dir).map_err(Error::Other)?;
    let mut store = a.db.open(home)?;
    let mut executor = crate::experiment::sandbox_executor::SandboxExecutor::locked(home, &file.name)?;
    let mut progress = crate::experiment::Progress::stderr();
    let run_opts = crate::experiment::RunOptions::default();
    let outcome =
        crate::experiment::run_experiment(&text, None, &plan, &mut store, &mut executor, &run_opts, &mut progress)?;
    let _ = crate::owned::remove(executor.work_dir());
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let target = target_label(&opts);
    let found = from_runs(&store, outcome.experiment_id, &plan, &target, a.confidence)?;
    if found.is_empty() {
        return Err(Error::Other(format!(
            "experiment {}: fewer than 3 finished runs per side, so nothing was calibrated (`versus runs {}` lists them)",
            outcome.experiment_id, outcome.experiment_id
        )));
    }
    // A band of 100 % or more calls nothing at all: not a band to compare with, but a sign that the runs
    // are too short or too few for this host.
    let (found, unusable): (Vec<_>, Vec<_>) = found.into_iter().partition(|c| c.band < 1.0);
    for c in &unusable {
        eprintln!(
            "not stored: {} @ {} thr {}: the A/A interval reaches beyond ±100 % (CV {}, {} repetitions); use more \
             repetitions or longer runs",
            c.workload,
            c.threads,
            c.metric,
            percent(c.cv),
            c.repetitions
        );
    }
    if found.is_empty() {
        return Err(Error::Other(format!(
            "experiment {}: this host is too noisy for the workload at {} repetitions of {}: nothing was calibrated",
            outcome.experiment_id,
            a.repetitions,
            crate::experiment::progress::human(a.duration)
        )));
    }
    for c in &found {
        store.save_calibration(c)?;
    }
    println!("{}", calibration_table(&found, false));
    println!(
        "stored for host class {} ({}), from experiment {}: `versus compare`, `run` and `explain` use the {} band \
         of this workload and thread count on this host class instead of the default {} (--noise-band overrides it)",
        found[0].host_class,
        found[0].host,
        outcome.experiment_id,
        Metric::Tps,
        percent(crate::stats::DEFAULT_NOISE_BAND)
    );
    Ok(if outcome.failed > 0 { 1 } else { 0 })
}

fn calibration_table(all: &[Calibration], with_host: bool) -> Table {
    let mut t = Table::new();
    t.load_style(NOTHING);
    let mut header = vec!["WORKLOAD", "THREADS", "METRIC", "CV", "NOISE BAND", "REPETITIONS", "TARGET", "EXPERIMENT"];
    if with_host {
        header.insert(0, "HOST CLASS");
    }
    t.set_header(header);
    for c in all {
        let mut row = vec![
            c.workload.clone(),
            c.threads.to_string(),
            c.metric.clone(),
            percent(c.cv),
            percent(c.band),
            c.repetitions.to_string(),
            c.target.clone(),
            c.experiment_id.map(|i| i.to_string()).unwrap_or_else(|| "-".into()),
        ];
        if with_host {
            row.insert(0, c.host_class.clone());
        }
        t.add_row(row);
    }
    t
}
