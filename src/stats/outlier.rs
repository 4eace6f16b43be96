//! Is a host's canary an outlier against its host class? The canary (a fixed CPU loop, an fsync probe)
//! measures the platform, not the database, so a value far from what the class usually gives means the
//! host was slow or disturbed, and the block measured there is re-run elsewhere. The test is the
//! modified z-score of Iglewicz and Hoaglin: `0.6745 · (x − median) / MAD` over the class's earlier
//! canaries, flagged beyond ±3.5, and only with at least [`MIN_HISTORY`] earlier values (too little
//! history flags nothing).

use super::summary::median;

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
}

/// Judges `value` against the class's earlier canaries `history` (non-finite values are ignored).
pub fn canary_outlier(history: &[f64], value: f64) -> CanaryCheck {
    let clean: Vec<f64> = history.iter().copied().filter(|x| x.is_finite()).collect();
    let n = clean.len();
    if n < MIN_HISTORY || !value.is_finite() {
        return CanaryCheck { outlier: false, z: None, history: n };
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
    CanaryCheck { outlier: z.abs() > Z_LIMIT, z: Some(z), history: n }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::stats::testutil::proptest_config;

    #[test]
    fn a_slow_host_is_flagged_and_a_usual_one_is_not() {
        let history = [100.0, 102.0, 98.0, 101.0, 99.0, 103.0, 97.0, 100.5, 99.5, 101.5];
        assert!(!canary_outlier(&history, 104.0).outlier);
        let slow = canary_outlier(&history, 130.0);
        assert!(slow.outlier && slow.z.unwrap() > Z_LIMIT, "{slow:?}");
        assert!(canary_outlier(&history, 60.0).outlier);
        assert_eq!(canary_outlier(&history[..5], 500.0), CanaryCheck { outlier: false, z: None, history: 5 });
        let flat = [5.0; 9];
        assert!(!canary_outlier(&flat, 5.0).outlier);
        assert!(canary_outlier(&flat, 6.0).outlier);
    }

    proptest! {
        #![proptest_config(proptest_config(128))]

        #[test]
        fn the_verdict_does_not_depend_on_units(
            history in prop::collection::vec(1.0f64..1000.0, MIN_HISTORY..30),
            value in 1.0f64..2000.0,
            scale in 0.001f64..1000.0,
        ) {
            let a = canary_outlier(&history, value);
            let scaled: Vec<f64> = history.iter().map(|x| x * scale).collect();
            let b = canary_outlier(&scaled, value * scale);
            let (za, zb) = (a.z.unwrap(), b.z.unwrap());
            prop_assert!((za - zb).abs() <= 1e-6 * za.abs().max(1.0));
            let med = median(&history).unwrap();
            prop_assert!(!canary_outlier(&history, med).outlier);
        }
    }
}
