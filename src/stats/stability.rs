//! Stability of one run's 1-s rates: range, coefficient of variation and stall intervals, as in
//! "varies from 8758 to 10299 tps in 1-second measurements".

use super::check_sample;
use super::summary::{coefficient_of_variation, mad, max, mean, median, min, std_dev};
use crate::error::{Error, Result};

/// Scale factor that turns the MAD of normal data into an estimate of its standard deviation.
const MAD_TO_SD: f64 = 1.4826;

/// When an interval counts as a stall; see [`stability`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StallRule {
    /// Robust z threshold `k`: an interval must lie more than `k` robust standard deviations
    /// (`1.4826 · MAD`) below the median (default 3.5, Iglewicz & Hoaglin's outlier cut-off).
    pub k_mad: f64,
    /// ... and below this fraction of the median (default 0.9), so that a very steady run does not
    /// report 1 % dips as stalls.
    pub max_fraction_of_median: f64,
}

impl Default for StallRule {
    fn default() -> Self {
        StallRule { k_mad: 3.5, max_fraction_of_median: 0.9 }
    }
}

/// Stability figures of one run's interval rates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stability {
    /// Number of intervals.
    pub n: usize,
    /// Lowest interval rate.
    pub min: f64,
    /// Highest interval rate.
    pub max: f64,
    /// Mean of the interval rates.
    pub mean: f64,
    /// Median of the interval rates.
    pub median: f64,
    /// Sample standard deviation of the rates (0 for a single interval).
    pub std_dev: f64,
    /// Coefficient of variation `std_dev / mean` (0 for a single interval; `None` for a zero mean).
    pub cv: Option<f64>,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Rates strictly below this value are stalls.
    pub stall_threshold: f64,
    /// Indices (0-based, in input order) of the stall intervals.
    pub stalls: Vec<usize>,
}

/// Min, max, mean, median, CV and stall intervals of a run's per-interval rates.
///
/// Stall rule: with `m` the median and `σ̂ = 1.4826 · MAD` a robust standard deviation, interval `i`
/// is a stall when `rate[i] < min(m − k·σ̂, f·m)` (`k = rule.k_mad`, `f = rule.max_fraction_of_median`).
/// The first bound makes the threshold adapt to the run's own noise and ignores the stalls
/// themselves (median and MAD are barely moved by a few low values); the second keeps a very steady
/// run (MAD near 0) from reporting tiny dips. Only drops are flagged: a burst above the median is not
/// a stall.
///
/// Errors: an empty series, non-finite or negative rates, or a rule with negative `k` or a fraction
/// outside `[0, 1]`.
pub fn stability(rates: &[f64], rule: &StallRule) -> Result<Stability> {
    check_sample("interval rates", rates, 1)?;
    if rates.iter().any(|&r| r < 0.0) {
        return Err(Error::Other("interval rates: a rate cannot be negative".into()));
    }
    let k_ok = rule.k_mad >= 0.0 && rule.k_mad.is_finite();
    if !(k_ok && (0.0..=1.0).contains(&rule.max_fraction_of_median)) {
        return Err(Error::Other(format!(
            "stall rule: k = {} must be >= 0 and the fraction of the median = {} must lie in [0, 1]",
            rule.k_mad, rule.max_fraction_of_median
        )));
    }
    let m = median(rates).unwrap_or(0.0);
    let d = mad(rates).unwrap_or(0.0);
    let stall_threshold = (m - rule.k_mad * MAD_TO_SD * d).min(rule.max_fraction_of_median * m);
    let stalls = rates.iter().enumerate().filter(|&(_, &r)| r < stall_threshold).map(|(i, _)| i).collect();
    let sd = std_dev(rates).unwrap_or(0.0);
    let mu = mean(rates).unwrap_or(0.0);
    Ok(Stability {
        n: rates.len(),
        min: min(rates).unwrap_or(0.0),
        max: max(rates).unwrap_or(0.0),
        mean: mu,
        median: m,
        std_dev: sd,
        cv: if rates.len() < 2 { (mu != 0.0).then_some(0.0) } else { coefficient_of_variation(rates) },
        mad: d,
        stall_threshold,
        stalls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::seeded_rng;
    use crate::stats::testutil::{ar1, normals};
    use proptest::prelude::*;
    use rand::RngExt;

    #[test]
    fn finds_injected_stalls() {
        let mut rng = seeded_rng(11);
        let mut rates = ar1(&mut rng, 300, 9500.0, 300.0, 0.5);
        for i in [40, 41, 42, 200] {
            rates[i] = 1500.0;
        }
        let s = stability(&rates, &StallRule::default()).unwrap();
        assert_eq!(s.stalls, vec![40, 41, 42, 200]);
        assert_eq!(s.min, 1500.0);
        assert!(s.cv.unwrap() > 0.03);
    }

    #[test]
    fn steady_run_has_no_stalls() {
        // MAD is 0 here; without the fraction bound every value below the median would be a stall.
        let rates = [1000.0, 1000.0, 1000.0, 999.0, 1000.0, 998.0, 1000.0];
        let s = stability(&rates, &StallRule::default()).unwrap();
        assert_eq!(s.mad, 0.0);
        assert!(s.stalls.is_empty());
        assert_eq!((s.min, s.max), (998.0, 1000.0));
    }

    #[test]
    fn rejects_bad_input() {
        let r = StallRule::default();
        assert!(stability(&[], &r).is_err());
        assert!(stability(&[1.0, -1.0], &r).is_err());
        assert!(stability(&[1.0], &StallRule { k_mad: -1.0, ..r }).is_err());
        assert!(stability(&[1.0], &StallRule { max_fraction_of_median: 1.5, ..r }).is_err());
        let one = stability(&[5.0], &r).unwrap();
        assert_eq!((one.cv, one.std_dev, one.stalls.len()), (Some(0.0), 0.0, 0));
    }

    proptest! {
        #![proptest_config(crate::stats::testutil::proptest_config(64))]

        #[test]
        fn min_mean_max_order(rates in prop::collection::vec(0.0f64..1e5, 1..200)) {
            let s = stability(&rates, &StallRule::default()).unwrap();
            let eps = 1e-9 * s.max.max(1.0);
            prop_assert!(s.min <= s.mean + eps && s.mean <= s.max + eps);
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.stalls.iter().all(|&i| rates[i] < s.stall_threshold && rates[i] < s.median));
        }

        #[test]
        fn stalls_are_found_and_only_them(seed in any::<u64>(), n in 60usize..300, k in 1usize..6) {
            let mut rng = seeded_rng(seed);
            let mut rates = normals(&mut rng, n, 10_000.0, 200.0);
            let mut idx: Vec<usize> = (0..k).map(|_| rng.random_range(0..n)).collect();
            idx.sort_unstable();
            idx.dedup();
            for &i in &idx {
                rates[i] = 2000.0;
            }
            let s = stability(&rates, &StallRule::default()).unwrap();
            prop_assert_eq!(s.stalls, idx);
        }
    }
}
