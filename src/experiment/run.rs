//! Running a plan: create (or resume) the stored experiment, prepare data when a run first needs it,
//! execute the runs in order and commit each one before the next starts.
//!
//! What a run *does* is behind [`Executor`]: `SandboxExecutor` (in `sandbox_executor`) starts real
//! servers; tests use a scripted executor to check scheduling, failures and resume deterministically.

use std::collections::HashMap;
use std::path::Path;

use super::adaptive;
use super::outcome::{Outcome, RunOutcome};
use super::pace::Pace;
use super::plan::{Plan, PlannedRun, TargetKind, prepare_estimate};
use super::progress::Progress;
use super::spec::ExperimentFile;
use super::unstored::{Recovery, unstored};
use crate::error::{Error, Result};
use crate::sampler::HostFacts;
use crate::store::{NewCell, NewExperiment, NewRun, StartRun, Status, Store};

/// Does the work of an experiment.
pub trait Executor {
    /// Prepares the data of `plan.preparations[index]` (once per experiment invocation).
    fn prepare(&mut self, plan: &Plan, index: usize, progress: &mut Progress) -> Result<()>;

    /// Executes one run. `started` must be called once the server is up and the workload is about to
    /// start, with the server version and the exact command; it marks the run as running in the store.
    fn run(
        &mut self,
        _plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
    ) -> RunOutcome;

    /// Where the servers' datadirs live, so that the experiment records the filesystem they are on
    /// (`None`: not known, e.g. external servers).
    fn datadir_root(&self) -> Option<&Path> {
        None
    }

    /// Whether `plan.preparations[index]` is already prepared (by an earlier experiment of this
    /// executor), so that [`Executor::prepare`] costs no time.
    fn is_prepared(&self, _plan: &Plan, _index: usize) -> bool {
        false
    }
}

/// How `versus run` was invoked.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Continue the latest experiment of the same name instead of starting a new one.
    pub resume: bool,
    /// With `resume`: continue this experiment (by id) rather than the latest of the name.
    pub experiment_id: Option<i64>,
    /// A fleet block: run only the pending runs of this repetition of this stored experiment (see
    /// `experiment::block_run`); other blocks may be running elsewhere.
    pub block: Option<(i64, u32)>,
    /// The noise band of the adaptive looks [default: the calibrated band of the host class and
    /// workload, else [`crate::stats::DEFAULT_NOISE_BAND`]; see [`adaptive::Bands`]].
    pub noise_band: Option<f64>,
    /// Overall confidence of the adaptive looks [default: [`crate::stats::DEFAULT_CONFIDENCE`]].
    pub confidence: Option<f64>,
    /// A hard end: no run starts whose estimate ([`Plan::run_estimate`], plus the preparation it needs
    /// first), corrected by the worst overrun seen so far ([`RunOptions::pace`]), would take it past this
    /// instant; the runs left stay pending (`versus advise`'s budget).
    pub deadline: Option<std::time::Instant>,
    /// What runs and preparations took against their estimates; share one across experiments that run
    /// under one deadline.
    pub pace: Pace,
}

