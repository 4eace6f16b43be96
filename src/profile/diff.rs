//! The differential comparison of two targets' profiles: which functions cost more or less CPU per
//! transaction in the candidate than in the baseline, with an interval from the repetitions, keeping
//! only what stands out of the noise with the false discoveries controlled over all functions at once.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::FunctionCost;
use crate::stats::fdr::bh_adjust;
use crate::stats::{t_quantile, t_two_sided_p};

/// One run's profile as the comparison uses it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunCosts {
    /// Self and inclusive CPU µs per transaction by function.
    pub functions: BTreeMap<String, FunctionCost>,
    /// CPU µs per transaction over all stacks.
    pub total_us: f64,
    /// CPU µs per transaction that one sample stands for (the sampling period over the run's
    /// transactions): the scale of the sampling noise when a side has a single run.
    pub sample_us: f64,
}

/// Which of a function's costs a row compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostKind {
    /// In the function itself: these add up to the whole gap.
    SelfCost,
    /// In the function and what it called.
    Inclusive,
}

/// One function whose cost differs beyond the noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    /// The function (or `[object]` for unnamed code of an object file).
    pub function: String,
    /// Self or inclusive.
    pub kind: CostKind,
    /// Mean CPU µs per transaction in the baseline's runs (0 where it was never sampled).
    pub baseline_us: f64,
    /// Mean CPU µs per transaction in the candidate's runs.
    pub candidate_us: f64,
    /// `candidate_us - baseline_us`.
    pub delta_us: f64,
    /// Interval of the difference, µs per transaction (at the level that keeps the selected rows'
    /// coverage: see [`Differential::level`]).
    pub low_us: f64,
    /// Upper end of the interval.
    pub high_us: f64,
    /// The false-discovery-adjusted p value (Benjamini–Hochberg) over all functions of its kind.
    pub q: f64,
    /// `delta_us` over the whole gap in CPU per transaction, when the gap's interval excludes 0 (self
    /// rows add up to the gap; inclusive rows overlap).
    pub share_of_gap: Option<f64>,
    /// For inclusive rows: the function is on the stacks of more than half of either side's CPU (a
    /// root, a thread's or a statement's entry point, or an unnamed frame that stands for one when a
    /// build's library has no symbols), so its difference is mostly its callees' or the naming's.
    /// Such rows come after the others.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trunk: bool,
}

/// The differential comparison of one candidate with the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Differential {
    /// Self rows beyond the noise, the largest |delta| first.
    pub self_rows: Vec<DiffRow>,
    /// Inclusive rows beyond the noise, the largest |delta| first.
    pub inclusive_rows: Vec<DiffRow>,
    /// Functions compared (of each kind).
    pub tested: usize,
    /// Candidate's minus baseline's total CPU µs per transaction.
    pub gap_us: f64,
    /// Interval of the gap.
    pub gap_low_us: f64,
    /// Upper end of the gap's interval.
    pub gap_high_us: f64,
    /// The share of the gap that the selected self rows add up to (`None` when the gap is 0).
    pub explained_share: Option<f64>,
    /// The confidence level of the self rows' intervals, adjusted for the selection (Benjamini–Yekutieli
    /// 2005): `1 - fdr·R/m` with R self rows selected of m tested (`1 - fdr` when none is). The
    /// inclusive rows' intervals use the same formula with their own R: [`Differential::inclusive_level`].
    pub level: f64,
    /// The confidence level of the inclusive rows' intervals.
    pub inclusive_level: f64,
    /// Runs on each side: baseline, candidate.
    pub runs: (usize, usize),
}

/// How the differential comparison decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffConfig {
    /// The false discovery rate to control over all functions compared (0.05).
    pub fdr: f64,
    /// The confidence level of the gap's interval (0.95).
    pub confidence: f64,
    /// Differences smaller than this, in µs per transaction, are not worth a row even when certain.
    pub min_delta_us: f64,
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig { fdr: 0.05, confidence: 0.95, min_delta_us: 0.0 }
    }
}

