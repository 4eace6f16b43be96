//! Blocks run by a fleet: attempts, with the host each ran on, and the one canonical attempt per block.
//!
//! A task runs block `k` (the runs of repetition `k + 1`) with [`Store::begin_block`]: when an attempt
//! already finished the block nothing happens (schedulers run tasks at least once); otherwise a new
//! attempt is recorded, earlier attempts left running by a task that died are marked abandoned, and
//! the block's runs are reset to planned under the new attempt, so a block is always measured by one
//! attempt on one host. [`Store::end_block`] marks the attempt done when every run of the block is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::backend::{Backend, DbResult, in_transaction, params};
use super::write::{clear_measurements, now};
use super::{Store, store_err};
use crate::error::Result;

/// What a block attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttemptStatus {
    /// Measuring (or its task died; the next attempt marks it abandoned).
    Running,
    /// Every run of the block finished: the canonical attempt.
    Done,
    /// Ended with runs failed or interrupted.
    Failed,
    /// Not measured: the host's canary was an outlier of its class.
    Rejected,
    /// Left running by a task that died; superseded by a later attempt.
    Abandoned,
}

impl AttemptStatus {
    /// The text stored.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptStatus::Running => "running",
            AttemptStatus::Done => "done",
            AttemptStatus::Failed => "failed",
            AttemptStatus::Rejected => "rejected",
            AttemptStatus::Abandoned => "abandoned",
        }
    }

    fn parse(s: &str) -> Option<AttemptStatus> {
        [Self::Running, Self::Done, Self::Failed, Self::Rejected, Self::Abandoned].into_iter().find(|a| a.as_str() == s)
    }
}

/// Where an attempt runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttemptHost {
    /// Host name.
    pub host: Option<String>,
    /// Host class (`hc-…`).
    pub class: Option<String>,
    /// The fingerprint, as JSON.
    pub fingerprint: serde_json::Value,
    /// The canary measured before the block, as JSON.
    pub canary: Option<serde_json::Value>,
}

/// A stored attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Row id.
    pub id: i64,
    /// Block index.
    pub block: u32,
    /// Attempt number, from 1.
    pub attempt: u32,
    /// Its status.
    pub status: AttemptStatus,
    /// Host name.
    pub host: Option<String>,
    /// Host class.
    pub host_class: Option<String>,
    /// Canary, as JSON.
    pub canary: Option<serde_json::Value>,
    /// Why it failed or was rejected.
    pub error: Option<String>,
    /// When it started.
    pub started_at: i64,
}

/// What [`Store::begin_block`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStart {
    /// Attempt `attempt` already finished the block: nothing to do.
    AlreadyDone {
        /// The canonical attempt's number.
        attempt: u32,
    },
    /// A new attempt was recorded; run the block's pending runs.
    Started {
        /// Its row id (for [`Store::end_block`]).
        attempt_id: i64,
        /// Its number.
        attempt: u32,
    },
}

/// The canonical attempt of each block: the lowest-numbered `done` one (there is at most one per
/// store, but merged stores may bring several). Blocks without a done attempt are missing.
pub fn canonical_attempts(attempts: &[Attempt]) -> BTreeMap<u32, &Attempt> {
    let mut out: BTreeMap<u32, &Attempt> = BTreeMap::new();
    for a in attempts.iter().filter(|a| a.status == AttemptStatus::Done) {
        match out.get(&a.block) {
            Some(b) if (b.attempt, b.started_at, b.id) <= (a.attempt, a.started_at, a.id) => {}
            _ => {
                out.insert(a.block, a);
            }
        }
    }
    out
}

fn json(v: &serde_json::Value) -> String {
    v.to_string()
}

/// The number the next attempt at `block` gets (attempts count from 1 per block).
fn next_attempt(db: &mut dyn Backend, experiment_id: i64, block: u32) -> DbResult<i64> {
    db.query(
        "SELECT coalesce(max(attempt), 0) + 1 FROM block_attempts WHERE experiment_id = ?1 AND block = ?2",
        params![experiment_id, block],
    )?
    .remove(0)
    .get(0)
}

/// Marks the attempts at `block` still `running` abandoned: a new attempt (measured or rejected)
/// starts only once the task that ran them is gone.
fn abandon_running(db: &mut dyn Backend, experiment_id: i64, block: u32) -> DbResult<u64> {
    db.execute(
        "UPDATE block_attempts SET status = 'abandoned', finished_at = ?3, \
         error = 'its task ended without finishing the block' \
         WHERE experiment_id = ?1 AND block = ?2 AND status = 'running'",
        params![experiment_id, block, now()],
    )
}

