//! versus: is this MySQL/MariaDB version or configuration faster or slower than that one, by how much,
//! how sure are we, and why?
//!
//! The library holds everything; `main.rs` only parses the command line and prints errors.

pub mod driver;
pub mod error;
pub mod server;
pub mod stats;
pub mod workload;

pub use error::{Error, Result};
