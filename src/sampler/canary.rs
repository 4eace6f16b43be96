//! The canary: a short measurement of the host itself, taken before each block, so that a slow or
//! disturbed host can be told from a slow server. Two probes, as MongoDB's performance CI runs them
//! beside every task: a fixed CPU loop (wall time of a fixed amount of integer work) and an fsync
//! probe (latency of `write` + `fdatasync` of 4 KiB in the directory that will hold the datadir).
//! Both are "lower is better"; `stats::outlier` judges them against the host class's history.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One canary measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Canary {
    /// Median wall time of the CPU loop, milliseconds.
    pub cpu_loop_ms: f64,
    /// Median latency of one 4 KiB write + fdatasync, microseconds.
    pub fsync_us: f64,
}

/// One probe of the canary as the outlier test sees it.
#[derive(Debug, Clone, Copy)]
pub struct CanaryProbe {
    /// Its key in the stored canary (a field of [`Canary`]).
    pub key: &'static str,
    /// Its unit, for messages.
    pub unit: &'static str,
    /// How many times slower (or faster) than its class's median a value must be before it can be an
    /// outlier (`stats::outlier::canary_outlier`): what is too small to change a benchmark is not
    /// flagged however tight the history.
    pub min_ratio: f64,
    /// The value of a measurement.
    pub value: fn(&Canary) -> f64,
}

/// The probes, as the outlier test judges them. The CPU loop's median of 5 is stable to a few per cent
/// on a quiet host, so a quarter slower is a disturbed CPU. A virtual disk's fsync median moved between
/// 81 and 317 µs over one busy minute on the 2-core test VM (and 50 → 117 µs on a quiet one), so only
/// three times slower or faster counts.
pub const PROBES: [CanaryProbe; 2] = [
    CanaryProbe { key: "cpu_loop_ms", unit: "ms", min_ratio: 1.25, value: |c| c.cpu_loop_ms },
    CanaryProbe { key: "fsync_us", unit: "µs", min_ratio: 3.0, value: |c| c.fsync_us },
];

/// How much each probe does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CanarySize {
    /// Iterations of the CPU loop per timing.
    pub cpu_iterations: u64,
    /// Timings of the CPU loop (the median counts).
    pub cpu_rounds: usize,
    /// fsyncs (the median counts).
    pub fsyncs: usize,
}

impl Default for CanarySize {
    /// About 0.1 s of CPU (optimised build) and 30 fsyncs.
    fn default() -> Self {
        CanarySize { cpu_iterations: 4_000_000, cpu_rounds: 5, fsyncs: 30 }
    }
}

/// A fixed amount of integer work that the optimiser cannot remove (xorshift64*).
fn cpu_work(iterations: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut acc: u64 = 0;
    for _ in 0..iterations {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        acc = acc.wrapping_add(x.wrapping_mul(0x2545_F491_4F6C_DD1D));
    }
    std::hint::black_box(acc)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Measures the canary, the fsync probe in `dir` (a file it creates there and removes again).
///
/// Errors: naming `dir` when the probe file cannot be created, written or synced.
pub fn measure(dir: &Path, size: &CanarySize) -> Result<Canary> {
    let mut cpu = Vec::with_capacity(size.cpu_rounds);
    for _ in 0..size.cpu_rounds.max(1) {
        let t = Instant::now();
        cpu_work(size.cpu_iterations);
        cpu.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // A directory of its own (marked as versus's, so that it may be removed again), with the probe file.
    let own = dir.join(format!(".versus-canary-{}", std::process::id()));
    let path = own.join("probe");
    let fail = |e: std::io::Error| Error::file(&path, format!("canary fsync probe: {e}"));
    crate::owned::create_dir_all(&own).map_err(|e| Error::Other(format!("canary fsync probe: {e}")))?;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(fail)?;
    let result = (|| {
        let block = [0x5au8; 4096];
        let mut fsync = Vec::with_capacity(size.fsyncs);
        for _ in 0..size.fsyncs.max(1) {
            let t = Instant::now();
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&block)?;
            file.sync_data()?;
            fsync.push(t.elapsed().as_secs_f64() * 1e6);
        }
        Ok::<_, std::io::Error>(fsync)
    })();
    drop(file);
    let _ = crate::owned::remove(&own);
    let fsync = result.map_err(fail)?;
    Ok(Canary { cpu_loop_ms: median(cpu), fsync_us: median(fsync) })
}

/// A canary of a few milliseconds, for tests and quick checks.
pub const SMALL: CanarySize = CanarySize { cpu_iterations: 200_000, cpu_rounds: 3, fsyncs: 5 };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let c = measure(dir.path(), &SMALL).unwrap();
        assert!(c.cpu_loop_ms > 0.0 && c.fsync_us > 0.0, "{c:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe file is removed");
        // Twice the work takes longer (medians of 3; generous for a loaded machine).
        let big = CanarySize { cpu_iterations: 4_000_000, cpu_rounds: 3, fsyncs: 1 };
        assert!(measure(dir.path(), &big).unwrap().cpu_loop_ms > c.cpu_loop_ms);
    }

    #[test]
    fn an_unwritable_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let e = measure(&blocker, &SMALL).unwrap_err().to_string();
        assert!(e.contains("canary fsync probe") && e.contains("file"), "{e}");
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
