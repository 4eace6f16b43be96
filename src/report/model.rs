//! The comparison model: pure data, built once from the store by [`super::build_report`] and rendered
//! by every export format, so that all of them carry the same numbers. Its JSON form is the `json`
//! export, described by `schemas/compare-report.schema.json`.

use serde::{Deserialize, Serialize};

use crate::metric::{Metric, MetricKind};
use crate::sampler::HostFacts;

/// Version of the JSON layout of [`CompareReport`] (bump on incompatible changes).
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// What the compared sides are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    /// Targets (build + config + options) against each other.
    #[default]
    Target,
    /// Builds against each other, within each config.
    Build,
    /// Configs against each other, within each build.
    Config,
}

impl Dimension {
    /// `target`, `build` or `config`.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Target => "target",
            Dimension::Build => "build",
            Dimension::Config => "config",
        }
    }

    /// What the cases are grouped by besides workload and threads: configs when builds are
    /// compared, builds when configs are compared, nothing for targets.
    pub fn group_name(self) -> Option<&'static str> {
        match self {
            Dimension::Target => None,
            Dimension::Build => Some("config"),
            Dimension::Config => Some("build"),
        }
    }
}

/// The metric compared, with what a reader needs to read its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    /// Name as on the command line (`tps`, `p95` …).
    pub name: String,
    /// Column heading.
    pub label: String,
    /// Unit of every value of this metric in the report.
    pub unit: String,
    /// Throughput, latency or cost.
    pub kind: MetricKind,
    /// Whether bigger values are better.
    pub higher_is_better: bool,
}

impl MetricInfo {
    /// The description of `m`.
    pub fn of(m: Metric) -> MetricInfo {
        MetricInfo {
            name: m.name().to_string(),
            label: m.label().to_string(),
            unit: m.unit().to_string(),
            kind: m.kind(),
            higher_is_better: m.direction() == crate::stats::Direction::HigherIsBetter,
        }
    }
}

/// One compared side: a target, build or config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Label in the report (qualified with `@EXPERIMENT_ID` when two experiments use the same one).
    pub label: String,
    /// Whether it is the baseline.
    pub baseline: bool,
    /// The experiments its runs come from.
    pub experiments: Vec<i64>,
    /// The target labels behind it.
    pub targets: Vec<String>,
    /// Server versions its runs reported (`SELECT VERSION()`).
    pub server_versions: Vec<String>,
    /// Finished runs selected.
    pub runs_done: usize,
    /// Runs that failed (not used).
    pub runs_failed: usize,
    /// Runs not finished: planned, running or interrupted (not used).
    pub runs_unfinished: usize,
}

/// A point at which the sides are compared: a workload at a thread count, within a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// Workload label.
    pub workload: String,
    /// Config (when builds are compared) or build (when configs are compared).
    pub group: Option<String>,
    /// Client threads.
    pub threads: u32,
}

/// Where a case's noise band came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BandOrigin {
    /// `--noise-band`.
    Given,
    /// `versus calibrate` on this host class, workload and thread count.
    Calibrated,
    /// No calibration applies: [`crate::stats::DEFAULT_NOISE_BAND`].
    Default,
}

impl BandOrigin {
    /// The word a table shows beside the band.
    pub fn word(self) -> &'static str {
        match self {
            BandOrigin::Given => "given",
            BandOrigin::Calibrated => "calibrated",
            BandOrigin::Default => "default",
        }
    }
}

/// The noise band of one case and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CaseBand {
    /// The relative band below which no change is called in this case.
    pub band: f64,
    /// Where it came from.
    pub origin: BandOrigin,
}

/// The metric for one side in one case, over its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    /// Index into [`CompareReport::cases`].
    pub case: usize,
    /// Index into [`CompareReport::sides`].
    pub side: usize,
    /// The runs with a value, in repetition order.
    pub run_ids: Vec<i64>,
    /// One value per run, same order.
    pub values: Vec<f64>,
    /// Number of values.
    pub n: usize,
    /// Mean of the values.
    pub mean: Option<f64>,
    /// Median of the values.
    pub median: Option<f64>,
    /// Sample standard deviation (two values or more).
    pub std_dev: Option<f64>,
    /// Smallest value.
    pub min: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// Finished runs of this cell that lack the metric (stored by an older versus, or not measurable).
    pub missing: usize,
    /// The runs of this cell whose client was the limit, when any was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<ClientBound>,
}

