//! Noise bands measured by `versus calibrate`, per host class, workload, thread count and metric.
//! The latest one for a key is the one in use; older ones stay as the host's history.

use serde::{Deserialize, Serialize};

use super::Store;
use super::backend::{Backend, DbResult, Row, params};
use super::write::now;
use crate::error::Result;

/// A stored calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Row id (0 before it is stored).
    pub id: i64,
    /// Host class (`hc-…`, see [`crate::sampler::Fingerprint::class`]).
    pub host_class: String,
    /// The host, as [`crate::sampler::Fingerprint::describe`] says it.
    pub host: String,
    /// Workload name (as runs store it, e.g. `oltp_read_only`).
    pub workload: String,
    /// Client threads.
    pub threads: u32,
    /// The metric (`tps`).
    pub metric: String,
    /// Repetitions per side of the A/A pair.
    pub repetitions: u32,
    /// Between-repetition coefficient of variation (a fraction).
    pub cv: f64,
    /// The noise band (a fraction).
    pub band: f64,
    /// Confidence of the A/A interval the band comes from.
    pub confidence: f64,
    /// The A/A experiment that measured it.
    pub experiment_id: Option<i64>,
    /// The target measured twice (`BUILD` or `BUILD:NAME=VALUE,…`).
    pub target: String,
    /// When it was stored (Unix seconds).
    pub created_at: i64,
}

const COLUMNS: &str = "id, host_class, host, workload, threads, metric, repetitions, cv, band, confidence, \
                       experiment_id, target, created_at";

fn from_row(r: &Row) -> DbResult<Calibration> {
    Ok(Calibration {
        id: r.get(0)?,
        host_class: r.get(1)?,
        host: r.get(2)?,
        workload: r.get(3)?,
        threads: r.get(4)?,
        metric: r.get(5)?,
        repetitions: r.get(6)?,
        cv: r.get(7)?,
        band: r.get(8)?,
        confidence: r.get(9)?,
        experiment_id: r.get(10)?,
        target: r.get(11)?,
        created_at: r.get(12)?,
    })
}

impl Store {
    /// Stores `c` (its `id` and `created_at` are set here) and returns its id.
    pub fn save_calibration(&mut self, c: &Calibration) -> Result<i64> {
        let rows = self
            .db
            .get_mut()
            .query(
                "INSERT INTO noise_calibrations (host_class, host, workload, threads, metric, repetitions, cv, band, \
                 confidence, experiment_id, target, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
                params![
                    c.host_class.as_str(),
                    c.host.as_str(),
                    c.workload.as_str(),
                    c.threads,
                    c.metric.as_str(),
                    c.repetitions,
                    c.cv,
                    c.band,
                    c.confidence,
                    c.experiment_id,
                    c.target.as_str(),
                    now()
                ],
            )
            .map_err(|e| self.err(format!("cannot store the calibration: {e}")))?;
        rows.first()
            .ok_or_else(|| self.err("the calibration got no id"))
            .and_then(|r| r.get(0).map_err(|e| self.err(e)))
    }

    /// The calibrations of `host_class` (every one when `None`), newest first.
    pub fn calibrations(&self, host_class: Option<&str>) -> Result<Vec<Calibration>> {
        // Two statements: PostgreSQL cannot type a parameter that is only compared with NULL.
        let order = "ORDER BY created_at DESC, id DESC";
        let rows = match host_class {
            Some(class) => self.db.borrow_mut().query(
                &format!("SELECT {COLUMNS} FROM noise_calibrations WHERE host_class = ?1 {order}"),
                params![class],
            ),
            None => self.db.borrow_mut().query(&format!("SELECT {COLUMNS} FROM noise_calibrations {order}"), &[]),
        }
        .map_err(|e| self.err(e))?;
        rows.iter().map(from_row).collect::<DbResult<_>>().map_err(|e| self.err(e))
    }

    /// The calibration in use for this host class, workload, thread count and metric: the latest.
    pub fn calibration_for(
        &self,
        host_class: &str,
        workload: &str,
        threads: u32,
        metric: &str,
    ) -> Result<Option<Calibration>> {
        Ok(self
            .calibrations(Some(host_class))?
            .into_iter()
            .find(|c| c.workload == workload && c.threads == threads && c.metric == metric))
    }
}

