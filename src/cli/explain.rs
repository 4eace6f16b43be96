//! `versus diff-vars`, `versus explain` and `versus series`: flags to calls into [`crate::explain`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::DbArg;
use super::compare::{ColorWhen, parse_fraction};
use super::output_file::OutputFile;
use crate::error::{Error, Result};
use crate::experiment::Progress;
use crate::experiment::band::for_this_host;
use crate::experiment::spec::{WorkloadDef, parse_duration};
use crate::explain::diff;
use crate::explain::runner::{ExplainOptions, explain};
use crate::explain::series::{self, SeriesRun};
use crate::explain::targets::{TargetSpec, capture_live, capture_stored};
use crate::metric::Metric;
use crate::report::explain::{self as render, OutputFormat};
use crate::report::{self, Dimension, Format, Selection};
use crate::server::Home;
use crate::workload::ConnectionCharset;

/// How targets A and B are given (shared by `diff-vars` and `explain`).
/// How diff-vars, explain and series print their result.
#[derive(Debug, Args)]
struct OutputArgs {
    /// text, markdown or json.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = parse_format)]
    format: OutputFormat,
    /// Colour (text format).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
}

#[derive(Debug, Args)]
pub(super) struct PairArgs {
    /// Target A, the reference: BUILD or BUILD:NAME=VALUE,… (e.g. system:log-bin,sync_binlog=0); with
    /// --from, a target label of that experiment.
    a: String,
    /// Target B, the one that differs (same forms as A).
    b: String,
    /// An option for A on top of its config (repeatable), as with `versus server start --set`.
    #[arg(long = "set-a", value_name = "NAME=VALUE")]
    set_a: Vec<String>,
    /// An option for B (repeatable).
    #[arg(long = "set-b", value_name = "NAME=VALUE")]
    set_b: Vec<String>,
    /// An option for both (repeatable), applied before --set-a/--set-b.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// A base my.cnf for A.
    #[arg(long = "config-a", value_name = "FILE.cnf")]
    config_a: Option<PathBuf>,
    /// A base my.cnf for B.
    #[arg(long = "config-b", value_name = "FILE.cnf")]
    config_b: Option<PathBuf>,
    #[command(flatten)]
    charset: CharsetArgs,
}

/// The client side of the targets' character sets (the server side is `--set character-set-server=…`).
#[derive(Debug, Args)]
struct CharsetArgs {
    /// Client side, both targets: every workload connection runs SET NAMES CHARSET (the server's own
    /// default is a startup option: --set character-set-server=CHARSET).
    #[arg(long = "charset", value_name = "CHARSET")]
    charset_both: Option<String>,
    /// Client side, both targets: the connection collation (SET NAMES CHARSET COLLATE COLLATION).
    #[arg(long = "collation", value_name = "COLLATION")]
    collation_both: Option<String>,
    /// Client side: the character set of A's connections (over --charset).
    #[arg(long = "charset-a", value_name = "CHARSET")]
    charset_a: Option<String>,
    /// Client side: the collation of A's connections.
    #[arg(long = "collation-a", value_name = "COLLATION")]
    collation_a: Option<String>,
    /// Client side: the character set of B's connections (over --charset).
    #[arg(long = "charset-b", value_name = "CHARSET")]
    charset_b: Option<String>,
    /// Client side: the collation of B's connections.
    #[arg(long = "collation-b", value_name = "COLLATION")]
    collation_b: Option<String>,
}

impl CharsetArgs {
    /// The connection character set of side `x` (`a` or `b`): its own flags, else the ones for both.
    fn side(&self, x: char) -> Result<Option<ConnectionCharset>> {
        let (own, own_collation, flag) = match x {
            'a' => (&self.charset_a, &self.collation_a, "--charset-a"),
            _ => (&self.charset_b, &self.collation_b, "--charset-b"),
        };
        let charset = own.as_ref().or(self.charset_both.as_ref());
        let collation = own_collation.as_ref().or(if own.is_some() { None } else { self.collation_both.as_ref() });
        ConnectionCharset::new(charset.map(String::as_str), collation.map(String::as_str))
            .map_err(|e| Error::option(flag, e))
    }
}

