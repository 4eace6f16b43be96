//! Within-run uncertainty from an autocorrelated interval series (e.g. tps of each 1-s interval).
//!
//! Consecutive 1-s rates are not independent (a flush or a purge burst spans several seconds), so
//! `s/√n` understates the error of their mean. We estimate the integrated autocorrelation time `τ`
//! with Geyer's (1992) initial monotone sequence estimator and use the effective sample size
//! `n_eff = n / τ` in place of `n`, as latte does for Cassandra runs.

use super::summary::{mean, std_dev};
use super::{CiKind, check_confidence, check_sample, t_quantile};
use crate::error::Result;

/// Sample autocorrelations `ρ₀ … ρ_max_lag` of a series (`max_lag` is capped at `n − 1`).
///
/// Uses the standard biased estimator `ρ_k = γ_k / γ₀` with
/// `γ_k = (1/n) Σ_{t<n−k} (x_t − x̄)(x_{t+k} − x̄)`, which keeps the sequence positive semi-definite.
/// For a constant series every `ρ_k` with `k ≥ 1` is reported as 0. An empty series gives an empty
/// vector.
pub fn autocorrelation(xs: &[f64], max_lag: usize) -> Vec<f64> {
    let Some(m) = mean(xs) else { return Vec::new() };
    let d: Vec<f64> = xs.iter().map(|x| x - m).collect();
    let g0 = autocovariance(&d, 0);
    (0..=max_lag.min(xs.len() - 1))
        .map(|k| {
            if k == 0 {
                1.0
            } else if g0 > 0.0 {
                autocovariance(&d, k) / g0
            } else {
                0.0
            }
        })
        .collect()
}

/// `γ_k` of already centred values (divisor `n`).
fn autocovariance(d: &[f64], k: usize) -> f64 {
    d.iter().zip(&d[k..]).map(|(a, b)| a * b).sum::<f64>() / d.len() as f64
}

/// The effective sample size of a series and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EffectiveSampleSize {
    /// Number of values in the series.
    pub n: usize,
    /// Integrated autocorrelation time `τ = 1 + 2 Σ_{k≥1} ρ_k` as estimated, floored at 1.
    pub tau: f64,
    /// `n / τ`, between 1 and `n`.
    pub n_eff: f64,
    /// Largest lag included in the sum (the truncation point of Geyer's sequence).
    pub max_lag: usize,
}

/// Effective sample size `n_eff = n / τ` of a series, with the integrated autocorrelation time
/// `τ = 1 + 2 Σ ρ_k` estimated by Geyer's (1992) initial monotone sequence estimator.
///
/// Method: form the sums of adjacent pairs `Γ_m = ρ_{2m} + ρ_{2m+1}` (`ρ₀ = 1`), which are positive
/// and decreasing for a stationary reversible series; take them while positive (initial positive
/// sequence), replace each by the minimum of itself and its predecessors (initial monotone
/// sequence), and set `τ = −1 + 2 Σ Γ_m`. The truncation stops the noisy far tail of the sample
/// autocorrelations from dominating. `τ` is floored at 1 (we never claim more than `n` independent
/// values even for a negatively correlated series) and `n_eff` at 1.
///
/// Returns an error for fewer than 2 values or non-finite values. A constant series has `n_eff = n`.
pub fn effective_sample_size(xs: &[f64]) -> Result<EffectiveSampleSize> {
    check_sample("interval series", xs, 2)?;
    let n = xs.len();
    let m = mean(xs).unwrap_or(0.0);
    let d: Vec<f64> = xs.iter().map(|x| x - m).collect();
    let g0 = autocovariance(&d, 0);
    if g0 <= 0.0 {
        return Ok(EffectiveSampleSize { n, tau: 1.0, n_eff: n as f64, max_lag: 0 });
    }
    let rho = |k: usize| if k == 0 { 1.0 } else { autocovariance(&d, k) / g0 };
    let mut sum = 0.0;
    let mut prev = f64::INFINITY;
    let mut max_lag = 0;
    let mut mm = 0;
    while 2 * mm + 1 < n {
        let gamma = rho(2 * mm) + rho(2 * mm + 1);
        if gamma <= 0.0 {
            break;
        }
        let gamma = gamma.min(prev);
        sum += gamma;
        prev = gamma;
        max_lag = 2 * mm + 1;
        mm += 1;
    }
    let tau = (2.0 * sum - 1.0).max(1.0);
    let n_eff = (n as f64 / tau).max(1.0);
    Ok(EffectiveSampleSize { n, tau, n_eff, max_lag })
}

/// A mean with a confidence interval and the effective sample size behind it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanCi {
    /// Arithmetic mean of the series.
    pub mean: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// Two-sided confidence level, e.g. 0.95.
    pub confidence: f64,
    /// Standard error of the mean, `s / √n_eff`.
    pub std_error: f64,
    /// Number of values.
    pub n: usize,
    /// Effective sample size used (see [`effective_sample_size`]).
    pub n_eff: f64,
    /// Always [`CiKind::WithinRunOnly`]: the interval says nothing about between-run variation.
    pub kind: CiKind,
}