/// Runs whose client, not the server, was the limit: their figures measure the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientBound {
    /// How many of the cell's runs.
    pub runs: usize,
    /// Of how many runs that measured their client.
    pub of: usize,
    /// The busiest such run's figures, in words.
    pub figures: String,
}

impl ClientBound {
    /// "client-bound in 2 of 3 runs (the client used …)".
    pub fn describe(&self) -> String {
        format!("client-bound in {} of {} runs ({})", self.runs, self.of, self.figures)
    }
}

/// How the interval of a ratio was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiKind {
    /// Over independent repetitions (a fresh server per run): includes between-run variation.
    BetweenRepetitions,
    /// From the 1-s intervals of one run per side: reflects only within-run noise.
    WithinRunOnly,
}

/// The verdict on a candidate, from its point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better than the baseline (higher throughput, lower latency or cost), beyond noise.
    Faster,
    /// Worse than the baseline, beyond noise.
    Slower,
    /// The interval contains 1 or the change is within the noise band.
    NoSignificantChange,
    /// No interval could be computed (too few repetitions, missing values).
    NotComputed,
}

/// A candidate against the baseline in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioRow {
    /// Index into [`CompareReport::cases`].
    pub case: usize,
    /// Index into [`CompareReport::sides`] of the candidate.
    pub side: usize,
    /// Mean of the baseline.
    pub baseline_mean: Option<f64>,
    /// Mean of the candidate.
    pub candidate_mean: Option<f64>,
    /// Repetitions of the baseline.
    pub baseline_n: usize,
    /// Repetitions of the candidate.
    pub candidate_n: usize,
    /// `candidate / baseline`: from the repetition means, or from the interval means when the
    /// interval is within-run only.
    pub ratio: Option<f64>,
    /// Lower end of the confidence interval of the ratio.
    pub ci_lo: Option<f64>,
    /// Upper end.
    pub ci_hi: Option<f64>,
    /// What the interval covers.
    pub ci_kind: Option<CiKind>,
    /// How it was computed (`bootstrap-bca-expanded`, `log-delta-welch`, `log-delta-autocorrelated`).
    pub ci_method: Option<String>,
    /// `ratio − 1`.
    pub change: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// What this comparison could have detected (absent when there is no interval).
    pub detectable: Option<Detectable>,
    /// Why there is no verdict, or what limits it.
    pub note: Option<String>,
}

/// The smallest changes a comparison could have detected, and what it would take to detect the
/// target change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detectable {
    /// Smallest relative increase (`ratio − 1`) that this comparison calls with probability `power`,
    /// from the observed between-repetition (or, for within-run rows, within-run) variance, the
    /// interval method and the noise band.
    pub increase: f64,
    /// Smallest relative decrease (`1 − ratio`) called with probability `power`.
    pub decrease: Option<f64>,
    /// The power (0.8).
    pub power: f64,
    /// The change the plan below is for: 5 %, or 1.5 × the noise band when that is larger.
    pub target: f64,
    /// Repetitions per side that would detect `±target` with this noise; absent for within-run rows
    /// (one run per side says nothing about the variation between runs).
    pub plan: Option<crate::stats::RepetitionsNeeded>,
}

impl Detectable {
    /// "Changes beyond ±this could be detected": the larger of the two figures.
    pub fn either_way(&self) -> f64 {
        self.decrease.map_or(f64::INFINITY, |d| d.max(self.increase))
    }
}

/// Stability of one run's 1-s rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStability {
    /// Number of intervals.
    pub intervals: usize,
    /// Lowest 1-s rate.
    pub min: f64,
    /// Highest 1-s rate.
    pub max: f64,
    /// Mean of the 1-s rates.
    pub mean: f64,
    /// Coefficient of variation (fraction).
    pub cv: Option<f64>,
    /// Rates below this are stalls.
    pub stall_threshold: f64,
    /// End times (s since the run started) of the stall intervals.
    pub stalls_at: Vec<f64>,
}

/// One run used in the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Run id (`versus show RUN`).
    pub id: i64,
    /// Its experiment.
    pub experiment: i64,
    /// Index into [`CompareReport::cases`].
    pub case: usize,
    /// Index into [`CompareReport::sides`].
    pub side: usize,
    /// Its target label.
    pub target: String,
    /// Repetition, from 1.
    pub repetition: u32,
    /// Server version it ran on.
    pub server_version: Option<String>,
    /// When it started (seconds since the Unix epoch).
    pub started_at: Option<i64>,
    /// The compared metric for this run.
    pub value: Option<f64>,
    /// Stability of [`CompareReport::rate_metric`] over its 1-s intervals.
    pub stability: Option<RunStability>,
    /// `[t_s, rate]` of every interval, for the throughput-over-time chart.
    pub series: Vec<[f64; 2]>,
    /// `[t_s, lag ms]` of the most lagging replica each second, for a run against a topology.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lag_series: Vec<[f64; 2]>,
}

