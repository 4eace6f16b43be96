//! What a comparison could have detected: the minimum detectable effect (MDE) at a given power, and
//! the repetitions per side that would detect a given effect.
//!
//! A "no significant change" verdict is only reassuring when the experiment could have seen a change
//! of the size that matters. The MDE here is computed for the very interval and verdict rule that
//! [`super::compare()`] applies (the same standard error, the same critical value, the same noise band),
//! so that a true change of the stated size is called in about `power` of the experiments with this
//! noise and these repetitions (checked by seeded simulations in the tests).
//!
//! Model: on the log scale the estimate `ln(ratio)` is normal around the true log ratio `δ` with
//! standard error `se`; each side's estimated variance is its true one times `χ²(d)/d` (`d = n_eff − 1`),
//! independently. The interval's half-width is then `ĥ = q̂ · ŝe`, with `q̂` the critical value the
//! interval would use for those estimates (for the Welch interval it depends on the estimated degrees
//! of freedom). The verdict needs `ln(ratio) > max(ĥ, ln(1 + band))` for an increase, so the power is
//! `E[Φ((δ − max(ĥ, ln(1 + band))) / se)]`, which is solved for `δ` by bisection. The expectation is
//! taken over a grid of χ² quantiles of both sides.

use super::autocorr::effective_sample_size;
use super::compare::{MIN_BOOTSTRAP_REPETITIONS, SampleLevel};
use super::summary::{mean, std_dev};
use super::{check_confidence, check_sample, normal_cdf, normal_quantile, t_quantile};
use crate::error::{Error, Result};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The power at which detectable effects are stated (80 %, the usual planning value).
pub const DEFAULT_POWER: f64 = 0.8;

/// Most repetitions per side [`repetitions_for`] considers.
pub const MAX_PLANNED_REPETITIONS: usize = 10_000;

/// Number of χ² quantiles the expectation over the estimated standard error is taken at (one
/// standard error of the bootstrap)...
const NODES: usize = 64;

/// ... and per side for the Welch interval, whose critical value depends on both estimated variances.
const GRID: usize = 32;

/// How the interval of a comparison is built, reduced to what its width depends on.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalShape {
    /// Standard error of `ln(ratio)`: `√(cv_b²/n_b + cv_c²/n_c)` with the effective sample sizes.
    pub se_log: f64,
    /// Degrees of freedom of that standard error (Welch–Satterthwaite).
    pub df: f64,
    /// Critical value: the interval is `ratio · exp(± critical · se_log)` (approximately, for the
    /// bootstrap).
    pub critical: f64,
}

/// The noise of one side: its coefficient of variation and (effective) sample size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideNoise {
    /// Standard deviation / mean of the samples (a fraction).
    pub cv: f64,
    /// Number of samples.
    pub n: usize,
    /// Effective number of independent samples: `n` for repetitions, less for autocorrelated 1-s
    /// intervals.
    pub n_eff: f64,
}

impl SideNoise {
    /// `n` independent repetitions with coefficient of variation `cv`.
    pub fn repetitions(cv: f64, n: usize) -> SideNoise {
        SideNoise { cv, n, n_eff: n as f64 }
    }
}

/// The smallest changes a comparison could have detected.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DetectableEffect {
    /// Smallest relative increase (`ratio − 1`) called with probability `power`.
    pub increase: f64,
    /// Smallest relative decrease (`1 − ratio`) called with probability `power`; `None` when the noise
    /// band (≥ 100 %) rules every decrease out.
    pub decrease: Option<f64>,
    /// The power these figures are for (0.8).
    pub power: f64,
    /// The interval they were computed for.
    pub shape: IntervalShape,
}

impl DetectableEffect {
    /// The larger of the two figures: "changes beyond ±this could be detected". Infinite when no
    /// decrease can be called.
    pub fn either_way(&self) -> f64 {
        self.decrease.map_or(f64::INFINITY, |d| d.max(self.increase))
    }
}

