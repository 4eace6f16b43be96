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
pub mod experiment;
pub mod measure;
pub mod options;
pub mod page;
pub mod profiled;
pub mod query;
pub mod report;
pub mod result;
pub mod rows;
pub mod schema;
pub mod section;
pub mod stats;
pub mod steps;
pub mod stored;
pub mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use experiment::KIND;
pub use measure::{NoProbe, ServerProbe};
pub use options::{Options, Step, StepKind, parse_steps};
pub use result::{IbenchResult, IntervalLine, Skipped, StepResult, StepStatus};

use crate::driver::Driver;
use crate::error::{Error, Result};

/// The database the tables live in.
pub const DATABASE: &str = "ib";

/// Progress callbacks of a run. All methods have empty defaults.
pub trait StepObserver {
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
impl StepObserver for Quiet {}

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
    pub fn step(&mut self, step: Step, probe: &mut dyn ServerProbe, obs: &mut dyn StepObserver) -> Option<&StepResult> {
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
    probe: &mut dyn ServerProbe,
    obs: &mut dyn StepObserver,
    stop: Arc<AtomicBool>,
    label: Option<&str>,
) -> Result<IbenchResult> {
    // Connections at once per client: the inserter, then a deleter, then a query connection.
    let per_client = opts
        .selected_steps()
        .iter()
        .map(|s| {
            if s.is_query() {
                3
            } else if s.deletes() {
                2
            } else {
                1
            }
        })
        .max()
        .unwrap_or(1);
    let needed = opts.clients as usize * per_client;
    if let Some(max) = driver.max_connections()
        && needed > max
    {
        return Err(Error::option(
            "--clients",
            format!(
                "{} clients open {needed} connections at once in these steps, more than the server allows (max_connections = {max}); use at most {} clients, or raise max_connections",
                opts.clients,
                max / per_client
            ),
        ));
    }
    let mut runner = Runner::new(opts, driver, stop, label)?;
    for step in opts.selected_steps() {
        runner.step(step, probe, obs);
    }
    Ok(runner.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::DbError;
    use crate::driver::mock::MockDriver;
    use std::time::Duration;

    fn quick(steps: &[Step]) -> Options {
        Options {
            rows_load: 1000,
            rows_write1: 200,
            rows_write2: 20,
            query_seconds: 2,
            rates: vec![100],
            steps: steps.to_vec(),
            cleanup_seconds: Some(0),
            ..Options::default()
        }
    }

    fn go(o: &Options, mock: MockDriver) -> IbenchResult {
        let stop = Arc::new(AtomicBool::new(false));
        run(o, Arc::new(mock), &mut NoProbe, &mut Quiet, stop, Some("mock")).unwrap()
    }

    #[test]
    fn load_creates_the_table_and_inserts_every_row_in_statements_of_rpc_rows() {
        let mock = MockDriver::new().recording();
        let r = go(&quick(&[Step::Load]), mock.clone());
        let log = mock.log();
        assert_eq!(
            &log[1..5],
            [
                "CREATE DATABASE IF NOT EXISTS ib",
                "USE ib",
                "DROP TABLE IF EXISTS pi1",
                &schema::create_table("pi1", &quick(&[]))
            ]
        );
        let inserts: Vec<&String> = log.iter().filter(|s| s.starts_with("INSERT INTO pi1 ")).collect();
        assert_eq!(inserts.len(), 10);
        assert!(inserts.iter().all(|s| s.matches("),(").count() == 99), "100 rows per statement");
        let s = &r.steps[0];
        assert_eq!((s.status, s.inserted_rows, s.insert_statements, s.operations), (StepStatus::Done, 1000, 10, 1000));
        assert!(s.rate > 0.0 && s.latency_of(stats::Kind::Insert).is_some_and(|l| l.count == 10));
        assert_eq!(r.label, "mock");
    }

    #[test]
    fn a_query_step_paces_the_writes_to_the_target_rate_and_deletes_from_the_head() {
        // The pacing figures depend on the wall clock, so a machine busy with other tests may miss them
        // once; a pacer that is wrong misses them every time. The exact counts are checked every time.
        let mut misses = Vec::new();
        for _ in 0..3 {
            let mock = MockDriver::new().recording().with_delay(Duration::from_micros(300));
            let qr = Step::Query { point: false, rate: 100 };
            let r = go(&quick(&[qr]), mock.clone());
            let s = &r.steps[0];
            assert_eq!(s.status, StepStatus::Done, "{:?}", s.error);
            // 2 s × 100 rows/s in statements of 50, released every 0.5 s: the step lasts the scheduled 2 s.
            assert_eq!((s.inserted_rows, s.insert_statements), (200, 4));
            let deletes: Vec<String> = mock.log().into_iter().filter(|s| s.starts_with("DELETE")).collect();
            assert_eq!(
                deletes,
                (0..4).map(|k| rows::delete("pi1", k * 50, 50)).collect::<Vec<_>>(),
                "one delete per insert, advancing from min(transactionid) (NULL on the mock: 0)"
            );
            let f = s.fetched.expect("the fetched-rows check");
            assert_eq!(f.expected_per_query, 10.0);
            assert!(mock.log().iter().any(|s| s.contains("FORCE INDEX (pi1_marketsegment)")));
            let sla = s.sla.expect("query steps have an SLA");
            if (1.95..2.4).contains(&s.seconds) && sla.passed && (0.85..=1.03).contains(&sla.ratio) && s.queries > 100 {
                return;
            }
            misses.push(format!("{} s, {sla:?}, {} queries", s.seconds, s.queries));
        }
        panic!("the pacing missed its target three times: {misses:?}");
    }

    #[test]
    fn a_lost_server_fails_the_step_and_skips_the_rest() {
        // Statements: VERSION, CREATE DATABASE, USE, DROP, CREATE, the inserter's USE, then inserts.
        let mock = MockDriver::new().fail_at(8, DbError::lost("server gone"));
        let r = go(&quick(&[Step::Load, Step::Index, Step::Write1]), mock);
        let s = &r.steps[0];
        assert_eq!(s.status, StepStatus::Failed);
        assert_eq!(s.inserted_rows, 200, "what was measured before the failure is kept");
        let e = s.error.as_deref().unwrap_or_default();
        assert!(e.contains("insert lost the connection") && !e.contains('\n'), "{e}");
        assert_eq!(r.steps.len(), 1);
        let skipped: Vec<String> = r.skipped.iter().map(|k| format!("{}: {}", k.step, k.reason)).collect();
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].starts_with("l.x: skipped: l.i0 failed: insert lost the connection"), "{skipped:?}");
        assert!(r.failed());
    }

