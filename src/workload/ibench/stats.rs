//! What the workers count: per statement kind, statements, rows, retries, response times (exact max
//! per interval, an HDR histogram over the step, and the reference's ten coarse buckets).

use std::sync::Mutex;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::workload::sysbench::stats::{new_histogram, percentile};

/// The kinds of statements a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Multi-row INSERT.
    Insert,
    /// DELETE … LIMIT.
    Delete,
    /// A range or point query, including the fetch.
    Query,
}

impl Kind {
    /// The three kinds.
    pub const ALL: [Kind; 3] = [Kind::Insert, Kind::Delete, Kind::Query];

    /// `insert`, `delete` or `query`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Insert => "insert",
            Kind::Delete => "delete",
            Kind::Query => "query",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Upper bounds (µs) of the reference's response-time buckets; a tenth bucket, `gt`, holds the rest.
pub const BUCKET_BOUNDS_US: [u64; 9] = [256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000];

/// Labels of the ten buckets.
pub const BUCKET_LABELS: [&str; 10] = ["256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", "gt"];

/// The bucket of a response time: the first whose bound it fits.
pub fn bucket_of(us: u64) -> usize {
    BUCKET_BOUNDS_US.iter().position(|&b| us <= b).unwrap_or(BUCKET_BOUNDS_US.len())
}

/// Counts of one statement kind.
#[derive(Debug, Clone)]
pub struct KindAcc {
    /// Statements completed.
    pub statements: u64,
    /// Rows: inserted (insert), deleted (delete) or fetched (query).
    pub rows: u64,
    /// Errors retried.
    pub retries: u64,
    /// Largest response time since the last drain, µs.
    pub max_us: u64,
    /// Response times since the last drain.
    pub interval: Histogram<u64>,
}

impl KindAcc {
    fn new() -> Self {
        KindAcc { statements: 0, rows: 0, retries: 0, max_us: 0, interval: new_histogram() }
    }
}

/// Whole-step figures of one kind.
#[derive(Debug, Clone)]
pub struct KindTotal {
    /// Statements completed.
    pub statements: u64,
    /// Rows (see [`KindAcc::rows`]).
    pub rows: u64,
    /// Errors retried.
    pub retries: u64,
    /// Response times, µs.
    pub histogram: Histogram<u64>,
    /// The reference's ten buckets.
    pub buckets: [u64; 10],
    /// Sum of the response times, µs (for the mean).
    pub sum_us: u64,
}

impl Default for KindTotal {
    fn default() -> Self {
        KindTotal { statements: 0, rows: 0, retries: 0, histogram: new_histogram(), buckets: [0; 10], sum_us: 0 }
    }
}

/// What all workers of a step record; one lock per kind, taken once per statement.
pub struct Recorder {
    interval: [Mutex<KindAcc>; 3],
    total: [Mutex<KindTotal>; 3],
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            interval: [Mutex::new(KindAcc::new()), Mutex::new(KindAcc::new()), Mutex::new(KindAcc::new())],
            total: [
                Mutex::new(KindTotal::default()),
                Mutex::new(KindTotal::default()),
                Mutex::new(KindTotal::default()),
            ],
        }
    }
}

impl Recorder {
    /// Records one completed statement of `kind` that took `us` µs and touched `rows` rows.
    pub fn record(&self, kind: Kind, us: u64, rows: u64) {
        let us = us.max(1);
        {
            let mut a = self.interval[kind.index()].lock().unwrap_or_else(|p| p.into_inner());
            a.statements += 1;
            a.rows += rows;
            a.max_us = a.max_us.max(us);
            let _ = a.interval.record(us);
        }
        let mut t = self.total[kind.index()].lock().unwrap_or_else(|p| p.into_inner());
        t.statements += 1;
        t.rows += rows;
        t.sum_us += us;
        t.buckets[bucket_of(us)] += 1;
        let _ = t.histogram.record(us);
    }

    /// Records an error that was retried.
    pub fn retry(&self, kind: Kind) {
        self.interval[kind.index()].lock().unwrap_or_else(|p| p.into_inner()).retries += 1;
        self.total[kind.index()].lock().unwrap_or_else(|p| p.into_inner()).retries += 1;
    }

