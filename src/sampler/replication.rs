//! What a run against a replication topology measured of its replicas, as stored beside the run's
//! costs: heartbeat lag over the measured seconds, the rate they applied at, the time they took to
//! catch up after the load, the semi-synchronous commit wait, whether their data equal the primary's,
//! and how many had a fault. Each figure is the worst replica's: a topology keeps up only as well as
//! its slowest member.

use serde::{Deserialize, Serialize};

use super::replica_lag::LagSample;
use crate::stats;

/// A topology's figures over one run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplicationFigures {
    /// How many replicas the primary had.
    pub replicas: f64,
    /// Median of the per-second heartbeat lag (ms), of the replica with the highest.
    pub lag_p50_ms: Option<f64>,
    /// 95th percentile of the per-second heartbeat lag (ms), of the replica with the highest.
    pub lag_p95_ms: Option<f64>,
    /// Largest per-second heartbeat lag (ms) of any replica.
    pub lag_max_ms: Option<f64>,
    /// Largest `Seconds_Behind_Master`/`_Source` any replica reported.
    pub seconds_behind_max: Option<f64>,
    /// Transactions a second the slowest replica applied over the measured seconds (the heartbeat's 10
    /// a second among them).
    pub applied_per_s: Option<f64>,
    /// Seconds from the end of the load until the last replica had applied all the primary committed.
    pub catch_up_s: Option<f64>,
    /// Mean time (µs) a semi-synchronous commit waited for a replica's acknowledgement.
    pub commit_wait_us: Option<f64>,
    /// 1 when every replica's tables equal the primary's after catching up, 0 when one differs.
    pub data_equal: Option<f64>,
    /// Replicas that had an error, stopped a thread, could not be read or did not catch up.
    pub faults: f64,
    /// Server CPU (user + system) µs of the busiest replica per transaction of the primary.
    #[serde(default)]
    pub cpu_us_per_txn: Option<f64>,
    /// KB the busiest-writing replica wrote to storage per transaction of the primary.
    #[serde(default)]
    pub write_kb_per_txn: Option<f64>,
}

/// Stored names, in field order after `replicas`.
const METRICS: [&str; 12] = [
    "replicas",
    "replica_lag_p50_ms",
    "replica_lag_p95_ms",
    "replica_lag_max_ms",
    "replica_seconds_behind_max",
    "replica_applied_per_s",
    "replica_catch_up_s",
    "semi_sync_commit_wait_us",
    "replica_data_equal",
    "replica_faults",
    "replica_cpu_us_per_txn",
    "replica_write_kb_per_txn",
];

