//! `versus explain` on real servers: read both targets' variables, keep the differing ones B accepts
//! with A's value, and run the [`super::bisect`] search with every step stored as a normal
//! experiment (`NAME-gap`, `NAME-split-N`, `NAME-confirm`), so that `versus compare` and `versus report`
//! read them like any other.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::bisect::{self, BisectStep, Measure, Probe, ProbeResult, Purpose, SearchConfig, SearchOutcome, Suspect};
use super::diffvars::{self, VarDiff};
use super::preflight::preflight;
use super::steps::{Resume, Source, run_or_reuse};
use super::targets::{TargetSpec, capture_live};
use super::transfer::{self, Mapped, charset_with, overrides_with};
use crate::error::{Error, Result};
use crate::experiment::sandbox_executor::SandboxExecutor;
use crate::experiment::spec::{ConfigDef, TargetDef, WorkloadDef};
use crate::experiment::{ExperimentFile, Plan, Progress, RunOptions, run_experiment};
use crate::metric::Metric;
use crate::server::{Home, config};
use crate::stats::{BootstrapConfig, CompareConfig};
use crate::store::Store;
use crate::workload::ConnectionCharset;

/// The marker at the start of the description of every experiment `versus explain` stores.
pub const DESCRIPTION_MARKER: &str = "versus explain:";

/// How `versus explain` measures and how much it may spend.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainOptions {
    /// Prefix of the stored experiments' names.
    pub name: String,
    /// The workload.
    pub workload: WorkloadDef,
    /// Thread counts; the search decides on the geometric mean over them.
    pub threads: Vec<u32>,
    /// Measured time per run.
    pub duration: Duration,
    /// Warm-up per run.
    pub warmup: Duration,
    /// Repetitions of every probe (at least 2).
    pub repetitions: u32,
    /// Most runs in total.
    pub max_runs: usize,
    /// Run the confirmation step.
    pub confirm: bool,
    /// Groups up to this size are tested one variable at a time (see [`SearchConfig::singles_max`]).
    pub singles_max: usize,
    /// Extra rounds of a step whose comparisons are unclear: each adds the step's repetitions to the
    /// unclear probes, judged by the group-sequential design of [`bisect::Sequential`] (`until: None`).
    pub extra_rounds: usize,
    /// Adaptive steps (`--until`, `--max-repetitions`): `min` = `repetitions`, then rounds of one
    /// repetition up to `max` while a probe is open (replaces `extra_rounds`).
    pub adaptive: Option<crate::experiment::Repetitions>,
    /// The metric decided on.
    pub metric: Metric,
    /// Relative noise band of the comparisons.
    pub noise_band: f64,
    /// Where the noise band came from (see [`crate::experiment::band`]), for the report.
    pub noise_band_source: String,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Seed of the run order and the workloads.
    pub seed: u64,
    /// Reuse the steps an earlier search with the same arguments stored (see [`super::steps`]).
    pub resume: bool,
    /// Profile the server in the first step (A against B), `profile = true` on its experiment.
    pub profile: bool,
}

/// Seed of every interval of the attribution, so that `versus explain` and `versus report` agree.
pub const ATTRIBUTION_SEED: u64 = 0x5EED;

pub use super::samples::samples_by_target;
pub use super::skip::{SkipReason, Skipped};

