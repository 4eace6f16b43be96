//! Where a script's statements go: the worker's executor of the moment (its counting, error-classifying
//! session during events, its bare connection during `thread_init`), reached from the Lua callbacks
//! through a per-thread slot; and the counters that scripts bump themselves through the FFI.

use std::cell::{Cell, RefCell};

use crate::driver::{Connection, DbError, Param, Rows, StmtId};
use crate::workload::sysbench::oltp::{Abort, Exec};
use crate::workload::sysbench::session::{Counts, fatal};

type Slot = Option<*mut (dyn Exec + 'static)>;

thread_local! {
    /// The executor of the running Lua call on this thread, set by [`with_current`] for its duration.
    static CURRENT: Cell<Slot> = const { Cell::new(None) };
    /// What stopped the script's last statement, for the Rust side to act on once the Lua error
    /// reaches it (the script may also catch the error itself and go on).
    static PENDING: RefCell<Option<Abort>> = const { RefCell::new(None) };
}

/// Restores the previous slot when the call ends, also when it unwinds.
struct Restore(Slot);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `x` as this thread's current executor.
pub(super) fn with_current<R>(x: &mut dyn Exec, f: impl FnOnce() -> R) -> R {
    let p: *mut (dyn Exec + '_) = x;
    // SAFETY: only the lifetime bound is erased. The pointer is stored for the duration of `f` alone
    // (`Restore` puts the previous value back before `x`'s borrow ends, also on unwinding), and it is
    // read on this thread only, inside `f`, through `current`.
    let p: *mut (dyn Exec + 'static) = unsafe { std::mem::transmute(p) };
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(p))));
    f()
}

/// Runs `f` on the current executor; `None` when no call has set one.
pub(super) fn current<R>(f: impl FnOnce(&mut dyn Exec) -> R) -> Option<R> {
    let p = CURRENT.with(|c| c.get())?;
    // SAFETY: set by `with_current`, whose `&mut` borrow outlives the Lua call we are inside of; the
    // slot is cleared before it ends. No other reference to the executor is used while `f` runs: the
    // executor is only reached through this slot during the call.
    Some(f(unsafe { &mut *p }))
}

/// Keeps `a` as the reason the script's last statement stopped.
pub(super) fn set_pending(a: Abort) {
    PENDING.with(|p| *p.borrow_mut() = Some(a));
}

/// Takes the reason kept by [`set_pending`].
pub(super) fn take_pending() -> Option<Abort> {
    PENDING.with(|p| p.borrow_mut().take())
}

/// A bare connection as an executor: every error is fatal (connections a script opens besides its
/// first, and commands such as `prepare` that run outside a measured run). Counts are kept for the
/// caller to add where they belong.
pub(super) struct Bare<'a> {
    /// The connection.
    pub(super) conn: &'a mut dyn Connection,
    /// Statements counted so far.
    pub(super) counts: Counts,
}

impl Bare<'_> {
    fn fail(&self, what: &str, sql: &str, e: DbError) -> Abort {
        let short: String = sql.chars().take(200).collect();
        Abort::Fatal(fatal(&format!("{what} '{}'", short.trim()), e))
    }
}

impl Exec for Bare<'_> {
    fn exec(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), Abort> {
        match self.conn.execute(stmt, params) {
            Ok(o) => {
                self.counts.statement(o);
                Ok(())
            }
            Err(e) => {
                let sql = self.conn.sql(stmt).to_string();
                Err(self.fail("query", &sql, e))
            }
        }
    }

    fn query(&mut self, sql: &str) -> Result<(), Abort> {
        self.query_table(sql).map(|_| ())
    }

    fn query_table(&mut self, sql: &str) -> Result<Rows, Abort> {
        match self.conn.query_table(sql) {
            Ok(r) => {
                self.counts.statement(r.outcome.unwrap_or(crate::driver::Outcome::Other));
                Ok(r)
            }
            Err(e) => Err(self.fail("query", sql, e)),
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, Abort> {
        self.conn.prepare(sql).map_err(|e| self.fail("prepare", sql, e))
    }

    fn add_counts(&mut self, c: &Counts) {
        self.counts.add(c);
    }

    fn reconnect(&mut self) -> Result<(), Abort> {
        self.conn.reconnect().map_err(|e| Abort::Fatal(fatal("reconnect", e)))
    }
}

/// sysbench's counter kinds (`sb_counter_type`), in its order.
const COUNTERS: [fn(&mut Counts); 6] = [
    |c| c.other += 1,
    |c| c.reads += 1,
    |c| c.writes += 1,
    |c| c.events += 1,
    |c| c.errors += 1,
    |c| c.reconnects += 1,
];

/// `sb_counter_inc(thread, kind)`, the C function scripts declare with `ffi.cdef` and call through
/// `ffi.C` to count their own statements; it counts on the calling worker. Exported from the versus
/// binary (see build.rs) so that LuaJIT's FFI finds it by name, as it finds sysbench's.
#[unsafe(no_mangle)]
pub extern "C" fn sb_counter_inc(_thread: std::ffi::c_int, kind: std::ffi::c_int) {
    let Some(bump) = usize::try_from(kind).ok().and_then(|k| COUNTERS.get(k)) else { return };
    let mut c = Counts::default();
    bump(&mut c);
    // Transactions are counted by the run itself, one per event.
    if c.events > 0 {
        return;
    }
    current(|x| x.add_counts(&c));
}

/// The address of [`sb_counter_inc`], which keeps the linker from dropping the symbol.
pub(super) fn counter_symbol() -> usize {
    sb_counter_inc as *const () as usize
}
