//! Change-point detection over a series of versions by E-divisive means (Matteson & James 2014), the
//! method MongoDB (Daly et al. 2020) and Apache Otava use, with the original permutation test.
//!
//! Each version contributes one or more samples; samples are pooled as observations, but change
//! points may fall only between versions ("the metric stepped at this release").

use super::seeded_rng;
use super::summary::mean;
use crate::error::{Error, Result};
use rand::seq::SliceRandom;

/// Settings of [`detect_change_points`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointConfig {
    /// A split is accepted when its permutation p-value is at most this (default 0.05).
    pub p_value: f64,
    /// Permutations per significance test (default 199, so the smallest possible p-value is 0.005).
    pub permutations: usize,
    /// Minimum number of versions on each side of a split (default 2, so that a single odd version
    /// does not become a change point on its own).
    pub min_segment: usize,
    /// Exponent `α` of the distances `|x − y|^α`, in `(0, 2)` (default 1). With `α < 2` the
    /// divergence detects any change of distribution, not only of the mean.
    pub alpha: f64,
    /// Seed of the permutation generator (default 0x5EED).
    pub seed: u64,
}

impl Default for ChangePointConfig {
    fn default() -> Self {
        ChangePointConfig { p_value: 0.05, permutations: 199, min_segment: 2, alpha: 1.0, seed: 0x5EED }
    }
}

/// A detected change point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChangePoint {
    /// Index of the first version after the change (the version where the metric stepped).
    pub index: usize,
    /// Mean of all samples of the segment before (back to the previous change point or the start).
    pub mean_before: f64,
    /// Mean of all samples of the segment after (up to the next change point or the end).
    pub mean_after: f64,
    /// Size of the step, `mean_after / mean_before − 1` (−0.1 is a 10 % drop); infinite or NaN if
    /// `mean_before` is 0.
    pub step: f64,
    /// Permutation p-value with which the split was accepted, `(1 + #{permuted ≥ observed}) / (1 + R)`.
    pub p_value: f64,
    /// The divergence statistic `Q̂` of the split when it was found (in units of the data to the
    /// power `α`).
    pub statistic: f64,
}

