//! Config bisection: which of A's values, set on B, account for the gap between B and A, and in
//! which order.
//!
//! The search is separate from servers: it asks a [`Measure`] to run **steps**, each a small
//! experiment of a few **probes** (A itself, B itself, or B with a subset of A's values), and
//! decides from the per-repetition samples it gets back with [`crate::stats::compare()`].
//!
//! The search runs in **rounds**. Round 1 starts from B; every later round starts from B with the
//! findings of the earlier rounds applied (the round's **base**) and looks for what they leave of the
//! gap (values that only matter once others are set, or that stand in for each other). Each round:
//!
//! 1. **Gap** — probes base, A and base+rest (every candidate not yet found). If the base is not
//!    significantly different from A the gap is explained (round 1: there is no gap); if base+rest
//!    does not move the base significantly towards A, the rest of the gap is not in the configuration
//!    (round 1: the gap is not in the configuration at all).
//! 2. **Resolve** — the rest, which moves the base towards A, is resolved into findings by leaving
//!    parts out of the **full set** (base+rest): a group of up to `singles_max` candidates in one step
//!    that probes the full set and the full set without each candidate; a bigger group is halved
//!    (candidates in name order) and one step probes the full set without each half. A part whose
//!    absence costs significantly (the full set moves the full set without it significantly towards
//!    A) is resolved in turn; a part that does not is cleared for this round; a single candidate whose
//!    absence costs is a **culprit**. When leaving out any one part costs nothing although the group
//!    matters, the parts stand in for each other and the group is a finding of its own that acts
//!    **together**. Groups are resolved breadth-first; the round's findings, largest effect first,
//!    join the base.
//!
//!    Leaving out is used rather than adding one value at a time because costs add up: when B pays for
//!    two fsyncs per commit, removing one of them from B helps little, but putting either back into
//!    the full set hurts a lot, so the contrast the statistics must see is much larger.
//!
//! **Confirm** — one step probes B, A, each finding alone, and the cumulative sets (first finding,
//! first two, …, all), so that the final attribution comes from one experiment under the same
//! conditions: what each finding recovers **on top of the earlier ones** (in the order found), what
//! it recovers **alone**, and what all recover together.
//!
//! The probes of a step whose comparisons are **open** are run again, with the step's control, while
//! the budget allows, and the samples of the rounds are pooled; a probe is always compared with the
//! control's samples of the rounds it ran in, and the decided probes are not run again. With
//! [`SearchConfig::sequential`] (what `versus explain` uses for `--extra-rounds` and
//! `--until`/`--max-repetitions`) every comparison of a search step is the repeated interval of a
//! group-sequential design, so the looks after each round do not raise the false-alarm rate; without
//! it, up to `extra_rounds` rounds are pooled with the fixed-sample interval (uncorrected: it raises
//! the false-positive rate, see the simulation in `adaptive_tests.rs`).
//!
//! Every step re-measures its base as its own control, so slow drifts of the machine between steps do
//! not become effects. Effects are given in **points of A**: `100 · (mean(X+S) − mean(X)) / mean(A)`
//! for a set S on top of X, signed so that positive moves towards A's better value; the interval is the
//! ratio interval of `X+S` against `X` in that step, scaled by `mean(X)/mean(A)` (the scale's own
//! uncertainty is left out). The gap is `100 · (mean(B)/mean(A) − 1)`, in the same orientation
//! (negative: B is worse).
//!
//! Cost: with `r` runs per probe (repetitions × thread counts), `n` candidates and `k` findings, every
//! round takes `3r` runs for its gap step, `3r` per halving, `(g + 1)·r` per group of
//! `g ≤ singles_max` tried one by one, each of these up to `1 + extra_rounds` times; the confirmation
//! takes `(2k + 1)·r`. [`estimate_runs`] gives the worst case (one finding per round). A step that
//! would exceed the budget is not run: its groups are reported as unresolved, and the runs for the
//! confirmation of the findings the search can at least end with (one per group still to resolve)
//! are kept back while searching; when more are found than that room holds, the confirmation leaves
//! out the findings alone after the first (B, A and the cumulative sets still give every increment).

mod cost;
mod model;

use std::collections::VecDeque;

use crate::error::Result;
use crate::stats::Verdict;
use crate::stats::sequential::SequentialPlan;

