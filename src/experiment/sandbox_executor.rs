//! The executor that does the real work: prepares data once per build and data shape in a sandbox and
//! snapshots it; before every run restores that snapshot, starts the target's server, prewarms, runs
//! the sysbench workload with 1-s intervals, samples the server and versus itself from /proc and the
//! server's status counters over the measured time, and stops the server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::experiment::plan::{Plan, PlannedRun, TargetKind, init_time_overrides, workload_option};
use crate::experiment::progress::Progress;
use crate::experiment::run::{Executor, RunOutcome};
use crate::interrupt;
use crate::sampler::counters::{BINLOG_SYNCS_SQL, PS_BINLOG_SYNCS};
use crate::sampler::{Efficiency, ProcessSample, ServerLine, status_deltas};
use crate::server::{Home, Sandbox, SandboxSpec, admin, snapshot};
use crate::store::{self, Interval, RunResult, StartRun, StoredHistogram, Summary};
use crate::workload::sysbench::{self, Observer, options};

/// Options given to `prepare` so that loading is fast and leaves no binary logs in the snapshot; they do
/// not change the data.
const PREPARE_OVERRIDES: &[&str] = &["skip-log-bin", "innodb_flush_log_at_trx_commit=2"];

/// Runs experiments on sandboxes (and external servers).
pub struct SandboxExecutor {
    home: Home,
    work: PathBuf,
    snapshots: HashMap<usize, PathBuf>,
    ibench: super::ibench::Sessions,
}

impl SandboxExecutor {
    /// An executor keeping its sandboxes and snapshots under `home/experiments/NAME` (NAME made safe for
    /// a path by [`crate::owned::slug`]).
    pub fn new(home: &Home, experiment: &str) -> Self {
        let work = home.root().join("experiments").join(crate::owned::slug(experiment));
        SandboxExecutor { home: home.clone(), work, snapshots: HashMap::new(), ibench: Default::default() }
    }

    /// The snapshot of preparation `index`, once prepared.
    pub(super) fn snapshot_of(&self, index: usize) -> Option<PathBuf> {
        self.snapshots.get(&index).cloned()
    }

    /// The sandbox of `target` in `dir`, with the target's config.
    pub(super) fn spec_for(&self, plan: &Plan, target: usize, dir: &Path) -> Result<SandboxSpec> {
        let mut spec = self.sandbox_spec(plan, target, dir, &[])?;
        spec.datadir = Some(dir.join("data"));
        Ok(spec)
    }

    /// The Insert Benchmark sessions (a server kept running through the steps of a sequence).
    pub(super) fn ibench_sessions(&mut self) -> &mut super::ibench::Sessions {
        &mut self.ibench
    }

    /// The directory of this experiment's sandboxes and snapshots (removed by the caller when done).
    pub fn work_dir(&self) -> &Path {
        &self.work
    }

    fn sandbox_spec(&self, plan: &Plan, target: usize, dir: &Path, extra: &[&str]) -> Result<SandboxSpec> {
        let TargetKind::Sandbox { build, base_file, overrides, .. } = &plan.targets[target].kind else {
            return Err(Error::Other("not a sandbox target".into()));
        };
        let mut spec = SandboxSpec::new("run", self.home.build(build)?, dir);
        spec.base_config = base_file.clone();
        spec.overrides = overrides.clone();
        spec.overrides.extend(extra.iter().map(|s| s.to_string()));
        spec.datadir = Some(dir.join("data"));
        Ok(spec)
    }
}

/// The sysbench command line of a workload against a server.
pub fn sysbench_args(
    plan: &Plan,
    workload: usize,
    threads: u32,
    connect: &[String],
    command: &str,
    repetition: u32,
) -> Vec<String> {
    let w = &plan.workloads[workload];
    let mut args = vec![w.test.clone()];
    for (k, v) in &w.options {
        let value = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Boolean(b) => {
                if *b {
                    "on".into()
                } else {
                    "off".into()
                }
            }
            other => other.to_string(),
        };
        args.push(format!("--{k}={value}"));
    }
    args.push(format!("--threads={threads}"));
    if command == "run" {
        args.push(format!("--time={}", plan.file.duration.as_secs()));
        args.push(format!("--warmup-time={}", plan.file.warmup.as_secs()));
        args.push("--report-interval=1".into());
        args.push("--percentile=95".into());
        args.push("--events=0".into());
        if workload_option(w, "rand_seed").is_none() {
            // The same key stream for every target of a repetition, a different one per repetition.
            args.push(format!("--rand-seed={}", plan.seed.wrapping_mul(1000).wrapping_add(repetition as u64)));
        }
    }
    args.extend(connect.iter().cloned());
    args.push(command.to_string());
    args
}

