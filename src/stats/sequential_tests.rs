use super::*;
use crate::stats::power::{SideNoise, detectable_effect};
use crate::stats::testutil::normals;
use crate::stats::{BootstrapConfig, CompareConfig, SampleLevel, compare, seeded_rng};

fn plan(min: usize, max: usize) -> SequentialPlan {
    SequentialDesign::new(min, max, 0.95).unwrap().plan()
}

#[test]
fn one_look_is_the_fixed_test() {
    let p = plan(5, 5);
    assert!((p.boundaries[0] - 1.959964).abs() < 1e-4, "{:?}", p.boundaries);
    assert!((p.nominal_alpha(5) - 0.05).abs() < 1e-9);
}

#[test]
fn bad_designs_are_rejected() {
    assert!(SequentialDesign::new(1, 10, 0.95).is_err());
    assert!(SequentialDesign::new(5, 4, 0.95).is_err());
    assert!(SequentialDesign::new(3, 10, 1.0).is_err());
}

/// The boundaries spend what the spending function says: with the variance known (z statistics of a
/// simulated Brownian motion at the looks), the share of 20 000 paths that ever cross is α, and the
/// boundaries are wider than the fixed test's at every look.
#[test]
fn boundaries_keep_the_overall_level_with_known_variance() {
    let p = plan(3, 30);
    assert_eq!(p.boundaries.len(), 28);
    assert!(p.boundaries.iter().all(|&c| c > 1.96 && c < 3.5), "{:?}", p.boundaries);
    let mut crossed = 0;
    let mut rng = seeded_rng(77);
    for _ in 0..20_000 {
        let mut s = 0.0;
        let mut info = 0;
        for (k, n) in (3..=30).enumerate() {
            for _ in info..n {
                s += gaussian(&mut rng);
            }
            info = n;
            if (s / (n as f64).sqrt()).abs() >= p.boundaries[k] {
                crossed += 1;
                break;
            }
        }
    }
    let rate = crossed as f64 / 20_000.0;
    assert!((0.045..=0.055).contains(&rate), "crossed in {rate}");
}

/// A/A: over 4000 seeded adaptive experiments per design (normal repetitions, CV 3 %), the share
/// with any verdict stays at or below 5 %, although every round is a look; looking as often at the
/// fixed 95 % interval calls far more.
#[test]
fn aa_false_alarms_stay_at_the_level_despite_repeated_looks() {
    let mut lines = Vec::new();
    for (min, max, band, until) in [(3, 30, 0.0, 0.03), (3, 30, 0.02, 0.03), (3, 10, 0.0, 0.0), (5, 20, 0.0, 0.01)] {
        let r = simulate(&plan(min, max), 0.03, 0.0, band, until, 4000, 1_000_000).unwrap();
        lines.push(format!("min {min} max {max} band {band} until {until}: {r:?}"));
        assert!(r.called <= 0.05, "{}", lines.join("\n"));
    }
    // The naive procedure: the fixed 95 % interval at every look (a "design" whose every look spends
    // the whole α).
    let naive = SequentialPlan { design: SequentialDesign::new(3, 10, 0.95).unwrap(), boundaries: vec![1.959964; 8] };
    let r = simulate(&naive, 0.03, 0.0, 0.0, 0.0, 4000, 1_000_000).unwrap();
    lines.push(format!("naive peeking 3..10: {r:?}"));
    assert!(r.called > 0.1, "{}", lines.join("\n"));
    eprintln!("{}", lines.join("\n"));
}

