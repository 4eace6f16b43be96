//! Workloads: what runs against a server, and what a run of it reports.
//!
//! One interface, [`Workload`], is what experiments (and through them `versus explain` and `versus
//! series`) and the reports know about a workload: its label, the data its `prepare` creates (so that
//! data are prepared once per shape and restored from a snapshot), how to prepare and prewarm it, how
//! to run it with an [`RunObserver`] and turn the run into a stored [`RunResult`], and how its stored runs
//! are shown ([`Kind::sections`]). Every kind of workload is one module that implements [`Kind`] and
//! [`Workload`], plus one line in [`registry::KINDS`]; nothing above this folder branches on which
//! kind a workload is. docs/workloads.md walks through adding one.
//!
//! - [`sysbench`]: sysbench 1.0's OLTP tests (`test = "oltp_read_write"`).
//! - [`ibench`]: the Insert Benchmark (`test = "ibench"`), one cell per step, steps chained on one
//!   server.
//! - [`script`]: the user's own SQL file (`script = "app.sql"`), pgbench-style.

pub mod def;
pub mod ibench;
pub mod lua;
pub mod probe;
pub mod registry;
pub mod script;
pub mod sections;
pub mod sysbench;

use std::any::Any;
use std::fmt;
use std::time::Duration;

pub use def::WorkloadDef;
pub use probe::{NoProbe, ServerProbe};
pub use registry::{Kind, plan_workloads};
pub use sections::{CsvRow, SectionOut, Sections, StoredRun, StoredRuns, WorkloadSection};

use crate::error::Result;
use crate::store::{Interval, RunResult, StartRun};

/// Where a workload connects: a server's TCP address and the benchmark account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User.
    pub user: String,
    /// Password (never stored).
    pub password: String,
    /// The default database of the workload's connections.
    pub database: String,
    /// Statements every connection of the workload runs first, reconnects included (the target's
    /// connection character set: [`ConnectionCharset::statement`]).
    pub init: Vec<String>,
}

/// The client side of a target's character set: what every connection of its workloads sets with
/// `SET NAMES`, whatever the server's defaults (`character_set_server` and `collation_server` are the
/// server side: startup options).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ConnectionCharset {
    /// The character set of the client, the connection and the results (`latin1`, `utf8mb4`).
    pub charset: String,
    /// The connection's collation; the character set's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
}

impl ConnectionCharset {
    /// Checks the names: a collation needs a character set, and both are plain names. The error says
    /// what is wrong; the caller names where.
    pub fn new(
        charset: Option<&str>,
        collation: Option<&str>,
    ) -> std::result::Result<Option<ConnectionCharset>, String> {
        let name_ok = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match (charset, collation) {
            (None, None) => Ok(None),
            (None, Some(c)) => Err(format!(
                "collation '{c}' needs the character set too (SET NAMES takes the character set first), e.g. \
                 charset latin1 with collation latin1_swedish_ci"
            )),
            (Some(cs), co) => {
                for n in std::iter::once(cs).chain(co) {
                    if !name_ok(n) {
                        return Err(format!("'{n}' is not a character set or collation name"));
                    }
                }
                Ok(Some(ConnectionCharset { charset: cs.to_string(), collation: co.map(str::to_string) }))
            }
        }
    }

    /// `SET NAMES latin1 COLLATE latin1_swedish_ci`.
    pub fn statement(&self) -> String {
        match &self.collation {
            Some(c) => format!("SET NAMES {} COLLATE {c}", self.charset),
            None => format!("SET NAMES {}", self.charset),
        }
    }

    /// `latin1` or `latin1 / latin1_swedish_ci`.
    pub fn describe(&self) -> String {
        match &self.collation {
            Some(c) => format!("{} / {c}", self.charset),
            None => self.charset.clone(),
        }
    }
}

