//! The text report in sysbench 1.0.20's exact layout and number formats (reference sysbench.md §6):
//! the run preamble, `--report-interval` lines, the `--histogram` block and the final report.

use std::fmt::Write;

use hdrhistogram::Histogram;

use super::options::Options;
use super::session::Counts;
use super::stats::{Interval, RunResult};

/// The version line every command prints first (parsers reading `sysbench ([0-9.]+)` get 1.0.20).
pub fn version_line() -> String {
    format!("sysbench 1.0.20 compatible (versus {})\n", env!("CARGO_PKG_VERSION"))
}

/// The `run` preamble up to (not including) `Initializing worker threads...`.
pub fn preamble(o: &Options) -> String {
    let mut s = version_line();
    s.push_str("\nRunning the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", o.threads);
    if o.warmup_time > 0 {
        let _ = writeln!(s, "Warmup time: {}s", o.warmup_time);
    }
    if o.rate > 0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", o.rate);
    }
    if o.report_interval > 0 {
        let _ = writeln!(s, "Report intermediate results every {} second(s)", o.report_interval);
    }
    if !o.report_checkpoints.is_empty() {
        let list: Vec<String> = o.report_checkpoints.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(s, "Report checkpoint(s) at {} seconds", list.join(", "));
    }
    if o.debug {
        s.push_str("Debug mode enabled.\n\n");
    }
    if o.rand.seed != 0 {
        let _ = writeln!(s, "Initializing random number generator from seed ({}).", o.rand.seed);
    } else {
        s.push_str("Initializing random number generator from current time\n");
    }
    s.push('\n');
    if let Some(grace) = o.forced_shutdown.filter(|_| o.time > 0) {
        let _ = writeln!(s, "Forcing shutdown in {} seconds", o.warmup_time + o.time + grace);
    }
    s.push('\n');
    s
}

/// One intermediate report line (plus the queue line under `--rate`), newline-terminated.
pub fn interval_line(iv: &Interval, pct: u32) -> String {
    let c = &iv.counts;
    let mut s = format!(
        "[ {:.0}s ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) lat (ms,{}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}\n",
        iv.time,
        iv.threads,
        iv.rate(c.events),
        iv.rate(c.queries()),
        iv.rate(c.reads),
        iv.rate(c.writes),
        iv.rate(c.other),
        pct,
        iv.latency_pct_ms,
        iv.rate(c.errors),
        iv.rate(c.reconnects),
    );
    if let Some((q, conc)) = iv.queue {
        let _ = writeln!(s, "[ {:.0}s ] queue length: {q}, concurrency: {conc}", iv.time);
    }
    s
}

const HIST_BUCKETS: usize = 1024;

/// Index of sysbench's log-spaced bucket (0.001 ms … 100 000 ms, 1024 buckets) holding `ms`.
fn bucket_of(ms: f64) -> usize {
    let m = (HIST_BUCKETS as f64 - 1.0) / (1e8f64).ln();
    let i = ((ms.max(1e-3).ln() - (1e-3f64).ln()) * m + 0.5).floor();
    (i.max(0.0) as usize).min(HIST_BUCKETS - 1)
}

fn bucket_value(i: usize) -> f64 {
    let m = (HIST_BUCKETS as f64 - 1.0) / (1e8f64).ln();
    (i as f64 / m + (1e-3f64).ln()).exp()
}

/// The `--histogram` block: the HDR histogram shown on sysbench's 1024-bucket grid so the layout and
/// bucket values stay those of sysbench (the exact HDR values are in `--format json`).
pub fn histogram_text(h: &Histogram<u64>) -> String {
    let mut buckets = vec![0u64; HIST_BUCKETS];
    for v in h.iter_recorded() {
        buckets[bucket_of(h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0)] += v.count_at_value();
    }
    let max = buckets.iter().copied().max().unwrap_or(0);
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    if max > 0 {
        s.push_str("       value  ------------- distribution ------------- count\n");
    }
    for (i, &n) in buckets.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let stars = ((n as f64 * 40.0 / max as f64) + 0.5).floor() as usize;
        let _ = writeln!(s, "{:12.3} |{:<40} {}", bucket_value(i), "*".repeat(stars), n);
    }
    s.push_str(" \n");
    s
}

fn line(s: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(s, "{label:<41}{value}");
}

fn line_rate(s: &mut String, label: &str, n: u64, rate: f64) {
    let _ = writeln!(s, "{label:<41}{n:<6} ({rate:.2} per sec.)");
}

/// The numbers of sysbench's final report, whether measured now or read back from the results store.
pub struct Figures<'a> {
    /// Counts over the measured time.
    pub counts: Counts,
    /// sysbench's "total time" in seconds.
    pub total_time_s: f64,
    /// The time the counts cover, the denominator of every rate, in seconds.
    pub interval_s: f64,
    /// Minimum, average, maximum and sum of event latencies, in ns.
    pub latency_ns: [u64; 4],
    /// The `--percentile` and its latency in ms; `None` when percentiles are disabled.
    pub percentile: Option<(u32, f64)>,
    /// Thread fairness: events mean/stddev, execution time mean/stddev (s).
    pub fairness: [f64; 4],
    /// The histogram to print first (`--histogram`).
    pub histogram: Option<&'a Histogram<u64>>,
    /// Events still running at a forced shutdown.
    pub unfinished: Option<u64>,
    /// Events still running when the grace after a Ctrl-C ran out.
    pub interrupted_unfinished: Option<u64>,
}

