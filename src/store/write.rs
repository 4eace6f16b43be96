//! The store's writes. Every write that touches more than one row runs in one transaction, so a crash
//! or a lost connection leaves either all of it or none of it.

use std::time::{SystemTime, UNIX_EPOCH};

use super::backend::{Backend, DbError, DbResult, in_transaction, params};
use super::model::{Interval, NewExperiment, RunResult, StartRun, Status};
use super::secrets::{content_hash, scrub_json, scrub_toml};
use super::{Store, store_err};
use crate::error::{Error, Result};

/// Seconds since the Unix epoch.
pub(super) fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// A fresh experiment uid: 128 random bits as hex.
pub(super) fn new_uid() -> String {
    use rand::RngExt;
    let mut rng = rand::rng();
    format!("{:016x}{:016x}", rng.random::<u64>(), rng.random::<u64>())
}

/// The status of run `id`, or `None` when there is no such run.
fn run_status(db: &mut dyn Backend, id: i64) -> DbResult<Option<Status>> {
    let rows = db.query("SELECT status FROM runs WHERE id = ?1", params![id])?;
    rows.first().map(|r| r.get::<String>(0)?.parse().map_err(super::backend::DbError)).transpose()
}

/// Removes everything measured for a run (before a restart, or before storing partial intervals).
pub(super) fn clear_measurements(db: &mut dyn Backend, id: i64) -> DbResult<()> {
    for table in
        ["intervals", "histograms", "status_deltas", "status_ends", "efficiency", "profiles", "replica_seconds"]
    {
        db.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), params![id])?;
    }
    Ok(())
}

fn insert_intervals(db: &mut dyn Backend, id: i64, intervals: &[Interval]) -> DbResult<()> {
    for i in intervals {
        db.execute(
            "INSERT INTO intervals (run_id, t_s, threads, tps, qps, reads_ps, writes_ps, other_ps, latency_p95_us, \
             latency_p99_us, latency_max_us, errors_ps, reconnects_ps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
             ?10, ?11, ?12, ?13)",
            params![
                id,
                i.t_s,
                i.threads,
                i.tps,
                i.qps,
                i.reads_ps,
                i.writes_ps,
                i.other_ps,
                i.latency_p95_us,
                i.latency_p99_us,
                i.latency_max_us,
                i.errors_ps,
                i.reconnects_ps
            ],
        )?;
    }
    Ok(())
}

/// The id of the variable set with exactly this JSON text, inserting it when new.
pub(super) fn variable_set_json(db: &mut dyn Backend, json: &str) -> DbResult<i64> {
    let hash = content_hash(json);
    let existing = db.query("SELECT id FROM variable_sets WHERE hash = ?1 AND variables = ?2", params![&hash, json])?;
    match existing.first() {
        Some(row) => row.get(0),
        None => db
            .query("INSERT INTO variable_sets (hash, variables) VALUES (?1, ?2) RETURNING id", params![hash, json])?
            .remove(0)
            .get(0),
    }
}

/// The id of the variable set with exactly these variables (sorted first), inserting it when new.
fn variable_set(db: &mut dyn Backend, variables: &[(String, String)]) -> DbResult<i64> {
    let mut sorted: Vec<&(String, String)> = variables.iter().collect();
    sorted.sort();
    let json = serde_json::to_string(&sorted).map_err(|e| super::backend::DbError(e.to_string()))?;
    variable_set_json(db, &json)
}

/// Refuses to restart or end early a run that does not exist or is already done.
fn check_not_done(db: &mut dyn Backend, run_id: i64, fail: &dyn Fn(String) -> Error) -> Result<()> {
    match run_status(db, run_id).map_err(|e| fail(format!("cannot read run {run_id}: {e}")))? {
        None => Err(fail(format!("no run with id {run_id}"))),
        Some(Status::Done) => Err(fail(format!("run {run_id} is already done"))),
        Some(_) => Ok(()),
    }
}

/// A begin or commit that fails, or an error of the transaction's own.
enum TxError {
    Db(DbError),
    Store(Error),
}

impl From<DbError> for TxError {
    fn from(e: DbError) -> Self {
        TxError::Db(e)
    }
}

/// [`in_transaction`] for writes whose steps fail with store errors: a failed begin or commit (the
/// server gone) becomes `db_fail`'s error, which names the store.
fn in_store_transaction<T>(
    db: &mut dyn Backend,
    db_fail: impl FnOnce(DbError) -> Error,
    f: impl FnOnce(&mut dyn Backend) -> Result<T>,
) -> Result<T> {
    in_transaction(db, |db| f(db).map_err(TxError::Store)).map_err(|e| match e {
        TxError::Db(e) => db_fail(e),
        TxError::Store(e) => e,
    })
}

