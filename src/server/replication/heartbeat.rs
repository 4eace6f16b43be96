//! Exact replica lag, as pt-heartbeat measures it: a row in a versus-owned table on the primary is
//! updated at a fixed interval (100 ms by default) with versus's own clock in microseconds, and read on
//! each replica. Lag is the reader's clock minus the newest timestamp the replica has applied. Every
//! server of a topology runs on this host, so both ends read one clock and there is no skew to
//! correct. A reading over-states the lag by up to one interval (the row is that old when the next
//! update is due); [`probe_lag`] has no such error: it writes one row and times its arrival.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mysql::prelude::Queryable;

use super::Topology;
use crate::error::{Error, Result};
use crate::server::admin;

/// The database versus keeps its heartbeat table in, on the primary (it replicates to the replicas).
pub const HEARTBEAT_DATABASE: &str = "versus";

/// The heartbeat table: one row per writer, keyed by the writer's `server_id` (written as a literal,
/// never `@@server_id`, which would read as the replica's when applied there).
const TABLE: &str = "`versus`.`heartbeat`";

/// Microseconds since the Unix epoch by versus's clock.
fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// Creates the heartbeat table on the primary with the row of writer `writer_id`.
pub(super) fn create_table(conn: &mut mysql::Conn, writer_id: u32) -> Result<()> {
    admin::exec(conn, &format!("CREATE DATABASE IF NOT EXISTS `{HEARTBEAT_DATABASE}`"))?;
    admin::exec(
        conn,
        &format!(
            "CREATE TABLE IF NOT EXISTS {TABLE} (writer_id INT UNSIGNED NOT NULL PRIMARY KEY, \
             seq BIGINT UNSIGNED NOT NULL, ts_us BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB"
        ),
    )?;
    admin::exec(conn, &format!("REPLACE INTO {TABLE} VALUES ({writer_id}, 0, {})", now_us()))
}

/// One beat: the writer's row gets the next sequence number and the time now, in one statement (the
/// new number comes back in its OK packet through `LAST_INSERT_ID(expr)`). Returns the sequence
/// number and the time written.
fn beat(conn: &mut mysql::Conn, writer_id: u32) -> Result<(u64, u64)> {
    let ts = now_us();
    let sql = format!("UPDATE {TABLE} SET seq = LAST_INSERT_ID(seq + 1), ts_us = {ts} WHERE writer_id = {writer_id}");
    admin::exec(conn, &sql)?;
    Ok((conn.last_insert_id(), ts))
}

/// The newest heartbeat (sequence number, time written) the server behind `conn` has applied.
fn latest(conn: &mut mysql::Conn, writer_id: u32) -> Result<Option<(u64, u64)>> {
    let q = format!("SELECT seq, ts_us FROM {TABLE} WHERE writer_id = {writer_id}");
    conn.query_first(&q).map_err(|e| admin::sql_error(&q, e))
}

/// The lag of the replica behind `conn` now: versus's clock minus the newest heartbeat it has applied
/// (`None` when it has none yet). Meaningful while a [`Heartbeat`] writes.
pub fn heartbeat_lag(conn: &mut mysql::Conn, writer_id: u32) -> Result<Option<Duration>> {
    Ok(latest(conn, writer_id)?.map(|(_, ts)| Duration::from_micros(now_us().saturating_sub(ts))))
}

/// Writes one heartbeat on the primary and times its arrival on each replica (polled every 2 ms), up
/// to `timeout`; `None` for a replica it did not reach in time.
pub fn probe_lag(topology: &Topology, timeout: Duration) -> Result<Vec<Option<Duration>>> {
    let writer = topology.primary_server_id();
    let mut conns = topology.replicas().iter().map(|r| r.connect_root()).collect::<Result<Vec<_>>>()?;
    let (seq, _) = beat(&mut topology.primary().connect_root()?, writer)?;
    let written = Instant::now();
    let mut lags = vec![None; conns.len()];
    while lags.iter().any(Option::is_none) && written.elapsed() < timeout {
        for (lag, c) in lags.iter_mut().zip(conns.iter_mut()) {
            if lag.is_none() && latest(c, writer)?.is_some_and(|(s, _)| s >= seq) {
                *lag = Some(written.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(lags)
}

/// The heartbeat writer: a thread that updates the primary's heartbeat row at a fixed interval until
/// stopped (or dropped).
#[derive(Debug)]
pub struct Heartbeat {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<u64>>>,
    interval: Duration,
}

impl Heartbeat {
    /// The interval pt-heartbeat's reader resolves to a tenth of a second with.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

    /// Starts writing heartbeats on `topology`'s primary every `interval`.
    pub fn start(topology: &Topology, interval: Duration) -> Result<Heartbeat> {
        let mut conn = topology.primary().connect_root()?;
        let writer = topology.primary_server_id();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("versus-heartbeat".into())
            .spawn(move || {
                let start = Instant::now();
                let mut ticks = 0u64;
                while !flag.load(Ordering::Relaxed) {
                    beat(&mut conn, writer)?;
                    ticks += 1;
                    // A fixed schedule: a slow beat does not shift the ones after it.
                    let next = start + interval * ticks as u32;
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
                Ok(ticks)
            })
            .map_err(|e| Error::Other(format!("cannot start the heartbeat thread: {e}")))?;
        Ok(Heartbeat { stop, handle: Some(handle), interval })
    }

    /// Its interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// True while the writer runs (false once it stopped on an error).
    pub fn is_running(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Stops the writer and returns how many heartbeats it wrote, or the error that stopped it.
    pub fn stop(mut self) -> Result<u64> {
        self.finish()
    }

    fn finish(&mut self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.take() {
            Some(h) => h.join().map_err(|_| Error::Other("the heartbeat thread panicked".into()))?,
            None => Ok(0),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
