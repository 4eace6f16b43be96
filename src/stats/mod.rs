//! Pure statistics: slices in, numbers out.
//!
//! Nothing here reads files, clocks or the environment; every randomised procedure (bootstrap,
//! permutation test) takes a seed and is deterministic given it. The methods and their references are
//! described in `docs/statistics.md`.
//!
//! - [`summary`]: mean, median, standard deviation, quantiles, coefficient of variation, min/max.
//! - [`bootstrap`]: ratio of means with a bootstrap confidence interval over repetitions.
//! - [`autocorr`]: autocorrelation, effective sample size and a within-run CI of a mean.
//! - [`fdr`]: Benjamini–Hochberg adjusted p values (q) over many tests at once.
//! - [`compare`](mod@compare): the Faster / Slower / NoSignificantChange verdict and the A/A noise band.
//! - [`calibrate`]: a host's noise (CV and noise band) from an A/A pair, for `versus calibrate`.
//! - [`power`]: the smallest change a comparison could detect, and the repetitions that would detect one.
//! - [`sequential`]: adaptive repetitions — a group-sequential design with alpha spending.
//! - [`stability`](mod@stability): min / max / CV of a run's 1-s rates and its stall intervals.
//! - [`changepoint`]: E-divisive means change-point detection over a version series.
//! - [`blocked`]: a ratio over a fleet from per-host (blocked) paired differences.
//! - [`outlier`]: whether a host's canary is an outlier against its host class.

pub mod autocorr;
pub mod blocked;
pub mod bootstrap;
pub mod calibrate;
pub mod changepoint;
pub mod compare;
pub mod fdr;
pub mod outlier;
pub mod power;
pub mod sequential;
pub mod stability;
pub mod summary;

pub use autocorr::{EffectiveSampleSize, MeanCi, autocorrelation, effective_sample_size, mean_ci_within_run};
pub use bootstrap::{BootstrapConfig, BootstrapMethod, RatioCi, ratio_of_means_ci};
pub use changepoint::{ChangePoint, ChangePointConfig, detect_change_points, relative_to_first};
pub use compare::{
    CompareConfig, Comparison, DEFAULT_NOISE_BAND, MIN_BOOTSTRAP_REPETITIONS, SampleLevel, Verdict, compare,
    compare_repetitions_welch, noise_band_from_aa, ratio_ci,
};
pub use power::{
    DEFAULT_POWER, DetectableEffect, IntervalShape, RepetitionsNeeded, SideNoise, detectable_effect,
    detectable_effect_of, interval_shape, power_at, repetitions_for,
};
pub use sequential::{
    Look, SequentialDesign, SequentialPlan, sequential_detectable_effect, sequential_look, sequential_ratio_ci,
    sequential_repetitions_for,
};
pub use stability::{Stability, StallRule, stability};
pub use summary::{
    Summary, coefficient_of_variation, mad, max, mean, median, min, quantile, std_dev, summarize, variance,
};

use crate::error::{Error, Result};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Whether a bigger value of the metric is an improvement (throughput) or a regression (latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    /// Bigger is better: transactions or queries per second.
    HigherIsBetter,
    /// Smaller is better: latency, CPU or I/O per operation.
    LowerIsBetter,
}

/// Which variation a confidence interval accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CiKind {
    /// Built from independent repetitions (fresh server start per sample): includes the
    /// between-run variance that dominates benchmark noise.
    BetweenRepetitions,
    /// Built from the 1-s intervals of a single run per side: reflects only the noise within that
    /// run, not the variation between server restarts, and is therefore too narrow for a verdict
    /// about the versions in general. Say so when reporting it.
    WithinRunOnly,
}

/// How the interval of a [`RatioCi`] was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CiMethod {
    /// Two-sample bootstrap over repetitions (see [`bootstrap`]).
    Bootstrap {
        /// Percentile or BCa.
        method: BootstrapMethod,
        /// Whether the small-sample expansion of the nominal level was applied.
        expanded: bool,
    },
    /// Delta method on the log of the ratio over repetitions, with a Welch–Satterthwaite t quantile;
    /// used for fewer than [`compare::MIN_BOOTSTRAP_REPETITIONS`] repetitions per side (see
    /// [`compare::ratio_ci`]).
    LogDeltaWelch,
    /// Delta method on the log of the ratio, with standard errors from the autocorrelation-corrected
    /// effective sample sizes and a Welch–Satterthwaite t quantile (see [`compare::ratio_ci`]).
    LogDeltaAutocorrelated,
    /// Paired log differences per block, averaged per host, over three hosts or more (see
    /// [`blocked`]).
    BlockedHosts,
    /// Paired log differences per block, on one or two hosts (see [`blocked`]).
    BlockedBlocks,
}

/// Returns an error unless `xs` has at least `min_len` values, all finite.
pub(crate) fn check_sample(what: &str, xs: &[f64], min_len: usize) -> Result<()> {
    if xs.len() < min_len {
        return Err(Error::Other(format!("{what}: {} value(s), need at least {min_len}", xs.len())));
    }
    if let Some(i) = xs.iter().position(|x| !x.is_finite()) {
        return Err(Error::Other(format!("{what}: value #{} is {} (not a finite number)", i + 1, xs[i])));
    }
    Ok(())
}

