//! Typed rows of the results store: what goes in ([`NewExperiment`], [`NewCell`], [`NewRun`], [`StartRun`],
//! [`RunResult`]) and what comes out ([`Experiment`], [`ExperimentSummary`], [`RunRow`], [`RunDetail`]).
//!
//! Units: timestamps are seconds since the Unix epoch (UTC), durations seconds, latencies microseconds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::sampler::{Efficiency, HostFacts};

/// Where an experiment or a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Created, not started.
    Planned,
    /// Started and not finished (or the process died while it ran).
    Running,
    /// Finished; a run's summary is stored.
    Done,
    /// Stopped by an error.
    Failed,
    /// Stopped by the user (Ctrl-C) or a signal.
    Interrupted,
    /// An experiment with nothing left to run, some of whose runs are done and some failed (only
    /// experiments are partial: their runs are done or failed). Stored as `failed` (the schema's
    /// status values are fixed) and read back as `partial` because one of its runs is done.
    Partial,
}

impl Status {
    /// The text stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Planned => "planned",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
            Status::Partial => "partial",
        }
    }

    /// The text written to the database's `status` column (`partial` is written `failed`).
    pub fn stored(self) -> &'static str {
        match self {
            Status::Partial => Status::Failed.as_str(),
            other => other.as_str(),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "planned" => Status::Planned,
            "running" => Status::Running,
            "done" => Status::Done,
            "failed" => Status::Failed,
            "interrupted" => Status::Interrupted,
            "partial" => Status::Partial,
            other => return Err(format!("unknown status '{other}'")),
        })
    }
}

/// An experiment to record, with its matrix; see [`crate::store::Store::create_experiment`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewExperiment {
    /// The experiment's name (used to find it again on `--resume`).
    pub name: String,
    /// The experiment file as given on the command line, if there was one.
    pub file: Option<String>,
    /// The definition as TOML text. Secret-looking values are redacted before it is stored.
    pub definition: String,
    /// Seed of the run order and of the workloads.
    pub seed: u64,
    /// Facts about the machine it runs on.
    pub host: HostFacts,
    /// The cells of the matrix.
    pub cells: Vec<NewCell>,
    /// Every run, in execution order: the position in this list is the run's order index.
    pub runs: Vec<NewRun>,
}

/// One point of the matrix: a target × workload × thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCell {
    /// Stable identity of the cell within its experiment (matches runs on resume).
    pub key: String,
    /// Target label.
    pub target: String,
    /// Build name; `None` for an external server.
    pub build: Option<String>,
    /// Config name; `None` for an external server.
    pub config: Option<String>,
    /// Workload name (`oltp_read_write` …).
    pub workload: String,
    /// Client threads.
    pub threads: u32,
    /// The workload's options as JSON; secret-looking values are redacted before they are stored.
    pub workload_options: serde_json::Value,
}

/// One planned run: a cell at one repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewRun {
    /// Index into [`NewExperiment::cells`].
    pub cell: usize,
    /// Repetition, from 1.
    pub repetition: u32,
}

/// A stored experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Row id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// The experiment file as given, if any.
    pub file: Option<String>,
    /// The TOML definition (secrets redacted).
    pub definition: String,
    /// `fnv1a64:<16 hex digits>` of [`Experiment::definition`].
    pub definition_hash: String,
    /// When it was created.
    pub created_at: i64,
    /// Its status.
    pub status: Status,
    /// Seed.
    pub seed: u64,
    /// Host facts recorded at creation.
    pub host: HostFacts,
    /// The versus version that created it.
    pub versus_version: String,
}

/// An experiment with its run counts, for listings.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentSummary {
    /// Row id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// The experiment file as given, if any.
    pub file: Option<String>,
    /// When it was created.
    pub created_at: i64,
    /// Its status.
    pub status: Status,
    /// Number of runs planned in total.
    pub runs: u64,
    /// Runs done.
    pub done: u64,
    /// Runs failed.
    pub failed: u64,
}

/// A stored cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Row id.
    pub id: i64,
    /// Stable key within the experiment.
    pub key: String,
    /// Target label.
    pub target: String,
    /// Build name (`None` for external servers).
    pub build: Option<String>,
    /// Config name (`None` for external servers).
    pub config: Option<String>,
    /// Workload name.
    pub workload: String,
    /// Client threads.
    pub threads: u32,
    /// Workload options (JSON, secrets redacted).
    pub workload_options: serde_json::Value,
}

/// What is known when a run starts; see [`crate::store::Store::start_run`].
#[derive(Debug, Clone, PartialEq)]
pub struct StartRun {
    /// `SELECT VERSION()` of the server.
    pub server_version: String,
    /// The command line / options used, as JSON. Secret-looking values are redacted before storing.
    pub command: serde_json::Value,
}

