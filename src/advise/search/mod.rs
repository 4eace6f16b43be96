//! The proof of the advice, independent of servers: it asks a [`Bench`] to measure steps (small
//! experiments of a few configs, each the current config with some candidates on top) and decides from
//! the per-repetition samples with [`crate::stats`].
//!
//! 1. **Screening**: the current config, all safe candidates, and each group of candidates (by area)
//!    on top of the current config, in short runs. A group that is slower, or whose change is within
//!    the noise band, is dropped (its members: "no effect measured on this workload").
//! 2. **Successive halving** while the survivors are more than the attribution can afford: the
//!    current config and each surviving group again with twice the repetitions; the better half (by the
//!    lower end of its interval) goes on, the rest is "not proven within the budget".
//! 3. **Attribution** by leaving one out: explain's config bisection ([`crate::explain::bisect`]) with
//!    A = the current config with every surviving candidate and B = the current config. A value whose
//!    absence costs the advised set significantly is recommended, with that cost as its measured
//!    contribution (points of the advised config's mean, an interval that excludes zero); a value
//!    whose absence costs nothing is "no effect measured on this workload". Values that only act
//!    together, none of which costs anything left out alone, stand in for each other: one step measures
//!    each alone on top of the advice and recommends the best of them if it is faster ([`stand_ins`]). With
//!    `--allow-durability-trade` the durability trades are attributed the same way on top of the safe
//!    advice (B = the safe advice), a tier of their own.
//! 4. **Confirmation**: the current config, the innodb_dedicated_server baseline, the advice and the
//!    advice with the durability trades, at every thread count with at least 5 shuffled repetitions.
//!    The advice stands only if it is faster than the current config somewhere and slower nowhere.
//!    When the budget left every value unresolved, the one that screened alone and best is the advice
//!    on trial, and the unresolved durability trades the tier on trial ([`trial`]): for one value,
//!    the confirmation's comparison *is* its leave-one-out measurement, so it proves it or not (with
//!    the repetitions the budget leaves, up to twice as many).
//!
//! The budget is a hard limit: the confirmation's cost is reserved from the start, and a step runs only
//! if its estimated cost fits in what is left; a budget too small for the screening recommends nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::rules::{Area, Candidate, Risk};
use crate::error::Result;
use crate::explain::bisect::SearchConfig;
use crate::stats::{self, CompareConfig, Comparison, SampleLevel, Verdict};

/// Which tier a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Safe and memory values.
    Safe,
    /// Durability trades (only with `--allow-durability-trade`).
    Durability,
}

/// Why a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase", content = "n")]
pub enum Phase {
    /// Groups against the current config.
    Screen,
    /// A rung of successive halving (1, 2, …).
    Rung(usize),
    /// Leave-one-out attribution of a tier.
    Attribution(Tier),
    /// Values that stand in for each other, each measured alone on top of the advice.
    StandIns,
    /// The confirmation.
    Confirm,
}

/// One config of a step: the current config with candidates on top, or the dedicated baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Its label in the stored experiment.
    pub label: String,
    /// Candidates on top of the current config (indices, ascending).
    pub set: Vec<usize>,
    /// The innodb_dedicated_server baseline instead (`set` is empty).
    pub dedicated: bool,
}

impl Config {
    fn on_top(label: impl Into<String>, set: Vec<usize>) -> Config {
        Config { label: label.into(), set, dedicated: false }
    }
}

/// One small experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    /// 1, 2, … in the order run.
    pub number: usize,
    /// Why.
    pub phase: Phase,
    /// What it measures, the reference first.
    pub configs: Vec<Config>,
    /// Repetitions of every config at every thread count.
    pub repetitions: u32,
    /// The step ends by this time since advise started, seconds (the budget, less the confirmation's
    /// reserve for a search step): no run starts that would end later by its estimate.
    #[serde(default)]
    pub deadline_s: u64,
}

/// The samples of one config: per thread count one value per repetition, and per repetition the
/// geometric mean over the thread counts (what the search decides on).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Samples {
    /// Thread count → values.
    pub per_threads: BTreeMap<u32, Vec<f64>>,
    /// Geometric means over the thread counts, one per complete repetition.
    pub combined: Vec<f64>,
}

