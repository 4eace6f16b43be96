//! Blocked comparison over a fleet: each block ran every arm once on one host, so the host is a
//! blocking factor. The ratio candidate / baseline is estimated from the paired log differences of
//! the blocks, and its interval from **per-host** differences: with three hosts or more, each host's
//! mean difference is one unit (Student's t with hosts − 1 degrees of freedom), so a host × arm
//! interaction (a version that suits one machine better than another) widens the interval instead of
//! passing for a real effect. With one or two hosts that interaction cannot be estimated and the
//! blocks are the units ([`BlockedUnit::Blocks`]; reports say so).
//!
//! [`simulate_false_alarms`] measures how often an A/A comparison (no real difference) would be called
//! significant, for docs/statistics.md and the tests.

use std::collections::BTreeMap;

use rand::RngExt;

use super::bootstrap::RatioCi;
use super::compare::{Comparison, judge};
use super::{CiKind, CiMethod, Direction, check_confidence, seeded_rng, t_quantile};
use crate::error::{Error, Result};

/// One block's measurements of the two arms.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockPair {
    /// The host (or host-slot) the block ran on.
    pub host: String,
    /// The baseline arm's value in this block (> 0).
    pub baseline: f64,
    /// The candidate arm's value in this block (> 0).
    pub candidate: f64,
}

/// What the units of the interval were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlockedUnit {
    /// Per-host mean differences (three hosts or more).
    Hosts,
    /// Per-block differences (one or two hosts: a host × arm interaction cannot be estimated).
    Blocks,
}

/// A ratio with its blocked confidence interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BlockedCi {
    /// Geometric-mean ratio candidate / baseline.
    pub ratio: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Confidence level.
    pub confidence: f64,
    /// Distinct hosts.
    pub hosts: usize,
    /// Blocks (pairs).
    pub blocks: usize,
    /// Degrees of freedom of the t quantile.
    pub df: f64,
    /// The units the interval was computed over.
    pub unit: BlockedUnit,
}