/// Runs (or resumes) the experiment in `file` with `text` as its definition.
pub fn run_experiment(
    text: &str,
    path: Option<&Path>,
    plan: &Plan,
    store: &mut Store,
    executor: &mut dyn Executor,
    opts: &RunOptions,
    progress: &mut Progress,
) -> Result<Outcome> {
    let file = &plan.file;
    let experiment_id = match opts.block {
        Some((id, _)) => id,
        None if opts.resume => find_resumable(file, opts.experiment_id, store)?,
        None => store.create_experiment(&new_experiment(text, path, plan, executor.datadir_root()))?,
    };
    // A recovery file must name the experiment by uid: learn it now, while the store answers.
    store.experiment_uid(experiment_id)?;
    let recovery = Recovery::new(opts.block.map(|(_, repetition)| repetition), path, store);
    let in_block = |r: &crate::store::RunRow| opts.block.is_none_or(|(_, rep)| r.repetition == rep);
    let stored: Vec<_> = store.runs(experiment_id)?.into_iter().filter(in_block).collect();
    let mut pending: Vec<_> = store.pending_runs(experiment_id)?.into_iter().filter(in_block).collect();
    let prepared = |p: usize| executor.is_prepared(plan, p);
    // Under a shared pace (advise's steps) the ETA starts from what earlier experiments' runs took.
    progress.begin(stored.len(), stored.len() - pending.len(), plan, &pending, &prepared, opts.pace.typical());
    store.set_experiment_status(experiment_id, Status::Running)?;
    // Fleet blocks are the fixed rounds; only a whole experiment adds rounds.
    let adaptive = match file.repetitions.is_adaptive() && opts.block.is_none() {
        true => Some(adaptive::design(&file.repetitions, opts.confidence.unwrap_or(crate::stats::DEFAULT_CONFIDENCE))?),
        false => None,
    };
    let mut prepared: HashMap<usize, std::result::Result<(), String>> = HashMap::new();
    let mut outcome = Outcome { experiment_id, done: 0, failed: 0, interrupted: false, out_of_time: false };
    let bands = match adaptive {
        Some(_) => {
            let b = adaptive::Bands::for_experiment(store, experiment_id, plan, opts.noise_band)?;
            progress.note(&format!("noise band of the looks: {}", b.source()));
            Some(b)
        }
        None => None,
    };
    loop {
        run_pending(plan, &pending, store, executor, progress, &mut prepared, &mut outcome, opts, &recovery)?;
        let open = adaptive.as_ref().filter(|_| !outcome.interrupted && !outcome.out_of_time);
        let (Some(seq), Some(bands)) = (open, bands.as_ref()) else { break };
        let decision = adaptive::decide(plan, &store.runs(experiment_id)?, seq, bands)?;
        progress.note(decision.describe().trim_end());
        let Some(round) = decision.next else { break };
        let runs: Vec<(&str, u32)> =
            plan.round(round).iter().map(|r| (plan.cells[r.cell].key.as_str(), r.repetition)).collect();
        store.add_runs(experiment_id, &runs)?;
        progress.more_runs(runs.len());
        pending = store.pending_runs(experiment_id)?;
    }
    let status = if outcome.interrupted {
        Status::Interrupted
    } else if store.pending_runs(experiment_id)?.is_empty() {
        finished_status(store, experiment_id)?
    } else if opts.block.is_some() {
        // Other blocks are still to run, here or on other hosts.
        Status::Running
    } else {
        Status::Interrupted
    };
    store.set_experiment_status(experiment_id, status)?;
    progress.end(&outcome);
    Ok(outcome)
}

/// Executes `pending` in order, committing each run before the next starts; stops before a run that would
/// end after `opts.deadline` by its estimate (and its preparation's, when not yet prepared), corrected by
/// the worst overrun of `opts.pace`.
#[allow(clippy::too_many_arguments)]
fn run_pending(
    plan: &Plan,
    pending: &[crate::store::RunRow],
    store: &mut Store,
    executor: &mut dyn Executor,
    progress: &mut Progress,
    prepared: &mut HashMap<usize, std::result::Result<(), String>>,
    outcome: &mut Outcome,
    opts: &RunOptions,
    recovery: &Recovery,
) -> Result<()> {
    let cell_index: HashMap<&str, usize> = plan.cells.iter().enumerate().map(|(i, c)| (c.key.as_str(), i)).collect();
    for row in pending {
        let Some(&cell) = cell_index.get(row.cell.key.as_str()) else {
            return Err(Error::Other(format!("stored cell '{}' is not in the plan", row.cell.key)));
        };
        let prep = plan.cells[cell].preparation;
        let run_estimate = plan.run_estimate(cell);
        let prep_estimate = match prepared.contains_key(&prep) || executor.is_prepared(plan, prep) {
            true => None,
            false => Some(prepare_estimate(plan.preparations[prep].rows)),
        };
        let needs =
            opts.pace.worst_run(run_estimate) + prep_estimate.map(|e| opts.pace.worst_prepare(e)).unwrap_or_default();
        if opts.deadline.is_some_and(|d| std::time::Instant::now() + needs > d) {
            progress.note("stopping: the next run would end after the time limit");
            outcome.out_of_time = true;
            break;
        }
        let planned = PlannedRun { cell, repetition: row.repetition };
        progress.run_begins(plan, &planned);
        if crate::interrupt::is_interrupted() {
            outcome.interrupted = true;
            break;
        }
        let ready = prepared
            .entry(prep)
            .or_insert_with(|| {
                let t = std::time::Instant::now();
                let r = executor.prepare(plan, prep, progress).map_err(|e| e.to_string());
                if let (Some(e), Ok(())) = (prep_estimate, &r) {
                    opts.pace.prepare_took(e, t.elapsed());
                }
                r
            })
            .clone();
        let run_started = std::time::Instant::now();
        let mut marked = false;
        // The store refusing the run's start is the store's failure, not the run's: the run must not be
        // recorded failed (a scheduler would not run its block again), and nothing else can be stored.
        let mut unstarted: Option<String> = None;
        let result = match ready {
            Err(e) => RunOutcome::Failed { error: format!("preparing the data failed: {e}"), intervals: vec![] },
            Ok(()) => executor.run(
                plan,
                &planned,
                &mut |start: StartRun| {
                    marked = true;
                    store.start_run(row.id, &start).inspect_err(|e| unstarted = Some(e.to_string()))
                },
                progress,
            ),
        };
        if let Some(e) = unstarted {
            return Err(Error::Other(e));
        }
        if !marked {
            store.start_run(row.id, &StartRun { server_version: String::new(), command: serde_json::Value::Null })?;
        }
        match result {
            RunOutcome::Done(r) => {
                opts.pace.run_took(run_estimate, run_started.elapsed());
                progress.run_done(&r.summary, r.efficiency.replication.as_ref());
                if let Err(e) = store.finish_run(row.id, &r) {
                    return Err(unstored(store, outcome.experiment_id, row.id, &r, e, recovery));
                }
                outcome.done += 1;
            }
            // A run that fails while versus is stopping was most likely stopped by the same signal (a
            // scheduler signals the whole process group): it is interrupted, to be run again, not failed.
            RunOutcome::Failed { intervals, .. } if crate::interrupt::is_interrupted() => {
                store.interrupt_run(row.id, &intervals)?;
                outcome.interrupted = true;
                break;
            }
            RunOutcome::Failed { error, intervals } => {
                progress.run_failed(row.id, &error);
                store.fail_run(row.id, &error, &intervals)?;
                outcome.failed += 1;
            }
            RunOutcome::Interrupted { intervals } => {
                store.interrupt_run(row.id, &intervals)?;
                outcome.interrupted = true;
                break;
            }
        }
    }
    Ok(())
}

