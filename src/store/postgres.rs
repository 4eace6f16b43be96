//! The PostgreSQL backend: a team's shared results store (`--db postgres://user@host/db`). Many versus
//! processes on many hosts write at once; every multi-row write is one transaction, and the schema
//! migrator holds an advisory lock so two first openings do not both migrate. The schema version is the
//! one row of `versus_schema`.
//!
//! Connections are plain TCP or a Unix socket (`?host=/run/postgresql`); the password comes from the
//! URL or, when the URL has none, from `PGPASSWORD`. TLS is not supported yet.

use std::str::FromStr;
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Config, NoTls};

use super::backend::{Backend, DbError, DbResult, Engine, Row, Value};
use crate::error::{Error, Result};

/// How long connecting may take before the store is reported unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Key of the advisory lock that serialises schema migrations (any fixed number; "versus" in ASCII).
const MIGRATION_LOCK: i64 = 0x7665_7273_7573;

/// A connection to a PostgreSQL results database.
pub struct Postgres {
    client: Client,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres").finish_non_exhaustive()
    }
}

/// The error's text on one line: the server's message when there is one, else the client's.
fn db_err(e: postgres::Error) -> DbError {
    let text = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(inner) = source {
                let t = inner.to_string();
                if !s.contains(&t) {
                    s = format!("{s}: {t}");
                }
                source = inner.source();
            }
            s
        }
    };
    DbError(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

impl Postgres {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/db[?param=…]`). `shown` is the URL
    /// without its password, for messages.
    pub fn connect(url: &str, shown: &str) -> Result<Postgres> {
        let mut config = Config::from_str(url).map_err(|e| {
            Error::option("--db", format!("{shown}: not a PostgreSQL URL ({e}); use postgres://USER@HOST[:PORT]/DB"))
        })?;
        if config.get_password().is_none()
            && let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty())
        {
            config.password(pw.to_string_lossy().as_bytes());
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("versus");
        }
        let client = config.connect(NoTls).map_err(|e| {
            Error::file(
                shown,
                format!(
                    "cannot reach the results store: {}; check the URL and that the server accepts connections",
                    db_err(e)
                ),
            )
        })?;
        Ok(Postgres { client })
    }
}

/// `?N` placeholders as PostgreSQL's `$N` (outside quoted text).
fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => out.push('$'),
            _ => out.push(c),
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let mismatch = || format!("cannot store {self:?} in a column of type {ty}").into();
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                _ => Err(mismatch()),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => Err(mismatch()),
            },
            Value::Text(s) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => s.as_str().to_sql(ty, out),
                _ => Err(mismatch()),
            },
            Value::Blob(b) => match *ty {
                Type::BYTEA => b.as_slice().to_sql(ty, out),
                _ => Err(mismatch()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn value_at(row: &postgres::Row, i: usize) -> DbResult<Value> {
    let ty = row.columns()[i].type_().clone();
    let get_err = |e: postgres::Error| db_err(e);
    Ok(match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(get_err)?.into(),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map_err(get_err)?.map(i64::from).into(),
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map_err(get_err)?.map(i64::from).into(),
        Type::BOOL => row.try_get::<_, Option<bool>>(i).map_err(get_err)?.map(i64::from).into(),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map_err(get_err)?.into(),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(i).map_err(get_err)?.map(f64::from).into(),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
            row.try_get::<_, Option<String>>(i).map_err(get_err)?.into()
        }
        Type::BYTEA => match row.try_get::<_, Option<Vec<u8>>>(i).map_err(get_err)? {
            Some(b) => Value::Blob(b),
            None => Value::Null,
        },
        other => return Err(DbError(format!("column {i} has type {other}, which the store does not read"))),
    })
}

fn as_params(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

impl Backend for Postgres {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> DbResult<u64> {
        self.client.execute(dollar_placeholders(sql).as_str(), &as_params(params)).map_err(db_err)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> DbResult<Vec<Row>> {
        let rows = self.client.query(dollar_placeholders(sql).as_str(), &as_params(params)).map_err(db_err)?;
        rows.iter().map(|r| (0..r.len()).map(|i| value_at(r, i)).collect::<DbResult<Vec<_>>>().map(Row)).collect()
    }

    fn execute_batch(&mut self, sql: &str) -> DbResult<()> {
        self.client.batch_execute(sql).map_err(db_err)
    }

    fn begin(&mut self) -> DbResult<()> {
        self.client.batch_execute("BEGIN").map_err(db_err)
    }

    fn commit(&mut self) -> DbResult<()> {
        self.client.batch_execute("COMMIT").map_err(db_err)
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn lock_schema(&mut self) -> DbResult<()> {
        self.client.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(db_err)?;
        self.client.batch_execute("CREATE TABLE IF NOT EXISTS versus_schema (version BIGINT NOT NULL)").map_err(db_err)
    }

    fn schema_version(&mut self) -> DbResult<i64> {
        let exists: bool =
            self.client.query_one("SELECT to_regclass('versus_schema') IS NOT NULL", &[]).map_err(db_err)?.get(0);
        if !exists {
            return Ok(0);
        }
        let row = self.client.query_opt("SELECT max(version) FROM versus_schema", &[]).map_err(db_err)?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).unwrap_or(0))
    }

    fn set_schema_version(&mut self, version: i64) -> DbResult<()> {
        self.client.execute("DELETE FROM versus_schema", &[]).map_err(db_err)?;
        self.client.execute("INSERT INTO versus_schema (version) VALUES ($1)", &[&version]).map_err(db_err)?;
        Ok(())
    }

    fn is_foreign(&mut self) -> DbResult<bool> {
        let row = self
            .client
            .query_one(
                "SELECT count(*) FILTER (WHERE table_name <> 'versus_schema'), \
                 count(*) FILTER (WHERE table_name = 'versus_schema') \
                 FROM information_schema.tables WHERE table_schema = current_schema()",
                &[],
            )
            .map_err(db_err)?;
        let (others, ours): (i64, i64) = (row.get(0), row.get(1));
        Ok(others > 0 && ours == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(dollar_placeholders("SELECT ?1, '?', ?12 WHERE a = '?2'"), "SELECT $1, '?', $12 WHERE a = '?2'");
    }
}