    /// Takes and resets the interval counts of `kind`.
    pub fn drain(&self, kind: Kind) -> KindAcc {
        let mut a = self.interval[kind.index()].lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *a, KindAcc::new())
    }

    /// The whole-step figures of `kind` so far.
    pub fn total(&self, kind: Kind) -> KindTotal {
        self.total[kind.index()].lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Response-time figures of one kind over a step (µs), with the reference's coarse buckets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The statement kind.
    pub kind: Kind,
    /// Statements measured.
    pub count: u64,
    /// Smallest.
    #[serde(default)]
    pub min_us: u64,
    /// Mean.
    pub avg_us: f64,
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 95th percentile.
    pub p95_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Largest.
    pub max_us: u64,
    /// Counts in the buckets ≤256 µs, ≤1 ms, ≤4 ms, ≤16 ms, ≤64 ms, ≤256 ms, ≤1 s, ≤4 s, ≤16 s, >16 s.
    pub buckets: [u64; 10],
}

impl Latency {
    /// The figures of a kind's totals; `None` when it ran no statement.
    pub fn of(kind: Kind, t: &KindTotal) -> Option<Latency> {
        let h = &t.histogram;
        if h.is_empty() {
            return None;
        }
        Some(Latency {
            kind,
            count: h.len(),
            min_us: h.min(),
            avg_us: t.sum_us as f64 / h.len() as f64,
            p50_us: percentile(h, 50.0),
            p90_us: percentile(h, 90.0),
            p95_us: percentile(h, 95.0),
            p99_us: percentile(h, 99.0),
            p999_us: percentile(h, 99.9),
            max_us: h.max(),
            buckets: t.buckets,
        })
    }

    /// The buckets as percentages of all statements, as in the reference's `pct:` rows.
    pub fn bucket_pct(&self) -> [f64; 10] {
        let n = self.buckets.iter().sum::<u64>().max(1) as f64;
        self.buckets.map(|b| 100.0 * b as f64 / n)
    }
}

/// The per-second rate that `pct` percent of the intervals met or beat: the reference's low-side
/// percentile (values sorted in descending order, the element at `round(pct/100 × count)`). `None` with
/// fewer than 10 intervals.
pub fn rate_at_percentile(rates: &[f64], pct: f64) -> Option<f64> {
    if rates.len() < 10 {
        return None;
    }
    let mut v = rates.to_vec();
    v.sort_by(|a, b| b.total_cmp(a));
    let pos = ((pct / 100.0 * v.len() as f64).round() as usize).clamp(1, v.len());
    Some(v[pos - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_take_the_first_bound_that_fits() {
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(256), 0);
        assert_eq!(bucket_of(257), 1);
        assert_eq!(bucket_of(1_000), 1);
        assert_eq!(bucket_of(16_000_000), 8);
        assert_eq!(bucket_of(16_000_001), 9);
    }

    #[test]
    fn recorder_counts_drains_and_keeps_totals() {
        let r = Recorder::default();
        r.record(Kind::Insert, 100, 50);
        r.record(Kind::Insert, 3_000, 50);
        r.retry(Kind::Insert);
        r.record(Kind::Query, 20_000_000, 10);
        let i = r.drain(Kind::Insert);
        assert_eq!((i.statements, i.rows, i.retries, i.max_us), (2, 100, 1, 3_000));
        assert_eq!(r.drain(Kind::Insert).statements, 0, "drained");
        let t = r.total(Kind::Insert);
        assert_eq!((t.statements, t.rows), (2, 100));
        let l = Latency::of(Kind::Insert, &t).unwrap();
        assert_eq!(l.buckets[0], 1);
        assert_eq!(l.buckets[2], 1);
        assert!((l.avg_us - 1550.0).abs() < 1e-9);
        assert!((2_990..=3_010).contains(&l.max_us));
        assert_eq!(l.bucket_pct()[0], 50.0);
        assert_eq!(Latency::of(Kind::Query, &r.total(Kind::Query)).unwrap().buckets[9], 1);
        assert!(Latency::of(Kind::Delete, &r.total(Kind::Delete)).is_none());
    }

    #[test]
    fn low_side_rate_percentiles() {
        let rates: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(rate_at_percentile(&rates, 50.0), Some(51.0));
        assert_eq!(rate_at_percentile(&rates, 99.0), Some(2.0), "99% of seconds met or beat it");
        assert_eq!(rate_at_percentile(&rates[..9], 50.0), None);
    }
}
