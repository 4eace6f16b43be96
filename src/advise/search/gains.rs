//! What a comparison shows as a gain: the improvement and its interval as fractions (positive:
//! better), and the contribution of a value measured alone or in an attribution.

use super::Contribution;
use crate::explain::bisect::{Conclusion as BisectConclusion, Effect, SearchOutcome};
use crate::stats::power::TARGET_EFFECT;
use crate::stats::{Comparison, Direction, Verdict};

/// The improvement a comparison shows (positive: better), as a fraction.
pub(super) fn gain(c: &Comparison) -> f64 {
    if c.direction == Direction::HigherIsBetter { c.change } else { -c.change }
}

/// The upper end of the improvement's interval.
pub(super) fn gain_hi(c: &Comparison) -> f64 {
    if c.direction == Direction::HigherIsBetter { c.ci.hi - 1.0 } else { 1.0 - c.ci.lo }
}

/// The lower end of the improvement's interval.
pub(super) fn gain_lo(c: &Comparison) -> f64 {
    if c.direction == Direction::HigherIsBetter { c.ci.lo - 1.0 } else { 1.0 - c.ci.hi }
}

/// Whether a comparison leaves a gain worth having open: faster by its estimate, and the interval's
/// upper end beyond the noise band and [`TARGET_EFFECT`] (not shown, not excluded either).
pub(super) fn left_open(c: &Comparison) -> bool {
    gain(c) > 0.0 && gain_hi(c) > c.noise_band.max(TARGET_EFFECT)
}

/// `; it could detect only changes beyond ±X %` for the smallest change either way a comparison could
/// detect (a fraction), or nothing when it is not known.
pub(super) fn could_detect(either_way: Option<f64>) -> String {
    either_way.map(|d| format!("; it could detect only changes beyond ±{:.1} %", d * 100.0)).unwrap_or_default()
}

pub(super) fn describe(c: &Comparison) -> String {
    format!("{:+.1} % (CI {:+.1} to {:+.1} %)", gain(c) * 100.0, gain_lo(c) * 100.0, gain_hi(c) * 100.0)
}

/// The contribution of an attribution effect.
pub(super) fn contribution(e: &Effect, together_with: Vec<String>) -> Option<Contribution> {
    Some(Contribution { points: e.points?, lo: e.points_lo?, hi: e.points_hi?, together_with, measured_with: vec![] })
}

/// Whether a value measured alone (`c`: without it against with it) is proven: faster, beyond the
/// noise band at the lower end of its interval, with a contribution to show.
pub(super) fn proven_alone(c: &Comparison) -> bool {
    c.verdict == Verdict::Faster && gain_lo(c) > c.noise_band && alone(c).is_some()
}

/// The contribution of a value measured alone on top of the current config (`c`: current against
/// current + the value), in points of the current + value mean, as attribution's contributions are
/// ([`crate::explain::bisect::points_of_a`], with A = current + the value).
pub(super) fn alone(c: &Comparison) -> Option<Contribution> {
    let (points, lo, hi) = crate::explain::bisect::points_of_a(c, 1.0 / c.ci.ratio);
    (points.is_finite() && lo.is_finite() && hi.is_finite()).then_some(Contribution {
        points,
        lo,
        hi,
        together_with: vec![],
        measured_with: vec![],
    })
}

/// Whether explain's search ended with the whole set making no difference.
pub(super) fn no_difference(o: &SearchOutcome) -> bool {
    matches!(o.conclusion, BisectConclusion::NoGap | BisectConclusion::NotConfig)
}
