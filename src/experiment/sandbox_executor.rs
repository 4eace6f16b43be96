//! The executor that does the real work: prepares data once per build and data shape in a sandbox and
//! snapshots it; before every run restores that snapshot, starts the target's server, prewarms, and
//! runs the cell's [`Workload`] with a probe of the server (its process and status counters); then
//! stops the server. The runs of a chain ([`crate::workload::Link`]: the Insert Benchmark's steps) share
//! one server, kept running from one run to the next.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::plan::{Cell, Plan, PlannedRun, TargetKind};
use super::progress::Progress;
use super::run::Executor;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::sampler::counters::{BINLOG_SYNCS_SQL, PS_BINLOG_SYNCS};
use crate::server::affinity::{self, CpuSplit};
use crate::server::replication::{Topology, replica_name};
use crate::server::{Home, Sandbox, SandboxSpec, admin, snapshot};
use crate::store::StartRun;
use crate::workload::{Endpoint, RunContext, RunObserver, RunOutcome, RunSettings, ServerProbe, Session, Workload};

/// Options given to `prepare` so that loading is fast and leaves no binary logs in the snapshot; they do
/// not change the data.
const PREPARE_OVERRIDES: &[&str] = &["skip-log-bin", "innodb_flush_log_at_trx_commit=2"];

/// Runs experiments on sandboxes (and external servers).
pub struct SandboxExecutor {
    home: Home,
    work: PathBuf,
    /// The lock that keeps a second run of the same experiment out of `work` (held while this lives).
    _lock: Option<nix::fcntl::Flock<std::fs::File>>,
    /// The prepared snapshots by preparation key: a key prepared once is reused by every later plan
    /// run with this executor (`versus explain` runs one plan per step).
    snapshots: HashMap<String, PathBuf>,
    /// The keys prepared, in order.
    prepared: Vec<String>,
    server: Option<Running>,
    strict: bool,
    warned: HashSet<usize>,
}

/// Which chain of runs a running server serves.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ChainKey {
    target: usize,
    chain: String,
    threads: u32,
    repetition: u32,
}

/// A started (or external) server and what the runs on it share.
struct Running {
    chain: Option<(ChainKey, u64)>,
    endpoint: Endpoint,
    probe: SandboxProbe,
    variables: Vec<(String, String)>,
    session: Session,
}

/// The server's process (a sandbox, or the primary of a topology) and an admin connection.
struct SandboxProbe {
    sandbox: Option<Sandbox>,
    topology: Option<Topology>,
    admin: mysql::Conn,
}

impl SandboxProbe {
    /// The server the load runs against, when versus started it.
    fn server_mut(&mut self) -> Option<&mut Sandbox> {
        match (&mut self.sandbox, &mut self.topology) {
            (Some(s), _) => Some(s),
            (None, Some(t)) => Some(t.primary_mut()),
            (None, None) => None,
        }
    }
}

impl ServerProbe for SandboxProbe {
    fn server_pid(&mut self) -> Option<u32> {
        self.server_mut().map(|s| s.pid())
    }
    fn global_status(&mut self) -> Option<Vec<(String, String)>> {
        server_counters(&mut self.admin).ok()
    }
    fn server_version(&mut self) -> Option<String> {
        admin::version(&mut self.admin).ok()
    }
    fn check_alive(&mut self) -> std::result::Result<(), String> {
        match self.server_mut() {
            Some(s) => s.check_alive().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// Marks the run as started in the store and forwards the workload's notes to the progress.
struct Watch<'a> {
    started: &'a mut dyn FnMut(StartRun) -> Result<()>,
    progress: &'a mut Progress,
}

impl RunObserver for Watch<'_> {
    fn started(&mut self, start: StartRun) -> Result<()> {
        (self.started)(start)
    }
    fn note(&mut self, text: &str) {
        self.progress.step(text);
    }
    fn measuring(&mut self, warmup: std::time::Duration, duration: std::time::Duration) {
        self.progress.measuring(warmup, duration);
    }
}

impl SandboxExecutor {
    /// An executor keeping its sandboxes and snapshots under `home/experiments/NAME` (NAME made safe for
    /// a path by [`crate::owned::slug`]).
    pub fn new(home: &Home, experiment: &str) -> Self {
        let work = home.root().join("experiments").join(crate::owned::slug(experiment));
        SandboxExecutor {
            home: home.clone(),
            work,
            _lock: None,
            snapshots: HashMap::new(),
            prepared: Vec::new(),
            server: None,
            strict: false,
            warned: HashSet::new(),
        }
    }