/// Copies every calibration of `src` that `dest` lacks (`versus store copy`), keeping its time and
/// pointing it at the destination's copy of its A/A experiment (matched by uid; none when that
/// experiment is not there). A calibration is the same when its key, target, band and time are:
/// copying again adds nothing. Returns (copied, already there).
pub(super) fn copy_calibrations(src: &mut dyn Backend, dest: &mut dyn Backend) -> DbResult<(usize, usize)> {
    let rows = src.query(
        "SELECT c.host_class, c.host, c.workload, c.threads, c.metric, c.repetitions, c.cv, c.band, c.confidence, \
         e.uid, c.target, c.created_at FROM noise_calibrations c LEFT JOIN experiments e ON e.id = c.experiment_id \
         ORDER BY c.id",
        &[],
    )?;
    let (mut copied, mut present) = (0, 0);
    for r in rows {
        let (class, workload, threads, metric): (String, String, i64, String) =
            (r.get(0)?, r.get(2)?, r.get(3)?, r.get(4)?);
        let (band, target, created_at): (f64, String, i64) = (r.get(7)?, r.get(10)?, r.get(11)?);
        let same = dest.query(
            "SELECT id FROM noise_calibrations WHERE host_class = ?1 AND workload = ?2 AND threads = ?3 \
             AND metric = ?4 AND target = ?5 AND band = ?6 AND created_at = ?7",
            params![class.as_str(), workload.as_str(), threads, metric.as_str(), target.as_str(), band, created_at],
        )?;
        if !same.is_empty() {
            present += 1;
            continue;
        }
        let experiment: Option<i64> = match r.get::<Option<String>>(9)? {
            Some(uid) => dest
                .query("SELECT id FROM experiments WHERE uid = ?1", params![uid.as_str()])?
                .first()
                .map(|row| row.get(0))
                .transpose()?,
            None => None,
        };
        let (host, repetitions, cv, confidence): (String, i64, f64, f64) = (r.get(1)?, r.get(5)?, r.get(6)?, r.get(8)?);
        dest.query(
            "INSERT INTO noise_calibrations (host_class, host, workload, threads, metric, repetitions, cv, band, \
             confidence, experiment_id, target, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
            params![
                class.as_str(),
                host.as_str(),
                workload.as_str(),
                threads,
                metric.as_str(),
                repetitions,
                cv,
                band,
                confidence,
                experiment,
                target.as_str(),
                created_at
            ],
        )?;
        copied += 1;
    }
    Ok((copied, present))
}

#[cfg(test)]
impl Calibration {
    /// A calibration for tests: tps of `workload` at `threads` on a 2-CPU host of `host_class`, 5
    /// repetitions of target `system`, a CV of 3 % and `band` at 95 %.
    pub(crate) fn example(host_class: &str, workload: &str, threads: u32, band: f64) -> Calibration {
        Calibration {
            id: 0,
            host_class: host_class.into(),
            host: "2 cpus".into(),
            workload: workload.into(),
            threads,
            metric: "tps".into(),
            repetitions: 5,
            cv: 0.03,
            band,
            confidence: 0.95,
            experiment_id: None,
            target: "system".into(),
            created_at: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(workload: &str, threads: u32, band: f64) -> Calibration {
        Calibration::example("hc-0123456789ab", workload, threads, band)
    }

    #[test]
    fn the_latest_calibration_of_a_key_is_the_one_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("r.db")).unwrap();
        assert_eq!(store.calibration_for("hc-0123456789ab", "oltp_read_only", 1, "tps").unwrap(), None);
        store.save_calibration(&cal("oltp_read_only", 1, 0.05)).unwrap();
        let id = store.save_calibration(&cal("oltp_read_only", 1, 0.04)).unwrap();
        store.save_calibration(&cal("oltp_read_only", 4, 0.09)).unwrap();
        let c = store.calibration_for("hc-0123456789ab", "oltp_read_only", 1, "tps").unwrap().unwrap();
        assert_eq!((c.id, c.band), (id, 0.04));
        assert_eq!(store.calibration_for("hc-0123456789ab", "oltp_read_only", 4, "tps").unwrap().unwrap().band, 0.09);
        assert_eq!(store.calibration_for("hc-other", "oltp_read_only", 1, "tps").unwrap(), None);
        assert_eq!(store.calibration_for("hc-0123456789ab", "oltp_write_only", 1, "tps").unwrap(), None);
        assert_eq!(store.calibrations(None).unwrap().len(), 3);
    }
}
