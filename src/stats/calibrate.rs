//! A host's noise from an A/A experiment (`versus calibrate`): the between-repetition coefficient of
//! variation and the noise band that `compare`, `run` and `explain` then use for that host class and
//! workload instead of [`super::DEFAULT_NOISE_BAND`].
//!
//! The input is one A/A pair: the per-repetition values of the same target measured twice, interleaved
//! (`a` and `a_again`). The band is [`super::noise_band_from_aa`]'s rule — the largest relative change
//! that this A/A data cannot tell apart from noise, `max(hi − 1, 1 − lo)` of the interval of
//! `mean(a_again) / mean(a)` at the given confidence, by the interval method a comparison of that many
//! repetitions uses — so it includes both the observed A/A difference (a shift between restarts that
//! the repetitions do not average out) and the uncertainty of that difference at this sample size. A
//! band measured with as many repetitions as the real comparisons have is the one that fits them.
//!
//! The CV is pooled on the log scale, `√((s²(ln a) + s²(ln a_again)) / 2)`, which is the relative
//! spread of one repetition (`≈ s / x̄` for small spreads) and is what [`super::power`] needs.

use super::bootstrap::BootstrapConfig;
use super::compare::{SampleLevel, ratio_ci};
use super::summary::variance;
use super::{RatioCi, check_confidence, check_sample};
use crate::error::{Error, Result};

/// Fewest repetitions per side of a calibration: below this the band is mostly the uncertainty of
/// three numbers.
pub const MIN_CALIBRATION_REPETITIONS: usize = 3;

/// The noise of one workload on one host, measured by an A/A pair.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseEstimate {
    /// Repetitions per side.
    pub repetitions: usize,
    /// Pooled between-repetition coefficient of variation (a fraction).
    pub cv: f64,
    /// The A/A ratio `mean(a_again) / mean(a)` with its interval.
    pub ci: RatioCi,
    /// The noise band: `max(hi − 1, 1 − lo, 0)` (a fraction).
    pub band: f64,
}

/// Estimates the noise of an A/A pair (see the module documentation). `a` and `a_again` need
/// [`MIN_CALIBRATION_REPETITIONS`] finite values > 0 each.
pub fn calibrate(a: &[f64], a_again: &[f64], cfg: &BootstrapConfig) -> Result<NoiseEstimate> {
    check_confidence(cfg.confidence)?;
    for (what, xs) in [("A", a), ("A again", a_again)] {
        check_sample(what, xs, MIN_CALIBRATION_REPETITIONS)?;
        if xs.iter().any(|x| *x <= 0.0) {
            return Err(Error::Other(format!("{what}: every value must be > 0 to estimate a relative noise")));
        }
    }
    let log_var = |xs: &[f64]| variance(&xs.iter().map(|x| x.ln()).collect::<Vec<_>>()).unwrap_or(0.0);
    let cv = ((log_var(a) + log_var(a_again)) / 2.0).sqrt();
    let ci = ratio_ci(a, a_again, SampleLevel::Repetitions, cfg)?;
    let band = (ci.hi - 1.0).max(1.0 - ci.lo).max(0.0);
    Ok(NoiseEstimate { repetitions: a.len().min(a_again.len()), cv, ci, band })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::seeded_rng;
    use crate::stats::testutil::{normals, proptest_config};
    use proptest::prelude::*;

    fn cfg(seed: u64) -> BootstrapConfig {
        BootstrapConfig { resamples: 1000, seed, ..BootstrapConfig::default() }
    }

    /// `n` repetitions of a workload with between-run CV `cv` around `mean`.
    fn reps(rng: &mut rand_xoshiro::Xoshiro256PlusPlus, n: usize, mean: f64, cv: f64) -> Vec<f64> {
        normals(rng, n, mean, mean * cv).into_iter().map(|x| x.max(mean * 0.05)).collect()
    }

    #[test]
    fn refuses_too_few_or_non_positive_values() {
        assert!(calibrate(&[1.0, 2.0], &[1.0, 2.0, 3.0], &cfg(1)).is_err());
        let e = calibrate(&[1.0, 2.0, 0.0], &[1.0, 2.0, 3.0], &cfg(1)).unwrap_err().to_string();
        assert!(e.contains("> 0"), "{e}");
        assert!(calibrate(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], &BootstrapConfig { confidence: 1.0, ..cfg(1) }).is_err());
    }

    /// The estimated CV is the simulated one: over 200 seeded A/A pairs of 10 repetitions at CV 3 %,
    /// the mean estimate lies within 10 % of 3 % (the pooled log variance is nearly unbiased).
    #[test]
    fn cv_estimate_matches_the_simulated_noise() {
        let mut rng = seeded_rng(11);
        let mut total = 0.0;
        for i in 0..200 {
            let (a, b) = (reps(&mut rng, 10, 1000.0, 0.03), reps(&mut rng, 10, 1000.0, 0.03));
            total += calibrate(&a, &b, &cfg(i)).unwrap().cv;
        }
        let mean_cv = total / 200.0;
        assert!((mean_cv - 0.03).abs() < 0.003, "mean CV estimate {mean_cv}");
    }

    /// More repetitions give a narrower band (less of it is the uncertainty of the A/A difference), and
    /// a noisier host a wider one; a systematic A/A shift (e.g. between restarts) is inside the band.
    #[test]
    fn band_follows_noise_repetitions_and_systematic_shifts() {
        let mean_band = |n: usize, cv: f64, shift: f64, seed: u64| -> f64 {
            let mut rng = seeded_rng(seed);
            let bands: Vec<f64> = (0..100)
                .map(|i| {
                    let a = reps(&mut rng, n, 1000.0, cv);
                    let b = reps(&mut rng, n, 1000.0 * (1.0 + shift), cv);
                    calibrate(&a, &b, &cfg(i)).unwrap().band
                })
                .collect();
            bands.iter().sum::<f64>() / bands.len() as f64
        };
        let (b5, b20) = (mean_band(5, 0.03, 0.0, 1), mean_band(20, 0.03, 0.0, 2));
        assert!(b20 < 0.7 * b5, "20 repetitions {b20} vs 5 repetitions {b5}");
        let noisy = mean_band(5, 0.10, 0.0, 3);
        assert!(noisy > 2.5 * b5, "CV 10 % {noisy} vs CV 3 % {b5}");
        let shifted = mean_band(20, 0.01, 0.05, 4);
        assert!(shifted > 0.05, "a 5 % systematic shift lies inside the band: {shifted}");
    }

    proptest! {
        #![proptest_config(proptest_config(64))]

        /// The band covers the observed A/A difference and is scale-free (tps or qps, ×1000 alike).
        #[test]
        fn band_covers_the_observed_difference_and_is_scale_free(
            a in proptest::collection::vec(50.0f64..150.0, 3..12),
            b in proptest::collection::vec(50.0f64..150.0, 3..12),
            k in 0.01f64..1000.0,
        ) {
            let e = calibrate(&a, &b, &cfg(5)).unwrap();
            prop_assert!(e.band + 1e-12 >= (e.ci.ratio - 1.0).abs());
            prop_assert!(e.cv >= 0.0 && e.band >= 0.0);
            let scaled = |xs: &[f64]| xs.iter().map(|x| x * k).collect::<Vec<_>>();
            let s = calibrate(&scaled(&a), &scaled(&b), &cfg(5)).unwrap();
            prop_assert!((s.cv - e.cv).abs() < 1e-9 && (s.band - e.band).abs() < 1e-6);
        }
    }
}
