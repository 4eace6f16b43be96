//! sysbench's tests inside experiments: `[[workloads]] test = "oltp_read_write"` with sysbench's
//! options. The options are checked when the plan is made, by the parser `versus sysbench` uses
//! ([`options::from_values`]); each run's typed options are the workload's plus the experiment's
//! settings (threads, time, warm-up, 1-s intervals, the seed) and the server's address. The command
//! line stored with a run is rendered from the same values, for people.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::options::{self, Command, Options, Test};
use super::runner::Source;
use super::{Interval as SysbenchInterval, IntervalObserver};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::sampler::client_load::{ClientLoad, allowed_cpus};
use crate::sampler::{Efficiency, HostCpu, ProcessSample, ServerLine, status_deltas, status_ends};
use crate::store::{self, Interval, RunResult, StartRun, StoredHistogram, Summary};
use crate::workload::{
    DataShape, Endpoint, Kind, RunContext, RunOutcome, RunSettings, ServerProbe, Timing, Workload, WorkloadDef,
};

/// The sysbench options that decide what `prepare` creates.
const SHAPE_OPTIONS: &[&str] =
    &["tables", "table_size", "auto_inc", "secondary", "create_secondary", "mysql_storage_engine"];

/// sysbench's tests as a kind of workload.
pub struct SysbenchKind;

/// The registry's entry.
pub static KIND: SysbenchKind = SysbenchKind;

impl Kind for SysbenchKind {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    /// Every named test that no other kind claims: an unknown name gets sysbench's own message.
    fn claims(&self, def: &WorkloadDef) -> bool {
        def.script.is_none() && !def.test.is_empty()
    }

    fn plan(&self, def: &WorkloadDef, _base_dir: &Path) -> std::result::Result<Vec<Arc<dyn Workload>>, String> {
        Ok(vec![Arc::new(SysbenchWorkload::new(def)?)])
    }

    fn stored_command(&self, run: &store::RunDetail) -> Option<String> {
        let words: Vec<&str> =
            run.command.as_ref()?.get("sysbench")?.as_array()?.iter().filter_map(|w| w.as_str()).collect();
        Some(format!("versus sysbench {}", words.join(" ")))
    }
}

/// One sysbench test with its options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SysbenchWorkload {
    def: WorkloadDef,
    test: Test,
}