impl BlockedCi {
    /// True when the interval excludes 1 (no difference).
    pub fn significant(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// The blocked ratio and interval of `pairs` at `confidence` (e.g. 0.95).
///
/// Errors: fewer than two units (two hosts' worth of blocks, or two blocks on one host), a value that
/// is not a positive finite number, or a bad confidence level.
pub fn blocked_ratio_ci(pairs: &[BlockPair], confidence: f64) -> Result<BlockedCi> {
    check_confidence(confidence)?;
    if let Some((i, p)) =
        pairs.iter().enumerate().find(|(_, p)| !(p.baseline > 0.0 && p.candidate > 0.0 && p.candidate.is_finite()))
    {
        return Err(Error::Other(format!(
            "block {} on {}: values must be positive finite numbers (got {} and {})",
            i + 1,
            p.host,
            p.baseline,
            p.candidate
        )));
    }
    let mut by_host: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for p in pairs {
        by_host.entry(p.host.as_str()).or_default().push(p.candidate.ln() - p.baseline.ln());
    }
    let (unit, units): (BlockedUnit, Vec<f64>) = if by_host.len() >= 3 {
        (BlockedUnit::Hosts, by_host.values().map(|d| d.iter().sum::<f64>() / d.len() as f64).collect())
    } else {
        (BlockedUnit::Blocks, by_host.values().flatten().copied().collect())
    };
    if units.len() < 2 {
        return Err(Error::Other(format!(
            "a blocked interval needs at least 2 blocks; {} block(s) on {} host(s)",
            pairs.len(),
            by_host.len()
        )));
    }
    let n = units.len() as f64;
    let mean = units.iter().sum::<f64>() / n;
    let var = units.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let df = n - 1.0;
    let half = t_quantile(0.5 + confidence / 2.0, df) * (var / n).sqrt();
    Ok(BlockedCi {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        confidence,
        hosts: by_host.len(),
        blocks: pairs.len(),
        df,
        unit,
    })
}

/// [`blocked_ratio_ci`] judged by the verdict rule of [`super::compare::compare`] (the interval must
/// exclude 1 and the change exceed `noise_band`). The interval is centred on `ratio` (the ratio of the
/// means a report shows beside it) in log space, keeping its relative width.
pub fn compare_blocked(
    pairs: &[BlockPair],
    ratio: f64,
    direction: Direction,
    noise_band: f64,
    confidence: f64,
) -> Result<(BlockedCi, Comparison)> {
    if !(ratio > 0.0 && ratio.is_finite()) {
        return Err(Error::Other(format!("ratio {ratio} must be a positive finite number")));
    }
    let b = blocked_ratio_ci(pairs, confidence)?;
    let shift = ratio / b.ratio;
    let ci = RatioCi {
        ratio,
        lo: b.low * shift,
        hi: b.high * shift,
        confidence,
        resamples: 0,
        method: match b.unit {
            BlockedUnit::Hosts => CiMethod::BlockedHosts,
            BlockedUnit::Blocks => CiMethod::BlockedBlocks,
        },
        kind: CiKind::BetweenRepetitions,
    };
    Ok((b, judge(ci, direction, noise_band)))
}

/// A simulated fleet for [`simulate_false_alarms`]: log-normal measurements with a level per host, a
/// host × arm interaction and noise per measurement, and no real difference between the arms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetModel {
    /// Hosts.
    pub hosts: usize,
    /// Blocks per host.
    pub blocks_per_host: usize,
    /// Standard deviation of the host level (log scale; 0.10 ≈ hosts 10 % apart).
    pub host_sd: f64,
    /// Standard deviation of the host × arm interaction (log scale).
    pub interaction_sd: f64,
    /// Standard deviation of one measurement (log scale; 0.03 ≈ 3 % run-to-run noise).
    pub noise_sd: f64,
}

/// Simulates `trials` A/A fleets from `model` (seeded, deterministic) and returns the share whose
/// blocked interval at `confidence` excludes 1: the false-alarm rate. With `pooled` the blocks are
/// always the units (what ignoring the hosts would give), to show what the per-host units prevent.
pub fn simulate_false_alarms(model: &FleetModel, confidence: f64, trials: usize, seed: u64, pooled: bool) -> f64 {
    let mut rng = seeded_rng(seed);
    let mut normal = move || {
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let mut alarms = 0;
    for _ in 0..trials {
        let mut pairs = Vec::with_capacity(model.hosts * model.blocks_per_host);
        for h in 0..model.hosts {
            let level = 7.0 + model.host_sd * normal();
            let interaction = model.interaction_sd * normal();
            for _ in 0..model.blocks_per_host {
                pairs.push(BlockPair {
                    host: if pooled { "all".to_string() } else { format!("h{h}") },
                    baseline: (level + model.noise_sd * normal()).exp(),
                    candidate: (level + interaction + model.noise_sd * normal()).exp(),
                });
            }
        }
        if blocked_ratio_ci(&pairs, confidence).is_ok_and(|ci| ci.significant()) {
            alarms += 1;
        }
    }
    alarms as f64 / trials as f64
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn compare_blocked_calls_a_consistent_change_over_hosts_and_centres_on_the_shown_ratio() {
        let pairs: Vec<BlockPair> = (0..6)
            .map(|i| BlockPair {
                host: format!("h{}", i % 3),
                baseline: 100.0 + 10.0 * (i % 3) as f64,
                candidate: (100.0 + 10.0 * (i % 3) as f64) * (1.10 + 0.002 * i as f64),
            })
            .collect();
        let (b, c) = compare_blocked(&pairs, 1.11, Direction::HigherIsBetter, 0.02, 0.95).unwrap();
        assert_eq!((b.unit, b.hosts, b.blocks), (BlockedUnit::Hosts, 3, 6));
        assert_eq!(c.ci.method, CiMethod::BlockedHosts);
        assert_eq!(c.verdict, super::super::Verdict::Faster);
        // Same relative width, centred on the ratio given.
        assert!(((c.ci.hi / c.ci.lo) - (b.high / b.low)).abs() < 1e-12);
        assert!((c.ci.lo * c.ci.hi).sqrt() > 1.10 && c.ci.lo < 1.11 && c.ci.hi > 1.11);
        let (_, slower) = compare_blocked(&pairs, 1.11, Direction::LowerIsBetter, 0.02, 0.95).unwrap();
        assert_eq!(slower.verdict, super::super::Verdict::Slower);
        // Within the noise band: not called.
        let (_, flat) = compare_blocked(&pairs, 1.11, Direction::HigherIsBetter, 0.2, 0.95).unwrap();
        assert_eq!(flat.verdict, super::super::Verdict::NoSignificantChange);
        assert!(compare_blocked(&pairs, 0.0, Direction::HigherIsBetter, 0.02, 0.95).is_err());
    }
    use crate::stats::testutil::proptest_config;

    fn pair(host: &str, baseline: f64, candidate: f64) -> BlockPair {
        BlockPair { host: host.into(), baseline, candidate }
    }

    #[test]
    fn host_levels_cancel_within_blocks() {
        // Hosts 2x apart, the candidate 10 % faster on every one: the ratio is exactly 1.1.
        let pairs = [pair("a", 100.0, 110.0), pair("a", 101.0, 111.1), pair("b", 200.0, 220.0), pair("c", 50.0, 55.0)];
        let ci = blocked_ratio_ci(&pairs, 0.95).unwrap();
        assert!((ci.ratio - 1.1).abs() < 1e-9, "{ci:?}");
        assert_eq!((ci.hosts, ci.blocks, ci.unit, ci.df), (3, 4, BlockedUnit::Hosts, 2.0));
        assert!(ci.significant());
    }

    #[test]
    fn one_or_two_hosts_use_blocks_and_bad_input_is_refused() {
        let pairs = [pair("a", 100.0, 103.0), pair("a", 100.0, 97.0), pair("b", 90.0, 91.0)];
        let ci = blocked_ratio_ci(&pairs, 0.95).unwrap();
        assert_eq!((ci.unit, ci.df), (BlockedUnit::Blocks, 2.0));
        assert!(!ci.significant() && ci.low < 1.0 && ci.high > 1.0);
        let e = blocked_ratio_ci(&[pair("a", 1.0, 1.0)], 0.95).unwrap_err().to_string();
        assert!(e.contains("at least 2 blocks"), "{e}");
        let e = blocked_ratio_ci(&[pair("a", 1.0, 1.0), pair("b", 0.0, 1.0)], 0.95).unwrap_err().to_string();
        assert!(e.contains("block 2 on b"), "{e}");
        assert!(blocked_ratio_ci(&pairs, 1.5).is_err());
    }

    #[test]
    fn false_alarm_rate_is_nominal_with_per_host_units() {
        // 6 hosts × 5 blocks, hosts 15 % apart, 3 % noise.
        let quiet = FleetModel { hosts: 6, blocks_per_host: 5, host_sd: 0.15, interaction_sd: 0.0, noise_sd: 0.03 };
        let rate = simulate_false_alarms(&quiet, 0.95, 3000, 11, false);
        assert!((0.03..=0.07).contains(&rate), "no interaction, per-host units: {rate}");
        // A 3 % host × arm interaction: blocks as units call it significant far too often; hosts do not.
        let mixed = FleetModel { interaction_sd: 0.03, ..quiet };
        let per_host = simulate_false_alarms(&mixed, 0.95, 3000, 12, false);
        let pooled = simulate_false_alarms(&mixed, 0.95, 3000, 12, true);
        assert!((0.03..=0.07).contains(&per_host), "interaction, per-host units: {per_host}");
        assert!(pooled > 0.12, "interaction, blocks as units: {pooled}");
    }

    proptest! {
        #![proptest_config(proptest_config(64))]

        #[test]
        fn scaling_a_host_changes_nothing(
            values in prop::collection::vec((1.0f64..1000.0, 0.5f64..2.0), 6..20),
            scale in 0.1f64..10.0,
        ) {
            let pairs: Vec<BlockPair> =
                values.iter().enumerate().map(|(i, (b, r))| pair(&format!("h{}", i % 3), *b, b * r)).collect();
            let scaled: Vec<BlockPair> = pairs
                .iter()
                .map(|p| if p.host == "h0" { pair("h0", p.baseline * scale, p.candidate * scale) } else { p.clone() })
                .collect();
            let (a, b) = (blocked_ratio_ci(&pairs, 0.9).unwrap(), blocked_ratio_ci(&scaled, 0.9).unwrap());
            prop_assert!((a.ratio - b.ratio).abs() < 1e-9 * a.ratio);
            prop_assert!((a.low - b.low).abs() < 1e-9 * a.ratio && (a.high - b.high).abs() < 1e-9 * a.ratio);
            prop_assert!(a.low <= a.ratio && a.ratio <= a.high);
        }
    }
}
