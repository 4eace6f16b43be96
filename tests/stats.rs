//! The statistics module used the way a report uses it: a version series with repetitions, compared
//! with its first version, scanned for change points, and one run's 1-s rates checked for stalls.

use versus::stats::{
    self, ChangePointConfig, CiKind, CompareConfig, Direction, SampleLevel, StallRule, Verdict, compare,
    detect_change_points, relative_to_first,
};

/// Deterministic pseudo-noise in [-1, 1] without a random generator (a fixed irrational rotation).
fn wiggle(i: usize) -> f64 {
    let x = (i as f64 * 0.618_033_988_749_895).fract();
    2.0 * x - 1.0
}

#[test]
fn version_series_report() {
    // 12 versions × 5 repetitions; tps drops by 12 % at version 7 (think sync_binlog 0 → 1).
    let versions: Vec<Vec<f64>> = (0..12)
        .map(|v| {
            let level = if v >= 7 { 8800.0 } else { 10_000.0 };
            (0..5).map(|r| level * (1.0 + 0.01 * wiggle(v * 5 + r))).collect()
        })
        .collect();

    let rel = relative_to_first(&versions).unwrap();
    assert!((rel[0] - 1.0).abs() < 1e-12);
    assert!(rel[3] > 0.98 && rel[3] < 1.02 && rel[9] > 0.86 && rel[9] < 0.9, "{rel:?}");

    let cfg = CompareConfig::default();
    let same = compare(&versions[0], &versions[3], SampleLevel::Repetitions, &cfg).unwrap();
    let slower = compare(&versions[0], &versions[9], SampleLevel::Repetitions, &cfg).unwrap();
    assert_eq!(same.verdict, Verdict::NoSignificantChange);
    assert_eq!(slower.verdict, Verdict::Slower);
    assert_eq!(slower.ci.kind, CiKind::BetweenRepetitions);
    assert!(slower.ci.lo < 0.88 && 0.88 < slower.ci.hi && slower.ci.hi < 0.9, "{:?}", slower.ci);

    let cps = detect_change_points(&versions, &ChangePointConfig::default()).unwrap();
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0].index, 7);
    assert!((cps[0].step + 0.12).abs() < 0.01 && cps[0].p_value <= 0.05, "{:?}", cps[0]);
}

#[test]
fn single_run_per_side_is_flagged_within_run_only() {
    let base: Vec<f64> = (0..120).map(|i| 9500.0 + 300.0 * wiggle(i)).collect();
    let cand: Vec<f64> = (0..120).map(|i| 9000.0 + 300.0 * wiggle(i + 1000)).collect();
    let cfg = CompareConfig { direction: Direction::HigherIsBetter, ..CompareConfig::default() };
    let r = compare(&base, &cand, SampleLevel::Intervals, &cfg).unwrap();
    assert_eq!(r.ci.kind, CiKind::WithinRunOnly);
    assert_eq!(r.verdict, Verdict::Slower);

    let mean_ci = stats::mean_ci_within_run(&base, 0.95).unwrap();
    assert_eq!(mean_ci.kind, CiKind::WithinRunOnly);
    assert!(mean_ci.lo < 9500.0 && 9500.0 < mean_ci.hi, "{mean_ci:?}");
}

#[test]
fn stalls_of_a_run() {
    let mut rates: Vec<f64> = (0..60).map(|i| 9500.0 + 700.0 * wiggle(i)).collect();
    rates[30] = 900.0; // a checkpoint stall
    let s = stats::stability(&rates, &StallRule::default()).unwrap();
    assert_eq!(s.stalls, vec![30]);
    assert_eq!(s.min, 900.0);
    assert!(s.max > 10_100.0 && s.max <= 10_200.0);
}
