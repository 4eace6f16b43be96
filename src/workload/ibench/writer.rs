//! The write path of one client: a statement maker that draws the rows, paces them to the target rate
//! and hands INSERTs and DELETEs to an inserter and a deleter through bounded queues of 8 statements
//! (so neither writer gets more than 8 statements ahead of the other and the table keeps its size),
//! plus the shared step state and the statement executor with the reference's retry rule.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::options::{Options, Step};
use super::rows::{self, RowGen};
use super::stats::{Kind, Recorder};
use crate::driver::{Connection, DbError, Driver, ErrorKind, Rows};

/// Capacity of the queues between the statement maker and the writers (the reference's 8).
pub const QUEUE: usize = 8;

/// Consecutive failures of one statement after which the step gives up.
const MAX_RETRIES: u32 = 1000;

/// Server errors that retrying cannot cure: the step fails at once.
const FATAL_CODES: &[u16] = &[1044, 1045, 1046, 1049, 1054, 1064, 1142, 1146, 1176, 1227, 1290];

/// A statement for a writer, with the rows it inserts or deletes.
pub struct Statement {
    /// The SQL text.
    pub sql: String,
    /// Rows it should insert or delete.
    pub rows: u64,
}

/// State shared by every worker of one step.
pub struct StepCtx {
    /// The run's options.
    pub opts: Options,
    /// The step.
    pub step: Step,
    /// Opens connections.
    pub driver: Arc<dyn Driver>,
    /// Counts and response times.
    pub rec: Recorder,
    /// Set to end the step early: the time cap of a query step, Ctrl-C, or a failure.
    pub stop: AtomicBool,
    /// The caller's stop flag (Ctrl-C).
    pub user_stop: Arc<AtomicBool>,
    /// Set once every writer finished and, in a query step, the scheduled end has come: queries stop.
    pub writes_done: AtomicBool,
    /// The first failure, in one line.
    pub fatal: Mutex<Option<String>>,
    /// Current `min(transactionid)` estimate per table (index of [`Options::tables`]), for the point
    /// queries.
    pub min_ids: Vec<AtomicI64>,
    /// `min(transactionid)` reads: count and total µs.
    pub getmin: (AtomicU64, AtomicU64),
    /// Query checks: queries, rows expected, rows fetched.
    pub fetch: (AtomicU64, AtomicU64, AtomicU64),
    /// When the clock of the step started (set before the workers are released).
    pub start: Mutex<Option<Instant>>,
    /// The database holding the tables.
    pub database: String,
}

