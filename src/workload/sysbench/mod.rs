//! `versus sysbench TEST [options] COMMAND`: the sysbench 1.0.20 OLTP tests with the same statements,
//! options and report, on a lean Rust load generator.
//!
//! Library use (no text involved): build [`Options`] (e.g. with [`options::parse`] or
//! `Options::default()`), then call [`runner::run`] with a [`crate::driver::Driver`] and get a
//! [`RunResult`] with counts, exact latency figures, the HDR histogram and the per-interval series.

pub mod clients;
pub mod counts;
pub mod experiment;
pub mod json;
pub mod legacy;
mod mux;
pub mod names;
pub mod oltp;
pub mod options;
pub mod prepare;
pub mod profiled;
pub mod report;
pub mod rng;
pub mod runner;
pub mod session;
mod shared;
pub mod spec;
pub mod split;
pub mod stats;
mod values;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use experiment::KIND;
pub use options::{Command, Format, Options, Test};
pub use runner::{IntervalObserver, Source, run};
pub use stats::{Interval, RunResult};

use crate::driver::Driver;
use crate::driver::mysql::MysqlDriver;
use crate::error::{Error, Result};

/// Exit code of a run stopped by Ctrl-C (the report of what was measured is still printed).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Ctrl-C stops the run through the process-wide flag of [`crate::interrupt`]; the report for what was
/// measured is printed and the exit code is 130. A second Ctrl-C exits at once.
fn stop_flag() -> Arc<AtomicBool> {
    crate::interrupt::install();
    crate::interrupt::flag()
}

struct TextObserver<'a> {
    pct: u32,
    warmup: u64,
    hook: Option<&'a mut dyn FnMut(&Interval)>,
}

impl IntervalObserver for TextObserver<'_> {
    fn started(&mut self) {
        let mut s = String::from("Threads started!\n\n");
        if self.warmup > 0 {
            s.push_str(&format!("Warming up for {} seconds...\n\n", self.warmup));
        }
        out(&s);
    }

    fn interval(&mut self, i: &Interval) {
        match self.hook.as_mut() {
            Some(h) => h(i),
            None => out(&report::interval_line(i, self.pct)),
        }
    }

    fn checkpoint(&mut self, r: &RunResult) {
        let o = Options { percentile: self.pct, ..Options::default() };
        out(&format!("[ {:.0}s ] Checkpoint report:\n{}", r.total_time.as_secs_f64(), report::final_report(r, &o)));
    }
}

/// Under `--format=json`: progress lines on stderr, checkpoint reports kept for the document.
struct JsonObserver<'a> {
    opts: &'a Options,
    checkpoints: Vec<serde_json::Value>,
}

impl IntervalObserver for JsonObserver<'_> {
    fn interval(&mut self, i: &Interval) {
        eprint!("{}", report::interval_line(i, self.opts.percentile));
    }

    fn checkpoint(&mut self, r: &RunResult) {
        self.checkpoints.push(json::checkpoint(r, self.opts));
    }
}

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// General help (`versus sysbench --help`).
pub fn general_help() -> String {
    use spec::Group;
    let mut s = String::from(
        "Usage:\n  versus sysbench [options]... TEST COMMAND\n\nCommands: prepare prewarm run cleanup help\n\nTests: ",
    );
    s.push_str(&Test::ALL[..11].iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" "));
    s.push('\n');
    for (g, title) in [
        (Group::General, "General options:"),
        (Group::Rand, "Pseudo-Random Numbers Generator options:"),
        (Group::Log, "Log options:"),
        (Group::Db, "General database options:"),
        (Group::Mysql, "mysql options:"),
        (Group::Versus, "versus options:"),
    ] {
        let specs: Vec<&spec::Spec> = spec::SPECS.iter().filter(|s| s.group == g).collect();
        // Like sysbench: general options are spelled with dashes, the tests' (Lua) options with underscores.
        s.push_str(&format!("\n{title}\n{}", spec::help_lines(&specs, true)));
    }
    s.push_str("\nSee 'versus sysbench <testname> help' for a list of options for each test.\n");
    s
}

