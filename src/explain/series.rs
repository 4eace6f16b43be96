//! `versus series`: an ordered list of targets (point releases, or one release under a series of
//! configs) as a relative-to-first table with each target's ratio interval, and the change points of
//! the metric over the series by E-divisive means with a permutation test
//! ([`crate::stats::detect_change_points`]): where it stepped down or up, by how much, how sure.
//!
//! Each target contributes one value per run (repetition) in each case (workload × threads). Change
//! points fall between targets. The minimum segment is 1 target for series of up to 5 targets (a
//! shorter series could not show any change otherwise) and 2 from 6 on, so that one odd target does
//! not become a step on its own.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::targets::{TargetSpec, find_experiment};
use crate::error::{Error, Result};
use crate::experiment::sandbox_executor::SandboxExecutor;
use crate::experiment::spec::{ConfigDef, TargetDef, WorkloadDef};
use crate::experiment::{ExperimentFile, Plan, Progress, RunOptions, run_experiment};
use crate::metric::Metric;
use crate::metric::RunValues;
use crate::server::Home;
use crate::stats::{self, BootstrapConfig, ChangePointConfig, SampleLevel};
use crate::store::{Status, Store};

/// One target of a series in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Target label.
    pub label: String,
    /// Its values, one per run.
    pub values: Vec<f64>,
    /// Mean of the values.
    pub mean: Option<f64>,
    /// `mean / first target's mean`.
    pub relative: Option<f64>,
    /// Interval of `relative` over repetitions (both sides need 2 runs or more).
    pub ci_lo: Option<f64>,
    /// Upper end.
    pub ci_hi: Option<f64>,
}

/// A change point: the metric stepped at `label`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesChange {
    /// Index of the first target after the step.
    pub index: usize,
    /// Its label.
    pub label: String,
    /// Mean of the segment before and after.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// `mean_after / mean_before − 1`.
    pub step: f64,
    /// Permutation p-value of the split.
    pub p_value: f64,
}

/// The series in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesCase {
    /// Workload label.
    pub workload: String,
    /// Client threads.
    pub threads: u32,
    /// The targets in order.
    pub points: Vec<SeriesPoint>,
    /// Where the metric stepped.
    pub changes: Vec<SeriesChange>,
    /// Why there are no change points or no ratios, when that is not obvious.
    pub note: Option<String>,
}

/// A version series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesReport {
    /// The metric.
    pub metric: String,
    /// Whether higher values are better.
    pub higher_is_better: bool,
    /// Confidence level of the ratio intervals.
    pub confidence: f64,
    /// p-value threshold of the change points.
    pub p_value: f64,
    /// Minimum number of targets on each side of a change point.
    pub min_segment: usize,
    /// The experiments the runs come from.
    pub experiments: Vec<String>,
    /// The target labels in series order.
    pub labels: Vec<String>,
    /// One entry per case.
    pub cases: Vec<SeriesCase>,
}

/// The change-point settings for a series of `n` targets (see the module docs).
pub fn change_point_config(n: usize, p_value: f64) -> ChangePointConfig {
    ChangePointConfig { p_value, min_segment: if n >= 6 { 2 } else { 1 }, ..ChangePointConfig::default() }
}

/// The series of one case from each target's values (targets without values are left out of the
/// change-point search and say so).
pub fn build_case(
    workload: &str,
    threads: u32,
    labels: &[String],
    values: &[Vec<f64>],
    confidence: f64,
    cp: &ChangePointConfig,
) -> SeriesCase {
    let mut case =
        SeriesCase { workload: workload.into(), threads, points: Vec::new(), changes: Vec::new(), note: None };
    let first = values.first().filter(|v| !v.is_empty());
    let first_mean = first.and_then(|v| stats::mean(v)).filter(|m| *m != 0.0);
    let ci_cfg = BootstrapConfig { confidence, ..BootstrapConfig::default() };
    for (label, v) in labels.iter().zip(values) {
        let mean = stats::mean(v);
        let (mut lo, mut hi) = (None, None);
        if let Some(f) = first
            && f.len() >= 2
            && v.len() >= 2
            && let Ok(ci) = stats::ratio_ci(f, v, SampleLevel::Repetitions, &ci_cfg)
        {
            (lo, hi) = (Some(ci.lo), Some(ci.hi));
        }
        case.points.push(SeriesPoint {
            label: label.clone(),
            values: v.clone(),
            mean,
            relative: mean.zip(first_mean).map(|(m, f)| m / f),
            ci_lo: lo,
            ci_hi: hi,
        });
    }
    // Change points over the targets that have values, mapped back to their positions.
    let present: Vec<usize> = (0..values.len()).filter(|&i| !values[i].is_empty()).collect();
    if present.len() < values.len() {
        case.note = Some(format!(
            "{} target(s) without values are left out of the change points",
            values.len() - present.len()
        ));
    }
    let series: Vec<&Vec<f64>> = present.iter().map(|&i| &values[i]).collect();
    if series.len() < 2 * cp.min_segment {
        case.note.get_or_insert_with(|| format!("{} target(s): too few for change points", series.len()));
        return case;
    }
    match stats::detect_change_points(&series, cp) {
        Ok(cps) => {
            case.changes = cps
                .iter()
                .map(|c| SeriesChange {
                    index: present[c.index],
                    label: labels[present[c.index]].clone(),
                    mean_before: c.mean_before,
                    mean_after: c.mean_after,
                    step: c.step,
                    p_value: c.p_value,
                })
                .collect();
        }
        Err(e) => case.note = Some(format!("no change points: {e}")),
    }
    case
}

