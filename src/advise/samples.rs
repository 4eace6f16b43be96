//! What the stored runs of advise's experiments measured: per config the samples the search decides on,
//! and the probe's figures.

use std::collections::BTreeMap;
use std::time::Duration;

use super::facts::ProbeFacts;
use super::search::{ConfigResult, Samples};
use crate::error::{Error, Result};
use crate::metric::{Metric, RunValues};
use crate::store::{Status, Store};

/// Per target of a stored experiment: its values per thread count and repetition, and per complete
/// repetition the geometric mean over the thread counts. A target with several workloads (the Insert
/// Benchmark's steps, one cell each) has per thread count and repetition the geometric mean over its
/// workloads; a repetition is complete when every (workload, thread count) cell of it was measured.
/// Targets without two complete repetitions come back with the first error.
pub fn samples(store: &Store, experiment: i64, metric: Metric) -> Result<BTreeMap<String, ConfigResult>> {
    samples_at_least(store, experiment, metric, 2)
}

/// [`samples`], with targets of fewer than `min` complete repetitions an error (an added round of an
/// adaptive attribution step has one).
pub fn samples_at_least(
    store: &Store,
    experiment: i64,
    metric: Metric,
    min: usize,
) -> Result<BTreeMap<String, ConfigResult>> {
    let runs = store.runs(experiment)?;
    let cells: std::collections::BTreeSet<(&str, u32)> =
        runs.iter().map(|r| (r.cell.workload.as_str(), r.cell.threads)).collect();
    type Cells<'a> = BTreeMap<(&'a str, u32), f64>;
    let mut values: BTreeMap<String, BTreeMap<u32, Cells<'_>>> = BTreeMap::new();
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    for r in &runs {
        let per_rep = values.entry(r.cell.target.clone()).or_default();
        if r.status == Status::Done
            && let Some(d) = store.run(r.id)?
            && let Some(s) = d.run.summary.as_ref()
            && let Some(v) = metric
                .of_run(&RunValues { summary: s, efficiency: &d.efficiency, histogram: None })
                .filter(|v| v.is_finite() && *v > 0.0)
        {
            per_rep.entry(r.repetition).or_default().insert((r.cell.workload.as_str(), r.cell.threads), v);
        } else if let Some(e) = &r.error {
            errors.entry(r.cell.target.clone()).or_insert_with(|| crate::experiment::progress::one_line_error(r.id, e));
        }
    }
    // One value is itself (exp(ln x) is not always x to the last digit).
    let geomean = |v: &[f64]| match v {
        [one] => *one,
        _ => (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp(),
    };
    let mut out = BTreeMap::new();
    for (label, reps) in values {
        let mut s = Samples::default();
        for by_cell in reps.values().filter(|v| v.len() == cells.len()) {
            let mut by_threads: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            for ((_, t), v) in by_cell {
                by_threads.entry(*t).or_default().push(*v);
            }
            for (t, v) in &by_threads {
                s.per_threads.entry(*t).or_default().push(geomean(v));
            }
            s.combined.push(geomean(&by_cell.values().copied().collect::<Vec<_>>()));
        }
        let result = if s.combined.len() >= min.max(1) {
            Ok(s)
        } else {
            let why = errors.get(&label).cloned().unwrap_or_else(|| "runs did not finish".into());
            Err(format!("{} complete repetition(s) of {label}: {why}", s.combined.len()))
        };
        out.insert(label, result);
    }
    Ok(out)
}

/// The probe's figures from its stored runs: one run per workload of the probe (the Insert
/// Benchmark's steps run one after another), every one of which must have finished. The counter deltas
/// and the measured seconds are summed over the runs; the metric is their geometric mean; the end values
/// are the last run's.
pub(super) fn probe_facts(store: &Store, experiment: i64, metric: Metric, duration: Duration) -> Result<ProbeFacts> {
    let runs = store.runs(experiment)?;
    if runs.is_empty() {
        return Err(Error::Other("the probe run was not stored".into()));
    }
    let (mut seconds, mut logs, mut deltas) = (0.0, Vec::new(), BTreeMap::<String, i64>::new());
    let mut ends = BTreeMap::new();
    for run in &runs {
        let detail = store.run(run.id)?.filter(|_| run.status == Status::Done).ok_or_else(|| {
            Error::Other(format!(
                "the probe run of the current config ({}) failed: {}",
                run.cell.workload,
                run.error
                    .as_deref()
                    .map_or("no result".into(), |e| crate::experiment::progress::one_line_error(run.id, e))
            ))
        })?;
        let summary = detail.run.summary.as_ref();
        seconds += summary.map(|s| s.duration_s).filter(|d| *d > 0.0).unwrap_or(duration.as_secs_f64());
        if let Some(v) = summary
            .and_then(|s| metric.of_run(&RunValues { summary: s, efficiency: &detail.efficiency, histogram: None }))
            .filter(|v| v.is_finite() && *v > 0.0)
        {
            logs.push(v.ln());
        }
        for (k, v) in detail.status_deltas {
            *deltas.entry(k).or_default() += v;
        }
        ends = detail.status_ends.into_iter().collect();
    }
    let tps = (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp());
    Ok(ProbeFacts { seconds, tps, deltas, ends })
}
