//! `versus store copy`: every experiment of one store into another (SQLite ↔ PostgreSQL, or merging
//! per-task files). Experiments are matched by their uid, runs by (cell key, repetition), so copying
//! again adds nothing, and a run finished in the source completes the same run left unfinished in the
//! destination. Block attempts (fleet experiments) go along, matched by (block, host, start time):
//! an attempt the destination lacks is added (renumbered after the destination's own attempts of that
//! block when its number is taken, as when per-task files are merged), one left running there is
//! brought up to date, and each copied run keeps pointing at the attempt that measured it. Each
//! experiment is copied in one destination transaction. Noise calibrations (`versus calibrate`) go
//! along too, after the experiments, matched by key, target, band and time.

use std::collections::HashMap;

use super::backend::{Backend, DbError, DbResult, Row, Value, in_transaction, params};
use super::write::{clear_measurements, variable_set_json};
use super::{Store, store_err};
use crate::error::Result;

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Experiments created in the destination.
    pub experiments_added: usize,
    /// Experiments the destination already had (matched by uid).
    pub experiments_present: usize,
    /// Runs written: new, or finished in the source and unfinished in the destination.
    pub runs_copied: usize,
    /// Runs left as they were in the destination.
    pub runs_unchanged: usize,
    /// Calibrations (`versus calibrate`) added to the destination.
    pub calibrations_copied: usize,
    /// Calibrations the destination already had.
    pub calibrations_present: usize,
}

/// The experiment columns copied as they are.
const EXPERIMENT_DATA: &[&str] =
    &["uid", "name", "file", "definition", "definition_hash", "created_at", "status", "seed", "host", "versus_version"];
const ATTEMPT_DATA: &[&str] = &[
    "block",
    "attempt",
    "status",
    "host",
    "host_class",
    "fingerprint",
    "canary",
    "error",
    "started_at",
    "finished_at",
];
const CELL_DATA: &[&str] = &["key", "target", "build", "config", "workload", "threads", "workload_options"];
const RUN_DATA: &[&str] = &[
    "repetition",
    "order_index",
    "status",
    "error",
    "started_at",
    "finished_at",
    "server_version",
    "command",
    "events",
    "queries",
    "reads",
    "writes",
    "other",
    "errors",
    "reconnects",
    "tps",
    "qps",
    "latency_min_us",
    "latency_avg_us",
    "latency_max_us",
    "latency_p95_us",
    "latency_p99_us",
    "latency_sum_us",
    "duration_s",
    "fairness_events_avg",
    "fairness_events_stddev",
    "fairness_time_avg_s",
    "fairness_time_stddev_s",
];
/// The per-run tables and their columns besides `run_id`.
const RUN_CHILDREN: &[(&str, &[&str])] = &[
    (
        "intervals",
        &[
            "t_s",
            "threads",
            "tps",
            "qps",
            "reads_ps",
            "writes_ps",
            "other_ps",
            "latency_p95_us",
            "latency_p99_us",
            "latency_max_us",
            "errors_ps",
            "reconnects_ps",
        ],
    ),
    ("histograms", &["kind", "t_s", "encoding", "data"]),
    ("status_deltas", &["name", "delta"]),
    ("status_ends", &["name", "value"]),
    ("efficiency", &["metric", "value"]),
    ("profiles", &["event", "hz", "samples", "transactions", "note", "folded"]),
    ("replica_seconds", &["replica", "t_s", "lag_ms", "seconds_behind", "applied_ps"]),
];

