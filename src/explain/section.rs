//! The attribution of a regression to configuration values in sentences and a table: shared by
//! `versus explain` (from its search) and the comparison report (recomputed from a stored
//! `versus explain` experiment, so `versus report NAME-confirm` shows the same numbers).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::bisect::{self, Effect, Gap, SearchOutcome};
use super::runner::{ATTRIBUTION_SEED, DESCRIPTION_MARKER};
use super::samples::samples_by_target;
use super::targets::stored_specs;
use super::transfer::{atoms, options_of};
use crate::error::Result;
use crate::experiment::ExperimentFile;
use crate::metric::Metric;
use crate::stats::{BootstrapConfig, CompareConfig};
use crate::store::{Experiment, Store};

/// One finding of an attribution: what it recovers on top of the ones before it, and alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attributed {
    /// The options set on B (`sync_binlog=0`); several for a group that acts together.
    pub names: Vec<String>,
    /// On top of the findings before it (for the first: against B).
    pub increment: Effect,
    /// Alone, against B (absent when it is the first, where it equals the increment, or unmeasured).
    pub alone: Option<Effect>,
}

/// The gap between B and A and what A's values recover of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainSection {
    /// The experiment the numbers come from (`NAME (id N)`).
    pub experiment: String,
    /// What was explained (the experiment's description).
    pub description: String,
    /// The metric.
    pub metric: String,
    /// Whether higher values are better.
    pub higher_is_better: bool,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// B against A.
    pub gap: Option<Gap>,
    /// The findings in the order found.
    pub effects: Vec<Attributed>,
    /// All of them together against B (when there are several).
    pub together: Option<Effect>,
    /// Points of the gap not recovered.
    pub unexplained_points: Option<f64>,
    /// Caveats.
    pub notes: Vec<String>,
}

/// The comparison settings of an attribution.
pub fn compare_config(metric: Metric, noise_band: f64, confidence: f64) -> CompareConfig {
    CompareConfig {
        direction: metric.direction(),
        noise_band,
        bootstrap: BootstrapConfig { confidence, seed: ATTRIBUTION_SEED, ..BootstrapConfig::default() },
    }
}

/// The section of a finished search; the findings' names become the options set on B.
pub fn from_outcome(
    o: &SearchOutcome,
    experiment: &str,
    description: &str,
    metric: &str,
    higher_is_better: bool,
    confidence: f64,
) -> ExplainSection {
    let effects = o
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| Attributed {
            names: f.set.iter().flat_map(|&c| options_of(&o.candidates[c])).collect(),
            increment: f.attributed().clone(),
            alone: if i == 0 { None } else { f.alone.clone() },
        })
        .collect();
    ExplainSection {
        experiment: experiment.to_string(),
        description: description.to_string(),
        metric: metric.to_string(),
        higher_is_better,
        confidence,
        gap: o.gap,
        effects,
        together: o.together.clone(),
        unexplained_points: o.unexplained_points,
        notes: o.notes.clone(),
    }
}

