//! `--profile` on `versus sysbench … run` and `versus script … run`: the server's on-CPU stacks over
//! the measured time (after any warm-up), sampled as an experiment's `profile = true` samples them
//! (docs/profile.md), and printed after the report as CPU µs per transaction per function.
//!
//! Everything that can stop it is checked before the run starts: perf must be usable here, and the
//! server must be a process of this host that versus can name. A profile that then fails (perf stops,
//! takes no sample) is an error after the report, so that the run's figures are printed and the exit
//! status still says that what was asked for is missing.

use std::fmt::Write as _;

use super::options::Options;
use super::runner::IntervalObserver;
use super::stats::{Interval, RunResult};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::present::fmt;
use crate::present::table::{Cell, Table, Tone};
use crate::present::writers::Writer;
use crate::present::writers::text::TextWriter;
use crate::profile::{FunctionCost, Profile, Sampling};

/// Functions listed after the report, by self CPU per transaction.
pub const TOP: usize = 15;

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
    let local = |h: &str| matches!(h, "127.0.0.1" | "localhost" | "::1");
    if o.connect.sockets.is_empty() && !o.connect.hosts.iter().all(|h| local(h)) {
        return Err(err(format!(
            "the server at {} is not on this host, and perf samples processes of this machine; run versus on the \
             server's host, or leave --profile out",
            o.connect.hosts.join(",")
        )));
    }
    let mut conn = driver.connect_first().map_err(|e| err(format!("cannot ask the server for its process: {e}")))?;
    let mut ask = |q: &str| conn.query_rows(q).ok().and_then(|r| r.first);
    let Some(pid_file) = ask("SELECT @@pid_file") else {
        return Err(err("the server did not say where its pid file is (@@pid_file)".into()));
    };
    let path = match std::path::Path::new(&pid_file) {
        p if p.is_absolute() => p.to_path_buf(),
        p => std::path::Path::new(&ask("SELECT @@datadir").unwrap_or_default()).join(p),
    };
    let pid = std::fs::read_to_string(&path)
        .map_err(|e| err(format!("cannot read the server's pid file {}: {e}", path.display())))?
        .trim()
        .parse::<u32>()
        .map_err(|_| err(format!("the server's pid file {} holds no process id", path.display())))?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if !matches!(comm.trim(), "mysqld" | "mariadbd") {
        return Err(err(format!(
            "process {pid} (from {}) is not a MySQL or MariaDB server on this host; is the server local?",
            path.display()
        )));
    }
    Ok(pid)
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
        let (cpu, waits) = self.sampling.finish_all();
        let events = result.counts.events;
        let check = |p: Profile, flag: &str, what: &str| match &p.note {
            Some(why) => Err(Error::option(flag, format!("no {what} of the server: {why}"))),
            None if events == 0 => {
                Err(Error::option(flag, "the run measured no transaction to divide the server's time by"))
            }
            None => Ok(Profile { transactions: events, ..p }),
        };
        Ok(Profiles {
            cpu: check(cpu, "--profile", "profile")?,
            waits: waits.map(|w| check(w, "--profile-waits", "off-CPU profile")).transpose()?,
        })
    }
}

/// What a profiled run printed: its on-CPU profile, and its off-CPU one with `--profile-waits`.
#[derive(Debug, Clone, PartialEq)]
pub struct Profiles {
    /// Sampled CPU per stack.
    pub cpu: Profile,
    /// Off-CPU time per stack.
    pub waits: Option<Profile>,
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

/// The functions with the most self CPU per transaction, most first, at most `n`.
fn top(p: &Profile, n: usize) -> Vec<(String, FunctionCost)> {
    let mut all: Vec<(String, FunctionCost)> = p.function_costs().into_iter().collect();
    all.sort_by(|a, b| b.1.self_us.total_cmp(&a.1.self_us).then_with(|| a.0.cmp(&b.0)));
    all.truncate(n);
    all
}

/// The profiles as text, after sysbench's report.
pub fn text(p: &Profiles) -> String {
    let cpu = &p.cpu;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Server profile ({} at {} Hz over the measured time, {} samples, {} transactions):",
        cpu.event, cpu.hz, cpu.samples, cpu.transactions
    );
    let total = cpu.total_us_per_txn().unwrap_or(0.0);
    let _ = writeln!(out, "    CPU per transaction:                 {} µs (sampled)", fmt::num(total));
    let _ = writeln!(
        out,
        "    samples in a named function:         {} (the rest is counted under its object file, e.g. [mariadbd])\n",
        fmt::percent(cpu.named_share())
    );
    top_table(&mut out, cpu, "CPU");
    if let Some(w) = &p.waits {
        let _ = writeln!(
            out,
            "\nServer waits ({} on every CPU over the measured time, {} switches of the server's threads):",
            w.event, w.samples
        );
        let total = w.total_us_per_txn().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "    off-CPU time per transaction:        {} µs (all of the server's threads)",
            fmt::num(total)
        );
        let _ = writeln!(
            out,
            "    each wait is counted under the call it blocked in; [preempted]: runnable, waiting for a CPU\n"
        );
        top_table(&mut out, w, "off-CPU time");
    }
    out
}