impl PairArgs {
    fn specs(&self) -> Result<(TargetSpec, TargetSpec)> {
        let side = |text: &str, flag: &str, config: &Option<PathBuf>, own: &[String]| -> Result<TargetSpec> {
            if let Some(c) = config.as_ref().filter(|c| !c.is_file()) {
                return Err(Error::option(
                    format!("--config-{}", flag.to_ascii_lowercase()),
                    format!("{} does not exist", c.display()),
                ));
            }
            let extra: Vec<String> = self.set.iter().chain(own).cloned().collect();
            let mut spec = TargetSpec::parse(text, flag)?.with(config.clone(), &extra)?;
            spec.charset = self.charset.side(flag.to_ascii_lowercase().chars().next().unwrap_or('a'))?;
            Ok(spec)
        };
        Ok((side(&self.a, "A", &self.config_a, &self.set_a)?, side(&self.b, "B", &self.config_b, &self.set_b)?))
    }
}

fn parse_format(s: &str) -> std::result::Result<OutputFormat, String> {
    s.parse()
}

pub(super) fn color(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never,
    }
}

pub(super) fn print(text: &str) -> Result<()> {
    super::output::print(text)
}

/// `versus diff-vars`.
#[derive(Debug, Args)]
pub(super) struct DiffVarsArgs {
    #[command(flatten)]
    pair: PairArgs,
    /// Read the variables stored with the runs of this experiment (id or name); A and B are its target labels.
    #[arg(long, value_name = "EXPERIMENT")]
    from: Option<String>,
    /// Also show noise: paths, ports, ids, versions, host-sized and derived values.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    db: DbArg,
}

/// Runs `versus diff-vars`.
pub(super) fn diff_vars(home: &Home, a: DiffVarsArgs) -> Result<i32> {
    let (sa, sb) = match &a.from {
        Some(exp) => {
            let store = a.db.open_read(home)?;
            (capture_stored(&store, exp, &a.pair.a)?, capture_stored(&store, exp, &a.pair.b)?)
        }
        None => {
            let (ta, tb) = a.pair.specs()?;
            // Both builds are checked before either server starts.
            for t in [&ta, &tb] {
                home.build(&t.build)?;
            }
            let work = home.root().join("explain").join(format!("diff-vars-{}", std::process::id()));
            eprintln!("starting A ({}) to read its variables", ta.describe());
            let sa = capture_live(home, &ta, &work, "a");
            let sb = sa.as_ref().ok().map(|_| {
                eprintln!("starting B ({}) to read its variables", tb.describe());
                capture_live(home, &tb, &work, "b")
            });
            let _ = crate::owned::remove(&work);
            (sa?, sb.expect("A succeeded")?)
        }
    };
    let d = diff(&sa, &sb);
    print(&render::render_diff(&d, a.all, a.out.format, color(a.out.color))?)?;
    Ok(0)
}

/// Workload and measurement flags (shared by `explain` and `series`).
#[derive(Debug, Args)]
pub(super) struct MeasureArgs {
    /// The test to run: a sysbench test (oltp_write_only, oltp_read_write, oltp_update_index …) or
    /// ibench (the Insert Benchmark).
    #[arg(long, value_name = "TEST", conflicts_with = "script")]
    pub(super) workload: Option<String>,
    /// Or a SQL script to run (pgbench-style, docs/workloads.md).
    #[arg(long, value_name = "FILE.sql")]
    pub(super) script: Option<PathBuf>,
    /// An option of the workload with its own name (repeatable), e.g. --option range_size=10 (sysbench)
    /// or --option rows=100000 (ibench).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    pub(super) options: Vec<String>,
    /// Tables of the workload (sysbench's --tables) [default: the workload's own].
    #[arg(long)]
    pub(super) tables: Option<u32>,
    /// Rows per table (sysbench's --table-size) [default: the workload's own].
    #[arg(long)]
    pub(super) table_size: Option<u64>,
    /// Client thread counts (comma-separated).
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "4")]
    pub(super) threads: Vec<u32>,
    /// Measured time per run (90s, 2m …).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub(super) duration: Duration,
    /// Warm-up per run, not measured.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub(super) warmup: Duration,
    /// Repetitions of every target.
    #[arg(long, default_value_t = 3)]
    pub(super) repetitions: u32,
    /// tps, qps, avg-latency, p95, p99 or max-latency.
    #[arg(long, value_name = "METRIC", default_value = "tps", value_parser = parse_metric)]
    pub(super) metric: Metric,
    /// Confidence level of the intervals.
    #[arg(long, value_name = "LEVEL", default_value_t = crate::stats::DEFAULT_CONFIDENCE)]
    pub(super) confidence: f64,
    /// Seed of the run order.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
}

