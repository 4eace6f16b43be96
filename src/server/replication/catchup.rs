//! Catch-up time: from a moment (the end of a load) until each replica has applied everything the
//! primary had committed then, by GTID position (`MASTER_GTID_WAIT` / `WAIT_FOR_EXECUTED_GTID_SET`).
//! The replicas are waited for side by side, so each time is its own.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use serde::Serialize;

use super::{Topology, query_text};
use crate::error::{Error, Result};
use crate::server::admin;

/// How one replica caught up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatchUp {
    /// The replica's sandbox name.
    pub replica: String,
    /// The primary's position it waited for.
    pub position: String,
    /// Seconds from the call until it had applied that position (or until the timeout).
    pub seconds: f64,
    /// False when the timeout came first.
    pub reached: bool,
}

/// Takes the primary's position now and waits, up to `timeout`, until every replica has applied it.
pub fn catch_up(topology: &Topology, timeout: Duration) -> Result<Vec<CatchUp>> {
    let dialect = topology.dialect();
    let started = Instant::now();
    let position = query_text(&mut topology.primary().connect_root()?, dialect.primary_position())?;
    let timeout_s = timeout.as_secs().clamp(1, u32::MAX as u64) as u32;
    let mut waits = Vec::new();
    for (i, r) in topology.replicas().iter().enumerate() {
        let mut conn = r.connect_root()?;
        let sql = topology.replica_dialect(i).wait_for(&position, timeout_s);
        let name = r.info().name.clone();
        let handle = std::thread::spawn(move || -> Result<(i64, f64)> {
            let v: Option<Option<i64>> = conn.query_first(&sql).map_err(|e| admin::sql_error(&sql, e))?;
            Ok((v.flatten().unwrap_or(-1), started.elapsed().as_secs_f64()))
        });
        waits.push((name, handle));
    }
    let mut out = Vec::new();
    for (replica, h) in waits {
        let (value, seconds) = h.join().map_err(|_| Error::server(&replica, "the catch-up wait panicked"))??;
        out.push(CatchUp { replica, position: position.clone(), seconds, reached: value == 0 });
    }
    Ok(out)
}