/// Whole-run numbers, as in sysbench's final report.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Events (transactions for OLTP workloads).
    pub events: u64,
    /// All queries.
    pub queries: u64,
    /// Read queries.
    pub reads: u64,
    /// Write queries.
    pub writes: u64,
    /// Other queries (BEGIN, COMMIT …).
    pub other: u64,
    /// Ignored errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Events per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Minimum latency, µs.
    pub latency_min_us: f64,
    /// Mean latency, µs.
    pub latency_avg_us: f64,
    /// Maximum latency, µs.
    pub latency_max_us: f64,
    /// 95th percentile latency, µs.
    pub latency_p95_us: f64,
    /// 99th percentile latency, µs.
    pub latency_p99_us: f64,
    /// Sum of all latencies, µs.
    pub latency_sum_us: f64,
    /// Measured time, seconds.
    pub duration_s: f64,
    /// Thread fairness: mean events per thread.
    pub fairness_events_avg: Option<f64>,
    /// Thread fairness: standard deviation of events per thread.
    pub fairness_events_stddev: Option<f64>,
    /// Thread fairness: mean execution time per thread, seconds.
    pub fairness_time_avg_s: Option<f64>,
    /// Thread fairness: standard deviation of execution time per thread, seconds.
    pub fairness_time_stddev_s: Option<f64>,
}

/// One report interval; rates are per second.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval, seconds since the run started.
    pub t_s: f64,
    /// Threads running, if known.
    pub threads: Option<u32>,
    /// Events per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Reads per second.
    pub reads_ps: f64,
    /// Writes per second.
    pub writes_ps: f64,
    /// Other queries per second.
    pub other_ps: f64,
    /// 95th percentile latency, µs.
    pub latency_p95_us: Option<f64>,
    /// 99th percentile latency, µs.
    pub latency_p99_us: Option<f64>,
    /// Maximum latency, µs.
    pub latency_max_us: Option<f64>,
    /// Ignored errors per second.
    pub errors_ps: f64,
    /// Reconnects per second.
    pub reconnects_ps: f64,
}

/// A latency histogram as stored: HdrHistogram V2+deflate of microsecond values
/// (see [`crate::store::encode_histogram`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredHistogram {
    /// What it covers: `total` for the whole run, `interval` for one report interval.
    pub kind: String,
    /// End of the interval in seconds since the run started; `None` for whole-run histograms.
    pub t_s: Option<f64>,
    /// The encoded histogram.
    pub data: Vec<u8>,
}

/// Everything measured by a finished run; stored in one transaction by
/// [`crate::store::Store::finish_run`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// Whole-run numbers.
    pub summary: Summary,
    /// Per-interval numbers.
    pub intervals: Vec<Interval>,
    /// Latency histograms.
    pub histograms: Vec<StoredHistogram>,
    /// `SHOW GLOBAL VARIABLES` (name, value), in any order.
    pub variables: Vec<(String, String)>,
    /// `SHOW GLOBAL STATUS` counter deltas over the measured time (see [`crate::sampler::status_deltas`]).
    pub status_deltas: Vec<(String, i64)>,
    /// `SHOW GLOBAL STATUS` gauges and log positions at the end of the measured time (see
    /// [`crate::sampler::status_ends`]).
    #[serde(default)]
    pub status_ends: Vec<(String, i64)>,
    /// Cost per transaction.
    pub efficiency: Efficiency,
    /// The server's on-CPU profile over the measured time, when the run was profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::Profile>,
    /// The server threads' off-CPU time per stack over the measured time (`profile_waits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<crate::profile::Profile>,
    /// Each replica each second, for a run against a replication topology.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica_seconds: Vec<ReplicaSecond>,
}

/// One replica at one second of a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplicaSecond {
    /// The replica's name.
    pub replica: String,
    /// Seconds since the run's load started.
    pub t_s: f64,
    /// Heartbeat lag in milliseconds, when a heartbeat had arrived.
    pub lag_ms: Option<f64>,
    /// The server's own `Seconds_Behind_Master`/`_Source` (none when it said NULL).
    pub seconds_behind: Option<i64>,
    /// Transactions it applied a second since the previous sample.
    pub applied_ps: Option<f64>,
}

/// A run with its cell, for listings and resume.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Row id (what `versus show RUN` takes).
    pub id: i64,
    /// The experiment it belongs to.
    pub experiment_id: i64,
    /// Its cell.
    pub cell: Cell,
    /// Repetition, from 1.
    pub repetition: u32,
    /// Position in the execution order, from 0.
    pub order_index: u32,
    /// Status.
    pub status: Status,
    /// Why it failed, for failed runs.
    pub error: Option<String>,
    /// When it last started.
    pub started_at: Option<i64>,
    /// When it finished, failed or was interrupted.
    pub finished_at: Option<i64>,
    /// `SELECT VERSION()` of the server it ran on.
    pub server_version: Option<String>,
    /// Whole-run numbers; present when the run is done.
    pub summary: Option<Summary>,
}

/// One run with everything stored for it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDetail {
    /// The run and its cell.
    pub run: RunRow,
    /// The command / options used (secrets redacted).
    pub command: Option<serde_json::Value>,
    /// Per-interval numbers, by time.
    pub intervals: Vec<Interval>,
    /// Latency histograms, whole-run ones first, then by time.
    pub histograms: Vec<StoredHistogram>,
    /// `SHOW GLOBAL VARIABLES`, sorted by name.
    pub variables: Vec<(String, String)>,
    /// Status counter deltas, sorted by name.
    pub status_deltas: Vec<(String, i64)>,
    /// Status gauges and log positions at the end of the measured time, sorted by name; empty for runs
    /// stored before schema version 5.
    pub status_ends: Vec<(String, i64)>,
    /// Cost per transaction.
    pub efficiency: Efficiency,
    /// Each replica each second (runs against a topology, stored from schema version 8).
    pub replica_seconds: Vec<ReplicaSecond>,
}
