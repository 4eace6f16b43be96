//! Experiments: matrices of server builds × configs × workloads × thread counts, repeated and
//! interleaved, run from one TOML file, with every result stored.

pub mod ibench;
pub mod plan;
pub mod progress;
pub mod run;
pub mod sandbox_executor;
pub mod spec;

pub use plan::{Cell, Plan, PlannedRun, Preparation, Target, TargetKind};
pub use progress::Progress;
pub use run::{Executor, Outcome, RunOptions, RunOutcome, run_experiment};
pub use spec::{ExperimentFile, Order};
