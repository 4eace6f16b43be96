//! Adaptive search steps ([`Sequential`]): seeded simulations of the step judge with the fake
//! measurement of the parent module.

use super::*;
use crate::stats::SequentialDesign;

/// Adaptive steps of 3 repetitions, then rounds of one up to `max`, one thread count.
fn adaptive(max: usize, until: Option<f64>, max_runs: usize) -> SearchConfig {
    let design = SequentialDesign::new(3, max, 0.95).unwrap();
    SearchConfig {
        confirm: false,
        sequential: Some(Sequential { design, batch: 1, runs_per_repetition: 1, until }),
        ..cfg(Direction::HigherIsBetter, max_runs)
    }
}

/// Searches of an A/A pair (A = B, one candidate that does nothing), noise band 0 so that only the
/// interval decides: the share whose gap step calls B different from A.
fn aa_false_alarms(config: &SearchConfig, sims: u64) -> (f64, f64) {
    let c = candidates(&["nothing"]);
    let (mut called, mut runs) = (0, 0);
    for seed in 0..sims {
        let mut m = Model::new(1000.0, 1000.0, &[1.0], 7000 + seed);
        m.cv = 0.03;
        let out = search(&c, config, &mut m).unwrap();
        let gap = out.rounds.first().map(|r| r.gap).or(out.gap).unwrap();
        called += u64::from(gap.comparison.verdict != Verdict::NoSignificantChange);
        runs += out.runs_used;
    }
    (called as f64 / sims as f64, runs as f64 / sims as f64)
}

/// A/A: looking after every round with the fixed-sample interval calls far more than 5 % of the gaps
/// different; the repeated interval of the sequential design keeps it at 5 %.
#[test]
fn a_a_gaps_are_called_different_at_most_at_the_stated_rate() {
    let band0 = |mut c: SearchConfig| {
        c.compare.noise_band = 0.0;
        c
    };
    let sims = 1000;
    let (rate, runs) = aa_false_alarms(&band0(adaptive(12, Some(0.0), 10_000)), sims);
    assert!(rate <= 0.06, "sequential: {rate} of {sims} A/A gaps called ({runs} runs each)");
    assert!(runs > 3.0 * 10.0, "the steps went on adding rounds: {runs} runs on average");
    // The same looks (every 3 repetitions here) judged by the fixed-sample interval: what
    // `--extra-rounds` did before it went through the design.
    let naive = SearchConfig { extra_rounds: 3, ..band0(cfg(Direction::HigherIsBetter, 10_000)) };
    let naive = SearchConfig { confirm: false, ..naive };
    let (naive_rate, _) = aa_false_alarms(&naive, sims);
    assert!(naive_rate > rate + 0.02, "uncorrected pooling {naive_rate} against sequential {rate}");
    // `--extra-rounds 3` through the design (rounds of the step's 3 repetitions).
    let design = SequentialDesign::new(3, 12, 0.95).unwrap();
    let routed = SearchConfig {
        sequential: Some(Sequential { design, batch: 3, runs_per_repetition: 1, until: None }),
        ..naive
    };
    let (routed_rate, _) = aa_false_alarms(&routed, sims);
    eprintln!("A/A gaps called: sequential {rate} ({runs} runs), uncorrected {naive_rate}, routed {routed_rate}");
    assert!(routed_rate <= 0.06, "extra rounds through the design: {routed_rate}");
}

/// A large gap (×1.5 at 1 % noise) is decided by the first look.
#[test]
fn a_large_effect_stops_at_the_minimum() {
    let c = candidates(&["sync_binlog", "nothing"]);
    for seed in 0..20 {
        let mut m = Model::new(1500.0, 1000.0, &[1.5, 1.0], seed);
        m.cv = 0.01;
        let config = adaptive(12, Some(0.03), 1000);
        let out = search(&c, &config, &mut m).unwrap();
        assert_eq!(names(&out), ["sync_binlog"], "seed {seed}: {:?}", out.notes);
        // Only comparisons without a difference (the probe that leaves out `nothing`, A against B
        // with sync_binlog set) get rounds; every ×1.5 comparison stopped at 3 repetitions.
        for s in m.steps.iter().filter(|s| s.repetitions.is_some()) {
            let control = m.mean(&s.probes[0]);
            assert!(s.probes[1..].iter().all(|p| m.mean(p) == control), "seed {seed}: {s:?}");
        }
        assert_eq!(out.steps[1].step.purpose, Purpose::Split, "seed {seed}: the gap step ran once");
    }
}

/// Noise that cannot be decided: the steps add rounds up to the maximum, and never past the budget;
/// the runs the search counts are the runs the fake measured.
#[test]
fn adaptive_steps_never_exceed_the_budget() {
    let c = named(6);
    let mut factors = vec![1.0; 6];
    factors[2] = 1.06;
    factors[4] = 1.04;
    for (seed, max_runs) in (0..30u64).zip([20usize, 33, 47, 60, 75, 90, 120, 200].into_iter().cycle()) {
        let mut m = Model::new(1000.0 * 1.06 * 1.04, 1000.0, &factors, seed);
        m.cv = 0.05;
        let config = SearchConfig { confirm: seed % 2 == 0, singles_max: 3, ..adaptive(10, Some(0.01), max_runs) };
        let out = search(&c, &config, &mut m).unwrap();
        let measured: usize = m.steps.iter().map(|s| s.probes.len() * s.repetitions.map_or(3, |r| r as usize)).sum();
        assert_eq!(measured, out.runs_used, "seed {seed}");
        assert!(out.runs_used <= max_runs, "seed {seed}: {} runs of {max_runs}", out.runs_used);
        assert!(out.runs_used <= estimate_runs(6, 6, &config), "seed {seed}: {} runs", out.runs_used);
        let added = m.steps.iter().filter(|s| s.repetitions.is_some()).count();
        assert!(max_runs < 60 || added > 0, "seed {seed}: no round added at 5 % noise");
    }
}