/// A 5 % change at CV 3 %: the adaptive design calls it with high power and, on average, with fewer
/// repetitions than a fixed plan needs for the same power; the fixed 5-repetition plan has less power.
#[test]
fn a_five_percent_change_is_found_with_fewer_repetitions_than_a_fixed_plan() {
    // The fixed plan with the same power: the smallest n whose 5 % power reaches the adaptive one's.
    let side = |n| SideNoise::repetitions(0.03, n);
    let fixed_for = |power: f64| {
        (3..200)
            .find(|&n| {
                detectable_effect(SampleLevel::Repetitions, side(n), side(n), 0.95, 0.02, power.min(0.99))
                    .unwrap()
                    .either_way()
                    <= 0.05
            })
            .unwrap()
    };
    for max in [10, 20] {
        let r = simulate(&plan(3, max), 0.03, 0.05, 0.02, 0.03, 2000, 5_000_000).unwrap();
        let fixed = fixed_for(r.called);
        eprintln!("adaptive 3..{max}: {r:?}; fixed plan for that power: {fixed} per side");
        assert!(r.mean_repetitions < fixed as f64, "3..{max}: {r:?} vs {fixed}");
    }
    let p = plan(3, 30);
    let r = simulate(&p, 0.03, 0.05, 0.02, 0.03, 2000, 2_000_000).unwrap();
    let down = simulate(&p, 0.03, -0.05, 0.02, 0.03, 2000, 3_000_000).unwrap();
    let target = r.called.min(down.called).min(0.99);
    let fixed = fixed_for(target);
    // The fixed 5-repetition plan, by simulation with the real verdict.
    let mut hits = 0;
    for s in 0..1000 {
        let mut rng = seeded_rng(4_000_000 + s);
        let b = normals(&mut rng, 5, 1000.0, 30.0);
        let c = normals(&mut rng, 5, 1050.0, 31.5);
        let cfg = CompareConfig {
            noise_band: 0.02,
            bootstrap: BootstrapConfig { resamples: 2000, seed: s, ..BootstrapConfig::default() },
            ..CompareConfig::default()
        };
        hits += usize::from(compare(&b, &c, SampleLevel::Repetitions, &cfg).unwrap().verdict == Verdict::Faster);
    }
    let five = hits as f64 / 1000.0;
    eprintln!(
        "adaptive 3..30: up {r:?}, down {down:?}; fixed plan for power {target}: {fixed} per side; fixed 5: power {five}"
    );
    assert!(r.called >= 0.9 && down.called >= 0.9, "{r:?} {down:?}");
    assert!(r.mean_repetitions < fixed as f64 && down.mean_repetitions < fixed as f64, "{r:?} {down:?} vs {fixed}");
    assert!(five < r.called, "fixed 5: {five}");
}

/// A large effect stops at the first look; an A/A with a tight target runs to the maximum.
#[test]
fn large_effects_stop_at_the_minimum_and_aa_runs_to_the_maximum() {
    let p = plan(3, 8);
    let b = [1000.0, 1030.0, 985.0];
    let c = [620.0, 640.0, 610.0];
    let (cmp, look) = sequential_look(&b, &c, &p, Direction::HigherIsBetter, 0.02, 0.03).unwrap();
    assert_eq!((cmp.verdict, look), (Verdict::Slower, Look::Decisive));
    let r = simulate(&p, 0.05, 0.0, 0.0, 0.001, 200, 9).unwrap();
    assert!(r.mean_repetitions > 7.5, "{r:?}");
}

/// The repeated interval is wider than the fixed one at the same look, and is the fixed one when
/// there is a single look.
#[test]
fn repeated_interval_is_wider_than_the_fixed_one() {
    let b = [1000.0, 1030.0, 985.0, 1010.0, 990.0];
    let c = [1040.0, 1010.0, 1060.0, 1035.0, 1020.0];
    let fixed = crate::stats::ratio_ci(&b, &c, SampleLevel::Repetitions, &BootstrapConfig::default()).unwrap();
    let rci = sequential_ratio_ci(&b, &c, &plan(3, 20)).unwrap();
    assert!(rci.lo < fixed.lo && rci.hi > fixed.hi, "{rci:?} vs {fixed:?}");
    let one = sequential_ratio_ci(&b[..3], &c[..3], &plan(3, 3)).unwrap();
    let welch =
        crate::stats::ratio_ci(&b[..3], &c[..3], SampleLevel::Repetitions, &BootstrapConfig::default()).unwrap();
    assert!((one.lo - welch.lo).abs() < 1e-6 && (one.hi - welch.hi).abs() < 1e-6);
}