fn connect_args(host: &str, port: u16, user: &str, password: &str, db: &str) -> Vec<String> {
    vec![
        format!("--mysql-host={host}"),
        format!("--mysql-port={port}"),
        format!("--mysql-user={user}"),
        format!("--mysql-password={password}"),
        format!("--mysql-db={db}"),
    ]
}

fn invoke(args: &[String], log: &mut Progress) -> Result<()> {
    let inv = options::parse(args)?;
    let (Some(test), Some(command)) = (inv.test, inv.command) else {
        return Err(Error::Other(format!("incomplete workload command line: {}", args.join(" "))));
    };
    let driver = sysbench::driver_for(&inv.options);
    let lines = std::sync::Mutex::new(Vec::new());
    let collect = |l: &str| lines.lock().unwrap_or_else(|e| e.into_inner()).push(l.to_string());
    let r = match command {
        options::Command::Prepare => sysbench::prepare::prepare(test, &inv.options, driver.as_ref(), &collect),
        options::Command::Prewarm => sysbench::prepare::prewarm(&inv.options, driver.as_ref(), &collect),
        options::Command::Cleanup => sysbench::prepare::cleanup(test, &inv.options, driver.as_ref(), &collect),
        _ => Err(Error::Other("only prepare, prewarm and cleanup are invoked this way".into())),
    };
    if let Some(last) = lines.into_inner().unwrap_or_default().last() {
        log.step(last);
    }
    r
}

