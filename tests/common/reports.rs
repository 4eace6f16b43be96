//! Synthetic comparison experiments recorded through the Store API, for the report tests: simulated
//! targets with known throughput, noise, costs and server variables.
#![allow(dead_code)]

use std::path::Path;

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use versus::report::CompareReport;
use versus::sampler::{Efficiency, HostFacts};
use versus::store::{Interval, NewCell, NewExperiment, NewRun, RunResult, StartRun, Store, StoredHistogram, Summary};

/// One simulated target.
#[derive(Clone)]
pub struct Sim {
    pub label: &'static str,
    pub build: &'static str,
    pub config: &'static str,
    pub workload: &'static str,
    pub test: &'static str,
    /// Mean tps at 1 thread; scaled by threads^0.7.
    pub tps: f64,
    /// Coefficient of variation between runs (server restarts).
    pub cv_between: f64,
    /// Coefficient of variation of the 1-s intervals within a run.
    pub cv_within: f64,
    /// InnoDB fsyncs per transaction.
    pub fsyncs: f64,
    /// Server CPU µs per transaction.
    pub cpu_us: f64,
    /// `SHOW GLOBAL VARIABLES` that differ from the common ones.
    pub vars: &'static [(&'static str, &'static str)],
    /// A whole `SHOW GLOBAL VARIABLES` of a real server (empty: a few common ones), before `vars`.
    pub base: Vec<(String, String)>,
    /// `SELECT VERSION()` (default `BUILD-MariaDB`).
    pub server_version: Option<&'static str>,
    /// What the client used (default: not measured, as an older versus stored).
    pub client_load: Option<versus::sampler::client_load::ClientLoad>,
    /// The replicas' figures of a topology target (jittered per run like the costs).
    pub replication: Option<versus::sampler::replication::ReplicationFigures>,
}

impl Sim {
    pub fn new(label: &'static str, build: &'static str, config: &'static str, tps: f64) -> Sim {
        Sim {
            label,
            build,
            config,
            workload: "write_only",
            test: "oltp_write_only",
            tps,
            cv_between: 0.02,
            cv_within: 0.04,
            fsyncs: 1.0,
            cpu_us: 900.0,
            vars: &[],
            base: Vec::new(),
            server_version: None,
            client_load: None,
            replication: None,
        }
    }
}

/// How the runs are stored.
pub struct Plan {
    pub name: &'static str,
    pub threads: Vec<u32>,
    pub repetitions: u32,
    pub intervals: usize,
    pub seed: u64,
    /// Store latency histograms and costs (false: as an older versus would have).
    pub full: bool,
    /// Runs of these targets fail instead of finishing.
    pub failing: Vec<&'static str>,
    /// sysbench table_size of the workload.
    pub table_size: u64,
    /// The host it ran on.
    pub host: HostFacts,
    /// The last 1-s interval covers only half a second, as the end of a real run can: the whole-run
    /// rate then differs from the mean of the 1-s rates.
    pub partial_last: bool,
    /// The stored definition (default: name and repetitions only).
    pub definition: Option<String>,
}

impl Plan {
    pub fn new(name: &'static str, threads: &[u32], repetitions: u32) -> Plan {
        Plan {
            name,
            threads: threads.to_vec(),
            repetitions,
            intervals: 12,
            seed: 7,
            full: true,
            failing: vec![],
            table_size: 10_000,
            host: host(),
            partial_last: false,
            definition: None,
        }
    }
}

pub fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

pub fn host() -> HostFacts {
    HostFacts {
        hostname: Some("bench-1".into()),
        cpu_model: Some("Example CPU @ 3.0GHz".into()),
        logical_cpus: Some(2),
        physical_cores: Some(2),
        memory_bytes: Some(24 * 1024 * 1024 * 1024),
        kernel: Some("6.1.0-test".into()),
        os: Some("Debian GNU/Linux 12 (bookworm)".into()),
        datadir: None,
    }
}

