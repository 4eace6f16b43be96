//! The store's reads and writes. Every write that touches more than one row runs in one transaction, so
//! a crash leaves either all of it or none of it.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::Store;
use super::model::{
    Cell, Experiment, ExperimentSummary, Interval, NewExperiment, RunDetail, RunResult, RunRow, StartRun, Status,
    StoredHistogram, Summary,
};
use super::secrets::{content_hash, scrub_json, scrub_toml};
use crate::error::{Error, Result};
use crate::sampler::{Efficiency, HostFacts};

/// Seconds since the Unix epoch.
fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// A conversion error for a column whose text could not be parsed.
fn bad_column(i: usize, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.to_string().into())
}

fn status_at(row: &Row<'_>, i: usize) -> rusqlite::Result<Status> {
    row.get::<_, String>(i)?.parse().map_err(|e| bad_column(i, e))
}

fn u64_at(row: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    u64::try_from(row.get::<_, i64>(i)?).map_err(|e| bad_column(i, e))
}

/// A count for an INTEGER column (SQLite integers are signed 64-bit).
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// An [`Error::File`] naming the store for a failed statement.
fn store_err(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::file(path, format!("results store: {message}"))
}

fn json_at(row: &Row<'_>, i: usize) -> rusqlite::Result<serde_json::Value> {
    serde_json::from_str(&row.get::<_, String>(i)?).map_err(|e| bad_column(i, e))
}

const EXPERIMENT_COLUMNS: &str =
    "id, name, file, definition, definition_hash, created_at, status, seed, host, versus_version";

fn experiment_from(row: &Row<'_>) -> rusqlite::Result<Experiment> {
    Ok(Experiment {
        id: row.get(0)?,
        name: row.get(1)?,
        file: row.get(2)?,
        definition: row.get(3)?,
        definition_hash: row.get(4)?,
        created_at: row.get(5)?,
        status: status_at(row, 6)?,
        seed: row.get::<_, i64>(7)? as u64,
        host: serde_json::from_str::<HostFacts>(&row.get::<_, String>(8)?).map_err(|e| bad_column(8, e))?,
        versus_version: row.get(9)?,
    })
}

const RUN_COLUMNS: &str = "r.id, r.experiment_id, r.repetition, r.order_index, r.status, r.error, r.started_at, \
     r.finished_at, r.server_version, \
     c.id, c.key, c.target, c.build, c.config, c.workload, c.threads, c.workload_options, \
     r.events, r.queries, r.reads, r.writes, r.other, r.errors, r.reconnects, r.tps, r.qps, \
     r.latency_min_us, r.latency_avg_us, r.latency_max_us, r.latency_p95_us, r.latency_p99_us, r.latency_sum_us, \
     r.duration_s, r.fairness_events_avg, r.fairness_events_stddev, r.fairness_time_avg_s, r.fairness_time_stddev_s";

fn run_from(row: &Row<'_>) -> rusqlite::Result<RunRow> {
    let summary = match row.get::<_, Option<i64>>(17)? {
        None => None,
        Some(_) => Some(Summary {
            events: u64_at(row, 17)?,
            queries: u64_at(row, 18)?,
            reads: u64_at(row, 19)?,
            writes: u64_at(row, 20)?,
            other: u64_at(row, 21)?,
            errors: u64_at(row, 22)?,
            reconnects: u64_at(row, 23)?,
            tps: row.get(24)?,
            qps: row.get(25)?,
            latency_min_us: row.get(26)?,
            latency_avg_us: row.get(27)?,
            latency_max_us: row.get(28)?,
            latency_p95_us: row.get(29)?,
            latency_p99_us: row.get(30)?,
            latency_sum_us: row.get(31)?,
            duration_s: row.get(32)?,
            fairness_events_avg: row.get(33)?,
            fairness_events_stddev: row.get(34)?,
            fairness_time_avg_s: row.get(35)?,
            fairness_time_stddev_s: row.get(36)?,
        }),
    };
    Ok(RunRow {
        id: row.get(0)?,
        experiment_id: row.get(1)?,
        repetition: row.get(2)?,
        order_index: row.get(3)?,
        status: status_at(row, 4)?,
        error: row.get(5)?,
        started_at: row.get(6)?,
        finished_at: row.get(7)?,
        server_version: row.get(8)?,
        cell: Cell {
            id: row.get(9)?,
            key: row.get(10)?,
            target: row.get(11)?,
            build: row.get(12)?,
            config: row.get(13)?,
            workload: row.get(14)?,
            threads: row.get(15)?,
            workload_options: json_at(row, 16)?,
        },
        summary,
    })
}

