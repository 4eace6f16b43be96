//! `versus server start NAME --replicas N` and what `status` and `stop` do with a primary's replicas.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::{lock_sandbox, sandbox_dir, table};
use crate::error::{Error, Result};
use crate::sampler::replica_lag::ReplicaLagSampler;
use crate::server::replication::{
    self, Heartbeat, REPLICATION_USER, Topology, TopologySpec, read_record, replica_name,
};
use crate::server::sandbox::{self, SandboxInfo, SandboxSpec};
use crate::server::{Home, process};

/// `versus server start`'s options for a primary with replicas.
#[derive(Debug, Clone, clap::Args)]
pub(super) struct ReplicaArgs {
    /// Also start N replicas of it (sandboxes NAME-r1 …), replicating by GTID; `stop NAME` stops them all.
    #[arg(long, value_name = "N", default_value_t = 0)]
    replicas: usize,
    /// With --replicas: commits on the primary wait until a replica has them (semi-synchronous).
    #[arg(long)]
    semi_sync: bool,
    /// With --replicas: seconds each replica holds transactions back, one value per replica (3 or 0,3).
    #[arg(long, value_name = "SECS", value_delimiter = ',')]
    replica_delay: Vec<u32>,
    /// With --replicas: a server option for the replicas only, after --set (repeatable).
    #[arg(long = "replica-set", value_name = "NAME=VALUE")]
    replica_set: Vec<String>,
    /// With --replicas: the replicas run this registered build, of the primary's family and not older
    /// (will a new version's replicas keep up with the old primary?).
    #[arg(long, value_name = "BUILD")]
    replica_build: Option<String>,
}

impl ReplicaArgs {
    /// Whether any of them was given.
    pub(super) fn asked(&self) -> bool {
        self.replicas > 0
            || self.semi_sync
            || !self.replica_delay.is_empty()
            || !self.replica_set.is_empty()
            || self.replica_build.is_some()
    }
}

/// Starts `spec` as a primary with the replicas `a` asks for and leaves them running.
pub(super) fn start(home: &Home, spec: SandboxSpec, a: ReplicaArgs) -> Result<()> {
    let replicas = a.replicas;
    if replicas == 0 {
        let flag = if a.semi_sync {
            "--semi-sync"
        } else if !a.replica_delay.is_empty() {
            "--replica-delay"
        } else if a.replica_build.is_some() {
            "--replica-build"
        } else {
            "--replica-set"
        };
        return Err(Error::option(flag, "applies to replicas; add --replicas N"));
    }
    let mut topo = TopologySpec::new(spec, replicas);
    topo.semi_sync = a.semi_sync;
    topo.delays = a.replica_delay;
    topo.replica_overrides = a.replica_set;
    topo.replica_build = match &a.replica_build {
        Some(b) => Some(home.build(b).map_err(|e| Error::option("--replica-build", e.to_string()))?),
        None => None,
    };
    topo.check()?;
    let primary_data = topo.primary.datadir.clone().unwrap_or_else(|| topo.primary.dir.join("data"));
    let mut locks = Vec::new();
    let mut datadirs = vec![(topo.primary.name.clone(), primary_data)];
    for i in 1..=replicas {
        let name = replica_name(&topo.primary.name, i);
        let dir = sandbox_dir(home, &name)?;
        locks.push(lock_sandbox(home, &name)?);
        if let Ok(info) = sandbox::read_info(&dir)
            && sandbox::is_our_server(&info)
        {
            return Err(Error::server(
                &name,
                format!("is already running (pid {}); stop it with `versus server stop {name}`", info.pid),
            ));
        }
        datadirs.push((name, dir.join("data")));
    }
    // A topology starts from empty datadirs; one with data is discarded only when asked.
    if !topo.primary.fresh
        && let Some((name, _)) =
            datadirs.iter().find(|(_, d)| std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some()))
    {
        return Err(Error::option(
            "--replicas",
            format!(
                "sandbox {name} has a datadir already and a topology starts from empty ones; add --fresh (which \
                 discards it) or choose another --name"
            ),
        ));
    }
    let t = Topology::start(topo)?;
    let p = t.primary();
    println!(
        "started {}: {} in {:.2} s (primary, server_id 1)",
        p.info().name,
        p.version(),
        p.ready_after().as_secs_f64()
    );
    for a in p.adjusted() {
        eprintln!("warning: the server does not run as configured: {a}");
    }
    println!("  pid {}  port 127.0.0.1:{}  socket {}", p.pid(), p.port(), p.socket().display());
    println!("  my.cnf {}  error log {}", p.info().cnf.display(), p.error_log().display());
    for (r, rec) in t.replicas().iter().zip(&t.record().replicas) {
        println!(
            "started {}: replica, server_id {}, delay {} s, {}, pid {}, port 127.0.0.1:{}",
            rec.name,
            rec.server_id,
            rec.delay_s,
            r.version(),
            r.pid(),
            r.port()
        );
    }
    let mode = if t.record().semi_sync { "semi-synchronous" } else { "asynchronous" };
    println!("replication: {mode}, by GTID, account {REPLICATION_USER} (replication privilege only)");
    println!("connect to the primary with:");
    for line in p.connect_hint().lines() {
        println!("  {line}");
    }
    let name = crate::shell::quote(&p.info().name);
    println!("replica state and lag: versus server status {name}");
    println!("stop all of them with: versus server stop {name}");
    t.detach();
    drop(locks);
    Ok(())
}

