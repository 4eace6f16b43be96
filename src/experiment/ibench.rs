//! The Insert Benchmark inside experiments.
//!
//! A `[[workloads]] test = "ibench"` entry becomes one workload per step (`ibench/l.i0`, `ibench/l.x`,
//! … `ibench/qp1000`), so every step is a cell of its own and a stored run of its own, and `versus
//! compare` shows one row per step with no special casing. The steps of one sequence (target ×
//! workload × clients × repetition) are kept together and in order by the planner; the executor keeps
//! the server of a sequence running from one step's run to the next. A step whose predecessors did not
//! run in this invocation (a resumed experiment) first replays them unmeasured, from fresh data. The
//! cleanup is not a cell: it runs, unmeasured, before the first query step.
//!
//! How a step fills a stored run is documented in docs/ibench.md ("Stored runs").

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::mysql::MysqlDriver;
use crate::driver::{ConnectOptions, Driver, PsMode};
use crate::error::{Error, Result};
use crate::experiment::plan::{Cell, Plan, PlannedRun, TargetKind};
use crate::experiment::progress::Progress;
use crate::experiment::run::RunOutcome;
use crate::experiment::sandbox_executor::SandboxExecutor;
use crate::experiment::spec::WorkloadDef;
use crate::sampler::ServerLine;
use crate::server::{Sandbox, admin, snapshot};
use crate::store::{self, Interval, RunResult, StartRun, StoredHistogram, Summary};
use crate::workload::ibench::{self, Observer, Options, Probe, Runner, Step, StepKind, StepResult, StepStatus};

/// The `test` name of the Insert Benchmark in experiment files.
pub const TEST: &str = "ibench";

/// Option keys the planner adds to each step's workload.
const STEP_KEY: &str = "step";
const SEQUENCE_KEY: &str = "sequence";

/// Status-delta names under which a step stores what versus measured itself (not server counters).
pub const HOST_CPU_US: &str = "versus.host_cpu_us";
/// Host context switches over the step.
pub const HOST_CTXT_SWITCHES: &str = "versus.host_ctxt_switches";
/// Largest server RSS during the step, bytes.
pub const SERVER_RSS_MAX: &str = "versus.server_rss_max_bytes";

/// True for an Insert Benchmark workload (before or after expansion).
pub fn is_ibench(w: &WorkloadDef) -> bool {
    w.test == TEST
}

fn key(k: &str) -> String {
    k.replace('-', "_")
}

