//! Config bisection: which of A's values, set on B, account for the gap between B and A.
//!
//! The search is separate from servers: it asks a [`Measure`] to run **steps**, each a small
//! experiment of a few **probes** (A itself, B itself, or B with a subset of A's values), and
//! decides from the per-repetition samples it gets back with [`crate::stats::compare`].
//!
//! 1. **Gap** — probes B, A and B+all (every candidate set to A's value). If B is not significantly
//!    different from A there is nothing to explain; if B+all does not move B significantly towards A,
//!    the configuration does not explain the gap.
//! 2. **Split** — a group that moves B towards A is resolved: a group of up to `singles_max`
//!    candidates in one step that probes B and B+each candidate alone; a bigger group is halved
//!    (candidates in name order) and one step probes B, B+first half and B+second half. Each part that
//!    moves B significantly towards A is resolved in turn; a part that does not is cleared; a single
//!    candidate that does is a culprit. When no part does on its own but the group did, the group
//!    acts jointly (its values matter only together, or each one's effect is too small to see alone)
//!    and is reported as a group. Groups are resolved breadth-first.
//! 3. **Confirm** — one step probes B, A, B+each culprit (and joint group) alone and B+all of them
//!    together, so that the final attribution comes from one experiment under the same conditions.
//!
//! A step whose comparisons are **unclear** — not significant although the point estimate is beyond
//! the noise band — is run again up to `extra_rounds` times while the budget allows, and the samples
//! of the rounds are pooled (a mild form of sequential testing: it slightly raises the false-positive
//! rate, so it is limited to a round or two).
//!
//! Every step re-measures B as its own control, so slow drifts of the machine between steps do not
//! become effects. Effects are given in **points of A**: `100 · (mean(B+S) − mean(B)) / mean(A)`,
//! signed so that positive moves B towards A's better value; the interval is the ratio interval of
//! `B+S` against `B` in that step, scaled by `mean(B)/mean(A)` (the scale's own uncertainty is left
//! out). The gap is `100 · (mean(B)/mean(A) − 1)`, in the same orientation (negative: B is worse).
//!
//! Cost: with `r` runs per probe (repetitions × thread counts), `n` candidates and `k` culprits the
//! search takes `3r` runs for the gap, `3r` per halving (at most about `k·⌈log₂(n/singles_max)⌉` of
//! them), `(g + 1)·r` per group of `g ≤ singles_max` tried one by one, each of these up to
//! `1 + extra_rounds` times, and `(k + 3)·r` to confirm; [`estimate_runs`] gives the worst case. A
//! step that would exceed the budget is not run: its groups are reported as unresolved, and the runs
//! for the confirmation are kept back while searching.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::stats::{self, CompareConfig, Comparison, Direction, Verdict};

/// One variable that can be tried on B: its name and both values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Variable name.
    pub name: String,
    /// A's value (what B is given).
    pub a: String,
    /// B's own value.
    pub b: String,
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
    /// B and A, and B with every candidate.
    Gap,
    /// B and the two halves of a group.
    Split,
    /// B and A, each culprit alone and all together.
    Confirm,
}

/// One small experiment of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1, 2, … in the order run.
    pub number: usize,
    /// Why it runs.
    pub purpose: Purpose,
    /// What it measures, B first.
    pub probes: Vec<Probe>,
}

/// The samples of one probe (one value per repetition), or why it could not be measured.
pub type ProbeResult = std::result::Result<Vec<f64>, String>;

/// Runs the steps of a search.
pub trait Measure {
    /// Runs `step` and returns one result per probe, in order. An `Err` stops the search (the store or
    /// the machine failed); a probe whose runs failed is an `Err` inside the vector.
    fn measure(&mut self, step: &Step, candidates: &[Candidate]) -> Result<Vec<ProbeResult>>;
}

/// Settings of [`search`].
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
    /// estimate beyond the noise band) is run again, its samples pooled with the first round's.
    pub extra_rounds: usize,
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
    /// B (baseline) against B+set (candidate), when both could be measured.
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
    /// Every group was resolved into culprits or joint groups.
    Explained,
    /// The budget ran out (or probes failed) before every group was resolved.
    Partial,
}

/// A step as run, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step.
    pub step: Step,
    /// Its probes' labels, in order.
    pub labels: Vec<String>,
    /// Runs it took.
    pub runs: usize,
}

