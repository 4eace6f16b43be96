//! `--mysql-dry-run`: a driver that talks to no server and counts every statement as "other", at once,
//! as sysbench's dry run does.

use super::{Connection, DbError, Driver, Outcome, Param, StmtId};

/// The driver behind `--mysql-dry-run`.
#[derive(Clone, Copy, Default)]
pub struct DryRunDriver;

impl Driver for DryRunDriver {
    fn connect(&self) -> Result<Box<dyn Connection>, DbError> {
        Ok(Box::new(DryRunConnection { stmts: Vec::new() }))
    }

    fn connect_first(&self) -> Result<Box<dyn Connection>, DbError> {
        self.connect()
    }

    fn name(&self) -> &'static str {
        "dry-run"
    }
}

struct DryRunConnection {
    stmts: Vec<String>,
}

impl Connection for DryRunConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        self.stmts.push(sql.to_string());
        Ok(StmtId(self.stmts.len() - 1))
    }

    fn execute(&mut self, _stmt: StmtId, _params: &[Param<'_>]) -> Result<Outcome, DbError> {
        Ok(Outcome::Other)
    }

    fn query(&mut self, _sql: &str) -> Result<Outcome, DbError> {
        Ok(Outcome::Other)
    }

    fn query_table(&mut self, _sql: &str) -> Result<super::Rows, DbError> {
        Ok(super::Rows { outcome: Some(Outcome::Other), table: Some(Vec::new()), ..super::Rows::default() })
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    fn sql(&self, stmt: StmtId) -> &str {
        &self.stmts[stmt.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_is_other_and_keeps_its_text() {
        let mut c = DryRunDriver.connect().unwrap();
        let s = c.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
        assert_eq!(c.execute(s, &[Param::Int(1)]).unwrap(), Outcome::Other);
        assert_eq!(c.query("INSERT INTO t VALUES (1)").unwrap(), Outcome::Other);
        assert_eq!(c.sql(s), "SELECT c FROM sbtest1 WHERE id=?");
    }
}