impl ReplicationFigures {
    /// The figures of `samples` taken at or after `from_s` (the end of the warmup), with each
    /// replica's catch-up time (`None`: it did not catch up), and the data check when one was made.
    /// The replicas' costs are per transaction of the primary at `primary_tps` over the same seconds.
    pub fn of(
        samples: &[LagSample],
        from_s: f64,
        catch_up: &[Option<f64>],
        data_equal: Option<bool>,
        primary_tps: Option<f64>,
    ) -> Self {
        let measured: Vec<&LagSample> = samples.iter().filter(|s| s.at_s >= from_s).collect();
        let replicas = catch_up.len().max(measured.first().map_or(0, |s| s.replicas.len()));
        let mut f = ReplicationFigures {
            replicas: replicas as f64,
            data_equal: data_equal.map(|e| if e { 1.0 } else { 0.0 }),
            ..Default::default()
        };
        let worst = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let mut faults = 0usize;
        for i in 0..replicas {
            let of = |s: &&LagSample| s.replicas.get(i).cloned();
            let lags: Vec<f64> = measured.iter().filter_map(of).filter_map(|r| r.heartbeat_ms).collect();
            f.lag_p50_ms = worst(f.lag_p50_ms, stats::quantile(&lags, 0.5));
            f.lag_p95_ms = worst(f.lag_p95_ms, stats::quantile(&lags, 0.95));
            f.lag_max_ms = worst(f.lag_max_ms, stats::max(&lags));
            let behind: Vec<f64> =
                measured.iter().filter_map(of).filter_map(|r| r.seconds_behind).map(|s| s as f64).collect();
            f.seconds_behind_max = worst(f.seconds_behind_max, stats::max(&behind));
            let applied: Vec<f64> = measured.iter().filter_map(of).filter_map(|r| r.applied_per_s).collect();
            if let Some(m) = stats::mean(&applied) {
                f.applied_per_s = Some(f.applied_per_s.map_or(m, |a| a.min(m)));
            }
            let broken = samples.iter().filter_map(|s| s.replicas.get(i)).any(|r| {
                !r.last_error.is_empty()
                    || r.io_running != "Yes" && r.io_running != "Connecting"
                    || r.sql_running != "Yes"
            });
            let caught = catch_up.get(i).copied().flatten();
            if broken || caught.is_none() {
                faults += 1;
            }
            f.catch_up_s = worst(f.catch_up_s, caught);
            // A counter's rate between the first and last measured samples of this replica, per
            // transaction of the primary (a restarted replica's counters start again: no rate).
            let per_txn = |get: fn(&super::replica_lag::ReplicaLag) -> Option<u64>| -> Option<f64> {
                let points: Vec<(f64, u64)> =
                    measured.iter().filter_map(|s| Some((s.at_s, get(s.replicas.get(i)?)?))).collect();
                let ((t0, v0), (t1, v1)) = (points.first()?, points.last()?);
                let tps = primary_tps.filter(|t| *t > 0.0)?;
                (t1 > t0 && v1 >= v0).then(|| (v1 - v0) as f64 / (t1 - t0) / tps)
            };
            f.cpu_us_per_txn = worst(f.cpu_us_per_txn, per_txn(|r| r.cpu_us));
            f.write_kb_per_txn = worst(f.write_kb_per_txn, per_txn(|r| r.write_bytes).map(|b| b / 1024.0));
        }
        f.faults = faults as f64;
        let waits: Vec<(u64, f64)> = measured
            .iter()
            .filter_map(|s| s.commit_wait.as_ref())
            .filter_map(|w| w.mean_wait_us.map(|m| (w.waits, m)))
            .collect();
        let n: u64 = waits.iter().map(|(n, _)| n).sum();
        if n > 0 {
            f.commit_wait_us = Some(waits.iter().map(|(n, m)| *n as f64 * m).sum::<f64>() / n as f64);
        }
        f
    }

    /// The figures as `versus show` prints them, one fact a line.
    pub fn describe(&self) -> String {
        let opt = |v: Option<f64>, digits: usize| v.map_or_else(|| "—".to_string(), |v| format!("{v:.digits$}"));
        let data = match self.data_equal {
            Some(e) if e >= 1.0 => "their data equal the primary's",
            Some(_) => "a replica's data differ from the primary's",
            None => "data not compared",
        };
        let mut s = format!("replicas: {}, faults {}, {data}\n", self.replicas, self.faults);
        s.push_str(&format!(
            "  lag (heartbeat, worst replica): p50 {} ms, p95 {} ms, max {} ms; Seconds_Behind max {}\n",
            opt(self.lag_p50_ms, 1),
            opt(self.lag_p95_ms, 1),
            opt(self.lag_max_ms, 1),
            opt(self.seconds_behind_max, 0)
        ));
        s.push_str(&format!("  applied by the slowest replica: {} transactions/s\n", opt(self.applied_per_s, 1)));
        s.push_str(&format!("  catch-up after the load: {} s\n", opt(self.catch_up_s, 3)));
        s.push_str(&format!(
            "  busiest replica per transaction of the primary: {} µs CPU, {} KB written\n",
            opt(self.cpu_us_per_txn, 1),
            opt(self.write_kb_per_txn, 2)
        ));
        if let Some(w) = self.commit_wait_us {
            s.push_str(&format!("  semi-synchronous commit wait: {w:.1} µs\n"));
        }
        s
    }