/// Compares the candidate's runs with the baseline's, function by function.
///
/// Each function (the union over all runs of both sides; absent from a run means 0 there) is tested
/// for its self and its inclusive cost: the difference of the sides' means over the standard error
/// `sqrt(var_b + var_c)`. A side's variance comes from a model (sampling noise plus run-to-run noise in
/// proportion to the cost, pooled over all functions: see [`estimate`]), known rather than estimated
/// from two or three runs, so the normal's tails apply; a cost whose runs spread more than the model
/// says keeps its own variance, and the test then takes Welch–Satterthwaite degrees of freedom. With a
/// single run a side the model has sampling noise only, which leaves out the variation between server
/// restarts. The p values of a kind are adjusted together (Benjamini–Hochberg) and a row is kept when
/// `q ≤ fdr` and `|delta| ≥ min_delta_us`.
///
/// Never panics: with either side empty nothing is compared (no rows, a gap of 0 with a zero-width
/// interval, `tested` 0); non-finite or negative costs and `sample_us` count as 0; an `fdr` or
/// `confidence` outside (0, 1) falls back to the default. A difference with a zero standard error
/// (only possible without `sample_us`, when runs are identical or single) has p = 0, or 1 when it is
/// 0.
pub fn differential(baseline: &[RunCosts], candidate: &[RunCosts], cfg: &DiffConfig) -> Differential {
    let default = DiffConfig::default();
    let fdr = unit_or(cfg.fdr, default.fdr);
    let confidence = unit_or(cfg.confidence, default.confidence);
    let min_delta_us = if cfg.min_delta_us.is_nan() { 0.0 } else { cfg.min_delta_us.max(0.0) };
    let runs = (baseline.len(), candidate.len());
    if baseline.is_empty() || candidate.is_empty() {
        return Differential {
            self_rows: Vec::new(),
            inclusive_rows: Vec::new(),
            tested: 0,
            gap_us: 0.0,
            gap_low_us: 0.0,
            gap_high_us: 0.0,
            explained_share: None,
            level: 1.0 - fdr,
            inclusive_level: 1.0 - fdr,
            runs,
        };
    }

    let names: BTreeSet<&str> =
        baseline.iter().chain(candidate).flat_map(|r| r.functions.keys().map(String::as_str)).collect();
    let names: Vec<&str> = names.into_iter().collect();
    let b = proportional_noise(&[baseline, candidate], &names);
    let gap = welch(
        estimate(baseline.iter().map(|r| (clean(r.total_us), clean(r.sample_us))), b),
        estimate(candidate.iter().map(|r| (clean(r.total_us), clean(r.sample_us))), b),
    );
    let (gap_low_us, gap_high_us) = gap.interval(confidence);

    let (mut self_rows, level) = select(&names, baseline, candidate, CostKind::SelfCost, b, fdr, min_delta_us);
    let (mut inclusive_rows, inclusive_level) =
        select(&names, baseline, candidate, CostKind::Inclusive, b, fdr, min_delta_us);
    let mean_total = |runs: &[RunCosts]| runs.iter().map(|r| clean(r.total_us)).sum::<f64>() / runs.len() as f64;
    let (base_total, cand_total) = (mean_total(baseline), mean_total(candidate));
    for row in &mut inclusive_rows {
        row.trunk = row.baseline_us > 0.5 * base_total || row.candidate_us > 0.5 * cand_total;
    }
    // Nested costs move with their callees', so the largest inclusive differences are the entry points'
    // and the noisiest: inclusive rows go by the smallest difference their interval allows, entry
    // points last.
    inclusive_rows.sort_by(|a, b| a.trunk.cmp(&b.trunk).then(assured(b).total_cmp(&assured(a))));

    // A share of a gap that the runs cannot tell from 0 would be noise over noise.
    let established = gap_low_us > 0.0 || gap_high_us < 0.0;
    let share = |x: f64| (established && gap.delta != 0.0).then(|| x / gap.delta);
    for row in self_rows.iter_mut().chain(inclusive_rows.iter_mut()) {
        row.share_of_gap = share(row.delta_us);
    }
    let explained_share = share(self_rows.iter().map(|r| r.delta_us).sum());

    Differential {
        self_rows,
        inclusive_rows,
        tested: names.len(),
        gap_us: gap.delta,
        gap_low_us,
        gap_high_us,
        explained_share,
        level,
        inclusive_level,
        runs,
    }
}

