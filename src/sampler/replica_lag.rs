//! Replica lag, sampled once a second during a run against a topology's primary: for each replica the
//! heartbeat lag in milliseconds (exact to the heartbeat interval; see
//! [`Heartbeat`](crate::server::replication::Heartbeat)) beside the server's own `Seconds_Behind_*`,
//! its threads and its last error; for a semi-synchronous primary, its commit wait. The sampler owns the heartbeat writer while it lives, so one value
//! is all a run needs: create it before the load, call [`ReplicaLagSampler::sample`] each second (or
//! let [`ReplicaLagSampler::record`] do it on a thread), drop it after.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::sampler::ProcessSample;
use crate::server::admin;
use crate::server::flavor::replication::Dialect;
use crate::server::replication::{Heartbeat, Topology, heartbeat_lag, query_text, replica_state};

/// One replica at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicaLag {
    /// The replica's sandbox name.
    pub replica: String,
    /// Heartbeat lag in milliseconds (`None` before the first heartbeat arrived).
    pub heartbeat_ms: Option<f64>,
    /// The server's `Seconds_Behind_Master`/`_Source` (`None` when it says NULL).
    pub seconds_behind: Option<u64>,
    /// Transactions applied per second since the previous sample, from its GTID position (the
    /// heartbeat's 10 a second included; `None` for the first sample).
    pub applied_per_s: Option<f64>,
    /// Receiver state (`Yes`, `No`, `Connecting`).
    pub io_running: String,
    /// Applier state.
    pub sql_running: String,
    /// The last error, empty when none.
    pub last_error: String,
    /// The replica server's CPU time so far (user + system, µs), from `/proc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<u64>,
    /// Bytes the replica server has written to storage so far (`/proc/PID/io`, when readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
}

/// A semi-synchronous primary's commit wait since the previous sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitWait {
    /// Whether commits wait for a replica now (`false`: the primary fell back to asynchronous).
    pub active: bool,
    /// Commits a replica acknowledged since the previous sample.
    pub acknowledged: u64,
    /// Commits that waited for an acknowledgement since the previous sample (one whose acknowledgement
    /// was there first did not wait).
    pub waits: u64,
    /// Their mean wait in microseconds (`None` when none waited).
    pub mean_wait_us: Option<f64>,
    /// Commits that went unacknowledged since the previous sample.
    pub unacknowledged: u64,
    /// Times the primary fell back to asynchronous since the previous sample.
    pub fallbacks: u64,
}

/// One sample: every replica at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LagSample {
    /// Seconds since the sampler started.
    pub at_s: f64,
    /// The replicas, in topology order.
    pub replicas: Vec<ReplicaLag>,
    /// The primary's commit wait, for a semi-synchronous topology.
    pub commit_wait: Option<CommitWait>,
}

/// The semi-synchronous counters of a primary: (status ON, tx_wait_time, tx_waits, no_tx, no_times,
/// yes_tx).
type SemiSyncCounters = (bool, u64, u64, u64, u64, u64);

fn semi_sync_counters(conn: &mut mysql::Conn, prefix: &str) -> Result<SemiSyncCounters> {
    let sql = format!("SHOW GLOBAL STATUS LIKE '{prefix}%'");
    let rows: Vec<(String, String)> = conn.query(&sql).map_err(|e| admin::sql_error(&sql, e))?;
    let get =
        |name: &str| rows.iter().find(|(k, _)| k.eq_ignore_ascii_case(&format!("{prefix}{name}"))).map(|(_, v)| v);
    let n = |name: &str| get(name).and_then(|v| v.parse().ok()).unwrap_or(0);
    let on = get("status").is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1");
    Ok((on, n("tx_wait_time"), n("tx_waits"), n("no_tx"), n("no_times"), n("yes_tx")))
}

/// One replica now (its name left empty); `last` is its applied count at the previous sample.
fn read_replica(
    conn: &mut mysql::Conn,
    dialect: &Dialect,
    writer: u32,
    last: &mut Option<(u64, Instant)>,
) -> Result<ReplicaLag> {
    let lag = heartbeat_lag(conn, writer)?;
    let state = replica_state(conn, dialect)?;
    let position = query_text(conn, dialect.replica_position())?;
    let now = (dialect.transactions_in(&position), Instant::now());
    let applied_per_s =
        last.map(|(n, t)| now.0.saturating_sub(n) as f64 / now.1.duration_since(t).as_secs_f64().max(1e-6));
    *last = Some(now);
    Ok(ReplicaLag {
        replica: String::new(),
        heartbeat_ms: lag.map(|d| d.as_secs_f64() * 1000.0),
        seconds_behind: state.seconds_behind,
        applied_per_s,
        io_running: state.io_running,
        sql_running: state.sql_running,
        last_error: state.last_error,
        cpu_us: None,
        write_bytes: None,
    })
}