    /// [`SandboxExecutor::new`] holding the experiment's lock (`experiments/NAME.lock`, beside its work
    /// directory): one run of an experiment at a time; a second gets an error naming the first.
    pub fn locked(home: &Home, experiment: &str) -> Result<Self> {
        let mut ex = SandboxExecutor::new(home, experiment);
        ex._lock = Some(super::external::lock_experiment(home, experiment)?);
        // Its work directory and what is in it (run/, prepare-N/, snapshot-N/) are versus's: a link to
        // a place versus did not make is refused before any server starts.
        crate::owned::check_dir(&ex.work)?;
        crate::owned::check_entries(&ex.work)?;
        Ok(ex)
    }

    /// With `strict`, a run whose server clamped or adjusted a requested value at startup fails
    /// instead of running under its label with a warning (`versus run --strict`).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Starts the server of `target` from `spec` and checks that it runs with the values its config
    /// and options request: a difference is a warning (once per target), or with `--strict` an error.
    fn start_checked(
        &mut self,
        plan: &Plan,
        target: usize,
        spec: SandboxSpec,
        progress: &mut Progress,
    ) -> Result<Sandbox> {
        let sb = Sandbox::start(spec)?;
        self.check_adjusted(plan, target, &sb, progress)?;
        Ok(sb)
    }

    /// A server that runs with other values than its config and options request: a warning (once per
    /// target), or with `--strict` an error.
    fn check_adjusted(&mut self, plan: &Plan, target: usize, sb: &Sandbox, progress: &mut Progress) -> Result<()> {
        if sb.adjusted().is_empty() {
            return Ok(());
        }
        let list: Vec<String> = sb.adjusted().iter().map(ToString::to_string).collect();
        let label = &plan.targets[target].label;
        if self.strict {
            return Err(Error::option(
                "--strict",
                format!(
                    "target '{label}': the server changed requested values at startup: {}; fix the config, or run \
                     without --strict to measure it anyway",
                    list.join(", ")
                ),
            ));
        }
        if self.warned.insert(target) {
            progress.warn(&format!(
                "warning: target '{label}' does not run as configured: {} (the results are stored under its label; \
                 --strict makes this an error)",
                list.join(", ")
            ));
        }
        Ok(())
    }

    /// The preparation keys this executor prepared (each once), in order.
    pub fn prepared(&self) -> &[String] {
        &self.prepared
    }

    /// The directory of this experiment's sandboxes and snapshots (removed by the caller when done).
    pub fn work_dir(&self) -> &Path {
        &self.work
    }

    fn sandbox_spec(&self, plan: &Plan, target: usize, dir: &Path) -> Result<SandboxSpec> {
        self.sandbox_spec_on(plan, target, dir, &[])
    }

    fn sandbox_spec_on(&self, plan: &Plan, target: usize, dir: &Path, cpus: &[usize]) -> Result<SandboxSpec> {
        let TargetKind::Sandbox { build, base_file, overrides, .. } = &plan.targets[target].kind else {
            return Err(Error::Other("not a sandbox target".into()));
        };
        let mut spec = SandboxSpec::new("run", self.home.build(build)?, dir);
        spec.base_config = base_file.clone();
        spec.overrides = overrides.clone();
        spec.datadir = Some(dir.join("data"));
        spec.cpus = cpus.to_vec();
        Ok(spec)
    }