/// How an experiment with no pending runs ended: `failed` when any of its runs failed.
pub fn finished_status(store: &Store, experiment_id: i64) -> Result<Status> {
    store.finished_status(experiment_id)
}

/// The experiment to store for `plan`, defined by `text` from `path`, with the facts of this host and of
/// the filesystem that holds `datadir`.
pub fn new_experiment(text: &str, path: Option<&Path>, plan: &Plan, datadir: Option<&Path>) -> NewExperiment {
    let file = &plan.file;
    let cells = plan
        .cells
        .iter()
        .map(|c| {
            let t = &plan.targets[c.target];
            let w = &plan.workloads[c.workload];
            let (build, config) = match &t.kind {
                TargetKind::Sandbox { build, config, .. } => (Some(build.clone()), Some(config.clone())),
                TargetKind::External { .. } => (None, None),
            };
            NewCell {
                key: c.key.clone(),
                target: t.label.clone(),
                build,
                config,
                workload: w.label(),
                threads: c.threads,
                workload_options: w.stored_options(),
            }
        })
        .collect();
    let runs = plan.runs.iter().map(|r| NewRun { cell: r.cell, repetition: r.repetition }).collect();
    NewExperiment {
        name: file.name.clone(),
        file: path.map(|p| p.display().to_string()),
        definition: text.to_string(),
        seed: plan.seed,
        host: HostFacts::collect(datadir),
        cells,
        runs,
    }
}

fn find_resumable(file: &ExperimentFile, id: Option<i64>, store: &Store) -> Result<i64> {
    let found = match id {
        Some(id) => store.experiment(id)?.filter(|e| e.name == file.name),
        None => store.latest_experiment_named(&file.name)?,
    };
    let Some(e) = found else {
        return Err(Error::option(
            "--resume",
            format!("no stored experiment is named '{}'; run it without --resume first", file.name),
        ));
    };
    // Compare meanings, not bytes: a comment or a reordered key does not change the experiment.
    match ExperimentFile::parse(&e.definition) {
        Ok(before) if before == *file => {}
        before => {
            let what = before.map(|b| changes(&b, file)).unwrap_or_else(|_| "its definition".to_string());
            return Err(Error::option(
                "--resume",
                format!(
                    "the experiment file changed since experiment {} started ({what}); undo the change, or run without --resume to start a new experiment",
                    e.id
                ),
            ));
        }
    }
    Ok(e.id)
}

/// Names the top-level settings that differ between two versions of an experiment file.
pub fn changes(before: &ExperimentFile, after: &ExperimentFile) -> String {
    let a = toml::Value::try_from(before).unwrap_or(toml::Value::Boolean(false));
    let b = toml::Value::try_from(after).unwrap_or(toml::Value::Boolean(false));
    let (Some(a), Some(b)) = (a.as_table(), b.as_table()) else { return "its definition".into() };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if !x.is_table() && !x.is_array() => format!("{k}: {x} → {y}"),
            _ => format!("{k} changed"),
        })
        .collect();
    if changed.is_empty() { "comments or layout changed".into() } else { changed.join(", ") }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