/// Finds the versions where the distribution of a metric changed, by E-divisive means with a
/// permutation test and hierarchical bisection.
///
/// Method (Matteson & James 2014): for two sets `X` (size `n`) and `Y` (size `m`),
/// `Ê = 2/(nm) Σ|x−y|^α − C(n,2)⁻¹ Σ_{i<k}|x_i−x_k|^α − C(m,2)⁻¹ Σ_{i<k}|y_i−y_k|^α` and
/// `Q̂ = nm/(n+m) · Ê`. Within a segment, `X` is its first `τ` versions and `Y` the following versions
/// up to `κ`; the best split maximises `Q̂` over `τ` and `κ` (both at version boundaries, each side at
/// least `min_segment` versions). Among all current segments the split with the largest `Q̂` is
/// tested: the samples are shuffled within every segment `permutations` times and the best `Q̂`
/// over all segments recomputed each time; the p-value is the share of permuted statistics at least
/// as large (counting the observed one). If it is at most `p_value` the split becomes a change point
/// and the search repeats on the new segments; otherwise the search stops. A test stops early once
/// its p-value can no longer reach the threshold.
///
/// The steps are measured between the final segments. Cost: `O(T²)` time and memory per segment and
/// permutation for `T` samples. Deterministic for a given seed; changes to the seed can move
/// borderline p-values.
///
/// Errors: a version without samples, non-finite samples, `p_value` outside `(0, 1)`, no
/// permutations, `min_segment` 0 or `α` outside `(0, 2)`. Fewer than `2·min_segment` versions give
/// no change points.
pub fn detect_change_points<S: AsRef<[f64]>>(versions: &[S], cfg: &ChangePointConfig) -> Result<Vec<ChangePoint>> {
    validate(versions, cfg)?;
    let obs: Vec<f64> = versions.iter().flat_map(|v| v.as_ref().iter().copied()).collect();
    let mut starts = Vec::with_capacity(versions.len() + 1);
    starts.push(0);
    for v in versions {
        starts.push(starts.last().copied().unwrap_or(0) + v.as_ref().len());
    }

    let mut rng = seeded_rng(cfg.seed);
    let mut cuts: Vec<(usize, f64, f64)> = Vec::new(); // (version index, p-value, statistic)
    let mut scratch = Vec::new();
    loop {
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c.0).collect();
        bounds.push(0);
        bounds.push(versions.len());
        bounds.sort_unstable();
        let segments: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();

        let mut best: Option<(usize, f64)> = None; // (global version index, Q̂)
        for &(va, vb) in &segments {
            let local = local_starts(&starts, va, vb);
            let seg = &obs[starts[va]..starts[vb]];
            if let Some((tau, q)) = best_split(seg, &local, cfg, &mut scratch)
                && best.is_none_or(|(_, bq)| q > bq)
            {
                best = Some((va + tau, q));
            }
        }
        let Some((index, q_obs)) = best else { break };

        let limit = cfg.p_value * (cfg.permutations + 1) as f64;
        let mut at_least = 0usize;
        let mut shuffled = obs.clone();
        for _ in 0..cfg.permutations {
            let mut q_max = f64::NEG_INFINITY;
            for &(va, vb) in &segments {
                let seg = &mut shuffled[starts[va]..starts[vb]];
                seg.shuffle(&mut rng);
                let local = local_starts(&starts, va, vb);
                if let Some((_, q)) = best_split(seg, &local, cfg, &mut scratch) {
                    q_max = q_max.max(q);
                }
            }
            // Ties count as "at least as large"; the relative tolerance makes a permutation that
            // reproduces the observed split count as a tie whatever the rounding of its sums.
            if q_max >= q_obs - 1e-9 * q_obs.abs() {
                at_least += 1;
                if (at_least + 1) as f64 > limit {
                    break;
                }
            }
        }
        let p = (at_least + 1) as f64 / (cfg.permutations + 1) as f64;
        if p > cfg.p_value {
            break;
        }
        cuts.push((index, p, q_obs));
    }

    cuts.sort_by_key(|c| c.0);
    let segment_mean = |va: usize, vb: usize| mean(&obs[starts[va]..starts[vb]]).unwrap_or(f64::NAN);
    Ok(cuts
        .iter()
        .enumerate()
        .map(|(i, &(index, p_value, statistic))| {
            let prev = if i == 0 { 0 } else { cuts[i - 1].0 };
            let next = cuts.get(i + 1).map_or(versions.len(), |c| c.0);
            let mean_before = segment_mean(prev, index);
            let mean_after = segment_mean(index, next);
            ChangePoint { index, mean_before, mean_after, step: mean_after / mean_before - 1.0, p_value, statistic }
        })
        .collect())
}

fn validate<S: AsRef<[f64]>>(versions: &[S], cfg: &ChangePointConfig) -> Result<()> {
    for (i, v) in versions.iter().enumerate() {
        let v = v.as_ref();
        if v.is_empty() {
            return Err(Error::Other(format!("change points: version #{} has no samples", i + 1)));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(Error::Other(format!("change points: version #{} has a non-finite sample", i + 1)));
        }
    }
    if !(cfg.p_value > 0.0 && cfg.p_value < 1.0) {
        return Err(Error::Other(format!("change points: p-value {} must lie in (0, 1), e.g. 0.05", cfg.p_value)));
    }
    if cfg.permutations == 0 || cfg.min_segment == 0 {
        return Err(Error::Other("change points: permutations and minimum segment size must be at least 1".into()));
    }
    if !(cfg.alpha > 0.0 && cfg.alpha < 2.0) {
        return Err(Error::Other(format!("change points: exponent alpha {} must lie in (0, 2), e.g. 1", cfg.alpha)));
    }
    Ok(())
}