    /// Starts the cell's server from its prepared data (or connects to the external one).
    fn open(
        &mut self,
        plan: &Plan,
        cell: &Cell,
        w: &dyn Workload,
        split: Option<&CpuSplit>,
        progress: &mut Progress,
    ) -> Result<Running> {
        let (endpoint, probe) = match &plan.targets[cell.target].kind {
            TargetKind::External { address, user, password_env, database, .. } => {
                let endpoint = external_endpoint(address, user, password_env.as_deref(), database)?;
                let admin = admin::connect_tcp(endpoint.port, user, Some(&endpoint.password), None)?;
                (endpoint, SandboxProbe { sandbox: None, topology: None, admin })
            }
            TargetKind::Sandbox { .. } => {
                let dir = self.work.join("run");
                let snap = self
                    .snapshots
                    .get(&plan.preparations[cell.preparation].key)
                    .cloned()
                    .ok_or_else(|| Error::Other("no prepared data".into()))?;
                progress.step(if w.data().empty {
                    "restoring a fresh data directory"
                } else {
                    "restoring the prepared data"
                });
                // The primary's directory, then each replica's: every one starts from the same data.
                let replication = plan.targets[cell.target].replication.clone();
                let replicas = replication.as_ref().map_or(0, |r| r.replicas);
                let dirs: Vec<PathBuf> = std::iter::once(dir.clone())
                    .chain((1..=replicas).map(|i| self.work.join(replica_name("run", i))))
                    .collect();
                for d in &dirs {
                    // The experiment's lock is ours, so a server still running here was left by a versus
                    // that was killed outright: stop it before its directory goes.
                    crate::owned::check_dir(d)?;
                    if crate::server::sandbox::stop_leftover(d) > 0 {
                        progress.step("stopped the server a killed run left behind");
                    }
                    crate::owned::remove(d)?;
                }
                if plan.file.drop_caches {
                    progress.step("dropping the OS page cache");
                    super::setup::drop_caches()?;
                }
                for d in &dirs {
                    snapshot::restore(&snap, &d.join("data"))?;
                }
                let cpus = split.map_or(&[][..], |s| &s.server);
                let spec = self.sandbox_spec_on(plan, cell.target, &dir, cpus)?;
                // Stopping: no server to start (a scheduler's grace period before SIGKILL is short).
                crate::interrupt::check()?;
                match replication {
                    None => {
                        progress.step("starting the server");
                        let sb = self.start_checked(plan, cell.target, spec, progress)?;
                        let admin = sb.connect_root()?;
                        (sandbox_endpoint(&sb), SandboxProbe { sandbox: Some(sb), topology: None, admin })
                    }
                    Some(r) => {
                        progress.step(&format!("starting the primary with {}", r.describe()));
                        let replica_build = r.replica_build.as_deref().map(|b| self.home.build(b)).transpose()?;
                        let t = Topology::start(r.spec(spec, replica_build))?;
                        self.check_adjusted(plan, cell.target, t.primary(), progress)?;
                        let admin = t.primary().connect_root()?;
                        (sandbox_endpoint(t.primary()), SandboxProbe { sandbox: None, topology: Some(t), admin })
                    }
                }
            }
        };
        let mut endpoint = endpoint;
        // The target's client-side character set, on every connection of the workload.
        endpoint.init.extend(plan.targets[cell.target].charset.iter().map(|c| c.statement()));
        let mut running = Running { chain: None, endpoint, probe, variables: Vec::new(), session: Session::default() };
        running.variables = admin::global_variables(&mut running.probe.admin)?;
        Ok(running)
    }

    /// Stops the running server, if it is a sandbox.
    fn stop(&mut self, progress: &mut Progress) -> Result<()> {
        let Some(r) = self.server.take() else { return Ok(()) };
        match (r.probe.sandbox, r.probe.topology) {
            (Some(mut sb), _) => {
                progress.step("stopping the server");
                sb.stop().map(|_| ())
            }
            (None, Some(mut t)) => {
                progress.step("stopping the primary and its replicas");
                t.stop()
            }
            (None, None) => Ok(()),
        }
    }