/// A cost or throughput value of one side in one case, with its ratio to the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    /// Metric name.
    pub metric: String,
    /// Mean over the runs that have it.
    pub mean: Option<f64>,
    /// Runs that have it.
    pub n: usize,
    /// `mean / baseline mean`; absent when both are ≈ 0, when only the baseline is, or when either is
    /// missing (see `both_near_zero`).
    pub ratio: Option<f64>,
    /// Both this mean and the baseline's are below the metric's floor: shown as "—, both ≈ 0".
    #[serde(default)]
    pub both_near_zero: bool,
    /// The call on this metric against the baseline, from the runs' values (log-delta Welch interval,
    /// the report's confidence and noise band); [`Verdict::NotComputed`] with fewer than 2 runs a side.
    #[serde(default = "not_computed")]
    pub verdict: Verdict,
}

fn not_computed() -> Verdict {
    Verdict::NotComputed
}

/// Efficiency or latency values of one side in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValuesRow {
    /// Index into [`CompareReport::cases`].
    pub case: usize,
    /// Index into [`CompareReport::sides`].
    pub side: usize,
    /// One entry per metric, in the order of the table's columns.
    pub values: Vec<MetricValue>,
}

/// A server variable that differs between the compared targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariableRow {
    /// Variable name.
    pub name: String,
    /// Its value for each target, in [`VariableDiff::targets`] order; `None` when the server has no
    /// such variable; several values joined by ` | ` when the target's runs disagree.
    pub values: Vec<Option<String>>,
    /// The server component it belongs to (`InnoDB`, `Binary log` …; see [`super::variables::COMPONENTS`]).
    #[serde(default)]
    pub component: String,
    /// Why it is shown first (`set by a config`, `named by explain`, `key setting; the defaults differ`);
    /// `None` for the rest, which are grouped by component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Per target (in [`VariableDiff::targets`] order), whether its config or overrides set the
    /// variable; empty when none does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_on: Vec<bool>,
}

/// Variables that only one flavor's servers have (MariaDB's wsrep_* and aria_* …), counted, not listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlavorOnly {
    /// `MariaDB`, `MySQL` or `Percona Server`.
    pub flavor: String,
    /// How many.
    pub count: usize,
    /// The commonest name prefixes (`wsrep_*`), at most four.
    pub examples: Vec<String>,
}

/// The variables that differ between the compared targets (every side is one target or more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct VariableDiff {
    /// The targets with stored variables, in side order (qualified with `@EXPERIMENT_ID` when two
    /// experiments use the same label).
    pub targets: Vec<String>,
    /// The differing variables, by name.
    pub rows: Vec<VariableRow>,
    /// Variables left out because their differences are noise (paths, ports, ids, versions, host-sized or
    /// derived values; see [`crate::explain::noise`]).
    pub hidden: usize,
    /// Targets without any stored variables.
    pub targets_without_variables: Vec<String>,
    /// Variables only one flavor has, per flavor (not in `rows`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flavor_only: Vec<FlavorOnly>,
}

/// An experiment the runs come from: its exact definition and the host it ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentInfo {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// The file it was run from.
    pub file: Option<String>,
    /// When it was created (seconds since the Unix epoch).
    pub created_at: i64,
    /// Its status (`done`, `interrupted` …).
    pub status: String,
    /// Seed of the run order.
    pub seed: u64,
    /// The versus version that ran it.
    pub versus_version: String,
    /// Hash of the definition.
    pub definition_hash: String,
    /// The definition as TOML (secrets redacted).
    pub definition: String,
    /// Facts of the machine.
    pub host: HostFacts,
}