/// Everything the search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The candidates searched.
    pub candidates: Vec<Candidate>,
    /// B against A.
    pub gap: Option<Gap>,
    /// B+every candidate against B.
    pub all: Option<Effect>,
    /// Single culprits, largest recovery first.
    pub culprits: Vec<Effect>,
    /// Groups that move B towards A only together.
    pub joint: Vec<Effect>,
    /// Culprits and joint groups together against B (confirmation step, more than one of them).
    pub together: Option<Effect>,
    /// Groups left unsplit when the budget ran out or a probe failed.
    pub unresolved: Vec<Vec<usize>>,
    /// Candidates shown not to move B towards A.
    pub cleared: Vec<usize>,
    /// Points of the gap not recovered by the culprits together (or by all candidates when there is no
    /// together measurement).
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

/// The label of a probe in experiments and reports: `A`, `B`, `B+all`, `B+sync_binlog`,
/// `B+x+y+z`, `B+x+4 more`.
pub fn probe_label(probe: &Probe, candidates: &[Candidate]) -> String {
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

/// Worst-case runs of a search over `n` candidates with `k` culprits (see the module docs): every
/// decisive step repeated `1 + cfg.extra_rounds` times, culprits spread so that the most groups must be
/// resolved.
pub fn estimate_runs(n: usize, k: usize, cfg: &SearchConfig) -> usize {
    if n == 0 {
        return 0;
    }
    let k = k.clamp(1, n);
    let rounds = 1 + cfg.extra_rounds;
    let search = if n == 1 { 0 } else { group_probes(n, k, cfg.singles_max) };
    let confirm = if cfg.confirm { confirm_probes(k) } else { 0 };
    cfg.runs_per_probe * (rounds * (3 + search) + confirm)
}

/// Most probes needed to resolve a group of `n` holding `k` culprits.
fn group_probes(n: usize, k: usize, singles_max: usize) -> usize {
    if k == 0 {
        return 0;
    }
    if n <= singles_max.max(2) {
        return n + 1;
    }
    let (n1, n2) = (n / 2, n - n / 2);
    (0..=k.min(n1))
        .filter(|k1| k - k1 <= n2)
        .map(|k1| 3 + group_probes(n1, k1, singles_max) + group_probes(n2, k - k1, singles_max))
        .max()
        .unwrap_or(3)
}

struct Search<'a> {
    cfg: &'a SearchConfig,
    candidates: &'a [Candidate],
    out: SearchOutcome,
}