    fn run_cell(
        &mut self,
        plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
    ) -> Result<RunOutcome> {
        let cell = &plan.cells[run.cell];
        let w = plan.workloads[cell.workload].as_ref();
        let link = w.link();
        let chain = link.as_ref().map(|l| {
            let key = ChainKey {
                target: cell.target,
                chain: l.chain.clone(),
                threads: cell.threads,
                repetition: run.repetition,
            };
            (key, l.rank)
        });
        let reuse = match (&self.server, &chain) {
            (Some(Running { chain: Some((have, rank)), .. }), Some((want, next))) => have == want && next > rank,
            _ => false,
        };
        // Pinning is for servers versus starts; the client is pinned with them, never alone.
        let sandboxed = matches!(plan.targets[cell.target].kind, TargetKind::Sandbox { .. });
        let split = if sandboxed { super::setup::cpu_split(&plan.file)? } else { None };
        // The client's threads (the workload starts them from this thread) run on the client's CPUs.
        let _pin = split.as_ref().map(|s| affinity::pin_thread(&s.client)).transpose()?;
        if !reuse {
            self.stop(progress)?;
            self.server = Some(self.open(plan, cell, w, split.as_ref(), progress)?);
            interrupt::check()?;
            if plan.file.prewarm {
                let s = self.server.as_mut().expect("opened above");
                w.prewarm(&s.endpoint, cell.threads.min(4), &mut |l: &str| progress.step(l))?;
            }
            if sandboxed && !plan.file.settle.is_zero() {
                progress.step(&format!("settling for {} s", plan.file.settle.as_secs()));
                settle(plan.file.settle)?;
            }
        }
        let s = self.server.as_mut().expect("opened above");
        s.chain = chain;
        let settings = RunSettings {
            target: &plan.targets[cell.target].label,
            threads: cell.threads,
            duration: plan.file.duration,
            warmup: plan.file.warmup,
            repetition: run.repetition,
            seed: plan.seed,
            profile_hz: plan.file.profile.then(|| plan.file.profile_hz.unwrap_or(crate::profile::DEFAULT_HZ)),
            profile_waits: plan.file.profile && plan.file.profile_waits,
        };
        let lag = s.probe.topology.as_ref().map(super::replicas::start).transpose()?;
        let mut watch = Watch { started, progress };
        let outcome = w.run(RunContext {
            server: &s.endpoint,
            variables: &s.variables,
            settings,
            probe: &mut s.probe,
            session: &mut s.session,
            observer: &mut watch,
        });
        let tps = match &outcome {
            RunOutcome::Done(r) => Some(r.summary.tps),
            _ => None,
        };
        let replication = match (lag, &mut s.probe.topology) {
            (Some(lag), Some(t)) => Some(super::replicas::finish(lag, t, plan.file.warmup, tps, watch.progress)),
            _ => None,
        };
        let outcome = match outcome {
            RunOutcome::Done(mut r) => {
                r.variables = s.variables.clone();
                if let Some((figures, seconds)) = replication {
                    r.efficiency.replication = Some(figures);
                    r.replica_seconds = seconds;
                }
                RunOutcome::Done(r)
            }
            other => other,
        };
        let keep = outcome.is_done() && link.is_some_and(|l| !l.last);
        if !keep {
            let stopped = self.stop(watch.progress);
            if let (RunOutcome::Done(r), Err(e)) = (&outcome, stopped) {
                return Ok(RunOutcome::Failed { error: e.to_string(), intervals: r.intervals.clone() });
            }
        }
        Ok(outcome)
    }
}

impl Executor for SandboxExecutor {
    fn datadir_root(&self) -> Option<&Path> {
        Some(&self.work)
    }

    fn is_prepared(&self, plan: &Plan, index: usize) -> bool {
        matches!(plan.targets[plan.preparations[index].target].kind, TargetKind::Sandbox { .. })
            && self.snapshots.contains_key(&plan.preparations[index].key)
    }