/// The width of the interval [`super::ratio_ci`] would build for samples with this noise.
///
/// - Repetitions with at least [`MIN_BOOTSTRAP_REPETITIONS`] per side: the expanded bootstrap, whose
///   half-width on the log scale is about `√(n/(n−1)) · t(1 − α/2; n − 1) · √((n−1)/n) · se`, i.e.
///   `t(1 − α/2; n − 1) · se` with `n = min(n_b, n_c)`.
/// - Fewer repetitions, or 1-s intervals: the log-delta interval, `t(1 − α/2; ν) · se` with the
///   Welch–Satterthwaite `ν` (from the effective sample sizes for intervals).
///
/// In both cases `se = √(cv_b²/n_eff,b + cv_c²/n_eff,c)` and `df` is the Welch–Satterthwaite `ν`.
pub fn interval_shape(level: SampleLevel, b: SideNoise, c: SideNoise, confidence: f64) -> Result<IntervalShape> {
    check_confidence(confidence)?;
    for (what, s) in [("baseline", b), ("candidate", c)] {
        if !(s.cv >= 0.0 && s.cv.is_finite()) || s.n < 2 || s.n_eff.is_nan() || s.n_eff < 1.0 {
            return Err(Error::Other(format!(
                "{what} noise: need a finite CV >= 0 and at least 2 samples (got CV {}, n {}, n_eff {})",
                s.cv, s.n, s.n_eff
            )));
        }
    }
    let (vb, vc) = (b.cv * b.cv / b.n_eff, c.cv * c.cv / c.n_eff);
    let (db, dc) = ((b.n_eff - 1.0).max(1.0), (c.n_eff - 1.0).max(1.0));
    let v = vb + vc;
    let df = if v > 0.0 { v * v / (vb * vb / db + vc * vc / dc) } else { db + dc };
    let p = 1.0 - (1.0 - confidence) / 2.0;
    let critical = match level {
        SampleLevel::Repetitions if b.n.min(c.n) >= MIN_BOOTSTRAP_REPETITIONS => {
            t_quantile(p, (b.n.min(c.n) - 1) as f64)
        }
        _ => t_quantile(p, df),
    };
    Ok(IntervalShape { se_log: v.sqrt(), df, critical })
}

/// Quantiles `u_i` of `√(χ²(df)/df)` at the midpoints `(i + ½)/nodes`.
fn se_ratio_nodes(df: f64, nodes: usize) -> Vec<f64> {
    let mid = |i: usize| (i as f64 + 0.5) / nodes as f64;
    if df > 1e6 {
        return vec![1.0; nodes];
    }
    if df < 8.0
        && let Ok(chi) = ChiSquared::new(df)
    {
        return (0..nodes).map(|i| (chi.inverse_cdf(mid(i)) / df).max(0.0).sqrt()).collect();
    }
    // Wilson–Hilferty: χ²(ν)/ν ≈ (1 − 2/(9ν) + z √(2/(9ν)))³, accurate to well under 1 % from ν = 8.
    let k = 2.0 / (9.0 * df);
    (0..nodes)
        .map(|i| {
            let w = 1.0 - k + normal_quantile(mid(i)) * k.sqrt();
            (w.max(0.0).powi(3)).sqrt()
        })
        .collect()
}

/// `t(p; ν)` tabulated at points evenly spaced in `1/ν` over `[lo, hi]`, interpolated linearly.
struct CriticalTable {
    inv_lo: f64,
    step: f64,
    values: Vec<f64>,
}

impl CriticalTable {
    const POINTS: usize = 33;

    fn new(p: f64, lo: f64, hi: f64) -> CriticalTable {
        let (inv_lo, inv_hi) = (1.0 / hi, 1.0 / lo);
        let step = (inv_hi - inv_lo) / (Self::POINTS - 1) as f64;
        let values = (0..Self::POINTS).map(|i| t_quantile(p, 1.0 / (inv_lo + step * i as f64))).collect();
        CriticalTable { inv_lo, step, values }
    }

    fn at(&self, df: f64) -> f64 {
        if self.step <= 0.0 {
            return self.values[0];
        }
        let x = ((1.0 / df - self.inv_lo) / self.step).clamp(0.0, (Self::POINTS - 1) as f64);
        let i = (x.floor() as usize).min(Self::POINTS - 2);
        let f = x - i as f64;
        self.values[i] * (1.0 - f) + self.values[i + 1] * f
    }
}

/// The sampling model of an interval: its true standard error and, at fixed quantiles of both sides'
/// estimated variances, the half-width the interval would have in units of that standard error
/// (`critical · ŝe / se`, with the critical value recomputed from the estimated Welch degrees of
/// freedom where the interval uses them).
struct Model {
    se: f64,
    half_widths: Vec<f64>,
}

