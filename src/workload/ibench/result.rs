//! What a run measured, per step: rates over the step and per interval, response times per statement
//! kind, retries, the SLA verdict of query steps, the fetched-rows check and the efficiency figures.
//! The JSON form (`versus ibench --format json`) is this model; `versus ibench compare` reads it back.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::options::{Options, Step, StepKind};
use super::stats::{Kind, Latency};
use crate::sampler::Efficiency;

/// Version of the JSON layout (bump on incompatible changes).
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// A query step passes its SLA when the achieved insert rate is at least this share of the target.
pub const SLA_SHARE: f64 = 0.95;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Ran to its end.
    Done,
    /// Stopped by an error (a lost server, a failed statement); the figures cover what was measured.
    Failed,
    /// Stopped by Ctrl-C; the figures cover what was measured.
    Interrupted,
}

/// Retried errors per statement kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retries {
    /// INSERT errors retried.
    pub insert: u64,
    /// DELETE errors retried.
    pub delete: u64,
    /// Query errors retried.
    pub query: u64,
}

/// The background-write SLA of a query step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sla {
    /// Target inserts/s of all clients.
    pub target_ips: f64,
    /// Achieved inserts/s.
    pub achieved_ips: f64,
    /// achieved / target.
    pub ratio: f64,
    /// True when the achieved rate is at least 95 % of the target.
    pub passed: bool,
}

impl Sla {
    /// The verdict for `achieved` against `target` inserts/s.
    pub fn judge(target: f64, achieved: f64) -> Sla {
        let ratio = if target > 0.0 { achieved / target } else { 1.0 };
        Sla { target_ips: target, achieved_ips: achieved, ratio, passed: ratio >= SLA_SHARE }
    }
}

/// One report interval, the reference's 17 columns (rates per second, times in µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalLine {
    /// Length of the interval, s.
    pub i_sec: f64,
    /// Seconds since the step started.
    pub t_sec: f64,
    /// Inserted rows/s in the interval.
    pub i_ips: f64,
    /// Inserted rows/s since the start.
    pub t_ips: f64,
    /// Deleted rows/s in the interval.
    pub i_dps: f64,
    /// Deleted rows/s since the start.
    pub t_dps: f64,
    /// Queries/s in the interval.
    pub i_qps: f64,
    /// Queries/s since the start.
    pub t_qps: f64,
    /// Largest INSERT response time in the interval.
    pub max_i_us: u64,
    /// Largest DELETE response time in the interval.
    pub max_d_us: u64,
    /// Largest query response time in the interval.
    pub max_q_us: u64,
    /// Rows inserted since the start.
    pub t_ins: u64,
    /// Rows deleted since the start.
    pub t_del: u64,
    /// Queries since the start.
    pub t_query: u64,
    /// INSERT retries since the start.
    pub retry_i: u64,
    /// DELETE retries since the start.
    pub retry_d: u64,
    /// Query retries since the start.
    pub retry_q: u64,
    /// 95th percentile response time of the step's operation in the interval (inserts, or queries).
    pub p95_us: u64,
    /// 99th percentile likewise.
    pub p99_us: u64,
    /// Statements of every kind per second in the interval.
    pub statements_ps: f64,
}

/// Per-second rates met or beaten by `pct` % of the intervals (per client).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatePercentile {
    /// The percent of intervals (50, 75, 90, 95, 99).
    pub pct: f64,
    /// Inserted rows/s per client.
    pub insert: Option<f64>,
    /// Deleted rows/s per client.
    pub delete: Option<f64>,
    /// Queries/s per client.
    pub query: Option<f64>,
}

/// The check that queries hit live rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FetchCheck {
    /// Queries run.
    pub queries: u64,
    /// Rows each query asks for (the LIMIT, or ids per point query).
    pub expected_per_query: f64,
    /// Rows each query returned, on average.
    pub fetched_per_query: f64,
}

/// `min(transactionid)` reads of the statement makers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GetMin {
    /// Reads.
    pub queries: u64,
    /// Seconds per read.
    pub secs_per_query: f64,
}

/// Hardware efficiency of a step, per operation (an inserted row for l.i0, l.i1, l.i2; an indexed row
/// for l.x; a query for query steps), as the reference's formulas define them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepEfficiency {
    /// What one operation is: `insert`, `indexed row` or `query`.
    pub per: String,
    /// Operations.
    pub operations: u64,
    /// Busy CPU µs of the whole host per operation (the reference's cpupq: vmstat us+sy).
    pub host_cpu_us_per_op: Option<f64>,
    /// Busy CPU of the host, percent of all CPUs (cpups).
    pub host_cpu_pct: Option<f64>,
    /// Context switches of the host per operation (cspq).
    pub host_cs_per_op: Option<f64>,
    /// Server process CPU (user + system) µs per operation.
    pub server_cpu_us_per_op: Option<f64>,
    /// Server context switches per operation.
    pub server_cs_per_op: Option<f64>,
    /// versus's own CPU µs per operation.
    pub client_cpu_us_per_op: Option<f64>,
    /// versus's own CPU µs per inserted row.
    pub client_cpu_us_per_row: Option<f64>,
    /// Server CPU µs per inserted row, next to versus's.
    pub server_cpu_us_per_row: Option<f64>,
    /// KB the server read from storage per operation (rkbpq).
    pub read_kb_per_op: Option<f64>,
    /// KB the server wrote to storage per operation.
    pub write_kb_per_op: Option<f64>,
    /// KB the server wrote to storage per inserted row (wkbpi; always per insert).
    pub write_kb_per_insert: Option<f64>,
    /// Largest resident set size of the server seen during the step, bytes.
    pub server_rss_max_bytes: Option<u64>,
    /// Where the KB figures come from: `process` (/proc/PID/io) or `innodb` (status counters).
    pub io_source: Option<String>,
}