impl Store {
    /// Records an experiment, its cells and all its planned runs in one transaction; returns its id.
    /// The definition and workload options are stored with secrets redacted, and the definition hash
    /// is taken of the redacted text. Fails, storing nothing, when two cells share a key, two runs share
    /// a (cell, repetition), or a run names a cell index that does not exist.
    pub fn create_experiment(&mut self, e: &NewExperiment) -> Result<i64> {
        let uid = new_uid();
        let id = self.insert_experiment(e, &uid)?;
        let id = id.ok_or_else(|| self.err(format!("experiment uid {uid} exists already")))?;
        self.uids.borrow_mut().insert(id, uid);
        Ok(id)
    }

    /// The experiment with `uid` (a fleet's plan id): created as [`Store::create_experiment`] does when
    /// it is not stored yet, found otherwise. Many workers may call this at once; one creates it.
    pub fn ensure_experiment(&mut self, e: &NewExperiment, uid: &str) -> Result<i64> {
        let id = match self.insert_experiment(e, uid)? {
            Some(id) => id,
            None => {
                let rows = self
                    .db
                    .borrow_mut()
                    .query("SELECT id FROM experiments WHERE uid = ?1", params![uid])
                    .map_err(|err| self.err(err))?;
                rows.first()
                    .map(|r| r.get(0))
                    .transpose()
                    .map_err(|err| self.err(err))?
                    .ok_or_else(|| self.err(format!("experiment uid {uid} is neither new nor stored")))?
            }
        };
        self.uids.borrow_mut().insert(id, uid.to_string());
        Ok(id)
    }

    /// Inserts `e` with `uid`, its cells and runs; `None` when an experiment with `uid` exists.
    fn insert_experiment(&mut self, e: &NewExperiment, uid: &str) -> Result<Option<i64>> {
        for (n, run) in e.runs.iter().enumerate() {
            if run.cell >= e.cells.len() {
                return Err(Error::Other(format!(
                    "experiment '{}': run {n} refers to cell {} but there are {} cells",
                    e.name,
                    run.cell,
                    e.cells.len()
                )));
            }
        }
        let definition = scrub_toml(&e.definition);
        let host = serde_json::to_string(&e.host).map_err(|err| self.err(err))?;
        let shown = self.shown.clone();
        let context = |err| store_err(&shown, format_args!("cannot record experiment '{}'", e.name), err);
        in_transaction(self.db.get_mut().as_mut(), |db| -> DbResult<Option<i64>> {
            let inserted = db.query(
                "INSERT INTO experiments (name, file, definition, definition_hash, created_at, status, seed, \
                 host, versus_version, uid) VALUES (?1, ?2, ?3, ?4, ?5, 'planned', ?6, ?7, ?8, ?9) \
                 ON CONFLICT (uid) DO NOTHING RETURNING id",
                params![
                    &e.name,
                    e.file.as_deref(),
                    definition.as_str(),
                    content_hash(&definition),
                    now(),
                    e.seed as i64,
                    host.as_str(),
                    env!("CARGO_PKG_VERSION"),
                    uid
                ],
            )?;
            let Some(row) = inserted.first() else { return Ok(None) };
            let experiment_id: i64 = row.get(0)?;
            let mut cell_ids = Vec::with_capacity(e.cells.len());
            for c in &e.cells {
                let options = scrub_json(&c.workload_options).to_string();
                let id: i64 = db
                    .query(
                        "INSERT INTO cells (experiment_id, key, target, build, config, workload, threads, \
                         workload_options) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
                        params![
                            experiment_id,
                            &c.key,
                            &c.target,
                            c.build.as_deref(),
                            c.config.as_deref(),
                            &c.workload,
                            c.threads,
                            options
                        ],
                    )?
                    .remove(0)
                    .get(0)?;
                cell_ids.push(id);
            }
            for (order, run) in e.runs.iter().enumerate() {
                db.execute(
                    "INSERT INTO runs (experiment_id, cell_id, repetition, order_index) VALUES (?1, ?2, ?3, ?4)",
                    params![experiment_id, cell_ids[run.cell], run.repetition, order as i64],
                )?;
            }
            Ok(Some(experiment_id))
        })
        .map_err(context)
    }

