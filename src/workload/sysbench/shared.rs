//! What the workers and the reporter of a run share: the options, the stop and failure flags, the
//! per-worker in-flight marks and accumulators, the `--rate` arrival schedule, and where the workers'
//! events come from ([`Source`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::oltp::{Abort, Exec, Workload};
use super::options::{Options, Test};
use super::rng::{Unique, Xoroshiro};
use super::session::Counts;
use super::stats::{Latency, ThreadFigures, new_histogram};
use crate::driver::{Connection, DbError};
use crate::error::Error;

/// sysbench's event queue size under `--rate` (the ring holds one fewer).
pub const QUEUE_SIZE: usize = 131_072;

/// What one worker accumulates between two drains by the reporter.
pub(super) struct Acc {
    pub(super) counts: Counts,
    pub(super) hist: Histogram<u64>,
    pub(super) lat: Latency,
    /// Every event latency in µs, kept only under `--latency-log`.
    pub(super) raw: Vec<u64>,
}

impl Acc {
    pub(super) fn new() -> Self {
        Acc { counts: Counts::default(), hist: new_histogram(), lat: Latency::default(), raw: Vec::new() }
    }
}

/// `--rate` arrivals: an absolute Poisson schedule served FIFO by whichever worker is free, which is
/// sysbench's event generator thread and queue without the thread.
pub(super) struct Schedule {
    pub(super) rng: Xoroshiro,
    pub(super) mean_ns: f64,
    pub(super) next: Instant,
    pub(super) pending: VecDeque<Instant>,
}

impl Schedule {
    fn advance(&mut self) -> Instant {
        let t = self.next;
        let gap = -self.mean_ns * (1.0 - self.rng.next_f64()).ln();
        self.next += Duration::from_nanos(gap as u64);
        t
    }

    /// Arrivals up to `now` not yet taken; errors when the queue would overflow.
    pub(super) fn fill(&mut self, now: Instant) -> std::result::Result<usize, ()> {
        while self.next <= now {
            let t = self.advance();
            self.pending.push_back(t);
            if self.pending.len() >= QUEUE_SIZE - 1 {
                return Err(());
            }
        }
        Ok(self.pending.len())
    }

    pub(super) fn take(&mut self, now: Instant) -> std::result::Result<Instant, ()> {
        self.fill(now)?;
        Ok(match self.pending.pop_front() {
            Some(t) => t,
            None => self.advance(),
        })
    }
}

/// One worker's in-flight mark, on a cache line of its own: every worker writes its own at every event.
#[repr(align(128))]
pub(super) struct InFlight(pub(super) AtomicU64);

/// CLOCK_MONOTONIC in ns: the clock behind `Instant` on Linux, read without `Instant`'s checked
/// subtraction and 128-bit conversion (which took 55 of the ~1,200 user-space instructions per point select).
#[inline]
pub(super) fn mono_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC is always readable");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

pub(super) struct Shared {
    pub(super) opts: Options,
    pub(super) source: Source,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) failed: AtomicBool,
    pub(super) fatal: Mutex<Option<Error>>,
    pub(super) warming: AtomicBool,
    pub(super) events_claimed: AtomicU64,
    /// Per worker: when its current event began, in ns after `epoch` plus one; 0 between events. The
    /// events in service are the marks that are set.
    pub(super) in_flight: Vec<InFlight>,
    pub(super) epoch: Instant,
    /// `epoch` as [`mono_ns`] read it (straight after the `Instant`, so within a few dozen ns of it).
    pub(super) epoch_ns: u64,
    pub(super) schedule: Option<Mutex<Schedule>>,
    pub(super) accs: Vec<Mutex<Acc>>,
    pub(super) unique: Arc<Unique>,
}

impl Shared {
    pub(super) fn fail(&self, e: Error) {
        let mut g = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert(e);
        self.failed.store(true, Ordering::SeqCst);
    }

