//! The `run` phase as a library call: options in, [`RunResult`] out (per-interval series, HDR latency
//! histogram, counts, per-thread figures). One OS thread and one connection per worker; closed loop, or
//! open loop under `--rate` with queue time counted in latency.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;

use super::oltp::{Abort, Workload};
use super::options::{ClientAffinity, Options, Test};
use super::rng::{Random, Unique, Xoroshiro};
use super::session::{Counts, Session};
use super::stats::{Interval, Latency, RunResult, ThreadFigures, new_histogram};
use crate::driver::Driver;
use crate::driver::follow::{Follower, socket_of};
use crate::error::{Error, Result};

pub use super::shared::QUEUE_SIZE;
use super::shared::{Acc, InFlight, Schedule, Shared, mono_ns};
pub use super::shared::{EventFactory, Events, Source};

/// Progress callbacks of a run. All methods have empty defaults.
pub trait IntervalObserver {
    /// Every worker is connected and has prepared its statements; the clock starts.
    fn started(&mut self) {}
    /// The warmup ended; statistics were reset.
    fn warmup_done(&mut self) {}
    /// Every worker is connected and ready, the clock not started yet: false calls the run off (a
    /// coordinator's barrier, where the clients of one load wait for each other).
    fn barrier(&mut self) -> bool {
        true
    }
    /// One `--report-interval` line's figures.
    fn interval(&mut self, _i: &Interval) {}
    /// One `--report-interval` line's figures with the period's latency histogram (µs); by default
    /// the line alone goes to [`IntervalObserver::interval`].
    fn interval_histogram(&mut self, i: &Interval, _h: &Histogram<u64>) {
        self.interval(i)
    }
    /// A `--report-checkpoints` report (cumulative since the previous checkpoint).
    fn checkpoint(&mut self, _r: &RunResult) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl IntervalObserver for Quiet {}

fn clock_seed() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// Refuses more connections than the server's `max_connections` before any worker starts (a driver
/// that cannot tell, such as `--mysql-dry-run`'s, is not checked; a server that cannot be reached is
/// left to the workers to report).
pub(super) fn check_server_connections(driver: &dyn Driver, threads: usize) -> Result<()> {
    match driver.max_connections() {
        Some(max) if threads > max => Err(Error::option(
            "--threads",
            format!(
                "{threads} connections are more than the server allows (max_connections = {max}); use at most {max} threads, or raise max_connections (e.g. --set max_connections={threads} for a sandbox)"
            ),
        )),
        _ => Ok(()),
    }
}

/// Runs `test` with `opts` against `driver` until the event or time limit, Ctrl-C (`stop`), or a fatal
/// error (returned as `Err`, like sysbench which prints no report then).
pub fn run(
    test: Test,
    opts: &Options,
    driver: Arc<dyn Driver>,
    stop: Arc<AtomicBool>,
    obs: &mut dyn IntervalObserver,
) -> Result<RunResult> {
    run_source(Source::Test(test), opts, driver, stop, obs)
}

/// Runs the events of `source` with sysbench's loop, limits, rate, warm-up, intervals and error rules.
pub fn run_source(
    source: Source,
    opts: &Options,
    driver: Arc<dyn Driver>,
    stop: Arc<AtomicBool>,
    obs: &mut dyn IntervalObserver,
) -> Result<RunResult> {
    if matches!(source, Source::Custom(_)) && opts.client_threads > 0 {
        return Err(Error::option("--client-threads", "applies to sysbench's tests only; leave it at 0"));
    }
    let threads = opts.threads as usize;
    check_server_connections(driver.as_ref(), threads)?;
    let seed = if opts.rand.seed != 0 { opts.rand.seed } else { clock_seed() };
    let mut seeder = Xoroshiro::seeded(seed);
    let unique = Arc::new(Unique::new(seeder.next_u64() as u32, seeder.next_u64() as u32));
    let shared = Arc::new(Shared {
        opts: opts.clone(),
        source,
        stop,
        failed: AtomicBool::new(false),
        fatal: Mutex::new(None),
        warming: AtomicBool::new(opts.warmup_time > 0),
        events_claimed: AtomicU64::new(0),
        in_flight: (0..threads).map(|_| InFlight(AtomicU64::new(0))).collect(),
        epoch: Instant::now(),
        epoch_ns: mono_ns(),
        schedule: None,
        accs: (0..threads).map(|_| Mutex::new(Acc::new())).collect(),
        unique,
    });
    let mux = opts.client_threads as usize;
    let os_threads = if mux == 0 { threads } else { mux.min(threads) };
    let ready = Arc::new(Barrier::new(os_threads + 1));
    let go = Arc::new(Barrier::new(os_threads + 1));
    let start_cell: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let mut handles = Vec::with_capacity(threads);
    let mut shared = shared;
    let schedule_seed = seeder.next_u64();
    if opts.rate > 0 {
        Arc::get_mut(&mut shared).expect("not shared yet").schedule = Some(Mutex::new(Schedule {
            rng: Xoroshiro::seeded(schedule_seed),
            mean_ns: 1e9 / opts.rate as f64,
            next: Instant::now(),
            pending: VecDeque::new(),
        }));
    }
    if mux == 0 {
        for tid in 0..threads {
            let (shared, driver, ready, go, start_cell, done_tx) =
                (shared.clone(), driver.clone(), ready.clone(), go.clone(), start_cell.clone(), done_tx.clone());
            let seed = seeder.next_u64();
            let h = std::thread::Builder::new()
                .name(format!("sysbench-{tid}"))
                .spawn(move || {
                    worker(tid, &shared, driver.as_ref(), seed, &ready, &go, &start_cell);
                    let _ = done_tx.send(tid);
                })
                .map_err(|e| Error::Other(format!("cannot start worker thread: {e}")))?;
            handles.push(h);
        }
    } else {
        // Event-loop workers: connections spread over `mux` OS threads; the barriers count connections.
        let groups: Vec<Vec<usize>> = (0..mux.min(threads)).map(|w| (w..threads).step_by(mux).collect()).collect();
        let mut rnds: Vec<Random> = (0..threads).map(|_| Random::new(&opts.rand, seeder.next_u64())).collect();
        for tids in groups {
            let (shared, driver, ready, go, start_cell, done_tx) =
                (shared.clone(), driver.clone(), ready.clone(), go.clone(), start_cell.clone(), done_tx.clone());
            let my_rnds: Vec<Random> = tids.iter().map(|t| rnds[*t].clone()).collect();
            let h = std::thread::Builder::new()
                .name(format!("sysbench-mux-{}", tids[0]))
                .spawn(move || {
                    super::mux::worker(&tids, &shared, driver.as_ref(), my_rnds, &ready, &go, &start_cell, &done_tx)
                })
                .map_err(|e| Error::Other(format!("cannot start worker thread: {e}")))?;
            handles.push(h);
        }
        rnds.clear();
    }
    drop(done_tx);
    ready.wait();
    if !shared.failed.load(Ordering::SeqCst) && !obs.barrier() {
        shared.fail(Error::Other("the run was called off before it started".into()));
    }
    let start = Instant::now();
    *start_cell.lock().unwrap_or_else(|p| p.into_inner()) = Some(start);
    if let Some(s) = &shared.schedule {
        s.lock().unwrap_or_else(|p| p.into_inner()).next = start;
    }
    go.wait();
    if !shared.failed.load(Ordering::SeqCst) {
        obs.started();
    }
    let (result, abandoned) = match report_loop(&shared, start, threads, done_rx, obs) {
        Ok((r, abandoned)) => (Ok(r), abandoned),
        Err(e) => (Err(e), false),
    };
    if abandoned {
        // Forced shutdown, or a Ctrl-C whose grace ran out: leave the stuck workers behind; they stop at
        // their next check, or with the process. (Not through `stop`: that is the process's Ctrl-C flag.)
        shared.failed.store(true, Ordering::SeqCst);
    } else {
        for h in handles {
            let _ = h.join();
        }
    }
    if let Some(e) = shared.fatal.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    result
}

#[unsafe(link_section = ".text.hot.versus")]
fn worker(
    tid: usize,
    sh: &Shared,
    driver: &dyn Driver,
    seed: u64,
    ready: &Barrier,
    go: &Barrier,
    start_cell: &Mutex<Option<Instant>>,
) {
    let o = &sh.opts;
    let mut wl: Box<dyn Events> = match &sh.source {
        Source::Test(test) => {
            let rnd = Random::new(&o.rand, seed);
            let (thread, threads) = o.global_thread(tid);
            Box::new(Workload::new(*test, Arc::new(o.oltp.clone()), rnd, sh.unique.clone(), thread, threads))
        }
        Source::Custom(make) => make(o.global_thread(tid).0 as usize, seed),
    };
    let init = driver.connect().map_err(|e| super::prepare::sql_error("connect", e)).and_then(|mut c| {
        wl.prepare(c.as_mut()).map_err(|e| super::session::fatal("prepare statements", e))?;
        Ok(c)
    });
    // Report a failed start before the barrier, so that the run never says "Threads started!".
    let mut conn = match init {
        Ok(c) => Some(c),
        Err(e) => {
            sh.fail(e);
            None
        }
    };
    // Before the clock starts: over a unix socket this asks the server which thread serves it.
    let mut follow = match (&mut conn, o.client_affinity) {
        (Some(c), ClientAffinity::Follow) => Follower::for_connection(c.as_mut()),
        _ => None,
    };
    ready.wait();
    go.wait();
    let Some(conn) = conn else { return };
    let Some(start) = *start_cell.lock().unwrap_or_else(|p| p.into_inner()) else { return };
    let deadline = (o.time > 0).then(|| start + Duration::from_secs(o.time + o.warmup_time));
    let mut s = Session::new(conn, &o.ignore_errors, &sh.stop, deadline);
    let mut since_reconnect = 0u64;
    // In closed loop an event starts when the previous one ended: one clock read per event, which serves
    // as the previous event's end, this one's start and the time-limit check.
    let deadline_ns = deadline.map(|d| sh.since_epoch(d));
    let mut now_ns = sh.clock_ns();
    loop {
        if sh.stopping() || deadline_ns.is_some_and(|d| now_ns >= d) {
            break;
        }
        if o.events > 0
            && !sh.warming.load(Ordering::Relaxed)
            && sh.events_claimed.fetch_add(1, Ordering::Relaxed) >= o.events
        {
            break;
        }
        let t0 = match &sh.schedule {
            None => now_ns,
            Some(sched) => {
                let now = Instant::now();
                let taken = sched.lock().unwrap_or_else(|p| p.into_inner()).take(now);
                let Ok(arrival) = taken else {
                    sh.fail(Error::Other(
                        "the event queue is full: the worker threads cannot keep up with --rate; lower --rate or add --threads".into(),
                    ));
                    break;
                };
                if let Some(d) = deadline
                    && arrival >= d
                {
                    // No arrival before the time limit: the run still lasts until it, as in sysbench.
                    wait_until(d, sh);
                    break;
                }
                if !wait_until(arrival, sh) {
                    break;
                }
                sh.since_epoch(arrival)
            }
        };
        let warm = sh.warming.load(Ordering::SeqCst);
        sh.begin_event(tid, t0);
        let outcome = loop {
            match wl.event(&mut s) {
                Ok(()) => break Ok(()),
                Err(Abort::Restart) => {
                    // The failed attempt's statements and error count now, as sysbench counts them.
                    sh.record(tid, warm, &s.take_counts(), None);
                    // An event that fails every time must not outlast the time limit.
                    if sh.stopping() || deadline.is_some_and(|d| Instant::now() >= d) {
                        break Err(None);
                    }
                }
                Err(Abort::Stop) => break Err(None),
                Err(Abort::Fatal(e)) => break Err(Some(e)),
            }
        };
        sh.end_event(tid);
        wl.end_event(!warm);
        // Under --rate the event began at an arrival on the Instant clock: end it on the same one.
        now_ns = if sh.schedule.is_none() { sh.clock_ns() } else { sh.since_epoch(Instant::now()) };
        let mut c = s.take_counts();
        let finished = outcome.is_ok();
        c.events = u64::from(finished);
        sh.record(tid, warm, &c, finished.then(|| now_ns.saturating_sub(t0)));
        if let Some(f) = &mut follow {
            f.tick(|| socket_of(s.conn.as_mut()));
        }
        match outcome {
            Ok(()) => {}
            Err(None) => break,
            Err(Some(e)) => {
                sh.fail(e);
                break;
            }
        }
        since_reconnect += 1;
        if o.oltp.reconnect > 0 && since_reconnect >= o.oltp.reconnect {
            since_reconnect = 0;
            if s.reconnect().is_err() {
                break;
            }
            now_ns = sh.clock_ns();
        }
    }
    // Flush a pending bulk INSERT; errors here end the thread like sysbench's thread_done.
    if !sh.failed.load(Ordering::Relaxed) {
        if let Err(Abort::Fatal(e)) = wl.done(&mut s) {
            sh.fail(e);
        }
        let c = s.take_counts();
        sh.accs[tid].lock().unwrap_or_else(|p| p.into_inner()).counts.add(&c);
    }
}

/// Sleeps until `t`, waking early when the run stops; false if it stopped.
fn wait_until(t: Instant, sh: &Shared) -> bool {
    loop {
        if sh.stopping() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(50)));
    }
}