/// Everything one step measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResult {
    /// The step.
    pub step: Step,
    /// What it does.
    pub kind: StepKind,
    /// How it ended.
    pub status: StepStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// Clients.
    pub clients: u32,
    /// Wall seconds of the step.
    pub seconds: f64,
    /// Rows inserted.
    pub inserted_rows: u64,
    /// Rows deleted.
    pub deleted_rows: u64,
    /// Queries.
    pub queries: u64,
    /// INSERT statements.
    pub insert_statements: u64,
    /// DELETE statements.
    pub delete_statements: u64,
    /// l.x: rows in the tables when the indexes were built.
    pub indexed_rows: Option<u64>,
    /// Inserted rows/s.
    pub ips: f64,
    /// Deleted rows/s.
    pub dps: f64,
    /// Queries/s.
    pub qps: f64,
    /// Operations of the step (see [`StepEfficiency`]).
    pub operations: u64,
    /// Operations/s: the number of the reference's summary table (ips; indexed rows/s for l.x; qps).
    pub rate: f64,
    /// Retried errors.
    pub retries: Retries,
    /// Query steps: the background-write SLA.
    pub sla: Option<Sla>,
    /// Response times per statement kind.
    pub latency: Vec<Latency>,
    /// The per-interval series.
    pub intervals: Vec<IntervalLine>,
    /// Per-second rates at the 50th … 99th low-side percentiles.
    pub rate_percentiles: Vec<RatePercentile>,
    /// Query steps: expected vs fetched rows per query.
    pub fetched: Option<FetchCheck>,
    /// Steps with deletes: min(transactionid) reads.
    pub getmin: Option<GetMin>,
    /// Hardware efficiency.
    pub efficiency: StepEfficiency,
    /// Rows in the tables after the step (with `count_rows`).
    pub rows_after: Option<u64>,
    /// Things the reader should know (a time cap that ended the step, a cleanup action not taken).
    pub notes: Vec<String>,
    /// Response-time histograms (µs) per kind, for storing.
    #[serde(skip)]
    pub histograms: Vec<(Kind, Histogram<u64>)>,
    /// `SHOW GLOBAL STATUS` counter deltas over the step, for storing.
    #[serde(skip)]
    pub status_deltas: Vec<(String, i64)>,
    /// `SHOW GLOBAL STATUS` gauges and log positions at the end of the step, for storing.
    #[serde(skip)]
    pub status_ends: Vec<(String, i64)>,
    /// The per-operation costs in the results store's form.
    #[serde(skip)]
    pub store_efficiency: Efficiency,
    /// Host CPU µs and context switches over the step, for storing.
    #[serde(skip)]
    pub host_totals: Option<(f64, u64)>,
}

impl StepResult {
    /// The response times of `kind`, if it ran.
    pub fn latency_of(&self, kind: Kind) -> Option<&Latency> {
        self.latency.iter().find(|l| l.kind == kind)
    }

    /// The statement kind whose response time the step is about: queries in query steps, else inserts.
    pub fn primary_kind(&self) -> Kind {
        if self.kind == StepKind::Query { Kind::Query } else { Kind::Insert }
    }

    /// True when this is a query step that missed its SLA.
    pub fn sla_failed(&self) -> bool {
        self.sla.is_some_and(|s| !s.passed)
    }

    /// True when the cleanup ran to its end without doing all it says (a setting it could not change
    /// for want of a privilege, binary logs it could not reset): its notes say what.
    pub fn fell_short(&self) -> bool {
        self.step == super::options::Step::Cleanup && self.status == StepStatus::Done && !self.notes.is_empty()
    }
}

/// A step that did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// The step.
    pub step: Step,
    /// Why, in one line.
    pub reason: String,
}

/// A whole run: the steps that ran, in order, and those skipped.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IbenchResult {
    /// [`RESULT_FORMAT_VERSION`].
    pub format_version: u32,
    /// The versus version that ran it.
    pub versus_version: String,
    /// What the run is called in comparisons (default: the server version).
    pub label: String,
    /// `SELECT VERSION()`.
    pub server_version: Option<String>,
    /// Logical CPUs of the host (the `ncpu` of the reference's formulas).
    pub ncpu: Option<u32>,
    /// The options it ran with.
    pub options: Options,
    /// The steps that ran.
    pub steps: Vec<StepResult>,
    /// Steps that did not run, with the reason.
    pub skipped: Vec<Skipped>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

impl IbenchResult {
    /// The result of `step`, if it ran.
    pub fn step(&self, step: Step) -> Option<&StepResult> {
        self.steps.iter().find(|s| s.step == step)
    }

    /// True when any step failed.
    pub fn failed(&self) -> bool {
        self.steps.iter().any(|s| s.status == StepStatus::Failed)
    }
}
