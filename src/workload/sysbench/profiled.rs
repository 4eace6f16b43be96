//! `--profile` on `versus sysbench … run` and `versus script … run`: the server's on-CPU stacks over
//! the measured time (after any warm-up), sampled as an experiment's `profile = true` samples them
//! (docs/profile.md), and printed after the report as CPU µs per transaction per function.
//!
//! Everything that can stop it is checked before the run starts: perf must be usable here, and the
//! server must be a process of this host that versus can name. A profile that then fails (perf stops,
//! takes no sample) is an error after the report, so that the run's figures are printed and the exit
//! status still says that what was asked for is missing.

use super::options::Options;
use super::runner::IntervalObserver;
use super::stats::{Interval, RunResult};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::profile::Sampling;
use crate::profile::summary::Profiles;
use crate::server::process;

/// The profiling of one run, ready to begin with its measured time.
#[derive(Debug)]
pub struct Profiler {
    sampling: Sampling,
    pid: u32,
    warmup: bool,
}

/// The profiler `o` asks for (`None` without `--profile`).
///
/// Errors (`--profile`): perf missing or refused, a server on another host, or one whose process
/// cannot be found.
pub fn prepare(o: &Options, driver: &dyn Driver) -> Result<Option<Profiler>> {
    let Some(hz) = o.profile_hz else { return Ok(None) };
    crate::profile::availability().map_err(|e| Error::option("--profile", e))?;
    let pid = server_pid(o, driver)?;
    let sampling = Sampling::new(hz).with_waits(o.profile_waits);
    Ok(Some(Profiler { sampling, pid, warmup: o.warmup_time > 0 }))
}

/// The process of the server `o` connects to: its `pid_file`, read on this host.
fn server_pid(o: &Options, driver: &dyn Driver) -> Result<u32> {
    let err = |what: String| Error::option("--profile", what);
    if o.connect.sockets.is_empty() && !o.connect.hosts.iter().all(|h| process::is_local_host(h)) {
        return Err(err(format!(
            "the server at {} is not on this host, and perf samples processes of this machine; run versus on the \
             server's host, or leave --profile out",
            o.connect.hosts.join(",")
        )));
    }
    let mut conn = driver.connect_first().map_err(|e| err(format!("cannot ask the server for its process: {e}")))?;
    process::server_pid_from_pid_file(|q| conn.query_rows(q).ok().and_then(|r| r.first)).map_err(err)
}

impl Profiler {
    /// The observer that begins sampling when the measured time begins and passes every report on to
    /// `inner`.
    pub fn observing<'a>(&'a mut self, inner: &'a mut dyn IntervalObserver) -> Observing<'a> {
        Observing { profiler: self, inner }
    }

    /// Stops sampling: the profiles of the run's transactions, or the error that says why one that
    /// was asked for is missing.
    pub fn finish(self, result: &RunResult) -> Result<Profiles> {
        Profiles::finish(self.sampling, result.counts.events)
    }
}

/// An observer that starts the profile with the measured time (see [`Profiler::observing`]).
pub struct Observing<'a> {
    profiler: &'a mut Profiler,
    inner: &'a mut dyn IntervalObserver,
}

impl IntervalObserver for Observing<'_> {
    fn started(&mut self) {
        self.inner.started();
        if !self.profiler.warmup {
            self.profiler.sampling.begin(self.profiler.pid);
        }
    }

    fn warmup_done(&mut self) {
        self.inner.warmup_done();
        self.profiler.sampling.begin(self.profiler.pid);
    }

    fn interval(&mut self, i: &Interval) {
        self.inner.interval(i);
    }

    fn checkpoint(&mut self, r: &RunResult) {
        self.inner.checkpoint(r);
    }
}
