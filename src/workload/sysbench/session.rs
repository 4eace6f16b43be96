//! A worker's connection with sysbench's counting and error rules: reads/writes/other per statement,
//! ignorable errors restart the event, lost connections reconnect (re-preparing statements) and are
//! counted, anything else is fatal with a message naming the statement.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use super::counts::Counts;
use super::oltp::{Abort, Exec};
use super::options::IgnoreErrors;
use crate::driver::{Connection, DbError, Outcome, Param, Rows, StmtId};
use crate::error::Error;

/// A worker's connection plus its counters.
pub struct Session<'a> {
    /// The connection.
    pub conn: Box<dyn Connection>,
    /// Counters since the last [`Session::take_counts`].
    pub counts: Counts,
    ignore: &'a IgnoreErrors,
    stop: &'a AtomicBool,
    deadline: Option<Instant>,
    last_error: Option<DbError>,
}

impl<'a> Session<'a> {
    /// A session on `conn`; reconnect attempts give up when `stop` is set or `deadline` passes.
    pub fn new(
        conn: Box<dyn Connection>,
        ignore: &'a IgnoreErrors,
        stop: &'a AtomicBool,
        deadline: Option<Instant>,
    ) -> Self {
        Session { conn, counts: Counts::default(), ignore, stop, deadline, last_error: None }
    }

    /// Returns and resets the counters.
    pub fn take_counts(&mut self) -> Counts {
        std::mem::take(&mut self.counts)
    }

    /// Reconnects until it works, `stop` is set or the deadline passes; counts one reconnect.
    pub fn reconnect(&mut self) -> Result<(), Abort> {
        let stop = self.stop;
        reconnect_until(self.conn.as_mut(), &|| stop.load(Ordering::Relaxed), self.deadline)?;
        self.counts.reconnects += 1;
        Ok(())
    }

    fn handle(&mut self, e: DbError, sql: &str) -> Abort {
        if e.is_connection_lost() {
            return match self.reconnect() {
                Ok(()) => Abort::Restart,
                Err(a) => a,
            };
        }
        if let Some(code) = e.code
            && self.ignore.contains(code)
        {
            self.counts.errors += 1;
            self.last_error = Some(e);
            return Abort::Restart;
        }
        Abort::Fatal(fatal(&format!("query '{}'", sql.trim()), e))
    }
}

/// Reconnects `conn` (re-preparing its statements), retrying every millisecond until it works,
/// `give_up()` says so or `deadline` passes (`Abort::Stop`); the tables being gone is fatal.
pub fn reconnect_until(
    conn: &mut dyn Connection,
    give_up: &dyn Fn() -> bool,
    deadline: Option<Instant>,
) -> Result<(), Abort> {
    loop {
        if give_up() || deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Abort::Stop);
        }
        match conn.reconnect() {
            Ok(()) => return Ok(()),
            Err(e) if e.code == Some(1146) => return Err(Abort::Fatal(fatal("reconnect", e))),
            Err(e) => {
                note_outage(&e);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// Says once per process, on stderr, that the server cannot be reached: workers keep trying to reconnect
/// until it is back or the run ends, and the report alone would only show a drop in throughput.
fn note_outage(e: &DbError) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("versus: the server cannot be reached ({e}); reconnecting until it is back or the run ends");
    }
}

/// The fatal error for a failed statement.
pub fn fatal(context: &str, e: DbError) -> Error {
    let hint = match e.code {
        Some(1146) => "; run prepare first",
        Some(1062) => "; add 1062 to --mysql-ignore-errors to retry duplicate keys",
        _ => "",
    };
    Error::Sql { context: context.to_string(), code: e.code, message: format!("{e}{hint}") }
}

impl Exec for Session<'_> {
    #[inline]
    #[unsafe(link_section = ".text.hot.versus")]
    fn exec(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), Abort> {
        match self.conn.execute(stmt, params) {
            Ok(o) => {
                self.counts.statement(o);
                Ok(())
            }
            Err(e) => {
                let sql = self.conn.sql(stmt).to_string();
                Err(self.handle(e, &sql))
            }
        }
    }

    fn query(&mut self, sql: &str) -> Result<(), Abort> {
        match self.conn.query(sql) {
            Ok(o) => {
                self.counts.statement(o);
                Ok(())
            }
            Err(e) => {
                let short: String = sql.chars().take(200).collect();
                Err(self.handle(e, &short))
            }
        }
    }

    fn query_table(&mut self, sql: &str) -> Result<Rows, Abort> {
        match self.conn.query_table(sql) {
            Ok(r) => {
                self.counts.statement(r.outcome.unwrap_or(Outcome::Other));
                Ok(r)
            }
            Err(e) => {
                let short: String = sql.chars().take(200).collect();
                Err(self.handle(e, &short))
            }
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, Abort> {
        match self.conn.prepare(sql) {
            Ok(id) => Ok(id),
            Err(e) => Err(self.handle(e, sql)),
        }
    }

    fn add_counts(&mut self, c: &Counts) {
        self.counts.add(c);
    }

    fn reconnect(&mut self) -> Result<(), Abort> {
        Session::reconnect(self)
    }

    fn take_error(&mut self) -> Option<DbError> {
        self.last_error.take()
    }
}
