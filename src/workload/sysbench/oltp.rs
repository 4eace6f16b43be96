//! The statement catalog of the eleven tests and the statements of one event, exactly as sysbench 1.0.20
//! sends them (reference sysbench.md §3.2–3.4).

use std::fmt::Write;
use std::sync::Arc;

use super::options::{OltpOptions, Test};
use super::rng::{C_TEMPLATE, PAD_TEMPLATE, Random, Unique};
use crate::driver::{Connection, DbError, Param, Rows, StmtId};

/// The prepared statement kinds of oltp_common, in sysbench's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `SELECT c FROM sbtestN WHERE id=?`
    Point,
    /// `SELECT c … BETWEEN ? AND ?`
    Simple,
    /// `SELECT SUM(k) … BETWEEN ? AND ?`
    Sum,
    /// `SELECT c … BETWEEN ? AND ? ORDER BY c`
    Order,
    /// `SELECT DISTINCT c … BETWEEN ? AND ? ORDER BY c`
    Distinct,
    /// `UPDATE … SET k=k+1 WHERE id=?`
    IndexUpdate,
    /// `UPDATE … SET c=? WHERE id=?`
    NonIndexUpdate,
    /// `DELETE FROM … WHERE id=?`
    Delete,
    /// `INSERT INTO … (id, k, c, pad) VALUES (?, ?, ?, ?)`
    Insert,
    /// versus: `UPDATE … SET c=c+1 WHERE id=?` (legacy `--oltp-test-mode=incupdate`)
    IncUpdate,
}

const KINDS: usize = 10;

impl Kind {
    /// The SQL text for table number `t`.
    pub fn sql(self, t: u32) -> String {
        match self {
            Kind::Point => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Kind::Simple => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::Sum => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::Order => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            Kind::Distinct => format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            Kind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Kind::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Kind::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            Kind::IncUpdate => format!("UPDATE sbtest{t} SET c=c+1 WHERE id=?"),
        }
    }
}

/// The prepared statements a test needs per table (those with a non-zero count), and whether it uses
/// BEGIN/COMMIT.
pub fn kinds_for(test: Test, o: &OltpOptions) -> (Vec<Kind>, bool) {
    let reads = |v: &mut Vec<Kind>| {
        if o.point_selects > 0 {
            v.push(Kind::Point);
        }
        if o.range_selects {
            for (n, k) in [
                (o.simple_ranges, Kind::Simple),
                (o.sum_ranges, Kind::Sum),
                (o.order_ranges, Kind::Order),
                (o.distinct_ranges, Kind::Distinct),
            ] {
                if n > 0 {
                    v.push(k);
                }
            }
        }
    };
    let writes = |v: &mut Vec<Kind>| {
        if o.index_updates > 0 {
            v.push(Kind::IndexUpdate);
        }
        if o.non_index_updates > 0 {
            v.push(Kind::NonIndexUpdate);
        }
        if o.delete_inserts > 0 {
            v.push(Kind::Delete);
            v.push(Kind::Insert);
        }
    };
    let mut v = Vec::new();
    let trx = match test {
        Test::OltpReadWrite => {
            reads(&mut v);
            writes(&mut v);
            true
        }
        Test::OltpReadOnly => {
            reads(&mut v);
            true
        }
        Test::OltpWriteOnly => {
            writes(&mut v);
            true
        }
        Test::OltpPointSelect => {
            v.push(Kind::Point);
            false
        }
        Test::OltpUpdateIndex => {
            v.push(Kind::IndexUpdate);
            false
        }
        Test::OltpUpdateNonIndex => {
            v.push(Kind::NonIndexUpdate);
            false
        }
        Test::OltpDelete => {
            v.push(Kind::Delete);
            false
        }
        Test::OltpIncUpdate => {
            v.push(Kind::IncUpdate);
            false
        }
        Test::OltpInsert | Test::SelectRandomPoints | Test::SelectRandomRanges | Test::BulkInsert => false,
    };
    (v, trx && !o.skip_trx)
}

