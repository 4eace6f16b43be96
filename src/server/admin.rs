//! Administrative connections to a sandbox: bootstrap SQL, VERSION(), variables and status.
//!
//! This is not the load path (see `driver/`); it favours simplicity over speed.

use std::path::Path;
use std::time::Duration;

use mysql::prelude::Queryable;

use crate::error::{Error, Result};

/// Opens a connection as `user` over the unix socket at `socket`.
pub fn connect_socket(socket: &Path, user: &str, password: Option<&str>) -> Result<mysql::Conn> {
    let opts = mysql::OptsBuilder::new()
        .socket(Some(socket.display().to_string()))
        .user(Some(user))
        .pass(password)
        .tcp_connect_timeout(Some(Duration::from_secs(5)));
    mysql::Conn::new(opts).map_err(|e| sql_error(&format!("connect to {}", socket.display()), e))
}

/// Opens a connection as `user` over TCP to 127.0.0.1:`port`.
pub fn connect_tcp(port: u16, user: &str, password: Option<&str>, db: Option<&str>) -> Result<mysql::Conn> {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .prefer_socket(false)
        .user(Some(user))
        .pass(password)
        .db_name(db)
        .tcp_connect_timeout(Some(Duration::from_secs(5)));
    mysql::Conn::new(opts).map_err(|e| sql_error(&format!("connect to 127.0.0.1:{port}"), e))
}

/// Runs `sql` and discards any result.
pub fn exec(conn: &mut mysql::Conn, sql: &str) -> Result<()> {
    conn.query_drop(sql).map_err(|e| sql_error(sql, e))
}

/// `SELECT VERSION()`.
pub fn version(conn: &mut mysql::Conn) -> Result<String> {
    let v: Option<String> = conn.query_first("SELECT VERSION()").map_err(|e| sql_error("SELECT VERSION()", e))?;
    v.ok_or_else(|| Error::Other("SELECT VERSION() returned no row".into()))
}

/// `SHOW GLOBAL VARIABLES` as (name, value) pairs in the server's order; NULL values become empty strings.
pub fn global_variables(conn: &mut mysql::Conn) -> Result<Vec<(String, String)>> {
    name_value_pairs(conn, "SHOW GLOBAL VARIABLES")
}

/// `SHOW GLOBAL STATUS` as (name, value) pairs.
pub fn global_status(conn: &mut mysql::Conn) -> Result<Vec<(String, String)>> {
    name_value_pairs(conn, "SHOW GLOBAL STATUS")
}

fn name_value_pairs(conn: &mut mysql::Conn, sql: &str) -> Result<Vec<(String, String)>> {
    let rows: Vec<(String, Option<String>)> = conn.query(sql).map_err(|e| sql_error(sql, e))?;
    Ok(rows.into_iter().map(|(k, v)| (k, v.unwrap_or_default())).collect())
}

/// Turns a client error into an [`Error::Sql`] that keeps the server's error code.
pub fn sql_error(context: &str, e: mysql::Error) -> Error {
    match e {
        mysql::Error::MySqlError(m) => {
            Error::Sql { context: context.to_string(), code: Some(m.code), message: m.message }
        }
        other => Error::Sql { context: context.to_string(), code: None, message: other.to_string() },
    }
}