/// The run options of an ibench workload for `clients` clients (the cell's threads).
pub fn options(w: &WorkloadDef, clients: u32) -> std::result::Result<Options, String> {
    let mut o = Options { clients, ..Options::default() };
    let what = |k: &str, want: &str| format!("workload {}: options.{k} must be {want}", w.label());
    let mut steps: Option<String> = None;
    for (k, v) in &w.options {
        let int = || v.as_integer().ok_or_else(|| what(k, "an integer"));
        let count = || int().and_then(|i| u64::try_from(i).map_err(|_| what(k, "a row count of at least 0")));
        let text = || v.as_str().map(str::to_string).ok_or_else(|| what(k, "a string"));
        let flag = || v.as_bool().ok_or_else(|| what(k, "true or false"));
        match key(k).as_str() {
            "rows" | "rows_load" => o.rows_load = count()?,
            "rows_i1" | "rows_write1" => o.rows_write1 = count()?,
            "rows_i2" | "rows_write2" => o.rows_write2 = count()?,
            "rows_index" => o.rows_index = count()?,
            "query_seconds" => o.query_seconds = int()?,
            "rates" => {
                o.rates = match v {
                    toml::Value::Array(a) => a
                        .iter()
                        .map(|x| x.as_integer().ok_or_else(|| what(k, "integers")))
                        .collect::<std::result::Result<_, _>>()?,
                    toml::Value::Integer(i) => vec![*i],
                    _ => return Err(what(k, "a list of inserts/s per client, e.g. [100, 500, 1000]")),
                }
            }
            "steps" => {
                steps = Some(match v {
                    toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(","),
                    _ => text()?,
                })
            }
            "seed" => o.seed = count()?,
            "cleanup_seconds" => o.cleanup_seconds = Some(int()?),
            "shared_table" => o.shared_table = flag()?,
            "rpc_load" => o.rpc_load = int()?,
            "rpc_write1" => o.rpc_write1 = int()?,
            "rpc_write2" => o.rpc_write2 = int()?,
            "rpc_query" => o.rpc_query = int()?,
            "engine" => o.engine = text()?,
            "engine_options" => o.engine_options = text()?,
            "data_length_min" => o.data_length_min = int()?,
            "data_length_max" => o.data_length_max = int()?,
            "data_random_pct" => o.data_random_pct = int()?,
            "cashregisters" => o.cashregisters = int()?,
            "products" => o.products = int()?,
            "customers" => o.customers = int()?,
            "max_price" => o.max_price = int()?,
            "rows_per_query" => o.rows_per_query = int()?,
            "resync_get_min" => o.resync_get_min = int()?,
            "force_index" => o.force_index = flag()?,
            "count_rows" => o.count_rows = flag()?,
            STEP_KEY | SEQUENCE_KEY => {}
            "clients" => return Err(format!("workload {}: set the clients with threads = [...]", w.label())),
            other => {
                return Err(format!("workload {}: unknown ibench option '{other}' (see docs/ibench.md)", w.label()));
            }
        }
    }
    let check = |o: &Options| {
        o.validate().map_err(|e| format!("workload {}: {}", w.label(), e.to_string().trim_start_matches("--")))
    };
    check(&o)?;
    if let Some(s) = steps {
        o.steps = ibench::parse_steps(&s, &o.rates).map_err(|e| format!("workload {}: {e}", w.label()))?;
        check(&o)?;
    }
    Ok(o)
}

/// Checks an ibench workload of an experiment file.
pub fn check(w: &WorkloadDef) -> std::result::Result<(), String> {
    if w.options.keys().any(|k| key(k) == STEP_KEY || key(k) == SEQUENCE_KEY) {
        return Err(format!(
            "workload {}: choose the steps with options.steps, e.g. steps = \"load,qr100\"",
            w.label()
        ));
    }
    options(w, 1).map(|_| ())
}

/// The step of an expanded workload.
pub fn step_of(w: &WorkloadDef) -> Option<Step> {
    w.options.get(STEP_KEY)?.as_str()?.parse().ok()
}

/// The sequence (the original workload's label) of an expanded workload.
pub fn sequence_of(w: &WorkloadDef) -> Option<&str> {
    w.options.get(SEQUENCE_KEY)?.as_str()
}

/// Replaces every ibench workload by one workload per measured step (`label/step`), in order.
pub fn expand(workloads: &[WorkloadDef]) -> std::result::Result<Vec<WorkloadDef>, String> {
    let mut out = Vec::new();
    for w in workloads {
        if !is_ibench(w) {
            out.push(w.clone());
            continue;
        }
        let o = options(w, 1)?;
        let label = w.label();
        for step in o.selected_steps().into_iter().filter(|s| *s != Step::Cleanup) {
            let mut options = w.options.clone();
            options.insert(STEP_KEY.into(), step.name().into());
            options.insert(SEQUENCE_KEY.into(), label.clone().into());
            out.push(WorkloadDef {
                name: Some(format!("{label}/{step}")),
                test: TEST.into(),
                threads: w.threads.clone(),
                options,
            });
        }
    }
    Ok(out)
}

