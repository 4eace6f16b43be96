//! Experiments: matrices of server builds × configs × workloads × thread counts, repeated and
//! interleaved, run from one TOML file, with every result stored.

pub mod plan;
pub mod spec;

pub use plan::{Cell, Plan, PlannedRun, Preparation, Target, TargetKind};
pub use spec::{ExperimentFile, Order};