/// The options of one test (`versus sysbench TEST help`), alphabetically, in sysbench's layout.
pub fn test_help(test: Test) -> String {
    let mut specs: Vec<&spec::Spec> = spec::SPECS
        .iter()
        .filter(|s| s.group == spec::Group::Script)
        .filter(|s| match s.scope {
            spec::Scope::All => true,
            spec::Scope::Oltp => test != Test::BulkInsert,
            spec::Scope::RandomPoints => test == Test::SelectRandomPoints,
            spec::Scope::RandomRanges => test == Test::SelectRandomRanges,
        })
        .collect();
    specs.sort_by_key(|s| s.name);
    format!("{}\n{} options:\n{}\n", report::version_line(), test.name(), spec::help_lines(&specs, false))
}

/// The driver the options ask for: no server under `--mysql-dry-run`, else the `--client` choice.
pub fn driver_for(o: &Options) -> Arc<dyn Driver> {
    use crate::driver::lean::LeanDriver;
    if o.dry_run {
        return Arc::new(crate::driver::dry_run::DryRunDriver);
    }
    match o.client {
        options::Client::Auto => Arc::new(LeanDriver::new(o.connect.clone(), false)),
        options::Client::Lean => Arc::new(LeanDriver::new(o.connect.clone(), true)),
        options::Client::Crate => Arc::new(MysqlDriver::new(o.connect.clone())),
    }
}

/// Entry point of `versus sysbench ARGS...`; returns the process exit code.
pub fn main(args: Vec<String>) -> Result<i32> {
    let args = match legacy::translate(&args)? {
        Some(t) => {
            eprintln!("versus: {}", t.note);
            t.args
        }
        None => args,
    };
    let inv = options::parse(&args)?;
    for w in &inv.warnings {
        warn(&inv.options, w);
    }
    if inv.version {
        out(&report::version_line());
        return Ok(0);
    }
    if inv.help || inv.test.is_none() {
        out(&general_help());
        return Ok(if inv.help { 0 } else { 1 });
    }
    let test = inv.test.expect("checked");
    let Some(command) = inv.command else {
        return Err(Error::Other(format!(
            "{}: a command is required; supported commands: prepare, prewarm, run, cleanup, help",
            test.name()
        )));
    };
    let o = inv.options;
    let text = o.format == Format::Text;
    let driver = driver_for(&o);
    let log = |line: &str| {
        if text {
            out(&format!("{line}\n"));
        } else {
            eprintln!("{line}");
        }
    };
    match command {
        Command::Help if test == Test::BulkInsert => {
            out(&format!("{}\n", report::version_line()));
            Err(Error::Other("'bulk_insert' test does not implement the 'help' command.".into()))
        }
        Command::Help => {
            out(&test_help(test));
            Ok(0)
        }
        Command::Prepare | Command::Prewarm | Command::Cleanup => {
            if text {
                out(&format!("{}\n", report::version_line()));
            }
            match command {
                Command::Prepare => prepare::prepare(test, &o, driver.as_ref(), &log)?,
                Command::Prewarm => prepare::prewarm(&o, driver.as_ref(), &log)?,
                _ => prepare::cleanup(test, &o, driver.as_ref(), &log)?,
            }
            Ok(0)
        }
        Command::Run => run_command(Source::Test(test), test.name(), &o, driver),
    }
}

/// A warning line: on stdout like all of sysbench's log output, except where stdout carries JSON.
fn warn(o: &Options, line: &str) {
    if o.format == Format::Text {
        out(&format!("{line}\n"));
    } else {
        eprintln!("{line}");
    }
}

/// One line on stderr when the client was the limit of the run (the report on stdout stays sysbench's).
pub fn warn_client_bound(client: Option<crate::sampler::client_load::ClientLoad>) {
    if let Some(l) = client.filter(|l| l.limit().is_some()) {
        eprintln!("versus: client-bound: {}: the figures measure the client, not the server", l.describe());
    }
}

/// What a source of events may put in place of the text report's parts (a Lua script's
/// `sysbench.hooks.report_intermediate` and `report_cumulative`).
#[derive(Default)]
pub struct ReportHooks<'a> {
    /// Called for each interval instead of printing its line.
    pub interval: Option<&'a mut dyn FnMut(&Interval)>,
    /// Called with the whole run instead of printing the final report.
    pub cumulative: Option<&'a mut dyn FnMut(&RunResult)>,
}

/// The `run` command of a test or of another source of events (a Lua script): the preamble, the interval
/// lines, the final report (or `--format=json`'s document, whose `test` is `name`), and a profile when
/// `--profile` asks; returns the exit code.
pub fn run_command(source: Source, name: &str, o: &Options, driver: Arc<dyn Driver>) -> Result<i32> {
    run_command_with(source, name, o, driver, ReportHooks::default())
}