/// Reorders runs so that the steps of each sequence (target × workload × clients × repetition) run
/// back to back, in step order, where the first of them was planned.
pub fn group_runs(runs: &[PlannedRun], cells: &[Cell], workloads: &[WorkloadDef]) -> Vec<PlannedRun> {
    let seq = |r: &PlannedRun| {
        let c = &cells[r.cell];
        sequence_of(&workloads[c.workload]).map(|s| (c.target, s.to_string(), c.threads, r.repetition))
    };
    let rank = |r: &PlannedRun| step_of(&workloads[cells[r.cell].workload]).map(Step::rank);
    let mut out = Vec::with_capacity(runs.len());
    let mut emitted = HashSet::new();
    for r in runs {
        match seq(r) {
            None => out.push(*r),
            Some(k) if emitted.insert(k.clone()) => {
                let mut group: Vec<PlannedRun> = runs.iter().filter(|x| seq(x).as_ref() == Some(&k)).copied().collect();
                group.sort_by_key(|x| rank(x));
                out.extend(group);
            }
            Some(_) => {}
        }
    }
    out
}

/// A rough duration of one step run.
pub fn estimate(w: &WorkloadDef, clients: u32) -> Duration {
    let (Ok(o), Some(step)) = (options(w, clients), step_of(w)) else { return Duration::from_secs(10) };
    let rows = o.rows_for(step) * u64::from(clients);
    Duration::from_secs(match step.kind() {
        StepKind::Load => 2 + rows / 50_000,
        StepKind::Index => 2 + o.rows_load * u64::from(clients) / 200_000,
        StepKind::Write => 2 + rows / 10_000,
        StepKind::Cleanup => o.cleanup_wait(),
        StepKind::Query => o.query_seconds.max(1) as u64 + if step == first_query(&o) { o.cleanup_wait() } else { 0 },
    })
}

fn first_query(o: &Options) -> Step {
    o.selected_steps().into_iter().find(|s| s.is_query()).unwrap_or(Step::Cleanup)
}

/// Which sequence a session serves.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SessionKey {
    target: usize,
    sequence: String,
    threads: u32,
    repetition: u32,
}

/// A server kept running through the steps of one sequence.
struct Session {
    key: SessionKey,
    sandbox: Option<Sandbox>,
    admin: Option<mysql::Conn>,
    runner: Runner,
    ran: Vec<Step>,
    variables: Vec<(String, String)>,
    command: serde_json::Value,
}

/// The executor's ibench state: the session of the sequence being run.
#[derive(Default)]
pub struct Sessions {
    current: Option<Session>,
}

/// The probe of a session: the sandbox's process and an admin connection.
struct SessionProbe<'a> {
    sandbox: Option<&'a mut Sandbox>,
    admin: Option<&'a mut mysql::Conn>,
}

impl Probe for SessionProbe<'_> {
    fn server_pid(&mut self) -> Option<u32> {
        self.sandbox.as_ref().map(|s| s.pid())
    }
    fn global_status(&mut self) -> Option<Vec<(String, String)>> {
        super::sandbox_executor::server_counters(self.admin.as_mut()?).ok()
    }
    fn check_alive(&mut self) -> std::result::Result<(), String> {
        match self.sandbox.as_mut() {
            Some(s) => s.check_alive().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// Forwards the cleanup's notes and step ends to the experiment's progress.
struct Forward<'a>(&'a mut Progress);

impl Observer for Forward<'_> {
    fn note(&mut self, step: Step, text: &str) {
        self.0.step(&format!("{step}: {text}"));
    }
}

