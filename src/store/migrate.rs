//! The schema migrator: the database records how many migrations it has had (SQLite `PRAGMA
//! user_version`, PostgreSQL `versus_schema`), and the missing ones are applied in order, each in its
//! own transaction. Every migration exists once per engine, so both engines always have the same
//! schema version for the same tables.

use super::backend::{Backend, DbError, Engine, in_transaction};

/// One schema step: SQL that takes the database from version `n - 1` to `n`, where `n` is its position
/// in the list (from 1), written once for each engine.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// File name, for error messages.
    pub name: &'static str,
    /// The SQL for SQLite, applied as one batch.
    pub sqlite: &'static str,
    /// The same step for PostgreSQL.
    pub postgres: &'static str,
}

impl Migration {
    fn sql(&self, engine: Engine) -> &'static str {
        match engine {
            Engine::Sqlite => self.sqlite,
            Engine::Postgres => self.postgres,
        }
    }
}

macro_rules! migration {
    ($name:literal) => {
        Migration {
            name: $name,
            sqlite: include_str!(concat!("migrations/", $name)),
            postgres: include_str!(concat!("migrations/postgres/", $name)),
        }
    };
}

/// Every migration of the results store, oldest first. Append only: never edit or reorder a released one.
pub const MIGRATIONS: &[Migration] = &[
    migration!("0001_initial.sql"),
    migration!("0002_experiment_uid.sql"),
    migration!("0003_block_attempts.sql"),
    migration!("0004_noise_calibrations.sql"),
    migration!("0005_status_ends.sql"),
    migration!("0006_profiles.sql"),
    migration!("0007_wait_profiles.sql"),
    migration!("0008_replica_seconds.sql"),
];

/// The schema version this versus writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Why migrating failed.
#[derive(Debug)]
pub enum MigrateError {
    /// The database was written by a newer versus.
    TooNew {
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        known: u32,
    },
    /// A migration (named) or reading the version failed.
    Sql(&'static str, DbError),
}

/// Brings `db` up to `migrations.len()`. Each step runs in a write transaction that takes the schema
/// lock and re-reads the version first, so two processes opening a new database at once do not both
/// apply it.
pub fn migrate(db: &mut dyn Backend, migrations: &[Migration]) -> Result<(), MigrateError> {
    let known = migrations.len() as u32;
    let engine = db.engine();
    let version = |e| MigrateError::Sql("schema version", e);
    for (i, m) in migrations.iter().enumerate() {
        let target = i as i64 + 1;
        in_transaction(db, |db| {
            db.lock_schema().map_err(version)?;
            let current = db.schema_version().map_err(version)?;
            if current > i64::from(known) {
                return Err(MigrateError::TooNew { found: current, known });
            }
            if current >= target {
                return Ok(());
            }
            db.execute_batch(m.sql(engine)).map_err(|e| MigrateError::Sql(m.name, e))?;
            db.set_schema_version(target).map_err(|e| MigrateError::Sql(m.name, e))
        })?;
    }
    let current = db.schema_version().map_err(version)?;
    if current > i64::from(known) {
        return Err(MigrateError::TooNew { found: current, known });
    }
    Ok(())
}

impl From<DbError> for MigrateError {
    fn from(e: DbError) -> Self {
        MigrateError::Sql("transaction", e)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::Connection;

    use super::*;
    use crate::store::sqlite::Sqlite;

    fn memory() -> Sqlite {
        Sqlite::setup(Connection::open_in_memory().unwrap(), Path::new(":memory:")).unwrap()
    }

    fn version(db: &mut Sqlite) -> i64 {
        db.schema_version().unwrap()
    }

    const FIRST: Migration =
        Migration { name: "a.sql", sqlite: "CREATE TABLE t (a INTEGER);", postgres: "CREATE TABLE t (a BIGINT);" };
    const SECOND: Migration = Migration {
        name: "b.sql",
        sqlite: "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'x';",
        postgres: "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'x';",
    };

    #[test]
    fn every_migration_exists_for_both_engines() {
        for m in MIGRATIONS {
            assert!(!m.sqlite.trim().is_empty() && !m.postgres.trim().is_empty(), "{}", m.name);
        }
    }

    #[test]
    fn applies_missing_steps_in_order_and_keeps_data() {
        let mut db = memory();
        migrate(&mut db, &[FIRST]).unwrap();
        assert_eq!(version(&mut db), 1);
        db.execute("INSERT INTO t (a) VALUES (7)", &[]).unwrap();

        migrate(&mut db, &[FIRST, SECOND]).unwrap();
        assert_eq!(version(&mut db), 2);
        let row = db.query("SELECT a, b FROM t", &[]).unwrap().remove(0);
        assert_eq!((row.get::<i64>(0).unwrap(), row.get::<String>(1).unwrap()), (7, "x".to_string()));

        // Idempotent: nothing is applied twice.
        migrate(&mut db, &[FIRST, SECOND]).unwrap();
        assert_eq!(version(&mut db), 2);
    }

    #[test]
    fn newer_database_is_refused() {
        let mut db = memory();
        migrate(&mut db, &[FIRST, SECOND]).unwrap();
        match migrate(&mut db, &[FIRST]) {
            Err(MigrateError::TooNew { found: 2, known: 1 }) => {}
            other => panic!("expected TooNew, got {other:?}"),
        }
        match migrate(&mut db, &[]) {
            Err(MigrateError::TooNew { found: 2, known: 0 }) => {}
            other => panic!("expected TooNew, got {other:?}"),
        }
    }

    #[test]
    fn failing_step_is_rolled_back() {
        let mut db = memory();
        let bad = Migration { name: "bad.sql", sqlite: "CREATE TABLE u (a); CREATE TABLE t (a);", postgres: "" };
        migrate(&mut db, &[FIRST]).unwrap();
        match migrate(&mut db, &[FIRST, bad]) {
            Err(MigrateError::Sql("bad.sql", _)) => {}
            other => panic!("expected Sql(bad.sql), got {other:?}"),
        }
        assert_eq!(version(&mut db), 1);
        let u: i64 = db.query("SELECT count(*) FROM sqlite_master WHERE name = 'u'", &[]).unwrap()[0].get(0).unwrap();
        assert_eq!(u, 0, "the half-applied step must be rolled back");
    }
}
