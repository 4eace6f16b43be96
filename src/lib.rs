//! versus: is this MySQL/MariaDB version or configuration faster or slower than that one, by how much,
//! how sure are we, and why?
//!
//! The library holds everything; `main.rs` only parses the command line and prints errors.

pub mod advise;
pub mod cli;
pub mod clock;
pub mod driver;
pub mod error;
pub mod experiment;
pub mod explain;
pub mod fleet;
pub mod interrupt;
pub mod metric;
pub mod owned;
pub mod report;
pub mod sampler;
pub mod server;
pub mod shell;
pub mod stats;
pub mod store;
pub mod workload;

pub use error::{Error, Result};