/// [`run_command`] with `hooks` in place of parts of the text report.
pub fn run_command_with(
    source: Source,
    name: &str,
    o: &Options,
    driver: Arc<dyn Driver>,
    hooks: ReportHooks<'_>,
) -> Result<i32> {
    if let Some(part) = split::part_from_env()? {
        return split::part::run(source, o, part, driver);
    }
    let text = o.format == Format::Text;
    if o.time == 0 && o.events == 0 {
        warn(o, "WARNING: Both event and time limits are disabled, running an endless test");
    }
    if o.clients > 1 {
        runner::check_server_connections(driver.as_ref(), o.threads as usize)?;
    }
    let mut profiler = profiled::prepare(o, driver.as_ref())?;
    if text {
        out(&report::preamble(o));
        out("Initializing worker threads...\n\n");
    }
    let stop = stop_flag();
    let mut json_obs = JsonObserver { opts: o, checkpoints: Vec::new() };
    let ReportHooks { interval, mut cumulative } = hooks;
    let mut text_obs = TextObserver { pct: o.percentile, warmup: o.warmup_time, hook: interval };
    let obs: &mut dyn IntervalObserver = if text { &mut text_obs } else { &mut json_obs };
    let watch = crate::sampler::client_load::Watch::start();
    let (result, split) = if o.clients > 1 {
        let launcher = split::launcher(&o.clients_on).expect("--clients-on names a launcher");
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        let test = source.test();
        let (r, s) = match profiler.as_mut() {
            Some(p) => split::coordinate(test, o, launcher.as_ref(), &args, stop, &mut p.observing(obs))?,
            None => split::coordinate(test, o, launcher.as_ref(), &args, stop, obs)?,
        };
        (r, Some(s))
    } else {
        let r = match profiler.as_mut() {
            Some(p) => runner::run_source(source, o, driver, stop, &mut p.observing(obs))?,
            None => runner::run_source(source, o, driver, stop, obs)?,
        };
        (r, None)
    };
    let client = match &split {
        Some(s) => s.load,
        None => watch.finish(o.os_threads()),
    };
    if let Some(s) = split.as_ref().filter(|s| !s.failed().is_empty())
        && text
    {
        let done = s.clients.len() - s.failed().len();
        warn(
            o,
            &format!("WARNING: the figures below are of {done} of {} clients, not the whole load", s.clients.len()),
        );
    }
    let profile = profiler.map(|p| p.finish(&result));
    if result.forced_unfinished.is_some() {
        warn(o, "FATAL: The --max-time limit has expired, forcing shutdown...");
    }
    if text {
        match cumulative.as_mut() {
            Some(h) => h(&result),
            None => out(&report::final_report(&result, o)),
        }
        if let Some(Ok(p)) = &profile {
            out(&format!("{}\n", crate::profile::summary::text(p)));
        }
        warn_client_bound(client);
        if let Some(s) = &split {
            eprintln!("{}", s.describe());
        }
    } else {
        let mut doc = json::report(name, o, &result);
        if !json_obs.checkpoints.is_empty() {
            doc["checkpoints"] = serde_json::Value::Array(json_obs.checkpoints);
        }
        if let Some(Ok(p)) = &profile {
            crate::profile::summary::json(p, &mut doc);
        }
        if let Some(l) = client {
            doc["client"] = serde_json::json!({ "client_bound": l.limit().is_some(), "load": l });
        }
        if let Some(s) = &split {
            doc["clients"] = s.json();
        }
        out(&format!("{}\n", serde_json::to_string_pretty(&doc).map_err(|e| Error::Other(e.to_string()))?));
    }
    // The run's figures are out; a latency log or a profile that was asked for and is missing fails
    // the command.
    if let (Some(f), None) = (&o.latency_log, &split) {
        stats::write_latency_log(f, &result.latencies_us)?;
    }
    if let Some(Err(e)) = profile {
        return Err(e);
    }
    if let Some(e) = split.as_ref().and_then(split::Split::incomplete) {
        return Err(e);
    }
    Ok(if result.forced_unfinished.is_some() {
        2
    } else if result.interrupted {
        EXIT_INTERRUPTED
    } else {
        0
    })
}
