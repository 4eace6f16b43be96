//! The Insert Benchmark inside experiments.
//!
//! A `[[workloads]] test = "ibench"` entry becomes one workload per step (`ibench/l.i0`, `ibench/l.x`,
//! … `ibench/qp1000`), so every step is a cell of its own and a stored run of its own, and `versus
//! compare` shows one row per step with no special casing. The steps of one sequence (target ×
//! workload × clients × repetition) form a [`Link`] chain: the planner keeps them together and in
//! order, and the executor keeps the server of a sequence running from one step's run to the next. A
//! step whose predecessors did not run on this server (a resumed experiment) first replays them
//! unmeasured, from fresh data. The cleanup is not a cell: it runs, unmeasured, before the first query
//! step.
//!
//! How a step fills a stored run is documented in docs/ibench.md ("Stored runs").

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{Options, Runner, Step, StepKind, StepObserver, StepResult, StepStatus};
use crate::driver::mysql::MysqlDriver;
use crate::driver::{ConnectOptions, Driver, PsMode};
use crate::error::{Error, Result};
use crate::sampler::ServerLine;
use crate::store::{self, Interval, RunResult, StartRun, StoredHistogram, Summary};
use crate::workload::{
    DataShape, Endpoint, Kind, Link, RunContext, RunOutcome, StoredRuns, Timing, Workload, WorkloadDef, WorkloadSection,
};

/// The `test` name of the Insert Benchmark in experiment files.
pub const TEST: &str = "ibench";

/// Option keys the planner adds to each step's workload.
const STEP_KEY: &str = "step";
const SEQUENCE_KEY: &str = "sequence";

pub use super::stored::{HOST_CPU_US, HOST_CTXT_SWITCHES, SERVER_RSS_MAX};

/// The Insert Benchmark as a kind of workload.
pub struct IbenchKind;

/// The registry's entry.
pub static KIND: IbenchKind = IbenchKind;

impl Kind for IbenchKind {
    fn name(&self) -> &'static str {
        TEST
    }

    fn claims(&self, def: &WorkloadDef) -> bool {
        def.test == TEST
    }

    fn check(&self, def: &WorkloadDef) -> std::result::Result<(), String> {
        check(def)
    }

    fn plan(&self, def: &WorkloadDef, _base_dir: &Path) -> std::result::Result<Vec<Arc<dyn Workload>>, String> {
        check(def)?;
        Ok(expand(def)?.into_iter().map(|w| Arc::new(w) as Arc<dyn Workload>).collect())
    }

    fn sections(&self, runs: &StoredRuns<'_>) -> Vec<Arc<dyn WorkloadSection>> {
        super::stored::sections(runs).into_iter().map(|s| Arc::new(s) as Arc<dyn WorkloadSection>).collect()
    }

    fn read_section(&self, key: &str, value: &serde_json::Value) -> Option<Result<Arc<dyn WorkloadSection>, String>> {
        (key == super::section::KEY).then(|| crate::workload::sections::read::<super::stored::Section>(value))
    }
}

/// One measured step of an ibench workload.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWorkload {
    /// The step's entry: the workload as written plus its step and sequence.
    pub def: WorkloadDef,
    /// The step.
    pub step: Step,
    /// The workload's label as written (the chain).
    pub sequence: String,
    /// The options (for one client).
    pub options: Options,
}

