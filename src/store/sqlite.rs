//! The SQLite backend: one local file, WAL journal (readers never block the writer), foreign keys on,
//! a 30 s busy timeout and `BEGIN IMMEDIATE` write transactions, so several versus processes on one
//! host can write to one file at once. The schema version is `PRAGMA user_version`.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};

use super::backend::{Backend, DbError, DbResult, Engine, Row, Value};
use crate::error::{Error, Result};

/// How long a writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open SQLite results file.
#[derive(Debug)]
pub struct Sqlite {
    conn: Connection,
}

fn db_err(e: rusqlite::Error) -> DbError {
    DbError(e.to_string())
}

fn cannot(path: &Path, why: &dyn std::fmt::Display) -> Error {
    Error::file(path, format!("cannot open the results store: {why}; pass --db with a writable path"))
}

impl Sqlite {
    /// Opens (creating if needed, with its parent directory) the file at `path` for reading and writing.
    ///
    /// Errors: [`Error::File`] naming `path` when it cannot be opened or written, or is not SQLite.
    pub fn open(path: &Path) -> Result<Sqlite> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::owned::create_dir_all(parent).map_err(|e| cannot(path, &e))?;
        }
        check_ours(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let new = !path.exists();
        let conn = Connection::open_with_flags(path, flags).map_err(|e| cannot(path, &e))?;
        if new {
            // Results name hosts, servers and command lines: readable by their owner only (SQLite gives
            // its -wal and -shm files the same mode).
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|e| cannot(path, &e))?;
        }
        // SQLite silently falls back to read-only for a write-protected file.
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(|e| cannot(path, &e))? {
            return Err(cannot(path, &"the file is read-only"));
        }
        Sqlite::setup(conn, path)
    }

    /// Opens the existing file at `path` for reading only: a write-protected store (or one on a
    /// read-only disk) can still be listed, compared and reported. SQLite is told the file cannot change
    /// (`immutable`), so that it needs no lock and no `-shm` file beside it.
    pub fn open_read_only(path: &Path) -> Result<Sqlite> {
        let mut uri = String::from("file:");
        for c in std::path::absolute(path).map_err(|e| cannot(path, &e))?.to_string_lossy().chars() {
            match c {
                '?' | '#' | '%' => uri.push_str(&format!("%{:02X}", c as u32)),
                c => uri.push(c),
            }
        }
        uri.push_str("?mode=ro&immutable=1");
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| cannot(path, &e))?;
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| Error::file(path, format!("not a versus results store ({e}); pass --db with another path")))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| cannot(path, &e))?;
        Ok(Sqlite { conn })
    }

    /// Sets the connection options on an open connection.
    pub fn setup(conn: Connection, path: &Path) -> Result<Sqlite> {
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| cannot(path, &e))?;
        // Reading the journal mode is the first real access: a file that is not SQLite fails here.
        // Turning a new file to WAL takes a lock the busy timeout does not wait for, so a store that
        // several processes create at the same moment answers "database is locked" to all but one for a
        // few milliseconds: that is waited out like any busy lock.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)) {
                Ok(mode) => break mode,
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => {
                    return Err(Error::file(
                        path,
                        format!("not a versus results store ({e}); pass --db with another path"),
                    ));
                }
            }
        };
        if mode != "wal" && mode != "memory" {
            tracing::debug!("results store {}: journal mode is {mode}, not wal", path.display());
        }
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| cannot(path, &e))?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| cannot(path, &e))?;
        Ok(Sqlite { conn })
    }
}

/// What every SQLite database file starts with.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Refuses an existing file at `path` that is not a versus store, before anything opens it to write:
/// opening it read-write would already turn another program's database to WAL mode (a change to its
/// header and a `-wal` file beside it), and migrating it would alter its tables. An absent or empty
/// file, or an SQLite file without tables, is a store to create; one with tables must carry a schema
/// version (`PRAGMA user_version`) and versus's first tables.
fn check_ours(path: &Path) -> Result<()> {
    let not_ours =
        |what: &str| Error::file(path, format!("not a versus results store ({what}); pass --db with another path"));
    let mut head = [0u8; 16];
    let len = match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(cannot(path, &e)),
        Ok(f) => {
            use std::io::Read;
            f.take(16).read(&mut head).map_err(|e| cannot(path, &e))?
        }
    };
    if len == 0 {
        return Ok(());
    }
    if len < head.len() || &head != SQLITE_HEADER {
        return Err(not_ours("not an SQLite file"));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| cannot(path, &e))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| cannot(path, &e))?;
    let (tables, ours, version): (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table'), \
             (SELECT count(*) FROM sqlite_master WHERE type = 'table' \
              AND name IN ('experiments', 'cells', 'variable_sets', 'runs')), \
             (SELECT user_version FROM pragma_user_version)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| not_ours(&e.to_string()))?;
    if tables > 0 && (version == 0 || ours < 4) {
        return Err(not_ours("an SQLite file with other tables"));
    }
    Ok(())
}

/// Whether `e` is another connection's lock (SQLITE_BUSY or SQLITE_LOCKED).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value_at(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Value> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Int(v),
        ValueRef::Real(v) => Value::Real(v),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    })
}

impl Backend for Sqlite {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> DbResult<u64> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(db_err)?;
        stmt.execute(rusqlite::params_from_iter(params)).map(|n| n as u64).map_err(db_err)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> DbResult<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(db_err)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |r| (0..n).map(|i| value_at(r, i)).collect())
            .map_err(db_err)?;
        rows.map(|r| r.map(Row)).collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    fn execute_batch(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute_batch(sql).map_err(db_err)
    }

    fn begin(&mut self) -> DbResult<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(db_err)
    }

    fn commit(&mut self) -> DbResult<()> {
        self.conn.execute_batch("COMMIT").map_err(db_err)
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn lock_schema(&mut self) -> DbResult<()> {
        // BEGIN IMMEDIATE already holds the database's write lock.
        Ok(())
    }

    fn schema_version(&mut self) -> DbResult<i64> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(db_err)
    }

    fn set_schema_version(&mut self, version: i64) -> DbResult<()> {
        self.conn.pragma_update(None, "user_version", version).map_err(db_err)
    }

    fn is_foreign(&mut self) -> DbResult<bool> {
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
            .map_err(db_err)?;
        Ok(tables > 0 && self.schema_version()? == 0)
    }
}
