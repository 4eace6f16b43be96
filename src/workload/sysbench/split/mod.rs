//! One load from several client processes (`--clients N`): each runs this program with its share of the
//! threads, the rate and the events; they connect, wait at a barrier, start measuring at one instant,
//! and stream their periods to this process, which merges them exactly into one run and one report.
//! A client that cannot start fails the run before the barrier, naming its host; a client that dies
//! during the run fails it, with the other clients' figures shown and marked as a part, never as the
//! whole.

pub mod launch;
mod local;
pub mod merge;
pub mod part;
mod slurm;
pub mod wire;

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::options::{Options, Test};
use super::runner::IntervalObserver;
use super::stats::RunResult;
use crate::error::{Error, Result};
use crate::sampler::client_load::{ClientLoad, combine_loads};
use launch::{Clients, Event};
use wire::{Message, PartResult};

/// The environment variable that makes a process one client of a split load: `INDEX/COUNT`, where
/// INDEX may be [`SLURM_INDEX`].
pub const PART_ENV: &str = "VERSUS_CLIENT_PART";

/// The password of the clients' connections, given to them in their environment rather than on their
/// command line (where every user of the host could read it).
pub const PASSWORD_ENV: &str = "VERSUS_CLIENT_PASSWORD";

/// `args` of a client of this process with its own arguments `args`: the password moves from the
/// command line to [`PASSWORD_ENV`] when this process is one client of several.
pub fn with_password_from_env(mut args: Vec<String>) -> Vec<String> {
    if std::env::var_os(PART_ENV).is_some()
        && let Ok(pw) = std::env::var(PASSWORD_ENV)
    {
        args.push(format!("--mysql-password={pw}"));
    }
    args
}

/// The INDEX of [`PART_ENV`] that stands for the Slurm task id (`SLURM_PROCID`).
pub const SLURM_INDEX: &str = "procid";

/// The launcher for `name`, one line per place clients run.
pub fn launcher(name: &str) -> Option<Box<dyn launch::Launcher>> {
    match name {
        "local" => Some(Box::new(local::Local)),
        "slurm" => Some(Box::new(slurm::Slurm)),
        _ => None,
    }
}

#[cfg(test)]
#[test]
fn every_place_has_a_launcher() {
    for p in super::clients::PLACES {
        assert!(launcher(p).is_some(), "--clients-on={p}");
    }
}

/// How long the coordinator waits after the barrier for every client to start.
const BARRIER_LEAD: Duration = Duration::from_millis(200);

/// One client of a split load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// From 0.
    pub index: usize,
    /// Clients in all.
    pub of: usize,
}

/// This process's part of a split load, if it is one.
pub fn part_from_env() -> Result<Option<Part>> {
    let Some(v) = std::env::var_os(PART_ENV) else { return Ok(None) };
    let v = v.to_string_lossy();
    let index = |i: &str| match i {
        SLURM_INDEX => std::env::var("SLURM_PROCID").ok()?.parse::<usize>().ok(),
        _ => i.parse::<usize>().ok(),
    };
    let parsed = v.split_once('/').and_then(|(i, n)| Some((index(i)?, n.parse::<usize>().ok()?)));
    match parsed {
        Some((index, of)) if index < of => Ok(Some(Part { index, of })),
        _ => Err(Error::Other(format!("{PART_ENV}={v} is not INDEX/COUNT with INDEX below COUNT; unset it"))),
    }
}

/// This host's name, as clients name where they run.
pub fn this_host() -> String {
    if let Some(node) = std::env::var("SLURMD_NODENAME").ok().filter(|n| !n.is_empty()) {
        return node;
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// How a client process ended, with its last line on stderr.
fn ending(status: ExitStatus, stderr: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".to_string(),
    };
    match stderr.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(l) => format!("{how}: {}", l.trim()),
        None => how,
    }
}

/// What the report says about each client.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// From 1.
    pub client: usize,
    /// Where it ran.
    pub host: String,
    /// Its process id there (0 if it never said).
    pub pid: u32,
    /// Its threads, rate and events.
    pub threads: u64,
    /// Its share of `--rate` (0: none).
    pub rate: u64,
    /// Events it completed.
    pub events: u64,
    /// Its start after the first client's, in ms.
    pub start_ms: Option<f64>,
    /// Its own CPU and its CPUs' load.
    pub load: Option<ClientLoad>,
    /// "done", or how it ended without finishing.
    pub status: String,
}

/// A split load's clients, beside the run merged from them.
pub struct Split {
    /// Per client.
    pub clients: Vec<ClientReport>,
    /// From the first client's start to the last one's.
    pub skew: Option<Duration>,
    /// The clients' load, per host, combined.
    pub load: Option<ClientLoad>,
    /// The latency histogram (µs) of each client that finished, by client number (from 1).
    pub histograms: Vec<(usize, hdrhistogram::Histogram<u64>)>,
}