/// Runs the search with `measure` over `candidates` (which must all be settable on B).
pub fn search(candidates: &[Candidate], cfg: &SearchConfig, measure: &mut dyn Measure) -> Result<SearchOutcome> {
    let mut s = Search {
        cfg,
        candidates,
        out: SearchOutcome {
            candidates: candidates.to_vec(),
            gap: None,
            all: None,
            culprits: vec![],
            joint: vec![],
            together: None,
            unresolved: vec![],
            cleared: vec![],
            unexplained_points: None,
            conclusion: Conclusion::Partial,
            steps: vec![],
            runs_used: 0,
            notes: vec![],
        },
    };
    let all: Vec<usize> = (0..candidates.len()).collect();
    if candidates.is_empty() {
        s.out.notes.push("no differing variable can be set on B: nothing to bisect".into());
    }
    let mut probes = vec![Probe::B, Probe::A];
    if !all.is_empty() {
        probes.push(Probe::Set(all.clone()));
    }
    if !s.fits(probes.len()) {
        s.out.notes.push(format!(
            "the budget of {} runs is below the {} runs of the first step; raise --max-runs",
            cfg.max_runs,
            probes.len() * cfg.runs_per_probe
        ));
        s.out.unresolved.push(all);
        return Ok(s.out);
    }
    // More rounds while B against A, or (with a gap) B+all against B, is unclear.
    let cmp = cfg.compare;
    let gap_unclear = move |r: &[ProbeResult]| match (&r[0], &r[1]) {
        (Ok(b), Ok(a)) => match stats::compare(a, b, stats::SampleLevel::Repetitions, &cmp) {
            Ok(g) if g.verdict == Verdict::NoSignificantChange => unclear(Some(g)),
            Ok(_) => r.get(2).is_some_and(|x| match x {
                Ok(x) => unclear(stats::compare(b, x, stats::SampleLevel::Repetitions, &cmp).ok()),
                Err(_) => false,
            }),
            Err(_) => false,
        },
        _ => false,
    };
    let results = s.run_rounds(Purpose::Gap, probes, 0, measure, &gap_unclear)?;
    let (b, a) = (&results[0], &results[1]);
    let (Ok(b), Ok(a)) = (b, a) else {
        let why = [b, a].iter().filter_map(|r| r.as_ref().err()).cloned().collect::<Vec<_>>().join("; ");
        s.out.notes.push(format!("A or B could not be measured: {why}"));
        s.out.unresolved.push(all);
        return Ok(s.out);
    };
    let gap = match gap(a, b, &cfg.compare) {
        Ok(g) => g,
        Err(e) => {
            s.out.notes.push(format!("no interval for the gap: {e}"));
            s.out.unresolved.push(all);
            return Ok(s.out);
        }
    };
    s.out.gap = Some(gap);
    let verdict = gap.comparison.verdict;
    if all.is_empty() {
        s.out.conclusion =
            if verdict == Verdict::NoSignificantChange { Conclusion::NoGap } else { Conclusion::NotConfig };
        return Ok(s.out);
    }
    let all_effect = s.effect(&all, s.out.steps.len(), b, &results[2], &gap);
    let all_toward = all_effect.toward_a;
    s.out.all = Some(all_effect);
    if verdict == Verdict::NoSignificantChange {
        s.out.conclusion = Conclusion::NoGap;
        return Ok(s.out);
    }
    if !all_toward {
        s.out.conclusion = Conclusion::NotConfig;
        return Ok(s.out);
    }
    let mut items: Vec<Effect> = Vec::new(); // culprits and joint groups, as found
    // Groups still to resolve, with the effect that put them there.
    let mut queue: VecDeque<(Vec<usize>, Effect)> = VecDeque::new();
    match s.out.all.clone() {
        Some(e) if all.len() == 1 => items.push(e),
        Some(e) => queue.push_back((all.clone(), e)),
        None => {}
    }
    let any_unclear = move |r: &[ProbeResult]| match &r[0] {
        Ok(b) => r[1..].iter().any(|x| match x {
            Ok(x) => unclear(stats::compare(b, x, stats::SampleLevel::Repetitions, &cmp).ok()),
            Err(_) => false,
        }),
        Err(_) => false,
    };
    while let Some((group, parent)) = queue.pop_front() {
        // Small groups are resolved in one step of singles; bigger ones are halved.
        let parts: Vec<Vec<usize>> = if group.len() <= cfg.singles_max.max(2) {
            group.iter().map(|&i| vec![i]).collect()
        } else {
            let mid = group.len() / 2;
            vec![group[..mid].to_vec(), group[mid..].to_vec()]
        };
        let reserve = if cfg.confirm { confirm_probes(items.len() + queue.len() + parts.len()) } else { 0 };
        if !s.fits(parts.len() + 1 + reserve) {
            s.out.unresolved.push(group);
            s.out.unresolved.extend(queue.drain(..).map(|(g, _)| g));
            s.out.notes.push(format!(
                "the budget of {} runs ran out before every group was resolved; raise --max-runs to resolve them",
                cfg.max_runs
            ));
            break;
        }
        let mut probes = vec![Probe::B];
        probes.extend(parts.iter().map(|p| Probe::Set(p.clone())));
        let reserve_after = reserve;
        let results = s.run_rounds(Purpose::Split, probes, reserve_after, measure, &any_unclear)?;
        let step = s.out.steps.len();
        let Ok(b) = &results[0] else {
            s.out.notes.push(format!("step {step}: B could not be measured; group left unresolved"));
            s.out.unresolved.push(group);
            continue;
        };
        let effects: Vec<Effect> =
            parts.iter().zip(&results[1..]).map(|(p, r)| s.effect(p, step, b, r, &gap)).collect();
        if effects.iter().all(|e| !e.toward_a) {
            if effects.iter().any(|e| e.error.is_some()) {
                s.out.unresolved.push(group);
            } else {
                // The group moved B towards A but none of its parts does alone.
                items.push(parent);
            }
            continue;
        }
        for (part, e) in parts.into_iter().zip(effects) {
            if let Some(err) = &e.error {
                let label = probe_label(&Probe::Set(part.clone()), candidates);
                s.out.notes.push(format!("step {step}: {label} could not be measured: {err}"));
                s.out.unresolved.push(part);
            } else if !e.toward_a {
                s.out.cleared.extend(part);
            } else if part.len() == 1 {
                items.push(e);
            } else {
                queue.push_back((part, e));
            }
        }
    }
    s.out.cleared.sort_unstable();
    s.confirm(items, gap, measure)?;
    Ok(s.out)
}