/// The status of run `id` inside `tx`, or an error naming the run when there is none.
fn run_status(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<Status>> {
    let status: Option<String> =
        tx.query_row("SELECT status FROM runs WHERE id = ?1", [id], |r| r.get(0)).optional()?;
    status.map(|s| s.parse().map_err(|e| bad_column(0, e))).transpose()
}

/// Refuses to restart or end early a run that does not exist or is already done.
fn check_not_done(tx: &Transaction<'_>, run_id: i64, path: &Path) -> Result<()> {
    match run_status(tx, run_id).map_err(|e| store_err(path, format!("cannot read run {run_id}: {e}")))? {
        None => Err(store_err(path, format!("no run with id {run_id}"))),
        Some(Status::Done) => Err(store_err(path, format!("run {run_id} is already done"))),
        Some(_) => Ok(()),
    }
}

/// Removes everything measured for a run (before a restart, or before storing partial intervals).
fn clear_measurements(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<()> {
    for table in ["intervals", "histograms", "status_deltas", "efficiency"] {
        tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [id])?;
    }
    Ok(())
}

fn insert_intervals(tx: &Transaction<'_>, id: i64, intervals: &[Interval]) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO intervals (run_id, t_s, threads, tps, qps, reads_ps, writes_ps, other_ps, latency_p95_us, \
         latency_p99_us, latency_max_us, errors_ps, reconnects_ps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
         ?11, ?12, ?13)",
    )?;
    for i in intervals {
        stmt.execute(params![
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
        ])?;
    }
    Ok(())
}

/// The id of the variable set with exactly these (sorted) variables, inserting it when new.
fn variable_set(tx: &Transaction<'_>, variables: &[(String, String)]) -> rusqlite::Result<i64> {
    let mut sorted: Vec<&(String, String)> = variables.iter().collect();
    sorted.sort();
    let json = serde_json::to_string(&sorted).map_err(|e| bad_column(0, e))?;
    let hash = content_hash(&json);
    let existing: Option<i64> = tx
        .query_row("SELECT id FROM variable_sets WHERE hash = ?1 AND variables = ?2", params![hash, json], |r| r.get(0))
        .optional()?;
    match existing {
        Some(id) => Ok(id),
        None => {
            tx.execute("INSERT INTO variable_sets (hash, variables) VALUES (?1, ?2)", params![hash, json])?;
            Ok(tx.last_insert_rowid())
        }
    }
}

impl Store {
    /// Records an experiment, its cells and all its planned runs in one transaction; returns its id.
    /// The definition and workload options are stored with secrets redacted, and the definition hash
    /// is taken of the redacted text. Fails, storing nothing, when two cells share a key, two runs share
    /// a (cell, repetition), or a run names a cell index that does not exist.
    pub fn create_experiment(&mut self, e: &NewExperiment) -> Result<i64> {
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
        let path = self.path.clone();
        let context = |err: rusqlite::Error| store_err(&path, format!("cannot record experiment '{}': {err}", e.name));
        let tx = self.conn.transaction().map_err(context)?;
        tx.execute(
            "INSERT INTO experiments (name, file, definition, definition_hash, created_at, status, seed, host, \
             versus_version) VALUES (?1, ?2, ?3, ?4, ?5, 'planned', ?6, ?7, ?8)",
            params![
                e.name,
                e.file,
                definition,
                content_hash(&definition),
                now(),
                e.seed as i64,
                host,
                env!("CARGO_PKG_VERSION")
            ],
        )
        .map_err(context)?;
        let experiment_id = tx.last_insert_rowid();
        let mut cell_ids = Vec::with_capacity(e.cells.len());
        {
            let mut stmt = tx
                .prepare(
                    "INSERT INTO cells (experiment_id, key, target, build, config, workload, threads, \
                     workload_options) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(context)?;
            for c in &e.cells {
                let options = scrub_json(&c.workload_options).to_string();
                stmt.execute(params![
                    experiment_id,
                    c.key,
                    c.target,
                    c.build,
                    c.config,
                    c.workload,
                    c.threads,
                    options
                ])
                .map_err(context)?;
                cell_ids.push(tx.last_insert_rowid());
            }
            let mut stmt = tx
                .prepare("INSERT INTO runs (experiment_id, cell_id, repetition, order_index) VALUES (?1, ?2, ?3, ?4)")
                .map_err(context)?;
            for (order, run) in e.runs.iter().enumerate() {
                stmt.execute(params![experiment_id, cell_ids[run.cell], run.repetition, order as i64])
                    .map_err(context)?;
            }
        }
        tx.commit().map_err(context)?;
        Ok(experiment_id)
    }

    /// Sets an experiment's status.
    pub fn set_experiment_status(&self, id: i64, status: Status) -> Result<()> {
        let n = self
            .conn
            .execute("UPDATE experiments SET status = ?1 WHERE id = ?2", params![status.as_str(), id])
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(self.err(format!("no experiment with id {id}")));
        }
        Ok(())
    }

