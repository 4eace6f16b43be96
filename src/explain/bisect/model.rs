//! The data of the config-bisection search: candidates, probes and steps, the measurements asked for
//! and what was found, and the two computations every step makes (the gap of a base against A and the
//! effect of a set in points of A).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::stats::sequential::{Look, SequentialDesign, SequentialPlan, sequential_detectable_effect, sequential_look};
use crate::stats::{self, CompareConfig, Comparison, Direction, Verdict};

/// One variable (or a few that move as one) that can be tried on B: its name, both values and how B
/// is given A's value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Suspect {
    /// Variable name (`sync_binlog`; `optimizer_switch:cset_narrowing` for one flag of a list;
    /// `character_set_server+collation_server` for variables that move together).
    pub name: String,
    /// A's value (what B is given).
    pub a: String,
    /// B's own value.
    pub b: String,
    /// How B is given A's value, when it is not simply `name=a`.
    #[serde(default, skip_serializing_if = "Transfer::is_plain")]
    pub transfer: Transfer,
}

impl Suspect {
    /// A variable given to B as `name=a`.
    pub fn new(name: impl Into<String>, a: impl Into<String>, b: impl Into<String>) -> Suspect {
        Suspect { name: name.into(), a: a.into(), b: b.into(), transfer: Transfer::default() }
    }
}

/// How B is given A's value of a candidate.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Transfer {
    /// The startup options that give it (`character_set_server=latin1`, `collation_server=…`;
    /// `optimizer_switch=cset_narrowing=off`); empty: `name=a`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Client side: the character set and collation B's workload connections set instead of B's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<crate::workload::ConnectionCharset>,
    /// A's value shapes the data: the probes that set it run on data prepared under it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shapes_data: bool,
    /// What was done to A's value to give it to B (a list taken element by element, a type mapped,
    /// variables moved together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Transfer {
    /// True when B is simply given `name=a`.
    pub fn is_plain(&self) -> bool {
        self == &Transfer::default()
    }
}

/// What one probe of a step measures.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Probe {
    /// Target A as it is.
    A,
    /// Target B as it is.
    B,
    /// B with A's values of these candidates (indices, ascending).
    Set(Vec<usize>),
}

/// Why a step is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A round's base, A, and the base with every candidate not yet found.
    Gap,
    /// The base and the parts of a group (halves, or each candidate alone).
    Split,
    /// B and A, each finding alone and the cumulative sets.
    Confirm,
}

/// One small experiment of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectStep {
    /// 1, 2, … in the order run.
    pub number: usize,
    /// Why it runs.
    pub purpose: Purpose,
    /// What it measures, the base (B, or B with earlier findings) first.
    pub probes: Vec<Probe>,
    /// Repetitions of every probe when not the search's own (an added round of an adaptive step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
}

/// The samples of one probe (one value per repetition), or why it could not be measured.
pub type ProbeResult = std::result::Result<Vec<f64>, String>;

/// Runs the steps of a search.
pub trait Measure {
    /// Runs `step` and returns one result per probe, in order. An `Err` stops the search (the store or
    /// the machine failed); a probe whose runs failed is an `Err` inside the vector.
    fn measure(&mut self, step: &BisectStep, candidates: &[Suspect]) -> Result<Vec<ProbeResult>>;
}

/// Settings of [`super::search`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// Direction, noise band and interval settings of every comparison.
    pub compare: CompareConfig,
    /// Runs per probe: repetitions × thread counts.
    pub runs_per_probe: usize,
    /// Most runs the search may use in total.
    pub max_runs: usize,
    /// Run the confirmation step.
    pub confirm: bool,
    /// Groups of at most this many candidates are resolved in one step with each candidate alone
    /// instead of being halved (halving is cheaper only for bigger groups).
    pub singles_max: usize,
    /// How many times a step whose comparisons are unclear (no significant change, but a point
    /// estimate beyond the noise band) is run again, its samples pooled with the first round's
    /// (without correction for the repeated looks: only when `sequential` is `None`).
    pub extra_rounds: usize,
    /// Adaptive steps: rounds are added to a step's open probes under a group-sequential design, and
    /// every search step is judged by the repeated interval (see [`Sequential`]). `None`: fixed
    /// samples (plus `extra_rounds`).
    pub sequential: Option<Sequential>,
}