    /// Appends a round of runs to a stored experiment (an adaptive experiment's extra repetition):
    /// `runs` are (cell key, repetition) in execution order, placed after every run stored so far, in
    /// one transaction. Fails, adding nothing, when a cell key is not the experiment's or a run exists.
    pub fn add_runs(&mut self, experiment_id: i64, runs: &[(&str, u32)]) -> Result<()> {
        let shown = self.shown.clone();
        let context = |err| store_err(&shown, format_args!("cannot add runs to experiment {experiment_id}"), err);
        in_transaction(self.db.get_mut().as_mut(), |db| -> DbResult<()> {
            let next: i64 = db
                .query(
                    "SELECT COALESCE(MAX(order_index) + 1, 0) FROM runs WHERE experiment_id = ?1",
                    params![experiment_id],
                )?
                .remove(0)
                .get(0)?;
            for (i, (key, repetition)) in runs.iter().enumerate() {
                let rows = db.query(
                    "SELECT id FROM cells WHERE experiment_id = ?1 AND key = ?2",
                    params![experiment_id, *key],
                )?;
                let Some(row) = rows.first() else {
                    return Err(super::backend::DbError(format!("no cell '{key}' in experiment {experiment_id}")));
                };
                let cell_id: i64 = row.get(0)?;
                db.execute(
                    "INSERT INTO runs (experiment_id, cell_id, repetition, order_index) VALUES (?1, ?2, ?3, ?4)",
                    params![experiment_id, cell_id, *repetition, next + i as i64],
                )?;
            }
            Ok(())
        })
        .map_err(context)
    }

    /// Sets an experiment's status.
    pub fn set_experiment_status(&self, id: i64, status: Status) -> Result<()> {
        let n = self
            .db
            .borrow_mut()
            .execute("UPDATE experiments SET status = ?1 WHERE id = ?2", params![status.stored(), id])
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(self.err(format!("no experiment with id {id}")));
        }
        Ok(())
    }

    /// Marks a run as running (now), recording the server version and the command (secrets redacted).
    /// Anything stored by an earlier attempt of the same run is removed. A run that is done cannot be
    /// started again.
    pub fn start_run(&mut self, run_id: i64, start: &StartRun) -> Result<()> {
        let command = scrub_json(&start.command).to_string();
        let shown = self.shown.clone();
        let fail = |m: String| Error::file(&shown, format!("results store: {m}"));
        let db_fail = |e| store_err(&shown, format_args!("cannot start run {run_id}"), e);
        in_store_transaction(self.db.get_mut().as_mut(), db_fail, |db| {
            check_not_done(db, run_id, &fail)?;
            clear_measurements(db, run_id).map_err(db_fail)?;
            db.execute(
                "UPDATE runs SET status = 'running', error = NULL, started_at = ?2, finished_at = NULL, \
                 server_version = ?3, command = ?4, variable_set_id = NULL, events = NULL, queries = NULL, \
                 reads = NULL, writes = NULL, other = NULL, errors = NULL, reconnects = NULL, tps = NULL, \
                 qps = NULL, latency_min_us = NULL, latency_avg_us = NULL, latency_max_us = NULL, \
                 latency_p95_us = NULL, latency_p99_us = NULL, latency_sum_us = NULL, duration_s = NULL, \
                 fairness_events_avg = NULL, fairness_events_stddev = NULL, fairness_time_avg_s = NULL, \
                 fairness_time_stddev_s = NULL WHERE id = ?1",
                params![run_id, now(), &start.server_version, command],
            )
            .map_err(db_fail)?;
            Ok(())
        })
    }

    /// Stores everything a finished run measured and marks it done, in one transaction: either all of it
    /// is committed or nothing is. The run must be running ([`Store::start_run`]).
    pub fn finish_run(&mut self, run_id: i64, result: &RunResult) -> Result<()> {
        let shown = self.shown.clone();
        let fail = |m: String| Error::file(&shown, format!("results store: {m}"));
        let db_fail = |e| store_err(&shown, format_args!("cannot store run {run_id}"), e);
        in_store_transaction(self.db.get_mut().as_mut(), db_fail, |db| {
            match run_status(db, run_id).map_err(db_fail)? {
                None => return Err(fail(format!("no run with id {run_id}"))),
                Some(Status::Running) => {}
                Some(other) => return Err(fail(format!("run {run_id} is {other}, not running; start it first"))),
            }
            store_result(db, run_id, result).map_err(db_fail)
        })
    }

    /// Marks a run failed with `error`, keeping the intervals measured before it failed.
    pub fn fail_run(&mut self, run_id: i64, error: &str, intervals: &[Interval]) -> Result<()> {
        self.end_early(run_id, Status::Failed, Some(error), intervals)
    }

    /// Marks a run interrupted (Ctrl-C), keeping the intervals measured so far. It stays pending for
    /// `--resume`.
    pub fn interrupt_run(&mut self, run_id: i64, intervals: &[Interval]) -> Result<()> {
        self.end_early(run_id, Status::Interrupted, None, intervals)
    }

    fn end_early(&mut self, run_id: i64, status: Status, error: Option<&str>, intervals: &[Interval]) -> Result<()> {
        let shown = self.shown.clone();
        let fail = |m: String| Error::file(&shown, format!("results store: {m}"));
        let db_fail = |e| store_err(&shown, format_args!("cannot update run {run_id}"), e);
        in_store_transaction(self.db.get_mut().as_mut(), db_fail, |db| {
            check_not_done(db, run_id, &fail)?;
            clear_measurements(db, run_id).map_err(db_fail)?;
            insert_intervals(db, run_id, intervals).map_err(db_fail)?;
            db.execute(
                "UPDATE runs SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
                params![run_id, status.as_str(), error, now()],
            )
            .map_err(db_fail)?;
            Ok(())
        })
    }
}