/// The series of the runs of stored experiments: targets in the order they first appear (or as
/// `order` lists them), one case per workload and thread count.
pub fn from_store(
    store: &Store,
    experiments: &[String],
    order: &[String],
    metric: Metric,
    confidence: f64,
    p_value: f64,
) -> Result<SeriesReport> {
    let mut labels: Vec<String> = Vec::new();
    let mut names = Vec::new();
    // (workload, threads) -> label -> values
    let mut cases: BTreeMap<(String, u32), BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for which in experiments {
        let e = find_experiment(store, which)?;
        names.push(format!("{} (id {})", e.name, e.id));
        let mut runs = store.runs(e.id)?;
        runs.sort_by_key(|r| (r.cell.id, r.repetition));
        for r in runs {
            if !labels.contains(&r.cell.target) {
                labels.push(r.cell.target.clone());
            }
            let slot = cases.entry((r.cell.workload.clone(), r.cell.threads)).or_default();
            let values = slot.entry(r.cell.target.clone()).or_default();
            if r.status != Status::Done {
                continue;
            }
            let Some(d) = store.run(r.id)? else { continue };
            let Some(s) = d.run.summary.as_ref() else { continue };
            if let Some(v) = metric.of_run(&RunValues { summary: s, efficiency: &d.efficiency, histogram: None }) {
                values.push(v);
            }
        }
    }
    if !order.is_empty() {
        for l in order {
            if !labels.contains(l) {
                return Err(Error::option(
                    "--order",
                    format!("'{l}' is not a target of the experiments; their targets: {}", labels.join(", ")),
                ));
            }
        }
        labels = order.to_vec();
    }
    if labels.len() < 2 {
        return Err(Error::Other(format!("a series needs 2 targets or more; the experiments have {}", labels.len())));
    }
    let cp = change_point_config(labels.len(), p_value);
    let cases = cases
        .into_iter()
        .map(|((w, t), by)| {
            let values: Vec<Vec<f64>> = labels.iter().map(|l| by.get(l).cloned().unwrap_or_default()).collect();
            build_case(&w, t, &labels, &values, confidence, &cp)
        })
        .collect();
    Ok(SeriesReport {
        metric: metric.name().to_string(),
        higher_is_better: metric.direction() == stats::Direction::HigherIsBetter,
        confidence,
        p_value,
        min_segment: cp.min_segment,
        experiments: names,
        labels,
        cases,
    })
}

/// How `versus series` runs a new experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesRun {
    /// Experiment name.
    pub name: String,
    /// The workload.
    pub workload: WorkloadDef,
    /// Thread counts.
    pub threads: Vec<u32>,
    /// Measured time per run.
    pub duration: std::time::Duration,
    /// Warm-up per run.
    pub warmup: std::time::Duration,
    /// Repetitions per target.
    pub repetitions: u32,
    /// Seed of the order.
    pub seed: u64,
    /// Profile the server in every run (`profile = true`).
    pub profile: bool,
}

/// The experiment that measures `targets` in order.
pub fn series_experiment(targets: &[TargetSpec], run: &SeriesRun) -> Result<ExperimentFile> {
    let mut configs = Vec::new();
    let mut defs = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let config = t.config.as_ref().map(|f| {
            let name = format!("c{}", i + 1);
            configs.push(ConfigDef::of_file(name.clone(), f));
            name
        });
        let mut set = toml::Table::new();
        for o in &t.overrides {
            let (name, value) = crate::server::config::parse_override(o)?;
            set.insert(name, value.map(toml::Value::String).unwrap_or(toml::Value::Boolean(true)));
        }
        defs.push(TargetDef::sandbox(t.label.clone(), t.build.clone(), config, set, t.charset.as_ref()));
    }
    Ok(ExperimentFile {
        threads: run.threads.clone(),
        duration: run.duration,
        warmup: run.warmup,
        profile: run.profile,
        ..ExperimentFile::generated(
            run.name.clone(),
            format!("versus series: {}", targets.iter().map(|t| t.label.as_str()).collect::<Vec<_>>().join(" → ")),
            configs,
            defs,
            run.workload.clone(),
            run.repetitions,
            run.seed,
        )
    })
}

