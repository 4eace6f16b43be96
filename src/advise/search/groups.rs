//! Groups that "act together" in the attribution. Explain's search calls a group a finding of its own
//! when the whole moves the advised set but leaving out any one part costs nothing significant. That
//! happens when the parts stand in for each other, and also when the repetitions are too few to make
//! one real contributor significant on its own. Advice must not carry the values that measured
//! nothing, so a group's members are recommended only where their own leave-one-out shows a loss.

use crate::explain::bisect::{Effect, Finding};
use crate::stats::CompareConfig;

use super::{Fate, could_detect, gain};

/// A part's own loss must be at least this share of the group's effect (in points) to be recommended
/// with it: a value whose absence costs a few points of a group worth thirty is not shown to matter.
const MIN_SHARE: f64 = 0.25;

/// What became of the members of one group finding.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Split {
    /// The members (indices into the finding's candidates) recommended with the group's effect.
    pub kept: Vec<usize>,
    /// The others, each with its fate.
    pub dropped: Vec<(usize, Fate)>,
    /// Those of the dropped that may stand in for each other (no part was kept, and leaving each out
    /// did not make the set faster): which of them is enough is for a measurement of each alone.
    pub stand_ins: Vec<usize>,
}

/// The loss of leaving `part` out of the full set, relative to the full set without it (positive: the
/// part helps): the full set's gain over the set without it.
fn loss(part: &Effect) -> Option<f64> {
    part.comparison.as_ref().map(gain)
}

/// An effect's figures in words: `+2.0 points (CI −3.1 to +7.2)`.
pub(super) fn figures(part: &Effect) -> String {
    match (part.points, part.points_lo, part.points_hi) {
        (Some(p), Some(lo), Some(hi)) => format!("{p:+.1} points (CI {lo:+.1} to {hi:+.1})"),
        _ => "not measured".into(),
    }
}