/// Stops the replicas recorded with the primary `info` (nothing when it has none), by PID.
pub(super) fn stop_replicas(home: &Home, info: &SandboxInfo, timeout: u64) -> Result<()> {
    let Ok(record) = read_record(&info.dir) else { return Ok(()) };
    for r in &record.replicas {
        let dir = sandbox_dir(home, &r.name)?;
        let _lock = lock_sandbox(home, &r.name)?;
        match sandbox::read_info(&dir) {
            Ok(ri) if sandbox::is_our_server(&ri) => {
                let how = match process::terminate(ri.pid, None, Duration::from_secs(timeout)) {
                    process::StopOutcome::Killed => "killed after the timeout",
                    _ => "stopped",
                };
                println!("{}: {how} (pid {})", r.name, ri.pid);
            }
            _ => println!("{}: not running", r.name),
        }
    }
    Ok(())
}

/// The running topology whose primary is `name`; an error naming what is missing or down.
fn running_topology(home: &Home, name: &str) -> Result<Topology> {
    let dir = sandbox_dir(home, name)?;
    sandbox::read_info(&dir).map_err(|_| Error::server(name, "no such sandbox"))?;
    if read_record(&dir).is_err() {
        return Err(Error::server(name, "has no replicas; start one with `versus server start BUILD --replicas N`"));
    }
    let topology = Topology::open(&dir, &|b| home.build(b))?;
    let down: Vec<&str> = std::iter::once(topology.primary())
        .chain(topology.replicas())
        .filter(|s| !sandbox::is_our_server(s.info()))
        .map(|s| s.info().name.as_str())
        .collect();
    if !down.is_empty() {
        return Err(Error::server(name, format!("not running: {}; start the topology again", down.join(", "))));
    }
    Ok(topology)
}

/// `versus server lag NAME`: each replica each second for `seconds` seconds, as the experiments sample
/// them.
pub(super) fn lag(home: &Home, name: &str, seconds: u64) -> Result<()> {
    let topology = running_topology(home, name)?;
    let mut sampler = ReplicaLagSampler::start(&topology, Heartbeat::DEFAULT_INTERVAL)?;
    println!("{:>5}  {:<20} {:>9} {:>14} {:>10}  STATE", "T_S", "REPLICA", "LAG_MS", "SECONDS_BEHIND", "APPLIED/S");
    let start = Instant::now();
    for n in 1..=seconds {
        let next = start + Duration::from_secs(n);
        while Instant::now() < next {
            crate::interrupt::check()?;
            std::thread::sleep(Duration::from_millis(20).min(next.saturating_duration_since(Instant::now())));
        }
        let sample = sampler.sample()?;
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        for r in &sample.replicas {
            let state = if r.last_error.is_empty() {
                format!("IO {} SQL {}", r.io_running, r.sql_running)
            } else {
                r.last_error.clone()
            };
            println!(
                "{n:>5}  {:<20} {:>9} {:>14} {:>10}  {state}",
                r.replica,
                opt(r.heartbeat_ms.map(|l| format!("{l:.1}"))),
                opt(r.seconds_behind.map(|s| s.to_string())),
                opt(r.applied_per_s.map(|a| format!("{a:.0}"))),
            );
        }
    }
    Ok(())
}

