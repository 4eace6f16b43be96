//! Result types of a run: counts, exact min/avg/max/sum latency, HDR latency histograms (µs, 3
//! significant digits) and sysbench's percentile rule.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::options::Test;
use super::session::Counts;

/// An empty latency histogram in microseconds with 3 significant digits (grows as needed).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).expect("3 significant digits is valid")
}

/// The `p`-th percentile in µs by sysbench's rank rule: the smallest recorded value whose cumulative
/// count reaches `floor(n·p/100 + 0.5)`; reported as the highest value equivalent to it in the
/// histogram (within 0.1 %). 0 when the histogram is empty.
pub fn percentile(h: &Histogram<u64>, p: f64) -> u64 {
    let n = h.len();
    if n == 0 {
        return 0;
    }
    let rank = ((n as f64 * p / 100.0 + 0.5).floor() as u64).max(1);
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= rank {
            return h.highest_equivalent(v.value_iterated_to());
        }
    }
    h.highest_equivalent(h.max())
}

/// Exact event latency figures in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    /// Smallest event latency (0 when no events).
    pub min_ns: u64,
    /// Largest event latency.
    pub max_ns: u64,
    /// Sum of event latencies.
    pub sum_ns: u64,
    /// Number of events recorded.
    pub count: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency { min_ns: u64::MAX, max_ns: 0, sum_ns: 0, count: 0 }
    }
}

impl Latency {
    /// Records one event.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns;
        self.count += 1;
    }

    /// Merges `o` into `self`.
    pub fn merge(&mut self, o: &Latency) {
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.count += o.count;
    }

    /// Minimum, 0 when there were no events.
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min_ns }
    }

    /// Integer average (sum / count), 0 when there were no events.
    pub fn avg(&self) -> u64 {
        self.sum_ns.checked_div(self.count).unwrap_or(0)
    }
}

/// Per-thread figures for "Threads fairness".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadFigures {
    /// Events completed by the thread.
    pub events: u64,
    /// Sum of its event latencies (ns).
    pub time_ns: u64,
}

/// The figures of one `--report-interval` period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    /// Seconds since the start of the run (the `[ Ns ]` stamp).
    pub time: f64,
    /// Measured length of the period in seconds (the denominator of every rate).
    pub duration: f64,
    /// Threads still running.
    pub threads: u32,
    /// Counts in the period.
    pub counts: Counts,
    /// Latency in the period.
    pub latency: Latency,
    /// The `--percentile` latency of the period in ms (0 when disabled).
    pub latency_pct_ms: f64,
    /// p50, p95, p99 and max of the period in ms.
    pub p50_ms: f64,
    /// 95th percentile in ms.
    pub p95_ms: f64,
    /// 99th percentile in ms.
    pub p99_ms: f64,
    /// Under `--rate`: events waiting, and events in service.
    pub queue: Option<(u64, u64)>,
}

impl Interval {
    /// Builds the figures of a period from its counts and histogram.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        since_start: Duration,
        length: Duration,
        threads: u32,
        counts: Counts,
        hist: &Histogram<u64>,
        latency: Latency,
        pct: u32,
        queue: Option<(u64, u64)>,
    ) -> Self {
        let ms = |p: f64| capped_ms(percentile(hist, p), &latency);
        Interval {
            time: since_start.as_secs_f64(),
            duration: length.as_secs_f64(),
            threads,
            counts,
            latency,
            latency_pct_ms: if pct > 0 { ms(pct as f64) } else { 0.0 },
            p50_ms: ms(50.0),
            p95_ms: ms(95.0),
            p99_ms: ms(99.0),
            queue,
        }
    }

    /// Per-second rate of `n` in this period.
    pub fn rate(&self, n: u64) -> f64 {
        if self.duration > 0.0 { n as f64 / self.duration } else { 0.0 }
    }
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The sysbench test that ran (none for another workload's events).
    pub test: Option<Test>,
    /// Worker threads.
    pub threads: usize,
    /// Time from the start of the run to the report (sysbench's "total time").
    pub total_time: Duration,
    /// Time the counts cover (from the start, the end of warmup or the last checkpoint).
    pub time_interval: Duration,
    /// Counts.
    pub counts: Counts,
    /// Exact min/max/sum.
    pub latency: Latency,
    /// Event latency in µs.
    pub histogram: Histogram<u64>,
    /// Per worker.
    pub per_thread: Vec<ThreadFigures>,
    /// `--report-interval` series.
    pub intervals: Vec<Interval>,
    /// Stopped by Ctrl-C (or the caller's stop flag).
    pub interrupted: bool,
    /// Set when `--forced-shutdown` ended the run: events still running at that moment.
    pub forced_unfinished: Option<u64>,
    /// Set when statements still ran when the grace after a Ctrl-C ran out: events left unfinished.
    pub interrupted_unfinished: Option<u64>,
    /// Every measured event's latency in µs, in the order the reporter collected them; kept only under
    /// `--latency-log`.
    pub latencies_us: Vec<u64>,
}