impl Split {
    /// The clients that did not finish.
    pub fn failed(&self) -> Vec<&ClientReport> {
        self.clients.iter().filter(|c| c.status != "done").collect()
    }

    /// The error of a run some of whose clients did not finish; `None` when all did.
    pub fn incomplete(&self) -> Option<Error> {
        let failed = self.failed();
        let first = failed.first()?;
        let n = self.clients.len();
        Some(Error::Other(format!(
            "client {} of {n} on {} (pid {}) did not finish: {}; the figures are of {} of {n} clients, not the whole load",
            first.client,
            first.host,
            first.pid,
            first.status,
            n - failed.len()
        )))
    }

    /// The JSON object of `--format=json`'s `clients`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.clients.len(),
            "skew_ms": self.skew.map(|d| d.as_secs_f64() * 1e3),
            "complete": self.failed().is_empty(),
            "parts": self.clients,
        })
    }

    /// One line on the clients for the text report.
    pub fn describe(&self) -> String {
        let hosts: BTreeSet<&str> = self.clients.iter().map(|c| c.host.as_str()).collect();
        let skew = self.skew.map_or("unknown".to_string(), |d| format!("{:.1} ms", d.as_secs_f64() * 1e3));
        format!(
            "versus: {} clients on {} host(s) ({}); their starts spread over {skew}",
            self.clients.len(),
            hosts.len(),
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        )
    }
}

