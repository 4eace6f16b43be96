//! A replica's state as the server reports it: receiver and applier threads, `Seconds_Behind_*`, the
//! last error and the configured delay.

use mysql::prelude::Queryable;
use serde::Serialize;

use crate::error::Result;
use crate::server::admin;
use crate::server::flavor::replication::Dialect;

/// One replica's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaState {
    /// Receiver (I/O thread): `Yes`, `No`, `Connecting`, or `-` when the server is no replica.
    pub io_running: String,
    /// Applier (SQL thread): `Yes` or `No`.
    pub sql_running: String,
    /// The server's own lag estimate in whole seconds (NULL when a thread is stopped).
    pub seconds_behind: Option<u64>,
    /// The receiver's or the applier's last error (empty when none).
    pub last_error: String,
    /// The configured delay in seconds.
    pub delay_s: u64,
}

/// Reads the state of the replica behind `conn` (a root connection).
pub fn replica_state(conn: &mut mysql::Conn, dialect: &Dialect) -> Result<ReplicaState> {
    let sql = dialect.show_status();
    let row: Option<mysql::Row> = conn.query_first(&sql).map_err(|e| admin::sql_error(&sql, e))?;
    let Some(row) = row else {
        return Ok(ReplicaState {
            io_running: "-".into(),
            sql_running: "-".into(),
            seconds_behind: None,
            last_error: "not a replica".into(),
            delay_s: 0,
        });
    };
    let cols = dialect.status_columns();
    let text = |name: &str| -> String {
        row.get_opt::<Option<String>, &str>(name).and_then(|r| r.ok()).flatten().unwrap_or_default()
    };
    let io_error = text(cols.last_io_error);
    let sql_error = text(cols.last_sql_error);
    let last_error = match (io_error.is_empty(), sql_error.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!("receiver: {io_error}"),
        (true, false) => format!("applier: {sql_error}"),
        (false, false) => format!("receiver: {io_error}; applier: {sql_error}"),
    };
    Ok(ReplicaState {
        io_running: text(cols.io_running),
        sql_running: text(cols.sql_running),
        seconds_behind: text(cols.seconds_behind).parse().ok(),
        last_error,
        delay_s: text(cols.sql_delay).parse().unwrap_or(0),
    })
}
