//! The differential comparison of two targets' profiles: which functions cost more or less CPU per
//! transaction in the candidate than in the baseline, with an interval from the repetitions, keeping
//! only what stands out of the noise with the false discoveries controlled over all functions at once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::FunctionCost;

/// One run's profile as the comparison uses it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunCosts {
    /// Self and inclusive CPU µs per transaction by function.
    pub functions: BTreeMap<String, FunctionCost>,
    /// CPU µs per transaction over all stacks.
    pub total_us: f64,
    /// CPU µs per transaction that one sample stands for (the sampling period over the run's
    /// transactions): the scale of the sampling noise when a side has a single run.
    pub sample_us: f64,
}

/// Which of a function's costs a row compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostKind {
    /// In the function itself: these add up to the whole gap.
    SelfCost,
    /// In the function and what it called.
    Inclusive,
}

/// One function whose cost differs beyond the noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    /// The function (or `[object]` for unnamed code of an object file).
    pub function: String,
    /// Self or inclusive.
    pub kind: CostKind,
    /// Mean CPU µs per transaction in the baseline's runs (0 where it was never sampled).
    pub baseline_us: f64,
    /// Mean CPU µs per transaction in the candidate's runs.
    pub candidate_us: f64,
    /// `candidate_us - baseline_us`.
    pub delta_us: f64,
    /// Interval of the difference, µs per transaction (at the level that keeps the selected rows'
    /// coverage: see [`Differential::level`]).
    pub low_us: f64,
    /// Upper end of the interval.
    pub high_us: f64,
    /// The false-discovery-adjusted p value (Benjamini–Hochberg) over all functions of its kind.
    pub q: f64,
    /// `delta_us` over the whole gap in CPU per transaction, for self rows when the gap is not 0.
    pub share_of_gap: Option<f64>,
}

/// The differential comparison of one candidate with the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Differential {
    /// Self rows beyond the noise, the largest |delta| first.
    pub self_rows: Vec<DiffRow>,
    /// Inclusive rows beyond the noise, the largest |delta| first.
    pub inclusive_rows: Vec<DiffRow>,
    /// Functions compared (of each kind).
    pub tested: usize,
    /// Candidate's minus baseline's total CPU µs per transaction.
    pub gap_us: f64,
    /// Interval of the gap.
    pub gap_low_us: f64,
    /// Upper end of the gap's interval.
    pub gap_high_us: f64,
    /// The share of the gap that the selected self rows add up to (`None` when the gap is 0).
    pub explained_share: Option<f64>,
    /// The confidence level of the rows' intervals (adjusted for the selection).
    pub level: f64,
    /// Runs on each side: baseline, candidate.
    pub runs: (usize, usize),
}

/// How the differential comparison decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffConfig {
    /// The false discovery rate to control over all functions compared (0.05).
    pub fdr: f64,
    /// The confidence level of the gap's interval (0.95).
    pub confidence: f64,
    /// Differences smaller than this, in µs per transaction, are not worth a row even when certain.
    pub min_delta_us: f64,
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig { fdr: 0.05, confidence: 0.95, min_delta_us: 0.0 }
    }
}

/// Compares the candidate's runs with the baseline's, function by function.
pub fn differential(baseline: &[RunCosts], candidate: &[RunCosts], cfg: &DiffConfig) -> Differential {
    let _ = (baseline, candidate, cfg);
    unimplemented!("being written")
}
