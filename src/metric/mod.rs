//! The metrics a comparison can be made on: what each means, its unit, which direction is better, and
//! how to read it from a stored run.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::sampler::Efficiency;
use crate::stats::Direction;
use crate::store::{Interval, Summary};

/// What kind of quantity a metric is; it decides the words of a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Work per second.
    Throughput,
    /// Time per transaction.
    Latency,
    /// Resources per transaction.
    Cost,
}

/// A metric of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Transactions (sysbench events) per second.
    Tps,
    /// Queries per second.
    Qps,
    /// Mean latency.
    AvgLatency,
    /// Median latency (from the stored latency histogram).
    P50,
    /// 90th percentile latency (from the stored latency histogram).
    P90,
    /// 95th percentile latency.
    P95,
    /// 99th percentile latency.
    P99,
    /// 99.9th percentile latency (from the stored latency histogram).
    P999,
    /// Maximum latency.
    MaxLatency,
    /// Server CPU (user + system) µs per transaction.
    CpuPerTxn,
    /// Client (versus) CPU µs per transaction.
    ClientCpuPerTxn,
    /// Server context switches per transaction.
    CswPerTxn,
    /// KB the server read from storage per transaction.
    ReadKbPerTxn,
    /// KB the server wrote to storage per transaction.
    WriteKbPerTxn,
    /// fsyncs per transaction: InnoDB's (data files, doublewrite, redo log, each once) plus the binary
    /// log's syncs, by the definitions of the run's server line (`sampler::counters`).
    FsyncsPerTxn,
    /// Binary log syncs per transaction (0 with the binary log off).
    BinlogSyncsPerTxn,
    /// KB of InnoDB redo log written per transaction.
    RedoKbPerTxn,
    /// Median per-second heartbeat lag of the most lagging replica (a topology target).
    ReplicaLagP50,
    /// 95th percentile per-second heartbeat lag of the most lagging replica.
    ReplicaLagP95,
    /// Largest per-second heartbeat lag of any replica.
    ReplicaLagMax,
    /// Transactions a second the slowest replica applied.
    ReplicaApplied,
    /// Seconds until the last replica applied all the primary committed, from the end of the load.
    CatchUp,
    /// Mean wait of a semi-synchronous commit for a replica's acknowledgement.
    CommitWait,
    /// Server CPU µs of the busiest replica per transaction of the primary.
    ReplicaCpuPerTxn,
    /// KB the busiest-writing replica wrote to storage per transaction of the primary.
    ReplicaWriteKbPerTxn,
}

/// The latency metrics, as one pattern: they share their unit, floor and kind.
macro_rules! latency {
    () => {
        Metric::AvgLatency | Metric::P50 | Metric::P90 | Metric::P95 | Metric::P99 | Metric::P999 | Metric::MaxLatency
    };
}

/// The values a metric is read from: one finished run.
#[derive(Debug, Clone, Copy)]
pub struct RunValues<'a> {
    /// Whole-run numbers.
    pub summary: &'a Summary,
    /// Cost per transaction.
    pub efficiency: &'a Efficiency,
    /// The decoded whole-run latency histogram (µs), if one is stored.
    pub histogram: Option<&'a hdrhistogram::Histogram<u64>>,
}

impl Metric {
    /// Every metric, in the order `--metric` lists them.
    pub const ALL: [Metric; 25] = [
        Metric::Tps,
        Metric::Qps,
        Metric::AvgLatency,
        Metric::P50,
        Metric::P90,
        Metric::P95,
        Metric::P99,
        Metric::P999,
        Metric::MaxLatency,
        Metric::CpuPerTxn,
        Metric::ClientCpuPerTxn,
        Metric::CswPerTxn,
        Metric::ReadKbPerTxn,
        Metric::WriteKbPerTxn,
        Metric::FsyncsPerTxn,
        Metric::BinlogSyncsPerTxn,
        Metric::RedoKbPerTxn,
        Metric::ReplicaLagP50,
        Metric::ReplicaLagP95,
        Metric::ReplicaLagMax,
        Metric::ReplicaApplied,
        Metric::CatchUp,
        Metric::CommitWait,
        Metric::ReplicaCpuPerTxn,
        Metric::ReplicaWriteKbPerTxn,
    ];

    /// The metrics of a replication topology's table, in report order.
    pub const REPLICATION: [Metric; 8] = [
        Metric::ReplicaLagP50,
        Metric::ReplicaLagP95,
        Metric::ReplicaLagMax,
        Metric::ReplicaApplied,
        Metric::CatchUp,
        Metric::CommitWait,
        Metric::ReplicaCpuPerTxn,
        Metric::ReplicaWriteKbPerTxn,
    ];