    #[test]
    fn server_errors_are_retried_and_counted() {
        let mock = MockDriver::new().fail_at(7, DbError::server(1213, "Deadlock found"));
        let r = go(&quick(&[Step::Load]), mock);
        let s = &r.steps[0];
        assert_eq!((s.status, s.inserted_rows, s.retries.insert), (StepStatus::Done, 1000, 1));
        assert_eq!(s.intervals.last().map(|l| l.retry_i), Some(1));
    }

    #[test]
    fn ctrl_c_before_a_step_skips_it() {
        let stop = Arc::new(AtomicBool::new(true));
        let r = run(&quick(&[Step::Load]), Arc::new(MockDriver::new()), &mut NoProbe, &mut Quiet, stop, None).unwrap();
        assert!(r.interrupted && r.steps.is_empty());
        assert_eq!(r.skipped[0].reason, "skipped: interrupted");
    }

    #[test]
    fn bad_options_fail_before_connecting() {
        let mock = MockDriver::new();
        let o = Options { rpc_write2: 0, ..quick(&[]) };
        let e = Runner::new(&o, Arc::new(mock.clone()), Arc::new(AtomicBool::new(false)), None).err().unwrap();
        assert_eq!(e.to_string(), "--rpc-write2: 0 is out of range; rows per statement must be at least 1");
        assert_eq!(mock.connects(), 0);
    }
}
