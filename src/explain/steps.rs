//! Resuming `versus explain`: every step of the search is a stored experiment, so a search stopped by
//! Ctrl-C or a crash goes on where it stopped when it is started again with `--resume` and the same
//! arguments. Each step the search asks for is first looked up: the latest stored experiment of the
//! step's name (`NAME-gap`, `NAME-split-N`, …) whose definition is the step's own — the same probes
//! with the same options, workload, threads, durations, repetitions, seed and description — is
//! **reused** when all its runs finished, or **continued** (only its missing runs are measured) when
//! it was cut off. From the first step that is not stored that way on, every step is measured anew.
//! The search decides from the samples alone, so the stored samples lead it down the same path; a
//! higher `--max-runs` is not part of a step, so a search that ran out of budget can be resumed with
//! more.

use crate::error::{Error, Result};
use crate::experiment::run::{Executor, RunOptions, changes, run_experiment};
use crate::experiment::{ExperimentFile, Plan, Progress};
use crate::store::Store;

/// Where a step's samples came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A stored experiment of an earlier run whose runs had all finished: nothing measured.
    Reused,
    /// A stored experiment cut off by an interruption: only its missing runs were measured.
    Continued,
    /// A new experiment.
    Measured,
}

/// What `--resume` reuses, step by step.
#[derive(Debug, Clone)]
pub struct Resume {
    asked: bool,
    /// Still looking up steps (until the first one that is not reused).
    on: bool,
    /// Steps so far, with the experiment each came from.
    pub steps: Vec<(usize, String, i64, Source)>,
    /// Without `--resume`: the stored experiment that `--resume` would have reused for the first step.
    pub hint: Option<(String, i64)>,
}

impl Resume {
    /// `asked`: `--resume` was given.
    pub fn new(asked: bool) -> Resume {
        Resume { asked, on: true, steps: vec![], hint: None }
    }

    /// A note for the report on the steps reused or continued, if any.
    pub fn note(&self) -> Option<String> {
        let said: Vec<String> = self
            .steps
            .iter()
            .filter(|s| s.3 != Source::Measured)
            .map(|(n, name, id, src)| {
                let how = if *src == Source::Reused { "reused" } else { "continued: only its missing runs measured" };
                format!("step {n} ({name}, id {id}) {how}")
            })
            .collect();
        let measured = self.steps.iter().filter(|s| s.3 == Source::Measured).count();
        let rest = match measured {
            0 => String::new(),
            1 => "; 1 step was measured now".to_string(),
            n => format!("; {n} steps were measured now"),
        };
        (!said.is_empty()).then(|| format!("--resume: {}{rest}", said.join("; ")))
    }
}

/// `--resume --dry-run`: an error, as the real run's first step gives, when no experiment named
/// `first_step` (the name of the search's first step) is stored.
pub fn check_resumable(store: &Store, first_step: &str) -> Result<()> {
    if store.latest_experiment_named(first_step)?.is_none() {
        return Err(Error::option(
            "--resume",
            format!(
                "no stored experiment is named '{first_step}': nothing to resume; start it with the same arguments, or without --resume"
            ),
        ));
    }
    Ok(())
}

/// The stored experiment of a step with the same definition: `Ok(Some(id))`, or why there is none.
fn stored_step(store: &Store, file: &ExperimentFile) -> Result<std::result::Result<i64, String>> {
    let Some(e) = store.latest_experiment_named(&file.name)? else {
        return Ok(Err(format!("no stored experiment is named '{}'", file.name)));
    };
    Ok(match ExperimentFile::parse(&e.definition) {
        Ok(before) if before == *file => Ok(e.id),
        Ok(before) => Err(format!(
            "the stored {} (experiment {}) was measured with other arguments ({})",
            file.name,
            e.id,
            changes(&before, file)
        )),
        Err(_) => Err(format!("the stored {} (experiment {}) cannot be read back", file.name, e.id)),
    })
}

/// Runs the experiment of step `number` (`text` is its definition, `plan` its plan), or reuses or
/// continues the stored one (see the module docs). Returns the experiment's id; an interruption is
/// [`Error::Interrupted`], with the runs measured so far stored.
#[allow(clippy::too_many_arguments)]
pub fn run_or_reuse(
    number: usize,
    text: &str,
    plan: &Plan,
    store: &mut Store,
    executor: &mut dyn Executor,
    progress: &mut Progress,
    resume: &mut Resume,
    experiments: &mut Vec<(i64, String)>,
    log: &mut dyn FnMut(&str),
) -> Result<i64> {
    let file = &plan.file;
    let mut found = None;
    if resume.on {
        match stored_step(store, file)? {
            Ok(id) if resume.asked => found = Some(id),
            Ok(id) => {
                if number == 1 {
                    log(&format!(
                        "an earlier search with these arguments is stored ({}, id {id}): --resume reuses the steps it \
                         measured; measuring them again",
                        file.name
                    ));
                    resume.hint = Some((file.name.clone(), id));
                }
                resume.on = false;
            }
            Err(why) if resume.asked && number == 1 => {
                return Err(Error::option(
                    "--resume",
                    format!("{why}: nothing to resume; start it with the same arguments, or without --resume"),
                ));
            }
            Err(_) => resume.on = false,
        }
    }
    let (id, source) = match found {
        Some(id) if store.pending_runs(id)?.is_empty() => {
            log(&format!("step {number} ({}): reusing experiment {id}, measured before (--resume)", file.name));
            (id, Source::Reused)
        }
        _ => {
            // From the first step measured now on, nothing stored is reused: later stored steps
            // belong to an earlier search that went on without this one's measurements.
            resume.on = false;
            let (opts, source) = match found {
                Some(id) => {
                    log(&format!("step {number} ({}): continuing experiment {id} (--resume)", file.name));
                    (RunOptions { resume: true, experiment_id: Some(id), ..RunOptions::default() }, Source::Continued)
                }
                None => (RunOptions::default(), Source::Measured),
            };
            let o = run_experiment(text, None, plan, store, executor, &opts, progress)?;
            experiments.push((o.experiment_id, file.name.clone()));
            resume.steps.push((number, file.name.clone(), o.experiment_id, source));
            if o.interrupted {
                return Err(Error::Interrupted);
            }
            return Ok(o.experiment_id);
        }
    };
    experiments.push((id, file.name.clone()));
    resume.steps.push((number, file.name.clone(), id, source));
    Ok(id)
}

#[cfg(test)]
mod tests;
