//! Successive halving, the attribution (explain's search, leaving one out) and the confirmation steps of
//! [`super::search`].

use std::time::Duration;

use super::groups::{self, Split};
use super::{
    Bench, Conclusion, Config, ConfigResult, ConfirmRow, Confirmation, Contribution, Fate, Group, Phase, Screened,
    Search, Tier, Trial, contribution, could_detect, describe, gain, gain_lo, left_open, no_difference, union,
};
use crate::advise::rules::Area;
use crate::error::Result;
use crate::explain::bisect::{self, BisectStep, Measure, Probe, ProbeResult, SearchOutcome};
use crate::stats::power::TARGET_EFFECT;
use crate::stats::{self, CompareConfig, SampleLevel, Verdict};

/// The fate text of a value the attribution could not resolve within the budget.
pub(super) const UNRESOLVED: &str = "not resolved within the budget";

/// At most this many times the asked repetitions in the confirmation, when the budget leaves room.
const CONFIRM_STRETCH: u32 = 4;

/// How many extra screening rounds an unclear group gets at most (the budget usually ends them first).
const RESCREENS: usize = 8;

/// A screened group's values over the rounds it ran in, with the current config's values from those
/// rounds and only those: a group is judged against the runs it was interleaved with, so a round that
/// catches the host in a slow spell moves neither the groups it did not measure nor their verdicts (a
/// group decided in one round is not reopened by another round's current config).
pub(super) struct Pooled {
    /// The current config's values from the group's rounds.
    pub base: Vec<f64>,
    /// The group's values (current + group).
    pub values: Vec<f64>,
}

impl Search<'_> {
    /// Screens again, with the same repetitions, the groups whose screening could neither show an
    /// effect nor exclude one worth having (no significant change, a gain by the point estimate, and the
    /// interval's upper end beyond the noise band and [`TARGET_EFFECT`]), pooling the new values with the earlier ones, while the budget leaves room for
    /// the round and an attribution probe after it (at most [`RESCREENS`] rounds). Unused budget goes
    /// to deciding these groups instead of calling them "no effect" on too few values; those the budget
    /// leaves open are recorded as [`super::Undecided`], with the repetitions that would decide them.
    pub(super) fn rescreen(
        &mut self,
        groups: &[(Area, Vec<usize>)],
        pooled: &mut [std::result::Result<Pooled, String>],
        bench: &mut dyn Bench,
    ) -> Result<()> {
        let reps = self.screen_reps;
        for _ in 0..RESCREENS {
            let unclear = self.unclear(pooled);
            if unclear.is_empty() {
                return Ok(());
            }
            let need = bench.cost(1 + unclear.len(), reps) + bench.cost(2, self.s.attribution_repetitions);
            if need > self.left(bench) {
                self.record_undecided(groups, pooled, &unclear);
                self.out.notes.push(format!(
                    "{} screened group(s) stayed unclear (faster, but not significantly, and a \
                     worthwhile gain not excluded); another screening round and an attribution probe need about {} s, {} s are left",
                    unclear.len(),
                    need.as_secs(),
                    self.left(bench).as_secs()
                ));
                return Ok(());
            }
            let mut configs = vec![Config::on_top("current", vec![])];
            configs.extend(
                unclear
                    .iter()
                    .map(|&k| Config::on_top(format!("current+{}", groups[k].0.label()), groups[k].1.clone())),
            );
            let results = self.run(Phase::Screen, configs, reps, bench)?;
            let number = self.out.steps.len();
            self.out.notes.push(format!(
                "step {number} screened {} unclear group(s) again ({}), pooled with the earlier screening",
                unclear.len(),
                unclear.iter().map(|&k| groups[k].0.label()).collect::<Vec<_>>().join(", ")
            ));
            let Ok(base) = &results[0] else { return Ok(()) };
            for (&k, r) in unclear.iter().zip(&results[1..]) {
                // A config the round left short (its time limit) keeps its earlier values.
                if let (Ok(x), Ok(p)) = (r, &mut pooled[k]) {
                    p.values.extend_from_slice(&x.combined);
                    p.base.extend_from_slice(&base.combined);
                }
            }
        }
        let still = self.unclear(pooled);
        self.record_undecided(groups, pooled, &still);
        Ok(())
    }

    /// The groups whose pooled screening is unclear: no significant change, a gain by the point
    /// estimate, and the interval's upper end beyond the noise band and [`TARGET_EFFECT`].
    fn unclear(&self, pooled: &[std::result::Result<Pooled, String>]) -> Vec<usize> {
        (0..pooled.len())
            .filter(|&k| {
                let Ok(p) = &pooled[k] else { return false };
                self.compare(&p.base, &p.values)
                    .is_some_and(|c| c.verdict == Verdict::NoSignificantChange && left_open(&c))
            })
            .collect()
    }

    /// Records the `unclear` groups as undecided, with the repetitions per config that would call the
    /// gain their screening estimates (80 % power, the search's confidence and noise band).
    fn record_undecided(
        &mut self,
        groups: &[(Area, Vec<usize>)],
        pooled: &[std::result::Result<Pooled, String>],
        unclear: &[usize],
    ) {
        for &k in unclear {
            let Ok(p) = &pooled[k] else { continue };
            let Some(c) = self.compare(&p.base, &p.values) else { continue };
            let cv = |xs: &[f64]| stats::coefficient_of_variation(xs).unwrap_or(0.0);
            let cfg = &self.s.compare;
            let need = stats::repetitions_for(
                cv(&p.base),
                cv(&p.values),
                gain(&c).abs().max(cfg.noise_band * 1.5),
                cfg.bootstrap.confidence,
                cfg.noise_band,
                stats::DEFAULT_POWER,
            );
            self.out.undecided.push(super::Undecided {
                group: groups[k].0.label().to_string(),
                variables: groups[k].1.iter().map(|&i| self.cands[i].variable.clone()).collect(),
                change: describe(&c),
                repetitions: p.values.len(),
                would_need: match need {
                    Ok(stats::RepetitionsNeeded::PerSide(n)) => Some(n),
                    _ => None,
                },
            });
        }
    }
}

