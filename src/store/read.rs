//! The store's reads: experiments, runs and everything stored for one run.

use super::Store;
use super::backend::{Backend, DbError, DbResult, Row, params};
use super::model::{
    Cell, Experiment, ExperimentSummary, Interval, ReplicaSecond, RunDetail, RunRow, Status, StoredHistogram, Summary,
};
use crate::error::Result;
use crate::sampler::{Efficiency, HostFacts};

fn status_at(row: &Row, i: usize) -> DbResult<Status> {
    row.get::<String>(i)?.parse().map_err(|e| DbError(format!("column {i}: {e}")))
}

fn json_at<T: serde::de::DeserializeOwned>(row: &Row, i: usize) -> DbResult<T> {
    serde_json::from_str(&row.get::<String>(i)?).map_err(|e| DbError(format!("column {i}: {e}")))
}

/// An experiment's columns; its status read as `partial` when it is stored `failed` and one of its runs
/// is done (see [`Status::Partial`]).
pub(super) const EXPERIMENT_COLUMNS: &str = "id, name, file, definition, definition_hash, created_at, \
     CASE WHEN experiments.status = 'failed' AND EXISTS (SELECT 1 FROM runs \
     WHERE runs.experiment_id = experiments.id AND runs.status = 'done') THEN 'partial' \
     ELSE experiments.status END, seed, host, versus_version";

fn experiment_from(row: &Row) -> DbResult<Experiment> {
    Ok(Experiment {
        id: row.get(0)?,
        name: row.get(1)?,
        file: row.get(2)?,
        definition: row.get(3)?,
        definition_hash: row.get(4)?,
        created_at: row.get(5)?,
        status: status_at(row, 6)?,
        seed: row.get::<i64>(7)? as u64,
        host: json_at::<HostFacts>(row, 8)?,
        versus_version: row.get(9)?,
    })
}

const RUN_COLUMNS: &str = "r.id, r.experiment_id, r.repetition, r.order_index, r.status, r.error, r.started_at, \
     r.finished_at, r.server_version, \
     c.id, c.key, c.target, c.build, c.config, c.workload, c.threads, c.workload_options, \
     r.events, r.queries, r.reads, r.writes, r.other, r.errors, r.reconnects, r.tps, r.qps, \
     r.latency_min_us, r.latency_avg_us, r.latency_max_us, r.latency_p95_us, r.latency_p99_us, r.latency_sum_us, \
     r.duration_s, r.fairness_events_avg, r.fairness_events_stddev, r.fairness_time_avg_s, r.fairness_time_stddev_s";