fn parse_metric(s: &str) -> std::result::Result<Metric, String> {
    let m: Metric = s.parse()?;
    match m {
        Metric::Tps | Metric::Qps | Metric::AvgLatency | Metric::P95 | Metric::P99 | Metric::MaxLatency => Ok(m),
        other => Err(format!("{other} is not available here; choose tps, qps, avg-latency, p95, p99 or max-latency")),
    }
}

impl MeasureArgs {
    pub(super) fn workload(&self) -> Result<WorkloadDef> {
        let mut options = toml::Table::new();
        if let Some(t) = self.tables {
            options.insert("tables".into(), toml::Value::Integer(t.into()));
        }
        if let Some(n) = self.table_size {
            options.insert("table-size".into(), toml::Value::Integer(n as i64));
        }
        for o in &self.options {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| Error::option("--option", format!("'{o}' is not NAME=VALUE (e.g. range_size=10)")))?;
            let value = match v.trim().parse::<i64>() {
                Ok(i) => toml::Value::Integer(i),
                Err(_) => toml::Value::String(v.trim().to_string()),
            };
            options.insert(k.trim().to_string(), value);
        }
        if self.threads.is_empty() || self.threads.contains(&0) {
            return Err(Error::option("--threads", "give thread counts of at least 1, e.g. --threads 4 or 1,8"));
        }
        if self.duration.is_zero() {
            return Err(Error::option("--duration", "must be more than 0 s"));
        }
        let def = match (&self.workload, &self.script) {
            (_, Some(file)) => {
                if !file.is_file() {
                    return Err(Error::option("--script", format!("{} does not exist", file.display())));
                }
                let file = std::path::absolute(file).unwrap_or_else(|_| file.clone());
                WorkloadDef { name: None, test: String::new(), script: Some(file), threads: None, options }
            }
            (Some(test), None) => WorkloadDef { name: None, test: test.clone(), script: None, threads: None, options },
            (None, None) => {
                return Err(Error::option(
                    "--workload",
                    "give the test to run, e.g. --workload oltp_write_only or --workload ibench, or --script FILE.sql",
                ));
            }
        };
        // The workload's own checks of its options, before anything runs.
        let base = std::path::Path::new("/");
        crate::workload::plan_workloads(&def, base).map_err(|e| {
            let flag = if def.script.is_some() { "--script" } else { "--workload" };
            Error::option(flag, e)
        })?;
        Ok(def)
    }
}

/// `--report FILE` checked before anything runs (see [`OutputFile`]).
fn report_file(path: &Option<PathBuf>, inputs: &[PathBuf]) -> Result<Option<OutputFile>> {
    path.as_ref().map(|p| OutputFile::check("--report", p, inputs)).transpose()
}

/// Writes the comparison report of `experiment` (with its explain, series and variable sections) to `path`.
fn write_report(
    home: &Home,
    db: &DbArg,
    experiment: i64,
    baseline: Option<&str>,
    metric: Metric,
    out: &OutputFile,
) -> Result<()> {
    let format = Format::from_extension(out.path()).unwrap_or(Format::Html);
    let store = db.open(home)?;
    let sel = Selection {
        experiments: vec![experiment.to_string()],
        vs: Dimension::Target,
        baseline: baseline.map(str::to_string),
        metric,
        ..Selection::default()
    };
    let r = report::build_report(&store, &sel)?;
    let text = report::render(&r, format)?;
    out.write(text.as_bytes())?;
    eprintln!("wrote {} ({format})", out.path().display());
    Ok(())
}

