//! The results store: every experiment, cell and run versus performs, kept for later comparison in a
//! local SQLite file or a team's shared PostgreSQL database. The schema is documented in docs/store.md;
//! it is versioned and migrated forward on open by the SQL files under `migrations/` (one per engine).
//!
//! Callers see one [`Store`]; the engine behind it is a [`backend::Backend`] (`sqlite.rs`,
//! `postgres.rs`), and the queries are written once (`write.rs`, `read.rs`, `copy.rs`).
//!
//! Passwords never reach the database: definitions, workload options and commands are passed through
//! [`scrub_toml`] / [`scrub_json`] before they are written.

pub(crate) mod backend;
mod blocks;
mod calibrations;
mod copy;
mod migrate;
pub mod model;
#[cfg(feature = "postgres")]
mod postgres;
mod read;
pub mod recovery;
mod secrets;
mod sqlite;
pub use sqlite::SQLITE_HEADER;
mod write;

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use crate::error::{Error, Result};
use backend::{Backend, Engine};

pub use blocks::{Attempt, AttemptHost, AttemptStatus, BlockStart, canonical_attempts};
pub use calibrations::Calibration;
pub use copy::CopyReport;
pub use migrate::latest_version;
pub use model::{
    Cell, Experiment, ExperimentSummary, Interval, NewCell, NewExperiment, NewRun, ReplicaSecond, RunDetail, RunResult,
    RunRow, StartRun, Status, StoredHistogram, Summary,
};
pub use secrets::{REDACTED, content_hash, is_secret_key, scrub_arg, scrub_json, scrub_toml};

/// Environment variable naming the results store (as `--db` does).
pub const DB_ENV: &str = "VERSUS_DB";

/// Where a results store lives: what `--db` and `VERSUS_DB` name.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A local SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database: `postgres://user[:password]@host[:port]/db[?param=value…]`.
    Postgres(String),
}

impl Location {
    /// Reads a `--db` value: a `postgres://` or `postgresql://` URL, else a file path.
    pub fn parse(spec: &str) -> Location {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            Location::Postgres(spec.to_string())
        } else {
            Location::Sqlite(PathBuf::from(spec))
        }
    }

    /// True when the store can be opened: a PostgreSQL URL (the server decides), or a file that exists.
    pub fn exists(&self) -> bool {
        match self {
            Location::Sqlite(p) => p.exists(),
            Location::Postgres(_) => true,
        }
    }
}

impl fmt::Display for Location {
    /// The file path, or the URL with its password redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(url) => f.write_str(&scrub_arg(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

/// An open results store.
#[derive(Debug)]
pub struct Store {
    /// The connection; reads borrow it through `&Store`, so callers that only read need no `mut`.
    db: RefCell<Box<dyn Backend>>,
    location: Location,
    /// [`Location`] as a path, for [`Store::path`].
    shown: PathBuf,
    /// Uids of the experiments this handle created, found or looked up: a recovery file written when
    /// the store has become unreachable still names its experiment.
    uids: RefCell<std::collections::BTreeMap<i64, String>>,
}

impl Store {
    /// Opens (creating if needed, with its parent directory) the SQLite store at `path` and migrates it
    /// to the current schema. WAL journal, foreign keys on, a 30 s busy timeout.
    ///
    /// Errors: [`Error::File`] naming `path` when it cannot be opened or written, when it is not a
    /// versus store, or when a newer versus wrote it.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let db = sqlite::Sqlite::open(path)?;
        Store::setup(Box::new(db), Location::Sqlite(path.to_path_buf()), migrate::MIGRATIONS)
    }

