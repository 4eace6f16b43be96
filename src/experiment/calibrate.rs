//! `versus calibrate`: this host's noise for a workload, measured by an A/A experiment — one target
//! (a build with its options) run twice as two targets, `A` and `A again`, in shuffled rounds like any
//! experiment — and stored per host class, workload, thread count and metric
//! ([`crate::store::Calibration`]), where `compare`, `report`, `run` and `explain` find it.

use super::plan::Plan;
use super::spec::{ExperimentFile, Repetitions, WorkloadDef};
use crate::error::{Error, Result};
use crate::metric::{Metric, RunValues};
use crate::sampler::{Efficiency, Fingerprint};
use crate::stats::BootstrapConfig;
use crate::stats::calibrate::{MIN_CALIBRATION_REPETITIONS, calibrate};
use crate::store::{Calibration, Status, Store};

/// The labels of the two sides of the A/A pair.
pub const SIDES: [&str; 2] = ["A", "A again"];

/// The metrics a calibration measures (those of every run's summary).
pub const METRICS: [Metric; 5] = [Metric::Tps, Metric::Qps, Metric::AvgLatency, Metric::P95, Metric::P99];

/// What to calibrate.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// Name of the stored A/A experiment.
    pub name: String,
    /// The build measured twice.
    pub build: String,
    /// Server options of the target (`--set`), on both sides.
    pub set: toml::Table,
    /// The workload.
    pub workload: WorkloadDef,
    /// Client thread counts; each is calibrated on its own.
    pub threads: Vec<u32>,
    /// Measured time per run.
    pub duration: std::time::Duration,
    /// Warm-up per run.
    pub warmup: std::time::Duration,
    /// Pause after each server start (`settle`).
    pub settle: std::time::Duration,
    /// Pin the server and the client to separate CPUs (`pin_cpus`).
    pub pin_cpus: bool,
    /// Drop the OS page cache before each restore (`drop_caches`).
    pub drop_caches: bool,
    /// Repetitions per side (as many as the comparisons the band is for have).
    pub repetitions: u32,
    /// Confidence of the A/A interval (that of the comparisons).
    pub confidence: f64,
    /// Seed of the run order.
    pub seed: u64,
}

/// The experiment file of the A/A experiment.
pub fn experiment(opts: &CalibrateOptions) -> Result<(ExperimentFile, String)> {
    if opts.repetitions < MIN_CALIBRATION_REPETITIONS as u32 {
        return Err(Error::option(
            "--repetitions",
            format!(
                "a calibration needs at least {MIN_CALIBRATION_REPETITIONS} repetitions per side (5 or more is better)"
            ),
        ));
    }
    let skeleton = format!(
        "name = {name:?}\n[[targets]]\nname = {a:?}\nbuild = {build:?}\n[[targets]]\nname = {b:?}\nbuild = {build:?}\n\
         [[workloads]]\ntest = \"oltp_point_select\"\n",
        name = opts.name,
        a = SIDES[0],
        b = SIDES[1],
        build = opts.build
    );
    let mut file = ExperimentFile::parse(&skeleton).map_err(Error::Other)?;
    file.description = Some(format!(
        "versus calibrate: A/A experiment of {} measured twice, for this host's noise band",
        target_label(opts)
    ));
    for t in &mut file.targets {
        t.set = opts.set.clone();
    }
    file.workloads = vec![opts.workload.clone()];
    file.threads = opts.threads.clone();
    file.duration = opts.duration;
    file.warmup = opts.warmup;
    file.settle = opts.settle;
    file.pin_cpus = opts.pin_cpus;
    file.drop_caches = opts.drop_caches;
    file.repetitions = Repetitions::fixed(opts.repetitions);
    file.seed = Some(opts.seed);
    let text = toml::to_string(&file).map_err(|e| Error::Other(format!("cannot write the A/A experiment: {e}")))?;
    let file = ExperimentFile::parse(&text).map_err(Error::Other)?;
    Ok((file, text))
}

