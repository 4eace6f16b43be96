//! Adaptive repetitions: look at the comparison after every round and stop once it is decisive or
//! narrow enough, without raising the false-alarm rate.
//!
//! Looking after every round and stopping at the first interval that excludes 1 would call far more
//! than 5 % of A/A comparisons different (every look is another chance of a false alarm). This module
//! uses a **group-sequential design with alpha spending** (Lan & DeMets 1983): the total false-alarm
//! probability `α` is spent over the looks by the Pocock-type function `α(τ) = α · ln(1 + (e − 1)τ)`,
//! `τ = n / max` the information fraction of a look with `n` repetitions per side. The two-sided
//! boundaries `c_k` on the z scale are computed by recursive numerical integration of the joint
//! distribution of the sequential statistics (Armitage, McPherson & Rowe 1969), so that the
//! probability of first crossing at look `k` under "no change" is exactly the spent increment. At each
//! look the Welch t statistic of the log ratio is compared at the nominal level `2(1 − Φ(c_k))` (the
//! "significance level approach" of Jennison & Turnbull 2000, §11.4), and the interval reported is the
//! corresponding **repeated confidence interval**, which covers the true ratio at every look at once
//! with probability about `1 − α`.
//!
//! Stopping for a narrow interval never adds a false alarm (it only removes later looks), so the run
//! loop may also stop once every interval is narrower than the user's target.

use super::RatioCi;
use super::compare::SampleLevel;
use super::compare::{Comparison, Verdict, judge, log_delta_ratio_ci};
use super::power::{DetectableEffect, RepetitionsNeeded, SideNoise, detectable_effect, side_noise};
use super::{Direction, check_confidence, normal_cdf, normal_quantile};
use crate::error::{Error, Result};

/// Grid points per look in the recursive integration.
const GRID: usize = 201;

/// When to stop adding rounds: at least `min` and at most `max` repetitions per side, until the
/// interval is decisive or its half-width is at most `until`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SequentialDesign {
    /// Repetitions per side of the first look (≥ 2).
    pub min: usize,
    /// Most repetitions per side (≥ `min`); the last look.
    pub max: usize,
    /// Two-sided confidence level; `1 − confidence` is the total false-alarm probability over all
    /// looks.
    pub confidence: f64,
}

impl SequentialDesign {
    /// A design with looks at `min, min + 1, …, max` repetitions per side.
    pub fn new(min: usize, max: usize, confidence: f64) -> Result<SequentialDesign> {
        check_confidence(confidence)?;
        if min < 2 || max < min {
            return Err(Error::Other(format!(
                "repetitions: min {min} and max {max} must satisfy 2 <= min <= max (e.g. min = 3, max = 30)"
            )));
        }
        Ok(SequentialDesign { min, max, confidence })
    }

    /// Total false-alarm probability `α = 1 − confidence`.
    pub fn alpha(&self) -> f64 {
        1.0 - self.confidence
    }

    /// The Pocock-type spending function `α · ln(1 + (e − 1)τ)`: the false-alarm probability spent up
    /// to information fraction `τ`.
    pub fn spent(&self, tau: f64) -> f64 {
        self.alpha() * (1.0 + (std::f64::consts::E - 1.0) * tau.clamp(0.0, 1.0)).ln()
    }

    /// The design with its boundaries computed (once per design in a process: the integration takes
    /// a while, and explain's search asks for the same design in every search).
    pub fn plan(&self) -> SequentialPlan {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        type Boundaries = HashMap<(usize, usize, u64), Vec<f64>>;
        static CACHE: OnceLock<Mutex<Boundaries>> = OnceLock::new();
        let key = (self.min, self.max, self.confidence.to_bits());
        let cache = CACHE.get_or_init(Default::default);
        if let Some(b) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return SequentialPlan { design: *self, boundaries: b };
        }
        let looks: Vec<f64> = (self.min..=self.max).map(|n| n as f64 / self.max as f64).collect();
        let b = boundaries(&looks, |t| self.spent(t));
        if let Ok(mut c) = cache.lock() {
            c.insert(key, b.clone());
        }
        SequentialPlan { design: *self, boundaries: b }
    }
}

/// A [`SequentialDesign`] with its two-sided z-scale boundaries `c_k` for the looks at `min..=max`
/// repetitions per side.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SequentialPlan {
    /// The design.
    pub design: SequentialDesign,
    /// `c_k`, one per look, for `min, min + 1, …, max` repetitions per side.
    pub boundaries: Vec<f64>,
}