fn epoch_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Runs the load of `o` from `o.clients` client processes on `launcher`, with `args` (this program's
/// arguments) for each; `obs` sees the merged run as it would see one client's. Returns the run of
/// every client that finished, and the clients.
pub fn coordinate(
    test: Option<Test>,
    o: &Options,
    launcher: &dyn launch::Launcher,
    args: &[std::ffi::OsString],
    stop: Arc<AtomicBool>,
    obs: &mut dyn IntervalObserver,
) -> Result<(RunResult, Split)> {
    let n = o.clients as usize;
    let mut env = Vec::new();
    let args: Vec<std::ffi::OsString> = args
        .iter()
        .filter(|a| match a.to_str().and_then(|a| a.strip_prefix("--mysql-password=")) {
            Some(pw) => {
                env.push((PASSWORD_ENV, pw.to_string()));
                false
            }
            None => true,
        })
        .cloned()
        .collect();
    let mut clients = launcher.launch(n, &args, &env)?;
    let mut reports: Vec<ClientReport> = (0..n)
        .map(|i| {
            let p = part::options_of(o, Part { index: i, of: n });
            ClientReport {
                client: i + 1,
                host: clients.host(i),
                pid: 0,
                threads: u64::from(p.threads),
                rate: p.rate,
                events: 0,
                start_ms: None,
                load: None,
                status: "running".into(),
            }
        })
        .collect();
    // Before the barrier: every client connected, or the run fails naming the one that could not.
    let secs = o.connect.connect_timeout_secs.max(10) + 60;
    let limit = Instant::now() + Duration::from_secs(secs);
    let mut ready = BTreeSet::new();
    while ready.len() < n {
        if stop.load(Ordering::SeqCst) {
            return Err(Error::Other("interrupted before the clients started".into()));
        }
        let wait = limit.saturating_duration_since(Instant::now());
        match clients.events().recv_timeout(wait.min(Duration::from_millis(100))) {
            Ok(Event::Line(i, l)) => match wire::message(&l)? {
                Some(Message::Ready { host, pid }) => {
                    (reports[i].host, reports[i].pid) = (host, pid);
                    ready.insert(i);
                }
                Some(Message::Failed { host, error }) => {
                    return Err(Error::Other(format!(
                        "client {} of {n} on {host} could not start the load: {error}",
                        i + 1
                    )));
                }
                _ => {}
            },
            Ok(Event::Ended(i, how)) => {
                return Err(Error::Other(format!(
                    "client {} of {n} on {} could not start the load: it {how}",
                    i + 1,
                    reports[i].host
                )));
            }
            Err(RecvTimeoutError::Timeout) if Instant::now() < limit => {}
            Err(_) => {
                let late: Vec<String> = (0..n).filter(|i| !ready.contains(i)).map(|i| (i + 1).to_string()).collect();
                return Err(Error::Other(format!(
                    "client(s) {} of {n} did not connect within {secs} s; check that their hosts reach the server",
                    late.join(", ")
                )));
            }
        }
    }
    let go = epoch_ns() + BARRIER_LEAD.as_nanos() as u64;
    clients.send_all(&wire::go_line(go));
    std::thread::sleep(BARRIER_LEAD);
    obs.started();
    follow(test, o, clients.as_mut(), &mut reports, go, &stop, obs)
}

/// After the barrier: the clients' periods merged as they come, until every client ended.
fn follow(
    test: Option<Test>,
    o: &Options,
    clients: &mut dyn Clients,
    reports: &mut [ClientReport],
    go: u64,
    stop: &AtomicBool,
    obs: &mut dyn IntervalObserver,
) -> Result<(RunResult, Split)> {
    let n = reports.len();
    let mut live: BTreeSet<usize> = (0..n).collect();
    let mut periods = merge::Periods::new(o.report_interval.max(1));
    let mut results: Vec<Option<PartResult>> = vec![None; n];
    let mut starts: Vec<Option<u64>> = vec![None; n];
    let mut failures: Vec<Option<String>> = vec![None; n];
    let mut warm = BTreeSet::new();
    let mut intervals = Vec::new();
    let mut interrupted = false;
    let emit = |ivs: Vec<super::Interval>, obs: &mut dyn IntervalObserver, intervals: &mut Vec<super::Interval>| {
        for iv in ivs {
            if o.report_interval > 0 {
                obs.interval(&iv);
            }
            intervals.push(iv);
        }
    };
    while !live.is_empty() {
        if !interrupted && stop.load(Ordering::SeqCst) {
            interrupted = true;
            clients.interrupt();
        }
        let event = match clients.events().recv_timeout(Duration::from_millis(100)) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match event {
            Event::Line(i, l) => {
                // Anything else a client prints (its options' warnings, a script's print) is not the
                // coordinator's to read.
                let Some(m) = wire::message(&l)? else { continue };
                match m {
                    Message::Started { epoch_ns } => {
                        starts[i] = Some(epoch_ns);
                        periods.started(i, epoch_ns.saturating_sub(go) as f64 / 1e9);
                    }
                    Message::WarmupDone => {
                        warm.insert(i);
                        if warm.len() == n {
                            obs.warmup_done();
                        }
                    }
                    Message::Interval(iv) => {
                        periods.add(i, &iv)?;
                        emit(periods.ready(&live, false, o.percentile), obs, &mut intervals);
                    }
                    Message::Done(r) => results[i] = Some(r),
                    Message::Failed { host, error } => failures[i] = Some(format!("it failed on {host}: {error}")),
                    Message::Ready { .. } => {}
                }
            }
            Event::Ended(i, how) => {
                live.remove(&i);
                reports[i].status = match (&results[i], failures[i].take()) {
                    (Some(_), _) => "done".into(),
                    (None, Some(why)) => why,
                    (None, None) => format!("it {how}"),
                };
                emit(periods.ready(&live, false, o.percentile), obs, &mut intervals);
            }
        }
    }
    emit(periods.ready(&live, true, o.percentile), obs, &mut intervals);
    let first = starts.iter().flatten().min().copied();
    let last = starts.iter().flatten().max().copied();
    for (r, s) in reports.iter_mut().zip(&starts) {
        r.start_ms = s.zip(first).map(|(s, f)| (s - f) as f64 / 1e6);
    }
    for (r, p) in reports.iter_mut().zip(&results) {
        if let Some(p) = p {
            r.events = p.counts.events;
            r.load = p.client;
        }
    }
    let mut histograms = Vec::new();
    for (i, p) in results.iter().enumerate() {
        if let Some(p) = p {
            histograms.push((i + 1, wire::decode(&p.histogram)?));
        }
    }
    let finished: Vec<&PartResult> = results.iter().flatten().collect();
    let mut result = merge::runs(test, &finished, intervals)?;
    result.interrupted |= interrupted;
    let load = combine_per_host(reports);
    Ok((
        result,
        Split {
            clients: reports.to_vec(),
            skew: first.zip(last).map(|(f, l)| Duration::from_nanos(l - f)),
            load,
            histograms,
        },
    ))
}

/// The clients' load on the host where it was the heaviest: clients on one host share its CPUs, so
/// their CPU time adds up ([`combine_loads`]).
fn combine_per_host(reports: &[ClientReport]) -> Option<ClientLoad> {
    let mut by_host: BTreeMap<&str, Vec<ClientLoad>> = BTreeMap::new();
    for r in reports {
        if let Some(l) = r.load {
            by_host.entry(&r.host).or_default().push(l);
        }
    }
    // The clients on this host may run on the CPUs this process may (they inherit its mask).
    let here = this_host();
    let cpus = crate::sampler::client_load::allowed_cpus().len();
    by_host
        .iter()
        .filter_map(|(host, loads)| combine_loads(loads, (*host == here).then_some(cpus)))
        .max_by(|a, b| (a.limit().is_some(), a.client_cpus).partial_cmp(&(b.limit().is_some(), b.client_cpus)).unwrap())
}