/// Sample offsets of versions `va..=vb` relative to the first sample of version `va`.
fn local_starts(starts: &[usize], va: usize, vb: usize) -> Vec<usize> {
    starts[va..=vb].iter().map(|s| s - starts[va]).collect()
}

/// The best split of one segment: `(τ, Q̂)` with `τ` the number of versions before the split, or
/// `None` if the segment is too short. `local[k]` is the first sample of the segment's version `k`.
fn best_split(seg: &[f64], local: &[usize], cfg: &ChangePointConfig, prefix: &mut Vec<f64>) -> Option<(usize, f64)> {
    let nv = local.len() - 1;
    let ms = cfg.min_segment;
    if nv < 2 * ms {
        return None;
    }
    build_prefix(seg, cfg.alpha, prefix);
    let w = seg.len() + 1;
    let block = |i0: usize, i1: usize, j0: usize, j1: usize| {
        prefix[i1 * w + j1] - prefix[i0 * w + j1] - prefix[i1 * w + j0] + prefix[i0 * w + j0]
    };
    // Mean distance over unordered pairs inside [a, b); 0 for fewer than two samples.
    let within = |a: usize, b: usize| {
        let n = (b - a) as f64;
        if n < 2.0 { 0.0 } else { block(a, b, a, b) / (n * (n - 1.0)) }
    };
    let mut best: Option<(usize, f64)> = None;
    for tau in ms..=nv - ms {
        let s = local[tau];
        let (n, wx) = (s as f64, within(0, s));
        for &e in &local[tau + ms..] {
            let m = (e - s) as f64;
            let cross = block(0, s, s, e) / (n * m);
            let q = n * m / (n + m) * (2.0 * cross - wx - within(s, e));
            if best.is_none_or(|(_, bq)| q > bq) {
                best = Some((tau, q));
            }
        }
    }
    best
}

/// Fills `prefix` with the 2-D prefix sums of the distance matrix `|x_i − x_j|^α` of `seg`
/// (row-major, `(n + 1)²` entries, `prefix[i][j] = Σ_{p<i, q<j} d(p, q)`).
fn build_prefix(seg: &[f64], alpha: f64, prefix: &mut Vec<f64>) {
    let n = seg.len();
    let w = n + 1;
    prefix.clear();
    prefix.resize(w * w, 0.0);
    for i in 0..n {
        let mut row = 0.0;
        for j in 0..n {
            let d = (seg[i] - seg[j]).abs();
            row += if alpha == 1.0 { d } else { d.powf(alpha) };
            prefix[(i + 1) * w + j + 1] = prefix[i * w + j + 1] + row;
        }
    }
}