/// Whether an attribution's gap (A = the base with every live value, B = the base) leaves a gain
/// worth having open: faster by its estimate, the interval's upper end beyond the noise band and
/// [`TARGET_EFFECT`]. Points are B against A, negative when the values help.
fn gain_left_open(g: &bisect::Gap) -> bool {
    let worth = 100.0 * g.comparison.noise_band.max(TARGET_EFFECT);
    -g.points > 0.0 && -g.points_lo > worth
}

/// Runs explain's steps as advise steps: B is the tier's base, A the base with every live value.
struct Adapter<'a, 'b> {
    search: &'a mut Search<'b>,
    bench: &'a mut dyn Bench,
    base: &'a [usize],
    live: &'a [usize],
    tier: Tier,
}

impl Adapter<'_, '_> {
    fn names(&self) -> (&'static str, &'static str) {
        match self.tier {
            Tier::Safe => ("current", "advised"),
            Tier::Durability => ("advised", "advised+durability"),
        }
    }
}

impl Measure for Adapter<'_, '_> {
    fn measure(&mut self, step: &BisectStep, candidates: &[bisect::Suspect]) -> Result<Vec<ProbeResult>> {
        let (b_name, a_name) = self.names();
        let sets: Vec<(Vec<usize>, String)> = step
            .probes
            .iter()
            .map(|p| match p {
                Probe::B => (self.base.to_vec(), b_name.to_string()),
                Probe::A => (union(self.base, self.live), a_name.to_string()),
                Probe::Set(s) => {
                    let on: Vec<usize> = s.iter().map(|&j| self.live[j]).collect();
                    let label = bisect::probe_label(p, candidates);
                    (union(self.base, &on), format!("{b_name}{}", label.trim_start_matches('B')))
                }
            })
            .collect();
        // The same config twice in one step (A and B+all) is measured once.
        let mut configs: Vec<Config> = Vec::new();
        let mut index = Vec::with_capacity(sets.len());
        for (set, label) in sets {
            match configs.iter().position(|c| c.set == set) {
                Some(i) => index.push(i),
                None => {
                    index.push(configs.len());
                    configs.push(Config { label, set, dedicated: false });
                }
            }
        }
        let reps = step.repetitions.unwrap_or(self.search.s.attribution_repetitions);
        if self.bench.cost(configs.len(), reps) > self.search.left(self.bench) {
            let why = "not run: the budget ran out".to_string();
            return Ok(vec![Err(why); index.len()]);
        }
        let results = self.search.run(Phase::Attribution(self.tier), configs, reps, self.bench)?;
        Ok(index.iter().map(|&i| results[i].as_ref().map(|s| s.combined.clone()).map_err(String::clone)).collect())
    }
}