/// What `versus explain` found, or plans to do (`--dry-run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainReport {
    /// Target A, described.
    pub a: String,
    /// Target B, described.
    pub b: String,
    /// `SELECT VERSION()` of A and B.
    pub versions: [Option<String>; 2],
    /// Workload label, thread counts, run length and repetitions.
    pub workload: String,
    /// Thread counts.
    pub threads: Vec<u32>,
    /// Measured seconds per run.
    pub duration_s: u64,
    /// Repetitions per probe.
    pub repetitions: u32,
    /// How the search steps add repetitions and which interval judges them (empty: fixed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repetition_rule: String,
    /// The metric and whether higher is better.
    pub metric: String,
    /// Whether higher values of the metric are better.
    pub higher_is_better: bool,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// The noise band of the comparisons.
    #[serde(default = "default_band")]
    pub noise_band: f64,
    /// Where the noise band came from: `--noise-band`, a calibration of this host, or the default.
    #[serde(default)]
    pub noise_band_source: String,
    /// The variables bisected, with both values.
    pub candidates: Vec<Suspect>,
    /// The differing variables left out, with why.
    pub skipped: Vec<Skipped>,
    /// Most runs allowed.
    pub max_runs: usize,
    /// Worst-case runs for 1, 2 and 3 culprits.
    pub estimate_runs: [usize; 3],
    /// Estimated seconds per run (restart, prewarm, warm-up, measured time).
    pub seconds_per_run: u64,
    /// How the variables that are not simply `name=value` are given to B (flag lists flag by flag,
    /// mapped types, variables moved together, session and derived values).
    #[serde(default)]
    pub mapping: Vec<Mapped>,
    /// The candidates whose A value shapes the data: the probes that set them run on data prepared
    /// under them.
    #[serde(default)]
    pub shaping: Vec<String>,
    /// At most this many data preparations beyond B's and A's (one per combination of the shaping
    /// candidates a probe sets).
    #[serde(default)]
    pub extra_preparations: usize,
    /// Estimated seconds of one preparation.
    #[serde(default)]
    pub seconds_per_preparation: u64,
    /// Preparations of B's and A's data (one when they share a build).
    #[serde(default)]
    pub base_preparations: usize,
    /// The search, unless this is a dry run.
    pub outcome: Option<SearchOutcome>,
    /// The experiments stored, by step: (id, name).
    pub experiments: Vec<(i64, String)>,
    /// The data prepared for the search, each once, with the probes that ran on it.
    #[serde(default)]
    pub prepared: Vec<PreparedData>,
}

fn default_band() -> f64 {
    crate::stats::DEFAULT_NOISE_BAND
}

/// Data prepared for the search and the probes that ran on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedData {
    /// The preparation's key (build, the server options that shape the data, the workload's shape).
    pub key: String,
    /// The server options set while preparing.
    pub options: Vec<String>,
    /// The probes (target labels of the steps) that ran on it.
    pub probes: Vec<String>,
}

impl ExplainReport {
    /// The stored confirmation experiment (or the last step's), for `versus report`.
    pub fn final_experiment(&self) -> Option<&(i64, String)> {
        self.experiments.last()
    }
}

/// The variables of both targets, what can be bisected and what cannot.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The classified difference.
    pub diff: VarDiff,
    /// Variables B accepts with A's value.
    pub candidates: Vec<Suspect>,
    /// Variables left out.
    pub skipped: Vec<Skipped>,
    /// How the variables that are not simply `name=value` are given to B.
    pub mapping: Vec<Mapped>,
}

