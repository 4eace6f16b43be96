//! versus: is this MySQL/MariaDB version or configuration faster or slower than that one, by how much,
//! how sure are we, and why?
//!
//! The library holds everything; `main.rs` only parses the command line and prints errors.
//!
//! # The per-statement path's code layout
//!
//! The functions a benchmark worker runs for every statement (drawing it, encoding it, sending it,
//! reading and walking the response, counting and timing the event) carry
//! `#[unsafe(link_section = ".text.hot.versus")]`, and `build.rs` asks the linker to keep `.text.hot`
//! sections together (`-z keep-text-section-prefix`; GNU ld groups them by default). Spread over the
//! binary's 12 MB of code they touched 23 code pages per point select, and after every wake-up, with the
//! server's threads in between, those page walks cost more than the instructions. Gathered, the path
//! touches about 13 pages (most of the rest are libc's), and at 64 threads versus's CPU per point select
//! fell by about 5 % (BENCHMARKS.md, `bench/footprint.py`).
//! The attribute only places code, and it is `unsafe` only because a section name can put code where it
//! cannot run; `.text.hot.*` is executable text like the rest. A function added to that path should
//! carry it too (a test in `tests/sysbench_offline.rs` checks that the path stays together).

pub mod advise;
pub mod cli;
pub mod clock;
pub mod driver;
pub mod error;
pub mod experiment;
pub mod explain;
pub mod fleet;
pub mod input;
pub mod interrupt;
pub mod lockfile;
pub mod markup;
pub mod metric;
pub mod owned;
pub mod present;
pub mod profile;
pub mod report;
pub mod sampler;
pub mod server;
pub mod shell;
pub mod stats;
pub mod store;
pub mod workload;

pub use error::{Error, Result};