fn open_session(
    ex: &SandboxExecutor,
    plan: &Plan,
    cell: &Cell,
    key: SessionKey,
    o: &Options,
    progress: &mut Progress,
) -> Result<Session> {
    let target = &plan.targets[cell.target];
    let (mut sandbox, connect, mut admin) = match &target.kind {
        TargetKind::External { address, user, password_env, .. } => {
            let (host, port) = address
                .rsplit_once(':')
                .ok_or_else(|| Error::Other(format!("address '{address}' is not HOST:PORT")))?;
            let port: u16 =
                port.parse().map_err(|_| Error::Other(format!("address '{address}': '{port}' is not a port")))?;
            let password = password_env.as_ref().and_then(|v| std::env::var(v).ok()).unwrap_or_default();
            let c = ConnectOptions {
                hosts: vec![host.into()],
                ports: vec![port],
                user: user.clone(),
                password,
                db: String::new(),
                ps_mode: PsMode::Disable,
                ..ConnectOptions::default()
            };
            let admin = admin::connect_tcp(port, user, Some(&c.password), None).ok();
            (None, c, admin)
        }
        TargetKind::Sandbox { .. } => {
            let dir = ex.work_dir().join("run");
            let snap =
                ex.snapshot_of(cell.preparation).ok_or_else(|| Error::Other("no prepared data directory".into()))?;
            progress.step("restoring a fresh data directory");
            crate::owned::remove(&dir)?;
            snapshot::restore(&snap, &dir.join("data"))?;
            progress.step("starting the server");
            let sb = Sandbox::start(ex.spec_for(plan, cell.target, &dir)?)?;
            let i = sb.info().clone();
            let c = sandbox_connect_options(&i);
            let admin = sb.connect_root().ok();
            (Some(sb), c, admin)
        }
    };
    let variables = admin.as_mut().and_then(|c| admin::global_variables(c).ok()).unwrap_or_default();
    let driver: Arc<dyn Driver> = Arc::new(MysqlDriver::new(connect.clone()));
    let runner = Runner::new(o, driver, crate::interrupt::flag(), Some(&target.label))?;
    let command = serde_json::json!({ "ibench": o, "connect": { "host": connect.hosts, "port": connect.ports, "user": connect.user } });
    if let Some(sb) = sandbox.as_mut() {
        sb.check_alive()?;
    }
    Ok(Session { key, sandbox, admin, runner, ran: Vec::new(), variables, command })
}

/// Runs one step of an ibench sequence for the executor.
pub fn run(
    ex: &mut SandboxExecutor,
    plan: &Plan,
    run: &PlannedRun,
    started: &mut dyn FnMut(StartRun) -> Result<()>,
    progress: &mut Progress,
) -> RunOutcome {
    match run_step(ex, plan, run, started, progress) {
        Ok(o) => o,
        Err(Error::Interrupted) => RunOutcome::Interrupted { intervals: Vec::new() },
        Err(e) => RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
    }
}