impl Search<'_> {
    /// SearchStep 2: halve the surviving groups while the attribution cannot afford them all.
    pub(super) fn halve(&mut self, mut survivors: Vec<Group>, bench: &mut dyn Bench) -> Result<Vec<Group>> {
        let mut rung = 0;
        loop {
            let n: usize = survivors.iter().map(|s| s.1.len()).sum();
            let cfg = self.attribution_config(bench);
            if survivors.len() < 2 || bisect::estimate_runs(n, n.min(2), &cfg) <= cfg.max_runs {
                return Ok(survivors);
            }
            rung += 1;
            let reps = self.screen_reps.saturating_mul(1 << rung.min(8));
            let mut configs = vec![Config::on_top("current", vec![])];
            configs
                .extend(survivors.iter().map(|(a, m, _)| Config::on_top(format!("current+{}", a.label()), m.clone())));
            if bench.cost(configs.len(), reps) > self.left(bench) {
                self.out.notes.push(format!(
                    "the budget left no room for halving rung {rung}; all {} groups go on",
                    survivors.len()
                ));
                return Ok(survivors);
            }
            let results = self.run(Phase::Rung(rung), configs, reps, bench)?;
            let Ok(current) = results[0].as_ref().map(|s| s.combined.clone()) else {
                self.out.notes.push(format!("rung {rung}: the current config could not be measured; all groups go on"));
                return Ok(survivors);
            };
            let mut ranked: Vec<Group> = Vec::new();
            for ((area, members, _), r) in survivors.into_iter().zip(&results[1..]) {
                match r
                    .as_ref()
                    .map_err(String::clone)
                    .and_then(|x| self.compare(&current, &x.combined).ok_or_else(|| "no interval".to_string()))
                {
                    Ok(c) => ranked.push((area, members, c)),
                    Err(e) => self.set_fates(&members, Fate::Failed(format!("rung {rung}: {e}"))),
                }
            }
            ranked.sort_by(|x, y| gain_lo(&y.2).total_cmp(&gain_lo(&x.2)));
            let keep = ranked.len().div_ceil(2);
            for (area, members, c) in ranked.drain(keep..) {
                let d = describe(&c);
                self.set_fates(
                    &members,
                    Fate::NotProven(format!(
                        "ranked in the lower half of halving rung {rung} ({d}): not proven within the budget"
                    )),
                );
                self.out.screening.push(Screened {
                    area,
                    members,
                    comparison: Some(c),
                    decision: format!("dropped at rung {rung}: {d}"),
                });
            }
            survivors = ranked;
        }
    }

    /// Leave-one-out attribution of `live` on top of `base`; sets the fates of `live`.
    pub(super) fn attribute(
        &mut self,
        tier: Tier,
        base: &[usize],
        live: &[usize],
        bench: &mut dyn Bench,
    ) -> Result<SearchOutcome> {
        let cands: Vec<bisect::Suspect> = live
            .iter()
            .map(|&i| {
                let c = &self.cands[i];
                bisect::Suspect::new(c.variable.clone(), c.display.clone(), c.old.clone().unwrap_or_default())
            })
            .collect();
        let cfg = self.attribution_config(bench);
        let outcome = {
            let mut m = Adapter { search: self, bench, base, live, tier };
            bisect::search(&cands, &cfg, &mut m)?
        };
        let against = if tier == Tier::Safe { "the current config" } else { "the safe advice" };
        let names: Vec<String> = cands.iter().map(|c| c.name.clone()).collect();
        let splits: Vec<Split> = outcome.findings.iter().map(|f| groups::split(f, &names, &cfg.compare)).collect();
        for (j, &i) in live.iter().enumerate() {
            let found = outcome.findings.iter().zip(&splits).find(|(f, _)| f.set.contains(&j));
            let fate = if let Some((f, split)) = found {
                let e = f.attributed();
                // Towards A is towards the values together: when those were slower than the base, a
                // significant move towards them is a loss.
                let helps = e.points.is_some_and(|p| p > 0.0);
                if e.toward_a && !helps {
                    Fate::Slower(format!(
                        "the values together were slower than {against}, and this one took the advised set their way: \
                         {}",
                        groups::figures(e)
                    ))
                } else if let Some((_, fate)) = split.dropped.iter().find(|(k, _)| *k == j).filter(|_| e.toward_a) {
                    // The first member of a group records it, once.
                    if tier == Tier::Safe && split.stand_ins.first() == Some(&j) {
                        self.stand_ins.push(split.stand_ins.iter().map(|&k| live[k]).collect());
                    }
                    fate.clone()
                } else if e.toward_a {
                    let others = split.kept.iter().filter(|&&k| k != j).map(|&k| names[k].clone()).collect();
                    self.out.contributions[i] = contribution(e, others).map(|c| Contribution {
                        measured_with: split.dropped.iter().map(|&(k, _)| names[k].clone()).collect(),
                        ..c
                    });
                    Fate::Recommended(tier)
                } else {
                    Fate::NotProven(match (e.points, e.points_lo, e.points_hi) {
                        (Some(p), Some(lo), Some(hi)) => {
                            let could = could_detect(e.detectable.map(|d| d.either_way()));
                            format!(
                                "its contribution was not significant: {p:+.1} points (CI {lo:+.1} to {hi:+.1}){could}"
                            )
                        }
                        _ => format!("its contribution could not be measured: {}", e.error.clone().unwrap_or_default()),
                    })
                }
            } else if outcome.unresolved.iter().any(|u| u.contains(&j)) {
                Fate::NotProven(UNRESOLVED.into())
            } else if outcome.cleared.contains(&j) {
                Fate::NoEffect(
                    "no effect measured on this workload (leaving it out of the advised set cost nothing significant)"
                        .into(),
                )
            } else if no_difference(&outcome) && outcome.gap.is_some_and(|g| gain_left_open(&g)) {
                // The values together were not shown faster, but a gain worth having was not excluded
                // either: that is the budget's limit, not "no effect", and the value can go on trial.
                Fate::NotProven(UNRESOLVED.into())
            } else if no_difference(&outcome) {
                let gap = outcome
                    .gap
                    .map(|g| format!(" ({:+.1} points, CI {:+.1} to {:+.1})", -g.points, -g.points_hi, -g.points_lo))
                    .unwrap_or_default();
                Fate::NoEffect(format!(
                    "no effect measured on this workload: the values together did not beat {against}{gap}"
                ))
            } else {
                Fate::NotProven(format!("not resolved: {}", outcome.notes.join("; ")))
            };
            self.out.fates[i] = fate;
        }
        Ok(outcome)
    }

    /// The confirmation of the advice (`proven`, with the values on trial when there are some) and the
    /// durability tier (`traded`).
    pub(super) fn confirm(
        &mut self,
        proven: &[usize],
        trial: &Trial,
        traded: &[usize],
        bench: &mut dyn Bench,
    ) -> Result<()> {
        let on_trial = trial.safe;
        let advised = &union(proven, on_trial.as_slice())[..];
        let durability = if traded.is_empty() { &trial.trades[..] } else { traded };
        let mut configs = vec![Config { label: "current".into(), set: vec![], dedicated: false }];
        if self.s.dedicated {
            configs.push(Config { label: "dedicated".into(), set: vec![], dedicated: true });
        }
        if !advised.is_empty() {
            configs.push(Config { label: "advised".into(), set: advised.to_vec(), dedicated: false });
        }
        if !durability.is_empty() {
            configs.push(Config {
                label: "advised+durability".into(),
                set: union(advised, durability),
                dedicated: false,
            });
        }
        let left = self.s.budget.saturating_sub(bench.elapsed());
        let asked = self.s.confirm_repetitions;
        // The confirmation is the last step: it takes what the budget leaves (up to
        // CONFIRM_STRETCH × the repetitions asked) rather than end undecided with budget unused. Values on
        // trial have no other proof at all.
        let reps =
            (asked..=asked * CONFIRM_STRETCH).rev().find(|&r| bench.cost(configs.len(), r) <= left).unwrap_or(asked);
        if reps > asked {
            let why = if trial.is_empty() {
                "it is the last step"
            } else {
                "it is the last step and the only measurement of the values on trial"
            };
            self.out.notes.push(format!(
                "the confirmation runs {reps} repetitions instead of {asked}: {why}, and the budget leaves room for them"
            ));
        }
        let all: Vec<usize> = union(advised, traded);
        let cost = bench.cost(configs.len(), reps);
        if cost > left {
            for &i in &all {
                self.out.fates[i] = Fate::Withdrawn("the budget left no room for the confirmation".into());
                self.out.contributions[i] = None;
            }
            for &i in on_trial.iter().chain(&trial.trades) {
                self.out.fates[i] = Fate::NotProven("the budget left no room for the confirmation, its proof".into());
            }
            self.out.notes.push(format!(
                "the confirmation needs about {} s and {} s of the budget are left: nothing is recommended",
                cost.as_secs(),
                self.s.budget.saturating_sub(bench.elapsed()).as_secs()
            ));
            self.out.conclusion = Conclusion::BudgetTooSmall;
            return Ok(());
        }
        let labels: Vec<String> = configs.iter().map(|c| c.label.clone()).collect();
        // What the confirmation's advised config sets, as its stored description says it.
        let mut found = self.out.clone();
        if let Some(i) = trial.safe {
            found.fates[i] = Fate::Recommended(Tier::Safe);
        }
        bench.before_confirmation(&found);
        let results = self.run(Phase::Confirm, configs, reps, bench)?;
        let c = confirmation(labels, &results, reps, &self.s.threads, &self.s.compare);
        let withdraw = |s: &mut Self, set: &[usize], why: &str| {
            for &i in set {
                s.out.fates[i] = Fate::Withdrawn(why.to_string());
                s.out.contributions[i] = None;
            }
        };
        if !advised.is_empty() && !c.holds {
            let why = "the confirmation did not show the advice faster than the current config (and nowhere slower)";
            withdraw(self, &all, why);
        } else if !traded.is_empty() && c.durability_holds == Some(false) {
            let why =
                "the confirmation did not show the durability trades faster than the safe advice (and nowhere slower)";
            withdraw(self, traded, why);
        }
        let safe_stands = match on_trial {
            Some(i) => self.judge_on_trial(i, &c),
            None => advised.is_empty() || c.holds,
        };
        if on_trial.is_some() && !safe_stands {
            withdraw(self, traded, "the safe advice it was measured on top of did not stand");
        }
        if !trial.trades.is_empty() && traded.is_empty() {
            self.judge_trades_on_trial(&trial.trades, safe_stands, &c);
        }
        self.out.conclusion = if self.out.fates.iter().any(|f| f.recommended().is_some()) {
            Conclusion::Recommended
        } else if proven.is_empty() && traded.is_empty() {
            // Only values on trial, and none held: nothing was proven, before or in the confirmation.
            Conclusion::NothingProven
        } else {
            Conclusion::NotConfirmed
        };
        self.out.confirmation = Some(c);
        Ok(())
    }
}