use cost::confirm_probes;
pub use cost::estimate_runs;
pub use model::{
    BisectStep, Conclusion, Effect, Finding, Gap, Judge, Measure, Probe, ProbeResult, Purpose, Round, SearchConfig,
    SearchOutcome, Sequential, StepRecord, Suspect, Transfer, effect, gap, gap_with, points_of_a, probe_label, unclear,
};

struct Search<'a> {
    cfg: &'a SearchConfig,
    candidates: &'a [Suspect],
    out: SearchOutcome,
    /// For each candidate, the group it was last cleared with (itself alone, a half, or the whole rest).
    cleared_in: Vec<Option<Vec<usize>>>,
    /// The boundaries of adaptive steps.
    plan: Option<SequentialPlan>,
}

fn base_probe(base: &[usize]) -> Probe {
    if base.is_empty() { Probe::B } else { Probe::Set(base.to_vec()) }
}

fn minus(a: &[usize], b: &[usize]) -> Vec<usize> {
    a.iter().copied().filter(|x| !b.contains(x)).collect()
}

fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut u: Vec<usize> = a.iter().chain(b).copied().collect();
    u.sort_unstable();
    u.dedup();
    u
}

/// Runs the search with `measure` over `candidates` (which must all be settable on B).
pub fn search(candidates: &[Suspect], cfg: &SearchConfig, measure: &mut dyn Measure) -> Result<SearchOutcome> {
    let mut s = Search {
        cfg,
        candidates,
        out: SearchOutcome {
            candidates: candidates.to_vec(),
            gap: None,
            rounds: vec![],
            findings: vec![],
            together: None,
            unresolved: vec![],
            cleared: vec![],
            cleared_with: vec![],
            unexplained_points: None,
            conclusion: Conclusion::Partial,
            steps: vec![],
            runs_used: 0,
            notes: vec![],
        },
        cleared_in: vec![None; candidates.len()],
        plan: cfg.sequential.map(|q| q.design.plan()),
    };
    if candidates.is_empty() {
        s.out.notes.push("no differing variable can be set on B: nothing to bisect".into());
    }
    let mut base: Vec<usize> = Vec::new();
    let mut rest: Vec<usize> = (0..candidates.len()).collect();
    let plan = s.plan.clone();
    let judge = Judge { cfg: &cfg.compare, seq: plan.as_ref(), until: cfg.sequential.and_then(|q| q.until) };
    // Which probes of a gap step to measure again: A while the base against A is open, and (unless
    // there is clearly no gap) the full set while it is open against the base.
    let gap_unclear = move |c: &[ProbeResult], r: &[ProbeResult]| -> Vec<usize> {
        let (Ok(b), Ok(a)) = (&c[1], &r[1]) else { return vec![] };
        let Ok(g) = judge.compare(a, b) else { return vec![] };
        let mut again = Vec::new();
        let gap_open = judge.open(a, b);
        if gap_open {
            again.push(1);
        }
        let no_gap = g.verdict == Verdict::NoSignificantChange && !gap_open;
        if let (false, Some(Ok(b)), Some(Ok(x))) = (no_gap, c.get(2), r.get(2))
            && judge.open(b, x)
        {
            again.push(2);
        }
        again
    };
    // Which probes of a split step to measure again: those open against the step's control.
    let any_unclear = move |c: &[ProbeResult], r: &[ProbeResult]| -> Vec<usize> {
        (1..r.len())
            .filter(|&i| match (&c[i], &r[i]) {
                (Ok(b), Ok(x)) => judge.open(b, x),
                _ => false,
            })
            .collect()
    };
    let mut number = 0;
    loop {
        number += 1;
        let first = number == 1;
        if !first && rest.is_empty() {
            // Every candidate is a finding: nothing more to try.
            s.out.conclusion = Conclusion::Explained;
            break;
        }
        let mut probes = vec![base_probe(&base), Probe::A];
        if !rest.is_empty() {
            probes.push(Probe::Set(union(&base, &rest)));
        }
        let reserve = if cfg.confirm && !first { confirm_probes(s.out.findings.len()) } else { 0 };
        if !s.fits(probes.len() + reserve) {
            s.out.notes.push(format!(
                "the budget of {} runs ran out before round {number}; raise --max-runs to search further",
                cfg.max_runs
            ));
            if !rest.is_empty() {
                s.out.unresolved.push(rest.clone());
            }
            break;
        }
        let (controls, results) = s.run_rounds(Purpose::Gap, probes, reserve, measure, &gap_unclear)?;
        let step = s.out.steps.len();
        let (Ok(b), Ok(a)) = (&controls[1], &results[1]) else {
            let why: Vec<String> = results[..2].iter().filter_map(|r| r.as_ref().err()).cloned().collect();
            s.out.notes.push(format!("step {step}: the base or A could not be measured: {}", why.join("; ")));
            s.out.unresolved.push(rest.clone());
            break;
        };
        let g = match gap_with(a, b, judge) {
            Ok(g) => g,
            Err(e) => {
                s.out.notes.push(format!("step {step}: no interval for the gap: {e}"));
                s.out.unresolved.push(rest.clone());
                break;
            }
        };
        if first {
            s.out.gap = Some(g);
        }
        if rest.is_empty() {
            s.out.conclusion = if g.comparison.verdict == Verdict::NoSignificantChange {
                Conclusion::NoGap
            } else {
                Conclusion::NotConfig
            };
            break;
        }
        let rest_effect = match &controls[2] {
            Ok(b) => s.effect(&rest, step, b, &results[2], &g),
            Err(e) => s.effect(&rest, step, b, &Err(e.clone()), &g),
        };
        s.out.rounds.push(Round { number, base: base.clone(), gap: g, rest: rest_effect.clone() });
        if g.comparison.verdict == Verdict::NoSignificantChange {
            s.out.conclusion = if first { Conclusion::NoGap } else { Conclusion::Explained };
            break;
        }
        if !rest_effect.toward_a {
            // The rest, all set at once, does not move the base: cleared as one group.
            s.clear(&rest);
            s.out.conclusion = if first { Conclusion::NotConfig } else { Conclusion::Explained };
            if !first {
                s.out.notes.push(format!(
                    "{:.1} points of the gap remain with the findings applied, and the other variables do not move B \
                     further towards A",
                    -g.points
                ));
            }
            break;
        }
        let found = s.resolve(number, &base, &rest, rest_effect, &g, measure, &any_unclear)?;
        if found.is_empty() {
            break;
        }
        for f in found {
            base = union(&base, &f.set);
            rest.retain(|i| !f.set.contains(i));
            s.out.findings.push(f);
        }
        if !s.out.unresolved.is_empty() {
            break;
        }
    }
    // Without a significant gap nothing was searched for, so nothing is cleared.
    if s.out.conclusion != Conclusion::NoGap {
        s.out.cleared = rest.iter().copied().filter(|i| !s.out.unresolved.iter().any(|u| u.contains(i))).collect();
    }
    s.out.cleared_with = s.cleared_with();
    if !s.out.unresolved.is_empty() {
        s.out.conclusion = Conclusion::Partial;
    }
    s.confirm(measure)?;
    Ok(s.out)
}

