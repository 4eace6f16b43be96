//! Tests of the differential comparison, on hand-made runs and on simulated profiles: 2000 functions
//! with heavy-tailed (Pareto) self costs on a call tree, whose runs draw Poisson sample counts.

use super::*;
use crate::stats::seeded_rng;
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;

const FUNCTIONS: usize = 2000;
/// Expected CPU µs per transaction over all functions.
const TOTAL_US: f64 = 500.0;

fn cfg() -> DiffConfig {
    DiffConfig::default()
}

fn costs(pairs: &[(&str, f64, f64)], sample_us: f64) -> RunCosts {
    RunCosts {
        functions: pairs
            .iter()
            .map(|&(name, self_us, total_us)| (name.to_string(), FunctionCost { self_us, total_us }))
            .collect(),
        total_us: pairs.iter().map(|p| p.1).sum(),
        sample_us,
    }
}

fn name(i: usize) -> String {
    format!("f{i:04}")
}

/// Expected self µs per transaction of each function: Pareto (α = 1.2) shares of [`TOTAL_US`].
fn model(rng: &mut Xoshiro256PlusPlus) -> Vec<f64> {
    let raw: Vec<f64> = (0..FUNCTIONS).map(|_| (1.0 - rng.random::<f64>()).powf(-1.0 / 1.2)).collect();
    let sum: f64 = raw.iter().sum();
    raw.iter().map(|x| x * TOTAL_US / sum).collect()
}

/// A Poisson draw (Knuth's product of uniforms, in pieces of mean ≤ 20 so that `e^-λ` stays normal).
fn poisson(rng: &mut Xoshiro256PlusPlus, lambda: f64) -> u64 {
    let mut k = 0;
    let mut left = lambda;
    while left > 0.0 {
        let piece = left.min(20.0);
        left -= piece;
        let limit = (-piece).exp();
        let mut product = rng.random::<f64>();
        while product > limit {
            k += 1;
            product *= rng.random::<f64>();
        }
    }
    k
}

/// One run of the model: each function's self cost times a log-normal run-to-run factor (standard
/// deviation `spread` on the log; 0 for none), sampled as Poisson counts of `sample_us` each. Function
/// i is called by (i − 1)/8, so inclusive costs nest the way a profile's do; functions with no sample
/// are absent from the run.
fn run(rng: &mut Xoshiro256PlusPlus, expected: &[f64], sample_us: f64, spread: f64) -> RunCosts {
    let self_us: Vec<f64> = expected
        .iter()
        .map(|&us| {
            let factor = if spread > 0.0 { (spread * normal(rng) - spread * spread / 2.0).exp() } else { 1.0 };
            poisson(rng, us * factor / sample_us) as f64 * sample_us
        })
        .collect();
    let mut total_us = self_us.clone();
    for i in (1..total_us.len()).rev() {
        total_us[(i - 1) / 8] += total_us[i];
    }
    RunCosts {
        functions: (0..expected.len())
            .filter(|&i| total_us[i] > 0.0)
            .map(|i| (name(i), FunctionCost { self_us: self_us[i], total_us: total_us[i] }))
            .collect(),
        total_us: self_us.iter().sum(),
        sample_us,
    }
}

fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    crate::stats::testutil::normal(rng)
}

fn runs(rng: &mut Xoshiro256PlusPlus, expected: &[f64], n: usize, sample_us: f64, spread: f64) -> Vec<RunCosts> {
    (0..n).map(|_| run(rng, expected, sample_us, spread)).collect()
}

/// No output field is NaN, and the intervals hold their estimates.
fn assert_sane(d: &Differential) {
    assert!(d.gap_low_us <= d.gap_us && d.gap_us <= d.gap_high_us, "{d:?}");
    assert!(d.level > 0.0 && d.level < 1.0);
    for r in d.self_rows.iter().chain(&d.inclusive_rows) {
        let xs = [r.baseline_us, r.candidate_us, r.delta_us, r.low_us, r.high_us, r.q];
        assert!(xs.iter().all(|x| x.is_finite()), "{r:?}");
        assert!(r.low_us <= r.delta_us && r.delta_us <= r.high_us, "{r:?}");
        assert!((r.candidate_us - r.baseline_us - r.delta_us).abs() < 1e-9);
    }
    assert!(d.explained_share.is_none_or(f64::is_finite));
}