/// Default two-sided confidence level of intervals, verdicts and adaptive looks (`--confidence`).
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// A confidence level as the percentage that headings and plans print: 0.95 → "95", 0.999 → "99.9".
pub fn level_percent(confidence: f64) -> String {
    let p = format!("{:.1}", confidence * 100.0);
    p.strip_suffix(".0").map(str::to_string).unwrap_or(p)
}

/// Returns an error unless `confidence` is strictly between 0 and 1.
pub(crate) fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(Error::Other(format!("confidence level {confidence} must be strictly between 0 and 1 (e.g. 0.95)")))
    }
}

/// The seeded generator used by every randomised procedure here.
pub(crate) fn seeded_rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Standard normal cumulative distribution function.
pub(crate) fn normal_cdf(z: f64) -> f64 {
    Normal::standard().cdf(z)
}

/// Standard normal quantile function.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// Two-sided p value of a t statistic with `df` degrees of freedom (an infinite or huge `df` gives the
/// normal's); 1 for a NaN statistic.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return 1.0;
    }
    let tail = if !df.is_finite() || df > 1e7 {
        Normal::standard().sf(t.abs())
    } else {
        match StudentsT::new(0.0, 1.0, df.max(1e-3)) {
            Ok(d) => d.sf(t.abs()),
            Err(_) => Normal::standard().sf(t.abs()),
        }
    };
    (2.0 * tail).clamp(0.0, 1.0)
}

/// Quantile of Student's t with `df` degrees of freedom (`df` ≥ some tiny positive value; a huge or
/// infinite `df` gives the normal quantile).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if !df.is_finite() || df > 1e7 {
        return normal_quantile(p);
    }
    match StudentsT::new(0.0, 1.0, df.max(1e-3)) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => normal_quantile(p),
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Simulated data for the tests of this module.
    use proptest::test_runner::{Config, RngSeed};
    use rand::RngExt;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Proptest settings for this module: `cases` cases from a fixed seed, so that the statistical
    /// properties (which hold with high probability, not always) give the same verdict on every run,
    /// and no regression files are written. `PROPTEST_CASES` and `PROPTEST_RNG_SEED` still override
    /// both, to explore other inputs.
    pub fn proptest_config(cases: u32) -> Config {
        let mut config = Config { failure_persistence: None, ..Config::default() };
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = cases;
        }
        if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
            config.rng_seed = RngSeed::Fixed(0x5EED_CA5E);
        }
        config
    }

    /// One standard normal draw (Box–Muller).
    pub fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// `n` normal draws with the given mean and standard deviation.
    pub fn normals(rng: &mut Xoshiro256PlusPlus, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..n).map(|_| mean + sd * normal(rng)).collect()
    }

    /// A stationary AR(1) series `x_t = mean + e_t`, `e_t = φ e_(t−1) + σ·sqrt(1 − φ²)·z_t` with
    /// marginal standard deviation `sd`.
    pub fn ar1(rng: &mut Xoshiro256PlusPlus, n: usize, mean: f64, sd: f64, phi: f64) -> Vec<f64> {
        let mut e = sd * normal(rng);
        let innov = sd * (1.0 - phi * phi).sqrt();
        (0..n)
            .map(|_| {
                let x = mean + e;
                e = phi * e + innov * normal(rng);
                x
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_helpers() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_cdf(1.959964) - 0.975).abs() < 1e-6);
        // t(0.975, 4) = 2.776445
        assert!((t_quantile(0.975, 4.0) - 2.776445).abs() < 1e-3);
        assert!((t_quantile(0.975, f64::INFINITY) - 1.959964).abs() < 1e-5);
        assert!((t_two_sided_p(1.959964, f64::INFINITY) - 0.05).abs() < 1e-6);
        assert!((t_two_sided_p(-2.776445, 4.0) - 0.05).abs() < 1e-5);
        assert_eq!(t_two_sided_p(f64::NAN, 4.0), 1.0);
    }

    #[test]
    fn levels_print_as_percentages_without_a_trailing_zero() {
        let cases = [(0.95, "95"), (0.99, "99"), (0.999, "99.9"), (0.9, "90"), (0.995, "99.5"), (0.99999, "100")];
        for (level, text) in cases {
            assert_eq!(level_percent(level), text, "{level}");
        }
    }

    #[test]
    fn validation_messages() {
        let e = check_sample("baseline", &[1.0], 2).unwrap_err().to_string();
        assert!(e.contains("baseline") && e.contains("at least 2"), "{e}");
        let e = check_sample("candidate", &[1.0, f64::NAN], 1).unwrap_err().to_string();
        assert!(e.contains("#2"), "{e}");
        assert!(check_confidence(1.0).is_err() && check_confidence(0.95).is_ok());
    }
}