/// Adaptive steps (`versus explain --until/--max-repetitions`, and `--extra-rounds`): a step first
/// runs `design.min` repetitions of every probe (the search's `runs_per_probe`); while a probe's
/// comparison with the step's control is open, rounds of `batch` repetitions of the control and the
/// open probes are added, up to `design.max` repetitions, budget permitting. Every comparison of a
/// search step is the repeated confidence interval of [`crate::stats::sequential`] at the probe's
/// number of repetitions, so looking after every round keeps the false-alarm rate of each comparison
/// at `1 − design.confidence` (looking at fewer points than the design's `min..=max` only lowers it).
/// The confirmation step runs once and keeps the fixed-sample interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    /// Repetitions of the first look (the step's), most repetitions, overall confidence.
    pub design: SequentialDesign,
    /// Repetitions of every probe in an added round.
    pub batch: usize,
    /// Runs of one repetition of one probe (the thread counts).
    pub runs_per_repetition: usize,
    /// `Some(u)`: a probe stays open until it is decisive, its repeated interval's half-width is at
    /// most `u` (0: never narrow enough), or `max` is reached (`--until`, `--max-repetitions`).
    /// `None`: only unclear probes (not significant, point estimate beyond the band) get rounds
    /// (`--extra-rounds`).
    pub until: Option<f64>,
}

impl Sequential {
    /// Most runs one probe of a search step can take.
    pub fn max_runs_per_probe(&self) -> usize {
        let added = (self.design.max - self.design.min) / self.batch.max(1);
        self.runs_per_repetition * (self.design.min + added * self.batch.max(1))
    }

    /// The rule, for reports: what a step runs and when it stops.
    pub fn describe(&self) -> String {
        let stop = match self.until {
            Some(u) if u > 0.0 => format!("until decisive or ±{:.1} %", u * 100.0),
            Some(_) => "until decisive".to_string(),
            None => "for probes still unclear (not significant, beyond the noise band)".to_string(),
        };
        format!(
            "adaptive steps: {} repetitions, then rounds of {} up to {} {stop}; search steps judged by \
             group-sequential repeated {:.0} % intervals",
            self.design.min,
            self.batch,
            self.design.max,
            self.design.confidence * 100.0
        )
    }
}

/// How a search step compares a probe with its control: the fixed-sample interval of
/// [`stats::compare()`], or the repeated interval of a sequential plan.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    /// Direction, noise band and interval settings.
    pub cfg: &'a CompareConfig,
    /// The sequential plan of adaptive steps.
    pub seq: Option<&'a SequentialPlan>,
    /// `until` of [`Sequential`].
    pub until: Option<f64>,
}

impl<'a> Judge<'a> {
    /// The fixed-sample judge.
    pub fn fixed(cfg: &'a CompareConfig) -> Judge<'a> {
        Judge { cfg, seq: None, until: None }
    }

    /// `with` against `base`.
    pub fn compare(&self, base: &[f64], with: &[f64]) -> Result<Comparison> {
        match self.seq {
            None => stats::compare(base, with, stats::SampleLevel::Repetitions, self.cfg),
            Some(p) => Ok(sequential_look(base, with, p, self.cfg.direction, self.cfg.noise_band, 0.0)?.0),
        }
    }

    /// Whether more rounds of `with` (and `base`) may decide the comparison.
    pub fn open(&self, base: &[f64], with: &[f64]) -> bool {
        match (self.seq, self.until) {
            (Some(p), Some(u)) => sequential_look(base, with, p, self.cfg.direction, self.cfg.noise_band, u)
                .is_ok_and(|(_, look)| look == Look::Continue),
            _ => unclear(self.compare(base, with).ok()),
        }
    }

    /// The detectable effect of the interval this judge builds.
    fn detectable(&self, base: &[f64], with: &[f64]) -> Option<stats::DetectableEffect> {
        match self.seq {
            None => detectable(base, with, self.cfg),
            Some(p) => sequential_detectable_effect(base, with, p, self.cfg.noise_band, stats::DEFAULT_POWER).ok(),
        }
    }
}

/// Whether a comparison is unclear: no significant change although the point estimate is beyond the
/// noise band (more repetitions may decide it).
pub fn unclear(c: Option<Comparison>) -> bool {
    c.is_some_and(|c| c.verdict == Verdict::NoSignificantChange && c.change.abs() > c.noise_band)
}

/// The gap between B and A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// A (baseline) against B (candidate).
    pub comparison: Comparison,
    /// `100 · (mean(B)/mean(A) − 1)`, oriented so that negative means B is worse.
    pub points: f64,
    /// Interval of `points`, low end.
    pub points_lo: f64,
    /// Interval of `points`, high end.
    pub points_hi: f64,
    /// Mean of A's samples: the unit of points (a point is 1 % of it).
    pub a_mean: f64,
    /// The smallest changes this comparison could detect (80 % power, its interval and noise band).
    #[serde(default)]
    pub detectable: Option<stats::DetectableEffect>,
}

