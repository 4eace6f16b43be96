//! Measured runs that the store could not take: when a finished run's write fails (a full disk, a lost
//! connection, a read-only file), the run is written to a recovery file instead, and `versus import
//! FILE` stores it later. Nothing measured is lost.
//!
//! The file is JSON (0600), written next to the store when that directory takes it, else in the
//! system's temporary directory. It names the store, the experiment (by uid, so that it cannot be
//! imported into another store's run with the same id) and the run.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::{RunResult, Status};
use super::{Location, Store};
use crate::error::{Error, Result};

/// What a recovery file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovered {
    /// Always "versus-recovered-run", so that other JSON is not taken for one.
    pub kind: String,
    /// The store the run belongs to (a path, or a URL without its password).
    pub store: String,
    /// The experiment's id in that store.
    pub experiment_id: i64,
    /// The experiment's uid, checked on import.
    pub experiment_uid: String,
    /// The run's id in that store.
    pub run_id: i64,
    /// Why the store did not take it.
    pub error: String,
    /// Everything measured.
    pub result: RunResult,
}

const KIND: &str = "versus-recovered-run";

impl Store {
    /// Writes run `run_id` of experiment `experiment_id`, which the store refused with `error`, to a
    /// recovery file; returns its path. Tries the store's directory, then the temporary directory.
    pub fn save_recovery(&self, experiment_id: i64, run_id: i64, result: &RunResult, error: &Error) -> Result<PathBuf> {
        let uid = self.experiment_uid(experiment_id).unwrap_or_default();
        let record = Recovered {
            kind: KIND.into(),
            store: self.location().to_string(),
            experiment_id,
            experiment_uid: uid,
            run_id,
            error: error.to_string(),
            result: result.clone(),
        };
        let text = serde_json::to_vec_pretty(&record).map_err(|e| Error::Other(format!("recovery file: {e}")))?;
        let stem = match self.location() {
            Location::Sqlite(p) => p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or("results".into()),
            Location::Postgres(_) => "versus-store".into(),
        };
        let name = format!("{stem}.experiment-{experiment_id}.run-{run_id}.recovery.json");
        let mut dirs = Vec::new();
        if let Location::Sqlite(p) = self.location() {
            dirs.push(p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf());
        }
        dirs.push(std::env::temp_dir());
        let mut tried = Vec::new();
        for dir in dirs {
            let path = dir.join(&name);
            match write_new(&path, &text) {
                Ok(()) => return Ok(path),
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        Err(Error::Other(format!("cannot write a recovery file ({})", tried.join("; "))))
    }

    /// Stores a recovered run (`versus import`). Refuses a file of another store's experiment and a run
    /// that is already stored.
    pub fn import_recovered(&mut self, r: &Recovered) -> Result<()> {
        let uid = self.experiment_uid(r.experiment_id)?;
        if uid != r.experiment_uid {
            return Err(self.err(format!(
                "experiment {} here is not the experiment of the recovery file (it belongs to {}); pass --db {}",
                r.experiment_id, r.store, r.store
            )));
        }
        let run = self
            .runs(r.experiment_id)?
            .into_iter()
            .find(|x| x.id == r.run_id)
            .ok_or_else(|| self.err(format!("experiment {} has no run {}", r.experiment_id, r.run_id)))?;
        match run.status {
            Status::Running => self.finish_run(r.run_id, &r.result),
            Status::Done => Err(self.err(format!("run {} is stored already; nothing to import", r.run_id))),
            other => Err(self.err(format!(
                "run {} is {other} now (it was run again or changed since); the recovery file is not imported",
                r.run_id
            ))),
        }
    }

    /// The uid of experiment `id`.
    fn experiment_uid(&self, id: i64) -> Result<String> {
        let rows = self
            .db
            .borrow_mut()
            .query("SELECT uid FROM experiments WHERE id = ?1", super::backend::params![id])
            .map_err(|e| self.err(e))?;
        let row = rows.first().ok_or_else(|| self.err(format!("no experiment with id {id}")))?;
        row.get::<String>(0).map_err(|e| self.err(e))
    }
}

/// Reads a recovery file.
pub fn load(path: &Path) -> Result<Recovered> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::file(path, e))?;
    let r: Recovered =
        serde_json::from_str(&text).map_err(|e| Error::file(path, format!("not a versus recovery file: {e}")))?;
    if r.kind != KIND {
        return Err(Error::file(path, "not a versus recovery file"));
    }
    Ok(r)
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        let _ = crate::owned::discard_created(path, &f);
    }
    written
}
