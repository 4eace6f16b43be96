//! The Small Datum tables from stored experiment runs: each ibench step is a stored run (see
//! [`super::experiment`]), read back here into [`StepFigures`] per side, with the means over
//! repetitions, and tabulated by [`super::compare::build`]. `versus compare` and `versus report` show the
//! result after their own tables.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::compare::{self, Comparison, SideInput, StepFigures};
use super::options::{Step, StepKind};
use super::result::{StepEfficiency, StepStatus};
use super::stats::{KindTotal, Latency, bucket_of};
use crate::sampler::Efficiency;
use crate::workload::{StoredRun, StoredRuns};

/// Status-delta names under which a step stores what versus measured itself (not server counters).
pub const HOST_CPU_US: &str = "versus.host_cpu_us";
/// Host context switches over the step.
pub const HOST_CTXT_SWITCHES: &str = "versus.host_ctxt_switches";
/// Largest server RSS during the step, bytes.
pub const SERVER_RSS_MAX: &str = "versus.server_rss_max_bytes";

/// The tables of one group of ibench runs (one workload at one client count, within one config or build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// What the tables cover: `ibench, 1 client(s)`, with the group when builds or configs are compared.
    pub title: String,
    /// The tables.
    pub tables: Comparison,
}

fn option<'a>(r: &StoredRun<'a>, key: &str) -> Option<&'a serde_json::Value> {
    r.detail.run.cell.workload_options.get(key)
}

/// True when a stored run is a step of the Insert Benchmark.
pub fn is_step(r: &StoredRun<'_>) -> bool {
    option(r, "test").and_then(|v| v.as_str()) == Some("ibench") && step(r).is_some()
}

fn step(r: &StoredRun<'_>) -> Option<Step> {
    option(r, "step")?.as_str()?.parse().ok()
}

fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn status(r: &StoredRun<'_>, name: &str) -> Option<f64> {
    r.status(name).map(|v| v as f64)
}

/// The efficiency of one stored step run.
fn efficiency(r: &StoredRun<'_>, kind: StepKind, ncpu: Option<u32>) -> StepEfficiency {
    let s = r.detail.run.summary.clone().unwrap_or_default();
    let e: &Efficiency = &r.detail.efficiency;
    let ops = s.events as f64;
    let inserted = s.writes as f64;
    let per_op = |v: Option<f64>| v.filter(|_| ops > 0.0).map(|v| v / ops);
    let to_rows = |per_op: Option<f64>| per_op.filter(|_| inserted > 0.0).map(|v| v * ops / inserted);
    let server_cpu = e.server_cpu_user_us.zip(e.server_cpu_system_us).map(|(u, s)| u + s);
    let write_kb = e.server_write_bytes.or(e.innodb_data_written_bytes).map(|b| b / 1024.0);
    let host_cpu = status(r, HOST_CPU_US);
    let per_row_steps = matches!(kind, StepKind::Load | StepKind::Write);
    StepEfficiency {
        per: match kind {
            StepKind::Query => "query",
            StepKind::Index => "indexed row",
            _ => "insert",
        }
        .into(),
        operations: s.events,
        host_cpu_us_per_op: per_op(host_cpu),
        host_cpu_pct: host_cpu
            .zip(ncpu)
            .filter(|_| s.duration_s > 0.0)
            .map(|(c, n)| 100.0 * c / (s.duration_s * 1e6 * f64::from(n.max(1)))),
        host_cs_per_op: per_op(status(r, HOST_CTXT_SWITCHES)),
        server_cpu_us_per_op: server_cpu,
        server_cs_per_op: e.server_ctxt_switches,
        client_cpu_us_per_op: e.client_cpu_us,
        client_cpu_us_per_row: to_rows(e.client_cpu_us).filter(|_| per_row_steps),
        server_cpu_us_per_row: to_rows(server_cpu).filter(|_| per_row_steps),
        read_kb_per_op: e.server_read_bytes.map(|b| b / 1024.0),
        write_kb_per_op: write_kb,
        write_kb_per_insert: to_rows(write_kb),
        server_rss_max_bytes: status(r, SERVER_RSS_MAX).map(|v| v as u64),
        io_source: e.server_write_bytes.map(|_| "process".to_string()).or(write_kb.map(|_| "innodb".into())),
    }
}

