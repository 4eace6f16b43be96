//! The stored runs a report selected, as the workloads see them, and the report sections the
//! workloads make of them.

use serde::{Deserialize, Serialize};

use crate::store::RunDetail;

/// One finished run chosen for a comparison.
#[derive(Debug, Clone, Copy)]
pub struct StoredRun<'a> {
    /// The run and its stored data.
    pub detail: &'a RunDetail,
    /// Index into [`StoredRuns::sides`].
    pub side: usize,
    /// The run's group within its side (its config when builds are compared, its build when configs
    /// are), if any.
    pub group: Option<&'a str>,
    /// Client threads.
    pub threads: u32,
    /// The decoded whole-run latency histogram, if stored.
    pub histogram: Option<&'a hdrhistogram::Histogram<u64>>,
}

impl StoredRun<'_> {
    /// The stored workload option `key` of the run's cell.
    pub fn option(&self, key: &str) -> Option<&serde_json::Value> {
        self.detail.run.cell.workload_options.get(key)
    }

    /// The status delta (or `versus.*` figure) `name`.
    pub fn status(&self, name: &str) -> Option<i64> {
        self.detail.status_deltas.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }
}

/// The runs of a comparison.
#[derive(Debug, Clone)]
pub struct StoredRuns<'a> {
    /// Side labels, baseline first.
    pub sides: Vec<String>,
    /// The runs.
    pub runs: Vec<StoredRun<'a>>,
    /// Logical CPUs of the host of the first experiment, if known.
    pub logical_cpus: Option<u32>,
    /// Confidence level of the comparison's intervals.
    pub confidence: f64,
    /// Relative noise band of its verdicts.
    pub noise_band: f64,
}

/// The workloads' own sections of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sections {
    /// The Insert Benchmark's Small Datum tables.
    pub ibench: Vec<super::ibench::stored::Section>,
    /// Per-statement figures of script workloads.
    pub statements: Vec<super::script::stored::Section>,
}