/// What setting a subset of A's values on B did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// The candidates set (indices).
    pub set: Vec<usize>,
    /// Their names.
    pub names: Vec<String>,
    /// The step it was measured in.
    pub step: usize,
    /// The base (B, or B with earlier findings) against base+set, when both could be measured.
    pub comparison: Option<Comparison>,
    /// Points of A recovered (positive: towards A's better value).
    pub points: Option<f64>,
    /// Interval of `points`, low end.
    pub points_lo: Option<f64>,
    /// Interval of `points`, high end.
    pub points_hi: Option<f64>,
    /// Whether it moves B significantly towards A (the interval excludes 1, the change is beyond the
    /// noise band, and it goes A's way).
    pub toward_a: bool,
    /// Why it could not be measured.
    pub error: Option<String>,
    /// The smallest changes of base+set against the base this comparison could detect (80 % power,
    /// its interval and noise band), relative to the base.
    #[serde(default)]
    pub detectable: Option<stats::DetectableEffect>,
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    /// B is not significantly different from A: nothing to explain.
    NoGap,
    /// Setting all of A's values on B does not move B significantly towards A: the gap is not in
    /// the configuration (or not in the variables that could be set).
    NotConfig,
    /// Every group was resolved, and the search ended with no significant gap left, or with a rest of
    /// the gap that the remaining variables do not move.
    Explained,
    /// The budget ran out (or probes failed) before every group was resolved.
    Partial,
}

/// A step as run, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step.
    pub step: BisectStep,
    /// Its probes' labels, in order.
    pub labels: Vec<String>,
    /// Runs it took.
    pub runs: usize,
}

/// A culprit, or a group of values that act together, with what it recovers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The candidates (indices); more than one for a group that acts together.
    pub set: Vec<usize>,
    /// Their names.
    pub names: Vec<String>,
    /// The round that found it.
    pub round: usize,
    /// The effect that found it: what the round's full set (B with every value not found before) loses
    /// without it.
    pub found: Effect,
    /// Confirmation: on top of the findings before it in this list, against them.
    pub increment: Option<Effect>,
    /// Confirmation: alone, against B.
    pub alone: Option<Effect>,
    /// For a group that acts together: what leaving out each of its parts cost the full set, in the
    /// step that found that none of them alone was significant (single candidates when the group was
    /// tried one by one, else its halves). Empty for a culprit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Effect>,
}

impl Finding {
    /// What it recovers on top of the earlier findings: the confirmation's, else the search's.
    pub fn attributed(&self) -> &Effect {
        self.increment.as_ref().unwrap_or(&self.found)
    }
}

/// One round of the search: its base and what was left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1, 2, …
    pub number: usize,
    /// The findings applied to B in this round (indices).
    pub base: Vec<usize>,
    /// The base against A.
    pub gap: Gap,
    /// The base with every candidate not yet found, against the base.
    pub rest: Effect,
}

/// Everything the search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The candidates searched.
    pub candidates: Vec<Suspect>,
    /// B against A (from the confirmation when there is one, else the first round).
    pub gap: Option<Gap>,
    /// The rounds.
    pub rounds: Vec<Round>,
    /// Culprits and groups, in the order found (round by round, largest effect first).
    pub findings: Vec<Finding>,
    /// All findings together against B (confirmation, two findings or more).
    pub together: Option<Effect>,
    /// Groups left unresolved when the budget ran out or a probe failed.
    pub unresolved: Vec<Vec<usize>>,
    /// Candidates not found to move B towards A.
    pub cleared: Vec<usize>,
    /// For each cleared candidate (in the order of `cleared`), the group it was last cleared with:
    /// itself alone, or several left out (or set) together whose absence cost nothing as a group. A
    /// value that matters inside such a group (its effect cancelled by another's) would need the
    /// group split to be found.
    #[serde(default)]
    pub cleared_with: Vec<Vec<usize>>,
    /// Points of the gap not recovered by the findings together.
    pub unexplained_points: Option<f64>,
    /// How it ended.
    pub conclusion: Conclusion,
    /// Every step run.
    pub steps: Vec<StepRecord>,
    /// Runs used.
    pub runs_used: usize,
    /// Caveats (failed probes, skipped confirmation).
    pub notes: Vec<String>,
}

impl SearchOutcome {
    /// The single-variable findings.
    pub fn culprits(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.set.len() == 1)
    }

    /// The findings that are groups acting together.
    pub fn groups(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.set.len() > 1)
    }

    /// The group candidate `i` was cleared with, if it was cleared (itself alone, or a group).
    pub fn cleared_group(&self, i: usize) -> Option<&[usize]> {
        let k = self.cleared.iter().position(|&c| c == i)?;
        Some(self.cleared_with.get(k).map(Vec::as_slice).unwrap_or(std::slice::from_ref(&self.cleared[k])))
    }
}