/// Simulated A/A comparisons: both sides drawn from the same model. Under the complete null, rejecting
/// at Benjamini–Hochberg's q ≤ 5 % selects anything at all with probability ≤ 5 % per kind (for
/// independent tests), so over 40 seeds 6 or more seeds with a row of a kind would happen with
/// probability 1.4 % even for an exact 5 % procedure; an implementation whose p values are too small
/// selects rows in most seeds.
fn aa_seeds_with_rows(runs_per_side: usize, spread: f64, seed: u64) -> (usize, usize) {
    let (mut with_self, mut with_inclusive) = (0, 0);
    for s in 0..40 {
        let mut rng = seeded_rng(seed + s);
        let expected = model(&mut rng);
        let sample_us = TOTAL_US / 20_000.0;
        let b = runs(&mut rng, &expected, runs_per_side, sample_us, spread);
        let c = runs(&mut rng, &expected, runs_per_side, sample_us, spread);
        let d = differential(&b, &c, &cfg());
        assert_sane(&d);
        assert!(d.tested > 500 && d.tested <= FUNCTIONS, "{}", d.tested);
        with_self += usize::from(!d.self_rows.is_empty());
        with_inclusive += usize::from(!d.inclusive_rows.is_empty());
    }
    (with_self, with_inclusive)
}

#[test]
fn aa_three_runs_a_side_selects_nothing_beyond_the_fdr() {
    // 5 % run-to-run variation of every function on top of the sampling noise.
    let (s, i) = aa_seeds_with_rows(3, 0.05, 1_000);
    assert!(s <= 5 && i <= 5, "seeds of 40 with self rows {s}, inclusive rows {i}");
}

#[test]
fn aa_one_run_a_side_selects_nothing_beyond_the_fdr() {
    // Single runs only know the sampling noise: the model has no other.
    let (s, i) = aa_seeds_with_rows(1, 0.0, 2_000);
    assert!(s <= 5 && i <= 5, "seeds of 40 with self rows {s}, inclusive rows {i}");
}

/// The model with its largest function +30 % and a diffuse +2 % on all the others (each below its
/// noise), so that the planted function's share of the gap is well below 1: (expected baseline,
/// expected candidate, planted index, planted share of the gap).
fn planted(rng: &mut Xoshiro256PlusPlus) -> (Vec<f64>, Vec<f64>, usize, f64) {
    let base = model(rng);
    let k = (0..FUNCTIONS).max_by(|&a, &b| base[a].total_cmp(&base[b])).unwrap_or(0);
    let cand: Vec<f64> = base.iter().enumerate().map(|(i, &us)| us * if i == k { 1.3 } else { 1.02 }).collect();
    let gap: f64 = cand.iter().sum::<f64>() - base.iter().sum::<f64>();
    (base.clone(), cand, k, 0.3 * base[k] / gap)
}

/// The first self row's share of the gap is within 15 % of the planted share: about 3 standard errors
/// in the setups below (the share's relative error is about that of the gap, 3–5 %).
fn assert_share_near(d: &Differential, planted: f64) {
    let got = d.self_rows[0].share_of_gap.unwrap_or(f64::NAN);
    assert!((got - planted).abs() <= 0.15 * planted, "share {got} planted {planted}");
}

#[test]
fn planted_regression_comes_first_with_its_share_of_the_gap() {
    let mut rng = seeded_rng(77);
    let (base, cand, k, share) = planted(&mut rng);
    let sample_us = TOTAL_US / 100_000.0;
    let b = runs(&mut rng, &base, 5, sample_us, 0.01);
    let c = runs(&mut rng, &cand, 5, sample_us, 0.01);
    let d = differential(&b, &c, &cfg());
    assert_sane(&d);
    let first = &d.self_rows[0];
    assert_eq!(first.function, name(k), "{:?}", &d.self_rows);
    let truth = 0.3 * base[k];
    assert!(first.low_us <= truth && truth <= first.high_us, "{first:?} vs {truth}");
    assert_share_near(&d, share);
    let true_gap = cand.iter().sum::<f64>() - base.iter().sum::<f64>();
    assert!(d.gap_low_us <= true_gap && true_gap <= d.gap_high_us, "gap {true_gap} {d:?}");
    assert!(d.inclusive_rows.iter().any(|r| r.function == name(k)), "{:?}", d.inclusive_rows);
    assert!(d.inclusive_rows.iter().all(|r| r.share_of_gap == Some(r.delta_us / d.gap_us)));
    assert_eq!(d.runs, (5, 5));
    let r = d.self_rows.len() as f64;
    assert!((d.level - (1.0 - 0.05 * r / d.tested as f64)).abs() < 1e-12);
}