    /// The names of [`Metric::ALL`] as `--metric`'s help lists them ("tps, qps, … or redo-kb-per-txn").
    pub fn names_for_help() -> String {
        let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(", "),
        }
    }

    /// The metrics of the efficiency table, throughput first (as in Small Datum's `sum_met` blocks).
    pub const EFFICIENCY: [Metric; 7] = [
        Metric::Tps,
        Metric::CpuPerTxn,
        Metric::CswPerTxn,
        Metric::ReadKbPerTxn,
        Metric::WriteKbPerTxn,
        Metric::FsyncsPerTxn,
        Metric::ClientCpuPerTxn,
    ];

    /// The latency metrics of the percentile table and chart.
    pub const LATENCIES: [Metric; 7] =
        [Metric::AvgLatency, Metric::P50, Metric::P90, Metric::P95, Metric::P99, Metric::P999, Metric::MaxLatency];

    /// The name used on the command line and in exports (`tps`, `p95`, `cpu-per-txn` …).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::AvgLatency => "avg-latency",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::MaxLatency => "max-latency",
            Metric::CpuPerTxn => "cpu-per-txn",
            Metric::ClientCpuPerTxn => "client-cpu-per-txn",
            Metric::CswPerTxn => "csw-per-txn",
            Metric::ReadKbPerTxn => "read-kb-per-txn",
            Metric::WriteKbPerTxn => "write-kb-per-txn",
            Metric::FsyncsPerTxn => "fsyncs-per-txn",
            Metric::BinlogSyncsPerTxn => "binlog-syncs-per-txn",
            Metric::RedoKbPerTxn => "redo-kb-per-txn",
            Metric::ReplicaLagP50 => "replica-lag-p50",
            Metric::ReplicaLagP95 => "replica-lag-p95",
            Metric::ReplicaLagMax => "replica-lag-max",
            Metric::ReplicaApplied => "replica-applied",
            Metric::CatchUp => "catch-up",
            Metric::CommitWait => "commit-wait",
            Metric::ReplicaCpuPerTxn => "replica-cpu-per-txn",
            Metric::ReplicaWriteKbPerTxn => "replica-write-kb-per-txn",
        }
    }

    /// A short heading for tables (`tps`, `p95 ms`, `CPU µs/txn` …).
    pub fn label(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::AvgLatency => "avg ms",
            Metric::P50 => "p50 ms",
            Metric::P90 => "p90 ms",
            Metric::P95 => "p95 ms",
            Metric::P99 => "p99 ms",
            Metric::P999 => "p99.9 ms",
            Metric::MaxLatency => "max ms",
            Metric::CpuPerTxn => "CPU µs/txn",
            Metric::ClientCpuPerTxn => "client CPU µs/txn",
            Metric::CswPerTxn => "csw/txn",
            Metric::ReadKbPerTxn => "KB read/txn",
            Metric::WriteKbPerTxn => "KB written/txn",
            Metric::FsyncsPerTxn => "fsyncs/txn",
            Metric::BinlogSyncsPerTxn => "binlog syncs/txn",
            Metric::RedoKbPerTxn => "redo KB/txn",
            Metric::ReplicaLagP50 => "lag p50 ms",
            Metric::ReplicaLagP95 => "lag p95 ms",
            Metric::ReplicaLagMax => "lag max ms",
            Metric::ReplicaApplied => "applied/s",
            Metric::CatchUp => "catch-up s",
            Metric::CommitWait => "commit wait µs",
            Metric::ReplicaCpuPerTxn => "replica CPU µs/txn",
            Metric::ReplicaWriteKbPerTxn => "replica KB written/txn",
        }
    }

    /// The unit of the values in a report (latencies in milliseconds, bytes in KB of 1024 bytes).
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Tps => "transactions/s",
            Metric::Qps => "queries/s",
            latency!() => "ms",
            Metric::CpuPerTxn | Metric::ClientCpuPerTxn | Metric::ReplicaCpuPerTxn => "µs/transaction",
            Metric::CswPerTxn => "context switches/transaction",
            Metric::ReadKbPerTxn | Metric::WriteKbPerTxn | Metric::RedoKbPerTxn | Metric::ReplicaWriteKbPerTxn => {
                "KB/transaction"
            }
            Metric::FsyncsPerTxn => "fsyncs/transaction",
            Metric::BinlogSyncsPerTxn => "syncs/transaction",
            Metric::ReplicaLagP50 | Metric::ReplicaLagP95 | Metric::ReplicaLagMax => "ms",
            Metric::ReplicaApplied => "transactions/s",
            Metric::CatchUp => "s",
            Metric::CommitWait => "µs/commit",
        }
    }

    /// What the metric measures and where its values come from, in one sentence for reports and help.
    pub fn description(self) -> &'static str {
        match self {
            Metric::Tps => "transactions (sysbench events) per second over the measured time",
            Metric::Qps => "queries per second over the measured time",
            Metric::AvgLatency => "mean transaction latency, from the run's summary",
            Metric::P95 | Metric::P99 => "transaction latency percentile, from the run's summary",
            Metric::P50 | Metric::P90 | Metric::P999 => {
                "transaction latency percentile, from the stored whole-run latency histogram"
            }
            Metric::MaxLatency => "longest transaction, from the run's summary",
            Metric::CpuPerTxn => "server user + system CPU per transaction, from /proc/PID/stat of the server",
            Metric::ClientCpuPerTxn => "versus's own user + system CPU per transaction",
            Metric::CswPerTxn => "server context switches (voluntary + involuntary) per transaction, from /proc",
            Metric::ReadKbPerTxn => "KB the server process read from storage per transaction (/proc/PID/io)",
            Metric::WriteKbPerTxn => "KB the server process wrote to storage per transaction (/proc/PID/io)",
            Metric::FsyncsPerTxn => {
                "InnoDB's fsyncs (Innodb_data_fsyncs, which includes the redo log's) plus the binary log's \
                 syncs (MariaDB: Binlog_group_commits / sync_binlog; MySQL: performance_schema file I/O of \
                 the binary log), per transaction, from the server's counters"
            }
            Metric::BinlogSyncsPerTxn => {
                "binary log syncs per transaction (MariaDB: Binlog_group_commits / sync_binlog; MySQL: \
                 performance_schema file I/O of the binary log); 0 with the binary log off"
            }
            Metric::RedoKbPerTxn => "KB written to the InnoDB redo log per transaction (Innodb_os_log_written)",
            Metric::ReplicaLagP50 | Metric::ReplicaLagP95 => {
                "percentile of the per-second heartbeat lag over the measured time, of the replica where it is highest"
            }
            Metric::ReplicaLagMax => "largest per-second heartbeat lag of any replica over the measured time",
            Metric::ReplicaApplied => {
                "transactions a second the slowest replica applied over the measured time (from its GTID position)"
            }
            Metric::CatchUp => {
                "seconds from the end of the load until every replica had applied all the primary committed"
            }
            Metric::CommitWait => {
                "mean wait of a semi-synchronous commit for a replica's acknowledgement (Rpl_semi_sync_*_tx_wait_time)"
            }
            Metric::ReplicaCpuPerTxn => {
                "user + system CPU of the busiest replica's server (/proc/PID/stat) per transaction of the primary"
            }
            Metric::ReplicaWriteKbPerTxn => {
                "KB the busiest-writing replica's server wrote to storage (/proc/PID/io) per transaction of the primary"
            }
        }
    }

    /// The smallest value, in [`Metric::unit`], that is more than measurement dust: below it on both
    /// sides no ratio is computed ("—, both ≈ 0"), and below it on the baseline alone neither (a ratio
    /// to almost nothing is not a finding). About one unit of the last digit reports print.
    pub fn floor(self) -> f64 {
        match self {
            Metric::Tps | Metric::Qps => 0.01,
            latency!() => 0.001,
            Metric::CpuPerTxn | Metric::ClientCpuPerTxn | Metric::ReplicaCpuPerTxn => 0.5,
            Metric::CswPerTxn => 0.01,
            Metric::ReadKbPerTxn | Metric::WriteKbPerTxn | Metric::RedoKbPerTxn | Metric::ReplicaWriteKbPerTxn => 0.01,
            Metric::FsyncsPerTxn | Metric::BinlogSyncsPerTxn => 0.005,
            Metric::ReplicaLagP50 | Metric::ReplicaLagP95 | Metric::ReplicaLagMax => 0.1,
            Metric::ReplicaApplied => 0.01,
            Metric::CatchUp => 0.001,
            Metric::CommitWait => 0.5,
        }
    }

    /// Why a ratio of these two means is not computed, if it is not: both below [`Metric::floor`]
    /// (`both ≈ 0`), or the baseline alone.
    pub fn no_ratio_reason(self, baseline: f64, candidate: f64) -> Option<String> {
        let floor = self.floor();
        if baseline.abs() < floor && candidate.abs() < floor {
            Some(format!("both ≈ 0 (below {floor} {}): no ratio", self.unit()))
        } else if baseline.abs() < floor {
            Some(format!("the baseline's {self} is ≈ 0 (below {floor} {}): no ratio", self.unit()))
        } else {
            None
        }
    }

    /// Throughput, latency or cost.
    pub fn kind(self) -> MetricKind {
        match self {
            Metric::Tps | Metric::Qps | Metric::ReplicaApplied => MetricKind::Throughput,
            latency!() => MetricKind::Latency,
            Metric::ReplicaLagP50 | Metric::ReplicaLagP95 | Metric::ReplicaLagMax | Metric::CatchUp => {
                MetricKind::Latency
            }
            Metric::CommitWait => MetricKind::Latency,
            _ => MetricKind::Cost,
        }
    }

    /// Whether a bigger value is better.
    pub fn direction(self) -> Direction {
        match self.kind() {
            MetricKind::Throughput => Direction::HigherIsBetter,
            MetricKind::Latency | MetricKind::Cost => Direction::LowerIsBetter,
        }
    }

    /// The metric's value for one run, in [`Metric::unit`]; `None` when the run did not record it
    /// (no histogram, no server process access, a counter the server lacks, or a run stored by an
    /// older versus).
    pub fn of_run(self, r: &RunValues<'_>) -> Option<f64> {
        let s = r.summary;
        let e = r.efficiency;
        let ms = |us: f64| us / 1000.0;
        let from_histogram = |q: f64| r.histogram.filter(|h| !h.is_empty()).map(|h| ms(h.value_at_quantile(q) as f64));
        let v = match self {
            Metric::Tps => Some(s.tps),
            Metric::Qps => Some(s.qps),
            Metric::AvgLatency => Some(ms(s.latency_avg_us)),
            Metric::P50 => from_histogram(0.5),
            Metric::P90 => from_histogram(0.9),
            Metric::P95 => Some(ms(s.latency_p95_us)),
            Metric::P99 => Some(ms(s.latency_p99_us)),
            Metric::P999 => from_histogram(0.999),
            Metric::MaxLatency => Some(ms(s.latency_max_us)),
            Metric::CpuPerTxn => match (e.server_cpu_user_us, e.server_cpu_system_us) {
                (Some(u), Some(sys)) => Some(u + sys),
                _ => None,
            },
            Metric::ClientCpuPerTxn => e.client_cpu_us,
            Metric::CswPerTxn => e.server_ctxt_switches,
            Metric::ReadKbPerTxn => e.server_read_bytes.map(|b| b / 1024.0),
            Metric::WriteKbPerTxn => e.server_write_bytes.map(|b| b / 1024.0),
            Metric::FsyncsPerTxn => e.fsyncs(),
            Metric::BinlogSyncsPerTxn => e.binlog_syncs,
            Metric::RedoKbPerTxn => e.innodb_log_written_bytes.map(|b| b / 1024.0),
            Metric::ReplicaLagP50 => e.replication.and_then(|r| r.lag_p50_ms),
            Metric::ReplicaLagP95 => e.replication.and_then(|r| r.lag_p95_ms),
            Metric::ReplicaLagMax => e.replication.and_then(|r| r.lag_max_ms),
            Metric::ReplicaApplied => e.replication.and_then(|r| r.applied_per_s),
            Metric::CatchUp => e.replication.and_then(|r| r.catch_up_s),
            Metric::CommitWait => e.replication.and_then(|r| r.commit_wait_us),
            Metric::ReplicaCpuPerTxn => e.replication.and_then(|r| r.cpu_us_per_txn),
            Metric::ReplicaWriteKbPerTxn => e.replication.and_then(|r| r.write_kb_per_txn),
        };
        v.filter(|x| x.is_finite())
    }

    /// The metric's per-interval series, for the metrics whose whole-run value is the mean of its
    /// interval rates (throughput); `None` for the others.
    pub fn interval_series(self, intervals: &[Interval]) -> Option<Vec<f64>> {
        match self {
            Metric::Tps => Some(intervals.iter().map(|i| i.tps).collect()),
            Metric::Qps => Some(intervals.iter().map(|i| i.qps).collect()),
            _ => None,
        }
    }

    /// The words of a verdict for this metric: (better, worse).
    pub fn verdict_words(self) -> (&'static str, &'static str) {
        match self.kind() {
            MetricKind::Throughput | MetricKind::Latency => ("faster", "slower"),
            MetricKind::Cost => ("cheaper", "costlier"),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match wanted.as_str() {
            "p999" | "p99-9" => "p99.9",
            "latency" | "avg" | "mean-latency" => "avg-latency",
            "max" => "max-latency",
            "cpu" | "cpu-us-per-txn" => "cpu-per-txn",
            "lag" | "replica-lag" => "replica-lag-p95",
            other => other,
        };
        Metric::ALL.into_iter().find(|m| m.name() == alias).ok_or_else(|| {
            let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
            format!("unknown metric '{s}'; choose one of {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_metric_once_by_a_name_that_parses() {
        let help = Metric::names_for_help();
        let listed: Vec<&str> = help.split([',', ' ']).filter(|w| !w.is_empty() && *w != "or").collect();
        assert_eq!(listed.len(), Metric::ALL.len(), "{help}");
        for m in Metric::ALL {
            assert_eq!(listed.iter().filter(|w| **w == m.name()).count(), 1, "{} in {help}", m.name());
            assert_eq!(m.name().parse::<Metric>(), Ok(m));
        }
    }

    #[test]
    fn names_round_trip_and_aliases() {
        for m in Metric::ALL {
            assert_eq!(m.name().parse::<Metric>().unwrap(), m);
        }
        assert_eq!("P999".parse::<Metric>().unwrap(), Metric::P999);
        assert_eq!("cpu_per_txn".parse::<Metric>().unwrap(), Metric::CpuPerTxn);
        let e = "speed".parse::<Metric>().unwrap_err();
        assert!(e.contains("unknown metric 'speed'") && e.contains("tps, qps"), "{e}");
    }

    #[test]
    fn values_and_directions() {
        let summary = Summary { tps: 100.0, latency_p95_us: 2500.0, ..Summary::default() };
        let efficiency = Efficiency {
            server_cpu_user_us: Some(300.0),
            server_cpu_system_us: Some(100.0),
            server_write_bytes: Some(2048.0),
            innodb_data_fsyncs: Some(0.5),
            innodb_log_fsyncs: Some(0.5),
            innodb_fsyncs: Some(0.5),
            binlog_syncs: Some(1.0),
            ..Efficiency::default()
        };
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let r = RunValues { summary: &summary, efficiency: &efficiency, histogram: Some(&h) };
        assert_eq!(Metric::Tps.of_run(&r), Some(100.0));
        assert_eq!(Metric::P95.of_run(&r), Some(2.5));
        assert_eq!(Metric::CpuPerTxn.of_run(&r), Some(400.0));
        assert_eq!(Metric::WriteKbPerTxn.of_run(&r), Some(2.0));
        assert_eq!(Metric::FsyncsPerTxn.of_run(&r), Some(1.5), "InnoDB's once, plus the binary log's");
        assert_eq!(Metric::BinlogSyncsPerTxn.of_run(&r), Some(1.0));
        let unknown = Efficiency { binlog_syncs: None, ..efficiency };
        let r2 = RunValues { efficiency: &unknown, ..r };
        assert_eq!(Metric::FsyncsPerTxn.of_run(&r2), None, "binary log syncs unknown");
        assert_eq!(Metric::ReadKbPerTxn.of_run(&r), None);
        let p50 = Metric::P50.of_run(&r).unwrap();
        assert!((p50 - 5.0).abs() < 0.01, "{p50}");
        let no_hist = RunValues { histogram: None, ..r };
        assert_eq!(Metric::P50.of_run(&no_hist), None);
        assert_eq!(Metric::Tps.direction(), Direction::HigherIsBetter);
        assert_eq!(Metric::P99.direction(), Direction::LowerIsBetter);
        assert_eq!(Metric::CpuPerTxn.verdict_words(), ("cheaper", "costlier"));
        assert!(Metric::P95.interval_series(&[]).is_none());
        let why = Metric::ReadKbPerTxn.no_ratio_reason(0.0, 0.004).unwrap();
        assert!(why.starts_with("both ≈ 0 (below 0.01 KB/transaction)"), "{why}");
        assert!(Metric::ReadKbPerTxn.no_ratio_reason(0.001, 12.9).unwrap().starts_with("the baseline's"));
        assert_eq!(Metric::ReadKbPerTxn.no_ratio_reason(0.5, 0.0), None, "a drop to zero is a finding");
        assert_eq!(Metric::Tps.no_ratio_reason(1000.0, 900.0), None);
    }
}