/// Why an event stopped early.
#[derive(Debug)]
pub enum Abort {
    /// An ignorable error or a reconnect: run the event again from the start.
    Restart,
    /// Stop this worker (Ctrl-C or time limit while reconnecting).
    Stop,
    /// A fatal error; the run stops.
    Fatal(crate::error::Error),
}

/// Executes statements for a workload, counting them and classifying errors.
pub trait Exec {
    /// Executes a prepared statement.
    fn exec(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), Abort>;
    /// Sends a text query.
    fn query(&mut self, sql: &str) -> Result<(), Abort>;
    /// Sends a text query and keeps every row of its result (a Lua script's `con:query`).
    fn query_table(&mut self, sql: &str) -> Result<Rows, Abort> {
        let _ = sql;
        Err(Abort::Fatal(crate::error::Error::Other("this executor does not return rows".into())))
    }
    /// Prepares a statement on the connection (a Lua script preparing inside an event).
    fn prepare(&mut self, sql: &str) -> Result<StmtId, Abort> {
        let _ = sql;
        Err(Abort::Fatal(crate::error::Error::Other("this executor does not prepare statements".into())))
    }
    /// Adds counts that the workload keeps itself (a Lua script's `sb_counter_inc`).
    fn add_counts(&mut self, c: &super::counts::Counts) {
        let _ = c;
    }
    /// Reconnects (a Lua script's `con:reconnect()`), re-preparing the connection's statements.
    fn reconnect(&mut self) -> Result<(), Abort> {
        Err(Abort::Fatal(crate::error::Error::Other("this executor does not reconnect".into())))
    }
    /// The server error behind the last `Abort::Restart`, taken (for a Lua script's error table).
    fn take_error(&mut self) -> Option<DbError> {
        None
    }
}

/// Bytes in a bulk INSERT statement, as sysbench's 512 KiB buffer (including its NUL).
pub const BULK_BUFFER: usize = 512 * 1024 - 1;

/// The per-thread workload state of one test.
pub struct Workload {
    test: Test,
    o: Arc<OltpOptions>,
    /// Statements per table (index 0 = sbtest1), by kind.
    stmts: Vec<[Option<StmtId>; KINDS]>,
    begin: Option<StmtId>,
    commit: Option<StmtId>,
    special: Option<StmtId>,
    /// The thread's random source.
    pub rnd: Random,
    unique: Arc<Unique>,
    thread: u32,
    threads: u32,
    c: String,
    pad: String,
    text: String,
    bulk_next: u64,
    bulk_rows: u64,
}

impl Workload {
    /// State for worker `thread` of `threads`.
    pub fn new(test: Test, o: Arc<OltpOptions>, rnd: Random, unique: Arc<Unique>, thread: u32, threads: u32) -> Self {
        Workload {
            test,
            o,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            special: None,
            rnd,
            unique,
            thread,
            threads,
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            text: String::new(),
            bulk_next: 1,
            bulk_rows: 0,
        }
    }

    /// Number of statements [`Workload::prepare`] prepares on each connection.
    pub fn statement_count(test: Test, o: &OltpOptions) -> usize {
        let (kinds, trx) = kinds_for(test, o);
        kinds.len() * o.tables as usize + 2 * usize::from(trx) + 1
    }

