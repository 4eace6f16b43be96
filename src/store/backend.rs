//! The seam between the store's queries and a database engine. The queries (in `write.rs`, `read.rs`,
//! `copy.rs`) are written once, in the SQL that SQLite and PostgreSQL share, with `?1`-style
//! placeholders; each engine is one file implementing [`Backend`] (`sqlite.rs`, `postgres.rs`) and one
//! list of schema files per migration (`migrate.rs`).
//!
//! Values cross the seam as [`Value`]: the five storage classes both engines have. Conversions to the
//! engine's column types (an `INTEGER` into a PostgreSQL `DOUBLE PRECISION`, say) happen in the backend.

use std::fmt;

/// One SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL.
    Null,
    /// A signed 64-bit integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<u64> for Value {
    /// Counts beyond `i64::MAX` are stored as `i64::MAX` (both engines have signed 64-bit integers).
    fn from(v: u64) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Self {
        Value::Blob(v.to_vec())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Builds a `&[Value]` parameter list: `params![id, name, None::<i64>]`.
macro_rules! params {
    ($($v:expr),* $(,)?) => { &[$($crate::store::backend::Value::from($v)),*][..] };
}
pub(crate) use params;

/// A failed statement, in the engine's words (one line).
#[derive(Debug, Clone, PartialEq)]
pub struct DbError(pub String);

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Result of a statement.
pub type DbResult<T> = std::result::Result<T, DbError>;

/// A result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    /// Column `i` converted to `T`; an error names the column and what it held.
    pub fn get<T: FromValue>(&self, i: usize) -> DbResult<T> {
        let v = self.0.get(i).ok_or_else(|| DbError(format!("no column {i} in the result")))?;
        T::from_value(v).ok_or_else(|| DbError(format!("column {i}: unexpected value {v:?}")))
    }

    /// The raw values.
    pub fn values(&self) -> &[Value] {
        &self.0
    }
}

/// A Rust type a column can be read as.
pub trait FromValue: Sized {
    /// `None` when the value does not fit.
    fn from_value(v: &Value) -> Option<Self>;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Option<Self> {
        i64::from_value(v).and_then(|i| u32::try_from(i).ok())
    }
}

impl FromValue for u64 {
    fn from_value(v: &Value) -> Option<Self> {
        i64::from_value(v).and_then(|i| u64::try_from(i).ok())
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Real(f) => Some(*f),
            // SQLite keeps an integral value written to a REAL column as REAL, but expressions may not.
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Blob(b) => Some(b.clone()),
            _ => None,
        }
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Option<Self> {
        i64::from_value(v).map(|i| i != 0)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// Which engine a backend is; the queries never branch on it, migrations and messages do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A local SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

/// A connection to one results database. Statements use `?1`, `?2` … placeholders and the SQL both
/// engines accept (`INSERT … RETURNING`, `ON CONFLICT DO NOTHING`, `CAST(… AS BIGINT)`, `CASE`).
pub trait Backend: fmt::Debug + Send {
    /// The engine.
    fn engine(&self) -> Engine;

    /// Runs one statement; returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> DbResult<u64>;

    /// Runs one query and returns all its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> DbResult<Vec<Row>>;

    /// Runs several statements without parameters (schema migrations).
    fn execute_batch(&mut self, sql: &str) -> DbResult<()>;

    /// Starts a write transaction that holds the write lock from its first statement, so concurrent
    /// writers queue instead of failing half-way (SQLite `BEGIN IMMEDIATE`, PostgreSQL `BEGIN`).
    fn begin(&mut self) -> DbResult<()>;

    /// Commits the open transaction.
    fn commit(&mut self) -> DbResult<()>;

    /// Rolls back the open transaction (errors are ignored: the transaction is gone either way).
    fn rollback(&mut self);

    /// Inside a transaction: waits until no other process is migrating this database.
    fn lock_schema(&mut self) -> DbResult<()>;

    /// The schema version: how many migrations this database has had.
    fn schema_version(&mut self) -> DbResult<i64>;

    /// Inside a transaction: records the schema version.
    fn set_schema_version(&mut self, version: i64) -> DbResult<()>;

    /// True when the database holds tables but none of versus's bookkeeping (another program's data).
    fn is_foreign(&mut self) -> DbResult<bool>;
}

/// Runs `f` in a write transaction: commits when it returns `Ok`, rolls back otherwise, so a failure
/// leaves nothing half-written.
pub fn in_transaction<T, E: From<DbError>>(
    db: &mut dyn Backend,
    f: impl FnOnce(&mut dyn Backend) -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    db.begin()?;
    match f(db) {
        Ok(v) => match db.commit() {
            Ok(()) => Ok(v),
            Err(e) => {
                db.rollback();
                Err(e.into())
            }
        },
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_both_ways() {
        let row = Row(vec![Value::Int(7), Value::Null, Value::Real(1.5), Value::Text("x".into()), Value::Int(3)]);
        assert_eq!(row.get::<i64>(0).unwrap(), 7);
        assert_eq!(row.get::<Option<String>>(1).unwrap(), None);
        assert_eq!(row.get::<f64>(2).unwrap(), 1.5);
        assert_eq!(row.get::<f64>(4).unwrap(), 3.0);
        assert_eq!(row.get::<String>(3).unwrap(), "x");
        assert!(row.get::<i64>(3).unwrap_err().0.contains("column 3"));
        assert!(row.get::<i64>(9).is_err());
        assert_eq!(Value::from(u64::MAX), Value::Int(i64::MAX));
        assert_eq!(Value::from(None::<i64>), Value::Null);
        assert_eq!(params![1i64, "a", None::<f64>].len(), 3);
    }
}