/// Whether a comparison is unclear: no significant change although the point estimate is beyond the
/// noise band (more repetitions may decide it).
fn unclear(c: Option<Comparison>) -> bool {
    c.is_some_and(|c| c.verdict == Verdict::NoSignificantChange && c.change.abs() > c.noise_band)
}

fn confirm_probes(items: usize) -> usize {
    if items == 0 { 0 } else { 2 + items + usize::from(items > 1) }
}

fn order(x: f64, y: f64) -> (f64, f64) {
    if x <= y { (x, y) } else { (y, x) }
}

fn sign(cfg: &CompareConfig) -> f64 {
    if cfg.direction == Direction::HigherIsBetter { 1.0 } else { -1.0 }
}

/// The gap of B (candidate) against A (baseline) from their samples.
pub fn gap(a: &[f64], b: &[f64], cfg: &CompareConfig) -> Result<Gap> {
    let c = stats::compare(a, b, stats::SampleLevel::Repetitions, cfg)?;
    let pts = |r: f64| sign(cfg) * (r - 1.0) * 100.0;
    let (lo, hi) = order(pts(c.ci.lo), pts(c.ci.hi));
    Ok(Gap { comparison: c, points: pts(c.ci.ratio), points_lo: lo, points_hi: hi })
}

/// The effect of setting `set` (called `names`) on B, from B's samples and those of B+set in one step,
/// in points of A by `gap` of the same (or the first) step.
pub fn effect(
    set: &[usize],
    names: Vec<String>,
    step: usize,
    b: &[f64],
    with: &ProbeResult,
    gap: &Gap,
    cfg: &CompareConfig,
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
    };
    let samples = match with {
        Ok(x) => x,
        Err(why) => {
            e.error = Some(why.clone());
            return e;
        }
    };
    match stats::compare(b, samples, stats::SampleLevel::Repetitions, cfg) {
        Ok(c) => {
            let scale = gap.comparison.ci.ratio;
            let pts = |r: f64| sign(cfg) * (r - 1.0) * scale * 100.0;
            let (lo, hi) = order(pts(c.ci.lo), pts(c.ci.hi));
            e.points = Some(pts(c.ci.ratio));
            e.points_lo = Some(lo);
            e.points_hi = Some(hi);
            e.toward_a = matches!(
                (gap.comparison.verdict, c.verdict),
                (Verdict::Slower, Verdict::Faster) | (Verdict::Faster, Verdict::Slower)
            );
            e.comparison = Some(c);
        }
        Err(err) => e.error = Some(format!("no interval: {err}")),
    }
    e
}