/// Records the next attempt at `block` on `host` after marking the attempts left running abandoned:
/// running, or rejected (finished at once) with `rejected`'s reason. Returns its id and number.
fn record_attempt(
    db: &mut dyn Backend,
    experiment_id: i64,
    block: u32,
    host: &AttemptHost,
    rejected: Option<&str>,
) -> DbResult<(i64, i64)> {
    abandon_running(db, experiment_id, block)?;
    let next = next_attempt(db, experiment_id, block)?;
    let at = now();
    let id = db
        .query(
            "INSERT INTO block_attempts (experiment_id, block, attempt, status, host, host_class, fingerprint, \
             canary, error, started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
             RETURNING id",
            params![
                experiment_id,
                block,
                next,
                if rejected.is_some() { "rejected" } else { "running" },
                host.host.as_deref(),
                host.class.as_deref(),
                json(&host.fingerprint),
                host.canary.as_ref().map(json),
                rejected,
                at,
                rejected.map(|_| at)
            ],
        )?
        .remove(0)
        .get(0)?;
    Ok((id, next))
}

fn begin(db: &mut dyn Backend, experiment_id: i64, block: u32, host: &AttemptHost) -> DbResult<BlockStart> {
    let done = db.query(
        "SELECT attempt FROM block_attempts WHERE experiment_id = ?1 AND block = ?2 AND status = 'done' \
         ORDER BY attempt LIMIT 1",
        params![experiment_id, block],
    )?;
    if let Some(row) = done.first() {
        return Ok(BlockStart::AlreadyDone { attempt: row.get(0)? });
    }
    let (attempt_id, next) = record_attempt(db, experiment_id, block, host, None)?;
    // The block's runs start again under this attempt: one block, one host.
    let runs = db.query(
        "SELECT id FROM runs WHERE experiment_id = ?1 AND repetition = ?2",
        params![experiment_id, i64::from(block) + 1],
    )?;
    for row in runs {
        let id: i64 = row.get(0)?;
        clear_measurements(db, id)?;
        db.execute(
            "UPDATE runs SET status = 'planned', error = NULL, started_at = NULL, finished_at = NULL, \
             server_version = NULL, command = NULL, variable_set_id = NULL, events = NULL, queries = NULL, \
             reads = NULL, writes = NULL, other = NULL, errors = NULL, reconnects = NULL, tps = NULL, qps = NULL, \
             latency_min_us = NULL, latency_avg_us = NULL, latency_max_us = NULL, latency_p95_us = NULL, \
             latency_p99_us = NULL, latency_sum_us = NULL, duration_s = NULL, fairness_events_avg = NULL, \
             fairness_events_stddev = NULL, fairness_time_avg_s = NULL, fairness_time_stddev_s = NULL, \
             attempt_id = ?2 WHERE id = ?1",
            params![id, attempt_id],
        )?;
    }
    Ok(BlockStart::Started { attempt_id, attempt: u32::try_from(next).unwrap_or(u32::MAX) })
}

impl Store {
    /// Starts block `block` of experiment `experiment_id` on `host`; see the module documentation.
    pub fn begin_block(&mut self, experiment_id: i64, block: u32, host: &AttemptHost) -> Result<BlockStart> {
        let shown = self.shown.clone();
        in_transaction(self.db.get_mut().as_mut(), |db| begin(db, experiment_id, block, host))
            .map_err(|e| store_err(&shown, format_args!("cannot start block {block}"), e))
    }

    /// Records a block attempt that was not measured because its host's canary was an outlier; attempts
    /// at the block left running by a task that died are marked abandoned, as [`Store::begin_block`] does.
    pub fn reject_block(&mut self, experiment_id: i64, block: u32, host: &AttemptHost, why: &str) -> Result<u32> {
        let shown = self.shown.clone();
        in_transaction(self.db.get_mut().as_mut(), |db| -> DbResult<u32> {
            let (_, next) = record_attempt(db, experiment_id, block, host, Some(why))?;
            Ok(u32::try_from(next).unwrap_or(u32::MAX))
        })
        .map_err(|e| store_err(&shown, format_args!("cannot record block {block}"), e))
    }

    /// Ends attempt `attempt_id`: done when every run of its block is done, failed otherwise (with
    /// `error`, or a count of the unfinished runs). Returns whether it is done.
    pub fn end_block(&mut self, attempt_id: i64, error: Option<&str>) -> Result<bool> {
        let shown = self.shown.clone();
        in_transaction(self.db.get_mut().as_mut(), |db| -> DbResult<bool> {
            let left: i64 = db
                .query("SELECT count(*) FROM runs WHERE attempt_id = ?1 AND status <> 'done'", params![attempt_id])?
                .remove(0)
                .get(0)?;
            let (status, error) = match (left, error) {
                (0, None) => ("done", None),
                (n, e) => (
                    "failed",
                    Some(e.map_or_else(|| format!("{n} run(s) of the block did not finish"), str::to_string)),
                ),
            };
            db.execute(
                "UPDATE block_attempts SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
                params![attempt_id, status, error, now()],
            )?;
            Ok(status == "done")
        })
        .map_err(|e| store_err(&shown, "cannot end a block attempt", e))
    }