/// Means of the efficiency figures over repetitions.
fn mean_efficiency(all: &[StepEfficiency]) -> StepEfficiency {
    let m = |f: fn(&StepEfficiency) -> Option<f64>| mean(all.iter().map(f));
    let first = all.first().cloned().unwrap_or_default();
    StepEfficiency {
        per: first.per,
        operations: all.iter().map(|e| e.operations).sum::<u64>() / all.len().max(1) as u64,
        host_cpu_us_per_op: m(|e| e.host_cpu_us_per_op),
        host_cpu_pct: m(|e| e.host_cpu_pct),
        host_cs_per_op: m(|e| e.host_cs_per_op),
        server_cpu_us_per_op: m(|e| e.server_cpu_us_per_op),
        server_cs_per_op: m(|e| e.server_cs_per_op),
        client_cpu_us_per_op: m(|e| e.client_cpu_us_per_op),
        client_cpu_us_per_row: m(|e| e.client_cpu_us_per_row),
        server_cpu_us_per_row: m(|e| e.server_cpu_us_per_row),
        read_kb_per_op: m(|e| e.read_kb_per_op),
        write_kb_per_op: m(|e| e.write_kb_per_op),
        write_kb_per_insert: m(|e| e.write_kb_per_insert),
        server_rss_max_bytes: m(|e| e.server_rss_max_bytes.map(|v| v as f64)).map(|v| v as u64),
        io_source: first.io_source,
    }
}

/// The response times of the step's operation over all repetitions, buckets from the histogram.
fn latency(runs: &[&StoredRun<'_>], kind: StepKind) -> Option<Latency> {
    let mut total = KindTotal::default();
    for r in runs {
        let Some(h) = r.histogram else { continue };
        let _ = total.histogram.add(h);
        add_buckets(&mut total, h);
        if let Some(s) = &r.detail.run.summary {
            total.sum_us += s.latency_sum_us as u64;
        }
    }
    let k = if kind == StepKind::Query { super::stats::Kind::Query } else { super::stats::Kind::Insert };
    Latency::of(k, &total)
}

fn add_buckets(t: &mut KindTotal, h: &Histogram<u64>) {
    for v in h.iter_recorded() {
        t.buckets[bucket_of(h.highest_equivalent(v.value_iterated_to()))] += v.count_at_value();
    }
}

/// The ibench sections of a comparison: one per (workload, group, clients), sides in the comparison's
/// order with the baseline first. Empty when no selected run is an ibench step.
pub fn sections(s: &StoredRuns<'_>) -> Vec<Section> {
    let runs: Vec<&StoredRun<'_>> = s.runs.iter().filter(|r| is_step(r)).collect();
    let ncpu = s.logical_cpus;
    let mut keys: Vec<(String, Option<String>, u32)> = Vec::new();
    for r in &runs {
        let sequence = option(r, "sequence").and_then(|v| v.as_str()).unwrap_or("ibench").to_string();
        let k = (sequence, r.group.map(str::to_string), r.threads);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(sequence, group, threads)| {
            let mine: Vec<&StoredRun<'_>> = runs
                .iter()
                .copied()
                .filter(|r| {
                    r.group == group.as_deref()
                        && r.threads == threads
                        && option(r, "sequence").and_then(|v| v.as_str()).unwrap_or("ibench") == sequence
                })
                .collect();
            let sides: Vec<SideInput> = s
                .sides
                .iter()
                .enumerate()
                .map(|(side, label)| {
                    let of_side: Vec<&StoredRun<'_>> = mine.iter().copied().filter(|r| r.side == side).collect();
                    let mut steps: Vec<Step> = of_side.iter().filter_map(|r| step(r)).collect();
                    steps.sort_by_key(|s| s.rank());
                    steps.dedup();
                    let figures = steps
                        .into_iter()
                        .map(|st| {
                            let reps: Vec<&StoredRun<'_>> =
                                of_side.iter().copied().filter(|r| step(r) == Some(st)).collect();
                            let summary = |r: &&StoredRun<'_>| r.detail.run.summary.clone().unwrap_or_default();
                            let effs: Vec<StepEfficiency> =
                                reps.iter().map(|r| efficiency(r, st.kind(), ncpu)).collect();
                            StepFigures {
                                step: st,
                                status: StepStatus::Done,
                                rate: mean(reps.iter().map(|r| Some(summary(r).tps))).unwrap_or(0.0),
                                ips: mean(reps.iter().map(|r| {
                                    let s = summary(r);
                                    (s.duration_s > 0.0).then(|| s.writes as f64 / s.duration_s)
                                }))
                                .unwrap_or(0.0),
                                target_ips: match st {
                                    Step::Query { rate, .. } => Some(f64::from(rate) * f64::from(threads)),
                                    _ => None,
                                },
                                efficiency: mean_efficiency(&effs),
                                latency: latency(&reps, st.kind()),
                                rates: reps.iter().map(|r| summary(r).tps).collect(),
                            }
                        })
                        .collect();
                    SideInput { label: label.clone(), steps: figures }
                })
                .collect();
            let group = group.map(|g| format!(", {g}")).unwrap_or_default();
            Section {
                title: format!("Insert Benchmark {sequence}{group}, {threads} client(s)"),
                tables: compare::build(&sides),
            }
        })
        .collect()
}