/// Runs the series experiment and returns its id.
pub fn run_series(
    home: &Home,
    store: &mut Store,
    targets: &[TargetSpec],
    run: &SeriesRun,
    progress: &mut Progress,
) -> Result<i64> {
    let file = series_experiment(targets, run)?;
    let text = toml::to_string(&file).map_err(|e| Error::Other(format!("cannot write the experiment: {e}")))?;
    for t in targets {
        home.build(&t.build)?;
    }
    // Targets whose values shape the data differently get data of their own.
    let plan = Plan::for_home(&file, Path::new("/"), home).map_err(Error::Other)?;
    let mut executor = SandboxExecutor::locked(home, &file.name)?;
    let o = run_experiment(&text, None, &plan, store, &mut executor, &RunOptions::default(), progress);
    let _ = crate::owned::remove(executor.work_dir());
    let o = o?;
    if o.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(o.experiment_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::testutil::normals;

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("v{i}")).collect()
    }

    #[test]
    fn relative_to_first_with_intervals_and_a_step() {
        let mut rng = stats::seeded_rng(1);
        let values: Vec<Vec<f64>> =
            (0..8).map(|i| normals(&mut rng, 3, if i >= 5 { 800.0 } else { 1000.0 }, 15.0)).collect();
        let cp = change_point_config(8, 0.05);
        assert_eq!(cp.min_segment, 2);
        let c = build_case("w", 4, &labels(8), &values, 0.95, &cp);
        assert_eq!(c.points[0].relative, Some(1.0));
        let last = &c.points[7];
        assert!((last.relative.unwrap() - 0.8).abs() < 0.05, "{last:?}");
        assert!(last.ci_lo.unwrap() < last.relative.unwrap() && last.relative.unwrap() < last.ci_hi.unwrap());
        assert_eq!(c.changes.len(), 1, "{:?}", c.changes);
        assert_eq!((c.changes[0].index, c.changes[0].label.as_str()), (5, "v5"));
        assert!((c.changes[0].step + 0.2).abs() < 0.05);
    }

    #[test]
    fn short_series_use_single_target_segments_and_gaps_are_skipped() {
        assert_eq!(change_point_config(3, 0.05).min_segment, 1);
        let values = vec![vec![100.0, 101.0, 99.0], vec![], vec![100.5, 99.5, 100.0]];
        let c = build_case("w", 1, &labels(3), &values, 0.95, &change_point_config(3, 0.05));
        assert!(c.changes.is_empty());
        assert!(c.note.unwrap().contains("1 target(s) without values"));
        assert_eq!(c.points[1].mean, None);
        assert_eq!(c.points[1].relative, None);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::stats::testutil::{normals, proptest_config};
    use proptest::prelude::*;

    fn series(seed: u64, n: usize, reps: usize, at: usize, factor: f64) -> Vec<Vec<f64>> {
        let mut rng = stats::seeded_rng(seed);
        (0..n).map(|i| normals(&mut rng, reps, if i >= at { 1000.0 * factor } else { 1000.0 }, 20.0)).collect()
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("v{i}")).collect()
    }

    proptest! {
        #![proptest_config(proptest_config(32))]

        /// A 20 % step injected anywhere in a series of 6–16 targets (3 runs each, 2 % noise) is found
        /// at its position, with its sign and size.
        #[test]
        fn an_injected_step_is_found_where_it_is(seed in any::<u64>(), n in 6usize..=16, pos in 0.0f64..1.0, down in any::<bool>()) {
            let at = 2 + ((n - 4) as f64 * pos) as usize; // 2 ..= n - 2: min_segment 2 on each side
            let factor = if down { 0.8 } else { 1.2 };
            let v = series(seed, n, 3, at, factor);
            let cp = ChangePointConfig { seed, ..change_point_config(n, 0.05) };
            let c = build_case("w", 1, &names(n), &v, 0.95, &cp);
            prop_assert!(!c.changes.is_empty(), "no change point for a step at {}", at);
            let best = c.changes.iter().min_by_key(|x| x.index.abs_diff(at)).unwrap();
            prop_assert_eq!(best.index, at, "{:?}", c.changes);
            prop_assert!((best.step - (factor - 1.0)).abs() < 0.05, "{:?}", best);
        }

        /// Short series (3–5 targets) use one-target segments; a 25 % step is still found.
        #[test]
        fn short_series_find_a_clear_step(seed in any::<u64>(), n in 3usize..=5, pos in 0.0f64..1.0) {
            let at = 1 + ((n - 1) as f64 * pos) as usize; // 1 ..= n - 1
            let v = series(seed, n, 3, at.min(n - 1), 0.75);
            let cp = ChangePointConfig { seed, ..change_point_config(n, 0.05) };
            let c = build_case("w", 1, &names(n), &v, 0.95, &cp);
            prop_assert!(c.changes.iter().any(|x| x.index == at.min(n - 1)), "{:?}", c.changes);
        }
    }

    /// Flat noisy series fire in at most about the p-value's share of cases.
    #[test]
    fn flat_series_rarely_fire() {
        let mut fired = 0;
        for seed in 0..60 {
            for n in [4usize, 8, 12] {
                let v = series(1000 + seed, n, 3, n, 1.0);
                let cp = ChangePointConfig { seed, permutations: 99, ..change_point_config(n, 0.05) };
                fired += usize::from(!build_case("w", 1, &names(n), &v, 0.95, &cp).changes.is_empty());
            }
        }
        assert!(fired <= 18, "fired on {fired}/180 flat series");
    }
}
