//! Event-loop workers (`--client-threads=N`): each OS thread drives several connections with poll(2),
//! one statement in flight per connection, so a thread sleeps once for many responses instead of once per
//! statement. Events are the same as in the thread-per-connection model: the workload's statements are
//! recorded first (they never depend on results), then sent one after the other.

use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::oltp::{Abort, Exec, Workload};
use super::session::{Counts, Session, fatal, reconnect_until};
use super::shared::Shared;
use crate::driver::{Connection, DbError, Driver, Outcome, Param, StmtId};
use crate::error::Error;

enum Owned {
    Int(i64),
    Str(String),
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
        self.sh.begin_event(s.tid, t0);
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
                match o {
                    Outcome::Read => s.counts.reads += 1,
                    Outcome::Write => s.counts.writes += 1,
                    Outcome::Other => s.counts.other += 1,
                }
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
        let mut wl = Workload::new(sh.test, Arc::new(o.oltp.clone()), rnd, sh.unique.clone(), *tid as u32, o.threads);
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
            }),
            Err(e) => {
                init = Err(e);
                break;
            }
        }
    }
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

fn run_loop(sh: &Shared, slots: &mut [Slot], start: Instant) {
    let o = &sh.opts;
    let lp = Loop { sh, deadline: (o.time > 0).then(|| start + Duration::from_secs(o.time + o.warmup_time)) };
    for s in slots.iter_mut() {
        if lp.begin(s) {
            lp.dispatch(s);
        }
    }
    let mut ready = Vec::with_capacity(slots.len());
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
        for s in slots.iter() {
            match s.state {
                State::Waiting => any = true,
                State::Arrival(t) | State::Until(t) => {
                    any = true;
                    timeout = timeout.min(t.saturating_duration_since(now));
                }
                State::Done => {}
            }
        }
        if !any {
            return;
        }
        ready.clear();
        {
            let fds: Vec<(usize, i32)> = slots
                .iter_mut()
                .enumerate()
                .filter(|(_, s)| s.state == State::Waiting)
                .filter_map(|(i, s)| s.conn.multiplexed().and_then(|m| m.fd()).map(|fd| (i, fd)))
                .collect();
            // SAFETY: the descriptors belong to connections in `slots`, which outlive this block and are
            // not touched while `pfds` exists.
            let mut pfds: Vec<PollFd<'_>> = fds
                .iter()
                .map(|(_, fd)| PollFd::new(unsafe { BorrowedFd::borrow_raw(*fd) }, PollFlags::POLLIN))
                .collect();
            let ms = timeout.as_micros().div_ceil(1000) as i32;
            let t = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
            if poll(&mut pfds, t).is_ok() {
                for ((i, _), p) in fds.iter().zip(&pfds) {
                    if p.revents().is_some_and(|r| !r.is_empty()) {
                        ready.push(*i);
                    }
                }
            }
        }
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
        for &i in &ready {
            let s = &mut slots[i];
            if s.state != State::Waiting {
                continue;
            }
            let m = s.conn.multiplexed().expect("lean connection");
            match m.read_available() {
                Err(e) => lp.response(s, Err(e)),
                Ok(()) => {
                    while s.state == State::Waiting {
                        let Some(r) = s.conn.multiplexed().and_then(|m| m.take_result()) else { break };
                        lp.response(s, r);
                    }
                }
            }
        }
    }
}
