//! Event-loop workers (`--client-threads=N`): each OS thread drives several connections through one
//! epoll instance (each descriptor registered once, edge-triggered), one statement in flight per
//! connection, so a thread sleeps once for all the responses that are ready instead of once per statement,
//! and sends the next statement of each before it waits again. Events are the same as in the thread-per-connection model: the workload's statements are
//! recorded first (they never depend on results), then sent one after the other.

use std::os::fd::{BorrowedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};

use super::oltp::{Abort, Exec, Workload};
use super::options::ClientPriority;
use super::session::{Counts, Session, fatal, reconnect_until};
use super::shared::Shared;
use crate::driver::{Connection, DbError, Driver, Outcome, Param, StmtId};
use crate::error::Error;

enum Owned {
    Int(i64),
    Str(String),
    Null,
}

enum Planned {
    Exec(StmtId, Vec<Owned>),
    Query(String),
}

/// An [`Exec`] that records the statements of an event instead of running them.
struct Recorder<'a>(&'a mut Vec<Planned>);

impl Exec for Recorder<'_> {
    fn exec(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), Abort> {
        let p = params
            .iter()
            .map(|p| match p {
                Param::Int(v) => Owned::Int(*v),
                Param::Str(s) => Owned::Str(s.to_string()),
                Param::Null => Owned::Null,
            })
            .collect();
        self.0.push(Planned::Exec(stmt, p));
        Ok(())
    }

    fn query(&mut self, sql: &str) -> Result<(), Abort> {
        self.0.push(Planned::Query(sql.to_string()));
        Ok(())
    }
}

#[derive(PartialEq)]
enum State {
    /// A statement is in flight.
    Waiting,
    /// Under `--rate`: the next event arrives at this time.
    Arrival(Instant),
    /// No more events; the slot ends at this time (the time limit).
    Until(Instant),
    /// No more events.
    Done,
}

struct Slot {
    tid: usize,
    conn: Box<dyn Connection>,
    wl: Workload,
    plan: Vec<Planned>,
    idx: usize,
    t0: Instant,
    /// The event in flight began in the warm-up.
    warm: bool,
    counts: Counts,
    state: State,
    /// The connection's descriptor is new (a reconnect) and not yet registered with the loop's epoll.
    rearm: bool,
}

struct Loop<'a> {
    sh: &'a Shared,
    deadline: Option<Instant>,
}

impl Loop<'_> {
    /// Claims the slot's next event: true when it starts now (planned, ready to dispatch); otherwise the
    /// slot is parked until its arrival or done.
    fn begin(&self, s: &mut Slot) -> bool {
        let o = &self.sh.opts;
        let now = Instant::now();
        if self.sh.stopping() || self.deadline.is_some_and(|d| now >= d) {
            s.state = State::Done;
            return false;
        }
        if o.events > 0
            && !self.sh.warming.load(Ordering::Relaxed)
            && self.sh.events_claimed.fetch_add(1, Ordering::Relaxed) >= o.events
        {
            s.state = State::Done;
            return false;
        }
        let t0 = match &self.sh.schedule {
            None => now,
            Some(sched) => {
                let taken = sched.lock().unwrap_or_else(|p| p.into_inner()).take(now);
                let Ok(arrival) = taken else {
                    self.sh.fail(Error::Other(
                        "the event queue is full: the worker threads cannot keep up with --rate; lower --rate or add --threads".into(),
                    ));
                    s.state = State::Done;
                    return false;
                };
                if let Some(d) = self.deadline
                    && arrival >= d
                {
                    // No arrival before the time limit: the run still lasts until it, as in sysbench.
                    s.state = State::Until(d);
                    return false;
                }
                if arrival > now {
                    s.state = State::Arrival(arrival);
                    return false;
                }
                arrival
            }
        };
        self.start(s, t0);
        true
    }

    /// Starts an event that arrived at `t0`: counts it in service and records its statements.
    fn start(&self, s: &mut Slot, t0: Instant) {
        s.t0 = t0;
        s.warm = self.sh.warming.load(Ordering::SeqCst);
        s.state = State::Waiting;
        self.sh.begin_event(s.tid, self.sh.since_epoch(t0));
        self.plan(s);
    }

    fn plan(&self, s: &mut Slot) {
        s.plan.clear();
        s.idx = 0;
        let _ = s.wl.event(&mut Recorder(&mut s.plan));
    }

    /// Sends the next planned statement, finishing events (and starting new ones) that have none left.
    fn dispatch(&self, s: &mut Slot) {
        loop {
            if s.idx == s.plan.len() {
                self.finish(s, true);
                if !self.begin(s) {
                    return;
                }
                continue;
            }
            let m = s.conn.multiplexed().expect("checked at start");
            let r = match &s.plan[s.idx] {
                Planned::Exec(id, owned) => {
                    let params: Vec<Param<'_>> = owned
                        .iter()
                        .map(|p| match p {
                            Owned::Int(v) => Param::Int(*v),
                            Owned::Str(x) => Param::Str(x),
                            Owned::Null => Param::Null,
                        })
                        .collect();
                    m.send_execute(*id, &params)
                }
                Planned::Query(sql) => m.send_query(sql),
            };
            match r {
                Ok(()) => {
                    s.state = State::Waiting;
                    return;
                }
                Err(e) => {
                    if !self.error(s, e) {
                        return;
                    }
                }
            }
        }
    }

    /// Records a finished (or abandoned) event's counts and latency.
    fn finish(&self, s: &mut Slot, completed: bool) {
        let mut c = std::mem::take(&mut s.counts);
        c.events = u64::from(completed);
        let latency_ns = completed.then(|| s.t0.elapsed().as_nanos() as u64);
        self.sh.end_event(s.tid);
        self.sh.record(s.tid, s.warm, &c, latency_ns);
    }

    /// A response arrived.
    fn response(&self, s: &mut Slot, r: Result<Outcome, DbError>) {
        match r {
            Ok(o) => {
                s.counts.statement(o);
                s.idx += 1;
                self.dispatch(s);
            }
            Err(e) => {
                if self.error(s, e) {
                    self.dispatch(s);
                }
            }
        }
    }

    /// sysbench's error rules; true when the event was re-planned and should be dispatched again.
    fn error(&self, s: &mut Slot, e: DbError) -> bool {
        if e.is_connection_lost() {
            match reconnect_until(s.conn.as_mut(), &|| self.sh.stopping(), self.deadline) {
                Ok(()) => {}
                Err(a) => {
                    if let Abort::Fatal(e) = a {
                        self.sh.fail(e);
                    }
                    self.finish(s, false);
                    s.state = State::Done;
                    return false;
                }
            }
            s.counts.reconnects += 1;
            s.rearm = true;
        } else if e.code.is_some_and(|c| self.sh.opts.ignore_errors.contains(c)) {
            s.counts.errors += 1;
        } else {
            let sql = match &s.plan[s.idx.min(s.plan.len().saturating_sub(1))] {
                Planned::Exec(id, _) => s.conn.sql(*id).to_string(),
                Planned::Query(q) => q.chars().take(200).collect(),
            };
            self.sh.fail(fatal(&format!("query '{}'", sql.trim()), e));
            self.finish(s, false);
            s.state = State::Done;
            return false;
        }
        // The failed attempt's statements and error count now, as sysbench counts them.
        self.sh.record(s.tid, s.warm, &std::mem::take(&mut s.counts), None);
        if self.sh.stopping() {
            self.finish(s, false);
            s.state = State::Done;
            return false;
        }
        self.plan(s);
        true
    }
}