fn run_step(
    ex: &mut SandboxExecutor,
    plan: &Plan,
    run: &PlannedRun,
    started: &mut dyn FnMut(StartRun) -> Result<()>,
    progress: &mut Progress,
) -> Result<RunOutcome> {
    let cell = &plan.cells[run.cell];
    let w = &plan.workloads[cell.workload];
    let (Some(step), Some(sequence)) = (step_of(w), sequence_of(w)) else {
        return Err(Error::Other(format!("workload {} is not an expanded ibench step", w.label())));
    };
    let mut o = options(w, cell.threads).map_err(Error::Other)?;
    if !w.options.keys().any(|k| key(k) == "seed") {
        // The same rows for every target of a repetition, different ones per repetition.
        o.seed = plan.seed.wrapping_mul(1000).wrapping_add(u64::from(run.repetition));
    }
    let key = SessionKey {
        target: cell.target,
        sequence: sequence.to_string(),
        threads: cell.threads,
        repetition: run.repetition,
    };
    let reusable = ex.ibench_sessions().current.as_ref().is_some_and(|s| s.key == key && !s.ran.contains(&step));
    if !reusable {
        ex.ibench_sessions().current = None;
        let s = open_session(ex, plan, cell, key, &o, progress)?;
        ex.ibench_sessions().current = Some(s);
    }
    let Some(s) = ex.ibench_sessions().current.as_mut() else { return Err(Error::Other("no ibench session".into())) };
    let mut probe = SessionProbe { sandbox: s.sandbox.as_mut(), admin: s.admin.as_mut() };
    for before in o.selected_steps().into_iter().take_while(|x| *x != step) {
        if s.ran.contains(&before) || s.runner.ended().is_some() {
            continue;
        }
        progress.step(&if before == Step::Cleanup {
            "cleanup before the query steps".to_string()
        } else {
            format!("replaying {before} (unmeasured) to reach the state of {step}")
        });
        s.runner.step(before, &mut probe, &mut Forward(progress));
        s.ran.push(before);
    }
    if let Some(why) = s.runner.ended() {
        return Ok(RunOutcome::Failed { error: format!("{step} skipped: {why}"), intervals: Vec::new() });
    }
    crate::interrupt::check()?;
    let version = s.runner.server_version().unwrap_or_default().to_string();
    let mut command = s.command.clone();
    command["ibench"]["steps"] = serde_json::json!([step.name()]);
    started(StartRun { server_version: version.clone(), command })?;
    progress.step(&format!("measuring {step}"));
    let result = s.runner.step(step, &mut probe, &mut Forward(progress)).cloned();
    s.ran.push(step);
    let last = o.selected_steps().into_iter().rfind(|x| *x != Step::Cleanup) == Some(step);
    let variables = s.variables.clone();
    if (last || result.as_ref().is_none_or(|r| r.status != StepStatus::Done))
        && let Some(mut session) = ex.ibench_sessions().current.take()
        && let Some(sb) = session.sandbox.as_mut()
    {
        progress.step("stopping the server");
        let _ = sb.stop();
    }
    let Some(r) = result else {
        return Ok(RunOutcome::Failed { error: format!("{step} was skipped"), intervals: Vec::new() });
    };
    let intervals = intervals(&r);
    Ok(match r.status {
        StepStatus::Done => RunOutcome::Done(Box::new(run_result(&r, &version, variables)?)),
        StepStatus::Failed => {
            RunOutcome::Failed { error: r.error.clone().unwrap_or_else(|| "failed".into()), intervals }
        }
        StepStatus::Interrupted => RunOutcome::Interrupted { intervals },
    })
}

/// A step's intervals in the store's form: `tps` is the step's operation rate (inserted rows/s, or
/// queries/s in query steps), `qps` all statements/s, `reads_ps` queries/s, `writes_ps` inserted rows/s,
/// `other_ps` deleted rows/s; latencies are those of the step's operation.
pub fn intervals(r: &StepResult) -> Vec<Interval> {
    let mut retries = 0;
    r.intervals
        .iter()
        .map(|l| {
            let total = l.retry_i + l.retry_d + l.retry_q;
            let new = total - retries.min(total);
            retries = total;
            let query = r.kind == StepKind::Query;
            Interval {
                t_s: l.t_sec,
                threads: Some(r.clients),
                tps: if query { l.i_qps } else { l.i_ips },
                qps: l.statements_ps,
                reads_ps: l.i_qps,
                writes_ps: l.i_ips,
                other_ps: l.i_dps,
                latency_p95_us: Some(l.p95_us as f64),
                latency_p99_us: Some(l.p99_us as f64),
                latency_max_us: Some((if query { l.max_q_us } else { l.max_i_us }) as f64),
                errors_ps: if l.i_sec > 0.0 { new as f64 / l.i_sec } else { 0.0 },
                reconnects_ps: 0.0,
            }
        })
        .collect()
}