    /// Nanoseconds from `epoch` to `t` (0 before it): the clock of the in-flight marks and latencies.
    #[inline]
    pub(super) fn since_epoch(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Nanoseconds from `epoch` to now, read as [`mono_ns`]: the closed-loop worker's one clock read per
    /// event, which gives both ends of its latencies. Against [`Shared::since_epoch`] it may lag by the few
    /// dozen ns between the two readings of the epoch, so the two are not mixed in one latency.
    #[inline]
    pub(super) fn clock_ns(&self) -> u64 {
        mono_ns().saturating_sub(self.epoch_ns)
    }

    /// Worker `tid` starts an event that arrived at `t0` ([`Shared::since_epoch`]).
    #[inline]
    pub(super) fn begin_event(&self, tid: usize, t0: u64) {
        self.in_flight[tid].0.store(t0 + 1, Ordering::Relaxed);
    }

    /// Worker `tid`'s event ended (finished or abandoned).
    #[inline]
    pub(super) fn end_event(&self, tid: usize) {
        self.in_flight[tid].0.store(0, Ordering::Relaxed);
    }

    /// Events begun and not yet ended (sysbench's "concurrency").
    pub(super) fn events_in_service(&self) -> u64 {
        self.in_flight.iter().filter(|f| f.0.load(Ordering::Relaxed) != 0).count() as u64
    }

    /// Counts the events still running at `now` into the per-thread figures, as sysbench's timers count
    /// them when a forced shutdown reports: one more event, and its time so far.
    pub(super) fn add_running_events(&self, per_thread: &mut [ThreadFigures], now: Instant) {
        for (t, f) in per_thread.iter_mut().zip(&self.in_flight) {
            let v = f.0.load(Ordering::Relaxed);
            if v != 0 {
                t.events += 1;
                t.time_ns += now.saturating_duration_since(self.epoch + Duration::from_nanos(v - 1)).as_nanos() as u64;
            }
        }
    }

    pub(super) fn stopping(&self) -> bool {
        self.failed.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Adds what worker `tid` counted (statements, errors, reconnects, and for a finished event its
    /// latency) to its accumulator, where the reporter finds it. An event that began in the warm-up
    /// (`warm`) and ends after it belongs to neither period and is dropped.
    #[unsafe(link_section = ".text.hot.versus")]
    pub(super) fn record(&self, tid: usize, warm: bool, c: &Counts, latency_ns: Option<u64>) {
        let mut acc = self.accs[tid].lock().unwrap_or_else(|p| p.into_inner());
        if warm && !self.warming.load(Ordering::SeqCst) {
            return;
        }
        acc.counts.add(c);
        if let Some(ns) = latency_ns {
            acc.lat.record(ns);
            let us = (ns / 1000).max(1);
            if self.opts.percentile > 0 {
                let _ = acc.hist.record(us);
            }
            if self.opts.latency_log.is_some() {
                acc.raw.push(us);
            }
        }
    }
}

/// What one worker runs: the statements of its events on its connection.
pub trait Events: Send {
    /// Prepares the worker's statements on `conn` (sysbench's `thread_init`).
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), DbError>;
    /// Runs one event.
    fn event(&mut self, x: &mut dyn Exec) -> Result<(), Abort>;
    /// The event ended (finished, failed or given up); `measured` when it began after the warm-up, so
    /// that it counts.
    #[unsafe(link_section = ".text.hot.versus")]
    fn end_event(&mut self, _measured: bool) {}
    /// The end of the run for this worker (sysbench's `thread_done`).
    fn done(&mut self, _x: &mut dyn Exec) -> Result<(), Abort> {
        Ok(())
    }
}

impl Events for Workload {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), DbError> {
        Workload::prepare(self, conn)
    }
    #[inline]
    #[unsafe(link_section = ".text.hot.versus")]
    fn event(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        Workload::event(self, x)
    }
    fn done(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        Workload::done(self, x)
    }
}

/// Makes worker `tid`'s events from its seed.
pub type EventFactory = dyn Fn(usize, u64) -> Box<dyn Events> + Send + Sync;

/// Where the workers' events come from.
#[derive(Clone)]
pub enum Source {
    /// One of sysbench's tests.
    Test(Test),
    /// Another workload's events (thread-per-connection workers only).
    Custom(Arc<EventFactory>),
}

impl Source {
    /// The sysbench test, if it is one.
    pub fn test(&self) -> Option<Test> {
        match self {
            Source::Test(t) => Some(*t),
            Source::Custom(_) => None,
        }
    }
}