impl Executor for SandboxExecutor {
    fn prepare(&mut self, plan: &Plan, index: usize, progress: &mut Progress) -> Result<()> {
        let p = &plan.preparations[index];
        let ibench = super::ibench::is_ibench(&plan.workloads[p.workload]);
        let threads = workload_option(&plan.workloads[p.workload], "tables")
            .and_then(toml::Value::as_integer)
            .unwrap_or(1)
            .clamp(1, 4) as u32;
        match &plan.targets[p.target].kind {
            TargetKind::External { address, user, password_env, database } => {
                let (host, port) = split_address(address)?;
                let password = password_env.as_ref().and_then(|v| std::env::var(v).ok()).unwrap_or_default();
                let connect = connect_args(&host, port, user, &password, database);
                if ibench {
                    // Step l.i0 creates the tables.
                    return Ok(());
                }
                progress.step(&format!("preparing {} on {address}", p.key));
                invoke(&sysbench_args(plan, p.workload, threads, &connect, "cleanup", 0), progress)?;
                invoke(&sysbench_args(plan, p.workload, threads, &connect, "prepare", 0), progress)
            }
            TargetKind::Sandbox { overrides, .. } => {
                let dir = self.work.join(format!("prepare-{index}"));
                crate::owned::remove(&dir)?;
                let init: Vec<&str> = init_time_overrides(overrides)
                    .into_iter()
                    .map(String::as_str)
                    .chain(PREPARE_OVERRIDES.iter().copied())
                    .collect();
                let mut spec = self.sandbox_spec(plan, p.target, &dir, &[])?;
                spec.base_config = None;
                spec.overrides = init.iter().map(|s| s.to_string()).collect();
                progress.step(&format!("preparing {}", p.key));
                let mut sb = Sandbox::start(spec)?;
                let i = sb.info().clone();
                let connect = connect_args("127.0.0.1", i.port, &i.user, &i.password, &i.database);
                if !ibench {
                    invoke(&sysbench_args(plan, p.workload, threads, &connect, "prepare", 0), progress)?;
                }
                sb.stop()?;
                let snap = self.work.join(format!("snapshot-{index}"));
                sb.snapshot(&snap)?;
                crate::owned::remove(&dir)?;
                self.snapshots.insert(index, snap);
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
        if super::ibench::is_ibench(&plan.workloads[plan.cells[run.cell].workload]) {
            return super::ibench::run(self, plan, run, started, progress);
        }
        let mut collector = Collector::default();
        let result = self.measure(plan, run, started, progress, &mut collector);
        match result {
            Ok(r) => RunOutcome::Done(Box::new(r)),
            Err(Error::Interrupted) => RunOutcome::Interrupted { intervals: collector.intervals },
            Err(e) => RunOutcome::Failed { error: e.to_string(), intervals: collector.intervals },
        }
    }
}

impl SandboxExecutor {
    fn measure(
        &mut self,
        plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
        collector: &mut Collector,
    ) -> Result<RunResult> {
        let cell = &plan.cells[run.cell];
        let mut sandbox = None;
        let (connect, server_pid, mut admin_conn) = match &plan.targets[cell.target].kind {
            TargetKind::External { address, user, password_env, database } => {
                let (host, port) = split_address(address)?;
                let password = password_env.as_ref().and_then(|v| std::env::var(v).ok()).unwrap_or_default();
                let conn = admin::connect_tcp(port, user, Some(&password), Some(database))?;
                (connect_args(&host, port, user, &password, database), None, conn)
            }
            TargetKind::Sandbox { .. } => {
                let dir = self.work.join("run");
                let snap = self
                    .snapshots
                    .get(&cell.preparation)
                    .cloned()
                    .ok_or_else(|| Error::Other("no prepared data".into()))?;
                progress.step("restoring the prepared data");
                crate::owned::remove(&dir)?;
                snapshot::restore(&snap, &dir.join("data"))?;
                let spec = self.sandbox_spec(plan, cell.target, &dir, &[])?;
                progress.step("starting the server");
                let sb = Sandbox::start(spec)?;
                let i = sb.info().clone();
                let conn = sb.connect_root()?;
                let pid = sb.pid();
                sandbox = Some(sb);
                (connect_args("127.0.0.1", i.port, &i.user, &i.password, &i.database), Some(pid), conn)
            }
        };
        interrupt::check()?;
        if plan.file.prewarm {
            progress.step("prewarming");
            invoke(&sysbench_args(plan, cell.workload, cell.threads.min(4), &connect, "prewarm", 0), progress)?;
        }
        let variables = admin::global_variables(&mut admin_conn)?;
        let args = sysbench_args(plan, cell.workload, cell.threads, &connect, "run", run.repetition);
        let inv = options::parse(&args)?;
        let test = inv.test.ok_or_else(|| Error::Other("no test".into()))?;
        let version = admin::version(&mut admin_conn)?;
        let scrubbed: Vec<String> = args.iter().map(|a| store::scrub_arg(a)).collect();
        started(StartRun { server_version: version.clone(), command: serde_json::json!({ "sysbench": scrubbed }) })?;
        progress.step(&format!("measuring {} s", plan.file.duration.as_secs()));
        collector.server_pid = server_pid;
        collector.warmup_s = plan.file.warmup.as_secs_f64();
        collector.admin = Some(admin_conn);
        // The same client as `versus sysbench` (the lean one unless the workload's options say otherwise).
        let driver = sysbench::driver_for(&inv.options);
        let outcome = sysbench::run(test, &inv.options, driver, interrupt::flag(), collector);
        let after_status = collector.admin.as_mut().map(server_counters).transpose();
        let server_after = server_pid.map(ProcessSample::read).transpose();
        let client_after = ProcessSample::read_self();
        if let Some(sb) = sandbox.as_mut() {
            sb.check_alive()?;
        }
        let r = outcome?;
        if r.interrupted {
            return Err(Error::Interrupted);
        }
        let status = match (&collector.status_before, after_status?) {
            (Some(b), Some(a)) => status_deltas(b, &a),
            _ => Vec::new(),
        };
        let server = match (&collector.server_before, server_after?) {
            (Some(b), Some(a)) => Some(b.delta_to(&a)),
            _ => None,
        };
        let client = collector.client_before.as_ref().zip(client_after.ok()).map(|(b, a)| b.delta_to(&a));
        let line = ServerLine::from_version_string(&version, &variables);
        let efficiency = Efficiency::compute(r.counts.events, server.as_ref(), client.as_ref(), &status, line.as_ref());
        if let Some(mut sb) = sandbox {
            progress.step("stopping the server");
            sb.stop()?;
        }
        Ok(RunResult {
            summary: summary(&r),
            intervals: std::mem::take(&mut collector.intervals),
            histograms: vec![StoredHistogram {
                kind: "total".into(),
                t_s: None,
                data: store::encode_histogram(&r.histogram)?,
            }],
            variables,
            status_deltas: status,
            efficiency,
        })
    }
}

/// Watches the run: keeps the measured intervals and samples the server and versus when measuring starts.
#[derive(Default)]
struct Collector {
    intervals: Vec<Interval>,
    warmup_s: f64,
    measuring: bool,
    server_pid: Option<u32>,
    admin: Option<mysql::Conn>,
    status_before: Option<Vec<(String, String)>>,
    server_before: Option<ProcessSample>,
    client_before: Option<ProcessSample>,
}

impl Collector {
    fn begin_measuring(&mut self) {
        self.measuring = true;
        self.status_before = self.admin.as_mut().and_then(|c| server_counters(c).ok());
        self.server_before = self.server_pid.and_then(|p| ProcessSample::read(p).ok());
        self.client_before = ProcessSample::read_self().ok();
    }
}

impl Observer for Collector {
    fn started(&mut self) {
        if !self.measuring && self.intervals.is_empty() {
            self.begin_measuring();
        }
    }
    fn warmup_done(&mut self) {
        self.intervals.clear();
        self.begin_measuring();
    }
    fn interval(&mut self, i: &sysbench::Interval) {
        // Intervals that begin inside the warm-up are not part of the measurement (stamps are measured
        // times, so compare with half an interval of slack rather than exactly).
        if i.time - i.duration < self.warmup_s - 0.5 {
            return;
        }
        let c = &i.counts;
        self.intervals.push(Interval {
            t_s: i.time,
            threads: Some(i.threads),
            tps: i.rate(c.events),
            qps: i.rate(c.queries()),
            reads_ps: i.rate(c.reads),
            writes_ps: i.rate(c.writes),
            other_ps: i.rate(c.other),
            latency_p95_us: Some(i.p95_ms * 1000.0),
            latency_p99_us: Some(i.p99_ms * 1000.0),
            latency_max_us: Some(i.latency.max_ns as f64 / 1000.0),
            errors_ps: i.rate(c.errors),
            reconnects_ps: i.rate(c.reconnects),
        });
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

/// The stored summary of a sysbench result (latencies in µs).
pub fn summary(r: &sysbench::RunResult) -> Summary {
    let c = &r.counts;
    let us = |ns: u64| ns as f64 / 1000.0;
    let [ea, es, ta, ts] = r.fairness();
    Summary {
        events: c.events,
        queries: c.queries(),
        reads: c.reads,
        writes: c.writes,
        other: c.other,
        errors: c.errors,
        reconnects: c.reconnects,
        tps: r.rate(c.events),
        qps: r.rate(c.queries()),
        latency_min_us: us(r.latency.min()),
        latency_avg_us: us(r.latency.avg()),
        latency_max_us: us(r.latency.max_ns),
        latency_p95_us: r.percentile_ms(95.0) * 1000.0,
        latency_p99_us: r.percentile_ms(99.0) * 1000.0,
        latency_sum_us: us(r.latency.sum_ns),
        duration_s: r.time_interval.as_secs_f64(),
        fairness_events_avg: Some(ea),
        fairness_events_stddev: Some(es),
        fairness_time_avg_s: Some(ta),
        fairness_time_stddev_s: Some(ts),
    }
}

fn split_address(address: &str) -> Result<(String, u16)> {
    let (h, p) =
        address.rsplit_once(':').ok_or_else(|| Error::Other(format!("address '{address}' is not HOST:PORT")))?;
    let port = p.parse().map_err(|_| Error::Other(format!("address '{address}': '{p}' is not a port")))?;
    Ok((h.to_string(), port))
}