/// A finished step as a stored run: `events` are the step's operations and `tps` their rate (the
/// number of the reference's summary table), `reads` queries, `writes` inserted rows, `other` deleted
/// rows, `queries` statements; the latencies are those of the step's operation; histograms `total`
/// (the operation) and `insert`/`delete`/`query`; host CPU, host context switches and the largest
/// server RSS as `versus.*` status deltas.
pub fn run_result(r: &StepResult, version: &str, variables: Vec<(String, String)>) -> Result<RunResult> {
    let statements = r.insert_statements + r.delete_statements + r.queries;
    let lat = r.latency_of(r.primary_kind());
    let mut histograms = Vec::new();
    for (kind, h) in &r.histograms {
        if *kind == r.primary_kind() {
            histograms.push(StoredHistogram { kind: "total".into(), t_s: None, data: store::encode_histogram(h)? });
        }
        histograms.push(StoredHistogram { kind: kind.name().into(), t_s: None, data: store::encode_histogram(h)? });
    }
    let mut status = r.status_deltas.clone();
    if let Some((cpu, cs)) = r.host_totals {
        status.push((HOST_CPU_US.into(), cpu.round() as i64));
        status.push((HOST_CTXT_SWITCHES.into(), cs as i64));
    }
    if let Some(rss) = r.efficiency.server_rss_max_bytes {
        status.push((SERVER_RSS_MAX.into(), rss as i64));
    }
    Ok(RunResult {
        summary: Summary {
            events: r.operations,
            queries: statements,
            reads: r.queries,
            writes: r.inserted_rows,
            other: r.deleted_rows,
            errors: r.retries.insert + r.retries.delete + r.retries.query,
            reconnects: 0,
            tps: r.rate,
            qps: if r.seconds > 0.0 { statements as f64 / r.seconds } else { 0.0 },
            latency_min_us: lat.map_or(0.0, |l| l.min_us as f64),
            latency_avg_us: lat.map_or(0.0, |l| l.avg_us),
            latency_max_us: lat.map_or(0.0, |l| l.max_us as f64),
            latency_p95_us: lat.map_or(0.0, |l| l.p95_us as f64),
            latency_p99_us: lat.map_or(0.0, |l| l.p99_us as f64),
            latency_sum_us: lat.map_or(0.0, |l| l.avg_us * l.count as f64),
            duration_s: r.seconds,
            fairness_events_avg: None,
            fairness_events_stddev: None,
            fairness_time_avg_s: None,
            fairness_time_stddev_s: None,
        },
        intervals: intervals(r),
        histograms,
        efficiency: r.store_efficiency.with_counters(
            r.operations,
            &r.status_deltas,
            ServerLine::from_version_string(version, &variables).as_ref(),
        ),
        variables,
        status_deltas: status,
    })
}