/// Replaces an ibench workload by one workload per measured step (`label/step`), in order.
pub fn expand(w: &WorkloadDef) -> std::result::Result<Vec<StepWorkload>, String> {
    let o = options(w, 1)?;
    let label = w.label();
    let mut out = Vec::new();
    for step in o.selected_steps().into_iter().filter(|s| *s != Step::Cleanup) {
        let mut options = w.options.clone();
        options.insert(STEP_KEY.into(), step.name().into());
        options.insert(SEQUENCE_KEY.into(), label.clone().into());
        let def = WorkloadDef {
            name: Some(format!("{label}/{step}")),
            test: TEST.into(),
            script: None,
            threads: w.threads.clone(),
            options,
        };
        out.push(StepWorkload { def, step, sequence: label.clone(), options: o.clone() });
    }
    Ok(out)
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
        o.steps = super::parse_steps(&s, &o.rates).map_err(|e| format!("workload {}: {e}", w.label()))?;
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

/// A rough duration of one step run.
fn estimate(w: &WorkloadDef, clients: u32) -> Duration {
    let (Ok(o), Some(step)) = (options(w, clients), step_of(w)) else { return Duration::from_secs(10) };
    o.step_estimate(step)
}

fn rank(step: Step) -> u64 {
    let (kind, rate, point) = step.rank();
    (u64::from(kind) << 40) | (u64::from(rate) << 1) | u64::from(point)
}

impl Workload for StepWorkload {
    fn kind(&self) -> &'static str {
        TEST
    }

    fn label(&self) -> String {
        self.def.label()
    }

    fn data(&self) -> DataShape {
        // The Insert Benchmark starts from an empty datadir: step l.i0 creates its tables.
        DataShape { key: TEST.into(), rows: 0, empty: true }
    }

    fn stored_options(&self) -> serde_json::Value {
        let mut options = serde_json::to_value(&self.def.options).unwrap_or_default();
        if let Some(o) = options.as_object_mut() {
            o.insert("test".into(), TEST.into());
        }
        options
    }

    fn threads(&self) -> Option<&[u32]> {
        self.def.threads.as_deref()
    }

    fn own_tables(&self, _database: &str) -> Option<crate::workload::OwnTables> {
        // The Insert Benchmark works in a database of its own, whatever the target's.
        Some(crate::workload::OwnTables {
            database: super::DATABASE.into(),
            names: crate::workload::TableNames::Matching { regexp: "^pi[0-9]+$", shown: "pi1…" },
        })
    }

    fn link(&self) -> Option<Link> {
        let last = self.options.selected_steps().into_iter().rfind(|x| *x != Step::Cleanup) == Some(self.step);
        Some(Link { chain: self.sequence.clone(), rank: rank(self.step), last })
    }

    fn plan_note(&self) -> Option<&'static str> {
        Some(
            "ibench workloads: one run per step; the steps of a sequence run in order on one server, from an empty datadir (docs/ibench.md)",
        )
    }

    fn estimate(&self, threads: u32, _timing: &Timing) -> Duration {
        estimate(&self.def, threads)
    }

    fn disk_growth(&self, threads: u32) -> u64 {
        // The rows the step inserts (deletes not counted: an upper bound), about 250 bytes each with
        // the three secondary indexes.
        let (Ok(o), Some(step)) = (options(&self.def, threads), step_of(&self.def)) else { return 0 };
        let inserted = match step.kind() {
            StepKind::Load | StepKind::Write => o.rows_for(step),
            _ => 0,
        };
        inserted.saturating_mul(u64::from(threads)).saturating_mul(250)
    }

    fn prepare(&self, _server: &Endpoint, _fresh: bool, _log: &mut dyn FnMut(&str)) -> Result<()> {
        // Step l.i0 creates the tables.
        Ok(())
    }

    fn run(&self, ctx: RunContext<'_>) -> RunOutcome {
        match run_step(self, ctx) {
            Ok(o) => o,
            Err(Error::Interrupted) => RunOutcome::Interrupted { intervals: Vec::new() },
            Err(e) => RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
        }
    }
}

/// The state of a sequence on its server: the runner and the steps it ran.
struct Sequence {
    runner: Runner,
    ran: Vec<Step>,
    command: serde_json::Value,
}

/// Forwards the cleanup's notes to the experiment's progress.
struct Forward<'a>(&'a mut dyn crate::workload::RunObserver);

impl StepObserver for Forward<'_> {
    fn note(&mut self, step: Step, text: &str) {
        self.0.note(&format!("{step}: {text}"));
    }
}

/// How the Insert Benchmark connects: TCP as the benchmark user, no default database (the benchmark
/// creates and uses `ib`), statements sent as text.
pub fn connect_options(server: &Endpoint) -> ConnectOptions {
    ConnectOptions {
        hosts: vec![server.host.clone()],
        ports: vec![server.port],
        user: server.user.clone(),
        password: server.password.clone(),
        db: String::new(),
        ps_mode: PsMode::Disable,
        init: server.init.clone(),
        ..ConnectOptions::default()
    }
}

/// [`connect_options`] for a sandbox.
pub fn sandbox_connect_options(i: &crate::server::SandboxInfo) -> ConnectOptions {
    connect_options(&Endpoint {
        host: "127.0.0.1".into(),
        port: i.port,
        user: i.user.clone(),
        password: i.password.clone(),
        database: String::new(),
        init: Vec::new(),
    })
}

