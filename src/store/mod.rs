//! The results store: every experiment, cell and run versus performs, kept in one SQLite file for later
//! comparison. The schema is documented in docs/store.md; it is versioned with `PRAGMA user_version`
//! and migrated forward on open by the SQL files under `migrations/`.
//!
//! Passwords never reach the database: definitions, workload options and commands are passed through
//! [`scrub_toml`] / [`scrub_json`] before they are written.

mod migrate;
pub mod model;
mod secrets;
mod sqlite;

use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

pub use migrate::latest_version;
pub use model::{
    Cell, Experiment, ExperimentSummary, Interval, NewCell, NewExperiment, NewRun, RunDetail, RunResult, RunRow,
    StartRun, Status, StoredHistogram, Summary,
};
pub use secrets::{REDACTED, content_hash, is_secret_key, scrub_arg, scrub_json, scrub_toml};

/// How long a writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open results store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed, with its parent directory) the store at `path` and migrates it to the
    /// current schema. WAL journal, foreign keys on, a 30 s busy timeout.
    ///
    /// Errors: [`Error::File`] naming `path` when it cannot be opened or written, when it is not a
    /// versus store, or when a newer versus wrote it.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let cannot = |why: &dyn std::fmt::Display| {
            Error::file(path, format!("cannot open the results store: {why}; pass --db with a writable path"))
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::owned::create_dir_all(parent).map_err(|e| cannot(&e))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| cannot(&e))?;
        // SQLite silently falls back to read-only for a write-protected file.
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(|e| cannot(&e))? {
            return Err(cannot(&"the file is read-only"));
        }
        Store::setup(conn, path, migrate::MIGRATIONS)
    }

    /// Sets the connection options and migrates with `migrations` (the real list, or a prefix in tests).
    fn setup(mut conn: Connection, path: &Path, migrations: &[migrate::Migration]) -> Result<Store> {
        let cannot = |why: &dyn std::fmt::Display| {
            Error::file(path, format!("cannot open the results store: {why}; pass --db with a writable path"))
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| cannot(&e))?;
        // Reading the journal mode is the first real access: a file that is not SQLite fails here.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| Error::file(path, format!("not a versus results store ({e}); pass --db with another path")))?;
        if mode != "wal" && mode != "memory" {
            tracing::debug!("results store {}: journal mode is {mode}, not wal", path.display());
        }
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| cannot(&e))?;
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
            .map_err(|e| cannot(&e))?;
        if version == 0 && tables > 0 {
            return Err(Error::file(
                path,
                "not a versus results store (an SQLite file with other tables); pass --db with another path",
            ));
        }
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| cannot(&e))?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| cannot(&e))?;
        migrate::migrate(&mut conn, migrations).map_err(|e| match e {
            migrate::MigrateError::TooNew { found, known } => Error::file(
                path,
                format!(
                    "the results store has schema version {found} but this versus knows only up to {known}; \
                     upgrade versus or pass --db with another path"
                ),
            ),
            migrate::MigrateError::Sql(step, e) => cannot(&format!("schema migration {step} failed: {e}")),
        })?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<u32> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.err(e))
    }

    /// An [`Error::File`] for a failed statement on this store.
    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::file(&self.path, format!("results store: {e}"))
    }
}

/// Encodes a latency histogram (µs) for [`StoredHistogram::data`]: HdrHistogram V2 + deflate, readable by
/// the other HdrHistogram ports.
pub fn encode_histogram(h: &Histogram<u64>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .map_err(|e| Error::Other(format!("cannot encode a latency histogram: {e}")))?;
    Ok(out)
}

/// Decodes [`StoredHistogram::data`] (V2, with or without deflate).
pub fn decode_histogram(data: &[u8]) -> Result<Histogram<u64>> {
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(data))
        .map_err(|e| Error::Other(format!("cannot decode a stored latency histogram: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_round_trip() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in [120u64, 250, 250, 900, 15_000, 1_200_000] {
            h.record(v).unwrap();
        }
        let data = encode_histogram(&h).unwrap();
        let back = decode_histogram(&data).unwrap();
        assert_eq!(back.len(), 6);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram(b"not a histogram").is_err());
    }

    #[test]
    fn migrates_an_empty_database_to_the_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("sub/dir/results.db")).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version());
        let tables: Vec<String> = store
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for t in [
            "cells",
            "efficiency",
            "experiments",
            "histograms",
            "intervals",
            "run_variables",
            "runs",
            "status_deltas",
            "variable_sets",
        ] {
            assert!(tables.iter().any(|x| x == t), "missing {t} in {tables:?}");
        }
        let fk: i64 = store.conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
        assert_eq!(fk, 1);
        let mode: String = store.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn database_one_version_behind_migrates_forward() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let all = migrate::MIGRATIONS;
        // A store at version N-1 (for N = 1 that is an empty file)…
        {
            let conn = Connection::open(&path).unwrap();
            let store = Store::setup(conn, &path, &all[..all.len() - 1]).unwrap();
            assert_eq!(store.schema_version().unwrap(), latest_version() - 1);
        }
        // …is brought to N by a plain open.
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version());
    }

    #[test]
    fn the_real_schema_accepts_a_further_migration() {
        // Simulates the next release: version N plus one more step, with data written at N kept.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        drop(Store::open(&path).unwrap());
        {
            let store = Store::open(&path).unwrap();
            store
                .conn
                .execute(
                    "INSERT INTO experiments (name, definition, definition_hash, created_at, seed, versus_version) \
                     VALUES ('e', '', 'h', 0, 1, 'test')",
                    [],
                )
                .unwrap();
        }
        let mut next = migrate::MIGRATIONS.to_vec();
        next.push(migrate::Migration { name: "next.sql", sql: "ALTER TABLE runs ADD COLUMN note TEXT;" });
        let conn = Connection::open(&path).unwrap();
        let store = Store::setup(conn, &path, &next).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version() + 1);
        let n: i64 = store.conn.query_row("SELECT count(*) FROM experiments", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        store.conn.execute("UPDATE runs SET note = 'x'", []).unwrap();
        drop(store);

        // And this versus, which knows only N, refuses the newer file with a clear message.
        let err = Store::open(&path).unwrap_err().to_string();
        assert!(err.contains("results.db"), "{err}");
        assert!(err.contains(&format!("schema version {}", latest_version() + 1)), "{err}");
        assert!(err.contains("upgrade versus"), "{err}");
    }

    #[test]
    fn unwritable_path_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("a-file");
        std::fs::write(&blocker, "x").unwrap();
        // A path under a regular file can be created by nobody, root included.
        let path = blocker.join("results.db");
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, Error::File { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("cannot open the results store"), "{msg}");
        assert!(msg.contains("pass --db with a writable path"), "{msg}");
    }

    #[test]
    fn another_programs_sqlite_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE notes (t TEXT);").unwrap();
        let msg = Store::open(&path).unwrap_err().to_string();
        assert!(msg.contains("other.db") && msg.contains("not a versus results store"), "{msg}");
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "this is not a database, just some text that is long enough ".repeat(20)).unwrap();
        let msg = Store::open(&path).unwrap_err().to_string();
        assert!(msg.contains("notes.txt") && msg.contains("not a versus results store"), "{msg}");
    }
}