/// `versus server verify NAME`: catch-up time of each replica, then the data check.
pub(super) fn verify(home: &Home, name: &str, timeout: u64) -> Result<i32> {
    let topology = running_topology(home, name)?;
    let caught = replication::catch_up(&topology, Duration::from_secs(timeout))?;
    for c in &caught {
        let how = if c.reached { "caught up in" } else { "had not caught up after" };
        println!("{}: {how} {:.3} s (primary position {})", c.replica, c.seconds, c.position);
    }
    if caught.iter().any(|c| !c.reached) {
        println!("data check skipped: a replica has not applied all the primary has");
        return Ok(1);
    }
    let check = replication::compare_data(&topology)?;
    let show = |v: Option<u64>| v.map_or_else(|| "missing".to_string(), |c| c.to_string());
    for d in &check.differences {
        println!(
            "{}: {} differs (checksum on the primary {}, on the replica {})",
            d.replica,
            d.table,
            show(d.primary),
            show(d.replica_checksum)
        );
    }
    let n = topology.replicas().len();
    if check.equal() {
        println!("data: {} tables equal on the primary and its {n} replica(s)", check.tables);
        Ok(0)
    } else {
        println!("data: {} of {} tables differ", check.differences.len(), check.tables);
        Ok(1)
    }
}

/// One replica as `server status` shows it.
#[derive(Debug, Serialize)]
struct Row {
    name: String,
    running: bool,
    port: u16,
    io_running: String,
    sql_running: String,
    seconds_behind: Option<u64>,
    lag_ms: Option<f64>,
    delay_s: u32,
    last_error: String,
}

/// The replicas of primary `name`, or `None` when it has none.
fn rows(home: &Home, name: &str) -> Result<Option<Vec<Row>>> {
    let dir = sandbox_dir(home, name)?;
    let Ok(record) = read_record(&dir) else { return Ok(None) };
    let info = sandbox::read_info(&dir)?;
    let topology = Topology::open(&dir, &|b| home.build(b))?;
    let primary_up = sandbox::is_our_server(&info);
    let up: Vec<bool> = topology.replicas().iter().map(|r| sandbox::is_our_server(r.info())).collect();
    // One heartbeat written now and timed to each replica: exact, and it needs every server up.
    let lags = if primary_up && up.iter().all(|u| *u) {
        let wait = Duration::from_secs(2 + record.max_delay() as u64);
        replication::probe_lag(&topology, wait).unwrap_or_else(|_| vec![None; up.len()])
    } else {
        vec![None; up.len()]
    };
    let mut out = Vec::new();
    for (i, (((r, rec), running), lag)) in
        topology.replicas().iter().zip(&record.replicas).zip(up).zip(lags).enumerate()
    {
        let dialect = topology.replica_dialect(i);
        let state = if running { replication::replica_state(&mut r.connect_root()?, &dialect).ok() } else { None };
        let dash = || "-".to_string();
        out.push(Row {
            name: rec.name.clone(),
            running,
            port: r.port(),
            io_running: state.as_ref().map_or_else(dash, |s| s.io_running.clone()),
            sql_running: state.as_ref().map_or_else(dash, |s| s.sql_running.clone()),
            seconds_behind: state.as_ref().and_then(|s| s.seconds_behind),
            lag_ms: lag.map(|d| d.as_secs_f64() * 1000.0),
            delay_s: rec.delay_s,
            last_error: state.map(|s| s.last_error).unwrap_or_default(),
        });
    }
    Ok(Some(out))
}

/// Prints the replicas of primary `name` under the status table (nothing when it has none).
pub(super) fn print_status(home: &Home, name: &str) -> Result<()> {
    let Some(rows) = rows(home, name)? else { return Ok(()) };
    let mut t = table(&["REPLICA", "STATE", "PORT", "IO", "SQL", "SECONDS_BEHIND", "LAG_MS", "DELAY_S", "LAST_ERROR"]);
    for r in rows {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        t.add_row(vec![
            r.name,
            if r.running { "running" } else { "stopped" }.into(),
            r.port.to_string(),
            r.io_running,
            r.sql_running,
            opt(r.seconds_behind.map(|s| s.to_string())),
            opt(r.lag_ms.map(|l| format!("{l:.1}"))),
            r.delay_s.to_string(),
            if r.last_error.is_empty() { "-".into() } else { r.last_error },
        ]);
    }
    println!("replicas of {name} (LAG_MS: one heartbeat written on the primary now, timed to its arrival):");
    println!("{t}");
    Ok(())
}

/// The replicas of the primary `info` as JSON (`null` when it has none or they cannot be read).
pub(super) fn status_json(home: &Home, info: &SandboxInfo) -> serde_json::Value {
    match rows(home, &info.name) {
        Ok(Some(rows)) => serde_json::to_value(rows).unwrap_or_default(),
        _ => serde_json::Value::Null,
    }
}