    /// The stored experiment whose uid is `uid` (a fleet's plan id), if any.
    pub fn experiment_by_uid(&self, uid: &str) -> Result<Option<i64>> {
        let rows = self
            .db
            .borrow_mut()
            .query("SELECT id FROM experiments WHERE uid = ?1", params![uid])
            .map_err(|e| self.err(e))?;
        rows.first().map(|r| r.get(0)).transpose().map_err(|e| self.err(e))
    }

    /// Every attempt of an experiment, by block and attempt number.
    pub fn block_attempts(&self, experiment_id: i64) -> Result<Vec<Attempt>> {
        let rows = self
            .db
            .borrow_mut()
            .query(
                "SELECT id, block, attempt, status, host, host_class, canary, error, started_at FROM block_attempts \
                 WHERE experiment_id = ?1 ORDER BY block, attempt",
                params![experiment_id],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                let status: String = r.get(3)?;
                let canary: Option<String> = r.get(6)?;
                Ok(Attempt {
                    id: r.get(0)?,
                    block: r.get(1)?,
                    attempt: r.get(2)?,
                    status: AttemptStatus::parse(&status)
                        .ok_or_else(|| super::backend::DbError(format!("unknown attempt status '{status}'")))?,
                    host: r.get(4)?,
                    host_class: r.get(5)?,
                    canary: canary.and_then(|c| serde_json::from_str(&c).ok()),
                    error: r.get(7)?,
                    started_at: r.get(8)?,
                })
            })
            .collect::<DbResult<_>>()
            .map_err(|e| self.err(e))
    }

    /// The canaries of earlier measured attempts on hosts of `class`, oldest first (for the outlier test).
    pub fn class_canaries(&self, class: &str) -> Result<Vec<serde_json::Value>> {
        let rows = self
            .db
            .borrow_mut()
            .query(
                "SELECT canary FROM block_attempts WHERE host_class = ?1 AND canary IS NOT NULL \
                 AND status IN ('done', 'failed', 'running', 'abandoned') ORDER BY started_at, id",
                params![class],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().filter_map(|r| r.get::<String>(0).ok()).filter_map(|c| serde_json::from_str(&c).ok()).collect())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn attempt(id: i64, block: u32, attempt: u32, status: AttemptStatus) -> Attempt {
        Attempt { id, block, attempt, status, host: None, host_class: None, canary: None, error: None, started_at: id }
    }

    fn status() -> impl Strategy<Value = AttemptStatus> {
        prop_oneof![
            Just(AttemptStatus::Running),
            Just(AttemptStatus::Done),
            Just(AttemptStatus::Failed),
            Just(AttemptStatus::Rejected),
            Just(AttemptStatus::Abandoned),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Merged attempt lists (duplicates, blocks missing, partial attempts, any order) give exactly one
        /// canonical attempt for each block that some attempt finished, and none for the others.
        #[test]
        fn one_canonical_attempt_per_finished_block(
            list in prop::collection::vec((0u32..6, 1u32..5, status()), 0..40),
            duplicate in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
            seed in any::<u64>(),
        ) {
            let mut all: Vec<Attempt> =
                list.iter().enumerate().map(|(i, (b, a, s))| attempt(i as i64, *b, *a, *s)).collect();
            if !all.is_empty() {
                for d in &duplicate {
                    let copy = all[d.index(all.len())].clone();
                    all.push(copy);
                }
            }
            // Any order gives the same answer.
            let mut shuffled = all.clone();
            let n = shuffled.len();
            for i in 0..n {
                let j = (seed.wrapping_mul(i as u64 + 1) % n as u64) as usize;
                shuffled.swap(i, j);
            }
            let canon = canonical_attempts(&all);
            let again = canonical_attempts(&shuffled);
            prop_assert_eq!(canon.len(), again.len());
            for (block, a) in &canon {
                prop_assert_eq!(a.status, AttemptStatus::Done);
                prop_assert_eq!(a.block, *block);
                prop_assert_eq!((a.attempt, a.id), (again[block].attempt, again[block].id));
                let lowest = all.iter().filter(|x| x.block == *block && x.status == AttemptStatus::Done).map(|x| x.attempt).min();
                prop_assert_eq!(Some(a.attempt), lowest);
            }
            for b in 0..6 {
                let finished = all.iter().any(|x| x.block == b && x.status == AttemptStatus::Done);
                prop_assert_eq!(canon.contains_key(&b), finished);
            }
        }
    }
}