impl SequentialPlan {
    /// The nominal two-sided level at the look with `n` repetitions per side (`n` is clamped to
    /// `min..=max`): `2(1 − Φ(c_k))`.
    pub fn nominal_alpha(&self, n: usize) -> f64 {
        let k = n.clamp(self.design.min, self.design.max) - self.design.min;
        2.0 * (1.0 - normal_cdf(self.boundaries[k]))
    }
}

/// Boundaries for looks at information fractions `looks` (increasing, in (0, 1]) with spending
/// function `spend`, by recursive integration on the score scale `S = Z·√τ` (a Brownian motion).
fn boundaries(looks: &[f64], spend: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(looks.len());
    // Density of S on the continuation region of the previous look, as (points, weights·density).
    let mut grid: Vec<(f64, f64)> = Vec::new();
    let (mut prev_tau, mut prev_spent) = (0.0, 0.0);
    for (k, &tau) in looks.iter().enumerate() {
        let inc = (spend(tau) - prev_spent).max(1e-300);
        let c = if k == 0 {
            normal_quantile(1.0 - inc / 2.0)
        } else {
            let sd = (tau - prev_tau).sqrt();
            let exit = |b: f64| -> f64 {
                grid.iter().map(|&(x, w)| w * (normal_cdf((-b - x) / sd) + 1.0 - normal_cdf((b - x) / sd))).sum()
            };
            // Bisection for the score boundary b with exit(b) = inc.
            let (mut lo, mut hi) = (0.0, 40.0 * tau.sqrt());
            for _ in 0..80 {
                let mid = 0.5 * (lo + hi);
                if exit(mid) > inc { lo = mid } else { hi = mid }
            }
            0.5 * (lo + hi) / tau.sqrt()
        };
        out.push(c);
        // The density at this look on |s| < c√τ, for the next look.
        let b = c * tau.sqrt();
        let h = 2.0 * b / (GRID - 1) as f64;
        let weight = |i: usize| if i == 0 || i == GRID - 1 { 0.5 * h } else { h };
        let next: Vec<(f64, f64)> = (0..GRID)
            .map(|i| {
                let s = -b + h * i as f64;
                let density = if k == 0 {
                    (-(s * s) / (2.0 * tau)).exp() / (std::f64::consts::TAU * tau).sqrt()
                } else {
                    let var = tau - prev_tau;
                    grid.iter().map(|&(x, w)| w * (-((s - x) * (s - x)) / (2.0 * var)).exp()).sum::<f64>()
                        / (std::f64::consts::TAU * var).sqrt()
                };
                (s, weight(i) * density)
            })
            .collect();
        grid = next;
        prev_tau = tau;
        prev_spent += inc;
    }
    out
}

/// Why the run loop stops (or not) after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Look {
    /// Add another round.
    Continue,
    /// The change is called (the repeated interval excludes 1 and the change exceeds the band), or
    /// the repeated interval lies within the noise band (no change beyond it can be called).
    Decisive,
    /// The repeated interval is narrower than the target (half-width ≤ `until`).
    Narrow,
    /// `max` repetitions were reached.
    Exhausted,
}

/// The repeated confidence interval of `mean(candidate) / mean(baseline)` at the look with
/// `min(n_b, n_c)` repetitions per side: the log-delta Welch interval (see
/// [`super::compare::ratio_ci`]) at the look's nominal level. Method [`super::CiMethod::LogDeltaWelch`],
/// confidence the nominal one of the look.
pub fn sequential_ratio_ci(baseline: &[f64], candidate: &[f64], plan: &SequentialPlan) -> Result<RatioCi> {
    let nominal = plan.nominal_alpha(baseline.len().min(candidate.len()));
    log_delta_ratio_ci(baseline, candidate, 1.0 - nominal, false)
}

/// The smallest changes the repeated interval of [`sequential_ratio_ci`] calls with probability
/// `power` at the look with `min(n_b, n_c)` repetitions per side, for samples with the noise of
/// `baseline` and `candidate`: the log-delta Welch interval at the look's nominal level (wider than the
/// fixed-sample interval of the same repetitions, so adaptive experiments state a larger figure).
pub fn sequential_detectable_effect(
    baseline: &[f64],
    candidate: &[f64],
    plan: &SequentialPlan,
    noise_band: f64,
    power: f64,
) -> Result<DetectableEffect> {
    let b = side_noise("baseline", baseline, SampleLevel::Repetitions)?;
    let c = side_noise("candidate", candidate, SampleLevel::Repetitions)?;
    let nominal = plan.nominal_alpha(baseline.len().min(candidate.len()));
    // `Intervals` selects the Welch log-delta shape whatever the number of samples: the repeated
    // interval is that one (never the bootstrap), here with the sizes of repetitions.
    detectable_effect(SampleLevel::Intervals, b, c, 1.0 - nominal, noise_band, power)
}

