//! Is a host's canary an outlier against its host class? The canary (a fixed CPU loop, an fsync probe)
//! measures the platform, not the database, so a value far from what the class usually gives means the
//! host was slow or disturbed, and the block measured there is re-run elsewhere. The test is the
//! modified z-score of Iglewicz and Hoaglin: `0.6745 · (x − median) / MAD` over the class's earlier
//! canaries, flagged beyond ±3.5, and only with at least [`MIN_HISTORY`] earlier values (too little
//! history flags nothing). A z-score alone is not enough: a history taken in one quiet minute has a
//! tiny MAD, and then jitter that changes no benchmark (an fsync of 117 µs against 50 µs) scores
//! z = 13. So a value must also be at least `min_ratio` times slower (or faster) than the class's
//! median — significant *and* large enough to matter, as a verdict asks of a comparison. Nor is a value
//! flagged that lies within the range the class's history has already produced: blocks were measured
//! at that speed, so a host as slow as the slowest of them is not disturbed by the class's own
//! measure (a busy CI machine gave CPU loops of 18.6–26.1 ms, and then 24.6 ms: z = 6.5, 1.27×).

use super::summary::{max, median, min};

/// Earlier canaries of a class needed before any value is flagged.
pub const MIN_HISTORY: usize = 8;

/// The modified z-score beyond which a canary is an outlier.
pub const Z_LIMIT: f64 = 3.5;

/// The verdict on one canary value.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CanaryCheck {
    /// True when the value is an outlier.
    pub outlier: bool,
    /// The modified z-score, when there was enough history.
    pub z: Option<f64>,
    /// How many earlier values it was judged against.
    pub history: usize,
    /// The value as a multiple of the history's median, when there was enough history.
    pub ratio: Option<f64>,
}

/// Judges `value` against the class's earlier canaries `history` (non-finite values are ignored): an
/// outlier when its modified z-score is beyond [`Z_LIMIT`] and it is at least `min_ratio` (≥ 1) times
/// the history's median, or at most its `1 / min_ratio`, and outside the history's range.
pub fn canary_outlier(history: &[f64], value: f64, min_ratio: f64) -> CanaryCheck {
    let clean: Vec<f64> = history.iter().copied().filter(|x| x.is_finite()).collect();
    let n = clean.len();
    if n < MIN_HISTORY || !value.is_finite() {
        return CanaryCheck { outlier: false, z: None, history: n, ratio: None };
    }
    let med = median(&clean).unwrap_or(0.0);
    let deviations: Vec<f64> = clean.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    // With more than half the history identical the MAD is 0; the mean absolute deviation
    // (scaled to the same consistency) takes over, as Iglewicz and Hoaglin suggest.
    let spread = if mad > 0.0 { mad } else { 0.7979 * deviations.iter().sum::<f64>() / n as f64 / 0.6745 };
    let z = if spread > 0.0 {
        0.6745 * (value - med) / spread
    } else if value == med {
        0.0
    } else {
        f64::INFINITY.copysign(value - med)
    };
    let ratio = value / med;
    let apart = if med > 0.0 && value > 0.0 { ratio.max(1.0 / ratio) } else { f64::INFINITY };
    let beyond_history = min(&clean).is_some_and(|lo| value < lo) || max(&clean).is_some_and(|hi| value > hi);
    let outlier = z.abs() > Z_LIMIT && apart >= min_ratio.max(1.0) && beyond_history;
    CanaryCheck { outlier, z: Some(z), history: n, ratio: ratio.is_finite().then_some(ratio) }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::stats::testutil::proptest_config;

    #[test]
    fn a_slow_host_is_flagged_and_a_usual_one_is_not() {
        let history = [100.0, 102.0, 98.0, 101.0, 99.0, 103.0, 97.0, 100.5, 99.5, 101.5];
        assert!(!canary_outlier(&history, 104.0, 1.0).outlier);
        let slow = canary_outlier(&history, 130.0, 1.25);
        assert!(slow.outlier && slow.z.unwrap() > Z_LIMIT, "{slow:?}");
        assert!(canary_outlier(&history, 60.0, 1.25).outlier);
        assert_eq!(
            canary_outlier(&history[..5], 500.0, 1.0),
            CanaryCheck { outlier: false, z: None, history: 5, ratio: None }
        );
        let flat = [5.0; 9];
        assert!(!canary_outlier(&flat, 5.0, 1.0).outlier);
        assert!(canary_outlier(&flat, 6.0, 1.0).outlier);
    }

    #[test]
    fn a_tight_history_does_not_flag_jitter_that_is_too_small_to_matter() {
        // The CI failure this guards against: fsync medians of one quiet minute, then 117 µs.
        let history = [50.0, 51.0, 49.5, 52.0, 50.5, 48.0, 51.5, 50.0];
        let jitter = canary_outlier(&history, 116.9, 3.0);
        assert!(jitter.z.unwrap() > 10.0 && !jitter.outlier, "{jitter:?}");
        assert!(canary_outlier(&history, 116.9, 1.0).outlier, "the z-score alone flags it");
        assert!(canary_outlier(&history, 160.0, 3.0).outlier);
        assert!(canary_outlier(&history, 15.0, 3.0).outlier, "three times faster is flagged too");
        assert!(!canary_outlier(&history, 18.0, 3.0).outlier);
        // The ratio alone flags nothing: 4× the median of a wide history is not beyond z.
        let wide = [10.0, 100.0, 30.0, 300.0, 20.0, 200.0, 50.0, 500.0];
        assert!(!canary_outlier(&wide, 300.0, 3.0).outlier);
    }

    #[test]
    fn a_value_the_history_has_already_produced_is_not_flagged() {
        // The CI failure this guards against: a busy machine's history, then a quiet re-run.
        let history = [19.2, 26.1, 24.2, 20.0, 18.9, 18.6, 19.6, 19.1];
        let rerun = canary_outlier(&history, 24.6, 1.25);
        assert!(rerun.z.unwrap() > Z_LIMIT && rerun.ratio.unwrap() > 1.25 && !rerun.outlier, "{rerun:?}");
        assert!(canary_outlier(&history, 26.2, 1.25).outlier, "just beyond the slowest");
        assert!(canary_outlier(&history, 140.1, 1.25).outlier);
        assert!(!canary_outlier(&history, 18.6, 1.0).outlier);
    }

    proptest! {
        #![proptest_config(proptest_config(128))]

        #[test]
        fn the_verdict_does_not_depend_on_units(
            history in prop::collection::vec(1.0f64..1000.0, MIN_HISTORY..30),
            value in 1.0f64..2000.0,
            scale in 0.001f64..1000.0,
        ) {
            let a = canary_outlier(&history, value, 1.5);
            let scaled: Vec<f64> = history.iter().map(|x| x * scale).collect();
            let b = canary_outlier(&scaled, value * scale, 1.5);
            let (za, zb) = (a.z.unwrap(), b.z.unwrap());
            prop_assert!((za - zb).abs() <= 1e-6 * za.abs().max(1.0));
            prop_assert_eq!(a.outlier, b.outlier);
            let med = median(&history).unwrap();
            prop_assert!(!canary_outlier(&history, med, 1.0).outlier);
            // A floor only ever removes flags.
            prop_assert!(!a.outlier || canary_outlier(&history, value, 1.0).outlier);
            // Nothing within the history's range is flagged.
            prop_assert!(!a.outlier || value > max(&history).unwrap() || value < min(&history).unwrap());
        }
    }
}