/// What prepare creates: workloads of equal shape share one prepared snapshot per server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataShape {
    /// Identity of the data (`oltp;table_size=1000;tables=2`, `ibench` …), part of the preparation key.
    pub key: String,
    /// Rows prepare loads, for the estimate.
    pub rows: u64,
    /// True when runs start from an empty data directory (prepare creates nothing).
    pub empty: bool,
}

/// The place of a run in a chain: runs of one chain (same target, threads and repetition) run back to
/// back in `rank` order on one server that is kept running, each starting from the state the previous
/// one left (the Insert Benchmark's steps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The chain's name (the workload as written, e.g. `ibench`).
    pub chain: String,
    /// Order within the chain.
    pub rank: u64,
    /// True for the chain's last run: the server is stopped after it.
    pub last: bool,
}

/// The experiment's settings for one run, typed (no command line involved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSettings<'a> {
    /// The target's label in reports.
    pub target: &'a str,
    /// Client threads (connections).
    pub threads: u32,
    /// Measured time.
    pub duration: Duration,
    /// Load before measuring, discarded.
    pub warmup: Duration,
    /// Repetition, from 1.
    pub repetition: u32,
    /// The experiment's seed.
    pub seed: u64,
    /// Samples per second of the server's on-CPU stacks during the measured time; `None`: not profiled.
    pub profile_hz: Option<u32>,
    /// With a profile: also the server threads' off-CPU time per stack (`profile_waits`).
    pub profile_waits: bool,
}

impl RunSettings<'_> {
    /// The seed of the workload's random numbers when it sets none: the same key stream for every
    /// target of a repetition, a different one per repetition.
    pub fn run_seed(&self) -> u64 {
        self.seed.wrapping_mul(1000).wrapping_add(u64::from(self.repetition))
    }
}

/// The durations the estimate of a run depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Measured time per run.
    pub duration: Duration,
    /// Warm-up per run.
    pub warmup: Duration,
    /// Whether runs prewarm.
    pub prewarm: bool,
}

/// The end of one run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Measured to the end.
    Done(Box<RunResult>),
    /// The server did not start, died, or the workload stopped with an error; what was measured is kept.
    Failed {
        /// Why, in one line.
        error: String,
        /// Intervals measured before the failure.
        intervals: Vec<Interval>,
    },
    /// Ctrl-C; what was measured is kept and the experiment stops.
    Interrupted {
        /// Intervals measured before the interruption.
        intervals: Vec<Interval>,
    },
}

impl RunOutcome {
    /// True when the run was measured to the end.
    pub fn is_done(&self) -> bool {
        matches!(self, RunOutcome::Done(_))
    }
}

/// What a running workload tells the one who runs it.
pub trait RunObserver {
    /// The measured part is about to begin: marks the run as running, with the server version and the
    /// command as stored (rendered for people; secrets are scrubbed by the store).
    fn started(&mut self, start: StartRun) -> Result<()>;
    /// A step worth a progress line (prewarming, a cleanup's wait).
    fn note(&mut self, text: &str);
    /// The timed part begins: `warmup` (not measured), then `duration` measured. A progress bar counts
    /// them down; by default this is a note.
    fn measuring(&mut self, warmup: std::time::Duration, duration: std::time::Duration) {
        let _ = warmup;
        self.note(&format!("measuring {} s", duration.as_secs()));
    }
}

/// State a workload keeps while its server keeps running through the runs of a [`Link`] chain; empty
/// for every run that starts a server.
#[derive(Default)]
pub struct Session(Option<Box<dyn Any + Send>>);

impl Session {
    /// The state, if it is a `T`.
    pub fn get_mut<T: Any + Send>(&mut self) -> Option<&mut T> {
        self.0.as_mut()?.downcast_mut()
    }

    /// Replaces the state.
    pub fn set<T: Any + Send>(&mut self, state: T) {
        self.0 = Some(Box::new(state));
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Session(..)" } else { "Session(empty)" })
    }
}