/// Writes a finished run's summary and measurements (inside the caller's transaction).
fn store_result(db: &mut dyn Backend, run_id: i64, result: &RunResult) -> DbResult<()> {
    let set = if result.variables.is_empty() { None } else { Some(variable_set(db, &result.variables)?) };
    let s = &result.summary;
    db.execute(
        "UPDATE runs SET status = 'done', finished_at = ?2, variable_set_id = ?3, events = ?4, queries = ?5, \
         reads = ?6, writes = ?7, other = ?8, errors = ?9, reconnects = ?10, tps = ?11, qps = ?12, \
         latency_min_us = ?13, latency_avg_us = ?14, latency_max_us = ?15, latency_p95_us = ?16, \
         latency_p99_us = ?17, latency_sum_us = ?18, duration_s = ?19, fairness_events_avg = ?20, \
         fairness_events_stddev = ?21, fairness_time_avg_s = ?22, fairness_time_stddev_s = ?23 WHERE id = ?1",
        params![
            run_id,
            now(),
            set,
            s.events,
            s.queries,
            s.reads,
            s.writes,
            s.other,
            s.errors,
            s.reconnects,
            s.tps,
            s.qps,
            s.latency_min_us,
            s.latency_avg_us,
            s.latency_max_us,
            s.latency_p95_us,
            s.latency_p99_us,
            s.latency_sum_us,
            s.duration_s,
            s.fairness_events_avg,
            s.fairness_events_stddev,
            s.fairness_time_avg_s,
            s.fairness_time_stddev_s
        ],
    )?;
    insert_intervals(db, run_id, &result.intervals)?;
    for h in &result.histograms {
        db.execute(
            "INSERT INTO histograms (run_id, kind, t_s, data) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, &h.kind, h.t_s, h.data.as_slice()],
        )?;
    }
    for (name, delta) in &result.status_deltas {
        db.execute(
            "INSERT INTO status_deltas (run_id, name, delta) VALUES (?1, ?2, ?3)",
            params![run_id, name, *delta],
        )?;
    }
    for (name, value) in &result.status_ends {
        db.execute("INSERT INTO status_ends (run_id, name, value) VALUES (?1, ?2, ?3)", params![run_id, name, *value])?;
    }
    for (metric, value) in result.efficiency.metrics() {
        db.execute(
            "INSERT INTO efficiency (run_id, metric, value) VALUES (?1, ?2, ?3)",
            params![run_id, metric, value],
        )?;
    }
    for r in &result.replica_seconds {
        db.execute(
            "INSERT INTO replica_seconds (run_id, replica, t_s, lag_ms, seconds_behind, applied_ps) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run_id, &r.replica, r.t_s, r.lag_ms, r.seconds_behind, r.applied_ps],
        )?;
    }
    for p in result.profile.iter().chain(&result.waits) {
        let folded = crate::profile::fold::compress(&p.stacks).map_err(DbError)?;
        db.execute(
            "INSERT INTO profiles (run_id, event, hz, samples, transactions, note, folded) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![run_id, &p.event, p.hz, p.samples, p.transactions, p.note.as_deref(), folded.as_slice()],
        )?;
    }
    Ok(())
}
