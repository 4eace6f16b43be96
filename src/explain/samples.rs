//! The samples a search step decides on: per repetition, the geometric mean of the metric over the
//! thread counts, from a stored experiment.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::metric::{Metric, RunValues};
use crate::store::{Status, Store};

/// Per-repetition samples of each target of a stored experiment: the geometric mean of `metric` over
/// the thread counts of that repetition (repetitions missing a thread count are left out). Targets
/// with fewer than `min` complete repetitions (their runs failed) come back with the first error.
pub fn samples_by_target(
    store: &Store,
    experiment: i64,
    metric: Metric,
    min: usize,
) -> Result<BTreeMap<String, std::result::Result<Vec<f64>, String>>> {
    let runs = store.runs(experiment)?;
    let threads: std::collections::BTreeSet<u32> = runs.iter().map(|r| r.cell.threads).collect();
    let mut values: BTreeMap<String, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    for r in &runs {
        let label = r.cell.target.clone();
        let per_rep = values.entry(label.clone()).or_default();
        match (&r.status, &r.summary) {
            (Status::Done, Some(_)) => {
                let Some(d) = store.run(r.id)? else { continue };
                let Some(s) = d.run.summary.as_ref() else { continue };
                let v = metric.of_run(&RunValues { summary: s, efficiency: &d.efficiency, histogram: None });
                if let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) {
                    per_rep.entry(r.repetition).or_default().push(v);
                }
            }
            _ => {
                if let Some(e) = &r.error {
                    errors.entry(label).or_insert_with(|| crate::experiment::progress::one_line_error(r.id, e));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (label, reps) in values {
        let samples: Vec<f64> = reps
            .values()
            .filter(|v| v.len() == threads.len())
            .map(|v| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
            .collect();
        let result = if samples.len() >= min.max(1) {
            Ok(samples)
        } else {
            let why = errors.get(&label).cloned().unwrap_or_else(|| "runs did not finish".into());
            Err(format!("{} complete repetition(s) of {label}: {why}", samples.len()))
        };
        out.insert(label, result);
    }
    Ok(out)
}