    /// The experiment with this id.
    pub fn experiment(&self, id: i64) -> Result<Option<Experiment>> {
        self.conn
            .query_row(&format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE id = ?1"), [id], experiment_from)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The most recently created experiment with this name (what `--resume` continues).
    pub fn latest_experiment_named(&self, name: &str) -> Result<Option<Experiment>> {
        self.conn
            .query_row(
                &format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE name = ?1 ORDER BY id DESC LIMIT 1"),
                [name],
                experiment_from,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// All experiments, newest first, with their run counts.
    pub fn list_experiments(&self) -> Result<Vec<ExperimentSummary>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT e.id, e.name, e.file, e.created_at, e.status, count(r.id), \
                 coalesce(sum(r.status = 'done'), 0), coalesce(sum(r.status = 'failed'), 0) \
                 FROM experiments e LEFT JOIN runs r ON r.experiment_id = e.id GROUP BY e.id ORDER BY e.id DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(ExperimentSummary {
                    id: row.get(0)?,
                    name: row.get(1)?,
                    file: row.get(2)?,
                    created_at: row.get(3)?,
                    status: status_at(row, 4)?,
                    runs: u64_at(row, 5)?,
                    done: u64_at(row, 6)?,
                    failed: u64_at(row, 7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    fn query_runs(&self, filter: &str, id: i64) -> Result<Vec<RunRow>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN cells c ON c.id = r.cell_id WHERE {filter} ORDER BY r.order_index"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt.query_map([id], run_from).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    /// Every run of an experiment with its cell, in execution order.
    pub fn runs(&self, experiment_id: i64) -> Result<Vec<RunRow>> {
        self.query_runs("r.experiment_id = ?1", experiment_id)
    }

    /// The runs a resumed experiment still has to do, in execution order: those planned, those left
    /// `running` by a process that died, and those interrupted. Failed runs are not retried.
    pub fn pending_runs(&self, experiment_id: i64) -> Result<Vec<RunRow>> {
        self.query_runs("r.experiment_id = ?1 AND r.status IN ('planned', 'running', 'interrupted')", experiment_id)
    }

    /// Marks a run as running (now), recording the server version and the command (secrets redacted).
    /// Anything stored by an earlier attempt of the same run is removed. A run that is done cannot be
    /// started again.
    pub fn start_run(&mut self, run_id: i64, start: &StartRun) -> Result<()> {
        let command = scrub_json(&start.command).to_string();
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| store_err(&path, format!("cannot start run {run_id}: {e}"));
        let tx = self.conn.transaction().map_err(fail)?;
        check_not_done(&tx, run_id, &path)?;
        clear_measurements(&tx, run_id).map_err(fail)?;
        tx.execute(
            "UPDATE runs SET status = 'running', error = NULL, started_at = ?2, finished_at = NULL, \
             server_version = ?3, command = ?4, variable_set_id = NULL, events = NULL, queries = NULL, \
             reads = NULL, writes = NULL, other = NULL, errors = NULL, reconnects = NULL, tps = NULL, qps = NULL, \
             latency_min_us = NULL, latency_avg_us = NULL, latency_max_us = NULL, latency_p95_us = NULL, \
             latency_p99_us = NULL, latency_sum_us = NULL, duration_s = NULL, fairness_events_avg = NULL, \
             fairness_events_stddev = NULL, fairness_time_avg_s = NULL, fairness_time_stddev_s = NULL \
             WHERE id = ?1",
            params![run_id, now(), start.server_version, command],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// Stores everything a finished run measured and marks it done, in one transaction: either all of it
    /// is committed or nothing is. The run must be running ([`Store::start_run`]).
    pub fn finish_run(&mut self, run_id: i64, result: &RunResult) -> Result<()> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| store_err(&path, format!("cannot store run {run_id}: {e}"));
        let tx = self.conn.transaction().map_err(fail)?;
        match run_status(&tx, run_id).map_err(fail)? {
            None => return Err(store_err(&path, format!("no run with id {run_id}"))),
            Some(Status::Running) => {}
            Some(other) => {
                return Err(store_err(&path, format!("run {run_id} is {other}, not running; start it first")));
            }
        }
        let set =
            if result.variables.is_empty() { None } else { Some(variable_set(&tx, &result.variables).map_err(fail)?) };
        let s = &result.summary;
        tx.execute(
            "UPDATE runs SET status = 'done', finished_at = ?2, variable_set_id = ?3, events = ?4, queries = ?5, \
             reads = ?6, writes = ?7, other = ?8, errors = ?9, reconnects = ?10, tps = ?11, qps = ?12, \
             latency_min_us = ?13, latency_avg_us = ?14, latency_max_us = ?15, latency_p95_us = ?16, \
             latency_p99_us = ?17, latency_sum_us = ?18, duration_s = ?19, fairness_events_avg = ?20, \
             fairness_events_stddev = ?21, fairness_time_avg_s = ?22, fairness_time_stddev_s = ?23 WHERE id = ?1",
            params![
                run_id,
                now(),
                set,
                int(s.events),
                int(s.queries),
                int(s.reads),
                int(s.writes),
                int(s.other),
                int(s.errors),
                int(s.reconnects),
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
        )
        .map_err(fail)?;
        insert_intervals(&tx, run_id, &result.intervals).map_err(fail)?;
        {
            let mut stmt =
                tx.prepare("INSERT INTO histograms (run_id, kind, t_s, data) VALUES (?1, ?2, ?3, ?4)").map_err(fail)?;
            for h in &result.histograms {
                stmt.execute(params![run_id, h.kind, h.t_s, h.data]).map_err(fail)?;
            }
            let mut stmt =
                tx.prepare("INSERT INTO status_deltas (run_id, name, delta) VALUES (?1, ?2, ?3)").map_err(fail)?;
            for (name, delta) in &result.status_deltas {
                stmt.execute(params![run_id, name, delta]).map_err(fail)?;
            }
            let mut stmt =
                tx.prepare("INSERT INTO efficiency (run_id, metric, value) VALUES (?1, ?2, ?3)").map_err(fail)?;
            for (metric, value) in result.efficiency.metrics() {
                stmt.execute(params![run_id, metric, value]).map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
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
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| store_err(&path, format!("cannot update run {run_id}: {e}"));
        let tx = self.conn.transaction().map_err(fail)?;
        check_not_done(&tx, run_id, &path)?;
        clear_measurements(&tx, run_id).map_err(fail)?;
        insert_intervals(&tx, run_id, intervals).map_err(fail)?;
        tx.execute(
            "UPDATE runs SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
            params![run_id, status.as_str(), error, now()],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// One run with everything stored for it (for `versus show RUN`).
    pub fn run(&self, run_id: i64) -> Result<Option<RunDetail>> {
        let Some(run) = self.query_runs("r.id = ?1", run_id)?.into_iter().next() else { return Ok(None) };
        let e = |e: rusqlite::Error| self.err(format!("cannot read run {run_id}: {e}"));
        let (command, variables): (Option<String>, Option<String>) = self
            .conn
            .query_row(
                "SELECT r.command, v.variables FROM runs r LEFT JOIN variable_sets v ON v.id = r.variable_set_id \
                 WHERE r.id = ?1",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(e)?;
        let command = command.map(|c| serde_json::from_str(&c)).transpose().map_err(|err| self.err(err))?;
        let variables: Vec<(String, String)> =
            variables.map(|v| serde_json::from_str(&v)).transpose().map_err(|err| self.err(err))?.unwrap_or_default();

        let mut stmt = self
            .conn
            .prepare(
                "SELECT t_s, threads, tps, qps, reads_ps, writes_ps, other_ps, latency_p95_us, latency_p99_us, \
                 latency_max_us, errors_ps, reconnects_ps FROM intervals WHERE run_id = ?1 ORDER BY t_s",
            )
            .map_err(e)?;
        let intervals = stmt
            .query_map([run_id], |r| {
                Ok(Interval {
                    t_s: r.get(0)?,
                    threads: r.get(1)?,
                    tps: r.get(2)?,
                    qps: r.get(3)?,
                    reads_ps: r.get(4)?,
                    writes_ps: r.get(5)?,
                    other_ps: r.get(6)?,
                    latency_p95_us: r.get(7)?,
                    latency_p99_us: r.get(8)?,
                    latency_max_us: r.get(9)?,
                    errors_ps: r.get(10)?,
                    reconnects_ps: r.get(11)?,
                })
            })
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;

        let mut stmt = self
            .conn
            .prepare("SELECT kind, t_s, data FROM histograms WHERE run_id = ?1 ORDER BY t_s IS NOT NULL, t_s, kind")
            .map_err(e)?;
        let histograms = stmt
            .query_map([run_id], |r| Ok(StoredHistogram { kind: r.get(0)?, t_s: r.get(1)?, data: r.get(2)? }))
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;

        let mut stmt =
            self.conn.prepare("SELECT name, delta FROM status_deltas WHERE run_id = ?1 ORDER BY name").map_err(e)?;
        let status_deltas = stmt
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;

        let mut stmt = self.conn.prepare("SELECT metric, value FROM efficiency WHERE run_id = ?1").map_err(e)?;
        let metrics = stmt
            .query_map([run_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)))
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;
        let efficiency = Efficiency::from_metrics(metrics.iter().map(|(m, v)| (m.as_str(), *v)));

        Ok(Some(RunDetail { run, command, intervals, histograms, variables, status_deltas, efficiency }))
    }
}