/// Which probes of a step (indices ≥ 1) to measure again, from each probe's control samples and the
/// probes' samples.
type Unclear<'a> = dyn Fn(&[ProbeResult], &[ProbeResult]) -> Vec<usize> + 'a;

impl Search<'_> {
    /// Records that `group` was cleared as one: leaving it out (or setting it all) cost nothing.
    fn clear(&mut self, group: &[usize]) {
        for &i in group {
            self.cleared_in[i] = Some(group.to_vec());
        }
    }

    /// For each cleared candidate (in the order of `cleared`), the group it was last cleared with.
    fn cleared_with(&self) -> Vec<Vec<usize>> {
        self.out.cleared.iter().map(|&i| self.cleared_in[i].clone().unwrap_or_else(|| vec![i])).collect()
    }

    fn fits(&self, probes: usize) -> bool {
        self.fits_runs(probes * self.cfg.runs_per_probe)
    }

    fn fits_runs(&self, runs: usize) -> bool {
        self.out.runs_used + runs <= self.cfg.max_runs
    }

    fn names(&self, set: &[usize]) -> Vec<String> {
        set.iter().map(|&i| self.candidates[i].name.clone()).collect()
    }

    /// Runs a step, and again (up to `extra_rounds` times, or with [`Sequential`] in rounds of its
    /// `batch` up to its `max` repetitions; budget and `reserve` permitting) for the probes that
    /// `unclear` says do not decide yet, each with the step's control (probe 0); the samples of the
    /// rounds are pooled. Returns, for each probe, the control's samples of the rounds
    /// that probe ran in (what it is compared with: a probe and its control always come from the same
    /// rounds), and the probes' pooled samples.
    fn run_rounds(
        &mut self,
        purpose: Purpose,
        probes: Vec<Probe>,
        reserve: usize,
        measure: &mut dyn Measure,
        unclear: &Unclear<'_>,
    ) -> Result<(Vec<ProbeResult>, Vec<ProbeResult>)> {
        let mut results = self.run(purpose, probes.clone(), None, measure)?;
        let mut controls: Vec<ProbeResult> = vec![results[0].clone(); results.len()];
        let (rounds, batch, runs_per_probe) = match &self.cfg.sequential {
            Some(q) => {
                let batch = q.batch.max(1);
                ((q.design.max - q.design.min) / batch, Some(batch), batch * q.runs_per_repetition)
            }
            None => (self.cfg.extra_rounds, None, self.cfg.runs_per_probe),
        };
        for _ in 0..rounds {
            let again: Vec<usize> = unclear(&controls, &results).into_iter().filter(|&i| i > 0).collect();
            let runs = (again.len() + 1) * runs_per_probe + reserve * self.cfg.runs_per_probe;
            if again.is_empty() || !self.fits_runs(runs) {
                break;
            }
            let mut subset = vec![probes[0].clone()];
            subset.extend(again.iter().map(|&i| probes[i].clone()));
            let more = self.run(purpose, subset, batch, measure)?;
            let pool = |r: &mut ProbeResult, m: &ProbeResult| {
                if let (Ok(x), Ok(y)) = (r.as_mut(), m) {
                    x.extend(y.iter().copied());
                }
            };
            pool(&mut results[0], &more[0]);
            pool(&mut controls[0], &more[0]);
            for (&i, m) in again.iter().zip(&more[1..]) {
                pool(&mut results[i], m);
                pool(&mut controls[i], &more[0]);
            }
        }
        Ok((controls, results))
    }

    /// Runs one step of `probes`, each `repetitions` times (`None`: the search's repetitions).
    fn run(
        &mut self,
        purpose: Purpose,
        probes: Vec<Probe>,
        repetitions: Option<usize>,
        measure: &mut dyn Measure,
    ) -> Result<Vec<ProbeResult>> {
        let step = BisectStep {
            number: self.out.steps.len() + 1,
            purpose,
            probes,
            repetitions: repetitions.map(|r| r as u32),
        };
        let results = measure.measure(&step, self.candidates)?;
        let per_probe = match (repetitions, &self.cfg.sequential) {
            (Some(r), Some(q)) => r * q.runs_per_repetition,
            _ => self.cfg.runs_per_probe,
        };
        let runs = step.probes.len() * per_probe;
        self.out.runs_used += runs;
        let labels = step.probes.iter().map(|p| probe_label(p, self.candidates)).collect();
        self.out.steps.push(StepRecord { step, labels, runs });
        Ok(results)
    }

    /// The effect of `set` in a search step (the repeated interval of adaptive steps).
    fn effect(&self, set: &[usize], step: usize, b: &[f64], with: &ProbeResult, gap: &Gap) -> Effect {
        let until = self.cfg.sequential.and_then(|q| q.until);
        let judge = Judge { cfg: &self.cfg.compare, seq: self.plan.as_ref(), until };
        effect(set, self.names(set), step, b, with, gap, judge)
    }

    /// The effect of `set` in the confirmation step (run once: the fixed-sample interval).
    fn confirmed(&self, set: &[usize], step: usize, b: &[f64], with: &ProbeResult, gap: &Gap) -> Effect {
        effect(set, self.names(set), step, b, with, gap, Judge::fixed(&self.cfg.compare))
    }

    /// Resolves `rest` (which moves `base` towards A by `parent`) into findings, largest first, by
    /// leaving parts out of the full set `base ∪ rest`.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &mut self,
        round: usize,
        base: &[usize],
        rest: &[usize],
        parent: Effect,
        g: &Gap,
        measure: &mut dyn Measure,
        unclear: &Unclear<'_>,
    ) -> Result<Vec<Finding>> {
        let cfg = self.cfg;
        let finding = |set: Vec<usize>, names: Vec<String>, found: Effect| Finding {
            set,
            names,
            round,
            found,
            increment: None,
            alone: None,
            parts: vec![],
        };
        let mut found: Vec<Finding> = Vec::new();
        if rest.len() == 1 {
            found.push(finding(rest.to_vec(), self.names(rest), parent));
            return Ok(found);
        }
        let top = union(base, rest);
        let mut queue: VecDeque<(Vec<usize>, Effect)> = VecDeque::from([(rest.to_vec(), parent)]);
        while let Some((group, parent)) = queue.pop_front() {
            // Small groups are resolved in one step of singles; bigger ones are halved.
            let parts: Vec<Vec<usize>> = if group.len() <= cfg.singles_max.max(2) {
                group.iter().map(|&i| vec![i]).collect()
            } else {
                let mid = group.len() / 2;
                vec![group[..mid].to_vec(), group[mid..].to_vec()]
            };
            // Keep room for the smallest confirmation this can end in: every group still to resolve
            // (this one and those queued) that matters yields at least one finding. Reserving for the
            // most findings it could yield (every part) stopped searches that had room to go on; when
            // more are found than reserved for, the confirmation shrinks to fit (see `confirm`).
            let k = self.out.findings.len() + found.len() + queue.len() + 1;
            let reserve = if cfg.confirm { confirm_probes(k) } else { 0 };
            if !self.fits(parts.len() + 1 + reserve) {
                self.out.unresolved.push(group);
                self.out.unresolved.extend(queue.drain(..).map(|(g, _)| g));
                self.out.notes.push(format!(
                    "{} of the {} runs of --max-runs are left: too few for the next step ({} probes) and the \
                     confirmation it must leave room for ({} probes), {} runs each, so some groups are unresolved; \
                     raise --max-runs to resolve them",
                    cfg.max_runs.saturating_sub(self.out.runs_used),
                    cfg.max_runs,
                    parts.len() + 1,
                    reserve,
                    cfg.runs_per_probe
                ));
                break;
            }
            // Leave one part out of the full set: what the full set loses without it is the part's share.
            let mut probes = vec![Probe::Set(top.clone())];
            probes.extend(parts.iter().map(|p| base_probe(&minus(&top, p))));
            let (controls, results) = self.run_rounds(Purpose::Split, probes, reserve, measure, unclear)?;
            let step = self.out.steps.len();
            let Ok(t) = &results[0] else {
                self.out.notes.push(format!("step {step}: the full set could not be measured; group left unresolved"));
                self.out.unresolved.push(group);
                continue;
            };
            // Each part against the full set of the rounds it ran in.
            let effects: Vec<Effect> = parts
                .iter()
                .zip(results[1..].iter().zip(&controls[1..]))
                .map(|(p, (r, full))| match r {
                    Ok(without) => self.effect(p, step, without, full, g),
                    Err(e) => Effect { error: Some(e.clone()), ..self.effect(p, step, t, &Err(e.clone()), g) },
                })
                .collect();
            if effects.iter().all(|e| !e.toward_a) {
                if effects.iter().any(|e| e.error.is_some()) {
                    self.out.unresolved.push(group);
                } else {
                    // The group matters, but leaving out any one part loses nothing: the parts can
                    // stand in for each other.
                    let names = self.names(&group);
                    found.push(Finding { parts: effects, ..finding(group, names, parent) });
                }
                continue;
            }
            for (part, e) in parts.into_iter().zip(effects) {
                if let Some(err) = &e.error {
                    let without = self.names(&part).join(", ");
                    self.out
                        .notes
                        .push(format!("step {step}: the full set without {without} could not be measured: {err}"));
                    self.out.unresolved.push(part);
                } else if !e.toward_a {
                    // Cleared for this round; a later round may find it once others are set.
                    self.clear(&part);
                } else if part.len() == 1 {
                    let names = self.names(&part);
                    found.push(finding(part, names, e));
                } else {
                    queue.push_back((part, e));
                }
            }
        }
        found.sort_by(|x, y| y.found.points.unwrap_or(f64::MIN).total_cmp(&x.found.points.unwrap_or(f64::MIN)));
        Ok(found)
    }

    fn confirm(&mut self, measure: &mut dyn Measure) -> Result<()> {
        let k = self.out.findings.len();
        let first_gap = self.out.gap;
        // The full confirmation measures each finding alone; when the budget has no room for that, B,
        // A and the cumulative sets still give every increment and the total (the search keeps room
        // for the confirmation of the findings it knew of, not of all it may find).
        let full = self.fits(confirm_probes(k));
        if self.cfg.confirm && k > 0 {
            if full || self.fits(2 + k) {
                let units: Vec<Vec<usize>> = self.out.findings.iter().map(|f| f.set.clone()).collect();
                let mut prefixes: Vec<Vec<usize>> = Vec::new();
                let mut acc: Vec<usize> = Vec::new();
                for u in &units {
                    acc = union(&acc, u);
                    prefixes.push(acc.clone());
                }
                // Measured alone: every finding, or only the first (its cumulative set).
                let alone_n = if full { k } else { 1 };
                let mut probes = vec![Probe::B, Probe::A];
                probes.extend(units[..alone_n].iter().map(|u| Probe::Set(u.clone())));
                probes.extend(prefixes[1..].iter().map(|p| Probe::Set(p.clone())));
                if !full {
                    self.out.notes.push(format!(
                        "the budget left room for a confirmation of B, A and the findings cumulatively ({} runs), \
                         not of each finding alone ({} runs): 'alone' is measured for the first finding only",
                        (2 + k) * self.cfg.runs_per_probe,
                        confirm_probes(k) * self.cfg.runs_per_probe
                    ));
                }
                let results = self.run(Purpose::Confirm, probes, None, measure)?;
                let step = self.out.steps.len();
                match (&results[0], &results[1]) {
                    (Ok(b), Ok(a)) => match gap(a, b, &self.cfg.compare) {
                        Ok(g) => {
                            // The final numbers all come from this one experiment.
                            self.out.gap = Some(g);
                            let prefix_result =
                                |i: usize| if i == 0 { &results[2] } else { &results[2 + alone_n + i - 1] };
                            for i in 0..k {
                                let alone =
                                    (i < alone_n).then(|| self.confirmed(&units[i], step, b, &results[2 + i], &g));
                                let increment = if i == 0 {
                                    self.confirmed(&units[0], step, b, &results[2], &g)
                                } else {
                                    match prefix_result(i - 1) {
                                        Ok(before) => self.confirmed(&units[i], step, before, prefix_result(i), &g),
                                        Err(e) => Effect {
                                            error: Some(e.clone()),
                                            ..self.confirmed(&units[i], step, b, &Err(e.clone()), &g)
                                        },
                                    }
                                };
                                if !increment.toward_a {
                                    self.out.notes.push(format!(
                                        "{} did not move B significantly further towards A in the confirmation step",
                                        self.out.findings[i].names.join(" + ")
                                    ));
                                }
                                self.out.findings[i].alone = alone;
                                self.out.findings[i].increment = Some(increment);
                            }
                            if k > 1 {
                                self.out.together =
                                    Some(self.confirmed(&prefixes[k - 1], step, b, prefix_result(k - 1), &g));
                            }
                        }
                        Err(e) => {
                            self.out.notes.push(format!("the confirmation step has no interval for the gap: {e}"))
                        }
                    },
                    _ => self.out.notes.push(
                        "the confirmation step could not measure A or B; effects are from the search steps".into(),
                    ),
                }
            } else {
                self.out.notes.push(format!(
                    "the budget left no room for the confirmation step ({} runs); effects are from the search steps",
                    (2 + k) * self.cfg.runs_per_probe
                ));
            }
        }
        let gap_points = self.out.gap.or(first_gap).map(|g| g.points);
        let recovered = match (&self.out.together, k) {
            (Some(t), _) => t.points,
            (None, 1) => self.out.findings[0].attributed().points,
            // Without a confirmation, the findings' effects in their rounds add up.
            (None, _) if k > 1 => self.out.findings.iter().map(|f| f.found.points).sum::<Option<f64>>(),
            _ => None,
        };
        // In the gap's sign: a gap of −22.6 of which 10.6 is recovered leaves −12.0 unexplained.
        self.out.unexplained_points = gap_points.zip(recovered).map(|(g, r)| g + r.copysign(-g));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