/// The smallest |difference| a row's interval allows (0 when it straddles 0).
fn assured(r: &DiffRow) -> f64 {
    if r.low_us > 0.0 {
        r.low_us
    } else if r.high_us < 0.0 {
        -r.high_us
    } else {
        0.0
    }
}

/// `x` when strictly between 0 and 1, else `default`.
fn unit_or(x: f64, default: f64) -> f64 {
    if x > 0.0 && x < 1.0 { x } else { default }
}

/// A cost or sample size as the comparison uses it: NaN, infinite or negative figures count as 0.
fn clean(x: f64) -> f64 {
    if x.is_finite() { x.max(0.0) } else { 0.0 }
}

/// One side's mean of a cost over its runs, the variance of that mean and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SideEstimate {
    mean: f64,
    var: f64,
    /// Infinite when the variance is the model's (known), `PRIOR_DF + n − 1` when moderated by the runs'
    /// own.
    df: f64,
}

/// The mean and its variance from `(cost, sample_us)` per run, both already cleaned.
///
/// A run's variance is modelled as `cost·sample_us + b·cost²`: sampling (a cost is a count of samples
/// times `sample_us`, and counts are Poisson) plus run-to-run noise in proportion to the cost, with
/// `b` pooled over every function of both sides ([`proportional_noise`]), so it is known rather than
/// estimated from a side's two or three runs. A cost whose runs spread more than the model says gets
/// the model's variance moderated by its own (weighted as [`PRIOR_DF`] degrees of freedom against its
/// `n − 1`, as limma moderates gene-wise variances), with that many degrees of freedom: its own spread
/// widens its interval without one odd pair of runs making it untestable.
fn estimate(runs: impl Iterator<Item = (f64, f64)>, b: f64) -> SideEstimate {
    let runs: Vec<(f64, f64)> = runs.collect();
    let n = runs.len();
    if n == 0 {
        return SideEstimate { mean: 0.0, var: 0.0, df: f64::INFINITY };
    }
    let nf = n as f64;
    let mean = runs.iter().map(|(c, _)| c).sum::<f64>() / nf;
    let model = runs.iter().map(|(c, s)| c * s).sum::<f64>() / nf + b * mean * mean;
    let own = if n >= 2 { runs.iter().map(|(c, _)| (c - mean).powi(2)).sum::<f64>() / (nf - 1.0) } else { 0.0 };
    if own > model {
        let df = PRIOR_DF + nf - 1.0;
        SideEstimate { mean, var: (PRIOR_DF * model + (nf - 1.0) * own) / df / nf, df }
    } else {
        SideEstimate { mean, var: model / nf, df: f64::INFINITY }
    }
}

/// The weight of the variance model against a function's own spread, in degrees of freedom.
const PRIOR_DF: f64 = 10.0;

/// `b` of the variance model `cost·sample_us + b·cost²` (see [`estimate`]): the run-to-run variance
/// beyond sampling, relative to the squared cost, pooled over the self costs of every function on
/// every side with two runs or more (a method-of-moments estimate weighted by `cost²`, so the large
/// functions, where it matters, weigh most); 0 without repetitions.
fn proportional_noise(sides: &[&[RunCosts]], names: &[&str]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for runs in sides.iter().filter(|r| r.len() >= 2) {
        let nf = runs.len() as f64;
        for name in names {
            let costs: Vec<(f64, f64)> = runs
                .iter()
                .map(|r| (clean(r.functions.get(*name).map_or(0.0, |f| f.self_us)), clean(r.sample_us)))
                .collect();
            let mean = costs.iter().map(|(c, _)| c).sum::<f64>() / nf;
            let sampling = costs.iter().map(|(c, s)| c * s).sum::<f64>() / nf;
            let own = costs.iter().map(|(c, _)| (c - mean).powi(2)).sum::<f64>() / (nf - 1.0);
            num += (nf - 1.0) * (own - sampling);
            den += (nf - 1.0) * mean * mean;
        }
    }
    if den > 0.0 && num > 0.0 { num / den } else { 0.0 }
}