    /// What opening the store at `location` to write would refuse, found without writing anything (a
    /// dry run's check): a SQLite path that is a directory, a file that cannot be written, another
    /// program's database, a store of a newer versus. A file that does not exist yet passes (the real
    /// run creates it), and so does a PostgreSQL URL (connecting is left to the real run).
    pub fn check_writable(location: &Location) -> Result<()> {
        let Location::Sqlite(path) = location else { return Ok(()) };
        let cannot = |why: &dyn fmt::Display| {
            Error::file(path, format!("cannot open the results store: {why}; pass --db with a writable path"))
        };
        if !path.exists() {
            let ancestor = path.ancestors().skip(1).find(|a| a.exists());
            return match ancestor {
                Some(a) if !a.as_os_str().is_empty() && !a.is_dir() => {
                    Err(cannot(&format!("{} is not a directory", a.display())))
                }
                _ => Ok(()),
            };
        }
        if path.is_dir() {
            return Err(cannot(&"it is a directory"));
        }
        std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| cannot(&e))?;
        let mut db = sqlite::Sqlite::open_read_only(path)?;
        if db.is_foreign().map_err(|e| cannot(&e))? {
            return Err(Error::file(
                path,
                "not a versus results store (an SQLite file with other tables); pass --db with another path",
            ));
        }
        let found = db.schema_version().map_err(|e| cannot(&e))?;
        let known = migrate::MIGRATIONS.len() as i64;
        if found > known {
            return Err(Error::file(
                path,
                format!(
                    "the results store has schema version {found} but this versus knows only up to {known}; \
                     upgrade versus or pass --db with another path"
                ),
            ));
        }
        Ok(())
    }

    /// Opens the store at `location` to read it (`runs`, `show`, `compare`, `report`): as
    /// [`Store::connect`] when it can be written, else a SQLite file that is write-protected (or on a
    /// read-only disk) read as it is, which must then have the current schema.
    pub fn connect_read(location: &Location) -> Result<Store> {
        let Location::Sqlite(path) = location else { return Store::connect(location) };
        let writable = std::fs::OpenOptions::new().read(true).write(true).open(path).is_ok();
        if writable || !path.exists() {
            return Store::open(path);
        }
        let mut db = sqlite::Sqlite::open_read_only(path)?;
        let version = db.schema_version().map_err(|e| Error::file(path, format!("results store: {e}")))?;
        let known = migrate::MIGRATIONS.len() as i64;
        if version != known {
            return Err(Error::file(
                path,
                format!(
                    "the results store is read-only and has schema version {version}, this versus reads {known}; \
                     make it writable once so that versus can migrate it (or use a versus of its version)"
                ),
            ));
        }
        let shown = path.to_path_buf();
        Ok(Store { db: RefCell::new(Box::new(db)), location: location.clone(), shown, uids: RefCell::default() })
    }

    /// Opens the store at `location`: a SQLite file (as [`Store::open`]) or a PostgreSQL database, which
    /// must exist; its tables are created or migrated like a file's.
    ///
    /// Errors: a one-line [`Error::File`] naming the location (never its password) when it cannot be
    /// reached, is another program's database, or was written by a newer versus.
    pub fn connect(location: &Location) -> Result<Store> {
        match location {
            Location::Sqlite(path) => Store::open(path),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                let db = postgres::Postgres::connect(url, &location.to_string())?;
                Store::setup(Box::new(db), location.clone(), migrate::MIGRATIONS)
            }
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => Err(Error::option(
                "--db",
                format!(
                    "{location}: this versus was built without PostgreSQL support; rebuild with --features postgres"
                ),
            )),
        }
    }

    /// Checks that the database is a versus store (or empty) and migrates it with `migrations` (the real
    /// list, or a prefix in tests).
    fn setup(mut db: Box<dyn Backend>, location: Location, migrations: &[migrate::Migration]) -> Result<Store> {
        let shown = PathBuf::from(location.to_string());
        let cannot = |why: &dyn fmt::Display| {
            Error::file(&shown, format!("cannot open the results store: {why}; pass --db with a writable path"))
        };
        if db.is_foreign().map_err(|e| cannot(&e))? {
            let what = match db.engine() {
                Engine::Sqlite => "an SQLite file with other tables",
                Engine::Postgres => "a PostgreSQL database with other tables",
            };
            return Err(Error::file(
                &shown,
                format!("not a versus results store ({what}); pass --db with another path"),
            ));
        }
        migrate::migrate(db.as_mut(), migrations).map_err(|e| match e {
            migrate::MigrateError::TooNew { found, known } => Error::file(
                &shown,
                format!(
                    "the results store has schema version {found} but this versus knows only up to {known}; \
                     upgrade versus or pass --db with another path"
                ),
            ),
            migrate::MigrateError::Sql(step, e) => cannot(&format!("schema migration {step} failed: {e}")),
        })?;
        Ok(Store { db: RefCell::new(db), location, shown, uids: RefCell::default() })
    }

    /// Where this store lives, as a path for messages: the file, or the PostgreSQL URL without its
    /// password.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Where this store lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32> {
        let v = self.db.borrow_mut().schema_version().map_err(|e| self.err(e))?;
        u32::try_from(v).map_err(|e| self.err(e))
    }

    /// An [`Error::File`] for a failed statement on this store.
    fn err(&self, e: impl fmt::Display) -> Error {
        Error::file(&self.shown, format!("results store: {e}"))
    }
}

