//! One client of a split load: its share of the threads, the rate and the events; it connects, says so,
//! waits at the barrier for the instant every client starts, and streams its periods and its result to
//! the coordinator on stdout.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use super::super::options::Options;
use super::super::runner::{self, IntervalObserver, Source};
use super::super::stats::{Interval, RunResult};
use super::merge::{first_thread, share};
use super::wire::{Message, PartInterval, PartResult, encode, parse_go};
use super::{Part, this_host};
use crate::driver::Driver;
use crate::error::{Error, Result};

/// The options of client `part`: its share of the load, every client's thread ids apart, a seed of its
/// own when one was given, 1-s periods when no interval was asked (the coordinator sums them), and no
/// profile or checkpoints (the coordinator's).
pub fn options_of(o: &Options, part: Part) -> Options {
    let (i, n) = (part.index, part.of);
    let mut p = o.clone();
    p.threads = share(u64::from(o.threads), i, n) as u32;
    p.first_thread = first_thread(u64::from(o.threads), i, n) as u32;
    p.all_threads = o.threads;
    p.rate = if o.rate > 0 { share(o.rate, i, n) } else { 0 };
    p.events = if o.events > 0 { share(o.events, i, n) } else { 0 };
    if p.rand.seed != 0 {
        p.rand.seed = p.rand.seed.wrapping_add(i as u64);
    }
    p.report_interval = o.report_interval.max(1);
    p.report_checkpoints.clear();
    p.profile_hz = None;
    p.profile_waits = false;
    p.clients = 1;
    p.latency_log = o.latency_log.as_deref().map(|f| super::super::clients::latency_file(f, i, o.clients));
    p
}

struct Streamer {
    failed: bool,
}

impl Streamer {
    fn send(&mut self, m: &Message) {
        let mut out = std::io::stdout().lock();
        if out.write_all(m.line().as_bytes()).and_then(|_| out.flush()).is_err() {
            self.failed = true;
        }
    }
}

fn epoch_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

impl IntervalObserver for Streamer {
    fn barrier(&mut self) -> bool {
        self.send(&Message::Ready { host: this_host(), pid: std::process::id() });
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return false;
        }
        let Some(at) = parse_go(&line) else { return false };
        let now = epoch_ns();
        if at > now {
            std::thread::sleep(Duration::from_nanos(at - now));
        }
        true
    }

    fn started(&mut self) {
        self.send(&Message::Started { epoch_ns: epoch_ns() });
    }

    fn warmup_done(&mut self) {
        self.send(&Message::WarmupDone);
    }

    fn interval_histogram(&mut self, i: &Interval, h: &Histogram<u64>) {
        match encode(h) {
            Ok(histogram) => self.send(&Message::Interval(PartInterval {
                time: i.time,
                duration: i.duration,
                threads: i.threads,
                counts: i.counts,
                latency: i.latency,
                queue: i.queue,
                histogram,
            })),
            Err(_) => self.failed = true,
        }
    }
}

fn result_of(r: &RunResult, client: Option<crate::sampler::client_load::ClientLoad>) -> Result<PartResult> {
    Ok(PartResult {
        total_time: r.total_time.as_secs_f64(),
        time_interval: r.time_interval.as_secs_f64(),
        counts: r.counts,
        latency: r.latency,
        histogram: encode(&r.histogram)?,
        per_thread: r.per_thread.clone(),
        interrupted: r.interrupted,
        forced_unfinished: r.forced_unfinished,
        interrupted_unfinished: r.interrupted_unfinished,
        client,
    })
}

/// Runs client `part` of the load `o` describes; its exit code is the run's.
pub fn run(source: Source, o: &Options, part: Part, driver: Arc<dyn Driver>) -> Result<i32> {
    let p = options_of(o, part);
    let mut streamer = Streamer { failed: false };
    let watch = crate::sampler::client_load::Watch::start();
    let result = match runner::run_source(source, &p, driver, super::super::stop_flag(), &mut streamer) {
        Ok(r) => r,
        Err(e) => {
            streamer.send(&Message::Failed { host: this_host(), error: e.to_string() });
            return Err(e);
        }
    };
    let client = watch.finish(p.os_threads());
    if let Some(f) = &p.latency_log {
        super::super::stats::write_latency_log(f, &result.latencies_us)?;
    }
    streamer.send(&Message::Done(result_of(&result, client)?));
    if streamer.failed {
        return Err(Error::Other("the coordinator stopped reading this client's figures".into()));
    }
    Ok(if result.forced_unfinished.is_some() {
        2
    } else if result.interrupted {
        super::super::EXIT_INTERRUPTED
    } else {
        0
    })
}
