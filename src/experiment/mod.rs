//! Experiments: matrices of server builds × configs × workloads × thread counts, repeated and
//! interleaved, run from one TOML file, with every result stored.

pub mod adaptive;
pub mod band;
pub mod block_run;
pub mod blocks;
pub mod calibrate;
pub mod external;
mod generated;
pub mod names;
pub mod outcome;
pub mod pace;
pub mod plan;
pub mod progress;
mod replicas;
pub mod run;
pub mod sandbox_executor;
pub mod setup;
pub mod spec;
pub mod topology;
mod unstored;
pub mod validate;

#[cfg(test)]
mod chain_tests;
#[cfg(test)]
mod progress_tests;

pub use outcome::{Outcome, RunOutcome};
pub use pace::Pace;
pub use plan::{Cell, Plan, PlannedRun, Preparation, Target, TargetKind};
pub use progress::Progress;
pub use run::{Executor, RunOptions, run_experiment};
pub use spec::{ExperimentFile, Order, Repetitions};
pub use unstored::resume_command;