/// Everything a comparison report shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    /// [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// The versus version that made the report.
    pub versus_version: String,
    /// The compared metric.
    pub metric: MetricInfo,
    /// The metric of the stability figures and the over-time chart (`tps`, or `qps` when that is
    /// compared).
    pub rate_metric: MetricInfo,
    /// What the sides are.
    pub vs: Dimension,
    /// Label of the baseline side.
    pub baseline: String,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// The largest noise band of any case (each case's own is in [`CompareReport::case_bands`]).
    pub noise_band: f64,
    /// Where the band came from: `--noise-band`, a calibration (host class, workload, experiment,
    /// date) or the default, and why.
    #[serde(default)]
    pub noise_band_source: String,
    /// Whether a workload mismatch was overridden with `--force`.
    pub forced: bool,
    /// The sides, baseline first.
    pub sides: Vec<Side>,
    /// The cases, by workload, group and threads.
    pub cases: Vec<Case>,
    /// The noise band of each case, in [`CompareReport::cases`] order (empty in reports stored before
    /// bands were per case: then [`CompareReport::noise_band`] holds for all).
    #[serde(default)]
    pub case_bands: Vec<CaseBand>,
    /// The metric per case and side.
    pub cells: Vec<CellStats>,
    /// Each candidate against the baseline, per case.
    pub ratios: Vec<RatioRow>,
    /// Every run used.
    pub runs: Vec<RunInfo>,
    /// Metrics of the efficiency table (throughput first), in column order.
    pub efficiency_metrics: Vec<MetricInfo>,
    /// Efficiency per case and side.
    pub efficiency: Vec<ValuesRow>,
    /// Metrics of the latency table, in column order.
    pub latency_metrics: Vec<MetricInfo>,
    /// Latency percentiles per case and side.
    pub latency: Vec<ValuesRow>,
    /// Metrics of the replication table (targets with replicas), in column order; empty without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replication_metrics: Vec<MetricInfo>,
    /// The replicas' lag, applied rate, catch-up time and commit wait per case and side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replication: Vec<ValuesRow>,
    /// Server variables that differ between the sides.
    pub variables: VariableDiff,
    /// The experiments, for reproducibility.
    pub experiments: Vec<ExperimentInfo>,
    /// Caveats a reader must see (within-run intervals, missing metrics, forced comparisons).
    pub notes: Vec<String>,
    /// The workloads' own sections (the Insert Benchmark's Small Datum tables under `ibench`, script
    /// workloads' statements under `statements`): each kind's list under its key at the top level
    /// (absent when there are none).
    #[serde(flatten)]
    pub sections: crate::workload::Sections,
    /// Each candidate side's server variables against the baseline's, classified (changed default,
    /// set by a config, new, removed; noise left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variable_changes: Vec<crate::explain::diffvars::VarChanges>,
    /// With three sides or more: relative-to-first values and change points over the sides in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::explain::series::SeriesReport>,
    /// The attribution of every selected experiment stored by `versus explain`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explain: Vec<crate::explain::section::ExplainSection>,
    /// The confirmation of every selected experiment stored by `versus advise` (`NAME-confirm-N`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advise: Vec<crate::advise::section::AdviseSection>,
    /// Per case with profiled runs: each side's sampled server CPU per transaction and each candidate's
    /// functions that differ from the baseline's beyond the noise (absent when no run was profiled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<super::profile_model::ProfileSection>,
}

impl CompareReport {
    /// The cell of `side` in `case`.
    pub fn cell(&self, case: usize, side: usize) -> Option<&CellStats> {
        self.cells.iter().find(|c| c.case == case && c.side == side)
    }

    /// The ratio row of candidate `side` in `case`.
    pub fn ratio(&self, case: usize, side: usize) -> Option<&RatioRow> {
        self.ratios.iter().find(|r| r.case == case && r.side == side)
    }

    /// The noise band of `case` (the report's one for reports without per-case bands).
    pub fn band_of(&self, case: usize) -> CaseBand {
        self.case_bands.get(case).copied().unwrap_or(CaseBand { band: self.noise_band, origin: BandOrigin::Given })
    }

    /// Whether every case has the same band (then one figure describes them all).
    pub fn one_band(&self) -> bool {
        self.case_bands.iter().all(|b| b.band == self.noise_band)
    }

    /// Index of the baseline side.
    pub fn baseline_index(&self) -> usize {
        self.sides.iter().position(|s| s.baseline).unwrap_or(0)
    }

    /// The distinct thread counts, ascending.
    pub fn thread_counts(&self) -> Vec<u32> {
        let mut t: Vec<u32> = self.cases.iter().map(|c| c.threads).collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// A case's label: `workload [group] @N threads`.
    pub fn case_label(&self, case: usize) -> String {
        let c = &self.cases[case];
        match &c.group {
            Some(g) => format!("{} {} @{}", c.workload, g, c.threads),
            None => format!("{} @{}", c.workload, c.threads),
        }
    }
}