/// Everything a run gets: the server, the settings, a probe of the server, the chain's state and the
/// observer.
pub struct RunContext<'a> {
    /// Where to connect.
    pub server: &'a Endpoint,
    /// The server's variables (`SHOW GLOBAL VARIABLES`), read when it was started; the caller stores
    /// them with the run.
    pub variables: &'a [(String, String)],
    /// Threads, time, repetition, seed.
    pub settings: RunSettings<'a>,
    /// The server's process and counters, where known.
    pub probe: &'a mut dyn ServerProbe,
    /// State kept through a chain of runs on one server.
    pub session: &'a mut Session,
    /// Progress and the start of the measurement.
    pub observer: &'a mut dyn RunObserver,
}

/// The tables a workload's prepare creates on a server: external servers are checked for them before
/// anything runs, so that versus never overwrites a user's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnTables {
    /// Their database.
    pub database: String,
    /// Which tables.
    pub names: TableNames,
}

/// The names of [`OwnTables`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableNames {
    /// These tables.
    Listed(Vec<String>),
    /// Tables numbered without a bound known before the run: a `REGEXP` for `information_schema`, and
    /// how a plan names them (`pi1…`).
    Matching {
        /// The pattern of their names.
        regexp: &'static str,
        /// Their names in a plan.
        shown: &'static str,
    },
}

/// One workload of an experiment: a cell's workload, with its options parsed and checked.
pub trait Workload: Send + Sync + fmt::Debug {
    /// The registered kind (`sysbench`, `ibench`, `script`).
    fn kind(&self) -> &'static str;

    /// The label in reports.
    fn label(&self) -> String;

    /// The data `prepare` creates.
    fn data(&self) -> DataShape;

    /// The options as stored with the cell (`workload_options`), with the kind's identifying key
    /// (`test`, `script`).
    fn stored_options(&self) -> serde_json::Value;

    /// Threads the workload is run at when it does not follow the experiment's list.
    fn threads(&self) -> Option<&[u32]>;

    /// Why the workload cannot run at `threads` (a cell's thread count), in one line; `None` (the
    /// default) when it can.
    fn threads_problem(&self, _threads: u32) -> Option<String> {
        None
    }

    /// The tables `prepare` creates, the target's `database` given; `None` (the default) for a
    /// workload that runs the user's own statements.
    fn own_tables(&self, _database: &str) -> Option<OwnTables> {
        None
    }

    /// Whether runs write to [`Workload::own_tables`] (the default) or only read them.
    fn writes(&self) -> bool {
        true
    }

    /// The workload's place in a chain of runs on one server; `None` (the default) for runs that each
    /// start from the prepared data.
    fn link(&self) -> Option<Link> {
        None
    }

    /// A line for `versus run --dry-run` about how this kind of workload runs, if it differs from the
    /// usual restore–start–measure–stop.
    fn plan_note(&self) -> Option<&'static str> {
        None
    }

    /// A rough wall time of one run at `threads`, server restart included.
    fn estimate(&self, threads: u32, timing: &Timing) -> Duration;

    /// Bytes of data one run at `threads` adds to its datadir beyond the prepared data (the rows it
    /// inserts, with their indexes), for the free-space check before an experiment runs; 0 (the
    /// default) for workloads that work on the prepared data.
    fn disk_growth(&self, _threads: u32) -> u64 {
        0
    }

    /// Creates the data on `server`; `fresh` when the server holds nothing yet (a new sandbox), else
    /// the workload first removes what an earlier prepare left.
    fn prepare(&self, server: &Endpoint, fresh: bool, log: &mut dyn FnMut(&str)) -> Result<()>;

    /// Loads the data into the buffer pool before a run (the default does nothing).
    fn prewarm(&self, _server: &Endpoint, _threads: u32, _log: &mut dyn FnMut(&str)) -> Result<()> {
        Ok(())
    }

    /// Runs and measures once.
    fn run(&self, ctx: RunContext<'_>) -> RunOutcome;
}