/// `?from, ?from+1, …` for `n` values.
fn placeholders(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

/// One run as read from the source.
struct SourceRun {
    cell_key: String,
    variables: Option<String>,
    /// The source's id of the block attempt that measured it.
    attempt: Option<i64>,
    /// [`RUN_DATA`], in order.
    data: Vec<Value>,
    /// For each of [`RUN_CHILDREN`], its rows.
    children: Vec<Vec<Row>>,
}

/// One experiment as read from the source.
struct SourceExperiment {
    /// [`EXPERIMENT_DATA`], in order (uid first).
    data: Vec<Value>,
    /// [`CELL_DATA`] rows (key first).
    cells: Vec<Row>,
    /// Block attempts: the source's id and [`ATTEMPT_DATA`].
    attempts: Vec<(i64, Row)>,
    runs: Vec<SourceRun>,
}

fn read_experiment(db: &mut dyn Backend, id: i64, data: Vec<Value>) -> DbResult<SourceExperiment> {
    let cells = db.query(
        &format!("SELECT {} FROM cells WHERE experiment_id = ?1 ORDER BY id", CELL_DATA.join(", ")),
        params![id],
    )?;
    let attempts = db
        .query(
            &format!(
                "SELECT id, {} FROM block_attempts WHERE experiment_id = ?1 ORDER BY block, attempt, id",
                ATTEMPT_DATA.join(", ")
            ),
            params![id],
        )?
        .into_iter()
        .map(|row| Ok((row.get::<i64>(0)?, Row(row.values()[1..].to_vec()))))
        .collect::<DbResult<Vec<_>>>()?;
    let cols: Vec<String> = RUN_DATA.iter().map(|c| format!("r.{c}")).collect();
    let rows = db.query(
        &format!(
            "SELECT r.id, c.key, v.variables, r.attempt_id, {} FROM runs r JOIN cells c ON c.id = r.cell_id \
             LEFT JOIN variable_sets v ON v.id = r.variable_set_id WHERE r.experiment_id = ?1 ORDER BY r.order_index",
            cols.join(", ")
        ),
        params![id],
    )?;
    let mut runs = Vec::with_capacity(rows.len());
    for row in rows {
        let run_id: i64 = row.get(0)?;
        let mut children = Vec::with_capacity(RUN_CHILDREN.len());
        for (table, cols) in RUN_CHILDREN {
            children.push(
                db.query(&format!("SELECT {} FROM {table} WHERE run_id = ?1", cols.join(", ")), params![run_id])?,
            );
        }
        runs.push(SourceRun {
            cell_key: row.get(1)?,
            variables: row.get(2)?,
            attempt: row.get(3)?,
            data: row.values()[4..].to_vec(),
            children,
        });
    }
    Ok(SourceExperiment { data, cells, attempts, runs })
}

/// Writes one run's measurements into `run_id` of the destination.
fn write_children(db: &mut dyn Backend, run_id: i64, run: &SourceRun) -> DbResult<()> {
    for ((table, cols), rows) in RUN_CHILDREN.iter().zip(&run.children) {
        let sql =
            format!("INSERT INTO {table} (run_id, {}) VALUES (?1, {})", cols.join(", "), placeholders(2, cols.len()));
        for row in rows {
            let mut values = vec![Value::Int(run_id)];
            values.extend_from_slice(row.values());
            db.execute(&sql, &values)?;
        }
    }
    Ok(())
}

/// Copies the block attempts of `e` into experiment `experiment_id` of the destination; returns the
/// destination's attempt id for each source attempt id.
fn write_attempts(db: &mut dyn Backend, experiment_id: i64, e: &SourceExperiment) -> DbResult<HashMap<i64, i64>> {
    let col = |name: &str| ATTEMPT_DATA.iter().position(|c| *c == name).unwrap_or(0);
    let mut ids = HashMap::new();
    for (source_id, row) in &e.attempts {
        let v = row.values();
        let (block, number, status) = (&v[col("block")], &v[col("attempt")], &v[col("status")]);
        let (host, started) = (&v[col("host")], &v[col("started_at")]);
        let found = db.query(
            "SELECT id, status FROM block_attempts WHERE experiment_id = ?1 AND block = ?2 AND started_at = ?3 \
             AND coalesce(host, '') = coalesce(?4, '')",
            &[Value::Int(experiment_id), block.clone(), started.clone(), host.clone()],
        )?;
        let id = match found.first() {
            Some(existing) => {
                let id: i64 = existing.get(0)?;
                if existing.get::<String>(1)? == "running" && *status != Value::Text("running".into()) {
                    db.execute(
                        "UPDATE block_attempts SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
                        &[Value::Int(id), status.clone(), v[col("error")].clone(), v[col("finished_at")].clone()],
                    )?;
                }
                id
            }
            None => {
                let taken = !db
                    .query(
                        "SELECT id FROM block_attempts WHERE experiment_id = ?1 AND block = ?2 AND attempt = ?3",
                        &[Value::Int(experiment_id), block.clone(), number.clone()],
                    )?
                    .is_empty();
                let mut values = vec![Value::Int(experiment_id)];
                values.extend_from_slice(v);
                if taken {
                    values[1 + col("attempt")] = db
                        .query(
                            "SELECT coalesce(max(attempt), 0) + 1 FROM block_attempts WHERE experiment_id = ?1 AND block = ?2",
                            &[Value::Int(experiment_id), block.clone()],
                        )?
                        .remove(0)
                        .values()[0]
                        .clone();
                }
                let sql = format!(
                    "INSERT INTO block_attempts (experiment_id, {}) VALUES (?1, {}) RETURNING id",
                    ATTEMPT_DATA.join(", "),
                    placeholders(2, ATTEMPT_DATA.len())
                );
                db.query(&sql, &values)?.remove(0).get(0)?
            }
        };
        ids.insert(*source_id, id);
    }
    Ok(ids)
}

/// Copies `e` into the destination (inside its transaction); returns (added, runs copied, runs unchanged).
fn write_experiment(db: &mut dyn Backend, e: &SourceExperiment) -> DbResult<(bool, usize, usize)> {
    let existing = db.query("SELECT id FROM experiments WHERE uid = ?1", &e.data[..1])?;
    let (experiment_id, added) = match existing.first() {
        Some(row) => (row.get::<i64>(0)?, false),
        None => {
            let sql = format!(
                "INSERT INTO experiments ({}) VALUES ({}) RETURNING id",
                EXPERIMENT_DATA.join(", "),
                placeholders(1, EXPERIMENT_DATA.len())
            );
            (db.query(&sql, &e.data)?.remove(0).get(0)?, true)
        }
    };
    let mut cell_ids: HashMap<String, i64> = HashMap::new();
    for row in db.query("SELECT key, id FROM cells WHERE experiment_id = ?1", params![experiment_id])? {
        cell_ids.insert(row.get(0)?, row.get(1)?);
    }
    for cell in &e.cells {
        let key: String = cell.get(0)?;
        if cell_ids.contains_key(&key) {
            continue;
        }
        let sql = format!(
            "INSERT INTO cells (experiment_id, {}) VALUES (?1, {}) RETURNING id",
            CELL_DATA.join(", "),
            placeholders(2, CELL_DATA.len())
        );
        let mut values = vec![Value::Int(experiment_id)];
        values.extend_from_slice(cell.values());
        let id: i64 = db.query(&sql, &values)?.remove(0).get(0)?;
        cell_ids.insert(key, id);
    }
    let attempt_ids = write_attempts(db, experiment_id, e)?;
    let (mut copied, mut unchanged) = (0, 0);
    for run in &e.runs {
        let attempt: Value = run.attempt.and_then(|a| attempt_ids.get(&a).copied()).into();
        let cell_id =
            *cell_ids.get(&run.cell_key).ok_or_else(|| DbError(format!("cell '{}' is missing", run.cell_key)))?;
        let variable_set = run.variables.as_deref().map(|v| variable_set_json(db, v)).transpose()?;
        let repetition = &run.data[0];
        let found = db.query(
            "SELECT id, status FROM runs WHERE cell_id = ?1 AND repetition = ?2",
            &[Value::Int(cell_id), repetition.clone()],
        )?;
        let source_done = run.data[2] == Value::Text("done".into());
        match found.first() {
            None => {
                let sql = format!(
                    "INSERT INTO runs (experiment_id, cell_id, variable_set_id, {}) VALUES (?1, ?2, ?3, {}) RETURNING id",
                    RUN_DATA.join(", "),
                    placeholders(4, RUN_DATA.len())
                );
                let mut values = vec![Value::Int(experiment_id), Value::Int(cell_id), variable_set.into()];
                values.extend_from_slice(&run.data);
                let id: i64 = db.query(&sql, &values)?.remove(0).get(0)?;
                db.execute("UPDATE runs SET attempt_id = ?2 WHERE id = ?1", &[Value::Int(id), attempt.clone()])?;
                write_children(db, id, run)?;
                copied += 1;
            }
            Some(row) if source_done && row.get::<String>(1)? != "done" => {
                let id: i64 = row.get(0)?;
                // Everything but repetition and order_index, which identify the run and do not change.
                let set: Vec<String> =
                    RUN_DATA[2..].iter().enumerate().map(|(i, c)| format!("{c} = ?{}", i + 3)).collect();
                let sql = format!(
                    "UPDATE runs SET variable_set_id = ?2, attempt_id = ?{}, {} WHERE id = ?1",
                    RUN_DATA.len() + 1,
                    set.join(", ")
                );
                let mut values = vec![Value::Int(id), variable_set.into()];
                values.extend_from_slice(&run.data[2..]);
                values.push(attempt.clone());
                clear_measurements(db, id)?;
                db.execute(&sql, &values)?;
                write_children(db, id, run)?;
                copied += 1;
            }
            Some(_) => unchanged += 1,
        }
    }
    if !added && copied > 0 {
        // The destination's experiment now has what the source's had; so is its status.
        let status = e.data[EXPERIMENT_DATA.iter().position(|c| *c == "status").unwrap_or(6)].clone();
        db.execute("UPDATE experiments SET status = ?2 WHERE id = ?1", &[Value::Int(experiment_id), status])?;
    }
    Ok((added, copied, unchanged))
}

impl Store {
    /// Copies every experiment of this store into `dest`; see the module documentation.
    ///
    /// Errors: naming the source or the destination; experiments copied before the failing one stay
    /// copied, the failing one is not half-written.
    pub fn copy_into(&self, dest: &mut Store) -> Result<CopyReport> {
        let mut report = CopyReport::default();
        let src_err = |e| store_err(self.path(), "cannot read for copying", e);
        let cols: Vec<String> = EXPERIMENT_DATA.to_vec().into_iter().map(String::from).collect();
        let rows = self
            .db
            .borrow_mut()
            .query(&format!("SELECT id, {} FROM experiments ORDER BY id", cols.join(", ")), &[])
            .map_err(src_err)?;
        for row in rows {
            let id: i64 = row.get(0).map_err(src_err)?;
            let e = read_experiment(self.db.borrow_mut().as_mut(), id, row.values()[1..].to_vec()).map_err(src_err)?;
            let shown = dest.shown.clone();
            let (added, copied, unchanged) = in_transaction(dest.db.get_mut().as_mut(), |db| write_experiment(db, &e))
                .map_err(|err| {
                    store_err(&shown, format_args!("cannot copy experiment {id} from {}", self.path().display()), err)
                })?;
            if added {
                report.experiments_added += 1;
            } else {
                report.experiments_present += 1;
            }
            report.runs_copied += copied;
            report.runs_unchanged += unchanged;
        }
        // After the experiments, so that a calibration points at the copy of its A/A experiment.
        let shown = dest.shown.clone();
        let mut src = self.db.borrow_mut();
        (report.calibrations_copied, report.calibrations_present) =
            in_transaction(dest.db.get_mut().as_mut(), |db| super::calibrations::copy_calibrations(src.as_mut(), db))
                .map_err(|err| {
                store_err(&shown, format_args!("cannot copy the calibrations of {}", self.path().display()), err)
            })?;
        Ok(report)
    }
}