/// How often the reporter looks for a Ctrl-C.
const STOP_POLL: Duration = Duration::from_millis(100);
/// After a Ctrl-C, how long statements in flight may run before the report is printed without them
/// (a lock wait can last `innodb_lock_wait_timeout`, 50 s by default).
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// Why the reporter stopped before every worker had ended.
#[derive(Debug, Clone, Copy)]
enum Abandon {
    /// `--forced-shutdown` expired.
    Forced,
    /// The grace after a Ctrl-C ran out.
    Interrupted,
}

/// The reporter: drains the workers' accumulators at each report interval, checkpoint, and at the end.
/// Also says whether it left workers running (a forced shutdown, or a Ctrl-C whose grace ran out).
fn report_loop(
    sh: &Shared,
    start: Instant,
    threads: usize,
    done: mpsc::Receiver<usize>,
    obs: &mut dyn IntervalObserver,
) -> Result<(RunResult, bool)> {
    let o = &sh.opts;
    let interval = (o.report_interval > 0).then(|| Duration::from_secs(o.report_interval));
    let mut next_report = interval.map(|i| start + i);
    let mut checkpoints: VecDeque<Instant> =
        o.report_checkpoints.iter().map(|s| start + Duration::from_secs(*s)).collect();
    let mut warmup_end = (o.warmup_time > 0).then(|| start + Duration::from_secs(o.warmup_time));
    let forced_at = match (o.forced_shutdown, o.time) {
        (Some(grace), t) if t > 0 => Some(start + Duration::from_secs(o.warmup_time + t + grace)),
        _ => None,
    };
    // Workers stop on their own at the time limit, some a little before the reporter wakes for the interval
    // that ends with it; that interval still counts them.
    let time_limit = (o.time > 0).then(|| start + Duration::from_secs(o.warmup_time + o.time));
    let mut total = RunResult::empty_for(sh.source.test(), threads);
    let mut measure_start = start;
    // The start of the measured run: after the warm-up, as sysbench master's total time.
    let mut bench_start = start;
    let mut last_report = start;
    let mut running = threads;
    let mut scratch = new_histogram();
    let mut interval_counts = Counts::default();
    let mut interval_lat = Latency::default();
    // Threads running at the start of the current interval: the last interval of a run that ended with
    // it counts the workers that stopped at the time limit.
    let mut interval_threads = threads;
    // Set at the first Ctrl-C seen: statements in flight may end until then, and the report follows.
    let mut interrupt_deadline: Option<Instant> = None;
    let mut abandon = None;
    loop {
        // What the reporter acts on; none of them changes while it waits.
        let deadlines = [next_report, checkpoints.front().copied(), warmup_end, forced_at, interrupt_deadline];
        let poll = interrupt_deadline.is_none().then(|| Instant::now() + STOP_POLL);
        let wake = deadlines.into_iter().chain([poll]).flatten().min();
        let msg = match wake {
            Some(w) => done.recv_timeout(w.saturating_duration_since(Instant::now())),
            None => done.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        // All workers done: one last pass, so that a report interval ending with the run is printed.
        let finished = match msg {
            Ok(_) => {
                running -= 1;
                if running > 0 {
                    continue;
                }
                true
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => true,
            Err(mpsc::RecvTimeoutError::Timeout) => false,
        };
        let now = Instant::now();
        if interrupt_deadline.is_none() && sh.stop.load(Ordering::SeqCst) {
            interrupt_deadline = Some(now + INTERRUPT_GRACE);
        }
        let due = |t: Option<Instant>| t.is_some_and(|t| now >= t);
        if !finished && !deadlines.into_iter().any(due) {
            continue;
        }
        drain(sh, &mut total, &mut scratch, &mut interval_counts, &mut interval_lat);
        if !finished && warmup_end.is_some_and(|w| now >= w) {
            warmup_end = None;
            end_warmup(sh);
            total = RunResult::empty_for(sh.source.test(), threads);
            measure_start = now;
            bench_start = now;
            obs.warmup_done();
        }
        if let Some(nr) = next_report
            && now >= nr
        {
            let step = interval.expect("set with next_report");
            let queue = sh
                .schedule
                .as_ref()
                .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).fill(now).unwrap_or(QUEUE_SIZE));
            let iv = Interval::new(
                now.duration_since(start),
                now.duration_since(last_report),
                if finished || time_limit.is_some_and(|t| last_report < t && now >= t) {
                    interval_threads
                } else {
                    running
                } as u32,
                interval_counts,
                &scratch,
                interval_lat,
                o.percentile,
                queue.map(|q| (q as u64, sh.events_in_service())),
            );
            obs.interval_histogram(&iv, &scratch);
            total.intervals.push(iv);
            last_report = now;
            interval_threads = running;
            let mut n = nr;
            while n <= now {
                n += step;
            }
            next_report = Some(n);
            scratch.reset();
            interval_counts = Counts::default();
            interval_lat = Latency::default();
        }
        if checkpoints.front().is_some_and(|c| now >= *c) {
            checkpoints.pop_front();
            total.total_time = now.duration_since(bench_start);
            total.time_interval = now.duration_since(measure_start);
            obs.checkpoint(&total);
            let (intervals, raw) = (std::mem::take(&mut total.intervals), std::mem::take(&mut total.latencies_us));
            total = RunResult::empty_for(sh.source.test(), threads);
            (total.intervals, total.latencies_us) = (intervals, raw);
            measure_start = now;
        }
        if finished {
            break;
        }
        // After the interval line that falls due at the same moment, as sysbench prints it.
        if due(forced_at) {
            abandon = Some(Abandon::Forced);
            break;
        }
        if due(interrupt_deadline) {
            abandon = Some(Abandon::Interrupted);
            break;
        }
    }
    drain(sh, &mut total, &mut scratch, &mut interval_counts, &mut interval_lat);
    let now = Instant::now();
    // Taken after the last drain: an event that ended since is in neither count (`end_event` comes before
    // `record`), never in both.
    let running_events = sh.events_in_service();
    match abandon {
        Some(Abandon::Forced) => {
            total.forced_unfinished = Some(running_events);
            sh.add_running_events(&mut total.per_thread, now);
        }
        Some(Abandon::Interrupted) => total.interrupted_unfinished = Some(running_events).filter(|n| *n > 0),
        None => {}
    }
    total.total_time = now.duration_since(bench_start);
    total.time_interval = now.duration_since(measure_start);
    total.interrupted = sh.stop.load(Ordering::SeqCst);
    Ok((total, abandon.is_some()))
}