/// Each version's mean divided by the first version's mean (so the first entry is 1 and 0.9 means
/// 10 % below the first version), the "relative to base version" view of version series.
///
/// Errors: no versions, a version without samples, non-finite samples, or a first mean of 0.
pub fn relative_to_first<S: AsRef<[f64]>>(versions: &[S]) -> Result<Vec<f64>> {
    let means = versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let v = v.as_ref();
            match mean(v) {
                Some(m) if m.is_finite() => Ok(m),
                Some(_) => Err(Error::Other(format!("relative to first: version #{} has a non-finite sample", i + 1))),
                None => Err(Error::Other(format!("relative to first: version #{} has no samples", i + 1))),
            }
        })
        .collect::<Result<Vec<f64>>>()?;
    match means.first() {
        None => Err(Error::Other("relative to first: no versions given".into())),
        Some(&0.0) => Err(Error::Other("relative to first: the first version's mean is 0".into())),
        Some(&base) => Ok(means.iter().map(|m| m / base).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::testutil::normals;
    use proptest::prelude::*;
    use rand::RngExt;

    /// `nv` versions with `per` normal samples each (CV 3 %), mean multiplied by `factor` from
    /// version `at` on.
    fn series(seed: u64, nv: usize, per: usize, at: usize, factor: f64) -> Vec<Vec<f64>> {
        let mut rng = seeded_rng(seed);
        (0..nv)
            .map(|v| {
                let mu = if v >= at { 1000.0 * factor } else { 1000.0 };
                normals(&mut rng, per, mu, 30.0)
            })
            .collect()
    }

    #[test]
    fn two_steps_are_found_with_their_sizes() {
        let mut s = series(1, 30, 3, 10, 0.85);
        for v in s.iter_mut().skip(20) {
            for x in v.iter_mut() {
                *x *= 1.25;
            }
        }
        let cps = detect_change_points(&s, &ChangePointConfig::default()).unwrap();
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        assert_eq!(idx, vec![10, 20], "{cps:?}");
        assert!((cps[0].step + 0.15).abs() < 0.03, "{cps:?}");
        assert!((cps[1].step - 0.25).abs() < 0.04, "{cps:?}");
        assert!(cps.iter().all(|c| c.p_value <= 0.05 && c.statistic > 0.0));
    }

    /// `Q̂` straight from the definition, for checking the prefix-sum version.
    fn naive_q(x: &[f64], y: &[f64], alpha: f64) -> f64 {
        let d = |a: f64, b: f64| (a - b).abs().powf(alpha);
        let (n, m) = (x.len() as f64, y.len() as f64);
        let cross: f64 = x.iter().flat_map(|a| y.iter().map(move |b| d(*a, *b))).sum();
        let within = |z: &[f64]| {
            let k = z.len() as f64;
            let mut sum = 0.0;
            for i in 0..z.len() {
                for j in i + 1..z.len() {
                    sum += d(z[i], z[j]);
                }
            }
            if k < 2.0 { 0.0 } else { sum / (k * (k - 1.0) / 2.0) }
        };
        n * m / (n + m) * (2.0 * cross / (n * m) - within(x) - within(y))
    }

    proptest! {
        #![proptest_config(crate::stats::testutil::proptest_config(48))]

        #[test]
        fn best_split_matches_the_definition(
            versions in prop::collection::vec(prop::collection::vec(-100.0f64..100.0, 1..4), 2..9),
            ms in 1usize..3,
            alpha in prop::sample::select(vec![0.5, 1.0, 1.5]),
        ) {
            let cfg = ChangePointConfig { min_segment: ms, alpha, ..ChangePointConfig::default() };
            let obs: Vec<f64> = versions.iter().flatten().copied().collect();
            let mut local = vec![0];
            for v in &versions {
                local.push(local.last().unwrap() + v.len());
            }
            let got = best_split(&obs, &local, &cfg, &mut Vec::new());
            let nv = versions.len();
            let mut want: Option<(usize, f64)> = None;
            for tau in ms..=nv.saturating_sub(ms) {
                for kappa in tau + ms..=nv {
                    let q = naive_q(&obs[..local[tau]], &obs[local[tau]..local[kappa]], alpha);
                    if want.is_none_or(|(_, w)| q > w) {
                        want = Some((tau, q));
                    }
                }
            }
            match (got, want) {
                (None, None) => {}
                (Some((_, g)), Some((_, w))) => prop_assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "{} vs {}", g, w),
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let s = series(2, 20, 2, 8, 0.9);
        let a = detect_change_points(&s, &ChangePointConfig::default()).unwrap();
        let b = detect_change_points(&s, &ChangePointConfig::default()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn short_or_constant_series_give_nothing() {
        let cfg = ChangePointConfig::default();
        assert!(detect_change_points(&[[1.0], [2.0], [3.0]], &cfg).unwrap().is_empty());
        assert!(detect_change_points(&vec![vec![5.0, 5.0]; 10], &cfg).unwrap().is_empty());
        let empty: [Vec<f64>; 0] = [];
        assert!(detect_change_points(&empty, &cfg).unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_input() {
        let cfg = ChangePointConfig::default();
        let s = vec![vec![1.0], vec![], vec![2.0]];
        assert!(detect_change_points(&s, &cfg).unwrap_err().to_string().contains("#2"));
        assert!(detect_change_points(&[[f64::NAN]], &cfg).is_err());
        assert!(detect_change_points(&[[1.0]], &ChangePointConfig { p_value: 0.0, ..cfg }).is_err());
        assert!(detect_change_points(&[[1.0]], &ChangePointConfig { alpha: 2.0, ..cfg }).is_err());
        assert!(detect_change_points(&[[1.0]], &ChangePointConfig { min_segment: 0, ..cfg }).is_err());
    }

    #[test]
    fn relative_to_first_values_and_errors() {
        let r = relative_to_first(&[vec![100.0, 102.0], vec![90.0], vec![121.2, 121.2]]).unwrap();
        assert_eq!(r.len(), 3);
        assert!((r[0] - 1.0).abs() < 1e-12 && (r[1] - 90.0 / 101.0).abs() < 1e-12 && (r[2] - 1.2).abs() < 1e-12);
        let empty: [Vec<f64>; 0] = [];
        assert!(relative_to_first(&empty).is_err());
        assert!(relative_to_first(&[vec![0.0], vec![1.0]]).is_err());
        assert!(relative_to_first(&[vec![1.0], vec![]]).is_err());
    }

    /// Over 100 seeded flat series (no change, 3 % noise) the detector may fire in at most about
    /// 5 % (p-value 0.05); we allow 10 %.
    #[test]
    fn flat_series_rarely_fire() {
        let cfg = ChangePointConfig { permutations: 99, ..ChangePointConfig::default() };
        let fired =
            (0..100).filter(|&s| !detect_change_points(&series(300 + s, 25, 2, 0, 1.0), &cfg).unwrap().is_empty());
        let fired = fired.count();
        assert!(fired <= 10, "fired on {fired}/100 flat series");
    }

    proptest! {
        #![proptest_config(crate::stats::testutil::proptest_config(24))]

        #[test]
        fn injected_step_is_found(seed in any::<u64>(), per in 1usize..4, down in any::<bool>()) {
            let nv = 24;
            // At least 3 versions on each side: with a single sample per version, 2 samples after
            // the step are too few for a permutation p-value to be reliably below 0.05.
            let at = seeded_rng(seed ^ 0xABCD).random_range(3..=nv - 3);
            let factor = if down { 0.8 } else { 1.2 };
            let s = series(seed, nv, per, at, factor);
            let cfg = ChangePointConfig { seed, ..ChangePointConfig::default() };
            let cps = detect_change_points(&s, &cfg).unwrap();
            prop_assert!(!cps.is_empty(), "no change point for a step at {}", at);
            let cp = cps.iter().min_by_key(|c| c.index.abs_diff(at)).unwrap();
            prop_assert!(cp.index.abs_diff(at) <= 1, "step at {}, found {:?}", at, cps);
            prop_assert!((cp.step > 0.0) != down);
        }

        #[test]
        fn scale_invariant(seed in any::<u64>(), k in 0.001f64..1000.0) {
            let s = series(seed, 16, 2, 7, 0.9);
            let ks: Vec<Vec<f64>> = s.iter().map(|v| v.iter().map(|x| x * k).collect()).collect();
            let cfg = ChangePointConfig { seed, ..ChangePointConfig::default() };
            let a = detect_change_points(&s, &cfg).unwrap();
            let b = detect_change_points(&ks, &cfg).unwrap();
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                prop_assert_eq!(x.index, y.index);
                prop_assert!((x.step - y.step).abs() < 1e-9 && (x.p_value - y.p_value).abs() < 1e-12);
            }
        }
    }
}