/// The final report (preceded by the histogram under `--histogram`), ending with a blank line.
pub fn final_report(r: &RunResult, o: &Options) -> String {
    render_final(&Figures {
        counts: r.counts,
        total_time_s: r.total_time.as_secs_f64(),
        interval_s: r.time_interval.as_secs_f64(),
        latency_ns: [r.latency.min(), r.latency.avg(), r.latency.max_ns, r.latency.sum_ns],
        percentile: (o.percentile > 0).then(|| (o.percentile, r.percentile_ms(o.percentile as f64))),
        fairness: r.fairness(),
        histogram: o.histogram.then_some(&r.histogram),
        unfinished: r.forced_unfinished,
        interrupted_unfinished: r.interrupted_unfinished,
    })
}

/// The final report of a run read back from the results store (95th percentile, as versus runs it).
pub fn stored_final_report(s: &crate::store::Summary, histogram: Option<&Histogram<u64>>) -> String {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    render_final(&Figures {
        counts: Counts {
            events: s.events,
            reads: s.reads,
            writes: s.writes,
            other: s.other,
            errors: s.errors,
            reconnects: s.reconnects,
        },
        total_time_s: s.duration_s,
        interval_s: s.duration_s,
        latency_ns: [ns(s.latency_min_us), ns(s.latency_avg_us), ns(s.latency_max_us), ns(s.latency_sum_us)],
        percentile: Some((95, s.latency_p95_us / 1000.0)),
        fairness: [
            s.fairness_events_avg.unwrap_or(0.0),
            s.fairness_events_stddev.unwrap_or(0.0),
            s.fairness_time_avg_s.unwrap_or(0.0),
            s.fairness_time_stddev_s.unwrap_or(0.0),
        ],
        histogram,
        unfinished: None,
        interrupted_unfinished: None,
    })
}

/// One intermediate report line of a run read back from the results store (95th percentile).
pub fn stored_interval_line(i: &crate::store::Interval) -> String {
    format!(
        "[ {:.0}s ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) lat (ms,95%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}",
        i.t_s,
        i.threads.unwrap_or(0),
        i.tps,
        i.qps,
        i.reads_ps,
        i.writes_ps,
        i.other_ps,
        i.latency_p95_us.unwrap_or(0.0) / 1000.0,
        i.errors_ps,
        i.reconnects_ps
    )
}

/// Renders [`Figures`] in sysbench's layout.
pub fn render_final(f: &Figures<'_>) -> String {
    let mut s = String::new();
    if let Some(h) = f.histogram {
        s.push_str(&histogram_text(h));
    }
    let rate = |n: u64| if f.interval_s > 0.0 { n as f64 / f.interval_s } else { 0.0 };
    let c = &f.counts;
    s.push_str("SQL statistics:\n    queries performed:\n");
    line(&mut s, "        read:", c.reads);
    line(&mut s, "        write:", c.writes);
    line(&mut s, "        other:", c.other);
    line(&mut s, "        total:", c.queries());
    line_rate(&mut s, "    transactions:", c.events, rate(c.events));
    line_rate(&mut s, "    queries:", c.queries(), rate(c.queries()));
    line_rate(&mut s, "    ignored errors:", c.errors, rate(c.errors));
    line_rate(&mut s, "    reconnects:", c.reconnects, rate(c.reconnects));
    if let Some(n) = f.unfinished {
        let _ = writeln!(s, "\nNumber of unfinished transactions on forced shutdown: {n}");
    }
    if let Some(n) = f.interrupted_unfinished {
        let _ = writeln!(s, "\nNumber of unfinished transactions on interrupt: {n}");
    }
    s.push_str("\nGeneral statistics:\n");
    line(&mut s, "    total time:", format!("{:.4}s", f.total_time_s));
    line(&mut s, "    total number of events:", c.events);
    s.push_str("\nLatency (ms):\n");
    let ms = |ns: u64| ns as f64 / 1e6;
    let [min, avg, max, sum] = f.latency_ns;
    let _ = writeln!(s, "         min: {:39.2}", ms(min));
    let _ = writeln!(s, "         avg: {:39.2}", ms(avg));
    let _ = writeln!(s, "         max: {:39.2}", ms(max));
    match f.percentile {
        Some((p, v)) => {
            let _ = writeln!(s, "        {p:3}th percentile: {v:27.2}");
        }
        None => s.push_str("         percentile stats:               disabled\n"),
    }
    let _ = writeln!(s, "         sum: {:39.2}", ms(sum));
    s.push_str("\nThreads fairness:\n");
    let [em, esd, tm, tsd] = f.fairness;
    let _ = writeln!(s, "    events (avg/stddev):           {em:.4}/{esd:3.2}");
    let _ = writeln!(s, "    execution time (avg/stddev):   {tm:.4}/{tsd:3.2}");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_sysbench_grid() {
        assert_eq!(bucket_of(0.001), 0);
        assert_eq!(bucket_of(100_000.0), 1023);
        assert_eq!(bucket_of(1e9), 1023);
        for ms in [0.5, 1.0, 2.0, 17.0] {
            let v = bucket_value(bucket_of(ms));
            assert!((v / ms - 1.0).abs() < 0.01, "{ms} -> {v}");
        }
    }
}