/// `versus explain`.
#[derive(Debug, Args)]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    pair: PairArgs,
    #[command(flatten)]
    measure: MeasureArgs,
    /// Most runs in total (each run restarts the server and measures --duration).
    #[arg(long, default_value_t = 150)]
    max_runs: usize,
    /// Skip the confirmation step (each culprit alone and all together, with A and B, in one experiment).
    #[arg(long)]
    no_confirm: bool,
    /// Run a step's unclear probes again (not significant, but beyond the noise band), up to this many
    /// times, pooling the samples; the steps are then judged by group-sequential repeated intervals
    /// that allow for the extra looks. 0 turns it off. Not used with --until/--max-repetitions.
    #[arg(long, default_value_t = 1)]
    extra_rounds: usize,
    /// Adaptive steps: after a step's --repetitions, add rounds of one repetition to its open probes
    /// until each is decisive or its interval is narrower than this (e.g. "±3%"), up to
    /// --max-repetitions (group-sequential design; the budget counts every round).
    #[arg(long, value_name = "±PCT", value_parser = crate::experiment::spec::parse_until)]
    until: Option<f64>,
    /// Adaptive steps: most repetitions per probe of a search step (with --until, or alone: until
    /// decisive).
    #[arg(long, value_name = "N")]
    max_repetitions: Option<u32>,
    /// Groups of up to this many variables are tried one variable at a time instead of halved.
    #[arg(long, default_value_t = 4)]
    singles_max: usize,
    /// Changes smaller than this are never called (e.g. 2% or 0.02) [default: the band `versus calibrate`
    /// stored for this host class, the workload and the thread counts, else 2%].
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    noise_band: Option<f64>,
    /// Prefix of the stored experiments' names (NAME-gap, NAME-split-N, NAME-confirm).
    #[arg(long, default_value = "explain")]
    name: String,
    /// Read the variables, check what B accepts, print the plan and the worst-case budget; measure nothing.
    #[arg(long)]
    dry_run: bool,
    /// Go on with an earlier search of the same --name and arguments (interrupted, or out of
    /// --max-runs): its stored steps are reused, a step it was cut off in is continued, the rest is
    /// measured.
    #[arg(long)]
    resume: bool,
    #[command(flatten)]
    out: OutputArgs,
    /// Also write the comparison report of the last step's experiment (.html, .md or .json).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Profile the server in the first step (A against B) and print, after the attribution, the
    /// functions whose CPU per transaction differs between them: what the variables leave unexplained
    /// (docs/profile.md).
    #[arg(long)]
    profile: bool,
    #[command(flatten)]
    db: DbArg,
}

/// Runs `versus explain`.
pub(super) fn explain_cmd(home: &Home, a: ExplainArgs) -> Result<i32> {
    let mut inputs = a.db.inputs(home);
    inputs.extend(a.pair.config_a.iter().chain(&a.pair.config_b).chain(&a.measure.script).cloned());
    let report_file = report_file(&a.report, &inputs)?;
    let (ta, tb) = a.pair.specs()?;
    let m = &a.measure;
    let workload = m.workload()?;
    let adaptive = super::experiment::AdaptiveArgs { until: a.until, max_repetitions: a.max_repetitions }
        .apply(crate::experiment::Repetitions::fixed(m.repetitions))?;
    for t in [&ta, &tb] {
        home.build(&t.build)?;
    }
    let mut store = a.db.open(home)?;
    let band = for_this_host(&store, home.root(), &workload.label(), &m.threads, m.metric, a.noise_band)?;
    let opts = ExplainOptions {
        name: a.name.clone(),
        workload,
        threads: m.threads.clone(),
        duration: m.duration,
        warmup: m.warmup,
        repetitions: m.repetitions,
        max_runs: a.max_runs,
        confirm: !a.no_confirm,
        singles_max: a.singles_max,
        extra_rounds: a.extra_rounds,
        adaptive,
        metric: m.metric,
        noise_band: band.band,
        noise_band_source: band.source,
        confidence: m.confidence,
        seed: m.seed,
        resume: a.resume,
        profile: a.profile,
    };
    let progress = Progress::stderr();
    let mut log = |l: &str| eprintln!("{l}");
    let r = match explain(home, &mut store, &ta, &tb, &opts, a.dry_run, progress, &mut log) {
        Err(Error::Interrupted) => {
            eprintln!("interrupted: the runs measured are stored; the same command with --resume goes on from there");
            return Err(Error::Interrupted);
        }
        r => r?,
    };
    drop(store);
    print(&render::render_explain(&r, a.out.format, color(a.out.color))?)?;
    if let Some((id, _)) = r.experiments.iter().find(|(_, name)| a.profile && name.ends_with("-gap")) {
        print(&super::profile::profile_text(home, &a.db, *id, m.metric, a.out.format, color(a.out.color))?)?;
    }
    if let (Some(out), Some((id, _))) = (&report_file, r.final_experiment()) {
        write_report(home, &a.db, *id, Some("B"), m.metric, out)?;
    }
    let ids: Vec<i64> = r.experiments.iter().map(|(id, _)| *id).collect();
    all_measured(&a.db.open(home)?, &ids)?;
    Ok(0)
}

/// An error when runs of `experiments` failed: what was printed rests on fewer measurements than
/// were asked for, and the exit code must say so.
fn all_measured(store: &crate::store::Store, experiments: &[i64]) -> Result<()> {
    let (mut total, mut failed, mut first) = (0, 0, None);
    for &id in experiments {
        for r in store.runs(id)? {
            total += 1;
            if r.status == crate::store::Status::Failed {
                failed += 1;
                first = first.or(r.error.map(|e| (id, e)));
            }
        }
    }
    match first {
        None if failed == 0 => Ok(()),
        None => Err(Error::Other(format!("{failed} of {total} runs failed"))),
        Some((id, e)) => Err(Error::Other(format!(
            "{failed} of {total} runs failed, so the result above rests on fewer measurements than asked for \
             (first error: {e}; `versus runs {id}` lists them)"
        ))),
    }
}