/// The `TOP` functions of `p` by their own cost per transaction, as a table of `what` µs.
fn top_table(out: &mut String, p: &Profile, what: &str) {
    let total = p.total_us_per_txn().unwrap_or(0.0);
    let mut t = Table::new(
        "server-profile",
        format!("The {TOP} functions with the most {what} of their own per transaction"),
        vec![
            ("function".into(), false),
            ("self µs/txn".into(), true),
            ("self share".into(), true),
            ("incl. µs/txn".into(), true),
        ],
    );
    for (name, c) in top(p, TOP) {
        let share = if total > 0.0 { fmt::percent(c.self_us / total) } else { "—".into() };
        t.rows.push(vec![
            Cell::plain(crate::present::svg::truncate(&name, 60)),
            Cell::plain(fmt::num(c.self_us)),
            Cell::toned(share, Tone::Muted),
            Cell::plain(fmt::num(c.total_us)),
        ]);
    }
    TextWriter { out, color: false }.table(&t);
}

/// The profiles in the JSON report: `server_profile`, and `server_waits` with `--profile-waits`.
pub fn json(p: &Profiles, doc: &mut serde_json::Value) {
    doc["server_profile"] = json_of(&p.cpu, "cpu_us_per_transaction");
    if let Some(w) = &p.waits {
        doc["server_waits"] = json_of(w, "off_cpu_us_per_transaction");
    }
}

/// One profile as JSON, its total per transaction under `per_txn`.
fn json_of(p: &Profile, per_txn: &str) -> serde_json::Value {
    let functions: Vec<serde_json::Value> = top(p, TOP)
        .into_iter()
        .map(|(name, c)| serde_json::json!({ "function": name, "self_us": c.self_us, "total_us": c.total_us }))
        .collect();
    let mut v = serde_json::json!({
        "event": p.event,
        "hz": p.hz,
        "samples": p.samples,
        "transactions": p.transactions,
        "named_share": p.named_share(),
        "functions": functions,
    });
    v[per_txn] = serde_json::json!(p.total_us_per_txn());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            event: "cpu-clock".into(),
            hz: 199,
            samples: 4,
            transactions: 2,
            stacks: vec![
                ("server;dispatch;JOIN::exec".into(), 6_000),
                ("server;dispatch".into(), 2_000),
                ("server;[mariadbd]".into(), 2_000),
            ],
            note: None,
        }
    }

    #[test]
    fn the_top_functions_are_ranked_by_self_cost_per_transaction() {
        let p = profile();
        let t = top(&p, 2);
        assert_eq!(t[0].0, "JOIN::exec");
        assert_eq!((t[0].1.self_us, t[0].1.total_us), (3.0, 3.0));
        assert_eq!(t.len(), 2);
        let text = text(&Profiles { cpu: p.clone(), waits: None });
        assert!(text.contains("CPU per transaction:                 5.00 µs"), "{text}");
        assert!(text.contains("80.0 %"), "named share: {text}");
        let mut j = serde_json::json!({});
        json(&Profiles { cpu: p.clone(), waits: Some(p.clone()) }, &mut j);
        assert_eq!(j["server_waits"]["off_cpu_us_per_transaction"], 5.0);
        let j = &j["server_profile"];
        assert_eq!(j["functions"][0]["function"], "JOIN::exec");
        assert_eq!(j["cpu_us_per_transaction"], 5.0);
    }
}