/// Reads both targets' variables (each from a sandbox started and stopped for it), classifies the
/// differences, and checks at startup which of A's values B accepts.
pub fn prepare(
    home: &Home,
    a: &TargetSpec,
    b: &TargetSpec,
    work: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<Prepared> {
    log(&format!("reading the variables of A ({})", a.describe()));
    let sa = capture_live(home, a, work, "a")?;
    log(&format!("reading the variables of B ({})", b.describe()));
    let sb = capture_live(home, b, work, "b")?;
    let diff = diffvars::diff(&sa, &sb);
    let line = |t: &TargetSpec| home.build(&t.build).ok().map(|b| (b.flavor, b.version));
    let transfer::Sorted { mut candidates, mut skipped, mapping } = transfer::sort(&diff, line(a), line(b));
    if !candidates.is_empty() {
        log(&format!("checking that B starts with A's values of {} variable(s)", candidates.len()));
        let (ok, refused) = preflight(home, b, candidates, work, log)?;
        candidates = ok;
        skipped.extend(refused);
    }
    Ok(Prepared { diff, candidates, skipped, mapping })
}

/// Turns overrides into an experiment's `set` table (`name = "value"`, or `name = true` for a flag).
pub fn set_table(overrides: &[String]) -> Result<toml::Table> {
    let mut t = toml::Table::new();
    for o in overrides {
        let (name, value) = config::parse_override(o)?;
        t.insert(name, value.map(toml::Value::String).unwrap_or(toml::Value::Boolean(true)));
    }
    Ok(t)
}

/// The experiment of one step: B first (so that its data are prepared once for all steps), then the
/// other probes.
pub fn step_experiment(
    a: &TargetSpec,
    b: &TargetSpec,
    candidates: &[Suspect],
    step: &BisectStep,
    opts: &ExplainOptions,
    description: &str,
) -> Result<ExperimentFile> {
    let purpose = match step.purpose {
        Purpose::Gap if step.number == 1 => "gap".to_string(),
        Purpose::Gap => format!("gap-{}", step.number),
        Purpose::Split => format!("split-{}", step.number),
        Purpose::Confirm => "confirm".to_string(),
    };
    let configs: Vec<ConfigDef> = [("a", a), ("b", b)]
        .into_iter()
        .filter_map(|(name, spec)| spec.config.as_ref().map(|file| ConfigDef::of_file(name.into(), file)))
        .collect();
    let target = |label: String,
                  spec: &TargetSpec,
                  cfg: &str,
                  overrides: &[String],
                  charset: Option<&ConnectionCharset>|
     -> Result<TargetDef> {
        Ok(TargetDef::sandbox(
            label,
            spec.build.clone(),
            spec.config.as_ref().map(|_| cfg.to_string()),
            set_table(overrides)?,
            charset,
        ))
    };
    let mut targets = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for p in &step.probes {
        let mut label = bisect::probe_label(p, candidates);
        if used.contains(&label) {
            // Long sets are labelled by their first name and a count, which can repeat.
            label = format!("{label} #{}", used.len() + 1);
        }
        used.push(label.clone());
        targets.push(match p {
            Probe::A => target(label, a, "a", &a.overrides, a.charset.as_ref())?,
            Probe::B => target(label, b, "b", &b.overrides, b.charset.as_ref())?,
            Probe::Set(s) => {
                target(label, b, "b", &overrides_with(b, candidates, s), charset_with(b, candidates, s).as_ref())?
            }
        });
    }
    Ok(ExperimentFile {
        threads: opts.threads.clone(),
        duration: opts.duration,
        warmup: opts.warmup,
        profile: opts.profile && step.purpose == Purpose::Gap && step.number == 1,
        ..ExperimentFile::generated(
            format!("{}-{purpose}", opts.name),
            format!("{DESCRIPTION_MARKER} {description} (step {}, {purpose})", step.number),
            configs,
            targets,
            opts.workload.clone(),
            step.repetitions.unwrap_or(opts.repetitions),
            opts.seed.wrapping_add(step.number as u64),
        )
    })
}

/// Runs each step as an experiment on sandboxes.
struct ServerMeasure<'a> {
    store: &'a mut Store,
    a: &'a TargetSpec,
    b: &'a TargetSpec,
    opts: &'a ExplainOptions,
    description: String,
    home: &'a Home,
    executor: SandboxExecutor,
    progress: Progress,
    experiments: Vec<(i64, String)>,
    prepared: Vec<PreparedData>,
    /// Keys of the data of steps reused from the store (prepared when they were measured).
    reused_data: Vec<String>,
    resume: Resume,
    log: &'a mut dyn FnMut(&str),
}

