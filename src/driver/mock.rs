//! A deterministic in-process driver for tests: it classifies statements by their first word, can sleep
//! per statement, injects scripted errors at given executions, and logs every statement it runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Connection, DbError, Driver, Outcome, Param, StmtId};

#[derive(Default)]
struct State {
    log: Mutex<Vec<String>>,
    record: bool,
    failures: Mutex<HashMap<usize, DbError>>,
    connect_error: Option<DbError>,
    executions: AtomicUsize,
    connects: AtomicUsize,
    reconnects: AtomicUsize,
    delay: Duration,
    /// Single executions (0-based) that sleep this long instead of `delay`.
    slow: HashMap<usize, Duration>,
    all_other: bool,
}

/// A driver that talks to no server.
#[derive(Clone, Default)]
pub struct MockDriver {
    state: Arc<State>,
}

impl MockDriver {
    /// A mock that answers every statement at once.
    pub fn new() -> Self {
        Self::default()
    }

    fn state_mut(&mut self) -> &mut State {
        Arc::get_mut(&mut self.state).expect("configure the MockDriver before cloning it")
    }

    /// Sleeps `delay` in every statement.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.state_mut().delay = delay;
        self
    }

    /// Makes the `n`-th execution (0-based, over all connections) sleep `delay` (a hung statement).
    pub fn slow_at(mut self, n: usize, delay: Duration) -> Self {
        self.state_mut().slow.insert(n, delay);
        self
    }

    /// Counts every statement as "other", like sysbench's `--mysql-dry-run`.
    pub fn all_other(mut self) -> Self {
        self.state_mut().all_other = true;
        self
    }

    /// Records the text of every statement executed (see [`MockDriver::log`]).
    pub fn recording(mut self) -> Self {
        self.state_mut().record = true;
        self
    }

    /// Makes the `n`-th execution (0-based, counted over all connections) fail with `error`.
    pub fn fail_at(mut self, n: usize, error: DbError) -> Self {
        self.state_mut().failures.get_mut().expect("mock lock").insert(n, error);
        self
    }

    /// Makes every connection attempt fail with `error`.
    pub fn refuse_connections(mut self, error: DbError) -> Self {
        self.state_mut().connect_error = Some(error);
        self
    }

    /// The statements executed so far, with parameters substituted.
    pub fn log(&self) -> Vec<String> {
        self.state.log.lock().expect("mock lock").clone()
    }

    /// Number of statements executed (successful or not).
    pub fn executions(&self) -> usize {
        self.state.executions.load(Ordering::Relaxed)
    }

    /// Number of connections opened.
    pub fn connects(&self) -> usize {
        self.state.connects.load(Ordering::Relaxed)
    }

    /// Number of reconnects.
    pub fn reconnects(&self) -> usize {
        self.state.reconnects.load(Ordering::Relaxed)
    }
}

impl Driver for MockDriver {
    fn connect(&self) -> Result<Box<dyn Connection>, DbError> {
        if let Some(e) = &self.state.connect_error {
            return Err(e.clone());
        }
        self.state.connects.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(MockConnection { state: self.state.clone(), stmts: Vec::new(), text: String::new() }))
    }

    fn connect_first(&self) -> Result<Box<dyn Connection>, DbError> {
        self.connect()
    }

    fn name(&self) -> &'static str {
        "mock"
    }
}

struct MockConnection {
    state: Arc<State>,
    stmts: Vec<String>,
    text: String,
}

impl MockConnection {
    fn run(&mut self, sql: &str) -> Result<Outcome, DbError> {
        let n = self.state.executions.fetch_add(1, Ordering::Relaxed);
        let delay = self.state.slow.get(&n).copied().unwrap_or(self.state.delay);
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        if self.state.record {
            self.state.log.lock().expect("mock lock").push(sql.to_string());
        }
        if let Some(e) = self.state.failures.lock().expect("mock lock").remove(&n) {
            return Err(e);
        }
        if self.state.all_other {
            return Ok(Outcome::Other);
        }
        let word = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        Ok(match word.as_str() {
            "SELECT" => Outcome::Read,
            "BEGIN" | "COMMIT" | "ROLLBACK" | "SET" | "CREATE" | "DROP" | "ANALYZE" => Outcome::Other,
            _ => Outcome::Write,
        })
    }
}

impl Connection for MockConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        self.stmts.push(sql.to_string());
        Ok(StmtId(self.stmts.len() - 1))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        let mut text = std::mem::take(&mut self.text);
        super::substitute(&self.stmts[stmt.0], params, &mut text);
        let r = self.run(&text);
        self.text = text;
        r
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.run(sql)
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        self.state.reconnects.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn sql(&self, stmt: StmtId) -> &str {
        &self.stmts[stmt.0]
    }
}
