//! `versus advise`: server settings from written rules, each one proven by benchmark before it is
//! recommended (docs/advise.md).
//!
//! - [`facts`]: what the rules read: host, server variables, data size, a probe run's counters.
//! - [`rules`]: the rules as a data table (variable, rule, source, servers, risk class) and the
//!   candidates they propose.
//! - [`formulas`]: the rules' formulas.
//! - [`inspect`]: reading the facts on the real machine.
//! - [`memory`]: the worst case of a config's memory at `max_connections`.
//! - [`dedicated`]: the `innodb_dedicated_server` baseline (MySQL's switch, or its formulas).
//! - [`samples`]: what the stored runs of advise's experiments measured (the search's samples, the
//!   probe's figures).
//! - [`gap`]: why the advice does not beat `innodb_dedicated_server`, when it does not.
//! - [`search`]: the proof, independent of servers: screening, successive halving, leave-one-out
//!   attribution with explain's search, confirmation, within a hard budget.

pub mod dedicated;
pub mod facts;
pub mod formulas;
pub mod gap;
pub mod inspect;
pub mod memory;
pub mod model;
pub mod rules;
pub mod runner;
pub mod samples;
pub mod search;
pub mod section;

pub use facts::{Facts, ProbeFacts};
pub use rules::{Area, Candidate, Considered, Risk, candidates};
pub use search::{Bench, Conclusion, Fate, SearchResult, SearchSettings, Tier, search};