    /// Prepares the statements of the test on `conn` (sysbench's `thread_init`).
    pub fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), DbError> {
        let (kinds, trx) = kinds_for(self.test, &self.o);
        self.stmts.clear();
        if !kinds.is_empty() {
            for t in 1..=self.o.tables {
                let mut row = [None; KINDS];
                for k in &kinds {
                    row[*k as usize] = Some(conn.prepare(&k.sql(t))?);
                }
                self.stmts.push(row);
            }
        }
        if trx {
            self.begin = Some(conn.prepare("BEGIN")?);
            self.commit = Some(conn.prepare("COMMIT")?);
        }
        match self.test {
            Test::SelectRandomPoints => {
                let marks = vec!["?"; self.o.random_points as usize].join(", ");
                self.special = Some(conn.prepare(&format!(
                    "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ({marks})\n        "
                ))?);
            }
            Test::SelectRandomRanges => {
                let ranges = vec!["k BETWEEN ? AND ?"; self.o.number_of_ranges as usize].join(" OR ");
                self.special =
                    Some(conn.prepare(&format!(
                        "        SELECT count(k)\n          FROM sbtest1\n          WHERE {ranges}"
                    ))?);
            }
            _ => {}
        }
        Ok(())
    }

    fn table(&mut self) -> usize {
        self.rnd.uniform(1, self.o.tables) as usize - 1
    }

    fn id(&mut self) -> u32 {
        self.rnd.default(1, self.o.table_size)
    }

    fn stmt(&self, table: usize, k: Kind) -> StmtId {
        self.stmts[table][k as usize].expect("statement prepared for this test")
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn points(&mut self, x: &mut dyn Exec, n: u32) -> Result<(), Abort> {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            x.exec(self.stmt(t, Kind::Point), &[Param::Int(id as i64)])?;
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn ranges(&mut self, x: &mut dyn Exec, n: u32, k: Kind) -> Result<(), Abort> {
        let t = self.table();
        for _ in 0..n {
            let lo = self.id() as i64;
            let hi = lo + self.o.range_size as i64 - 1;
            x.exec(self.stmt(t, k), &[Param::Int(lo), Param::Int(hi)])?;
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn reads(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let o = &*self.o;
        let (points, range_selects) = (o.point_selects, o.range_selects);
        let ranges = [
            (o.simple_ranges, Kind::Simple),
            (o.sum_ranges, Kind::Sum),
            (o.order_ranges, Kind::Order),
            (o.distinct_ranges, Kind::Distinct),
        ];
        if points > 0 {
            self.points(x, points)?;
        }
        if range_selects {
            for (n, k) in ranges {
                if n > 0 {
                    self.ranges(x, n, k)?;
                }
            }
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn updates(&mut self, x: &mut dyn Exec, n: u32, k: Kind) -> Result<(), Abort> {
        let t = self.table();
        for _ in 0..n {
            if k == Kind::NonIndexUpdate {
                self.rnd.fill_template(C_TEMPLATE, &mut self.c);
                let id = self.id();
                x.exec(self.stmt(t, k), &[Param::Str(&self.c), Param::Int(id as i64)])?;
            } else {
                let id = self.id();
                x.exec(self.stmt(t, k), &[Param::Int(id as i64)])?;
            }
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn delete_inserts(&mut self, x: &mut dyn Exec, n: u32) -> Result<(), Abort> {
        let t = self.table();
        for _ in 0..n {
            let id = self.id() as i64;
            let k = self.id() as i64;
            self.rnd.fill_template(C_TEMPLATE, &mut self.c);
            self.rnd.fill_template(PAD_TEMPLATE, &mut self.pad);
            x.exec(self.stmt(t, Kind::Delete), &[Param::Int(id)])?;
            let params = [Param::Int(id), Param::Int(k), Param::Str(&self.c), Param::Str(&self.pad)];
            x.exec(self.stmt(t, Kind::Insert), &params)?;
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn writes(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let (index, non_index, delete_inserts) =
            (self.o.index_updates, self.o.non_index_updates, self.o.delete_inserts);
        if index > 0 {
            self.updates(x, index, Kind::IndexUpdate)?;
        }
        if non_index > 0 {
            self.updates(x, non_index, Kind::NonIndexUpdate)?;
        }
        if delete_inserts > 0 {
            self.delete_inserts(x, delete_inserts)?;
        }
        Ok(())
    }

    fn segment(&self) -> (u32, u32) {
        let rlen = self.o.table_size as f64 / self.threads as f64;
        let rmin = rlen * (self.thread % self.threads) as f64;
        (rmin as u32, (rmin + rlen) as u32)
    }

    /// Runs one event (a transaction, or one statement for the single-statement tests).
    #[unsafe(link_section = ".text.hot.versus")]
    pub fn event(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        if let Some(b) = self.begin {
            x.exec(b, &[])?;
        }
        match self.test {
            Test::OltpReadWrite => {
                self.reads(x)?;
                self.writes(x)?;
            }
            Test::OltpReadOnly => self.reads(x)?,
            Test::OltpWriteOnly => self.writes(x)?,
            Test::OltpPointSelect => self.points(x, 1)?,
            Test::OltpUpdateIndex => self.updates(x, self.o.index_updates, Kind::IndexUpdate)?,
            Test::OltpUpdateNonIndex => self.updates(x, self.o.non_index_updates, Kind::NonIndexUpdate)?,
            Test::OltpIncUpdate => self.updates(x, 1, Kind::IncUpdate)?,
            Test::OltpDelete => {
                let t = self.table();
                let id = self.id();
                x.exec(self.stmt(t, Kind::Delete), &[Param::Int(id as i64)])?;
            }
            Test::OltpInsert => self.insert(x)?,
            Test::SelectRandomPoints => {
                let (lo, hi) = self.segment();
                let vals: Vec<i64> = (0..self.o.random_points).map(|_| self.rnd.default(lo, hi) as i64).collect();
                let params: Vec<Param<'_>> = vals.iter().map(|v| Param::Int(*v)).collect();
                x.exec(self.special.expect("prepared"), &params)?;
            }
            Test::SelectRandomRanges => {
                let (lo, hi) = self.segment();
                let mut vals = Vec::with_capacity(2 * self.o.number_of_ranges as usize);
                for _ in 0..self.o.number_of_ranges {
                    let v = self.rnd.default(lo, hi) as i64;
                    vals.push(v);
                    vals.push(v + self.o.delta as i64);
                }
                let params: Vec<Param<'_>> = vals.iter().map(|v| Param::Int(*v)).collect();
                x.exec(self.special.expect("prepared"), &params)?;
            }
            Test::BulkInsert => self.bulk_row(x)?,
        }
        if let Some(c) = self.commit {
            x.exec(c, &[])?;
        }
        Ok(())
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn insert(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let t = self.table() + 1;
        let k = self.id();
        self.rnd.fill_template(C_TEMPLATE, &mut self.c);
        self.rnd.fill_template(PAD_TEMPLATE, &mut self.pad);
        let id: i64 = if self.o.auto_inc { 0 } else { self.unique.next() as i64 - 2_147_483_648 };
        self.text.clear();
        let _ =
            write!(self.text, "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')", self.c, self.pad);
        let sql = std::mem::take(&mut self.text);
        let r = x.query(&sql);
        self.text = sql;
        r
    }

    fn bulk_prefix(&self) -> String {
        format!("INSERT INTO sbtest{} VALUES", self.thread + 1)
    }

    fn bulk_row(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let n = self.bulk_next;
        let tuple = format!("({n},{n})");
        if self.bulk_rows > 0 && self.text.len() + 1 + tuple.len() > BULK_BUFFER {
            self.bulk_flush(x)?;
        }
        if self.bulk_rows == 0 {
            self.text = self.bulk_prefix();
        } else {
            self.text.push(',');
        }
        self.text.push_str(&tuple);
        self.bulk_rows += 1;
        self.bulk_next += 1;
        Ok(())
    }

    fn bulk_flush(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        if self.bulk_rows == 0 {
            return Ok(());
        }
        let sql = std::mem::take(&mut self.text);
        self.bulk_rows = 0;
        x.query(&sql)
    }

    /// End of the run for this thread (sysbench's `thread_done`): flushes a pending bulk INSERT.
    pub fn done(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        if self.test == Test::BulkInsert { self.bulk_flush(x) } else { Ok(()) }
    }
}