/// How the Insert Benchmark connects to a sandbox: TCP on 127.0.0.1 as the benchmark user, no default
/// database (the benchmark creates and uses `ib`), statements sent as text.
pub fn sandbox_connect_options(i: &crate::server::SandboxInfo) -> ConnectOptions {
    ConnectOptions {
        hosts: vec!["127.0.0.1".into()],
        ports: vec![i.port],
        user: i.user.clone(),
        password: i.password.clone(),
        db: String::new(),
        ps_mode: PsMode::Disable,
        ..ConnectOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::spec::ExperimentFile;
    use std::path::Path;

    const FILE: &str = r#"
name = "ib"
builds = ["a", "b"]
threads = [1, 2]
repetitions = 2
[[workloads]]
test = "oltp_point_select"
[[workloads]]
test = "ibench"
options = { rows = 1000, rows-i1 = 100, rows-i2 = 10, query-seconds = 2, rates = [100, 200], steps = "l.i0,l.x,cleanup,qr100,qp200" }
"#;

    fn plan(text: &str) -> Plan {
        Plan::new(&ExperimentFile::parse(text).unwrap(), Path::new("/")).unwrap()
    }

    #[test]
    fn an_ibench_workload_becomes_one_cell_per_measured_step() {
        let p = plan(FILE);
        let labels: Vec<String> = p.workloads.iter().map(|w| w.label()).collect();
        assert_eq!(labels, ["oltp_point_select", "ibench/l.i0", "ibench/l.x", "ibench/qr100", "ibench/qp200"]);
        assert_eq!(p.cells.len(), 2 * 5 * 2);
        let w = &p.workloads[3];
        assert_eq!((step_of(w), sequence_of(w)), (Some(Step::Query { point: false, rate: 100 }), Some("ibench")));
        let o = options(w, 2).unwrap();
        assert_eq!((o.clients, o.rows_load, o.rates.clone(), o.query_seconds), (2, 1000, vec![100, 200], 2));
        assert!(o.selected_steps().contains(&Step::Cleanup), "the cleanup runs, but is not a cell");
        let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"build=a;ibench") && keys.contains(&"build=b;ibench"), "{keys:?}");
    }

    #[test]
    fn the_steps_of_a_sequence_run_back_to_back_in_order() {
        let p = plan(FILE);
        let mut i = 0;
        while i < p.runs.len() {
            let r = p.runs[i];
            let c = &p.cells[r.cell];
            let w = &p.workloads[c.workload];
            if step_of(w).is_none() {
                i += 1;
                continue;
            }
            let names: Vec<String> = p.runs[i..i + 4]
                .iter()
                .map(|x| {
                    let cx = &p.cells[x.cell];
                    assert_eq!((cx.target, cx.threads, x.repetition), (c.target, c.threads, r.repetition));
                    step_of(&p.workloads[cx.workload]).map(|s| s.name()).unwrap_or_default()
                })
                .collect();
            assert_eq!(names, ["l.i0", "l.x", "qr100", "qp200"]);
            i += 4;
        }
        assert_eq!(p.runs.len(), 2 * 2 * 2 * 5);
    }

    #[test]
    fn bad_ibench_options_are_refused_when_the_file_is_read() {
        let cases = [
            ("rates = [100, 200]", "rates = [0]", "rates: 0 is out of range"),
            ("query-seconds = 2", "query-seconds = -1", "query-seconds: -1 is out of range"),
            ("rows = 1000", "rows = 1000, rpc-load = 0", "rpc-load: 0 is out of range"),
            ("rows = 1000", "rows = 1000, clients = 3", "set the clients with threads"),
            ("rows = 1000", "rows = 1000, colour = 3", "unknown ibench option 'colour'"),
            ("steps = \"l.i0,l.x,cleanup,qr100,qp200\"", "steps = \"qr300\"", "step qr300 needs rate 300"),
            ("rows = 1000", "rows = 1000, step = \"l.i0\"", "choose the steps with options.steps"),
        ];
        for (from, to, want) in cases {
            let err = ExperimentFile::parse(&FILE.replace(from, to)).unwrap_err();
            assert!(err.contains(want) && err.contains("workload ibench"), "{to}: {err}");
        }
    }

    #[test]
    fn a_step_is_stored_with_its_rate_as_tps_and_rows_as_writes() {
        let o = Options { query_seconds: 2, rates: vec![100], ..Options::default() };
        let qr = Step::Query { point: false, rate: 100 };
        let mut r = crate::workload::ibench::steps::empty_result(&o, qr);
        r.status = StepStatus::Done;
        (r.seconds, r.inserted_rows, r.deleted_rows, r.queries, r.insert_statements, r.delete_statements) =
            (2.0, 200, 200, 5000, 4, 4);
        (r.operations, r.rate) = (5000, 2500.0);
        r.host_totals = Some((1.5e6, 900));
        r.efficiency.server_rss_max_bytes = Some(1 << 30);
        let mut h = crate::workload::sysbench::stats::new_histogram();
        h.record(150).unwrap();
        r.histograms = vec![(crate::workload::ibench::stats::Kind::Query, h)];
        let s = run_result(&r, "10.11.19-MariaDB", vec![]).unwrap();
        assert_eq!(
            (s.summary.events, s.summary.tps, s.summary.reads, s.summary.writes, s.summary.other),
            (5000, 2500.0, 5000, 200, 200)
        );
        assert_eq!(s.summary.queries, 5008);
        let kinds: Vec<&str> = s.histograms.iter().map(|h| h.kind.as_str()).collect();
        assert_eq!(kinds, ["total", "query"]);
        let get = |n: &str| s.status_deltas.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(
            (get(HOST_CPU_US), get(HOST_CTXT_SWITCHES), get(SERVER_RSS_MAX)),
            (Some(1_500_000), Some(900), Some(1 << 30))
        );
    }
}