/// The detectable effect of the repeated interval is calibrated: a true change of the stated size
/// (planned from the samples of one seeded experiment, as reports do) is called by the look's verdict
/// at that number of repetitions in 75–85 % of 1000 seeded experiments; and it is larger than the
/// fixed-sample figure for the same repetitions (the repeated interval is wider).
#[test]
fn the_sequential_detectable_effect_has_about_80_percent_power_at_its_look() {
    let mut report = Vec::new();
    for (i, &(min, max, n, cv, band)) in
        [(3, 30, 6, 0.03, 0.02), (3, 10, 10, 0.05, 0.0), (5, 20, 8, 0.02, 0.02)].iter().enumerate()
    {
        let p = plan(min, max);
        let side = SideNoise::repetitions(cv, n);
        // Samples whose sample CV is exactly `cv` (n even), so that the figure is planned for the true
        // noise.
        let dev = cv * ((n - 1) as f64 / n as f64).sqrt();
        let exact: Vec<f64> = (0..n).map(|k| 1000.0 * (1.0 + dev * if k % 2 == 0 { 1.0 } else { -1.0 })).collect();
        let d = sequential_detectable_effect(&exact, &exact, &p, band, 0.8).unwrap();
        let fixed = detectable_effect(SampleLevel::Repetitions, side, side, 0.95, band, 0.8).unwrap();
        assert!(d.increase > fixed.increase, "sequential {d:?} vs fixed {fixed:?}");
        let mut hits = 0;
        for s in 0..1000u64 {
            let mut rng = seeded_rng(900_000 + 10_000 * i as u64 + s);
            let b = normals(&mut rng, n, 1000.0, 1000.0 * cv);
            let m = 1000.0 * (1.0 + d.increase);
            let c = normals(&mut rng, n, m, m * cv);
            let (cmp, _) = sequential_look(&b, &c, &p, Direction::HigherIsBetter, band, 0.0).unwrap();
            hits += usize::from(cmp.verdict == Verdict::Faster);
        }
        let power = hits as f64 / 1000.0;
        report.push(format!("{min}..{max} at {n}, cv {cv}, band {band}: +{:.4} -> {power}", d.increase));
        assert!((0.75..=0.85).contains(&power), "{}", report.join("\n"));
    }
    eprintln!("{}", report.join("\n"));
}

/// The repetitions an adaptive design needs for ±5 % are the first look whose repeated interval
/// detects it: more than the fixed plan needs (each look is at a stricter level), and one look fewer
/// does not detect it; a design whose maximum is too small says so.
#[test]
fn repetitions_for_a_design_are_its_first_look_that_detects_the_target() {
    let p = plan(3, 30);
    let cv = 0.03;
    let RepetitionsNeeded::PerSide(n) = sequential_repetitions_for(cv, cv, 0.05, &p, 0.02, 0.8).unwrap() else {
        panic!("a look of 3..=30 detects ±5 % at CV 3 %")
    };
    let RepetitionsNeeded::PerSide(fixed) = crate::stats::repetitions_for(cv, cv, 0.05, 0.95, 0.02, 0.8).unwrap()
    else {
        panic!()
    };
    assert!(n > fixed, "sequential {n} against fixed {fixed}");
    let at = |n: usize| {
        let (b, c) = (SideNoise::repetitions(cv, n), SideNoise::repetitions(cv, n));
        detectable_effect(SampleLevel::Intervals, b, c, 1.0 - p.nominal_alpha(n), 0.02, 0.8).unwrap().either_way()
    };
    assert!(at(n) <= 0.05 && at(n - 1) > 0.05, "n {n}: {} / {}", at(n), at(n - 1));
    assert_eq!(
        sequential_repetitions_for(cv, cv, 0.05, &plan(3, 5), 0.02, 0.8).unwrap(),
        RepetitionsNeeded::MoreThan(5)
    );
    assert_eq!(sequential_repetitions_for(cv, cv, 0.02, &p, 0.02, 0.8).unwrap(), RepetitionsNeeded::WithinNoiseBand);
}