impl SysbenchWorkload {
    /// Checks the entry's options with `versus sysbench`'s parser.
    pub fn new(def: &WorkloadDef) -> std::result::Result<SysbenchWorkload, String> {
        let label = def.label();
        let test = Test::parse(&def.test).map_err(|e| format!("workload {label}: {e}"))?;
        let w = SysbenchWorkload { def: def.clone(), test };
        if def.option("latency_log").or_else(|| def.option("latency-log")).is_some() {
            return Err(format!(
                "workload {label}: latency-log is for `versus sysbench` runs; an experiment stores each run's latency histogram"
            ));
        }
        let placeholder = Endpoint {
            host: "127.0.0.1".into(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            database: String::new(),
            init: Vec::new(),
        };
        let settings = RunSettings {
            target: "",
            threads: 1,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            repetition: 1,
            seed: 1,
            profile_hz: None,
            profile_waits: false,
        };
        // Checked at one thread, or as many as the clients share (each cell's threads: threads_problem).
        let threads = w.int("clients", 1).clamp(1, 1024) as u32;
        w.options(&w.pairs(threads, &placeholder, Command::Run, Some(&settings)), Command::Run, &[])
            .map_err(|e| format!("workload {label}: {e}"))?;
        Ok(w)
    }

    /// The option names and values of one invocation, in command-line order (a later value of a name
    /// wins): the workload's options as written, the threads, the run's settings, the connection.
    fn pairs(
        &self,
        threads: u32,
        server: &Endpoint,
        command: Command,
        run: Option<&RunSettings<'_>>,
    ) -> Vec<(String, String)> {
        // Preparing, prewarming and cleaning up run in this process: the clients are the run's.
        let split = |k: &str| matches!(k.replace('-', "_").as_str(), "clients" | "clients_on");
        let mut out: Vec<(String, String)> = self
            .def
            .options
            .iter()
            .filter(|(k, _)| command == Command::Run || !split(k))
            .map(|(k, v)| (k.clone(), option_text(v)))
            .collect();
        out.push(("threads".into(), threads.to_string()));
        if let (Command::Run, Some(r)) = (command, run) {
            out.push(("time".into(), r.duration.as_secs().to_string()));
            out.push(("warmup-time".into(), r.warmup.as_secs().to_string()));
            out.push(("report-interval".into(), "1".into()));
            out.push(("percentile".into(), "95".into()));
            out.push(("events".into(), "0".into()));
            if self.def.option("rand_seed").is_none() {
                out.push(("rand-seed".into(), r.run_seed().to_string()));
            }
        }
        out.push(("mysql-host".into(), server.host.clone()));
        out.push(("mysql-port".into(), server.port.to_string()));
        out.push(("mysql-user".into(), server.user.clone()));
        out.push(("mysql-password".into(), server.password.clone()));
        out.push(("mysql-db".into(), server.database.clone()));
        out
    }

    /// The typed options of an invocation; `init` (the target's `SET NAMES`) runs on every connection
    /// before the test's own statements.
    fn options(&self, pairs: &[(String, String)], command: Command, init: &[String]) -> Result<options::Options> {
        let values: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.replace('-', "_"), v.clone())).collect();
        let mut o = options::from_values(values, Some(self.test), Some(command))?.options;
        o.connect.init.splice(0..0, init.iter().cloned());
        Ok(o)
    }

    /// The command line of an invocation, as stored for people to read and rerun.
    fn command_line(&self, pairs: &[(String, String)], command: Command) -> Vec<String> {
        let mut args = vec![self.def.test.clone()];
        args.extend(pairs.iter().map(|(k, v)| format!("--{k}={v}")));
        args.push(command.name().to_string());
        args
    }

    fn invoke(&self, threads: u32, server: &Endpoint, command: Command, log: &mut dyn FnMut(&str)) -> Result<()> {
        let o = self.options(&self.pairs(threads, server, command, None), command, &server.init)?;
        let driver = super::driver_for(&o);
        let lines = std::sync::Mutex::new(Vec::new());
        let collect = |l: &str| lines.lock().unwrap_or_else(|e| e.into_inner()).push(l.to_string());
        let r = match command {
            Command::Prepare => super::prepare::prepare(self.test, &o, driver.as_ref(), &collect),
            Command::Prewarm => super::prepare::prewarm_scan(self.test, &o, driver.as_ref(), &collect),
            Command::Cleanup => super::prepare::cleanup(self.test, &o, driver.as_ref(), &collect),
            _ => Err(Error::Other("only prepare, prewarm and cleanup are invoked this way".into())),
        };
        if let Some(last) = lines.into_inner().unwrap_or_default().last() {
            log(last);
        }
        r
    }

    fn int(&self, name: &str, default: i64) -> i64 {
        self.def.option(name).and_then(toml::Value::as_integer).unwrap_or(default)
    }
}