fn run_step(w: &StepWorkload, ctx: RunContext<'_>) -> Result<RunOutcome> {
    let RunContext { server, variables, settings, probe, session, observer } = ctx;
    let step = w.step;
    let mut o = options(&w.def, settings.threads).map_err(Error::Other)?;
    if !w.def.options.keys().any(|k| key(k) == "seed") {
        // The same rows for every target of a repetition, different ones per repetition.
        o.seed = settings.run_seed();
    }
    if session.get_mut::<Sequence>().is_none() {
        let connect = connect_options(server);
        let driver: Arc<dyn Driver> = Arc::new(MysqlDriver::new(connect.clone()));
        let runner = Runner::new(&o, driver, crate::interrupt::flag(), Some(settings.target))?;
        let command = serde_json::json!({ "ibench": o, "connect": { "host": connect.hosts, "port": connect.ports, "user": connect.user } });
        probe.check_alive().map_err(Error::Other)?;
        session.set(Sequence { runner, ran: Vec::new(), command });
    }
    let Some(s) = session.get_mut::<Sequence>() else { return Err(Error::Other("no ibench session".into())) };
    for before in o.selected_steps().into_iter().take_while(|x| *x != step) {
        if s.ran.contains(&before) || s.runner.ended().is_some() {
            continue;
        }
        observer.note(&if before == Step::Cleanup {
            "cleanup before the query steps".to_string()
        } else {
            format!("replaying {before} (unmeasured) to reach the state of {step}")
        });
        s.runner.step(before, probe, &mut Forward(observer));
        s.ran.push(before);
    }
    if let Some(why) = s.runner.ended() {
        return Ok(RunOutcome::Failed { error: format!("{step} skipped: {why}"), intervals: Vec::new() });
    }
    crate::interrupt::check()?;
    let version = s.runner.server_version().unwrap_or_default().to_string();
    let mut command = s.command.clone();
    command["ibench"]["steps"] = serde_json::json!([step.name()]);
    observer.started(StartRun { server_version: version.clone(), command })?;
    observer.note(&format!("measuring {step}"));
    // The whole step is its measured time: profiled from its first statement to its last.
    let mut profiling =
        settings.profile_hz.map(|hz| crate::profile::Sampling::new(hz).with_waits(settings.profile_waits));
    if let (Some(p), Some(pid)) = (profiling.as_mut(), probe.server_pid()) {
        p.begin(pid);
    }
    let result = s.runner.step(step, probe, &mut Forward(observer)).cloned();
    let profiles = profiling.filter(|_| !crate::interrupt::is_interrupted()).map(crate::profile::Sampling::finish_all);
    s.ran.push(step);
    let Some(r) = result else {
        return Ok(RunOutcome::Failed { error: format!("{step} was skipped"), intervals: Vec::new() });
    };
    let intervals = intervals(&r);
    Ok(match r.status {
        StepStatus::Done => {
            let mut stored = run_result(&r, &version, variables.to_vec())?;
            if let Some((cpu, waits)) = profiles {
                // Per operation of the step (an inserted row, or a query), as its tps counts them.
                let per_op = |p: crate::profile::Profile| crate::profile::Profile { transactions: r.operations, ..p };
                stored.profile = Some(per_op(cpu));
                stored.waits = waits.map(per_op);
            }
            RunOutcome::Done(Box::new(stored))
        }
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
        status_ends: r.status_ends.clone(),
        profile: None,
        waits: None,
        replica_seconds: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ibench_entry_expands_into_its_measured_steps_with_their_options() {
        let def: WorkloadDef = toml::from_str(
            r#"
test = "ibench"
options = { rows = 1000, rows-i1 = 100, rows-i2 = 10, query-seconds = 2, rates = [100, 200], steps = "l.i0,l.x,cleanup,qr100,qp200" }
"#,
        )
        .unwrap();
        let steps = expand(&def).unwrap();
        let labels: Vec<String> = steps.iter().map(|w| w.label()).collect();
        assert_eq!(labels, ["ibench/l.i0", "ibench/l.x", "ibench/qr100", "ibench/qp200"]);
        let w = &steps[2].def;
        assert_eq!((step_of(w), sequence_of(w)), (Some(Step::Query { point: false, rate: 100 }), Some("ibench")));
        let o = options(w, 2).unwrap();
        assert_eq!((o.clients, o.rows_load, o.rates.clone(), o.query_seconds), (2, 1000, vec![100, 200], 2));
        assert!(o.selected_steps().contains(&Step::Cleanup), "the cleanup runs, but is not a cell");
        let ranks: Vec<u64> = steps.iter().filter_map(|s| s.link()).map(|l| l.rank).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "ranks follow the step order: {ranks:?}");
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