/// Ends the warm-up: with every accumulator locked, so that no event is half counted, flips the flag and
/// discards what the warm-up's last events recorded since the previous drain.
fn end_warmup(sh: &Shared) {
    let mut accs: Vec<_> = sh.accs.iter().map(|m| m.lock().unwrap_or_else(|p| p.into_inner())).collect();
    sh.warming.store(false, Ordering::SeqCst);
    for acc in accs.iter_mut() {
        acc.counts = Counts::default();
        acc.lat = Latency::default();
        acc.hist.reset();
    }
}

/// Moves every worker's accumulator into the cumulative result and the current interval.
fn drain(sh: &Shared, total: &mut RunResult, scratch: &mut Histogram<u64>, ic: &mut Counts, il: &mut Latency) {
    for (tid, m) in sh.accs.iter().enumerate() {
        let mut acc = m.lock().unwrap_or_else(|p| p.into_inner());
        total.counts.add(&acc.counts);
        ic.add(&acc.counts);
        total.latency.merge(&acc.lat);
        il.merge(&acc.lat);
        let t: &mut ThreadFigures = &mut total.per_thread[tid];
        t.events += acc.counts.events;
        t.time_ns += acc.lat.sum_ns;
        let _ = total.histogram.add(&acc.hist);
        let _ = scratch.add(&acc.hist);
        total.latencies_us.append(&mut acc.raw);
        acc.counts = Counts::default();
        acc.lat = Latency::default();
        acc.hist.reset();
    }
}
