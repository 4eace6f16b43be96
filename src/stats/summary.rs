//! Descriptive statistics of one sample: mean, median, standard deviation, quantiles, coefficient of
//! variation, minimum and maximum.
//!
//! Every function takes a slice and returns `None` when the statistic is undefined for it (an empty
//! slice, or fewer than two values for a spread). Non-finite values are not filtered: a NaN in the
//! input gives a NaN (or an arbitrary order position) in the output, so callers validate first.

/// Arithmetic mean `Σx / n`; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample variance with Bessel's correction, `Σ(x − mean)² / (n − 1)`; `None` below two values.
///
/// Computed in two passes (mean first), which is accurate for the magnitudes seen in benchmarks.
pub fn variance(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    Some(xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64)
}

/// Sample standard deviation, the square root of [`variance`] (divisor `n − 1`); `None` below two
/// values.
pub fn std_dev(xs: &[f64]) -> Option<f64> {
    variance(xs).map(f64::sqrt)
}

/// Coefficient of variation `std_dev / |mean|` (a fraction, not a percentage); `None` below two
/// values or when the mean is zero.
pub fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    if m == 0.0 {
        return None;
    }
    Some(std_dev(xs)? / m.abs())
}

/// Smallest value; `None` for an empty slice.
pub fn min(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().reduce(f64::min)
}

/// Largest value; `None` for an empty slice.
pub fn max(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().reduce(f64::max)
}

/// The `p`-quantile (`0 ≤ p ≤ 1`) by linear interpolation between order statistics: Hyndman & Fan
/// (1996) definition 7, the default of R and NumPy. With the sorted values `x₀ ≤ … ≤ x₍ₙ₋₁₎` and
/// `h = (n − 1)·p`, the result is `x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋)`. So `p = 0` is the minimum,
/// `p = 1` the maximum and `p = 0.5` the usual median. `None` for an empty slice or `p` outside
/// `[0, 1]` (or NaN).
pub fn quantile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(quantile_sorted(&sorted, p))
}

/// [`quantile`] on a slice that is already sorted ascending and non-empty, with `p` in `[0, 1]`.
pub(crate) fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Median: the 0.5 [`quantile`] (the middle value, or the mean of the two middle values for an even
/// count); `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

/// Median absolute deviation from the median, `median(|x − median(x)|)`, unscaled. Multiply by
/// 1.4826 to estimate the standard deviation of normal data. `None` for an empty slice.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// All descriptive statistics of one sample at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (type-7 quantile 0.5).
    pub median: f64,
    /// Sample standard deviation (divisor `n − 1`); `None` for a single value.
    pub std_dev: Option<f64>,
    /// Coefficient of variation `std_dev / |mean|`; `None` for a single value or a zero mean.
    pub cv: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// Summarises a sample with [`mean`], [`median`], [`std_dev`], [`coefficient_of_variation`], [`min`]
/// and [`max`]; `None` for an empty slice.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    Some(Summary {
        n: xs.len(),
        mean: mean(xs)?,
        median: median(xs)?,
        std_dev: std_dev(xs),
        cv: coefficient_of_variation(xs),
        min: min(xs)?,
        max: max(xs)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_known_values() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        // Σ(x − 5)² = 32, divided by n − 1 = 7.
        assert!((variance(&xs).unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(median(&xs), Some(4.5));
        assert_eq!(min(&xs), Some(2.0));
        assert_eq!(max(&xs), Some(9.0));
        // |x − 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 → median 0.5
        assert_eq!(mad(&xs), Some(0.5));
    }

    #[test]
    fn quantile_is_type_7() {
        // R: quantile(c(1, 2, 3, 4), 0.1, type = 7) = 1.3
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert!((quantile(&xs, 0.1).unwrap() - 1.3).abs() < 1e-12);
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 1.0), Some(4.0));
        assert_eq!(quantile(&xs, 1.5), None);
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(mean(&[]), None);
        assert_eq!(std_dev(&[3.0]), None);
        assert_eq!(coefficient_of_variation(&[0.0, 0.0]), None);
        assert!(summarize(&[]).is_none());
        let s = summarize(&[3.0]).unwrap();
        assert_eq!((s.n, s.mean, s.std_dev, s.cv), (1, 3.0, None, None));
    }

    proptest! {
        #![proptest_config(crate::stats::testutil::proptest_config(64))]

        #[test]
        fn order_and_scale(xs in prop::collection::vec(1.0f64..1e6, 1..40), c in 0.01f64..100.0) {
            let s = summarize(&xs).unwrap();
            prop_assert!(s.min <= s.mean + 1e-9 * s.mean.abs() && s.mean <= s.max + 1e-9 * s.max.abs());
            prop_assert!(s.min <= s.median && s.median <= s.max);
            let scaled: Vec<f64> = xs.iter().map(|x| x * c).collect();
            let t = summarize(&scaled).unwrap();
            prop_assert!((t.mean - c * s.mean).abs() <= 1e-9 * t.mean.abs());
            if let (Some(a), Some(b)) = (s.cv, t.cv) {
                prop_assert!((a - b).abs() <= 1e-9 * (1.0 + a));
            }
        }

        #[test]
        fn quantile_is_monotone(xs in prop::collection::vec(-1e3f64..1e3, 1..30), p in 0.0f64..1.0, q in 0.0f64..1.0) {
            let (p, q) = if p <= q { (p, q) } else { (q, p) };
            prop_assert!(quantile(&xs, p).unwrap() <= quantile(&xs, q).unwrap());
        }
    }
}