/// Records an experiment of `sims` × `plan.threads` in `store`, runs in interleaved order; returns its id.
pub fn record(store: &mut Store, sims: &[Sim], plan: &Plan) -> i64 {
    let mut cells = Vec::new();
    for s in sims {
        for &t in &plan.threads {
            cells.push(NewCell {
                key: format!("target={};workload={};threads={t}", s.label, s.workload),
                target: s.label.into(),
                build: Some(s.build.into()),
                config: Some(s.config.into()),
                workload: s.workload.into(),
                threads: t,
                workload_options: serde_json::json!({ "test": s.test, "tables": 4, "table_size": plan.table_size }),
            });
        }
    }
    let mut runs = Vec::new();
    for rep in 1..=plan.repetitions {
        for cell in 0..cells.len() {
            runs.push(NewRun { cell, repetition: rep });
        }
    }
    let definition = plan
        .definition
        .clone()
        .unwrap_or_else(|| format!("name = \"{}\"\nrepetitions = {}\n", plan.name, plan.repetitions));
    let id = store
        .create_experiment(&NewExperiment {
            name: plan.name.into(),
            file: Some(format!("examples/{}.toml", plan.name)),
            definition,
            seed: plan.seed,
            host: plan.host.clone(),
            cells,
            runs,
        })
        .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(plan.seed);
    for row in store.runs(id).unwrap() {
        let s = sims.iter().find(|s| s.label == row.cell.target && s.workload == row.cell.workload).unwrap();
        store.start_run(row.id, &StartRun { server_version: version(s), command: serde_json::json!({}) }).unwrap();
        let level = s.tps * f64::from(row.cell.threads).powf(0.7) * (1.0 + s.cv_between * normal(&mut rng));
        let rates: Vec<f64> =
            (0..plan.intervals).map(|_| (level * (1.0 + s.cv_within * normal(&mut rng))).max(1.0)).collect();
        let intervals: Vec<Interval> = rates
            .iter()
            .enumerate()
            .map(|(i, &tps)| Interval { t_s: (i + 1) as f64, tps, qps: tps * 18.0, ..Interval::default() })
            .collect();
        if plan.failing.contains(&s.label) {
            store.fail_run(row.id, "server died", &intervals[..2]).unwrap();
            continue;
        }
        let tps = if plan.partial_last {
            let n = rates.len();
            (rates[..n - 1].iter().sum::<f64>() + rates[n - 1] * 0.5) / (n as f64 - 0.5)
        } else {
            rates.iter().sum::<f64>() / rates.len() as f64
        };
        let avg_us = f64::from(row.cell.threads) / tps * 1e6;
        let summary = Summary {
            events: (tps * plan.intervals as f64) as u64,
            queries: (tps * 18.0 * plan.intervals as f64) as u64,
            tps,
            qps: tps * 18.0,
            latency_min_us: avg_us * 0.3,
            latency_avg_us: avg_us,
            latency_max_us: avg_us * 12.0,
            latency_p95_us: avg_us * 1.6,
            latency_p99_us: avg_us * 2.4,
            latency_sum_us: avg_us * tps * plan.intervals as f64,
            duration_s: plan.intervals as f64,
            ..Summary::default()
        };
        let mut histograms = Vec::new();
        let mut efficiency = Efficiency::default();
        if plan.full {
            let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
            for q in 1..=200u64 {
                h.record((avg_us * (0.4 + q as f64 / 120.0)) as u64).unwrap();
            }
            histograms.push(StoredHistogram {
                kind: "total".into(),
                t_s: None,
                data: versus::store::encode_histogram(&h).unwrap(),
            });
            let jitter = 1.0 + 0.01 * normal(&mut rng);
            efficiency = Efficiency {
                server_cpu_user_us: Some(s.cpu_us * 0.8 * jitter),
                server_cpu_system_us: Some(s.cpu_us * 0.2 * jitter),
                client_cpu_us: Some(150.0 * jitter),
                server_ctxt_switches: Some(6.0 * jitter),
                client_ctxt_switches: Some(2.0),
                server_read_bytes: Some(0.0),
                server_write_bytes: Some(8192.0 * s.fsyncs.max(0.5) * jitter),
                innodb_data_fsyncs: Some(s.fsyncs),
                innodb_log_fsyncs: Some(s.fsyncs * 0.8),
                innodb_data_written_bytes: Some(16384.0),
                innodb_log_written_bytes: Some(2048.0),
                innodb_fsyncs: Some(s.fsyncs),
                binlog_syncs: Some(0.0),
                client_load: s.client_load,
                replication: s.replication.map(|r| versus::sampler::replication::ReplicationFigures {
                    lag_p50_ms: r.lag_p50_ms.map(|v| v * jitter),
                    lag_p95_ms: r.lag_p95_ms.map(|v| v * jitter),
                    applied_per_s: r.applied_per_s.map(|v| v * jitter),
                    catch_up_s: r.catch_up_s.map(|v| v * jitter),
                    cpu_us_per_txn: r.cpu_us_per_txn.map(|v| v * jitter),
                    ..r
                }),
            };
        }
        let mut variables: std::collections::BTreeMap<String, String> = s.base.iter().cloned().collect();
        variables.extend([
            ("innodb_buffer_pool_size".into(), "134217728".into()),
            ("port".into(), format!("{}", 20000 + row.id)),
            ("datadir".into(), format!("/tmp/sb-{}/data/", row.id)),
            ("version".into(), version(s)),
        ]);
        variables.extend(s.vars.iter().map(|(n, v)| (n.to_string(), v.to_string())));
        let variables: Vec<(String, String)> = variables.into_iter().collect();
        // A topology target's replica, each second: its lag around the run's p50, rising towards the end.
        let replica_seconds = match efficiency.replication {
            Some(r) => intervals
                .iter()
                .enumerate()
                .map(|(i, iv)| versus::store::ReplicaSecond {
                    replica: "run-r1".into(),
                    t_s: iv.t_s,
                    lag_ms: r.lag_p50_ms.map(|l| l * (0.9 + 0.02 * i as f64)),
                    seconds_behind: r.lag_p50_ms.map(|l| (l / 1000.0) as i64),
                    applied_ps: r.applied_per_s,
                })
                .collect(),
            None => Vec::new(),
        };
        let result = RunResult {
            summary,
            intervals,
            histograms,
            variables,
            efficiency,
            replica_seconds,
            ..RunResult::default()
        };
        store.finish_run(row.id, &result).unwrap();
    }
    id
}

fn version(s: &Sim) -> String {
    s.server_version.map(str::to_string).unwrap_or_else(|| format!("{}-MariaDB", s.build))
}

/// A `SHOW GLOBAL VARIABLES` dump of a real server in tests/fixtures/variables/ (`mariadb-10.11`,
/// `mariadb-11.8`, `mysql-9.7`: default sandboxes, paths and host name replaced).
pub fn server_variables(name: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/variables").join(format!("{name}.tsv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter_map(|l| l.split_once('\t')).map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

/// Fixed times instead of the clock's, so snapshots are stable.
pub fn normalize(mut r: CompareReport) -> CompareReport {
    for e in &mut r.experiments {
        e.created_at = 1_700_000_000;
    }
    for run in &mut r.runs {
        run.started_at = Some(1_700_000_000);
    }
    r.versus_version = "VERSION".into();
    r
}