impl Workload for SysbenchWorkload {
    fn kind(&self) -> &'static str {
        "sysbench"
    }

    fn label(&self) -> String {
        self.def.label()
    }

    fn data(&self) -> DataShape {
        let family = if self.test == Test::BulkInsert { "bulk_insert" } else { "oltp" };
        let mut shape: Vec<String> = SHAPE_OPTIONS
            .iter()
            .filter_map(|n| self.def.option(n).map(|v| format!("{n}={}", v.to_string().trim_matches('"'))))
            .collect();
        shape.sort();
        let rows = (self.int("tables", 1) * self.int("table_size", 10_000)).max(0) as u64;
        DataShape { key: format!("{family};{}", shape.join(";")), rows, empty: false }
    }

    fn stored_options(&self) -> serde_json::Value {
        let mut options = serde_json::to_value(&self.def.options).unwrap_or_default();
        if let Some(o) = options.as_object_mut() {
            o.insert("test".into(), self.def.test.clone().into());
        }
        options
    }

    fn threads(&self) -> Option<&[u32]> {
        self.def.threads.as_deref()
    }

    fn threads_problem(&self, threads: u32) -> Option<String> {
        let clients = self.int("clients", 1);
        (clients > i64::from(threads)).then(|| {
            format!(
                "workload {}: clients = {clients} need at least {clients} threads to share, not {threads}; give its cells {clients} threads or more",
                self.label()
            )
        })
    }

    fn own_tables(&self, database: &str) -> Option<crate::workload::OwnTables> {
        let n = self.int("tables", 1).max(1);
        Some(crate::workload::OwnTables {
            database: database.into(),
            names: crate::workload::TableNames::Listed((1..=n).map(|i| format!("sbtest{i}")).collect()),
        })
    }

    fn writes(&self) -> bool {
        !matches!(
            self.test,
            Test::OltpReadOnly | Test::OltpPointSelect | Test::SelectRandomPoints | Test::SelectRandomRanges
        )
    }

    fn estimate(&self, _threads: u32, t: &Timing) -> Duration {
        const RESTART: Duration = Duration::from_secs(4);
        let rows = self.data().rows;
        let prewarm = if t.prewarm { Duration::from_secs(1 + rows / 1_000_000) } else { Duration::ZERO };
        RESTART + prewarm + t.warmup + t.duration
    }

    fn prepare(&self, server: &Endpoint, fresh: bool, log: &mut dyn FnMut(&str)) -> Result<()> {
        let threads = self.int("tables", 1).clamp(1, 4) as u32;
        if !fresh {
            self.invoke(threads, server, Command::Cleanup, log)?;
        }
        self.invoke(threads, server, Command::Prepare, log)
    }

    fn prewarm(&self, server: &Endpoint, threads: u32, log: &mut dyn FnMut(&str)) -> Result<()> {
        self.invoke(threads, server, Command::Prewarm, log)
    }

    fn run(&self, ctx: RunContext<'_>) -> RunOutcome {
        let settings = ctx.settings;
        let pairs = self.pairs(settings.threads, ctx.server, Command::Run, Some(&settings));
        let o = match self.options(&pairs, Command::Run, &ctx.server.init) {
            Ok(o) => o,
            Err(e) => return RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
        };
        let scrubbed: Vec<String> =
            self.command_line(&pairs, Command::Run).iter().map(|a| store::scrub_arg(a)).collect();
        // sysbench has no option for what the target's connections run first: stored next to it.
        let command = if ctx.server.init.is_empty() {
            serde_json::json!({ "sysbench": scrubbed })
        } else {
            serde_json::json!({ "sysbench": scrubbed, "connection_init": ctx.server.init })
        };
        let args: Vec<std::ffi::OsString> = std::iter::once("sysbench".into())
            .chain(self.command_line(&pairs, Command::Run).into_iter().map(Into::into))
            .collect();
        outcome(measure_split(Source::Test(self.test), &o, command, ctx, Some(&args)))
    }
}

/// An experiment file's option value as the command line writes it (`true` → `on`).
pub fn option_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(true) => "on".into(),
        toml::Value::Boolean(false) => "off".into(),
        other => other.to_string(),
    }
}

/// The options an experiment sets for a workload that takes sysbench's option names (a script, a Lua
/// script): the server's address and account, and for a run its threads, time, warm-up, 1-s intervals,
/// and a percentile and seed unless `given` already has them. Added after `given`, so they win.
pub fn experiment_values(
    server: &Endpoint,
    run: Option<&RunSettings<'_>>,
    given: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = given.to_vec();
    let mut set = |k: &str, v: String| out.push((k.to_string(), v));
    set("mysql_host", server.host.clone());
    set("mysql_port", server.port.to_string());
    set("mysql_user", server.user.clone());
    set("mysql_password", server.password.clone());
    set("mysql_db", server.database.clone());
    if let Some(r) = run {
        set("threads", r.threads.to_string());
        set("time", r.duration.as_secs().to_string());
        set("warmup_time", r.warmup.as_secs().to_string());
        set("report_interval", "1".into());
        set("events", "0".into());
        if !given.iter().any(|(k, _)| k == "percentile") {
            set("percentile", "95".into());
        }
        if !given.iter().any(|(k, _)| k == "rand_seed") {
            set("rand_seed", r.run_seed().to_string());
        }
    }
    out
}

/// A run measured as an experiment stores it: sysbench's result and the stored run, or why it stopped
/// and the intervals measured before.
pub type Measured = std::result::Result<(super::RunResult, RunResult), (Error, Vec<Interval>)>;

