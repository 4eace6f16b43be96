//! The schema migrator: `PRAGMA user_version` holds how many migrations a database has had, and the
//! missing ones are applied in order, each in its own transaction.

use rusqlite::{Connection, TransactionBehavior};

/// One schema step: SQL that takes the database from version `n - 1` to `n`, where `n` is its position
/// in the list (from 1).
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// File name, for error messages.
    pub name: &'static str,
    /// The SQL, applied as one batch.
    pub sql: &'static str,
}

/// Every migration of the results store, oldest first. Append only: never edit or reorder a released one.
pub const MIGRATIONS: &[Migration] =
    &[Migration { name: "0001_initial.sql", sql: include_str!("migrations/0001_initial.sql") }];

/// The schema version this versus writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Why migrating failed.
#[derive(Debug)]
pub enum MigrateError {
    /// The database was written by a newer versus.
    TooNew {
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        known: u32,
    },
    /// A migration (named) or reading the version failed.
    Sql(&'static str, rusqlite::Error),
}

/// Brings `conn` up to `migrations.len()`. Each step runs in an IMMEDIATE transaction that re-reads the
/// version first, so two processes opening a new database at once do not both apply it.
pub fn migrate(conn: &mut Connection, migrations: &[Migration]) -> Result<(), MigrateError> {
    let known = migrations.len() as u32;
    for (i, m) in migrations.iter().enumerate() {
        let target = i as i64 + 1;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| MigrateError::Sql("user_version", e))?;
        let current: i64 =
            tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| MigrateError::Sql("user_version", e))?;
        if current > i64::from(known) {
            return Err(MigrateError::TooNew { found: current, known });
        }
        if current >= target {
            continue;
        }
        tx.execute_batch(m.sql).map_err(|e| MigrateError::Sql(m.name, e))?;
        tx.pragma_update(None, "user_version", target).map_err(|e| MigrateError::Sql(m.name, e))?;
        tx.commit().map_err(|e| MigrateError::Sql(m.name, e))?;
    }
    if migrations.is_empty() {
        let current: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| MigrateError::Sql("user_version", e))?;
        if current > 0 {
            return Err(MigrateError::TooNew { found: current, known });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    }

    const FIRST: Migration = Migration { name: "a.sql", sql: "CREATE TABLE t (a INTEGER);" };
    const SECOND: Migration = Migration { name: "b.sql", sql: "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'x';" };

    #[test]
    fn applies_missing_steps_in_order_and_keeps_data() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &[FIRST]).unwrap();
        assert_eq!(version(&conn), 1);
        conn.execute("INSERT INTO t (a) VALUES (7)", []).unwrap();

        migrate(&mut conn, &[FIRST, SECOND]).unwrap();
        assert_eq!(version(&conn), 2);
        let row: (i64, String) = conn.query_row("SELECT a, b FROM t", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(row, (7, "x".to_string()));

        // Idempotent: nothing is applied twice.
        migrate(&mut conn, &[FIRST, SECOND]).unwrap();
        assert_eq!(version(&conn), 2);
    }

    #[test]
    fn newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &[FIRST, SECOND]).unwrap();
        match migrate(&mut conn, &[FIRST]) {
            Err(MigrateError::TooNew { found: 2, known: 1 }) => {}
            other => panic!("expected TooNew, got {other:?}"),
        }
    }

    #[test]
    fn failing_step_is_rolled_back() {
        let mut conn = Connection::open_in_memory().unwrap();
        let bad = Migration { name: "bad.sql", sql: "CREATE TABLE u (a); CREATE TABLE t (a);" };
        migrate(&mut conn, &[FIRST]).unwrap();
        match migrate(&mut conn, &[FIRST, bad]) {
            Err(MigrateError::Sql("bad.sql", _)) => {}
            other => panic!("expected Sql(bad.sql), got {other:?}"),
        }
        assert_eq!(version(&conn), 1);
        let u: i64 = conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'u'", [], |r| r.get(0)).unwrap();
        assert_eq!(u, 0, "the half-applied step must be rolled back");
    }
}