/// Runs the connections `tids` on this thread until the run ends.
#[allow(clippy::too_many_arguments)]
pub(super) fn worker(
    tids: &[usize],
    sh: &Shared,
    driver: &dyn Driver,
    rnds: Vec<super::rng::Random>,
    ready: &Barrier,
    go: &Barrier,
    start_cell: &Mutex<Option<Instant>>,
    done: &Sender<usize>,
) {
    let o = &sh.opts;
    let mut slots = Vec::with_capacity(tids.len());
    let mut init: Result<(), Error> = Ok(());
    for (tid, rnd) in tids.iter().zip(rnds) {
        let Some(test) = sh.source.test() else {
            init = Err(Error::option("--client-threads", "applies to sysbench's tests only; leave it at 0"));
            break;
        };
        let (thread, threads) = o.global_thread(*tid);
        let mut wl = Workload::new(test, Arc::new(o.oltp.clone()), rnd, sh.unique.clone(), thread, threads);
        let r = driver.connect().map_err(|e| super::prepare::sql_error("connect", e)).and_then(|mut c| {
            wl.prepare(c.as_mut()).map_err(|e| fatal("prepare statements", e))?;
            if c.multiplexed().is_none() {
                return Err(Error::option(
                    "--client-threads",
                    "needs the lean client (--client=auto or lean, no TLS or compression)",
                ));
            }
            Ok(c)
        });
        match r {
            Ok(conn) => slots.push(Slot {
                tid: *tid,
                conn,
                wl,
                plan: Vec::new(),
                idx: 0,
                t0: Instant::now(),
                warm: false,
                counts: Counts::default(),
                state: State::Done,
                rearm: true,
            }),
            Err(e) => {
                init = Err(e);
                break;
            }
        }
    }
    let init = init.and_then(|()| set_priority(o.client_priority));
    let ok = match init {
        Ok(()) => true,
        Err(e) => {
            sh.fail(e);
            false
        }
    };
    ready.wait();
    go.wait();
    let start = *start_cell.lock().unwrap_or_else(|p| p.into_inner());
    if let (true, Some(start)) = (ok, start) {
        run_loop(sh, &mut slots, start);
    }
    for mut s in slots {
        if !sh.failed.load(Ordering::Relaxed) {
            let mut session = Session::new(s.conn, &o.ignore_errors, &sh.stop, None);
            if let Err(Abort::Fatal(e)) = s.wl.done(&mut session) {
                sh.fail(e);
            }
            let c = session.take_counts();
            sh.accs[s.tid].lock().unwrap_or_else(|p| p.into_inner()).counts.add(&c);
        }
        let _ = done.send(s.tid);
    }
}

