//! `--format json`: one document with the final and per-interval figures, latency percentiles, the HDR
//! histogram, errors, reconnects and the full option set (schemas/sysbench-report.schema.json).

use serde_json::{Value, json};

use super::options::{Command, Options};
use super::stats::{Interval, RunResult};

/// Version of the document layout (`schema_version`).
pub const SCHEMA_VERSION: u32 = 1;

fn interval(iv: &Interval) -> Value {
    let c = &iv.counts;
    let mut v = json!({
        "time": iv.time,
        "duration": iv.duration,
        "threads": iv.threads,
        "events": c.events,
        "reads": c.reads,
        "writes": c.writes,
        "other": c.other,
        "errors": c.errors,
        "reconnects": c.reconnects,
        "tps": iv.rate(c.events),
        "qps": iv.rate(c.queries()),
        "reads_per_sec": iv.rate(c.reads),
        "writes_per_sec": iv.rate(c.writes),
        "other_per_sec": iv.rate(c.other),
        "errors_per_sec": iv.rate(c.errors),
        "reconnects_per_sec": iv.rate(c.reconnects),
        "latency_ms": {
            "min": iv.latency.min() as f64 / 1e6,
            "avg": iv.latency.avg() as f64 / 1e6,
            "max": iv.latency.max_ns as f64 / 1e6,
            "percentile": iv.latency_pct_ms,
            "p50": iv.p50_ms,
            "p95": iv.p95_ms,
            "p99": iv.p99_ms,
        },
    });
    if let Some((q, conc)) = iv.queue {
        v["queue_length"] = json!(q);
        v["concurrency"] = json!(conc);
    }
    v
}

fn totals(r: &RunResult) -> Value {
    let c = &r.counts;
    json!({
        "events": c.events,
        "reads": c.reads,
        "writes": c.writes,
        "other": c.other,
        "queries": c.queries(),
        "errors": c.errors,
        "reconnects": c.reconnects,
        "tps": r.rate(c.events),
        "qps": r.rate(c.queries()),
        "errors_per_sec": r.rate(c.errors),
        "reconnects_per_sec": r.rate(c.reconnects),
    })
}

fn latency(r: &RunResult, o: &Options) -> Value {
    let l = &r.latency;
    let pcts: serde_json::Map<String, Value> = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99]
        .iter()
        .map(|p: &f64| (format!("{p}"), json!(r.percentile_ms(*p))))
        .collect();
    json!({
        "min": l.min() as f64 / 1e6,
        "avg": l.avg() as f64 / 1e6,
        "max": l.max_ns as f64 / 1e6,
        "sum": l.sum_ns as f64 / 1e6,
        "percentile": { "p": o.percentile, "value": if o.percentile > 0 { r.percentile_ms(o.percentile as f64) } else { 0.0 } },
        "percentiles": pcts,
    })
}

/// One `--report-checkpoints` report: the figures of the period since the previous checkpoint (what
/// sysbench prints as `[ Ns ] Checkpoint report:`).
pub fn checkpoint(r: &RunResult, o: &Options) -> Value {
    json!({
        "time": r.total_time.as_secs_f64(),
        "time_interval": r.time_interval.as_secs_f64(),
        "totals": totals(r),
        "latency_ms": latency(r, o),
    })
}

/// The JSON report of a run.
pub fn report(test: &str, o: &Options, r: &RunResult) -> Value {
    let buckets: Vec<Value> = r
        .histogram
        .iter_recorded()
        .map(|v| json!([r.histogram.highest_equivalent(v.value_iterated_to()), v.count_at_value()]))
        .collect();
    let [em, esd, tm, tsd] = r.fairness();
    json!({
        "schema_version": SCHEMA_VERSION,
        "tool": "versus",
        "version": env!("CARGO_PKG_VERSION"),
        "compatible_with": "sysbench 1.0.20",
        "test": test,
        "command": Command::Run,
        "options": o,
        "interrupted": r.interrupted,
        "forced_shutdown_unfinished": r.forced_unfinished,
        "interrupted_unfinished": r.interrupted_unfinished,
        "threads": r.threads,
        "total_time": r.total_time.as_secs_f64(),
        "time_interval": r.time_interval.as_secs_f64(),
        "totals": totals(r),
        "latency_ms": latency(r, o),
        "histogram": {
            "unit": "us",
            "significant_digits": 3,
            "buckets": buckets,
        },
        "threads_fairness": {
            "events_avg": em,
            "events_stddev": esd,
            "execution_time_avg": tm,
            "execution_time_stddev": tsd,
            "per_thread": r.per_thread.iter().map(|t| json!({"events": t.events, "execution_time": t.time_ns as f64 / 1e9})).collect::<Vec<_>>(),
        },
        "intervals": r.intervals.iter().map(interval).collect::<Vec<_>>(),
    })
}
