//! `versus advise`: flags to a call into [`crate::advise::runner`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::DbArg;
use super::compare::{ColorWhen, parse_fraction};
use super::explain::{MeasureArgs, color, print};
use super::output_file::OutputFile;
use crate::advise::model::AdviseOptions;
use crate::advise::runner::{advise, validate};
use crate::error::{Error, Result};
use crate::experiment::ExperimentFile;
use crate::experiment::Progress;
use crate::experiment::spec::{WorkloadDef, parse_duration};
use crate::explain::targets::{TargetSpec, find_experiment, stored_specs};
use crate::report::advise::{render_advise, render_cnf};
use crate::report::explain::OutputFormat;
use crate::server::Home;

/// `versus advise`.
#[derive(Debug, Args)]
pub(super) struct AdviseArgs {
    /// The server to advise on, with its current config: BUILD or BUILD:NAME=VALUE,… (e.g. system or
    /// mysql-9.7:log-bin). Not with --from.
    target: Option<String>,
    /// Advise on a target of this stored experiment (id or name), with its workload and thread counts.
    #[arg(long, value_name = "EXPERIMENT", requires = "target_label", conflicts_with = "target")]
    from: Option<String>,
    /// With --from: the target label of that experiment.
    #[arg(long = "target", id = "target_label", value_name = "LABEL")]
    target_label: Option<String>,
    /// A base my.cnf of the current config.
    #[arg(long, value_name = "FILE.cnf")]
    config: Option<PathBuf>,
    /// An option of the current config on top of --config (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    measure: MeasureArgs,
    /// The hard limit on the whole advice, inspection included (45m, 2h …).
    #[arg(long, value_name = "DURATION", default_value = "40m", value_parser = parse_duration)]
    budget: Duration,
    /// Advise for a machine with this much RAM (GiB), at most this host's.
    #[arg(long, value_name = "GIB")]
    memory: Option<f64>,
    /// Also try durability trades (innodb_flush_log_at_trx_commit=2, sync_binlog=0, …), reported as a
    /// tier of their own with what a crash can lose.
    #[arg(long)]
    allow_durability_trade: bool,
    /// Repetitions of the screening step. 4: at a 2-3 % run-to-run CV they detect a group's ±5-8 % change
    /// with 80 % power; 2 detect only ±23-37 %, 3 ±7-11 %, and more cost more than they gain (docs/advise.md).
    #[arg(long, default_value_t = 4)]
    screen_repetitions: u32,
    /// Adaptive attribution steps: after --repetitions, add rounds of one repetition to a step's open
    /// probes until each is decisive or its interval is narrower than this (e.g. "±3%"), up to
    /// --max-repetitions (group-sequential repeated intervals; the budget counts every round).
    #[arg(long, value_name = "±PCT", value_parser = crate::experiment::spec::parse_until)]
    until: Option<f64>,
    /// Adaptive attribution steps: most repetitions per probe (with --until, or alone: until decisive).
    #[arg(long, value_name = "N")]
    max_repetitions: Option<u32>,
    /// Repetitions of the confirmation (at least 5); with values on trial (left unresolved by the
    /// budget, docs/advise.md) it takes what the budget leaves, up to twice as many.
    #[arg(long, default_value_t = 5)]
    confirm_repetitions: u32,
    /// Changes smaller than this are never called (e.g. 2% or 0.02) [default: the band `versus calibrate`
    /// stored for this host class, the workload and the thread counts, else 2%].
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    noise_band: Option<f64>,
    /// Prefix of the stored experiments' names (NAME-probe, NAME-screen-1, …, NAME-confirm-N).
    #[arg(long, default_value = "advise")]
    name: String,
    /// Inspect, derive the candidates, check what the server accepts, print the plan; measure nothing.
    #[arg(long)]
    dry_run: bool,
    /// text, markdown, json or cnf (the my.cnf fragment).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    format: String,
    /// Also write the my.cnf fragment to this file.
    #[arg(long, value_name = "FILE.cnf")]
    cnf: Option<PathBuf>,
    /// Colour (text format).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    #[command(flatten)]
    db: DbArg,
}