/// The confirmation from the measured `results` of `labels` (the first is the current config) at every
/// one of `threads` and, with two or more, over their geometric mean; shared by the search and the
/// report's advise section (recomputed from a stored confirmation experiment).
pub fn confirmation(
    labels: Vec<String>,
    results: &[ConfigResult],
    reps: u32,
    threads: &[u32],
    compare: &CompareConfig,
) -> Confirmation {
    let cmp_samples = |x: &[f64], y: &[f64]| stats::compare(x, y, SampleLevel::Repetitions, compare).ok();
    let idx = |l: &str| labels.iter().position(|x| x == l);
    let (dedicated, advised, traded) = (idx("dedicated"), idx("advised"), idx("advised+durability"));
    let pick = |r: &ConfigResult, t: Option<u32>| -> Option<Vec<f64>> {
        let s = r.as_ref().ok()?;
        let v = match t {
            Some(t) => s.per_threads.get(&t)?.clone(),
            None => s.combined.clone(),
        };
        (v.len() >= 2).then_some(v)
    };
    let mut rows = Vec::new();
    let points: Vec<Option<u32>> = threads.iter().map(|&t| Some(t)).chain([None]).collect();
    for t in points {
        if t.is_none() && threads.len() < 2 {
            continue;
        }
        let samples: Vec<Option<Vec<f64>>> = results.iter().map(|r| pick(r, t)).collect();
        let cmp = |a: Option<usize>, b: Option<usize>| -> Option<stats::Comparison> {
            let (x, y) = (samples.get(a?)?.as_ref()?, samples.get(b?)?.as_ref()?);
            cmp_samples(x, y)
        };
        let means = samples.iter().map(|s| s.as_ref().and_then(|v| stats::mean(v))).collect();
        let vs_current = (0..labels.len()).map(|i| if i == 0 { None } else { cmp(Some(0), Some(i)) }).collect();
        let detectable = advised.or(traded).and_then(|i| {
            let (x, y) = (samples[0].as_ref()?, samples[i].as_ref()?);
            let cc = compare;
            stats::detectable_effect_of(
                x,
                y,
                SampleLevel::Repetitions,
                cc.bootstrap.confidence,
                cc.noise_band,
                stats::DEFAULT_POWER,
            )
            .ok()
            .map(|d| d.either_way())
        });
        rows.push(ConfirmRow {
            threads: t,
            means,
            vs_current,
            advised_vs_dedicated: cmp(dedicated, advised),
            durability_vs_advised: cmp(advised.or(Some(0)), traded),
            detectable,
        });
    }
    let holds_for = |get: &dyn Fn(&ConfirmRow) -> Option<stats::Comparison>| -> bool {
        let v: Vec<Verdict> = rows.iter().filter_map(get).map(|c| c.verdict).collect();
        v.contains(&Verdict::Faster) && !v.contains(&Verdict::Slower)
    };
    let holds = advised.is_some_and(|i| holds_for(&|r: &ConfirmRow| r.vs_current[i]));
    let durability_holds = traded.map(|_| holds_for(&|r: &ConfirmRow| r.durability_vs_advised));
    Confirmation { labels, rows, repetitions: reps, holds, durability_holds }
}

/// The time a step of `configs` configs takes at `repetitions` × `threads` runs of `per_run` each.
pub fn step_cost(configs: usize, repetitions: u32, threads: usize, per_run: Duration) -> Duration {
    per_run.mul_f64((configs * repetitions as usize * threads) as f64)
}