/// An [`Error::File`] naming the store at `shown` for a failed statement, with what was being done.
fn store_err(shown: &Path, what: impl fmt::Display, e: impl fmt::Display) -> Error {
    Error::file(shown, format!("results store: {what}: {e}"))
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
    use rusqlite::Connection;

    use super::*;

    /// A store over `conn` migrated with `migrations`.
    fn setup(conn: Connection, path: &Path, migrations: &[migrate::Migration]) -> Result<Store> {
        let db = sqlite::Sqlite::setup(conn, path)?;
        Store::setup(Box::new(db), Location::Sqlite(path.to_path_buf()), migrations)
    }

    fn strings(store: &Store, sql: &str) -> Vec<String> {
        store.db.borrow_mut().query(sql, &[]).unwrap().iter().map(|r| r.get(0).unwrap()).collect()
    }

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
    fn a_new_store_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        drop(Store::open(&path).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn migrates_an_empty_database_to_the_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("sub/dir/results.db")).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version());
        let tables = strings(&store, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name");
        for t in [
            "cells",
            "efficiency",
            "experiments",
            "histograms",
            "intervals",
            "profiles",
            "replica_seconds",
            "run_variables",
            "runs",
            "status_deltas",
            "status_ends",
            "variable_sets",
        ] {
            assert!(tables.iter().any(|x| x == t), "missing {t} in {tables:?}");
        }
        let fk: i64 = store.db.borrow_mut().query("PRAGMA foreign_keys", &[]).unwrap()[0].get(0).unwrap();
        assert_eq!(fk, 1);
        assert_eq!(strings(&store, "PRAGMA journal_mode"), ["wal"]);
    }

    #[test]
    fn several_processes_creating_one_store_at_once_all_open_it() {
        // Each thread is a connection of its own, as another process would be; the first turns the new
        // file to WAL and migrates it while the others wait.
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("results.db");
            let openers: Vec<_> = (0..4)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || Store::open(&path).map(|s| s.schema_version().unwrap()))
                })
                .collect();
            for o in openers {
                let version = o.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
                assert_eq!(version, latest_version());
            }
        }
    }

    #[test]
    fn database_one_version_behind_migrates_forward() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let all = migrate::MIGRATIONS;
        // A store at version N-1 (for N = 1 that is an empty file)…
        {
            let conn = Connection::open(&path).unwrap();
            let store = setup(conn, &path, &all[..all.len() - 1]).unwrap();
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
                .db
                .borrow_mut()
                .execute(
                    "INSERT INTO experiments (name, definition, definition_hash, created_at, seed, versus_version) \
                     VALUES ('e', '', 'h', 0, 1, 'test')",
                    &[],
                )
                .unwrap();
        }
        let mut next = migrate::MIGRATIONS.to_vec();
        let note = "ALTER TABLE runs ADD COLUMN note TEXT;";
        next.push(migrate::Migration { name: "next.sql", sqlite: note, postgres: note });
        let conn = Connection::open(&path).unwrap();
        let store = setup(conn, &path, &next).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version() + 1);
        let n: i64 = store.db.borrow_mut().query("SELECT count(*) FROM experiments", &[]).unwrap()[0].get(0).unwrap();
        assert_eq!(n, 1);
        store.db.borrow_mut().execute("UPDATE runs SET note = 'x'", &[]).unwrap();
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
