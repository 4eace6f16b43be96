//! What the Rust callbacks of one Lua state share, kept in the state's app data.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::driver::Driver;
use crate::workload::sysbench::rng::{Random, Unique};

/// What the Rust callbacks of one state share: the state's thread and where connections come from.
pub(super) struct Ctx {
    /// Where new connections come from.
    pub(super) driver: Arc<dyn Driver>,
    /// The worker's connection is there for the script's first `drv:connect()`.
    pub(super) worker_free: bool,
    /// The command's cancel flag (see `Setup::cancel`).
    pub(super) cancel: Arc<AtomicBool>,
    /// The state's random numbers.
    pub(super) rnd: Random,
    /// sysbench's unique sequence, shared by every thread.
    pub(super) unique: Arc<Unique>,
    /// The script's options as `help` lists them.
    pub(super) help: String,
}