/// The samples of a config, or why it could not be measured.
pub type ConfigResult = std::result::Result<Samples, String>;

/// Measures steps and knows what they cost.
pub trait Bench {
    /// Runs `step` (its configs at every thread count, shuffled) and returns one result per config,
    /// starting no run that would end after [`SearchStep::deadline_s`] by its estimate (configs left short of
    /// two repetitions come back as `Err`). An `Err` stops the search (the store failed, Ctrl-C).
    fn measure(&mut self, step: &SearchStep, candidates: &[Candidate]) -> Result<Vec<ConfigResult>>;
    /// Estimated wall time of a step of `configs` configs at `repetitions` repetitions.
    fn cost(&self, configs: usize, repetitions: u32) -> Duration;
    /// Time spent since advise started (inspection included).
    fn elapsed(&self) -> Duration;
    /// Whether the last [`Bench::measure`] left runs unstarted at its deadline.
    fn stopped_at_deadline(&self) -> bool;
    /// Called before the confirmation is measured, with what the search found so far (the
    /// confirmation's experiment may record it; the default does nothing).
    fn before_confirmation(&mut self, _found: &SearchResult) {}
}

/// Settings of [`search`].
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// The hard limit on [`Bench::elapsed`].
    pub budget: Duration,
    /// Direction, noise band and interval settings of every comparison.
    pub compare: CompareConfig,
    /// Thread counts of every step.
    pub threads: Vec<u32>,
    /// Repetitions of the screening (rung k has twice those of rung k − 1).
    pub screen_repetitions: u32,
    /// Repetitions of the attribution steps.
    pub attribution_repetitions: u32,
    /// Repetitions of the confirmation (at least 5).
    pub confirm_repetitions: u32,
    /// Whether durability trades may be tried.
    pub allow_durability: bool,
    /// Whether there is a dedicated baseline to confirm against.
    pub dedicated: bool,
    /// Groups up to this size are attributed one value at a time (explain's `--singles-max`).
    pub singles_max: usize,
    /// Extra rounds of unclear attribution steps (explain's `--extra-rounds`).
    pub extra_rounds: usize,
    /// Adaptive attribution steps (`--until`, `--max-repetitions`): rounds of one repetition are added
    /// to the open probes of an attribution step up to `max` repetitions, judged by explain's
    /// group-sequential repeated intervals ([`crate::explain::bisect::Sequential`]; replaces
    /// `extra_rounds`). Every added round is checked against the budget like any step.
    pub adaptive: Option<crate::experiment::Repetitions>,
    /// The memory bound in bytes (90 % of the memory advised for).
    pub memory_limit: u64,
}

/// The fewest screening repetitions the search falls back to when the asked ones do not fit the
/// budget: with 3 per side an interval can still call a large gain; with 2 it calls almost nothing on a
/// noisy host (docs/advise.md).
pub const MIN_FITTED_SCREEN: u32 = 3;

/// A screened group: its area, its candidates, its comparison with the current config.
pub(super) type Group = (Area, Vec<usize>, Comparison);

pub(super) struct Search<'a> {
    pub(super) s: &'a SearchSettings,
    pub(super) cands: &'a [Candidate],
    pub(super) memory: &'a dyn Fn(&[usize]) -> u64,
    pub(super) out: SearchResult,
    /// The configs of the confirmation whose cost search steps leave free (0 once it runs); the cost
    /// is re-estimated at every step, as the bench's pace changes.
    pub(super) reserve_configs: usize,
    /// Repetitions of a screening step: the asked ones, or fewer when the budget made the search
    /// fit the first screening into it ([`MIN_FITTED_SCREEN`]).
    pub(super) screen_reps: u32,
    /// Groups of the safe attribution whose members stand in for each other (candidate indices), for
    /// [`stand_ins`] to measure one by one.
    pub(super) stand_ins: Vec<Vec<usize>>,
}

pub(super) fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let set: BTreeSet<usize> = a.iter().chain(b).copied().collect();
    set.into_iter().collect()
}