impl Model {
    fn new(level: SampleLevel, b: SideNoise, c: SideNoise, confidence: f64) -> Result<Model> {
        let shape = interval_shape(level, b, c, confidence)?;
        let (vb, vc) = (b.cv * b.cv / b.n_eff, c.cv * c.cv / c.n_eff);
        let (db, dc) = ((b.n_eff - 1.0).max(1.0), (c.n_eff - 1.0).max(1.0));
        let v = vb + vc;
        if v == 0.0 {
            return Ok(Model { se: 0.0, half_widths: vec![0.0] });
        }
        let bootstrap = level == SampleLevel::Repetitions && b.n.min(c.n) >= MIN_BOOTSTRAP_REPETITIONS;
        let p = 1.0 - (1.0 - confidence) / 2.0;
        if bootstrap {
            // A fixed critical value: only the spread of ŝe matters, which Satterthwaite's scaled χ²
            // with the Welch degrees of freedom describes well.
            let half_widths = se_ratio_nodes(shape.df, NODES).iter().map(|u| shape.critical * u).collect();
            return Ok(Model { se: v.sqrt(), half_widths });
        }
        let (ub, uc) = (se_ratio_nodes(db, GRID), se_ratio_nodes(dc, GRID));
        // The estimated Welch degrees of freedom lie between min(d_b, d_c) and d_b + d_c; the critical
        // value is smooth in 1/ν there, so it is tabulated and interpolated.
        let table = CriticalTable::new(p, db.min(dc), db + dc);
        let mut half_widths = Vec::with_capacity(GRID * GRID);
        for x in &ub {
            for y in &uc {
                let (eb, ec) = (vb * x * x, vc * y * y);
                let e = eb + ec;
                let q = if e == 0.0 { shape.critical } else { table.at(e * e / (eb * eb / db + ec * ec / dc)) };
                half_widths.push(q * (e / v).sqrt());
            }
        }
        Ok(Model { se: v.sqrt(), half_widths })
    }

    /// Probability that a true log ratio `delta` (> 0, in the direction considered) is called, when
    /// the verdict needs `ln(ratio)` beyond both the interval's half-width and `threshold` (the noise
    /// band on the log scale).
    fn power(&self, delta: f64, threshold: f64) -> f64 {
        if self.se == 0.0 {
            return if delta > threshold { 1.0 } else { 0.0 };
        }
        let se = self.se;
        let sum: f64 = self.half_widths.iter().map(|w| normal_cdf((delta - (w * se).max(threshold)) / se)).sum();
        sum / self.half_widths.len() as f64
    }

