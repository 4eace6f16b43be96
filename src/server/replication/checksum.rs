//! The data check: after the replicas have caught up, `CHECKSUM TABLE` of every base table on the
//! primary and on each replica, compared. Only servers of one version are compared (the value depends
//! on the row format), and only quiesced ones (nothing writes while the tables are read). versus's own
//! heartbeat table and the system schemas are left out.

use mysql::prelude::Queryable;
use serde::Serialize;

use super::{HEARTBEAT_DATABASE, Topology};
use crate::error::Result;
use crate::server::admin;

/// A table whose checksum differs between the primary and a replica (or that one of them lacks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableDifference {
    /// The replica's sandbox name.
    pub replica: String,
    /// `database.table`.
    pub table: String,
    /// The primary's checksum (`None`: the primary has no such table).
    pub primary: Option<u64>,
    /// The replica's checksum (`None`: the replica has no such table).
    pub replica_checksum: Option<u64>,
}

/// The outcome of a data check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataCheck {
    /// How many tables of the primary were compared with each replica.
    pub tables: usize,
    /// The tables that differ.
    pub differences: Vec<TableDifference>,
}

impl DataCheck {
    /// True when every replica's tables equal the primary's.
    pub fn equal(&self) -> bool {
        self.differences.is_empty()
    }
}

/// The base tables of the server behind `conn` outside the system schemas and versus's own, sorted.
fn tables(conn: &mut mysql::Conn) -> Result<Vec<(String, String)>> {
    let sql = format!(
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND \
         TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', '{HEARTBEAT_DATABASE}') \
         ORDER BY TABLE_SCHEMA, TABLE_NAME"
    );
    conn.query(&sql).map_err(|e| admin::sql_error(&sql, e))
}

fn quote(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// `CHECKSUM TABLE` of each table, by `database.table`.
fn checksums(conn: &mut mysql::Conn, list: &[(String, String)]) -> Result<Vec<(String, Option<u64>)>> {
    let mut out = Vec::new();
    for (db, t) in list {
        let sql = format!("CHECKSUM TABLE {}.{}", quote(db), quote(t));
        let row: Option<(String, Option<u64>)> = conn.query_first(&sql).map_err(|e| admin::sql_error(&sql, e))?;
        out.push((format!("{db}.{t}"), row.and_then(|(_, c)| c)));
    }
    Ok(out)
}

/// Compares every table of the primary with each replica's (a replica's extra tables count too).
/// Call it once the replicas have caught up and nothing writes.
pub fn compare_data(topology: &Topology) -> Result<DataCheck> {
    let mut p = topology.primary().connect_root()?;
    let primary_tables = tables(&mut p)?;
    let primary = checksums(&mut p, &primary_tables)?;
    let mut differences = Vec::new();
    for r in topology.replicas() {
        let mut c = r.connect_root()?;
        let mut list = tables(&mut c)?;
        let mine = checksums(&mut c, &list)?;
        for (table, sum) in &primary {
            let theirs = mine.iter().find(|(t, _)| t == table).map(|(_, s)| *s);
            if theirs != Some(*sum) || sum.is_none() {
                differences.push(TableDifference {
                    replica: r.info().name.clone(),
                    table: table.clone(),
                    primary: *sum,
                    replica_checksum: theirs.flatten(),
                });
            }
        }
        list.retain(|(db, t)| !primary.iter().any(|(n, _)| *n == format!("{db}.{t}")));
        for (db, t) in list {
            let sum = mine.iter().find(|(n, _)| *n == format!("{db}.{t}")).and_then(|(_, s)| *s);
            differences.push(TableDifference {
                replica: r.info().name.clone(),
                table: format!("{db}.{t}"),
                primary: None,
                replica_checksum: sum,
            });
        }
    }
    Ok(DataCheck { tables: primary.len(), differences })
}