/// The label of a probe in experiments and reports: `A`, `B`, `B+all`, `B+sync_binlog`,
/// `B+x+y+z`, `B+x+4 more`.
pub fn probe_label(probe: &Probe, candidates: &[Suspect]) -> String {
    match probe {
        Probe::A => "A".into(),
        Probe::B => "B".into(),
        Probe::Set(s) if s.len() == candidates.len() && s.len() > 1 => "B+all".into(),
        Probe::Set(s) => {
            let names: Vec<&str> = s.iter().map(|&i| candidates[i].name.as_str()).collect();
            if names.len() <= 3 {
                format!("B+{}", names.join("+"))
            } else {
                format!("B+{}+{} more", names[0], names.len() - 1)
            }
        }
    }
}

pub(super) fn order(x: f64, y: f64) -> (f64, f64) {
    if x <= y { (x, y) } else { (y, x) }
}

pub(super) fn sign(cfg: &CompareConfig) -> f64 {
    if cfg.direction == Direction::HigherIsBetter { 1.0 } else { -1.0 }
}

/// What comparison `c` (a base against the base with some values on top) stands for in points of A's
/// mean, with its interval (low, high): `(ratio − 1) · base_over_a · 100`, positive when the values
/// improve on the base by `c`'s direction; `base_over_a` is mean(base) / mean(A).
pub fn points_of_a(c: &Comparison, base_over_a: f64) -> (f64, f64, f64) {
    let sign = if c.direction == Direction::HigherIsBetter { 1.0 } else { -1.0 };
    let pts = |r: f64| sign * (r - 1.0) * base_over_a * 100.0;
    let (lo, hi) = order(pts(c.ci.lo), pts(c.ci.hi));
    (pts(c.ci.ratio), lo, hi)
}

/// The gap of B (candidate) against A (baseline) from their samples.
pub fn gap(a: &[f64], b: &[f64], cfg: &CompareConfig) -> Result<Gap> {
    gap_with(a, b, Judge::fixed(cfg))
}

/// [`gap`] with the interval of `judge`.
pub fn gap_with(a: &[f64], b: &[f64], judge: Judge) -> Result<Gap> {
    let cfg = judge.cfg;
    let c = judge.compare(a, b)?;
    let pts = |r: f64| sign(cfg) * (r - 1.0) * 100.0;
    let (lo, hi) = order(pts(c.ci.lo), pts(c.ci.hi));
    let a_mean = stats::mean(a).unwrap_or(f64::NAN);
    let detectable = judge.detectable(a, b);
    Ok(Gap { comparison: c, points: pts(c.ci.ratio), points_lo: lo, points_hi: hi, a_mean, detectable })
}

/// The detectable effect of the interval [`stats::compare`] builds for repetitions `base` and `with`.
fn detectable(base: &[f64], with: &[f64], cfg: &CompareConfig) -> Option<stats::DetectableEffect> {
    let level = stats::SampleLevel::Repetitions;
    stats::detectable_effect_of(base, with, level, cfg.bootstrap.confidence, cfg.noise_band, stats::DEFAULT_POWER).ok()
}

/// The effect of setting `set` (called `names`) on top of a base (B, or B with other values), from the
/// base's samples and those of base+set in one step, in points of A's mean in `gap`; `gap`'s verdict
/// tells which way is towards A; the interval is `judge`'s.
pub fn effect(
    set: &[usize],
    names: Vec<String>,
    step: usize,
    b: &[f64],
    with: &ProbeResult,
    gap: &Gap,
    judge: Judge,
) -> Effect {
    let mut e = Effect {
        set: set.to_vec(),
        names,
        step,
        comparison: None,
        points: None,
        points_lo: None,
        points_hi: None,
        toward_a: false,
        error: None,
        detectable: None,
    };
    let samples = match with {
        Ok(x) => x,
        Err(why) => {
            e.error = Some(why.clone());
            return e;
        }
    };
    match judge.compare(b, samples) {
        Ok(c) => {
            let (points, lo, hi) = points_of_a(&c, stats::mean(b).unwrap_or(f64::NAN) / gap.a_mean);
            e.points = Some(points);
            e.points_lo = Some(lo);
            e.points_hi = Some(hi);
            e.toward_a = matches!(
                (gap.comparison.verdict, c.verdict),
                (Verdict::Slower, Verdict::Faster) | (Verdict::Faster, Verdict::Slower)
            );
            e.comparison = Some(c);
            e.detectable = judge.detectable(b, samples);
        }
        Err(err) => e.error = Some(format!("no interval: {err}")),
    }
    e
}