impl StepCtx {
    /// The context of `step`.
    pub fn new(
        opts: &Options,
        step: Step,
        driver: Arc<dyn Driver>,
        user_stop: Arc<AtomicBool>,
        database: &str,
    ) -> Self {
        StepCtx {
            opts: opts.clone(),
            step,
            driver,
            rec: Recorder::default(),
            stop: AtomicBool::new(false),
            user_stop,
            writes_done: AtomicBool::new(false),
            fatal: Mutex::new(None),
            min_ids: opts.tables().iter().map(|_| AtomicI64::new(0)).collect(),
            getmin: (AtomicU64::new(0), AtomicU64::new(0)),
            fetch: (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)),
            start: Mutex::new(None),
            database: database.to_string(),
        }
    }

    /// True once the step must end early.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.user_stop.load(Ordering::Relaxed)
    }

    /// True once a worker failed.
    pub fn failed(&self) -> bool {
        self.fatal.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// Records the first failure and stops the step.
    pub fn fail(&self, message: String) {
        self.fatal.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(message);
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Index of `client`'s table in [`Options::tables`].
    pub fn table_index(&self, client: u32) -> usize {
        if self.opts.shared_table { 0 } else { client as usize }
    }

    fn started(&self) -> Instant {
        self.start.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or_else(Instant::now)
    }

    /// Opens a worker connection on the benchmark database.
    pub fn connect(&self, what: &str) -> Result<Box<dyn Connection>, String> {
        let mut c = self.driver.connect().map_err(|e| format!("{what}: cannot connect: {e}"))?;
        c.query(&format!("USE {}", self.database)).map_err(|e| format!("{what}: USE {}: {e}", self.database))?;
        Ok(c)
    }
}

/// Runs `sql` on `conn`, records it under `kind`, and retries server errors as the reference does
/// (counted as retries). A lost connection, an error that retrying cannot cure, or too many retries
/// end the step with a one-line message. The rows recorded are `rows` when given (an INSERT's rows),
/// else the rows fetched (queries) or changed (deletes).
pub fn exec(
    ctx: &StepCtx,
    conn: &mut dyn Connection,
    kind: Kind,
    sql: &str,
    rows: Option<u64>,
) -> Result<Rows, String> {
    let mut attempts = 0;
    loop {
        let t0 = Instant::now();
        match conn.query_rows(sql) {
            Ok(r) => {
                let us = t0.elapsed().as_micros() as u64;
                let n = rows.unwrap_or(if kind == Kind::Query { r.fetched } else { r.affected });
                ctx.rec.record(kind, us, n);
                return Ok(r);
            }
            Err(e) => {
                if fatal(&e) {
                    return Err(describe(kind, sql, &e));
                }
                ctx.rec.retry(kind);
                attempts += 1;
                if attempts >= MAX_RETRIES || ctx.failed() {
                    return Err(format!("{} (gave up after {attempts} retries)", describe(kind, sql, &e)));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

fn fatal(e: &DbError) -> bool {
    e.is_connection_lost()
        || matches!(e.kind, ErrorKind::Connect | ErrorKind::Client)
        || e.code.is_some_and(|c| FATAL_CODES.contains(&c))
}

/// The one-line message of a failed statement.
pub fn describe(kind: Kind, sql: &str, e: &DbError) -> String {
    let short: String = sql.chars().take(80).collect();
    let ellipsis = if sql.len() > 80 { "…" } else { "" };
    if e.is_connection_lost() {
        format!("{} lost the connection to the server ({e}); did the server stop?", kind.name())
    } else {
        format!("{} failed: {e} (in `{short}{ellipsis}`)", kind.name())
    }
}

/// Reads `min(transactionid)` of `table` (NULL, an empty table, is 0).
pub fn read_min(ctx: &StepCtx, conn: &mut dyn Connection, table: &str) -> Result<i64, String> {
    let t0 = Instant::now();
    let sql = format!("SELECT min(transactionid) FROM {table}");
    let r = conn.query_rows(&sql).map_err(|e| describe(Kind::Delete, &sql, &e))?;
    ctx.getmin.0.fetch_add(1, Ordering::Relaxed);
    ctx.getmin.1.fetch_add(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
    Ok(r.first.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
}

/// Sleeps until `t`, waking early when the step stops; false if it stopped.
fn wait_until(ctx: &StepCtx, t: Instant) -> bool {
    loop {
        if ctx.stopping() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(50)));
    }
}

/// The statement maker of `client`: makes `rows_for(step)` rows in statements of `rpc_for(step)`
/// rows, and for steps with deletes one DELETE of as many rows per INSERT. In query steps statement
/// `k` is released at `start + (k + client/clients) × rpc/rate`, so inserts (and deletes) run at the
/// target rate, evenly spaced; elsewhere as fast as the writers take them.
///
/// `min_conn` (needed when there are deletes) reads `min(transactionid)` at the start and every
/// `resync_get_min` deletes, which copes with gaps in the keys.
pub fn maker(
    ctx: &StepCtx,
    client: u32,
    inserts: SyncSender<Statement>,
    deletes: Option<SyncSender<Statement>>,
    mut min_conn: Option<Box<dyn Connection>>,
) {
    let o = &ctx.opts;
    let table = o.table_of(client);
    let total = o.rows_for(ctx.step);
    let rpc = o.rpc_for(ctx.step);
    let mut rowgen = RowGen::new(o, o.seed_for(ctx.step, client));
    let slot = ctx.table_index(client);
    let mut min = 0;
    if deletes.is_some() {
        let Some(c) = min_conn.as_mut() else {
            ctx.fail("internal: the statement maker has no connection to read min(transactionid)".into());
            return;
        };
        match read_min(ctx, c.as_mut(), &table) {
            Ok(m) => min = m,
            Err(e) => {
                ctx.fail(e);
                return;
            }
        }
        ctx.min_ids[slot].fetch_max(min, Ordering::Relaxed);
    }
    let pace = match ctx.step {
        Step::Query { rate, .. } => Some(rpc as f64 / f64::from(rate.max(1))),
        _ => None,
    };
    let start = ctx.started();
    let offset = f64::from(client) / f64::from(o.clients.max(1));
    let mut done = 0u64;
    let mut k = 0u64;
    let mut sql = String::new();
    while done < total {
        if ctx.stopping() {
            break;
        }
        if let Some(gap) = pace
            && !wait_until(ctx, start + Duration::from_secs_f64(gap * (k as f64 + offset)))
        {
            break;
        }
        let n = rpc.min(total - done);
        rowgen.insert(&table, n, &mut sql);
        if inserts.send(Statement { sql: std::mem::take(&mut sql), rows: n }).is_err() {
            break;
        }
        if let Some(tx) = &deletes {
            if k > 0
                && k.is_multiple_of(o.resync_get_min.max(1) as u64)
                && let Some(c) = min_conn.as_mut()
            {
                match read_min(ctx, c.as_mut(), &table) {
                    Ok(m) => min = m,
                    Err(e) => {
                        ctx.fail(e);
                        break;
                    }
                }
            }
            if tx.send(Statement { sql: rows::delete(&table, min, n), rows: n }).is_err() {
                break;
            }
            min += n as i64;
            ctx.min_ids[slot].fetch_max(min, Ordering::Relaxed);
        }
        done += n;
        k += 1;
    }
}

/// An inserter or deleter: runs the statements of its queue until the maker is done (or the step
/// fails).
pub fn writer(ctx: &StepCtx, kind: Kind, mut conn: Box<dyn Connection>, queue: Receiver<Statement>) {
    for s in queue {
        if ctx.failed() {
            break;
        }
        let known = (kind == Kind::Insert).then_some(s.rows);
        if let Err(e) = exec(ctx, conn.as_mut(), kind, &s.sql, known) {
            ctx.fail(e);
            break;
        }
    }
}