impl Measure for ServerMeasure<'_> {
    fn measure(&mut self, step: &BisectStep, candidates: &[Suspect]) -> Result<Vec<ProbeResult>> {
        let file = step_experiment(self.a, self.b, candidates, step, self.opts, &self.description)?;
        let text =
            toml::to_string(&file).map_err(|e| Error::Other(format!("cannot write the step's experiment: {e}")))?;
        let plan = Plan::for_home(&file, Path::new("/"), self.home).map_err(Error::Other)?;
        let labels: Vec<String> = plan.targets.iter().map(|t| t.label.clone()).collect();
        (self.log)(&format!("step {} ({}): {}", step.number, file.name, labels.join(", ")));
        for c in &plan.cells {
            let p = &plan.preparations[c.preparation];
            let label = &plan.targets[c.target].label;
            match self.prepared.iter_mut().find(|d| d.key == p.key) {
                Some(d) if !d.probes.contains(label) => d.probes.push(label.clone()),
                Some(_) => {}
                None => self.prepared.push(PreparedData {
                    key: p.key.clone(),
                    options: p.server_options.clone(),
                    probes: vec![label.clone()],
                }),
            }
        }
        let id = run_or_reuse(
            step.number,
            &text,
            &plan,
            self.store,
            &mut self.executor,
            &mut self.progress,
            &mut self.resume,
            &mut self.experiments,
            self.log,
        )?;
        if self.resume.steps.last().is_some_and(|s| s.3 == Source::Reused) {
            self.reused_data.extend(plan.cells.iter().map(|c| plan.preparations[c.preparation].key.clone()));
        }
        // An added round of an adaptive step may have one repetition; a step's own needs two.
        let min = step.repetitions.map_or(2, |r| (r as usize).min(2));
        let mut by_label = samples_by_target(self.store, id, self.opts.metric, min)?;
        Ok(labels.iter().map(|l| by_label.remove(l).unwrap_or_else(|| Err(format!("no runs of {l}")))).collect())
    }
}

/// The search settings of `opts`.
pub fn search_config(opts: &ExplainOptions) -> SearchConfig {
    SearchConfig {
        compare: CompareConfig {
            direction: opts.metric.direction(),
            noise_band: opts.noise_band,
            bootstrap: BootstrapConfig {
                confidence: opts.confidence,
                seed: ATTRIBUTION_SEED,
                ..BootstrapConfig::default()
            },
        },
        runs_per_probe: opts.repetitions as usize * opts.threads.len(),
        max_runs: opts.max_runs,
        confirm: opts.confirm,
        singles_max: opts.singles_max,
        extra_rounds: opts.extra_rounds,
        sequential: sequential(opts),
    }
}

/// The adaptive design of the search steps: `--until`/`--max-repetitions` (rounds of one repetition
/// up to the maximum), else `--extra-rounds` (rounds of the step's repetitions for unclear probes),
/// both judged by repeated intervals; `None` with neither (one look: fixed samples).
fn sequential(opts: &ExplainOptions) -> Option<bisect::Sequential> {
    let min = opts.repetitions as usize;
    let runs_per_repetition = opts.threads.len().max(1);
    let (max, batch, until) = match &opts.adaptive {
        Some(r) => (r.max as usize, 1, Some(r.until.unwrap_or(0.0))),
        None if opts.extra_rounds > 0 => (min * (1 + opts.extra_rounds), min, None),
        None => return None,
    };
    let design = crate::stats::SequentialDesign::new(min, max.max(min), opts.confidence).ok()?;
    Some(bisect::Sequential { design, batch, runs_per_repetition, until })
}