#[test]
fn one_run_a_side_finds_the_regression_in_the_sampling_noise() {
    let mut rng = seeded_rng(78);
    let (base, cand, k, share) = planted(&mut rng);
    // A long run (a million samples): the diffuse +2 % makes a gap of ~17 µs to measure.
    let sample_us = TOTAL_US / 1_000_000.0;
    let b = runs(&mut rng, &base, 1, sample_us, 0.0);
    let c = runs(&mut rng, &cand, 1, sample_us, 0.0);
    let d = differential(&b, &c, &cfg());
    assert_sane(&d);
    assert_eq!(d.runs, (1, 1));
    let first = &d.self_rows[0];
    assert_eq!(first.function, name(k), "{:?}", &d.self_rows);
    let truth = 0.3 * base[k];
    assert!(first.low_us <= truth && truth <= first.high_us, "{first:?} vs {truth}");
    assert_share_near(&d, share);
    assert!(first.q <= 0.05);
}

#[test]
fn empty_sides_compare_nothing() {
    let one = [costs(&[("a", 1.0, 1.0)], 0.01)];
    for (b, c) in [(&[][..], &[][..]), (&one[..], &[][..]), (&[][..], &one[..])] {
        let d = differential(b, c, &cfg());
        assert!(d.self_rows.is_empty() && d.inclusive_rows.is_empty());
        assert_eq!((d.tested, d.gap_us, d.gap_low_us, d.gap_high_us), (0, 0.0, 0.0, 0.0));
        assert_eq!(d.explained_share, None);
        assert_eq!(d.runs, (b.len(), c.len()));
        assert!((d.level - 0.95).abs() < 1e-12);
    }
}

#[test]
fn single_runs_use_the_poisson_variance() {
    // 100 samples of 0.01 µs against 400: delta 3, se = sqrt(1·0.01 + 4·0.01) = sqrt(0.05).
    let b = [costs(&[("a", 1.0, 1.0)], 0.01)];
    let c = [costs(&[("a", 4.0, 4.0)], 0.01)];
    let d = differential(&b, &c, &cfg());
    let row = &d.self_rows[0];
    let half = 1.959964 * 0.05f64.sqrt();
    // One test, one row: the level is 1 − 0.05·1/1.
    assert!((d.level - 0.95).abs() < 1e-12);
    assert!((row.low_us - (3.0 - half)).abs() < 1e-5 && (row.high_us - (3.0 + half)).abs() < 1e-5, "{row:?}");
    assert!((d.gap_us - 3.0).abs() < 1e-12);
    assert_eq!(row.share_of_gap, Some(1.0));
    assert_eq!(d.explained_share, Some(1.0));
}

#[test]
fn variance_is_the_models_unless_the_runs_spread_more() {
    let p = |c: &[f64], s: f64, b: f64| estimate(c.iter().map(|&c| (c, s)), b);
    // Between runs: var(10, 12, 14) = 4 > the model's 12·0.01 = 0.12: moderated, (10·0.12 + 2·4) / 12,
    // over 3, with 12 df.
    let e = p(&[10.0, 12.0, 14.0], 0.01, 0.0);
    let moderated = (10.0 * 0.12 + 2.0 * 4.0) / 12.0 / 3.0;
    assert!((e.mean - 12.0).abs() < 1e-12 && (e.var - moderated).abs() < 1e-12 && e.df == 12.0, "{e:?}");
    // Identical runs: the model, sampling 12·1 plus 0.01·12² = 1.44, over 3, known (infinite df).
    let e = p(&[12.0, 12.0, 12.0], 1.0, 0.01);
    assert!((e.var - (12.0 + 1.44) / 3.0).abs() < 1e-12 && e.df.is_infinite());
    // One run: cost · sample_us.
    assert!((p(&[12.0], 0.5, 0.0).var - 6.0).abs() < 1e-12);
    // Welch–Satterthwaite with equal moderated variances and 3 runs a side: 2 × 12 degrees of freedom.
    let t = welch(p(&[10.0, 12.0, 14.0], 0.0, 0.0), p(&[11.0, 13.0, 15.0], 0.0, 0.0));
    assert!((t.df - 24.0).abs() < 1e-9 && (t.delta - 1.0).abs() < 1e-12, "{t:?}");
    assert!(welch(p(&[1.0], 1.0, 0.0), p(&[1.0, 1.0], 1.0, 0.0)).df.is_infinite());
}