/// Under `--client-priority=realtime`, puts the calling thread (an event loop) under SCHED_FIFO, priority
/// 1: a response wakes the loop at once instead of queueing it behind the server's threads, and the
/// server threads it wakes cannot preempt it before it has served all its ready connections. It cannot
/// starve the machine: it sleeps in epoll_wait whenever nothing is ready, and the kernel caps real-time
/// tasks at 95 % of each second. Measured, it loses (the loop then wakes once per response, preempting a
/// server thread each time), so it is not the default.
fn set_priority(p: ClientPriority) -> Result<(), Error> {
    if p == ClientPriority::Normal {
        return Ok(());
    }
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: a plain system call on the calling thread (pid 0), with a valid parameter block.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
        return Ok(());
    }
    Err(Error::option(
        "--client-priority",
        format!(
            "real-time scheduling is not permitted ({}); run with CAP_SYS_NICE (or as root), or use --client-priority=normal",
            std::io::Error::last_os_error()
        ),
    ))
}

/// Registers `fd` (connection `i`'s new descriptor) with `ep`, edge-triggered: the loop hears of every
/// arrival of bytes once, and reads until the response in flight is complete.
fn register(ep: &Epoll, fd: RawFd, i: usize) -> nix::Result<()> {
    // SAFETY: `fd` is the open descriptor of a connection that outlives this call.
    let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
    let ev = EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLET, i as u64);
    match ep.add(bfd, ev) {
        // A reconnect that got the same descriptor number before the old one left the set.
        Err(Errno::EEXIST) => ep.modify(bfd, &mut EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLET, i as u64)),
        r => r,
    }
}

/// Reads what arrived for slot `s` and handles every complete response.
fn on_readable(lp: &Loop<'_>, s: &mut Slot) {
    loop {
        let m = s.conn.multiplexed().expect("lean connection");
        let full = match m.read_available() {
            Err(e) => {
                lp.response(s, Err(e));
                return;
            }
            Ok(full) => full,
        };
        let mut took = false;
        while s.state == State::Waiting {
            let Some(r) = s.conn.multiplexed().and_then(|m| m.take_result()) else { break };
            took = true;
            lp.response(s, r);
        }
        // One statement in flight: after a complete response nothing more is in the socket. A read that
        // filled the buffer without completing one may have left bytes there, of which no new edge tells.
        if took || !full || s.state != State::Waiting {
            return;
        }
    }
}

fn run_loop(sh: &Shared, slots: &mut [Slot], start: Instant) {
    let o = &sh.opts;
    let lp = Loop { sh, deadline: (o.time > 0).then(|| start + Duration::from_secs(o.time + o.warmup_time)) };
    let ep = match Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC) {
        Ok(ep) => ep,
        Err(e) => {
            sh.fail(Error::Other(format!("cannot create the event loop's epoll instance: {e}")));
            return;
        }
    };
    for s in slots.iter_mut() {
        if lp.begin(s) {
            lp.dispatch(s);
        }
    }
    let mut events = vec![EpollEvent::empty(); slots.len().max(1)];
    loop {
        if sh.stopping() {
            for s in slots.iter_mut() {
                if s.state == State::Waiting {
                    lp.finish(s, false);
                }
                s.state = State::Done;
            }
        }
        let now = Instant::now();
        let mut timeout = Duration::from_millis(50);
        let mut any = false;
        for (i, s) in slots.iter_mut().enumerate() {
            match s.state {
                State::Waiting => any = true,
                State::Arrival(t) | State::Until(t) => {
                    any = true;
                    timeout = timeout.min(t.saturating_duration_since(now));
                }
                State::Done => {}
            }
            if s.rearm
                && let Some(fd) = s.conn.multiplexed().and_then(|m| m.fd())
            {
                s.rearm = false;
                if let Err(e) = register(&ep, fd, i) {
                    sh.fail(Error::Other(format!("cannot add a connection to the event loop: {e}")));
                    return;
                }
            }
        }
        if !any {
            return;
        }
        let ms = timeout.as_micros().div_ceil(1000) as u16;
        let n = match ep.wait(&mut events, EpollTimeout::from(ms)) {
            Ok(n) => n,
            Err(Errno::EINTR) => 0,
            Err(e) => {
                sh.fail(Error::Other(format!("epoll_wait: {e}")));
                return;
            }
        };
        let now = Instant::now();
        for s in slots.iter_mut() {
            match s.state {
                State::Arrival(t) if t <= now => {
                    lp.start(s, t);
                    lp.dispatch(s);
                }
                State::Until(t) if t <= now => s.state = State::Done,
                _ => {}
            }
        }
        for ev in &events[..n] {
            let s = &mut slots[ev.data() as usize];
            if s.state == State::Waiting {
                on_readable(&lp, s);
            }
        }
    }
}