fn run_from(row: &Row) -> DbResult<RunRow> {
    let summary = match row.get::<Option<i64>>(17)? {
        None => None,
        Some(_) => Some(Summary {
            events: row.get(17)?,
            queries: row.get(18)?,
            reads: row.get(19)?,
            writes: row.get(20)?,
            other: row.get(21)?,
            errors: row.get(22)?,
            reconnects: row.get(23)?,
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

/// The runs matching `filter` (SQL over `r` and `c` with `?1` = `id`), in execution order.
pub(super) fn query_runs(db: &mut dyn Backend, filter: &str, id: i64) -> DbResult<Vec<RunRow>> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM runs r JOIN cells c ON c.id = r.cell_id WHERE {filter} ORDER BY r.order_index"
    );
    db.query(&sql, params![id])?.iter().map(run_from).collect()
}

/// Everything stored for one run.
fn run_detail(db: &mut dyn Backend, run_id: i64) -> DbResult<Option<RunDetail>> {
    let Some(run) = query_runs(db, "r.id = ?1", run_id)?.into_iter().next() else { return Ok(None) };
    let row = db
        .query(
            "SELECT r.command, v.variables FROM runs r LEFT JOIN variable_sets v ON v.id = r.variable_set_id \
             WHERE r.id = ?1",
            params![run_id],
        )?
        .remove(0);
    let command: Option<String> = row.get(0)?;
    let command =
        command.map(|c| serde_json::from_str(&c)).transpose().map_err(|e| DbError(format!("command: {e}")))?;
    let variables: Option<String> = row.get(1)?;
    let variables: Vec<(String, String)> = variables
        .map(|v| serde_json::from_str(&v))
        .transpose()
        .map_err(|e| DbError(format!("variables: {e}")))?
        .unwrap_or_default();

    let intervals = db
        .query(
            "SELECT t_s, threads, tps, qps, reads_ps, writes_ps, other_ps, latency_p95_us, latency_p99_us, \
             latency_max_us, errors_ps, reconnects_ps FROM intervals WHERE run_id = ?1 ORDER BY t_s",
            params![run_id],
        )?
        .iter()
        .map(|r| {
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
        .collect::<DbResult<Vec<_>>>()?;
    let histograms = db
        .query(
            "SELECT kind, t_s, data FROM histograms WHERE run_id = ?1 ORDER BY t_s IS NOT NULL, t_s, kind",
            params![run_id],
        )?
        .iter()
        .map(|r| Ok(StoredHistogram { kind: r.get(0)?, t_s: r.get(1)?, data: r.get(2)? }))
        .collect::<DbResult<Vec<_>>>()?;
    let status_deltas = db
        .query("SELECT name, delta FROM status_deltas WHERE run_id = ?1 ORDER BY name", params![run_id])?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .collect::<DbResult<Vec<_>>>()?;
    let status_ends = db
        .query("SELECT name, value FROM status_ends WHERE run_id = ?1 ORDER BY name", params![run_id])?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .collect::<DbResult<Vec<_>>>()?;
    let metrics = db
        .query("SELECT metric, value FROM efficiency WHERE run_id = ?1 ORDER BY metric", params![run_id])?
        .iter()
        .map(|r| Ok((r.get::<String>(0)?, r.get::<f64>(1)?)))
        .collect::<DbResult<Vec<_>>>()?;
    let efficiency = Efficiency::from_metrics(metrics.iter().map(|(m, v)| (m.as_str(), *v)));
    let replica_seconds = db
        .query(
            "SELECT replica, t_s, lag_ms, seconds_behind, applied_ps FROM replica_seconds WHERE run_id = ?1 \
             ORDER BY t_s, replica",
            params![run_id],
        )?
        .iter()
        .map(|r| {
            Ok(ReplicaSecond {
                replica: r.get(0)?,
                t_s: r.get(1)?,
                lag_ms: r.get(2)?,
                seconds_behind: r.get(3)?,
                applied_ps: r.get(4)?,
            })
        })
        .collect::<DbResult<Vec<_>>>()?;
    Ok(Some(RunDetail {
        run,
        command,
        intervals,
        histograms,
        variables,
        status_deltas,
        status_ends,
        efficiency,
        replica_seconds,
    }))
}

fn profile_of(db: &mut dyn Backend, run_id: i64, event: &str) -> DbResult<Option<crate::profile::Profile>> {
    let rows = db.query(
        "SELECT event, hz, samples, transactions, note, folded FROM profiles WHERE run_id = ?1 AND event = ?2",
        params![run_id, event],
    )?;
    let Some(r) = rows.first() else { return Ok(None) };
    let folded: Vec<u8> = r.get(5)?;
    Ok(Some(crate::profile::Profile {
        event: r.get(0)?,
        hz: r.get(1)?,
        samples: r.get(2)?,
        transactions: r.get(3)?,
        note: r.get(4)?,
        stacks: crate::profile::fold::decompress(&folded).map_err(DbError)?,
    }))
}

impl Store {
    /// The experiment with this id.
    pub fn experiment(&self, id: i64) -> Result<Option<Experiment>> {
        let sql = format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE id = ?1");
        let rows = self.db.borrow_mut().query(&sql, params![id]).map_err(|e| self.err(e))?;
        rows.first().map(experiment_from).transpose().map_err(|e| self.err(e))
    }

    /// The most recently created experiment with this name (what `--resume` continues).
    pub fn latest_experiment_named(&self, name: &str) -> Result<Option<Experiment>> {
        let sql = format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE name = ?1 ORDER BY id DESC LIMIT 1");
        let rows = self.db.borrow_mut().query(&sql, params![name]).map_err(|e| self.err(e))?;
        rows.first().map(experiment_from).transpose().map_err(|e| self.err(e))
    }

    /// All experiments, newest first, with their run counts.
    pub fn list_experiments(&self) -> Result<Vec<ExperimentSummary>> {
        let rows = self
            .db
            .borrow_mut()
            .query(
                "SELECT e.id, e.name, e.file, e.created_at, e.status, count(r.id), \
                 coalesce(sum(CASE WHEN r.status = 'done' THEN 1 ELSE 0 END), 0), \
                 coalesce(sum(CASE WHEN r.status = 'failed' THEN 1 ELSE 0 END), 0) \
                 FROM experiments e LEFT JOIN runs r ON r.experiment_id = e.id \
                 GROUP BY e.id, e.name, e.file, e.created_at, e.status ORDER BY e.id DESC",
                &[],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|row| {
                let (status, done) = (status_at(row, 4)?, row.get::<u64>(6)?);
                Ok(ExperimentSummary {
                    id: row.get(0)?,
                    name: row.get(1)?,
                    file: row.get(2)?,
                    created_at: row.get(3)?,
                    status: if status == Status::Failed && done > 0 { Status::Partial } else { status },
                    runs: row.get(5)?,
                    done,
                    failed: row.get(7)?,
                })
            })
            .collect::<DbResult<_>>()
            .map_err(|e| self.err(e))
    }

    /// Every run of an experiment with its cell, in execution order.
    pub fn runs(&self, experiment_id: i64) -> Result<Vec<RunRow>> {
        query_runs(self.db.borrow_mut().as_mut(), "r.experiment_id = ?1", experiment_id).map_err(|e| self.err(e))
    }

    /// The runs a resumed experiment still has to do, in execution order: those planned, those left
    /// `running` by a process that died, and those interrupted. Failed runs are not retried.
    pub fn pending_runs(&self, experiment_id: i64) -> Result<Vec<RunRow>> {
        query_runs(
            self.db.borrow_mut().as_mut(),
            "r.experiment_id = ?1 AND r.status IN ('planned', 'running', 'interrupted')",
            experiment_id,
        )
        .map_err(|e| self.err(e))
    }

    /// How an experiment with no pending runs ended: `done` when every run is done, `failed` when none
    /// is, `partial` between.
    pub fn finished_status(&self, experiment_id: i64) -> Result<Status> {
        let runs = self.runs(experiment_id)?;
        let failed = runs.iter().any(|r| r.status == Status::Failed);
        let done = runs.iter().any(|r| r.status == Status::Done);
        Ok(match (failed, done) {
            (false, _) => Status::Done,
            (true, true) => Status::Partial,
            (true, false) => Status::Failed,
        })
    }

    /// The server's on-CPU profile stored with run `run_id`, if it was profiled.
    pub fn profile(&self, run_id: i64) -> Result<Option<crate::profile::Profile>> {
        profile_of(self.db.borrow_mut().as_mut(), run_id, crate::profile::fold::EVENT)
            .map_err(|e| self.err(format!("cannot read the profile of run {run_id}: {e}")))
    }

    /// The server threads' off-CPU profile stored with run `run_id`, if its waits were recorded.
    pub fn waits(&self, run_id: i64) -> Result<Option<crate::profile::Profile>> {
        profile_of(self.db.borrow_mut().as_mut(), run_id, crate::profile::offcpu::EVENT)
            .map_err(|e| self.err(format!("cannot read the off-CPU profile of run {run_id}: {e}")))
    }

    /// One run with everything stored for it (for `versus show RUN`).
    pub fn run(&self, run_id: i64) -> Result<Option<RunDetail>> {
        run_detail(self.db.borrow_mut().as_mut(), run_id)
            .map_err(|e| self.err(format!("cannot read run {run_id}: {e}")))
    }
}