/// The report of a dry run, or the frame of a real one.
fn frame(home: &Home, a: &TargetSpec, b: &TargetSpec, p: &Prepared, opts: &ExplainOptions) -> Result<ExplainReport> {
    let cfg = search_config(opts);
    let n = p.candidates.len();
    let est = |k| bisect::estimate_runs(n, k, &cfg);
    // A plan of the first step gives the time per run and per preparation.
    let probes = BisectStep { number: 1, purpose: Purpose::Gap, probes: vec![Probe::B, Probe::A], repetitions: None };
    let plan = Plan::for_home(&step_experiment(a, b, &p.candidates, &probes, opts, "")?, Path::new("/"), home)
        .map_err(Error::Other)?;
    let per_run = plan.runs.iter().map(|r| plan.run_estimate(r.cell)).sum::<std::time::Duration>().as_secs()
        / plan.runs.len().max(1) as u64;
    let shaping: Vec<String> = p.candidates.iter().filter(|c| c.transfer.shapes_data).map(|c| c.name.clone()).collect();
    // Every combination of the shaping candidates that a probe sets is data of its own (B's own
    // combination, none of them, is B's data); at most one per probe run.
    let combinations = 1usize.checked_shl(shaping.len() as u32).map_or(usize::MAX, |c| c - 1);
    let probes_max = est(n.min(3)) / cfg.runs_per_probe.max(1);
    let extra_preparations = if shaping.is_empty() { 0 } else { combinations.min(probes_max.max(1)) };
    let rows = plan.preparations.first().map_or(0, |x| x.rows);
    Ok(ExplainReport {
        a: a.describe(),
        b: b.describe(),
        versions: [p.diff.a.server_version.clone(), p.diff.b.server_version.clone()],
        workload: opts.workload.label(),
        threads: opts.threads.clone(),
        duration_s: opts.duration.as_secs(),
        repetitions: opts.repetitions,
        repetition_rule: cfg.sequential.map(|q| q.describe()).unwrap_or_default(),
        metric: opts.metric.name().to_string(),
        higher_is_better: opts.metric.direction() == crate::stats::Direction::HigherIsBetter,
        confidence: opts.confidence,
        noise_band: opts.noise_band,
        noise_band_source: opts.noise_band_source.clone(),
        candidates: p.candidates.clone(),
        skipped: p.skipped.clone(),
        max_runs: opts.max_runs,
        estimate_runs: [est(1), est(2), est(3)],
        seconds_per_run: per_run,
        mapping: p.mapping.clone(),
        shaping,
        extra_preparations,
        seconds_per_preparation: crate::experiment::plan::prepare_estimate(rows).as_secs(),
        base_preparations: plan.preparations.len(),
        outcome: None,
        experiments: vec![],
        prepared: vec![],
    })
}

/// `versus explain`: prepares, then (unless `dry_run`) runs the search. `work` holds the temporary
/// sandboxes and the prepared data; it is removed at the end.
#[allow(clippy::too_many_arguments)]
pub fn explain(
    home: &Home,
    store: &mut Store,
    a: &TargetSpec,
    b: &TargetSpec,
    opts: &ExplainOptions,
    dry_run: bool,
    progress: Progress,
    log: &mut dyn FnMut(&str),
) -> Result<ExplainReport> {
    if opts.repetitions < 2 {
        return Err(Error::option("--repetitions", "needs at least 2, so that every step has an interval"));
    }
    if let Some(r) = &opts.adaptive {
        crate::stats::SequentialDesign::new(opts.repetitions as usize, r.max as usize, opts.confidence)
            .map_err(|e| Error::option("--max-repetitions", e.to_string()))?;
    }
    let work: PathBuf = home.root().join("explain").join(crate::owned::slug(&opts.name));
    // The work directory and its entries are versus's: a link to a place versus did not make is refused.
    crate::owned::check_dir(&work)?;
    crate::owned::check_entries(&work)?;
    let result = (|| {
        let prepared = prepare(home, a, b, &work, log)?;
        let mut report = frame(home, a, b, &prepared, opts)?;
        if dry_run {
            if opts.resume {
                // Nothing stored to resume fails the dry run as it fails the real one's first step.
                let step = BisectStep {
                    number: 1,
                    purpose: Purpose::Gap,
                    probes: vec![Probe::B, Probe::A],
                    repetitions: None,
                };
                let first = step_experiment(a, b, &prepared.candidates, &step, opts, "")?;
                super::steps::check_resumable(store, &first.name)?;
            }
            return Ok(report);
        }
        let unexplainable: Vec<String> =
            prepared.skipped.iter().filter(|s| s.reason.unexplainable()).map(|s| s.name.clone()).collect();
        let description = format!(
            "B = {} against A = {}; {} variable(s) bisected{}",
            report.b,
            report.a,
            prepared.candidates.len(),
            if unexplainable.is_empty() {
                String::new()
            } else {
                format!("; not settable on B with A's value: {}", unexplainable.join(", "))
            }
        );
        let mut measure = ServerMeasure {
            store,
            a,
            b,
            opts,
            description,
            home,
            executor: SandboxExecutor::locked(home, &opts.name)?,
            progress,
            experiments: vec![],
            prepared: vec![],
            reused_data: vec![],
            resume: Resume::new(opts.resume),
            log,
        };
        (measure.log)(&report.total_estimate());
        let outcome = bisect::search(&prepared.candidates, &search_config(opts), &mut measure);
        let _ = crate::owned::remove(measure.executor.work_dir());
        report.experiments = std::mem::take(&mut measure.experiments);
        // Only the data really prepared (a step that failed before preparing leaves none).
        let mut done = measure.executor.prepared().to_vec();
        done.extend(measure.reused_data);
        report.prepared = measure.prepared.into_iter().filter(|d| done.contains(&d.key)).collect();
        let mut outcome = outcome?;
        outcome.notes.extend(measure.resume.note());
        report.outcome = Some(outcome);
        Ok(report)
    })();
    let _ = crate::owned::remove(&work);
    result
}

