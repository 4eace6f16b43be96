//! What the proof found: each candidate's fate and measured contribution, the screening, the
//! confirmation and the conclusion, as stored and reported.

use serde::{Deserialize, Serialize};

use super::{SearchStep, Tier};
use crate::advise::rules::Area;
use crate::explain::bisect::SearchOutcome;
use crate::stats::Comparison;

/// What became of a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "fate", content = "detail")]
pub enum Fate {
    /// Recommended, in this tier.
    Recommended(Tier),
    /// Measured, and no effect found.
    NoEffect(String),
    /// Measured slower.
    Slower(String),
    /// Measured, but not proven within the budget.
    NotProven(String),
    /// The server or the workload failed with it.
    Failed(String),
    /// Never measured.
    NotTried(String),
    /// Proven, then withdrawn (the confirmation did not hold, or the memory bound).
    Withdrawn(String),
}

impl Fate {
    /// Whether the value is recommended.
    pub fn recommended(&self) -> Option<Tier> {
        match self {
            Fate::Recommended(t) => Some(*t),
            _ => None,
        }
    }
}

/// A recommended value's measured contribution: what the advised set (of its tier) loses without it,
/// in points of the advised set's mean (positive: it helps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contribution {
    /// Points of the advised config's mean.
    pub points: f64,
    /// Interval, low end.
    pub lo: f64,
    /// Interval, high end.
    pub hi: f64,
    /// The other values of a group that only acts together (empty for a single value).
    pub together_with: Vec<String>,
    /// Values that were in the group when its effect was measured but are not recommended, as leaving
    /// each out alone cost little or nothing: the effect was measured with them in the set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_with: Vec<String>,
}

/// A group's screening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Screened {
    /// The area.
    pub area: Area,
    /// Its candidates.
    pub members: Vec<usize>,
    /// Current + group against the current config's runs of the rounds the group ran in, if measured.
    pub comparison: Option<Comparison>,
    /// What was decided.
    pub decision: String,
}

/// The confirmation at one thread count (or over all of them: `threads` is `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfirmRow {
    /// The thread count; `None` for the geometric mean over them.
    pub threads: Option<u32>,
    /// Mean of each config (in the order of [`Confirmation::labels`]).
    pub means: Vec<Option<f64>>,
    /// Each config against the current config (the first is `None`).
    pub vs_current: Vec<Option<Comparison>>,
    /// The advice against the dedicated baseline.
    pub advised_vs_dedicated: Option<Comparison>,
    /// The durability tier against the safe advice.
    pub durability_vs_advised: Option<Comparison>,
    /// The smallest change of the advice against the current config these repetitions could detect
    /// (80 % power, either way).
    pub detectable: Option<f64>,
}

/// The confirmation experiment's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The configs: `current`, `dedicated`, `advised`, `advised+durability` (those that were run).
    pub labels: Vec<String>,
    /// Per thread count, then the geometric mean.
    pub rows: Vec<ConfirmRow>,
    /// Repetitions.
    pub repetitions: u32,
    /// Whether the safe advice is faster than the current config at one thread count or more and slower
    /// at none.
    pub holds: bool,
    /// The same for the durability tier against the safe advice.
    pub durability_holds: Option<bool>,
}

impl Confirmation {
    /// The index of a config.
    pub fn index(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    /// Values are recommended, confirmed.
    Recommended,
    /// No candidate to try.
    NothingToTry,
    /// Nothing was proven.
    NothingProven,
    /// The budget did not allow the screening (or the confirmation): nothing is recommended.
    BudgetTooSmall,
    /// The confirmation did not hold: nothing is recommended.
    NotConfirmed,
    /// Nothing was proven, but the budget ended with a group still open: faster by its estimate and a
    /// worthwhile gain not excluded ([`SearchResult::undecided`] says how many more runs would tell).
    Undecided,
    /// The current config could not be measured.
    Failed,
}

/// A step as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step.
    pub step: SearchStep,
    /// Its estimated cost, seconds.
    pub estimated_s: u64,
}

/// Everything the search did and found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Per candidate.
    pub fates: Vec<Fate>,
    /// Per candidate, for recommended ones.
    pub contributions: Vec<Option<Contribution>>,
    /// The screening of the groups.
    pub screening: Vec<Screened>,
    /// Explain's search over the safe survivors.
    pub attribution: Option<SearchOutcome>,
    /// Explain's search over the durability trades.
    pub durability: Option<SearchOutcome>,
    /// The confirmation.
    pub confirmation: Option<Confirmation>,
    /// The steps run.
    pub steps: Vec<StepRecord>,
    /// How it ended.
    pub conclusion: Conclusion,
    /// Caveats.
    pub notes: Vec<String>,
    /// Groups the screening left open when the budget ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
}

/// A screened group still open when the budget ended: neither shown faster nor a worthwhile gain
/// excluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undecided {
    /// The group's area label (`buffer pool`).
    pub group: String,
    /// Its variables.
    pub variables: Vec<String>,
    /// Its change against the current config over all its screening rounds, as `describe` writes it.
    pub change: String,
    /// Screening repetitions it had, per config.
    pub repetitions: usize,
    /// Repetitions per config that would call its observed gain with 80 % power, when plannable.
    pub would_need: Option<usize>,
}

impl SearchResult {
    /// The recommended candidates of a tier.
    pub fn recommended(&self, tier: Tier) -> Vec<usize> {
        (0..self.fates.len()).filter(|&i| self.fates[i].recommended() == Some(tier)).collect()
    }
}