impl Search<'_> {
    /// What is left of the budget for search steps (the confirmation reserved).
    pub(super) fn left(&self, bench: &dyn Bench) -> Duration {
        self.s.budget.saturating_sub(bench.elapsed()).saturating_sub(self.reserve(bench))
    }

    /// The confirmation's estimated cost, by the bench's current estimates.
    pub(super) fn reserve(&self, bench: &dyn Bench) -> Duration {
        match self.reserve_configs {
            0 => Duration::ZERO,
            n => bench.cost(n, self.s.confirm_repetitions),
        }
    }

    pub(super) fn compare(&self, base: &[f64], with: &[f64]) -> Option<Comparison> {
        stats::compare(base, with, SampleLevel::Repetitions, &self.s.compare).ok()
    }

    /// `; it could detect only changes beyond ±X %`: the smallest change the interval of
    /// [`Self::compare`] calls with 80 % power for these samples' noise (empty when there is none).
    pub(super) fn detectable_text(&self, base: &[f64], with: &[f64]) -> String {
        let (confidence, band) = (self.s.compare.bootstrap.confidence, self.s.compare.noise_band);
        let d =
            stats::detectable_effect_of(base, with, SampleLevel::Repetitions, confidence, band, stats::DEFAULT_POWER);
        could_detect(d.ok().map(|d| d.either_way()))
    }

    pub(super) fn run(
        &mut self,
        phase: Phase,
        configs: Vec<Config>,
        repetitions: u32,
        bench: &mut dyn Bench,
    ) -> Result<Vec<ConfigResult>> {
        let estimated = bench.cost(configs.len(), repetitions);
        // Search steps leave the confirmation its reserve; the confirmation ends by the budget.
        let deadline = match phase {
            Phase::Confirm => self.s.budget,
            _ => self.s.budget.saturating_sub(self.reserve(bench)),
        };
        let number = self.out.steps.len() + 1;
        let step = SearchStep { number, phase, configs, repetitions, deadline_s: deadline.as_secs() };
        let results = bench.measure(&step, self.cands)?;
        if bench.stopped_at_deadline() {
            self.out.notes.push(format!(
                "step {number} ran into its time limit ({} s{}): runs that would have ended later were not started",
                deadline.as_secs(),
                if phase == Phase::Confirm { ", the budget" } else { ", the budget less the confirmation's reserve" }
            ));
        }
        self.out.steps.push(StepRecord { step, estimated_s: estimated.as_secs() });
        Ok(results)
    }

    pub(super) fn set_fates(&mut self, members: &[usize], fate: Fate) {
        for &i in members {
            self.out.fates[i] = fate.clone();
        }
    }

    /// SearchStep 1: groups against the current config. Returns the surviving groups with their screened
    /// comparison; `None` when the step could not run.
    fn screen(&mut self, safe: &[usize], bench: &mut dyn Bench) -> Result<Option<Vec<Group>>> {
        let mut groups: BTreeMap<Area, Vec<usize>> = BTreeMap::new();
        for &i in safe {
            groups.entry(self.cands[i].area).or_default().push(i);
        }
        let mut configs = vec![Config::on_top("current", vec![])];
        if groups.len() > 1 {
            configs.push(Config::on_top("current+all", safe.to_vec()));
        }
        for (area, members) in &groups {
            configs.push(Config::on_top(format!("current+{}", area.label()), members.clone()));
        }
        let Some(reps) = self.fit_screening(&mut configs, bench) else { return Ok(None) };
        self.screen_reps = reps;
        let results = self.run(Phase::Screen, configs, reps, bench)?;
        let current = match &results[0] {
            Ok(s) => s.combined.clone(),
            Err(e) => {
                self.out.notes.push(format!("the current config could not be measured: {e}"));
                self.out.conclusion = Conclusion::Failed;
                return Ok(None);
            }
        };
        let offset = results.len() - groups.len();
        let mut pooled: Vec<std::result::Result<Pooled, String>> = results[offset..]
            .iter()
            .map(|r| {
                r.as_ref().map(|x| Pooled { base: current.clone(), values: x.combined.clone() }).map_err(Clone::clone)
            })
            .collect();
        let groups: Vec<(Area, Vec<usize>)> = groups.into_iter().collect();
        self.rescreen(&groups, &mut pooled, bench)?;
        let mut survivors = Vec::new();
        for ((area, members), r) in groups.into_iter().zip(&pooled) {
            let (comparison, decision, fate) = match r {
                Err(e) => {
                    (None, format!("failed: {e}"), Some(Fate::Failed(format!("the run failed with its group: {e}"))))
                }
                Ok(Pooled { base, values: x }) => match self.compare(base, x) {
                    None => (None, "no interval".into(), Some(Fate::NotProven("screening gave no interval".into()))),
                    Some(c) if c.verdict != Verdict::NoSignificantChange && gain(&c) < 0.0 => {
                        let d = describe(&c);
                        (Some(c), format!("slower: {d}"), Some(Fate::Slower(format!("its group screened slower: {d}"))))
                    }
                    Some(c) if c.verdict == Verdict::NoSignificantChange && gain(&c) <= c.noise_band => {
                        let d = format!("{}{}", describe(&c), self.detectable_text(base, x));
                        let fate = Fate::NoEffect(format!(
                            "no effect measured on this workload (its group in screening: {d})"
                        ));
                        (Some(c), format!("no effect: {d}"), Some(fate))
                    }
                    Some(c) => {
                        survivors.push((area, members.clone(), c));
                        (Some(c), format!("kept: {}", describe(&c)), None)
                    }
                },
            };
            if let Some(f) = fate {
                self.set_fates(&members, f);
            }
            self.out.screening.push(Screened { area, members, comparison, decision });
        }
        Ok(Some(survivors))
    }

    /// Fits the screening into what the budget leaves, before giving up on it: first without the
    /// `current+all` config (it is shown, but no decision rests on it), then with fewer repetitions, down
    /// to [`MIN_FITTED_SCREEN`] (never below what was asked). Each change is a note. Returns the
    /// repetitions, or `None` (with a note) when even the smallest screening does not fit.
    fn fit_screening(&mut self, configs: &mut Vec<Config>, bench: &dyn Bench) -> Option<u32> {
        let asked = self.s.screen_repetitions;
        let left = self.left(bench);
        let fits = |n: usize, reps: u32| bench.cost(n, reps) <= left;
        if fits(configs.len(), asked) {
            return Some(asked);
        }
        let full = (configs.len(), bench.cost(configs.len(), asked).as_secs());
        if let Some(k) = configs.iter().position(|c| c.label == "current+all") {
            configs.remove(k);
            self.out.notes.push(format!(
                "screening {} configs × {asked} repetitions takes about {} s, more than the {} s the budget leaves \
                 after the confirmation's reserve: the candidates together (current+all) are not screened",
                full.0,
                full.1,
                left.as_secs()
            ));
        }
        let floor = asked.min(MIN_FITTED_SCREEN);
        let reps = (floor..=asked).rev().find(|&r| fits(configs.len(), r));
        match reps {
            Some(r) if r < asked => self.out.notes.push(format!(
                "the screening runs {r} repetitions instead of {asked} to fit the budget (about {} s of the {} s \
                 left): its intervals are wider, so fewer values can be told from no effect",
                bench.cost(configs.len(), r).as_secs(),
                left.as_secs()
            )),
            Some(_) => {}
            None => self.out.notes.push(format!(
                "the budget leaves {} s for searching after the confirmation is reserved; screening {} configs takes \
                 about {} s even at {floor} repetitions",
                left.as_secs(),
                configs.len(),
                bench.cost(configs.len(), floor).as_secs()
            )),
        }
        reps
    }

    /// The attribution settings for `left` of budget.
    pub(super) fn attribution_config(&self, bench: &dyn Bench) -> SearchConfig {
        let threads = self.s.threads.len().max(1);
        let per_run = bench.cost(1, 1).as_secs_f64() / threads as f64;
        let max_runs = if per_run > 0.0 { (self.left(bench).as_secs_f64() / per_run) as usize } else { usize::MAX };
        SearchConfig {
            compare: self.s.compare,
            runs_per_probe: self.s.attribution_repetitions as usize * threads,
            max_runs,
            confirm: false,
            singles_max: self.s.singles_max,
            extra_rounds: self.s.extra_rounds,
            sequential: self.s.adaptive.and_then(|r| {
                let min = self.s.attribution_repetitions as usize;
                let design = crate::stats::SequentialDesign::new(
                    min,
                    (r.max as usize).max(min),
                    self.s.compare.bootstrap.confidence,
                );
                design.ok().map(|design| crate::explain::bisect::Sequential {
                    design,
                    batch: 1,
                    runs_per_repetition: threads,
                    until: Some(r.until.unwrap_or(0.0)),
                })
            }),
        }
    }

    /// A value the attribution left unresolved for want of budget, but that was screened alone (its
    /// group held only it) and screened faster than the current config by more than the noise band at
    /// the lower end of its interval, is recommended on that measurement: it is its contribution on top
    /// of the current config. Only one such value, the best by that lower end: the confirmation still
    /// has to hold for the advice as a whole, and it could not tell a second one that rode along on a
    /// false alarm of its screening (each has a 2.5 % chance).
    fn measured_alone(&mut self, survivors: &[Group]) {
        let mut eligible = self.unresolved_alone(survivors);
        eligible.retain(|(_, c)| proven_alone(c));
        eligible.sort_by(|x, y| gain_lo(y.1).total_cmp(&gain_lo(x.1)));
        let Some(&(best, c)) = eligible.first() else { return };
        self.out.notes.push(format!(
            "{} is recommended on its screening alone ({}): the budget left no room to attribute it",
            self.cands[best].variable,
            describe(c)
        ));
        self.out.contributions[best] = alone(c);
        self.out.fates[best] = Fate::Recommended(Tier::Safe);
        for &(i, c) in &eligible[1..] {
            self.out.fates[i] = Fate::NotProven(format!(
                "screened faster alone ({}), but the budget left no room to attribute it, and only one value is \
                 recommended on its screening alone ({} was chosen)",
                describe(c),
                self.cands[best].variable
            ));
        }
    }

    /// Keeps the worst case of `set` within the memory bound by dropping memory values, the one that
    /// frees the most first; returns the dropped ones.
    fn fit_memory(&mut self, set: &mut Vec<usize>, fate: impl Fn(String) -> Fate) -> Vec<usize> {
        let mut dropped = Vec::new();
        while (self.memory)(set) > self.s.memory_limit {
            let total = (self.memory)(set);
            let Some(&worst) = set.iter().filter(|&&i| self.cands[i].risk == Risk::Memory).max_by_key(|&&i| {
                total.saturating_sub((self.memory)(&set.iter().copied().filter(|&j| j != i).collect::<Vec<_>>()))
            }) else {
                break;
            };
            set.retain(|&j| j != worst);
            self.out.fates[worst] = fate(format!(
                "with it the worst case at max_connections would exceed {:.0} % of the memory",
                super::memory::LIMIT_SHARE * 100.0
            ));
            dropped.push(worst);
        }
        dropped
    }
}