/// Runs one step's experiment (advise's screens and confirmation) with `executor` and `opts`, e.g. a
/// [`RunOptions::deadline`]: no run starts which would end after it by its estimate, corrected by
/// [`RunOptions::pace`]. Records it in `experiments`; returns its id and whether runs were left for lack
/// of time; an interrupted step is [`Error::Interrupted`].
pub fn run_step_until(
    text: &str,
    plan: &Plan,
    store: &mut Store,
    executor: &mut SandboxExecutor,
    progress: &mut Progress,
    experiments: &mut Vec<(i64, String)>,
    opts: &RunOptions,
) -> Result<(i64, bool)> {
    let o = run_experiment(text, None, plan, store, executor, opts, progress)?;
    experiments.push((o.experiment_id, plan.file.name.clone()));
    if o.interrupted {
        return Err(Error::Interrupted);
    }
    Ok((o.experiment_id, o.out_of_time))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ExplainOptions {
        ExplainOptions {
            name: "explain".into(),
            workload: WorkloadDef {
                name: None,
                test: "oltp_write_only".into(),
                script: None,
                threads: None,
                options: toml::from_str("tables = 2\ntable-size = 1000").unwrap(),
            },
            threads: vec![4],
            duration: Duration::from_secs(5),
            warmup: Duration::ZERO,
            repetitions: 3,
            max_runs: 60,
            confirm: true,
            profile: false,
            singles_max: 4,
            extra_rounds: 1,
            adaptive: None,
            metric: Metric::Tps,
            noise_band: 0.02,
            noise_band_source: "test".into(),
            confidence: 0.95,
            seed: 1,
            resume: false,
        }
    }

    #[test]
    fn step_experiments_put_b_first_and_give_it_a_values() {
        let a = TargetSpec::parse("system:log-bin,sync_binlog=0,innodb_flush_log_at_trx_commit=2", "A").unwrap();
        let b = TargetSpec::parse("system:log-bin,sync_binlog=1,innodb_flush_log_at_trx_commit=1", "B").unwrap();
        let c = vec![Suspect::new("innodb_flush_log_at_trx_commit", "2", "1"), Suspect::new("sync_binlog", "0", "1")];
        let step = BisectStep {
            number: 1,
            purpose: Purpose::Gap,
            probes: vec![Probe::B, Probe::A, Probe::Set(vec![0, 1])],
            repetitions: None,
        };
        let f = step_experiment(&a, &b, &c, &step, &opts(), "B against A").unwrap();
        assert_eq!(f.name, "explain-gap");
        assert!(f.description.as_deref().unwrap().starts_with(DESCRIPTION_MARKER));
        let text = toml::to_string(&f).unwrap();
        let back = ExperimentFile::parse(&text).unwrap();
        assert_eq!(back, f, "the stored definition reads back as the same experiment");
        let plan = Plan::new(&f, Path::new("/")).unwrap();
        let labels: Vec<&str> = plan.targets.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["B", "A", "B+all"]);
        assert_eq!(plan.preparations.len(), 1, "A and B share a build: data prepared once");
        match &plan.targets[2].kind {
            crate::experiment::TargetKind::Sandbox { overrides, .. } => {
                let mut o = overrides.clone();
                o.sort();
                assert_eq!(o, ["innodb_flush_log_at_trx_commit=2", "log-bin", "sync_binlog=0"]);
            }
            other => panic!("{other:?}"),
        }
    }
}