/// Runs `source` with `o` (sysbench's loop, limits, warm-up and 1-s intervals) as an experiment run:
/// marks the run started with `command`, samples the server and versus when measuring starts and
/// ends, and makes the stored run (summary, intervals, the latency histogram, status deltas, cost per
/// transaction).
pub fn measure(source: Source, o: &Options, command: serde_json::Value, ctx: RunContext<'_>) -> Measured {
    measure_split(source, o, command, ctx, None)
}

/// [`measure`], from `o.clients` client processes when there are several: each runs `versus` with
/// `args` (the run's `sysbench …` command line), and the stored run is their merged one with each
/// client's latency histogram kept (`client-N`). A workload without a command line refuses them.
pub fn measure_split(
    source: Source,
    o: &Options,
    command: serde_json::Value,
    ctx: RunContext<'_>,
    args: Option<&[std::ffi::OsString]>,
) -> Measured {
    let RunContext { variables, settings, probe, observer, .. } = ctx;
    let mut collector = Collector::new(probe);
    collector.children = o.clients > 1;
    if o.clients > 1 && args.is_none() {
        let e = Error::option("clients", "this workload runs from one client process in an experiment; leave it at 1");
        return Err((e, Vec::new()));
    }
    let split = args.filter(|_| o.clients > 1);
    match measure_with(source, o, command, variables, &settings, observer, &mut collector, split) {
        Ok(r) => Ok(r),
        Err(e) => Err((e, collector.intervals)),
    }
}

/// The outcome of a measured run.
pub fn outcome(m: Measured) -> RunOutcome {
    match m {
        Ok((_, r)) => RunOutcome::Done(Box::new(r)),
        Err((Error::Interrupted, intervals)) => RunOutcome::Interrupted { intervals },
        Err((e, intervals)) => RunOutcome::Failed { error: e.to_string(), intervals },
    }
}

#[allow(clippy::too_many_arguments)]
fn measure_with(
    source: Source,
    o: &Options,
    command: serde_json::Value,
    variables: &[(String, String)],
    settings: &RunSettings<'_>,
    observer: &mut dyn crate::workload::RunObserver,
    collector: &mut Collector<'_>,
    split_args: Option<&[std::ffi::OsString]>,
) -> Result<(super::RunResult, RunResult)> {
    let version = collector.probe.server_version().unwrap_or_default();
    observer.started(StartRun { server_version: version.clone(), command })?;
    observer.measuring(settings.warmup, settings.duration);
    collector.server_pid = collector.probe.server_pid();
    collector.warmup_s = settings.warmup.as_secs_f64();
    collector.profile =
        settings.profile_hz.map(|hz| crate::profile::Sampling::new(hz).with_waits(settings.profile_waits));
    // The same client as `versus sysbench` (the lean one unless the workload's options say otherwise).
    let driver = super::driver_for(o);
    let mut split = None;
    let outcome = match split_args {
        Some(args) => {
            let launcher = super::split::launcher(&o.clients_on).expect("--clients-on names a launcher");
            super::runner::check_server_connections(driver.as_ref(), o.threads as usize).and_then(|_| {
                let (r, s) =
                    super::split::coordinate(source.test(), o, launcher.as_ref(), args, interrupt::flag(), collector)?;
                split = Some(s);
                Ok(r)
            })
        }
        None => super::runner::run_source(source, o, driver, interrupt::flag(), collector),
    };
    let after_status = collector.probe.global_status();
    let server_after = collector.server_pid.map(ProcessSample::read).transpose();
    let client_after =
        if collector.children { ProcessSample::read_self_and_children() } else { ProcessSample::read_self() };
    let host_after = HostCpu::read_of(&collector.cpus).ok();
    collector.probe.check_alive().map_err(Error::Other)?;
    // After Ctrl-C the run is dropped: stop perf at once rather than fold what it wrote.
    let profiles =
        collector.profile.take().filter(|_| !interrupt::is_interrupted()).map(crate::profile::Sampling::finish_all);
    let (profile, waits) = profiles.unzip();
    let waits = waits.flatten();
    let r = outcome?;
    if r.interrupted {
        return Err(Error::Interrupted);
    }
    if let Some(e) = split.as_ref().and_then(super::split::Split::incomplete) {
        return Err(e);
    }
    let ends = after_status.as_deref().map(status_ends).unwrap_or_default();
    let status = match (&collector.status_before, after_status) {
        (Some(b), Some(a)) => status_deltas(b, &a),
        _ => Vec::new(),
    };
    let server = match (&collector.server_before, server_after?) {
        (Some(b), Some(a)) => Some(b.delta_to(&a)),
        _ => None,
    };
    let client = collector.client_before.as_ref().zip(client_after.ok()).map(|(b, a)| b.delta_to(&a));
    let line = ServerLine::from_version_string(&version, variables);
    let mut efficiency = Efficiency::compute(r.counts.events, server.as_ref(), client.as_ref(), &status, line.as_ref());
    let host = collector.host_before.zip(host_after).map(|(b, a)| b.delta_to(&a));
    efficiency.client_load = match &split {
        Some(s) => s.load,
        None => client.and_then(|c| ClientLoad::measure(o.os_threads(), collector.cpus.len(), &c, host.as_ref())),
    };
    let mut histograms =
        vec![StoredHistogram { kind: "total".into(), t_s: None, data: store::encode_histogram(&r.histogram)? }];
    for (k, h) in split.iter().flat_map(|s| &s.histograms) {
        histograms.push(StoredHistogram { kind: format!("client-{k}"), t_s: None, data: store::encode_histogram(h)? });
    }
    let stored = RunResult {
        summary: summary(&r),
        intervals: std::mem::take(&mut collector.intervals),
        histograms,
        variables: Vec::new(),
        status_deltas: status,
        status_ends: ends,
        efficiency,
        profile: profile.map(|p| crate::profile::Profile { transactions: r.counts.events, ..p }),
        waits: waits.map(|p| crate::profile::Profile { transactions: r.counts.events, ..p }),
        replica_seconds: Vec::new(),
    };
    Ok((r, stored))
}

