//! The data of an advice: what `versus advise` is asked ([`AdviseOptions`]) and what it answers
//! ([`AdviseReport`], which report/ renders and `--format json` prints).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::dedicated::Dedicated;
use super::facts::Facts;
use super::gap::DedicatedGap;
use super::inspect::ProbeSummary;
use super::memory::MemoryEstimate;
use super::rules::{Candidate, Considered};
use super::search::{SearchResult, Tier};
use crate::experiment::spec::WorkloadDef;
use crate::explain::skip::Skipped;
use crate::metric::Metric;

/// The marker at the start of the description of every experiment `versus advise` stores.
pub const DESCRIPTION_MARKER: &str = "versus advise:";

/// How `versus advise` measures and how much it may spend.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviseOptions {
    /// Prefix of the stored experiments' names.
    pub name: String,
    /// The workload.
    pub workload: WorkloadDef,
    /// Thread counts; the search decides on the geometric mean over them.
    pub threads: Vec<u32>,
    /// Measured time per run.
    pub duration: Duration,
    /// Warm-up per run.
    pub warmup: Duration,
    /// The hard limit on the whole advice, inspection included.
    pub budget: Duration,
    /// `--memory` in GiB: advise for a machine with this much RAM.
    pub memory_gib: Option<f64>,
    /// Whether durability trades may be tried (a tier of their own).
    pub allow_durability: bool,
    /// The metric decided on.
    pub metric: Metric,
    /// Relative noise band of the comparisons.
    pub noise_band: f64,
    /// Where the noise band came from (see [`crate::experiment::band`]), for the report.
    pub noise_band_source: String,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Seed of the run order.
    pub seed: u64,
    /// Repetitions of the screening.
    pub screen_repetitions: u32,
    /// Repetitions of the attribution steps.
    pub attribution_repetitions: u32,
    /// Repetitions of the confirmation (at least 5).
    pub confirm_repetitions: u32,
    /// Adaptive attribution steps (`--until`, `--max-repetitions`; see [`SearchSettings::adaptive`]).
    pub adaptive: Option<crate::experiment::Repetitions>,
}

/// What `versus advise` found, or plans to do (`--dry-run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviseReport {
    /// The current config, described.
    pub target: String,
    /// `SELECT VERSION()` of it.
    pub server_version: Option<String>,
    /// The workload's label.
    pub workload: String,
    /// Thread counts.
    pub threads: Vec<u32>,
    /// The metric.
    pub metric: String,
    /// The noise band of the comparisons.
    #[serde(default = "default_band")]
    pub noise_band: f64,
    /// Where the noise band came from: `--noise-band`, a calibration of this host, or the default.
    #[serde(default)]
    pub noise_band_source: String,
    /// The budget, seconds.
    pub budget_s: u64,
    /// Estimated seconds per run (restart, prewarm, warm-up, measured time).
    pub seconds_per_run: u64,
    /// What the rules read.
    pub facts: Facts,
    /// The probe run's figures (not with `--dry-run`).
    pub probe: Option<ProbeSummary>,
    /// The values to try.
    pub candidates: Vec<Candidate>,
    /// The rules that proposed nothing, with why.
    pub considered: Vec<Considered>,
    /// Values the server refused or adjusted at startup, with its words.
    pub refused: Vec<Skipped>,
    /// The innodb_dedicated_server baseline.
    pub dedicated: Option<Dedicated>,
    /// The worst case of the current config at max_connections.
    pub memory_current: MemoryEstimate,
    /// The worst case of the advised config (both tiers), when something is recommended.
    pub memory_advised: Option<MemoryEstimate>,
    /// The plan, one line per phase with its estimated time.
    pub plan: Vec<String>,
    /// Estimated seconds of the plan (at most the budget).
    pub estimate_s: u64,
    /// The proof, unless this is a dry run.
    pub result: Option<SearchResult>,
    /// Why the advice does not beat the dedicated baseline, when the confirmation shows it not
    /// significantly faster (or slower somewhere).
    #[serde(default)]
    pub dedicated_gap: Option<DedicatedGap>,
    /// The experiments stored: (id, name).
    pub experiments: Vec<(i64, String)>,
    /// Seconds spent in all.
    pub elapsed_s: u64,
}

fn default_band() -> f64 {
    crate::stats::DEFAULT_NOISE_BAND
}

impl AdviseReport {
    /// The recommended candidates of a tier.
    pub fn recommended(&self, tier: Tier) -> Vec<&Candidate> {
        self.result
            .as_ref()
            .map(|r| r.recommended(tier).into_iter().map(|i| &self.candidates[i]).collect())
            .unwrap_or_default()
    }
}
