//! Measured runs that the store could not take: when a finished run's write fails (a full disk, a lost
//! connection, a read-only file), the run is written to a recovery file instead, and `versus import
//! FILE` stores it later. Nothing measured is lost.
//!
//! The file is JSON (0600), written next to the store when that directory takes it, else in the
//! system's temporary directory, under a name of its own ([`unique_name`]: stores of the same file name
//! fail over to the same temporary directory), created exclusively. It names the store, the experiment (by uid, so that it cannot be
//! imported into another store's run with the same id) and the run.
//!
//! Every command that opens the store to write imports the recovery files waiting for it
//! ([`Store::import_pending`]); a command that only reads names each one with the exact `versus import`
//! command ([`Store::pending_notices`]). An imported file is renamed to `….recovery.json.imported`
//! (kept, never deleted), and the store refuses a run that is stored already, so nothing is imported
//! twice.

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

/// The `kind` of every recovery file.
pub const KIND: &str = "versus-recovered-run";

/// How the name of every recovery file ends (before it is imported).
const SUFFIX: &str = ".recovery.json";

/// What an imported recovery file is renamed with.
const IMPORTED: &str = ".imported";

/// Renames the imported file `path` to `….imported` (or `….imported.N` when that name is taken: a file
/// already there is never replaced); `None` when it could not be renamed.
fn set_aside(path: &Path) -> Option<PathBuf> {
    for n in 0..100 {
        let mut name = path.as_os_str().to_owned();
        name.push(IMPORTED);
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let to = PathBuf::from(name);
        // A hard link fails on an existing name, where a rename would replace it.
        match std::fs::hard_link(path, &to) {
            Ok(()) => return std::fs::remove_file(path).is_ok().then_some(to),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// The stem of this store's recovery file names.
fn stem(location: &Location) -> String {
    match location {
        Location::Sqlite(p) => p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or("results".into()),
        Location::Postgres(_) => "versus-store".into(),
    }
}

/// The name (without [`SUFFIX`]) of a recovery file for run `run_id` of experiment `experiment_id`:
/// the store's file name and the ids, then a hash of the store's identity (its canonical path or URL),
/// the process and the time, so that two stores with the same file name (every default store is
/// `results.db`) failing over to the same temporary directory never share a name.
fn unique_name(location: &Location, experiment_id: i64, run_id: i64) -> String {
    let identity = match location {
        Location::Sqlite(p) => p.canonicalize().unwrap_or_else(|_| p.clone()).display().to_string(),
        Location::Postgres(_) => location.to_string(),
    };
    let store = identity.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!(
        "{}.experiment-{experiment_id}.run-{run_id}.{store:016x}-{}-{}{:09}",
        stem(location),
        std::process::id(),
        now.as_secs(),
        now.subsec_nanos()
    )
}

/// The directories recovery files of `location` are written to, in order.
fn recovery_dirs(location: &Location) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Location::Sqlite(p) = location {
        dirs.push(p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf());
    }
    dirs.push(std::env::temp_dir());
    dirs
}

/// True when `recorded` (a recovery file's `store`) names the store at `location`.
fn same_store(recorded: &str, location: &Location) -> bool {
    match (Location::parse(recorded), location) {
        (Location::Sqlite(a), Location::Sqlite(b)) => match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == *b,
        },
        (a, b) => a.to_string() == b.to_string(),
    }
}

impl Store {
    /// Writes run `run_id` of experiment `experiment_id`, which the store refused with `error`, to a
    /// recovery file; returns its path. Tries the store's directory, then the temporary directory.
    pub fn save_recovery(&self, experiment_id: i64, run_id: i64, result: &RunResult, error: &Error) -> Result<PathBuf> {
        // Without its uid the file could never be imported: refuse rather than write one.
        let uid = self.experiment_uid(experiment_id).map_err(|e| {
            Error::Other(format!(
                "cannot write a recovery file: the uid of experiment {experiment_id} is unknown ({e})"
            ))
        })?;
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
        let name = unique_name(self.location(), experiment_id, run_id);
        let mut tried = Vec::new();
        for dir in recovery_dirs(self.location()) {
            // The name is unique to this store, process and moment; a file there all the same is
            // someone else's: never replaced, another name is taken.
            for attempt in 0..8 {
                let path = dir.join(if attempt == 0 {
                    format!("{name}{SUFFIX}")
                } else {
                    format!("{name}-{attempt}{SUFFIX}")
                });
                match write_new(&path, &text) {
                    Ok(()) => return Ok(path),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => {
                        tried.push(format!("{}: {e}", path.display()));
                        break;
                    }
                }
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

    /// Imports the recovery file at `path` (`versus import`, and [`Store::import_pending`]): stores its
    /// run, brings the experiment's status up to date when no run is left to do, and renames the file
    /// to `….imported`; returns what it held and the new name (`None` when the file could not be
    /// renamed; the run is stored all the same and a second import is refused).
    pub fn import_file(&mut self, path: &Path) -> Result<(Recovered, Option<PathBuf>)> {
        let r = load(path)?;
        self.import_recovered(&r)?;
        if self.pending_runs(r.experiment_id)?.is_empty() {
            let status = self.finished_status(r.experiment_id)?;
            self.set_experiment_status(r.experiment_id, status)?;
        }
        Ok((r, set_aside(path)))
    }

    /// The recovery files waiting for this store: named for it, in the directories
    /// [`Store::save_recovery`] writes to, recording this store, not imported yet.
    pub fn pending_recoveries(&self) -> Vec<PathBuf> {
        let prefix = format!("{}.experiment-", stem(self.location()));
        let mut found = Vec::new();
        for dir in recovery_dirs(self.location()) {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut here: Vec<PathBuf> = entries
                .flatten()
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with(&prefix) && n.ends_with(SUFFIX)
                })
                .map(|e| e.path())
                .filter(|p| load(p).is_ok_and(|r| same_store(&r.store, self.location())))
                .filter(|p| !found.iter().any(|f: &PathBuf| same_file(f, p)))
                .collect();
            here.sort();
            found.extend(here);
        }
        found
    }

    /// Imports every recovery file waiting for this store (done by every command that opens the store
    /// to write); returns one line per file, for stderr: what was stored, or why a file was not and the
    /// command that stores it.
    pub fn import_pending(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        for path in self.pending_recoveries() {
            lines.push(match self.import_file(&path) {
                Ok((r, renamed)) => format!(
                    "versus: imported run {} of experiment {} from {} (measured, but the store could not take it \
                     then){}",
                    r.run_id,
                    r.experiment_id,
                    path.display(),
                    renamed.map(|p| format!("; the file is now {}", p.display())).unwrap_or_default()
                ),
                Err(e) => format!("versus: notice: {} was not imported: {e}", path.display()),
            });
        }
        lines
    }

    /// One line per recovery file waiting for this store, with the command that stores it (for
    /// commands that only read the store).
    pub fn pending_notices(&self) -> Vec<String> {
        self.pending_recoveries()
            .iter()
            .map(|p| {
                let what = load(p).map(|r| format!("run {} of experiment {}", r.run_id, r.experiment_id));
                format!(
                    "versus: notice: {} holds {} (measured, not stored yet); `versus import {}` stores it",
                    p.display(),
                    what.unwrap_or_else(|_| "a measured run".into()),
                    crate::shell::quote(&p.display().to_string())
                )
            })
            .collect()
    }

    /// The uid of experiment `id`, remembered once known (a run loop asks before it measures, so that a
    /// recovery file written after the store is lost still names its experiment). Never empty.
    pub fn experiment_uid(&self, id: i64) -> Result<String> {
        if let Some(uid) = self.uids.borrow().get(&id) {
            return Ok(uid.clone());
        }
        let rows = self
            .db
            .borrow_mut()
            .query("SELECT uid FROM experiments WHERE id = ?1", super::backend::params![id])
            .map_err(|e| self.err(e))?;
        let row = rows.first().ok_or_else(|| self.err(format!("no experiment with id {id}")))?;
        let uid = row.get::<Option<String>>(0).map_err(|e| self.err(e))?.unwrap_or_default();
        if uid.is_empty() {
            return Err(self.err(format!("experiment {id} has no uid")));
        }
        self.uids.borrow_mut().insert(id, uid.clone());
        Ok(uid)
    }
}

/// Reads a recovery file.
pub fn load(path: &Path) -> Result<Recovered> {
    let text = crate::input::read_text(path)?;
    let r: Recovered =
        serde_json::from_str(&text).map_err(|e| Error::file(path, format!("not a versus recovery file: {e}")))?;
    if r.kind != KIND {
        return Err(Error::file(path, "not a versus recovery file"));
    }
    Ok(r)
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        let _ = crate::owned::discard_created(path, &f);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_imported_file_is_set_aside_without_replacing_one_already_there() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.recovery.json");
        let taken = dir.path().join("a.recovery.json.imported");
        std::fs::write(&file, "new").unwrap();
        std::fs::write(&taken, "old").unwrap();
        let to = set_aside(&file).expect("set aside");
        assert_eq!(to, dir.path().join("a.recovery.json.imported.1"));
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "old", "the earlier file was replaced");
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "new");
        assert!(!file.exists());
    }
}
