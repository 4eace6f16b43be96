//! The advise section of the comparison report: for a stored confirmation experiment of `versus advise`
//! (`NAME-confirm-N`), the current config against the dedicated baseline, the advice and the durability
//! tier at every thread count, recomputed from the stored runs with the report's metric and settings
//! (so `versus report NAME-confirm-N` shows what `versus advise` printed).

use serde::{Deserialize, Serialize};

use super::model::DESCRIPTION_MARKER;
use super::samples::samples;
use super::search::{Confirmation, confirmation};
use crate::error::Result;
use crate::experiment::ExperimentFile;
use crate::explain::targets::stored_specs;
use crate::metric::Metric;
use crate::stats::{BootstrapConfig, CompareConfig, Direction};
use crate::store::{Experiment, Store};

/// One config of the confirmation and what it sets on top of the current config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectionConfig {
    /// `current`, `dedicated`, `advised` or `advised+durability`.
    pub label: String,
    /// The options it sets that the current config does not (`innodb_buffer_pool_size=3G`).
    pub sets: Vec<String>,
}

/// A stored confirmation of `versus advise`, recomputed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviseSection {
    /// `NAME (id N)`.
    pub experiment: String,
    /// What was advised on (the experiment's description without the marker).
    pub description: String,
    /// The workload's label.
    pub workload: String,
    /// The metric.
    pub metric: String,
    /// Whether higher values are better.
    pub higher_is_better: bool,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// The noise band of the verdicts.
    pub noise_band: f64,
    /// The configs, the current one first.
    pub configs: Vec<SectionConfig>,
    /// Means, ratios against the current config with intervals and verdicts, per thread count.
    pub confirmation: Confirmation,
    /// Configs that could not be measured, with why.
    pub notes: Vec<String>,
    /// What the dedicated baseline sets that the advice does not, with what became of it in the
    /// advice, as `versus advise` recorded it with the experiment (one line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dedicated_unshared: Vec<String>,
}

/// Whether `name` is a confirmation step's (`PREFIX-confirm-N`).
pub fn is_confirmation(name: &str) -> bool {
    name.rsplit_once('-')
        .is_some_and(|(rest, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && rest.ends_with("-confirm"))
}

/// The section of a stored confirmation experiment of `versus advise`; `None` for any other experiment.
pub fn from_stored(
    store: &Store,
    e: &Experiment,
    metric: Metric,
    noise_band: f64,
    confidence: f64,
) -> Result<Option<AdviseSection>> {
    if !is_confirmation(&e.name) {
        return Ok(None);
    }
    let Ok(file) = ExperimentFile::parse(&e.definition) else { return Ok(None) };
    let Some(description) = file.description.clone().filter(|d| d.starts_with(DESCRIPTION_MARKER)) else {
        return Ok(None);
    };
    let specs = stored_specs(e)?;
    let Some(current) = specs.iter().find(|(l, _)| l == "current").map(|(_, s)| s.clone()) else {
        return Ok(None);
    };
    let order = ["current", "dedicated", "advised", "advised+durability"];
    let mut configs = Vec::new();
    for label in order {
        if let Some((_, s)) = specs.iter().find(|(l, _)| l == label) {
            let sets = s.overrides.iter().filter(|o| !current.overrides.contains(o)).cloned().collect();
            configs.push(SectionConfig { label: label.to_string(), sets });
        }
    }
    if configs.len() < 2 {
        return Ok(None);
    }
    let mut by = samples(store, e.id, metric)?;
    let mut notes = Vec::new();
    let results: Vec<_> = configs
        .iter()
        .map(|c| {
            let r = by.remove(&c.label).unwrap_or_else(|| Err(format!("no runs of {}", c.label)));
            if let Err(why) = &r {
                notes.push(format!("{}: {why}", c.label));
            }
            r
        })
        .collect();
    let workload = file.workloads.first().map(|w| w.label()).unwrap_or_default();
    let threads = file.workloads.first().and_then(|w| w.threads.clone()).unwrap_or_else(|| file.threads.clone());
    let repetitions = file.repetitions.min;
    let compare = CompareConfig {
        direction: metric.direction(),
        noise_band,
        bootstrap: BootstrapConfig { confidence, seed: 0x5EED, ..BootstrapConfig::default() },
    };
    let labels = configs.iter().map(|c| c.label.clone()).collect();
    Ok(Some(AdviseSection {
        experiment: format!("{} (id {})", e.name, e.id),
        description: description.lines().next().unwrap_or("").trim_start_matches(DESCRIPTION_MARKER).trim().to_string(),
        workload,
        metric: metric.name().to_string(),
        higher_is_better: metric.direction() == Direction::HigherIsBetter,
        confidence,
        noise_band,
        configs,
        confirmation: confirmation(labels, &results, repetitions, &threads, &compare),
        notes,
        dedicated_unshared: description.lines().skip(1).map(str::to_string).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::is_confirmation;

    #[test]
    fn only_confirmation_steps_are_sections() {
        assert!(is_confirmation("advise-confirm-7"));
        assert!(is_confirmation("my-run-confirm-12"));
        assert!(!is_confirmation("advise-attribution-3"));
        assert!(!is_confirmation("advise-confirm-"));
        assert!(!is_confirmation("advise-probe"));
        assert!(!is_confirmation("confirm-3"));
    }
}
