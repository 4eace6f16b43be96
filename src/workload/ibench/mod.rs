//! The Insert Benchmark (Mark Callaghan's iibench), natively: `versus ibench`.
//!
//! Steps, in order: l.i0 (load in PK order, no secondary indexes), l.x (100 rows per client, then the
//! three secondary indexes), l.i1 and l.i2 (inserts at the PK tail and as many deletes at the head, 50
//! and 5 rows per statement), the flush-and-wait cleanup, and the query steps qrN / qpN (range or point
//! queries as fast as possible while inserts and deletes run at N rows/s per client). Each client has
//! its own connections: an inserter, a deleter (fed by one statement maker through queues of 8) and a
//! query worker. See docs/ibench.md.
//!
//! Library use: build [`Options`], then either [`run`] the selected steps, or drive a [`Runner`] one
//! step at a time (as experiments do, one stored run per step). Results are [`IbenchResult`] /
//! [`StepResult`]; [`report`] renders one run, [`compare`] the Small Datum tables over several.

pub mod cleanup;
pub mod compare;
pub mod measure;
pub mod options;
pub mod query;
pub mod report;
pub mod result;
pub mod rows;
pub mod schema;
pub mod stats;
pub mod steps;
pub mod stored;
pub mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use measure::{NoProbe, Probe};
pub use options::{Options, Step, StepKind, parse_steps};
pub use result::{IbenchResult, IntervalLine, Skipped, StepResult, StepStatus};

use crate::driver::Driver;
use crate::error::{Error, Result};

/// The database the tables live in.
pub const DATABASE: &str = "ib";

/// Progress callbacks of a run. All methods have empty defaults.
pub trait Observer {
    /// A step's clock starts.
    fn step_started(&mut self, _step: Step) {}
    /// One report interval of a step.
    fn interval(&mut self, _step: Step, _line: &IntervalLine) {}
    /// Something worth a line (the cleanup's wait).
    fn note(&mut self, _step: Step, _text: &str) {}
    /// A step ended (done, failed or interrupted).
    fn step_done(&mut self, _result: &StepResult) {}
    /// A step will not run.
    fn step_skipped(&mut self, _skipped: &Skipped) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// What the steps share: options, connections, the stop flag, and the rows the tables hold.
pub struct Env<'a> {
    /// The run's options.
    pub opts: &'a Options,
    /// Opens the workers' connections (no default database needed).
    pub driver: Arc<dyn Driver>,
    /// Ctrl-C.
    pub stop: Arc<AtomicBool>,
    /// Database of the tables.
    pub database: String,
    /// Rows in all tables, when known (l.x reports indexed rows from it).
    pub table_rows: Option<u64>,
}

/// Runs steps one at a time against one server, keeping what the later steps need to know, and
/// skipping everything after a failed or interrupted step.
pub struct Runner {
    opts: Options,
    driver: Arc<dyn Driver>,
    stop: Arc<AtomicBool>,
    database: String,
    table_rows: Option<u64>,
    result: IbenchResult,
    ended: Option<String>,
}

impl Runner {
    /// A runner for `opts` on `driver`'s server, labelled `label` (default: the server version).
    ///
    /// Errors: options out of range (naming the flag), or no connection to the server.
    pub fn new(opts: &Options, driver: Arc<dyn Driver>, stop: Arc<AtomicBool>, label: Option<&str>) -> Result<Runner> {
        opts.validate()?;
        let mut c =
            driver.connect_first().map_err(|e| Error::Other(format!("ibench: cannot connect to the server: {e}")))?;
        let version = c.query_rows("SELECT VERSION()").ok().and_then(|r| r.first);
        let label = label.map(str::to_string).or_else(|| version.clone()).unwrap_or_else(|| "server".into());
        Ok(Runner {
            opts: opts.clone(),
            driver,
            stop,
            database: DATABASE.into(),
            table_rows: None,
            result: IbenchResult {
                format_version: result::RESULT_FORMAT_VERSION,
                versus_version: env!("CARGO_PKG_VERSION").to_string(),
                label,
                server_version: version,
                ncpu: std::thread::available_parallelism().ok().map(|n| n.get() as u32),
                options: opts.clone(),
                steps: Vec::new(),
                skipped: Vec::new(),
                interrupted: false,
            },
            ended: None,
        })
    }

    /// `SELECT VERSION()` of the server.
    pub fn server_version(&self) -> Option<&str> {
        self.result.server_version.as_deref()
    }

    /// Why the remaining steps will be skipped, once a step failed or was interrupted.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// Runs `step` (or records it as skipped after an earlier failure or Ctrl-C) and returns its
    /// result; `None` when it was skipped.
    pub fn step(&mut self, step: Step, probe: &mut dyn Probe, obs: &mut dyn Observer) -> Option<&StepResult> {
        if self.ended.is_none() && self.stop.load(Ordering::Relaxed) {
            self.ended = Some("interrupted".into());
            self.result.interrupted = true;
        }
        if let Some(why) = &self.ended {
            let s = Skipped { step, reason: format!("skipped: {why}") };
            obs.step_skipped(&s);
            self.result.skipped.push(s);
            return None;
        }
        let mut env = Env {
            opts: &self.opts,
            driver: self.driver.clone(),
            stop: self.stop.clone(),
            database: self.database.clone(),
            table_rows: self.table_rows,
        };
        let r = match step {
            Step::Cleanup => cleanup::cleanup(&mut env, probe, obs),
            _ => steps::run_step(&mut env, step, probe, obs),
        };
        self.table_rows = env.table_rows;
        match r.status {
            StepStatus::Done => {}
            StepStatus::Failed => {
                self.ended = Some(format!("{step} failed: {}", r.error.as_deref().unwrap_or("unknown error")));
            }
            StepStatus::Interrupted => {
                self.ended = Some(format!("interrupted during {step}"));
                self.result.interrupted = true;
            }
        }
        obs.step_done(&r);
        self.result.steps.push(r);
        self.result.steps.last()
    }

    /// Everything run so far.
    pub fn result(&self) -> &IbenchResult {
        &self.result
    }

    /// The whole result.
    pub fn finish(self) -> IbenchResult {
        self.result
    }
}

/// Runs the selected steps of `opts` in order against `driver`'s server. A failed or interrupted step
/// ends the run (the later steps are listed as skipped); the result holds what was measured.
pub fn run(
    opts: &Options,
    driver: Arc<dyn Driver>,
    probe: &mut dyn Probe,
    obs: &mut dyn Observer,
    stop: Arc<AtomicBool>,
    label: Option<&str>,
) -> Result<IbenchResult> {
    let mut runner = Runner::new(opts, driver, stop, label)?;
    for step in opts.selected_steps() {
        runner.step(step, probe, obs);
    }
    Ok(runner.finish())
}
