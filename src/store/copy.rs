//! `versus store copy`: every experiment of one store into another (SQLite ↔ PostgreSQL, or merging
//! per-task files). Experiments are matched by their uid, runs by (cell key, repetition), so copying
//! again adds nothing, and a run finished in the source completes the same run left unfinished in the
//! destination. Each experiment is copied in one destination transaction.

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
}

/// The experiment columns copied as they are.
const EXPERIMENT_DATA: &[&str] =
    &["uid", "name", "file", "definition", "definition_hash", "created_at", "status", "seed", "host", "versus_version"];
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
    ("efficiency", &["metric", "value"]),
];

/// `?from, ?from+1, …` for `n` values.
fn placeholders(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

/// One run as read from the source.
struct SourceRun {
    cell_key: String,
    variables: Option<String>,
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
    runs: Vec<SourceRun>,
}

fn read_experiment(db: &mut dyn Backend, id: i64, data: Vec<Value>) -> DbResult<SourceExperiment> {
    let cells = db.query(
        &format!("SELECT {} FROM cells WHERE experiment_id = ?1 ORDER BY id", CELL_DATA.join(", ")),
        params![id],
    )?;
    let cols: Vec<String> = RUN_DATA.iter().map(|c| format!("r.{c}")).collect();
    let rows = db.query(
        &format!(
            "SELECT r.id, c.key, v.variables, {} FROM runs r JOIN cells c ON c.id = r.cell_id \
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
            data: row.values()[3..].to_vec(),
            children,
        });
    }
    Ok(SourceExperiment { data, cells, runs })
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
    let (mut copied, mut unchanged) = (0, 0);
    for run in &e.runs {
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
                write_children(db, id, run)?;
                copied += 1;
            }
            Some(row) if source_done && row.get::<String>(1)? != "done" => {
                let id: i64 = row.get(0)?;
                // Everything but repetition and order_index, which identify the run and do not change.
                let set: Vec<String> =
                    RUN_DATA[2..].iter().enumerate().map(|(i, c)| format!("{c} = ?{}", i + 3)).collect();
                let sql = format!("UPDATE runs SET variable_set_id = ?2, {} WHERE id = ?1", set.join(", "));
                let mut values = vec![Value::Int(id), variable_set.into()];
                values.extend_from_slice(&run.data[2..]);
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
        Ok(report)
    }
}