/// The attribution recomputed from a stored `versus explain` experiment with A and B among its
/// targets; `None` for any other experiment. The targets after A and B are read in their order: each
/// one that sets options no earlier one set is a finding alone; one that sets the options of the
/// first findings together is their cumulative set.
pub fn from_stored(
    store: &Store,
    e: &Experiment,
    metric: Metric,
    noise_band: f64,
    confidence: f64,
) -> Result<Option<ExplainSection>> {
    let Ok(file) = ExperimentFile::parse(&e.definition) else { return Ok(None) };
    let Some(description) = file.description.filter(|d| d.starts_with(DESCRIPTION_MARKER)) else { return Ok(None) };
    let specs = stored_specs(e)?;
    let find = |l: &str| specs.iter().find(|(label, _)| label.as_str() == l).map(|(_, s)| s);
    let (Some(_), Some(b_spec)) = (find("A"), find("B")) else { return Ok(None) };
    let samples = samples_by_target(store, e.id, metric, 2)?;
    let cfg = compare_config(metric, noise_band, confidence);
    let mut section = ExplainSection {
        experiment: format!("{} (id {})", e.name, e.id),
        description: description.trim_start_matches(DESCRIPTION_MARKER).trim().to_string(),
        metric: metric.name().to_string(),
        higher_is_better: metric.direction() == crate::stats::Direction::HigherIsBetter,
        confidence,
        gap: None,
        effects: vec![],
        together: None,
        unexplained_points: None,
        notes: vec![],
    };
    let (Some(Ok(a)), Some(Ok(b))) = (samples.get("A"), samples.get("B")) else {
        section.notes.push("A or B has fewer than 2 complete repetitions: no attribution".into());
        return Ok(Some(section));
    };
    let gap = match bisect::gap(a, b, &cfg) {
        Ok(g) => g,
        Err(err) => {
            section.notes.push(format!("no interval for the gap: {err}"));
            return Ok(Some(section));
        }
    };
    section.gap = Some(gap);
    // Options compared as single assignments (one per flag of a flag list).
    let base: BTreeSet<String> = b_spec.overrides.iter().flat_map(|o| atoms(o)).collect();
    let result = |label: &str| samples.get(label).cloned().unwrap_or_else(|| Err(format!("no runs of {label}")));
    // Units (findings, with the label of the probe of each alone where it was measured) and
    // cumulative sets, in target order.
    let mut units: Vec<(BTreeSet<String>, Option<String>)> = Vec::new();
    let mut cumulative: Vec<(usize, String)> = Vec::new();
    for (label, spec) in specs.iter().filter(|(l, _)| l.as_str() != "A" && l.as_str() != "B") {
        let set: BTreeSet<String> =
            spec.overrides.iter().flat_map(|o| atoms(o)).filter(|o| !base.contains(o)).collect();
        let seen: BTreeSet<String> = units.iter().flat_map(|(u, _)| u.iter().cloned()).collect();
        if set.is_disjoint(&seen) {
            units.push((set, Some(label.clone())));
            continue;
        }
        let mut acc = BTreeSet::new();
        let mut matched = false;
        for (i, (u, _)) in units.iter().enumerate() {
            acc.extend(u.iter().cloned());
            if acc == set && i > 0 {
                cumulative.push((i, label.clone()));
                matched = true;
            }
        }
        if !matched && set.is_superset(&seen) && set.len() > seen.len() {
            // All findings so far and one more that was not measured alone (a confirmation cut to
            // the budget: B, A, the first finding and the cumulative sets).
            units.push((set.difference(&seen).cloned().collect(), None));
            cumulative.push((units.len() - 1, label.clone()));
        }
    }
    let prefix = |i: usize| -> Option<String> {
        if i == 0 {
            units.first().and_then(|u| u.1.clone())
        } else {
            cumulative.iter().find(|c| c.0 == i).map(|c| c.1.clone())
        }
    };
    let judge = bisect::Judge::fixed(&cfg);
    for (i, (set, label)) in units.iter().enumerate() {
        let names: Vec<String> = set.iter().cloned().collect();
        let alone = label.as_ref().map(|l| bisect::effect(&[], names.clone(), 1, b, &result(l), &gap, judge));
        let failed = |err: String| bisect::effect(&[], names.clone(), 1, b, &Err(err), &gap, judge);
        let increment = match (i, prefix(i.saturating_sub(1)), prefix(i)) {
            (0, _, _) => alone.clone().unwrap_or_else(|| failed("not measured".into())),
            (_, Some(before), Some(now)) => match result(&before) {
                Ok(x) => bisect::effect(&[], names.clone(), 1, &x, &result(&now), &gap, judge),
                Err(err) => failed(err),
            },
            _ => {
                // No cumulative set: an experiment of a search step, each part on its own.
                alone.clone().unwrap_or_else(|| failed("not measured".into()))
            }
        };
        section.effects.push(Attributed { names, increment, alone: if i > 0 { alone } else { None } });
    }
    if units.len() > 1
        && let Some(all) = prefix(units.len() - 1)
    {
        let names: Vec<String> = units.iter().flat_map(|(u, _)| u.iter().cloned()).collect();
        section.together = Some(bisect::effect(&[], names, 1, b, &result(&all), &gap, judge));
    }
    let recovered = match (&section.together, section.effects.as_slice()) {
        (Some(t), _) => t.points,
        (None, [only]) => only.increment.points,
        _ => None,
    };
    section.unexplained_points = recovered.map(|r| gap.points + r.copysign(-gap.points));
    Ok(Some(section))
}