/// A Welch-style test of the candidate's mean minus the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Test {
    delta: f64,
    se: f64,
    /// Degrees of freedom; infinite (the normal) when both variances are the model's.
    df: f64,
}

fn welch(b: SideEstimate, c: SideEstimate) -> Test {
    let delta = c.mean - b.mean;
    let se = (b.var + c.var).sqrt();
    // Welch–Satterthwaite: a side whose variance is the model's adds nothing to the denominator.
    let term = |s: SideEstimate| if s.df.is_finite() && s.df > 0.0 { s.var.powi(2) / s.df } else { 0.0 };
    let denom = term(b) + term(c);
    let df = if denom > 0.0 { (b.var + c.var).powi(2) / denom } else { f64::INFINITY };
    Test { delta, se, df }
}

impl Test {
    /// Two-sided p value of `delta = 0`.
    fn p(&self) -> f64 {
        if self.se > 0.0 {
            t_two_sided_p(self.delta / self.se, self.df)
        } else if self.delta == 0.0 {
            1.0
        } else {
            0.0
        }
    }

    /// The two-sided interval of `delta` at `level` (strictly between 0 and 1).
    fn interval(&self, level: f64) -> (f64, f64) {
        if self.se <= 0.0 {
            return (self.delta, self.delta);
        }
        let half = t_quantile(1.0 - (1.0 - level) / 2.0, self.df) * self.se;
        if half.is_finite() { (self.delta - half, self.delta + half) } else { (f64::NEG_INFINITY, f64::INFINITY) }
    }
}

/// The rows of one kind beyond the noise, largest |delta| first, and the level of their intervals.
fn select(
    names: &[&str],
    baseline: &[RunCosts],
    candidate: &[RunCosts],
    kind: CostKind,
    b: f64,
    fdr: f64,
    min_delta_us: f64,
) -> (Vec<DiffRow>, f64) {
    let side = |runs: &[RunCosts], name: &str| {
        estimate(
            runs.iter().map(|r| {
                let cost = r.functions.get(name).map_or(0.0, |f| match kind {
                    CostKind::SelfCost => f.self_us,
                    CostKind::Inclusive => f.total_us,
                });
                (clean(cost), clean(r.sample_us))
            }),
            b,
        )
    };
    let tests: Vec<(SideEstimate, SideEstimate, Test)> = names
        .iter()
        .map(|name| {
            let (b, c) = (side(baseline, name), side(candidate, name));
            (b, c, welch(b, c))
        })
        .collect();
    let q = bh_adjust(&tests.iter().map(|(_, _, t)| t.p()).collect::<Vec<_>>());
    let chosen: Vec<usize> =
        (0..names.len()).filter(|&i| q[i] <= fdr && tests[i].2.delta.abs() >= min_delta_us).collect();
    // Benjamini–Yekutieli's false coverage rate: intervals of the R selected among m at 1 − fdr·R/m
    // cover their true differences with the false-coverage share at most fdr.
    let m = names.len().max(1) as f64;
    let level = if chosen.is_empty() { 1.0 - fdr } else { 1.0 - fdr * chosen.len() as f64 / m };
    let mut rows: Vec<DiffRow> = chosen
        .into_iter()
        .map(|i| {
            let (b, c, t) = tests[i];
            let (low_us, high_us) = t.interval(level);
            DiffRow {
                function: names[i].to_string(),
                kind,
                baseline_us: b.mean,
                candidate_us: c.mean,
                delta_us: t.delta,
                low_us,
                high_us,
                q: q[i],
                share_of_gap: None,
                trunk: false,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.delta_us.abs().total_cmp(&a.delta_us.abs()));
    (rows, level)
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