/// The repetitions per side an adaptive experiment of `plan` needs to call changes of `±target` with
/// probability `power`: the first look `n` in `min..=max` at which the repeated interval (the
/// Welch log-delta interval at that look's nominal level, as [`sequential_detectable_effect`]) detects
/// `±target` for sides with these coefficients of variation; [`RepetitionsNeeded::MoreThan`]`(max)`
/// when no look of the design does. This is the figure for the design that produced the row, larger
/// than the fixed-sample [`super::repetitions_for`] (every look is at a stricter level).
pub fn sequential_repetitions_for(
    cv_baseline: f64,
    cv_candidate: f64,
    target: f64,
    plan: &SequentialPlan,
    noise_band: f64,
    power: f64,
) -> Result<RepetitionsNeeded> {
    if let Some(never) = super::power::out_of_reach(target, noise_band)? {
        return Ok(never);
    }
    for n in plan.design.min..=plan.design.max {
        let (b, c) = (SideNoise::repetitions(cv_baseline, n), SideNoise::repetitions(cv_candidate, n));
        let level = 1.0 - plan.nominal_alpha(n);
        if detectable_effect(SampleLevel::Intervals, b, c, level, noise_band, power)?.either_way() <= target {
            return Ok(RepetitionsNeeded::PerSide(n));
        }
    }
    Ok(RepetitionsNeeded::MoreThan(plan.design.max))
}

/// The comparison at a look: the verdict of [`super::compare()`] with the repeated interval, and
/// whether to stop. `until` is the target half-width (a fraction, e.g. 0.03 for ±3 %).
pub fn sequential_look(
    baseline: &[f64],
    candidate: &[f64],
    plan: &SequentialPlan,
    direction: Direction,
    noise_band: f64,
    until: f64,
) -> Result<(Comparison, Look)> {
    let ci = sequential_ratio_ci(baseline, candidate, plan)?;
    let cmp = judge(ci, direction, noise_band);
    let within_band = cmp.ci.lo >= 1.0 - noise_band && cmp.ci.hi <= 1.0 + noise_band && noise_band > 0.0;
    let half = (cmp.ci.hi / cmp.ci.ratio - 1.0).max(1.0 - cmp.ci.lo / cmp.ci.ratio);
    let n = baseline.len().min(candidate.len());
    let look = if cmp.verdict != Verdict::NoSignificantChange || within_band {
        Look::Decisive
    } else if half <= until {
        Look::Narrow
    } else if n >= plan.design.max {
        Look::Exhausted
    } else {
        Look::Continue
    };
    Ok((cmp, look))
}

/// The outcome of simulated adaptive experiments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulatedDesign {
    /// Share of experiments with a verdict in the direction of the true change (for no change: any
    /// verdict, i.e. the false-alarm rate).
    pub called: f64,
    /// Mean repetitions per side used.
    pub mean_repetitions: f64,
}

/// Runs `sims` seeded adaptive experiments: normal repetitions with coefficient of variation `cv`
/// on both sides and a true relative change `change`, one repetition per side per round, looking
/// after every round from `plan.design.min` on and stopping as [`sequential_look`] says.
pub fn simulate(
    plan: &SequentialPlan,
    cv: f64,
    change: f64,
    noise_band: f64,
    until: f64,
    sims: u64,
    seed: u64,
) -> Result<SimulatedDesign> {
    let want = if change > 0.0 {
        Some(Verdict::Faster)
    } else if change < 0.0 {
        Some(Verdict::Slower)
    } else {
        None
    };
    let (mut called, mut reps) = (0u64, 0usize);
    for s in 0..sims {
        let mut rng = super::seeded_rng(seed.wrapping_add(s));
        let (mut b, mut c) = (Vec::new(), Vec::new());
        let m = 1.0 + change;
        loop {
            b.push(1.0 + cv * gaussian(&mut rng));
            c.push(m * (1.0 + cv * gaussian(&mut rng)));
            if b.len() < plan.design.min {
                continue;
            }
            let (cmp, look) = sequential_look(&b, &c, plan, Direction::HigherIsBetter, noise_band, until)?;
            if look != Look::Continue {
                let hit = match want {
                    Some(v) => cmp.verdict == v,
                    None => cmp.verdict != Verdict::NoSignificantChange,
                };
                called += u64::from(hit);
                reps += b.len();
                break;
            }
        }
    }
    Ok(SimulatedDesign { called: called as f64 / sims as f64, mean_repetitions: reps as f64 / sims as f64 })
}

/// One standard normal draw (Box–Muller).
fn gaussian(rng: &mut impl rand::RngExt) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