    /// The log ratio at which [`Model::power`] reaches `power`, by bisection.
    fn solve(&self, threshold: f64, power: f64) -> f64 {
        if self.se == 0.0 {
            return threshold;
        }
        let widest = self.half_widths.iter().copied().fold(1.0, f64::max);
        let mut lo = threshold.max(0.0);
        let mut hi = lo + (widest + 10.0) * self.se;
        while self.power(hi, threshold) < power {
            hi *= 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.power(mid, threshold) < power {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= 1e-8 * hi {
                break;
            }
        }
        hi
    }
}

/// Probability that a true relative change `change` (`ratio − 1`, either sign) is called in its own
/// direction by the interval for samples with this noise and by this noise band.
pub fn power_at(
    level: SampleLevel,
    b: SideNoise,
    c: SideNoise,
    confidence: f64,
    change: f64,
    noise_band: f64,
) -> Result<f64> {
    let m = Model::new(level, b, c, confidence)?;
    Ok(if change <= -1.0 {
        1.0
    } else if change >= 0.0 {
        m.power((1.0 + change).ln(), (1.0 + noise_band).ln())
    } else if noise_band >= 1.0 {
        0.0
    } else {
        m.power(-(1.0 + change).ln(), -(1.0 - noise_band).ln())
    })
}

/// The smallest increase and decrease that the interval for samples with this noise, and the verdict
/// with this noise band, call with probability `power`.
pub fn detectable_effect(
    level: SampleLevel,
    b: SideNoise,
    c: SideNoise,
    confidence: f64,
    noise_band: f64,
    power: f64,
) -> Result<DetectableEffect> {
    if !(power > 0.0 && power < 1.0) {
        return Err(Error::Other(format!("power {power} must be strictly between 0 and 1 (e.g. 0.8)")));
    }
    if !(noise_band >= 0.0 && noise_band.is_finite()) {
        return Err(Error::Other(format!("noise band {noise_band} must be a finite fraction >= 0")));
    }
    let shape = interval_shape(level, b, c, confidence)?;
    let m = Model::new(level, b, c, confidence)?;
    let increase = m.solve((1.0 + noise_band).ln(), power).exp() - 1.0;
    let decrease = (noise_band < 1.0).then(|| 1.0 - (-m.solve(-(1.0 - noise_band).ln(), power)).exp());
    Ok(DetectableEffect { increase, decrease, power, shape })
}

/// The noise of one side's samples: CV and (effective) sample size as [`super::ratio_ci`] uses them.
pub fn side_noise(what: &str, xs: &[f64], level: SampleLevel) -> Result<SideNoise> {
    check_sample(what, xs, 2)?;
    let m = mean(xs).unwrap_or(f64::NAN);
    if m <= 0.0 {
        return Err(Error::Other(format!("{what}: the mean must be > 0 to form a ratio")));
    }
    let cv = std_dev(xs).unwrap_or(0.0) / m;
    let n_eff = match level {
        SampleLevel::Repetitions => xs.len() as f64,
        SampleLevel::Intervals => effective_sample_size(xs)?.n_eff,
    };
    Ok(SideNoise { cv, n: xs.len(), n_eff })
}

/// The detectable effect of a comparison of these samples (see [`detectable_effect`]).
pub fn detectable_effect_of(
    baseline: &[f64],
    candidate: &[f64],
    level: SampleLevel,
    confidence: f64,
    noise_band: f64,
    power: f64,
) -> Result<DetectableEffect> {
    let b = side_noise("baseline", baseline, level)?;
    let c = side_noise("candidate", candidate, level)?;
    detectable_effect(level, b, c, confidence, noise_band, power)
}

/// How many repetitions per side would detect an effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "repetitions")]
pub enum RepetitionsNeeded {
    /// This many per side (the smallest such number).
    PerSide(usize),
    /// More than [`MAX_PLANNED_REPETITIONS`] per side.
    MoreThan(usize),
    /// Never: the effect is within the noise band, which no number of repetitions can overcome.
    WithinNoiseBand,
}

/// Checks a target effect for the repetition planners: an error for one that is not a finite fraction
/// above 0, [`RepetitionsNeeded::WithinNoiseBand`] for one no number of repetitions can call.
pub(super) fn out_of_reach(target: f64, noise_band: f64) -> Result<Option<RepetitionsNeeded>> {
    if !(target > 0.0 && target.is_finite()) {
        return Err(Error::Other(format!("target effect {target} must be a finite fraction > 0")));
    }
    Ok((target <= noise_band).then_some(RepetitionsNeeded::WithinNoiseBand))
}

/// The smallest number of repetitions per side (the same on both sides) at which changes of
/// `±target` are called with probability `power`, for sides with these coefficients of variation,
/// using the interval [`super::ratio_ci`] would use at that number (log-delta Welch below
/// [`MIN_BOOTSTRAP_REPETITIONS`], the bootstrap from there).
pub fn repetitions_for(
    cv_baseline: f64,
    cv_candidate: f64,
    target: f64,
    confidence: f64,
    noise_band: f64,
    power: f64,
) -> Result<RepetitionsNeeded> {
    if let Some(never) = out_of_reach(target, noise_band)? {
        return Ok(never);
    }
    let enough = |n: usize| -> Result<bool> {
        let (b, c) = (SideNoise::repetitions(cv_baseline, n), SideNoise::repetitions(cv_candidate, n));
        Ok(detectable_effect(SampleLevel::Repetitions, b, c, confidence, noise_band, power)?.either_way() <= target)
    };
    for n in 2..MIN_BOOTSTRAP_REPETITIONS {
        if enough(n)? {
            return Ok(RepetitionsNeeded::PerSide(n));
        }
    }
    // From the bootstrap's threshold on, the detectable effect only shrinks with n.
    if !enough(MAX_PLANNED_REPETITIONS)? {
        return Ok(RepetitionsNeeded::MoreThan(MAX_PLANNED_REPETITIONS));
    }
    let (mut lo, mut hi) = (MIN_BOOTSTRAP_REPETITIONS - 1, MAX_PLANNED_REPETITIONS);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if enough(mid)? { hi = mid } else { lo = mid }
    }
    Ok(RepetitionsNeeded::PerSide(hi))
}

/// The smallest change a plan is made for: [`TARGET_EFFECT`], or 1.5 × the noise band when that is
/// larger (a change within the band is never called, however many repetitions).
pub fn target_effect(noise_band: f64) -> f64 {
    TARGET_EFFECT.max(1.5 * noise_band)
}

/// The change the "repetitions that would detect it" figure is for, unless the noise band is bigger.
pub const TARGET_EFFECT: f64 = 0.05;

#[cfg(test)]
#[path = "power_tests.rs"]
mod tests;