/// `BUILD` or `BUILD:NAME=VALUE,…`: the target measured twice.
pub fn target_label(opts: &CalibrateOptions) -> String {
    if opts.set.is_empty() {
        return opts.build.clone();
    }
    let set: Vec<String> = opts.set.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect();
    format!("{}:{}", opts.build, set.join(","))
}

/// The calibrations of a finished A/A experiment `experiment_id` of `plan`: one per thread count and
/// metric of [`METRICS`] with values on both sides; `target` names what was measured twice.
pub fn from_runs(
    store: &Store,
    experiment_id: i64,
    plan: &Plan,
    target: &str,
    confidence: f64,
) -> Result<Vec<Calibration>> {
    let e = store
        .experiment(experiment_id)?
        .ok_or_else(|| Error::Other(format!("experiment {experiment_id} is not stored")))?;
    let host = Fingerprint::of(&e.host);
    if host == Fingerprint::default() {
        return Err(Error::Other(
            "this host's facts are unknown, so a calibration could not be filed under its class".into(),
        ));
    }
    let runs = store.runs(experiment_id)?;
    let efficiency = Efficiency::default();
    let mut out = Vec::new();
    for base in plan.cells.iter().filter(|c| c.target == 0) {
        let Some(again) =
            plan.cells.iter().find(|c| c.target == 1 && c.workload == base.workload && c.threads == base.threads)
        else {
            continue;
        };
        let workload = plan.workloads[base.workload].label();
        for metric in METRICS {
            let values = |key: &str| -> Vec<f64> {
                let mut v: Vec<(u32, f64)> = runs
                    .iter()
                    .filter(|r| r.cell.key == key && r.status == Status::Done)
                    .filter_map(|r| {
                        let s = r.summary.as_ref()?;
                        metric
                            .of_run(&RunValues { summary: s, efficiency: &efficiency, histogram: None })
                            .map(|x| (r.repetition, x))
                    })
                    .filter(|(_, x)| *x > 0.0 && x.is_finite())
                    .collect();
                v.sort_by_key(|(rep, _)| *rep);
                v.into_iter().map(|(_, x)| x).collect()
            };
            let (a, b) = (values(&base.key), values(&again.key));
            if a.len().min(b.len()) < MIN_CALIBRATION_REPETITIONS {
                continue;
            }
            let cfg = BootstrapConfig { confidence, seed: e.seed, ..BootstrapConfig::default() };
            let n = calibrate(&a, &b, &cfg)?;
            out.push(Calibration {
                id: 0,
                host_class: host.class(),
                host: host.describe(),
                workload: workload.clone(),
                threads: base.threads,
                metric: metric.name().to_string(),
                repetitions: n.repetitions as u32,
                cv: n.cv,
                band: n.band,
                confidence,
                experiment_id: Some(experiment_id),
                target: target.to_string(),
                created_at: 0,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_up_choices_are_written_into_the_aa_experiment() {
        let workload: WorkloadDef = toml::from_str("test = \"oltp_read_only\"").unwrap();
        let mut opts = CalibrateOptions {
            name: "calibrate".into(),
            build: "system".into(),
            set: toml::Table::new(),
            workload,
            threads: vec![1],
            duration: std::time::Duration::from_secs(10),
            warmup: std::time::Duration::ZERO,
            settle: std::time::Duration::from_secs(5),
            pin_cpus: true,
            drop_caches: true,
            repetitions: 5,
            confidence: 0.95,
            seed: 1,
        };
        let (file, text) = experiment(&opts).unwrap();
        assert_eq!((file.settle.as_secs(), file.pin_cpus, file.drop_caches), (5, true, true));
        for line in ["settle = \"5s\"", "pin_cpus = true", "drop_caches = true"] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
        (opts.settle, opts.pin_cpus, opts.drop_caches) = (std::time::Duration::ZERO, false, false);
        let (_, text) = experiment(&opts).unwrap();
        assert!(!text.contains("settle") && !text.contains("pin_cpus") && !text.contains("drop_caches"), "{text}");
    }
}
