//! Explaining a difference between two targets: which server variables differ and why
//! ([`diffvars`], `versus diff-vars`), which of them account for a measured regression
//! ([`bisect`] and [`runner`], `versus explain`), and where a metric stepped over an ordered series of
//! versions or configs ([`series`], `versus series`). See docs/explain.md. Everything here returns data;
//! [`crate::report::explain`] renders it (text, markdown, JSON and the report sections).
//!
//! - [`noise`]: the variables whose differences are noise (paths, ports, ids, versions, host-sized).
//! - [`targets`]: `BUILD[:NAME=VALUE,…]` targets and their variables, live or from the store.
//! - [`diffvars`]: the classified difference of two targets' variables.
//! - [`bisect`]: the config-bisection search, independent of servers.
//! - [`transfer`]: how A's values are given to B (data-shaping values, linked variables, flag lists
//!   flag by flag, retyped values, session and derived values).
//! - [`preflight`]: which of A's values B accepts at startup.
//! - [`runner`]: the search on real servers, every step stored as an experiment.
//! - [`samples`]: the per-repetition samples of a stored step.
//! - [`steps`]: running a step, or reusing / continuing the stored one (`--resume`).
//! - [`series`]: relative-to-first values and change points over an ordered list of targets.

pub mod bisect;
pub mod diffvars;
mod estimate;
pub mod noise;
pub mod preflight;
pub mod runner;
pub mod samples;
pub mod section;
pub mod series;
pub mod skip;
pub mod steps;
pub mod targets;
pub mod transfer;

pub use diffvars::{Snapshot, VarDiff, VarRow, diff};
pub use noise::{NoiseKind, noise_kind, noise_of};
pub use targets::TargetSpec;
