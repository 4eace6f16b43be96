//! The profile section's data in the report model (what `report/profile.rs` builds and writes): kept
//! apart so that the model does not import the section that renders it.

use serde::{Deserialize, Serialize};

use crate::profile::diff::Differential;

/// One side of a profiled case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSide {
    /// Index into `CompareReport::sides`.
    pub side: usize,
    /// Finished runs of the side in the case.
    pub runs: usize,
    /// Of those, runs with a profile.
    pub profiled: usize,
    /// Samples over the profiled runs.
    pub samples: u64,
    /// Sampled server CPU µs per transaction, the mean over the profiled runs.
    pub cpu_us_per_txn: Option<f64>,
    /// The share of sampled CPU whose function has a name, over the profiled runs.
    pub named_share: Option<f64>,
    /// Why runs that asked for a profile have none, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The mean stacks in picoseconds per transaction, for the flame graphs (not exported).
    #[serde(skip)]
    pub stacks: Vec<(String, u64)>,
}

/// What a profile section measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileKind {
    /// On-CPU: sampled CPU time per stack.
    #[default]
    Cpu,
    /// Off-CPU: the server threads' time from switch-out to switch-in per stack (`profile_waits`).
    Waits,
}

impl ProfileKind {
    /// True for [`ProfileKind::Cpu`] (left out of the JSON, as before waits were recorded).
    pub fn is_cpu(&self) -> bool {
        *self == ProfileKind::Cpu
    }
}

/// A profiled case: its sides and each candidate's differential comparison with the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSection {
    /// Index into `CompareReport::cases`.
    pub case: usize,
    /// On-CPU or off-CPU.
    #[serde(default, skip_serializing_if = "ProfileKind::is_cpu")]
    pub kind: ProfileKind,
    /// The sides with finished runs, the baseline first.
    pub sides: Vec<ProfileSide>,
    /// Per candidate side (index into `CompareReport::sides`) with profiled runs on both ends.
    pub comparisons: Vec<(usize, Differential)>,
}