/// Splits a group finding (`f.set.len() > 1`) into the members to recommend and the others. A part is
/// kept when leaving it out cost more than the noise band and at least [`MIN_SHARE`] of the group's
/// effect. A culprit (no parts) is kept as it is. When no part is kept, the parts stand in for each
/// other (or the measurement could not tell them apart): none is recommended on the group's
/// measurement, and they are the [`Split::stand_ins`] that the search then measures one by one. A group
/// found without its parts' measurements (stored before they were kept) is kept whole.
pub(super) fn split(f: &Finding, names: &[String], cfg: &CompareConfig) -> Split {
    if f.parts.is_empty() || f.parts.iter().any(|p| loss(p).is_none()) {
        return Split { kept: f.set.clone(), ..Split::default() };
    }
    let group_points = f.found.points.unwrap_or(0.0);
    let beyond = |p: &Effect| loss(p).is_some_and(|l| l > cfg.noise_band);
    let share = |p: &Effect| p.points.is_some_and(|x| x >= MIN_SHARE * group_points);
    let kept_parts: Vec<&Effect> = f.parts.iter().filter(|p| beyond(p) && share(p)).collect();
    let whole = figures(&f.found);
    let name_list = |set: &[usize]| set.iter().map(|&k| names[k].as_str()).collect::<Vec<_>>().join(", ");
    let mut out = Split::default();
    for part in &f.parts {
        if kept_parts.iter().any(|k| std::ptr::eq(*k, part)) {
            out.kept.extend(part.set.iter().copied());
            continue;
        }
        let could = could_detect(part.detectable.map(|d| d.either_way()));
        let l = loss(part).unwrap_or(0.0);
        let cost = figures(part);
        for &k in &part.set {
            let others = name_list(&f.set.iter().copied().filter(|&x| x != k).collect::<Vec<_>>());
            let mates: Vec<usize> = part.set.iter().copied().filter(|&x| x != k).collect();
            // A half is measured as a whole: its members share its figures.
            let what = if mates.is_empty() {
                "leaving it out alone".to_string()
            } else {
                format!("leaving it out together with {} (half of the group)", name_list(&mates))
            };
            let fate = if l < -cfg.noise_band {
                Fate::Slower(format!(
                    "found in a group with {others}, but the set was faster without it: {what} changed it by {cost}"
                ))
            } else if kept_parts.is_empty() {
                out.stand_ins.push(k);
                Fate::NotProven(format!(
                    "with {others} it moved the advised set by {whole}, but {what} cost {cost}{could}: they may \
                     stand in for each other, and which of them is needed was not measured"
                ))
            } else if l <= cfg.noise_band {
                Fate::NoEffect(format!(
                    "no effect measured on this workload: found in a group with {others}, but {what} cost {cost}, \
                     within the noise band (±{:.1} %)",
                    cfg.noise_band * 100.0
                ))
            } else {
                Fate::NotProven(format!(
                    "found in a group with {others} worth {whole}, but {what} cost only {cost}{could}, less than a \
                     quarter of the group's effect"
                ))
            };
            out.dropped.push((k, fate));
        }
    }
    out.kept.sort_unstable();
    out.stand_ins.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Direction, SampleLevel, compare};

    /// A part's effect: the full set without it (base) against the full set, at `ratio`, noisy enough
    /// that the comparison decides nothing.
    fn effect(set: Vec<usize>, ratio: f64, points: f64) -> Effect {
        effect_in(&CompareConfig::default(), set, ratio, points)
    }

    /// [`effect`] compared under `cfg`, as the search compares every part under the advice's config.
    fn effect_in(cfg: &CompareConfig, set: Vec<usize>, ratio: f64, points: f64) -> Effect {
        let base = [100.0, 90.0, 110.0];
        let with: Vec<f64> = base.iter().map(|b| b * ratio).rev().collect();
        Effect {
            set,
            names: vec![],
            step: 1,
            comparison: compare(&base, &with, SampleLevel::Repetitions, cfg).ok(),
            points: Some(points),
            points_lo: Some(points - 30.0),
            points_hi: Some(points + 30.0),
            toward_a: false,
            error: None,
            detectable: None,
        }
    }

    fn group(parts: Vec<Effect>, points: f64) -> Finding {
        let set = parts.iter().flat_map(|p| p.set.clone()).collect();
        Finding {
            set,
            names: vec![],
            round: 1,
            found: effect(vec![], 1.0 + points / 100.0, points),
            increment: None,
            alone: None,
            parts,
        }
    }

    fn names() -> Vec<String> {
        ["bp", "log", "io", "x"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn members_whose_absence_cost_nothing_are_dropped() {
        // MariaDB 10.11 at 45 min: leaving out the buffer pool cost ~38 %, the log file size and
        // io_capacity 1.04 and 0.98 of the full set.
        let f = group(vec![effect(vec![0], 1.6, 38.0), effect(vec![1], 0.99, -1.0), effect(vec![2], 1.015, 1.5)], 33.6);
        let s = split(&f, &names(), &CompareConfig::default());
        assert_eq!(s.kept, vec![0]);
        assert_eq!(s.dropped.len(), 2);
        assert!(
            matches!(&s.dropped[0], (1, Fate::NoEffect(w)) if w.contains("within the noise band") && w.contains("bp"))
        );
        // 2 % beyond the default band of 2 % would pass the band alone: the share keeps it out.
        let s = split(
            &group(vec![effect(vec![0], 1.6, 38.0), effect(vec![2], 1.03, 2.5)], 33.6),
            &names(),
            &CompareConfig::default(),
        );
        assert_eq!(s.kept, vec![0]);
        assert!(matches!(&s.dropped[0], (2, Fate::NotProven(w)) if w.contains("less than a quarter")));
    }

    #[test]
    fn two_real_contributors_are_both_kept() {
        let f = group(vec![effect(vec![0], 1.25, 20.0), effect(vec![1], 1.15, 12.0), effect(vec![3], 1.0, 0.0)], 40.0);
        let s = split(&f, &names(), &CompareConfig::default());
        assert_eq!(s.kept, vec![0, 1]);
        assert_eq!(s.dropped.iter().map(|d| d.0).collect::<Vec<_>>(), vec![3]);
        assert!(s.stand_ins.is_empty(), "a group with a member kept has no stand-ins");
    }

    #[test]
    fn stand_ins_recommend_none_of_them() {
        let f = group(vec![effect(vec![0], 1.01, 0.8), effect(vec![1], 0.99, -0.7)], 25.0);
        let s = split(&f, &names(), &CompareConfig::default());
        assert!(s.kept.is_empty());
        assert_eq!(s.stand_ins, vec![0, 1]);
        assert!(
            s.dropped.iter().all(|(_, f)| matches!(f, Fate::NotProven(w) if w.contains("stand in for each other")))
        );
    }

    #[test]
    fn halves_are_kept_or_dropped_whole() {
        let f = group(vec![effect(vec![0, 1], 1.4, 30.0), effect(vec![2, 3], 1.0, 0.1)], 35.0);
        let s = split(&f, &names(), &CompareConfig::default());
        assert_eq!(s.kept, vec![0, 1]);
        assert_eq!(s.dropped.iter().map(|d| d.0).collect::<Vec<_>>(), vec![2, 3]);
        assert!(matches!(&s.dropped[0].1, Fate::NoEffect(w) if w.contains("together with x (half of the group)")));
    }

    #[test]
    fn a_member_the_set_was_faster_without_is_called_slower() {
        let f = group(vec![effect(vec![0], 1.5, 40.0), effect(vec![1], 0.9, -8.0)], 33.0);
        let s = split(&f, &names(), &CompareConfig::default());
        assert_eq!(s.kept, vec![0]);
        assert!(matches!(&s.dropped[0], (1, Fate::Slower(w)) if w.contains("faster without it")), "{s:?}");
    }

    #[test]
    fn lower_is_better_counts_a_rise_as_the_loss() {
        let cfg = CompareConfig { direction: Direction::LowerIsBetter, ..CompareConfig::default() };
        let f = group(vec![effect_in(&cfg, vec![0], 0.7, 30.0), effect_in(&cfg, vec![1], 1.0, 0.0)], 30.0);
        assert_eq!(split(&f, &names(), &cfg).kept, vec![0]);
    }

    #[test]
    fn a_group_without_its_parts_is_kept_whole() {
        let mut f = group(vec![], 30.0);
        f.set = vec![0, 1];
        assert_eq!(split(&f, &names(), &CompareConfig::default()).kept, vec![0, 1]);
    }
}