    /// The figures as stored rows.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let values = [
            Some(self.replicas),
            self.lag_p50_ms,
            self.lag_p95_ms,
            self.lag_max_ms,
            self.seconds_behind_max,
            self.applied_per_s,
            self.catch_up_s,
            self.commit_wait_us,
            self.data_equal,
            Some(self.faults),
            self.cpu_us_per_txn,
            self.write_kb_per_txn,
        ];
        super::named_rows(&METRICS, values)
    }

    /// Rebuilds from stored rows (others are ignored); `None` for a run without replicas.
    pub fn from_metrics<'a>(rows: impl IntoIterator<Item = (&'a str, f64)>) -> Option<Self> {
        let v = super::named_values(&METRICS, rows);
        Some(ReplicationFigures {
            replicas: v[0]?,
            lag_p50_ms: v[1],
            lag_p95_ms: v[2],
            lag_max_ms: v[3],
            seconds_behind_max: v[4],
            applied_per_s: v[5],
            catch_up_s: v[6],
            commit_wait_us: v[7],
            data_equal: v[8],
            faults: v[9].unwrap_or(0.0),
            cpu_us_per_txn: v[10],
            write_kb_per_txn: v[11],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::replica_lag::{CommitWait, ReplicaLag};

    fn replica(name: &str, lag: f64, applied: Option<f64>, error: &str) -> ReplicaLag {
        ReplicaLag {
            replica: name.into(),
            heartbeat_ms: Some(lag),
            seconds_behind: Some((lag / 1000.0) as u64),
            applied_per_s: applied,
            io_running: "Yes".into(),
            sql_running: "Yes".into(),
            last_error: error.into(),
            cpu_us: None,
            write_bytes: None,
        }
    }

    fn samples() -> Vec<LagSample> {
        (0..10)
            .map(|i| LagSample {
                at_s: 1.0 + i as f64,
                replicas: vec![
                    ReplicaLag {
                        cpu_us: Some(100_000 * i as u64),
                        write_bytes: Some(2000 * 1024 * i as u64),
                        ..replica("a", 50.0 + i as f64, Some(1000.0), "")
                    },
                    ReplicaLag {
                        cpu_us: Some(50_000 * i as u64),
                        ..replica("b", 3000.0 + 10.0 * i as f64, Some(900.0 + i as f64), "")
                    },
                ],
                commit_wait: Some(CommitWait {
                    active: true,
                    acknowledged: 10,
                    waits: if i < 5 { 10 } else { 30 },
                    mean_wait_us: Some(if i < 5 { 100.0 } else { 500.0 }),
                    unacknowledged: 0,
                    fallbacks: 0,
                }),
            })
            .collect()
    }

    #[test]
    fn the_worst_replica_decides_and_the_warmup_is_left_out() {
        let f = ReplicationFigures::of(&samples(), 3.0, &[Some(0.01), Some(2.9)], Some(true), Some(1000.0));
        assert_eq!(f.replicas, 2.0);
        assert_eq!(f.lag_max_ms, Some(3090.0));
        let p50 = f.lag_p50_ms.unwrap();
        assert!((3050.0..=3060.0).contains(&p50), "the median of b's 3020..3090: {p50}");
        assert_eq!(f.seconds_behind_max, Some(3.0));
        assert_eq!(f.applied_per_s, Some(905.5), "b's mean over the measured seconds");
        assert_eq!(f.catch_up_s, Some(2.9));
        assert_eq!(f.data_equal, Some(1.0));
        assert_eq!(f.faults, 0.0);
        // a's 100 ms of CPU and 2000 KB a second, at 1000 transactions a second on the primary.
        assert_eq!((f.cpu_us_per_txn, f.write_kb_per_txn), (Some(100.0), Some(2.0)));
        // 3 seconds of 10 waits at 100 µs and 5 of 30 at 500 µs.
        assert_eq!(f.commit_wait_us, Some((3.0 * 10.0 * 100.0 + 5.0 * 30.0 * 500.0) / 180.0));
    }

    #[test]
    fn faults_are_counted_per_replica() {
        let mut s = samples();
        s[4].replicas[1].last_error = "Duplicate entry".into();
        s[5].replicas[0].sql_running = "No".into();
        let f = ReplicationFigures::of(&s, 0.0, &[Some(0.1), None], Some(false), None);
        assert_eq!(f.faults, 2.0);
        assert_eq!(f.catch_up_s, Some(0.1), "only the replica that caught up has a time");
        assert_eq!(f.data_equal, Some(0.0));
    }

    #[test]
    fn stored_rows_read_back() {
        let f = ReplicationFigures::of(&samples(), 0.0, &[Some(0.01), Some(2.9)], None, None);
        let rows = f.metrics();
        assert!(rows.iter().all(|(n, _)| *n != "replica_data_equal"), "no check, no row");
        let back = ReplicationFigures::from_metrics(rows.iter().map(|(n, v)| (*n, *v)).chain([("tps", 1.0)]));
        assert_eq!(back, Some(f));
        assert_eq!(ReplicationFigures::from_metrics([("tps", 1.0)]), None);
    }
}