impl Search<'_> {
    fn fits(&self, probes: usize) -> bool {
        self.out.runs_used + probes * self.cfg.runs_per_probe <= self.cfg.max_runs
    }

    fn names(&self, set: &[usize]) -> Vec<String> {
        set.iter().map(|&i| self.candidates[i].name.clone()).collect()
    }

    /// Runs a step, and again (up to `extra_rounds` times, budget and `reserve` permitting) while
    /// `unclear` says its results do not decide; the samples of the rounds are pooled.
    fn run_rounds(
        &mut self,
        purpose: Purpose,
        probes: Vec<Probe>,
        reserve: usize,
        measure: &mut dyn Measure,
        unclear: &dyn Fn(&[ProbeResult]) -> bool,
    ) -> Result<Vec<ProbeResult>> {
        let n = probes.len();
        let mut results = self.run(purpose, probes.clone(), measure)?;
        for _ in 0..self.cfg.extra_rounds {
            if !unclear(&results) || !self.fits(n + reserve) {
                break;
            }
            let more = self.run(purpose, probes.clone(), measure)?;
            for (r, m) in results.iter_mut().zip(more) {
                if let (Ok(x), Ok(y)) = (r.as_mut(), m) {
                    x.extend(y);
                }
            }
        }
        Ok(results)
    }

    fn run(&mut self, purpose: Purpose, probes: Vec<Probe>, measure: &mut dyn Measure) -> Result<Vec<ProbeResult>> {
        let step = Step { number: self.out.steps.len() + 1, purpose, probes };
        let results = measure.measure(&step, self.candidates)?;
        let runs = step.probes.len() * self.cfg.runs_per_probe;
        self.out.runs_used += runs;
        let labels = step.probes.iter().map(|p| probe_label(p, self.candidates)).collect();
        self.out.steps.push(StepRecord { step, labels, runs });
        Ok(results)
    }

    fn effect(&self, set: &[usize], step: usize, b: &[f64], with: &ProbeResult, gap: &Gap) -> Effect {
        effect(set, self.names(set), step, b, with, gap, &self.cfg.compare)
    }

    fn confirm(&mut self, mut items: Vec<Effect>, mut gap: Gap, measure: &mut dyn Measure) -> Result<()> {
        let by_points = |x: &Effect, y: &Effect| y.points.unwrap_or(f64::MIN).total_cmp(&x.points.unwrap_or(f64::MIN));
        items.sort_by(by_points);
        let mut units: Vec<Vec<usize>> = items.iter().map(|e| e.set.clone()).collect();
        units.extend(self.out.unresolved.iter().cloned());
        let n = units.len();
        if self.cfg.confirm && n > 0 {
            if self.fits(confirm_probes(n)) {
                let mut probes = vec![Probe::B, Probe::A];
                probes.extend(units.iter().map(|u| Probe::Set(u.clone())));
                let mut union: Vec<usize> = units.iter().flatten().copied().collect();
                union.sort_unstable();
                if n > 1 {
                    probes.push(Probe::Set(union.clone()));
                }
                let results = self.run(Purpose::Confirm, probes, measure)?;
                let step = self.out.steps.len();
                if let (Ok(b), Ok(a)) = (&results[0], &results[1]) {
                    // The final numbers all come from this one experiment.
                    if let Ok(g) = self::gap(a, b, &self.cfg.compare) {
                        gap = g;
                        self.out.gap = Some(g);
                    }
                    let fresh: Vec<Effect> =
                        units.iter().enumerate().map(|(i, u)| self.effect(u, step, b, &results[2 + i], &gap)).collect();
                    let (now, rest) = fresh.split_at(items.len());
                    items = now.to_vec();
                    for e in items.iter().filter(|e| !e.toward_a) {
                        self.out.notes.push(format!(
                            "{} did not move B significantly towards A in the confirmation step",
                            e.names.join(" + ")
                        ));
                    }
                    for (u, e) in self.out.unresolved.clone().iter().zip(rest) {
                        self.out.notes.push(format!(
                            "unresolved group {} recovers {} points together",
                            self.names(u).join(", "),
                            e.points.map(|p| format!("{p:.1}")).unwrap_or_else(|| "—".into())
                        ));
                    }
                    if n > 1 {
                        self.out.together = Some(self.effect(&union, step, b, &results[2 + n], &gap));
                    }
                } else {
                    self.out.notes.push(
                        "the confirmation step could not measure A or B; effects are from the bisection steps".into(),
                    );
                }
            } else {
                self.out.notes.push(format!(
                    "the budget left no room for the confirmation step ({} runs); effects are from the bisection steps",
                    confirm_probes(n) * self.cfg.runs_per_probe
                ));
            }
        }
        items.sort_by(by_points);
        let (culprits, joint): (Vec<Effect>, Vec<Effect>) = items.into_iter().partition(|e| e.set.len() == 1);
        self.out.culprits = culprits;
        self.out.joint = joint;
        let gap_points = self.out.gap.map(|g| g.points).unwrap_or(0.0);
        let recovered = match (&self.out.together, self.out.culprits.len() + self.out.joint.len()) {
            (Some(t), _) => t.points,
            (None, 1) => self.out.culprits.first().or(self.out.joint.first()).and_then(|e| e.points),
            _ => self.out.all.as_ref().and_then(|e| e.points),
        };
        self.out.unexplained_points = recovered.map(|r| -gap_points - r);
        self.out.conclusion = if self.out.unresolved.is_empty() { Conclusion::Explained } else { Conclusion::Partial };
        Ok(())
    }
}

#[cfg(test)]
#[path = "bisect_tests.rs"]
mod tests;
