//! The efficiency and latency values of a comparison: each metric's mean per case and side, its ratio to
//! the baseline, and the call on it from the runs' values.

use super::model::{MetricValue, ValuesRow, Verdict};
use super::select::{LoadedRun, Selected, Selection};
use crate::metric::{Metric, RunValues};
use crate::stats;

/// A metric's value for one stored run.
pub(super) fn values_of(r: &LoadedRun, m: Metric) -> Option<f64> {
    let v = RunValues { summary: r.detail.run.summary.as_ref()?, efficiency: &r.detail.efficiency, histogram: None };
    m.of_run(&RunValues { histogram: r.histogram.as_ref(), ..v })
}

/// The metrics of `list` that at least one run recorded (`keep_first`: the first one always).
pub(super) fn used_metrics(s: &Selected, list: &[Metric], keep_first: bool) -> Vec<Metric> {
    list.iter()
        .enumerate()
        .filter(|(i, m)| (keep_first && *i == 0) || s.runs.iter().any(|r| values_of(r, **m).is_some()))
        .map(|(_, m)| *m)
        .collect()
}

/// Means of `metrics` per case and side, with ratios to the baseline (none when both are ≈ 0 or only
/// the baseline is: [`Metric::no_ratio_reason`]).
pub(super) fn values_rows(s: &Selected, metrics: &[Metric], in_case: &dyn Fn(usize) -> Selection) -> Vec<ValuesRow> {
    let values = |case: usize, side: usize, m: Metric| -> Vec<f64> {
        s.runs.iter().filter(|r| r.case == case && r.side == side).filter_map(|r| values_of(r, m)).collect()
    };
    let mut rows = Vec::new();
    for case in 0..s.cases.len() {
        for side in 0..s.sides.len() {
            if !s.runs.iter().any(|r| r.case == case && r.side == side) {
                continue;
            }
            let values = metrics
                .iter()
                .map(|&m| {
                    let (mine, theirs) = (values(case, side, m), values(case, 0, m));
                    let (mean, n, base) = (stats::mean(&mine), mine.len(), stats::mean(&theirs));
                    let near_zero = matches!((mean, base), (Some(v), Some(b)) if m.no_ratio_reason(b, v).is_some());
                    let ratio = match (mean, base) {
                        _ if near_zero => None,
                        (Some(v), Some(b)) if b != 0.0 => Some(v / b),
                        _ => None,
                    };
                    let both_near_zero =
                        matches!((mean, base), (Some(v), Some(b)) if v.abs() < m.floor() && b.abs() < m.floor());
                    let verdict = match ratio {
                        Some(_) if side > 0 => secondary_verdict(&theirs, &mine, m, &in_case(case)),
                        _ => Verdict::NotComputed,
                    };
                    MetricValue { metric: m.name().to_string(), mean, n, ratio, both_near_zero, verdict }
                })
                .collect();
            rows.push(ValuesRow { case, side, values });
        }
    }
    rows
}

/// The call on a secondary metric (a cost or a percentile) of one side against the baseline's.
fn secondary_verdict(base: &[f64], cand: &[f64], m: Metric, sel: &Selection) -> Verdict {
    match stats::compare_repetitions_welch(base, cand, m.direction(), sel.noise_band, sel.confidence) {
        Ok(c) => match c.verdict {
            stats::Verdict::Faster => Verdict::Faster,
            stats::Verdict::Slower => Verdict::Slower,
            stats::Verdict::NoSignificantChange => Verdict::NoSignificantChange,
        },
        Err(_) => Verdict::NotComputed,
    }
}