/// `versus series`.
#[derive(Debug, Args)]
pub(super) struct SeriesArgs {
    /// The targets in series order: BUILD or BUILD:NAME=VALUE,… (e.g. mariadb-10.5 system mariadb-11.8).
    /// With --from, nothing or the target labels of the experiment in the order wanted.
    targets: Vec<String>,
    /// Read the runs of these experiments (id or name, repeatable) instead of running new ones.
    #[arg(long, value_name = "EXPERIMENT")]
    from: Vec<String>,
    #[command(flatten)]
    measure: MeasureArgs,
    /// Client side: every workload connection of every target runs SET NAMES CHARSET.
    #[arg(long, value_name = "CHARSET")]
    charset: Option<String>,
    /// Client side: the connection collation (SET NAMES CHARSET COLLATE COLLATION).
    #[arg(long, value_name = "COLLATION")]
    collation: Option<String>,
    /// Name of the new experiment.
    #[arg(long, default_value = "series")]
    name: String,
    /// p-value threshold of the change points.
    #[arg(long, default_value_t = 0.05)]
    p_value: f64,
    #[command(flatten)]
    out: OutputArgs,
    /// Also write the comparison report of the experiment (.html, .md or .json), with the series chart.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Profile the server in every run, and print at each change point the functions whose CPU per
    /// transaction moved between the two targets around it (docs/profile.md). With --from: print
    /// them from the experiments' profiles.
    #[arg(long)]
    profile: bool,
    #[command(flatten)]
    db: DbArg,
}

/// Runs `versus series`.
pub(super) fn series_cmd(home: &Home, a: SeriesArgs) -> Result<i32> {
    if !(a.p_value > 0.0 && a.p_value < 1.0) {
        return Err(Error::option("--p-value", "must lie in (0, 1), e.g. 0.05"));
    }
    let mut inputs = a.db.inputs(home);
    inputs.extend(a.measure.script.iter().cloned());
    let report_file = report_file(&a.report, &inputs)?;
    let m = &a.measure;
    let mut measured = None;
    let (experiments, order) = if a.from.is_empty() {
        if a.targets.len() < 2 {
            return Err(Error::Other(
                "give 2 targets or more in series order, e.g. mariadb-10.5 system mariadb-11.8".into(),
            ));
        }
        let charset = ConnectionCharset::new(a.charset.as_deref(), a.collation.as_deref())
            .map_err(|e| Error::option("--charset", e))?;
        let specs = a
            .targets
            .iter()
            .map(|t| TargetSpec::parse(t, "TARGET").map(|s| TargetSpec { charset: charset.clone(), ..s }))
            .collect::<Result<Vec<_>>>()?;
        let run = SeriesRun {
            name: a.name.clone(),
            workload: m.workload()?,
            threads: m.threads.clone(),
            duration: m.duration,
            warmup: m.warmup,
            repetitions: m.repetitions,
            seed: m.seed,
            profile: a.profile,
        };
        let mut store = a.db.open(home)?;
        let id = series::run_series(home, &mut store, &specs, &run, &mut Progress::stderr())?;
        measured = Some(id);
        (vec![id.to_string()], vec![])
    } else {
        (a.from.clone(), a.targets.clone())
    };
    let (metric, confidence) = (m.metric, m.confidence);
    let store = a.db.open(home)?;
    let s = series::from_store(&store, &experiments, &order, metric, confidence, a.p_value)?;
    drop(store);
    print(&render::render_series(&s, a.out.format, color(a.out.color))?)?;
    if a.profile {
        print(&super::profile::change_point_profiles(
            home,
            &a.db,
            &experiments,
            &s,
            metric,
            a.out.format,
            color(a.out.color),
        )?)?;
    }
    if let Some(out) = &report_file {
        let store = a.db.open(home)?;
        let e = crate::explain::targets::find_experiment(&store, &experiments[0])?;
        drop(store);
        write_report(home, &a.db, e.id, s.labels.first().map(String::as_str), metric, out)?;
    }
    if let Some(id) = measured {
        all_measured(&a.db.open(home)?, &[id])?;
    }
    Ok(0)
}