#[test]
fn proportional_noise_is_pooled_from_the_spread_beyond_sampling() {
    // Two functions, runs at ±10 % of their cost and no sampling noise: b = 0.01·2 (the sample
    // variance of 0.9, 1.1 times the mean is 0.02·mean²).
    let run = |f: f64| costs(&[("a", 100.0 * f, 100.0 * f), ("b", 10.0 * f, 10.0 * f)], 0.0);
    let side = [run(0.9), run(1.1)];
    let b = proportional_noise(&[&side, &side[..1]], &["a", "b"]);
    assert!((b - 0.02).abs() < 1e-12, "{b}");
    // Without repetitions nothing is known about it.
    assert_eq!(proportional_noise(&[&side[..1]], &["a", "b"]), 0.0);
}

#[test]
fn absent_functions_cost_zero_and_ties_are_not_rows() {
    // `gone` is sampled in every baseline run and never in the candidate's; `same` is identical.
    let b: Vec<RunCosts> =
        (0..3).map(|i| costs(&[("gone", 50.0 + i as f64, 50.0 + i as f64), ("same", 5.0, 5.0)], 0.01)).collect();
    let c: Vec<RunCosts> = (0..3).map(|_| costs(&[("same", 5.0, 5.0)], 0.01)).collect();
    let d = differential(&b, &c, &cfg());
    assert_eq!(d.tested, 2);
    assert_eq!(d.self_rows.len(), 1, "{d:?}");
    let row = &d.self_rows[0];
    assert_eq!((row.function.as_str(), row.candidate_us, row.baseline_us), ("gone", 0.0, 51.0));
    assert_eq!(row.share_of_gap, Some(1.0));
    // The same, with a floor under which no difference is worth a row.
    let d = differential(&b, &c, &DiffConfig { min_delta_us: 60.0, ..cfg() });
    assert!(d.self_rows.is_empty() && (d.level - 0.95).abs() < 1e-12);
}

#[test]
fn garbage_in_no_nan_out() {
    let b = [costs(&[("a", f64::NAN, f64::INFINITY), ("b", -3.0, 2.0)], f64::NAN)];
    let c = [RunCosts { total_us: f64::NAN, ..costs(&[("a", 1.0, 1.0)], -1.0) }];
    let bad = DiffConfig { fdr: f64::NAN, confidence: 7.0, min_delta_us: f64::NAN };
    let d = differential(&b, &c, &bad);
    assert_sane(&d);
    assert!(d.gap_us.is_finite() && d.gap_low_us.is_finite() && d.gap_high_us.is_finite());
    assert_eq!(d.tested, 2);
}

#[test]
fn entry_points_come_after_the_functions_that_moved() {
    // `root` is on every stack; `work` grew by 20 µs, `x` by 5, `y` stayed: `root` grew by 25.
    let run = |work: f64, x: f64| {
        let mut r = costs(&[("root", 1.0, 0.0), ("work", work, work), ("x", x, x), ("y", 40.0, 40.0)], 0.001);
        r.functions.get_mut("root").unwrap().total_us = r.total_us;
        r
    };
    let b: Vec<RunCosts> = (0..3).map(|_| run(20.0, 10.0)).collect();
    let c: Vec<RunCosts> = (0..3).map(|_| run(40.0, 15.0)).collect();
    let d = differential(&b, &c, &cfg());
    let order: Vec<(&str, bool)> = d.inclusive_rows.iter().map(|r| (r.function.as_str(), r.trunk)).collect();
    assert_eq!(order, vec![("work", false), ("x", false), ("root", true)], "{d:?}");
}