/// Watches the run: keeps the measured intervals and samples the server and versus when measuring starts.
struct Collector<'a> {
    probe: &'a mut dyn ServerProbe,
    intervals: Vec<Interval>,
    warmup_s: f64,
    measuring: bool,
    server_pid: Option<u32>,
    status_before: Option<Vec<(String, String)>>,
    server_before: Option<ProcessSample>,
    client_before: Option<ProcessSample>,
    /// The CPUs versus may run on, and their times when measuring began.
    cpus: Vec<usize>,
    host_before: Option<HostCpu>,
    profile: Option<crate::profile::Sampling>,
    /// The load runs in client processes of versus: their CPU counts as the client's.
    children: bool,
}

impl<'a> Collector<'a> {
    fn new(probe: &'a mut dyn ServerProbe) -> Self {
        Collector {
            probe,
            intervals: Vec::new(),
            warmup_s: 0.0,
            measuring: false,
            server_pid: None,
            status_before: None,
            server_before: None,
            client_before: None,
            cpus: allowed_cpus(),
            host_before: None,
            profile: None,
            children: false,
        }
    }

    /// Samples the counters as the measured time begins; `profiled`: and starts the profile (not at
    /// the start of a warm-up, which is not measured).
    fn begin_measuring(&mut self, profiled: bool) {
        self.measuring = true;
        if let (true, Some(p), Some(pid)) = (profiled, self.profile.as_mut(), self.server_pid) {
            p.begin(pid);
        }
        self.status_before = self.probe.global_status();
        self.server_before = self.server_pid.and_then(|p| ProcessSample::read(p).ok());
        self.client_before =
            if self.children { ProcessSample::read_self_and_children() } else { ProcessSample::read_self() }.ok();
        self.host_before = HostCpu::read_of(&self.cpus).ok();
    }
}

impl IntervalObserver for Collector<'_> {
    fn started(&mut self) {
        if !self.measuring && self.intervals.is_empty() {
            self.begin_measuring(self.warmup_s == 0.0);
        }
    }
    fn warmup_done(&mut self) {
        self.intervals.clear();
        self.begin_measuring(true);
    }
    fn interval(&mut self, i: &SysbenchInterval) {
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

/// The stored summary of a sysbench result (latencies in µs).
pub fn summary(r: &super::RunResult) -> Summary {
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