/// Samples a topology's replicas; writes the heartbeat on its primary while it lives.
pub struct ReplicaLagSampler {
    heartbeat: Heartbeat,
    replicas: Vec<Watched>,
    writer: u32,
    started: Instant,
    /// The primary's connection, the prefix of its semi-synchronous counters and their last values, for
    /// a semi-synchronous topology.
    semi_sync: Option<(mysql::Conn, &'static str, SemiSyncCounters)>,
}

/// One replica as the sampler reads it.
struct Watched {
    name: String,
    conn: mysql::Conn,
    /// Its server process.
    pid: u32,
    /// Its version's statements.
    dialect: Dialect,
    /// Its applied transactions at the previous sample, and when.
    applied: Option<(u64, Instant)>,
}

impl ReplicaLagSampler {
    /// Starts the heartbeat on `topology`'s primary (every `interval`; 100 ms is
    /// [`Heartbeat::DEFAULT_INTERVAL`]) and connects to each replica.
    pub fn start(topology: &Topology, interval: Duration) -> Result<ReplicaLagSampler> {
        let replicas = topology
            .replicas()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                Ok(Watched {
                    name: r.info().name.clone(),
                    conn: r.connect_root()?,
                    pid: r.pid(),
                    dialect: topology.replica_dialect(i),
                    applied: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let semi_sync = if topology.record().semi_sync {
            let prefix = topology.dialect().semi_sync_status_prefix();
            let mut c = topology.primary().connect_root()?;
            let first = semi_sync_counters(&mut c, prefix)?;
            Some((c, prefix, first))
        } else {
            None
        };
        Ok(ReplicaLagSampler {
            semi_sync,
            heartbeat: Heartbeat::start(topology, interval)?,
            replicas,
            writer: topology.primary_server_id(),
            started: Instant::now(),
        })
    }

    /// Every replica now.
    pub fn sample(&mut self) -> Result<LagSample> {
        if !self.heartbeat.is_running() {
            return Err(Error::Other("the heartbeat writer on the primary stopped".into()));
        }
        let at_s = self.started.elapsed().as_secs_f64();
        let mut replicas = Vec::new();
        for w in &mut self.replicas {
            // A replica that cannot be read (killed, restarting) is a sample with its error; the others
            // are still sampled.
            let lag = read_replica(&mut w.conn, &w.dialect, self.writer, &mut w.applied).unwrap_or_else(|e| {
                w.applied = None;
                ReplicaLag {
                    replica: String::new(),
                    heartbeat_ms: None,
                    seconds_behind: None,
                    applied_per_s: None,
                    io_running: "-".into(),
                    sql_running: "-".into(),
                    last_error: format!("cannot be read: {e}"),
                    cpu_us: None,
                    write_bytes: None,
                }
            });
            let process = ProcessSample::read(w.pid).ok();
            replicas.push(ReplicaLag {
                replica: w.name.clone(),
                cpu_us: process.as_ref().map(|p| p.user_us + p.system_us),
                write_bytes: process.and_then(|p| p.io).map(|io| io.write_bytes),
                ..lag
            });
        }
        let commit_wait = match &mut self.semi_sync {
            Some((conn, prefix, last)) => {
                let now = semi_sync_counters(conn, prefix)?;
                let waits = now.2.saturating_sub(last.2);
                let wait = CommitWait {
                    active: now.0,
                    acknowledged: now.5.saturating_sub(last.5),
                    waits,
                    mean_wait_us: (waits > 0).then(|| now.1.saturating_sub(last.1) as f64 / waits as f64),
                    unacknowledged: now.3.saturating_sub(last.3),
                    fallbacks: now.4.saturating_sub(last.4),
                };
                *last = now;
                Some(wait)
            }
            None => None,
        };
        Ok(LagSample { at_s, replicas, commit_wait })
    }

    /// Samples every `period` on a thread of its own until [`LagRecording::finish`]. A sample that
    /// fails (the primary's heartbeat stopped) ends the sampling; the samples before it are kept.
    pub fn record(self, period: Duration) -> LagRecording {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut sampler = self;
            let mut samples = Vec::new();
            let start = Instant::now();
            let mut n = 1u32;
            let mut error = None;
            loop {
                let next = start + period * n;
                while Instant::now() < next && !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10).min(next.saturating_duration_since(Instant::now())));
                }
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                match sampler.sample() {
                    Ok(s) => samples.push(s),
                    Err(e) => {
                        error = Some(e.to_string());
                        break;
                    }
                }
                n += 1;
            }
            if let Err(e) = sampler.heartbeat.stop() {
                error.get_or_insert(e.to_string());
            }
            Recorded { samples, error }
        });
        LagRecording { stop, handle }
    }
}

/// What a [`LagRecording`] took: its samples, and why it ended early if it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The samples, once a period.
    pub samples: Vec<LagSample>,
    /// Why sampling (or the heartbeat) stopped before it was asked to, if it did.
    pub error: Option<String>,
}

/// Samples taken on a thread (see [`ReplicaLagSampler::record`]).
pub struct LagRecording {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Recorded>,
}

impl LagRecording {
    /// Stops sampling (and the heartbeat) and returns the samples taken; an error when sampling ended
    /// early.
    pub fn finish(self) -> Result<Vec<LagSample>> {
        let r = self.finish_kept();
        match r.error {
            Some(e) => Err(Error::Other(e)),
            None => Ok(r.samples),
        }
    }

    /// Stops sampling (and the heartbeat) and returns what was taken, even when it ended early.
    pub fn finish_kept(self) -> Recorded {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .join()
            .unwrap_or_else(|_| Recorded { samples: Vec::new(), error: Some("the lag sampler panicked".into()) })
    }
}