/// Runs `versus advise`.
pub(super) fn advise_cmd(home: &Home, a: AdviseArgs) -> Result<i32> {
    let cnf_format = a.format.eq_ignore_ascii_case("cnf");
    let format: OutputFormat = if cnf_format {
        OutputFormat::Text
    } else {
        a.format.parse().map_err(|e: String| Error::option("--format", format!("{e}, or cnf")))?
    };
    if let Some(c) = a.config.as_ref().filter(|c| !c.is_file()) {
        return Err(Error::option("--config", format!("{} does not exist", c.display())));
    }
    let mut inputs = a.db.inputs(home);
    inputs.extend(a.config.iter().chain(&a.measure.script).cloned());
    let cnf_file = a.cnf.as_ref().map(|p| OutputFile::check("--cnf", p, &inputs)).transpose()?;
    let m = &a.measure;
    let (current, workload, threads) = match (&a.target, &a.from) {
        (Some(t), None) => {
            (TargetSpec::parse(t, "TARGET")?.with(a.config.clone(), &a.set)?, m.workload()?, m.threads.clone())
        }
        (None, Some(from)) => from_stored(home, &a, from)?,
        _ => {
            return Err(Error::Other(
                "give the server to advise on (e.g. `versus advise system --workload oltp_read_write`) or --from \
                 EXPERIMENT --target LABEL"
                    .into(),
            ));
        }
    };
    let mut opts = AdviseOptions {
        name: a.name.clone(),
        workload,
        threads,
        duration: m.duration,
        warmup: m.warmup,
        budget: a.budget,
        memory_gib: a.memory,
        allow_durability: a.allow_durability_trade,
        metric: m.metric,
        noise_band: a.noise_band.unwrap_or(crate::stats::DEFAULT_NOISE_BAND),
        noise_band_source: String::new(),
        confidence: m.confidence,
        seed: m.seed,
        screen_repetitions: a.screen_repetitions,
        attribution_repetitions: m.repetitions,
        confirm_repetitions: a.confirm_repetitions,
        adaptive: super::experiment::AdaptiveArgs { until: a.until, max_repetitions: a.max_repetitions }
            .apply(crate::experiment::Repetitions::fixed(m.repetitions))?,
    };
    validate(&opts)?;
    crate::owned::check_name("--name", &opts.name)?;
    home.build(&current.build)?;
    let mut store = a.db.open(home)?;
    let band = crate::experiment::band::for_this_host(
        &store,
        home.root(),
        &opts.workload.label(),
        &opts.threads,
        opts.metric,
        a.noise_band,
    )?;
    (opts.noise_band, opts.noise_band_source) = (band.band, band.source);
    let mut log = |l: &str| eprintln!("{l}");
    let r = advise(home, &mut store, &current, &opts, a.dry_run, Progress::stderr(), &mut log)?;
    drop(store);
    let fragment = render_cnf(&r);
    if let Some(out) = &cnf_file {
        out.write(fragment.as_bytes())?;
        eprintln!("wrote {}", out.path().display());
    }
    if cnf_format {
        print(&fragment)?;
    } else {
        print(&render_advise(&r, format, color(a.color))?)?;
    }
    Ok(0)
}

/// The target `--target` of the stored experiment `from`, its (one) workload and its thread counts, with
/// --config/--set on top.
fn from_stored(home: &Home, a: &AdviseArgs, from: &str) -> Result<(TargetSpec, WorkloadDef, Vec<u32>)> {
    let store = a.db.open(home)?;
    let e = find_experiment(&store, from)?;
    drop(store);
    let label = a.target_label.clone().unwrap_or_default();
    let specs = stored_specs(&e)?;
    let known: Vec<&str> = specs.iter().map(|(l, _)| l.as_str()).collect();
    let Some((_, spec)) = specs.iter().find(|(l, _)| *l == label) else {
        return Err(Error::option(
            "--target",
            format!("experiment {} has no sandbox target '{label}'; its targets: {}", e.name, known.join(", ")),
        ));
    };
    let file = ExperimentFile::parse(&e.definition)
        .map_err(|m| Error::Other(format!("experiment {} ({}): its stored definition: {m}", e.id, e.name)))?;
    let [w] = file.workloads.as_slice() else {
        return Err(Error::option(
            "--from",
            format!("experiment {} has {} workloads; advise takes one", e.name, file.workloads.len()),
        ));
    };
    let threads = w.threads.clone().unwrap_or_else(|| file.threads.clone());
    Ok((spec.clone().with(a.config.clone(), &a.set)?, w.clone(), threads))
}
