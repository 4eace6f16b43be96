//! What an experiment invocation did.

pub use crate::workload::RunOutcome;

/// What an experiment invocation did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Experiment id in the store.
    pub experiment_id: i64,
    /// Runs executed now that finished.
    pub done: usize,
    /// Runs executed now that failed.
    pub failed: usize,
    /// True when Ctrl-C stopped it.
    pub interrupted: bool,
    /// True when it stopped at [`super::run::RunOptions::deadline`] with runs left (they stay pending).
    pub out_of_time: bool,
}