    fn prepare(&mut self, plan: &Plan, index: usize, progress: &mut Progress) -> Result<()> {
        let p = &plan.preparations[index];
        let w = plan.workloads[p.workload].as_ref();
        let empty = w.data().empty;
        match &plan.targets[p.target].kind {
            TargetKind::External { address, user, password_env, database, replace_tables } => {
                let endpoint = external_endpoint(address, user, password_env.as_deref(), database)?;
                if !replace_tables {
                    let mut conn = admin::connect_tcp(endpoint.port, user, Some(&endpoint.password), None)?;
                    let label = &plan.targets[p.target].label;
                    super::external::check_no_tables(&mut conn, label, address, database, w)?;
                }
                if empty {
                    return Ok(());
                }
                progress.step(&format!("preparing {} on {address}", p.key));
                // Without replace_tables nothing of the server's is removed first.
                w.prepare(&endpoint, !replace_tables, &mut |l: &str| progress.step(l))
            }
            TargetKind::Sandbox { .. } => {
                if self.snapshots.contains_key(&p.key) {
                    return Ok(());
                }
                // A server left running by a chain must not hold the port or the files.
                self.stop(progress)?;
                let dir = self.work.join(format!("prepare-{index}"));
                crate::owned::check_dir(&dir)?;
                crate::owned::remove(&dir)?;
                let mut spec = self.sandbox_spec(plan, p.target, &dir)?;
                spec.base_config = None;
                // The target's options that shape the data (character set, engine, page size …) are
                // set while preparing; its other options are not (they do not change the data).
                spec.overrides =
                    p.server_options.iter().cloned().chain(PREPARE_OVERRIDES.iter().map(|o| o.to_string())).collect();
                progress.step(&format!("preparing {}", p.key));
                let mut sb = Sandbox::start(spec)?;
                if !empty {
                    w.prepare(&sandbox_endpoint(&sb), true, &mut |l: &str| progress.step(l))?;
                }
                sb.stop()?;
                let snap = self.work.join(format!("snapshot-{}", self.snapshots.len()));
                sb.snapshot(&snap)?;
                crate::owned::remove(&dir)?;
                self.snapshots.insert(p.key.clone(), snap);
                self.prepared.push(p.key.clone());
                Ok(())
            }
        }
    }

    fn run(
        &mut self,
        plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
    ) -> RunOutcome {
        match self.run_cell(plan, run, started, progress) {
            Ok(o) => o,
            Err(e) => {
                // Whatever failed, the next run starts from a fresh server.
                let _ = self.stop(progress);
                match e {
                    Error::Interrupted => RunOutcome::Interrupted { intervals: Vec::new() },
                    e => RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
                }
            }
        }
    }
}

/// The server's counters as a run samples them: `SHOW GLOBAL STATUS`, plus the binary log's sync count
/// from `performance_schema` as [`PS_BINLOG_SYNCS`] where the server keeps it (MySQL; MariaDB with
/// `performance_schema=ON`).
pub(super) fn server_counters(conn: &mut mysql::Conn) -> Result<Vec<(String, String)>> {
    use mysql::prelude::Queryable;
    let mut status = admin::global_status(conn)?;
    if let Ok(Some(Some(n))) = conn.query_first::<Option<i64>, _>(BINLOG_SYNCS_SQL) {
        status.push((PS_BINLOG_SYNCS.to_string(), n.to_string()));
    }
    Ok(status)
}

/// Waits `pause` (the `settle` option), returning early with [`Error::Interrupted`] on a stop signal.
fn settle(pause: std::time::Duration) -> Result<()> {
    let end = std::time::Instant::now() + pause;
    loop {
        interrupt::check()?;
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(100)));
    }
}

/// The benchmark account of a sandbox, over TCP on 127.0.0.1.
fn sandbox_endpoint(sb: &Sandbox) -> Endpoint {
    let i = sb.info();
    Endpoint {
        host: "127.0.0.1".into(),
        port: i.port,
        user: i.user.clone(),
        password: i.password.clone(),
        database: i.database.clone(),
        init: Vec::new(),
    }
}

fn external_endpoint(address: &str, user: &str, password_env: Option<&str>, database: &str) -> Result<Endpoint> {
    let (host, port) =
        address.rsplit_once(':').ok_or_else(|| Error::Other(format!("address '{address}' is not HOST:PORT")))?;
    let port = port.parse().map_err(|_| Error::Other(format!("address '{address}': '{port}' is not a port")))?;
    let password = match password_env {
        None => String::new(),
        Some(var) => std::env::var(var).map_err(|_| {
            Error::Other(format!("password_env names {var}, which is not set; export {var} with the password"))
        })?,
    };
    Ok(Endpoint {
        host: host.to_string(),
        port,
        user: user.to_string(),
        password,
        database: database.to_string(),
        init: Vec::new(),
    })
}