/// Mean of one run's interval series with a confidence interval corrected for autocorrelation.
///
/// Method: `mean ± t(1 − α/2; ν) · s / √n_eff`, where `s` is the sample standard deviation (divisor
/// `n − 1`), `n_eff` comes from [`effective_sample_size`], and `ν = max(n_eff − 1, 1)`.
///
/// The result is marked [`CiKind::WithinRunOnly`]: it is the uncertainty of this run's mean given
/// this run's own fluctuations, not of the version's mean across server restarts. Drop the warm-up
/// intervals before calling; a trend inflates `τ` and (correctly) widens the interval. Short,
/// strongly autocorrelated series have their `τ` underestimated: below `n_eff` ≈ 30 the interval is
/// too narrow (see `docs/statistics.md`), so treat such results with caution.
pub fn mean_ci_within_run(xs: &[f64], confidence: f64) -> Result<MeanCi> {
    check_confidence(confidence)?;
    let ess = effective_sample_size(xs)?;
    let m = mean(xs).unwrap_or(f64::NAN);
    let se = std_dev(xs).unwrap_or(0.0) / ess.n_eff.sqrt();
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, (ess.n_eff - 1.0).max(1.0));
    Ok(MeanCi {
        mean: m,
        lo: m - t * se,
        hi: m + t * se,
        confidence,
        std_error: se,
        n: ess.n,
        n_eff: ess.n_eff,
        kind: CiKind::WithinRunOnly,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::seeded_rng;
    use crate::stats::testutil::{ar1, normals};
    use proptest::prelude::*;

    #[test]
    fn autocorrelation_of_alternating_series() {
        let xs = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let r = autocorrelation(&xs, 10);
        assert_eq!(r.len(), 6);
        assert_eq!(r[0], 1.0);
        // γ₁ = −5/6, γ₀ = 1 → ρ₁ = −5/6
        assert!((r[1] + 5.0 / 6.0).abs() < 1e-12);
        assert!(autocorrelation(&[], 3).is_empty());
        assert_eq!(autocorrelation(&[2.0, 2.0, 2.0], 2), vec![1.0, 0.0, 0.0]);
    }

    #[test]
    fn ar1_tau_matches_theory() {
        // For AR(1), τ = (1 + φ)/(1 − φ) = 19 at φ = 0.9.
        let mut rng = seeded_rng(7);
        let xs = ar1(&mut rng, 20_000, 0.0, 1.0, 0.9);
        let ess = effective_sample_size(&xs).unwrap();
        assert!((ess.tau - 19.0).abs() < 3.0, "{ess:?}");
    }

    #[test]
    fn iid_n_eff_is_close_to_n() {
        let mut ratios: Vec<f64> = (0..100)
            .map(|s| {
                let xs = normals(&mut seeded_rng(s), 300, 50.0, 2.0);
                effective_sample_size(&xs).unwrap().n_eff / 300.0
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        assert!(ratios[50] > 0.85, "median n_eff / n = {}", ratios[50]);
    }

    #[test]
    fn within_run_ci_covers_the_true_mean_of_ar1() {
        // Coverage over seeded simulations; a naive s/√n interval would cover far less at φ = 0.8.
        let mut covered = 0;
        for s in 0..200 {
            let mut rng = seeded_rng(500 + s);
            let xs = ar1(&mut rng, 300, 1000.0, 50.0, 0.8);
            let ci = mean_ci_within_run(&xs, 0.95).unwrap();
            assert_eq!(ci.kind, CiKind::WithinRunOnly);
            covered += usize::from(ci.lo <= 1000.0 && 1000.0 <= ci.hi);
        }
        assert!(covered >= 176, "covered {covered}/200");
    }

    #[test]
    fn rejects_bad_input() {
        assert!(effective_sample_size(&[1.0]).is_err());
        assert!(mean_ci_within_run(&[1.0, f64::NAN], 0.95).is_err());
        assert!(mean_ci_within_run(&[1.0, 2.0], 0.0).is_err());
    }

    proptest! {
        #![proptest_config(crate::stats::testutil::proptest_config(32))]

        #[test]
        fn n_eff_bounds_and_iid(seed in any::<u64>(), n in 200usize..600) {
            let mut rng = seeded_rng(seed);
            let xs = normals(&mut rng, n, 100.0, 5.0);
            let ess = effective_sample_size(&xs).unwrap();
            prop_assert!(ess.n_eff <= n as f64 && ess.n_eff >= 1.0);
            // At n = 200 the 1 % quantile of n_eff / n is about 0.55 (simulated) and rarer series go
            // below 0.4; `iid_n_eff_is_close_to_n` checks the typical value.
            prop_assert!(ess.n_eff >= 0.3 * n as f64, "iid n_eff {} of {}", ess.n_eff, n);
        }

        #[test]
        fn n_eff_small_for_strong_ar1(seed in any::<u64>(), n in 300usize..800) {
            let mut rng = seeded_rng(seed);
            let xs = ar1(&mut rng, n, 100.0, 5.0, 0.95);
            let ess = effective_sample_size(&xs).unwrap();
            prop_assert!(ess.n_eff <= 0.25 * n as f64, "AR(1) φ=0.95 n_eff {} of {}", ess.n_eff, n);
        }

        #[test]
        fn arbitrary_series_bounds(xs in prop::collection::vec(-1e4f64..1e4, 2..80)) {
            let ess = effective_sample_size(&xs).unwrap();
            prop_assert!(ess.n_eff >= 1.0 && ess.n_eff <= xs.len() as f64 && ess.tau >= 1.0);
            let ci = mean_ci_within_run(&xs, 0.95).unwrap();
            prop_assert!(ci.lo <= ci.mean && ci.mean <= ci.hi);
        }
    }
}