impl RunResult {
    /// A result with nothing measured yet.
    pub fn empty(test: Test, threads: usize) -> Self {
        Self::empty_for(Some(test), threads)
    }

    /// An empty result of `test` (none for another workload's events).
    pub fn empty_for(test: Option<Test>, threads: usize) -> Self {
        RunResult {
            test,
            threads,
            total_time: Duration::ZERO,
            time_interval: Duration::ZERO,
            counts: Counts::default(),
            latency: Latency::default(),
            histogram: new_histogram(),
            per_thread: vec![ThreadFigures::default(); threads],
            intervals: Vec::new(),
            interrupted: false,
            forced_unfinished: None,
            interrupted_unfinished: None,
            latencies_us: Vec::new(),
        }
    }

    /// Thread fairness as sysbench 1.0.20 prints it: events per thread (mean, population stddev), and
    /// execution time per thread in seconds, whose mean is the latency sum over the threads and whose
    /// stddev is taken around that mean. The two ways to the mean agree except after a forced shutdown,
    /// where the per-thread figures also hold the events still running, as sysbench's timers do.
    pub fn fairness(&self) -> [f64; 4] {
        let n = self.per_thread.len();
        if n == 0 {
            return [0.0; 4];
        }
        let events: Vec<f64> = self.per_thread.iter().map(|t| t.events as f64).collect();
        let times: Vec<f64> = self.per_thread.iter().map(|t| t.time_ns as f64 / 1e9).collect();
        let events_avg = events.iter().sum::<f64>() / n as f64;
        let time_avg = self.latency.sum_ns as f64 / 1e9 / n as f64;
        let sd = |v: &[f64], mean: f64| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        [events_avg, sd(&events, events_avg), time_avg, sd(&times, time_avg)]
    }

    /// Per-second rate of `n` over the measured interval.
    pub fn rate(&self, n: u64) -> f64 {
        let s = self.time_interval.as_secs_f64();
        if s > 0.0 { n as f64 / s } else { 0.0 }
    }

    /// The `p`-th latency percentile in ms.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        capped_ms(percentile(&self.histogram, p), &self.latency)
    }
}

/// Writes `latencies_us`, one per line, to `path`, a file that must not exist yet (versus never
/// overwrites a file it did not make).
pub fn write_latency_log(path: &std::path::Path, latencies_us: &[u64]) -> crate::error::Result<()> {
    use std::io::Write;
    let fail = |e: std::io::Error| crate::error::Error::file(path, format!("cannot write the latency log: {e}"));
    let f = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(fail)?;
    let mut w = std::io::BufWriter::new(f);
    for v in latencies_us {
        writeln!(w, "{v}").map_err(fail)?;
    }
    w.flush().map_err(fail)
}

/// A histogram value in µs as ms, never above the exact maximum: the histogram reports the highest value
/// equivalent to a bucket (3 significant digits), which can exceed the largest latency measured.
fn capped_ms(us: u64, latency: &Latency) -> f64 {
    let ms = us as f64 / 1000.0;
    if latency.max_ns > 0 { ms.min(latency.max_ns as f64 / 1e6) } else { ms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_uses_half_up_rank() {
        let mut h = new_histogram();
        for v in 1..=100u64 {
            h.record(v * 1000).unwrap();
        }
        // rank floor(100*0.95+0.5) = 95 → 95 ms, within 0.1 %
        let p = percentile(&h, 95.0);
        assert!((95_000..=95_100).contains(&p), "{p}");
        assert_eq!(percentile(&new_histogram(), 95.0), 0);
        let mut one = new_histogram();
        one.record(1234).unwrap();
        assert!((1234..=1235).contains(&percentile(&one, 1.0)));
        // The percentile is capped at the exact maximum latency.
        let mut r = RunResult::empty(super::super::options::Test::OltpPointSelect, 1);
        r.histogram.record(152_225).unwrap();
        r.latency.record(152_225_000);
        assert!(r.percentile_ms(100.0) <= 152.225, "{}", r.percentile_ms(100.0));
        assert!(r.percentile_ms(100.0) > 152.0);
    }

    #[test]
    fn latency_min_is_zero_without_events() {
        let l = Latency::default();
        assert_eq!((l.min(), l.avg()), (0, 0));
        let mut l = Latency::default();
        l.record(10);
        l.record(31);
        assert_eq!((l.min(), l.avg(), l.max_ns, l.sum_ns), (10, 20, 31, 41));
    }
}