/// Runs the proof over `cands`. `memory(set)` is the worst case in bytes of the current config with
/// `set` on top.
pub fn search(
    cands: &[Candidate],
    settings: &SearchSettings,
    memory: &dyn Fn(&[usize]) -> u64,
    bench: &mut dyn Bench,
) -> Result<SearchResult> {
    let n = cands.len();
    let mut s = Search {
        s: settings,
        cands,
        memory,
        out: SearchResult {
            fates: vec![Fate::NotTried("not reached".into()); n],
            contributions: vec![None; n],
            screening: vec![],
            attribution: None,
            durability: None,
            confirmation: None,
            steps: vec![],
            conclusion: Conclusion::NothingProven,
            notes: vec![],
            undecided: vec![],
        },
        reserve_configs: 0,
        screen_reps: settings.screen_repetitions,
        stand_ins: vec![],
    };
    let mut safe: Vec<usize> = (0..n).filter(|&i| cands[i].risk != Risk::Durability).collect();
    let mut trades: Vec<usize> = (0..n).filter(|&i| cands[i].risk == Risk::Durability).collect();
    if !settings.allow_durability {
        for &i in &trades {
            s.out.fates[i] = Fate::NotTried("a durability trade: tried only with --allow-durability-trade".into());
        }
        trades.clear();
    }
    if memory(&[]) > settings.memory_limit {
        s.out.notes.push("the current config's worst case at max_connections already exceeds the memory bound".into());
    }
    s.fit_memory(&mut safe, Fate::NotTried);
    if safe.is_empty() && trades.is_empty() {
        s.out.conclusion = Conclusion::NothingToTry;
        s.out.notes.push("no rule proposed a value that could be tried".into());
        return Ok(s.out);
    }
    let confirm_configs = 2 + usize::from(settings.dedicated) + usize::from(!trades.is_empty());
    s.reserve_configs = confirm_configs;
    let mut advised: Vec<usize> = Vec::new();
    let mut trial = Trial::default();
    if !safe.is_empty() {
        let Some(survivors) = s.screen(&safe, bench)? else {
            if s.out.conclusion != Conclusion::Failed {
                s.out.conclusion = Conclusion::BudgetTooSmall;
                for i in safe.iter().chain(&trades) {
                    s.out.fates[*i] = Fate::NotTried("the budget was too small to screen it".into());
                }
            }
            return Ok(s.out);
        };
        let survivors = s.halve(survivors, bench)?;
        let live: Vec<usize> =
            survivors.iter().flat_map(|(_, m, _)| m.iter().copied()).collect::<BTreeSet<_>>().into_iter().collect();
        if !live.is_empty() {
            let outcome = s.attribute(Tier::Safe, &[], &live, bench)?;
            s.out.attribution = Some(outcome);
        }
        s.measured_alone(&survivors);
        advised = s.out.recommended(Tier::Safe);
        if s.resolve_stand_ins(&advised, bench)? {
            advised = s.out.recommended(Tier::Safe);
        }
        s.fit_memory(&mut advised, Fate::Withdrawn);
        if advised.is_empty() {
            trial.safe = s.safe_on_trial(&survivors);
        }
    }
    let mut traded: Vec<usize> = Vec::new();
    if !trades.is_empty() {
        let base = union(&advised, trial.safe.as_slice());
        let outcome = s.attribute(Tier::Durability, &base, &trades, bench)?;
        s.out.durability = Some(outcome);
        traded = s.out.recommended(Tier::Durability);
    }
    if traded.is_empty() {
        let on_safe_advice = !advised.is_empty() || trial.safe.is_some();
        trial.trades = s.trades_on_trial(&trades, on_safe_advice);
    }
    if advised.is_empty() && traded.is_empty() && trial.is_empty() {
        s.out.conclusion = Conclusion::NothingProven;
        s.out.notes.push("no value was proven to help: nothing is recommended and there is nothing to confirm".into());
        // A group the budget left open is not "nothing helps": say what would decide it.
        s.settle_undecided();
        return Ok(s.out);
    }
    s.reserve_configs = 0;
    s.confirm(&advised, &trial, &traded, bench)?;
    s.settle_undecided();
    Ok(s.out)
}

impl Search<'_> {
    /// Keeps the undecided groups none of whose values was decided later (recommended, slower, no
    /// effect, withdrawn), and calls the search undecided, not "nothing proven", when any is left.
    fn settle_undecided(&mut self) {
        let fates = &self.out.fates;
        let cands = self.cands;
        self.out.undecided.retain(|u| {
            u.variables.iter().all(|v| {
                cands.iter().position(|c| &c.variable == v).is_none_or(|i| matches!(fates[i], Fate::NotProven(_)))
            })
        });
        if self.out.conclusion == Conclusion::NothingProven && !self.out.undecided.is_empty() {
            self.out.conclusion = Conclusion::Undecided;
        }
    }
}

mod gains;
use gains::{alone, contribution, could_detect, describe, gain, gain_lo, left_open, no_difference, proven_alone};

mod result;
pub use result::{
    Conclusion, ConfirmRow, Confirmation, Contribution, Fate, Screened, SearchResult, StepRecord, Undecided,
};

mod steps;

mod trial;

mod groups;

mod stand_ins;
use steps::Pooled;
pub use steps::{confirmation, step_cost};
use trial::Trial;

#[cfg(test)]
mod tests;
