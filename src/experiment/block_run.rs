//! Running blocks of an experiment as a fleet task does (`versus run FILE --block K`): the experiment
//! is the stored one whose uid is the plan id (the first task creates it), and each block is measured
//! by one attempt on this host, after the host's fingerprint and canary are recorded. A block already
//! complete is skipped (before the canary runs); a host whose canary is an outlier of its class does not measure the block
//! (the attempt is recorded as rejected, at most [`MAX_REJECTIONS`] times per block) and the task asks
//! to be re-run.

use std::path::Path;

use super::blocks::Block;
use super::plan::Plan;
use super::progress::Progress;
use super::run::{Executor, RunOptions, new_experiment, run_experiment};
use crate::error::Result;
use crate::sampler::canary::{self, CanarySize};
use crate::sampler::{Fingerprint, HostFacts};
use crate::stats::outlier::canary_outlier;
use crate::store::{AttemptHost, AttemptStatus, BlockStart, Store};

/// Rejections of one block (outlying canaries) after which it is measured anyway.
pub const MAX_REJECTIONS: usize = 3;

/// What a block task did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlocksOutcome {
    /// The stored experiment.
    pub experiment_id: i64,
    /// Blocks measured to the end now.
    pub done: Vec<usize>,
    /// Blocks already complete (nothing done).
    pub skipped: Vec<usize>,
    /// Blocks measured now with failed runs.
    pub failed: Vec<usize>,
    /// Blocks not measured because this host's canary was an outlier.
    pub rejected: Vec<usize>,
    /// Ctrl-C / SIGTERM stopped the task.
    pub interrupted: bool,
}

/// Runs `blocks` of `plan` (plan id `plan_id`) into `store`; the canary's fsync probe runs in `dir`
/// (where the sandboxes' datadirs live).
#[allow(clippy::too_many_arguments)]
pub fn run_blocks(
    text: &str,
    path: Option<&Path>,
    plan: &Plan,
    plan_id: &str,
    blocks: &[Block],
    store: &mut Store,
    executor: &mut dyn Executor,
    progress: &mut Progress,
    dir: &Path,
) -> Result<BlocksOutcome> {
    let experiment_id = store.ensure_experiment(&new_experiment(text, path, plan, Some(dir)), plan_id)?;
    let facts = HostFacts::collect(Some(dir));
    let fingerprint = Fingerprint::of(&facts);
    let class = fingerprint.class();
    let mut out = BlocksOutcome { experiment_id, ..BlocksOutcome::default() };
    for block in blocks {
        let index = u32::try_from(block.index).unwrap_or(u32::MAX);
        // A finished block is skipped before the canary: a slow host must not reject (and have the
        // scheduler run again) a block that needs nothing from it.
        let attempts = store.block_attempts(experiment_id)?;
        if let Some(a) = attempts.iter().find(|a| a.block == index && a.status == AttemptStatus::Done) {
            eprintln!("block {} is already complete (attempt {}); nothing to do", block.index, a.attempt);
            out.skipped.push(block.index);
            continue;
        }
        let measured = canary::measure(dir, &CanarySize::default())?;
        let host = AttemptHost {
            host: facts.hostname.clone(),
            class: Some(class.clone()),
            fingerprint: serde_json::to_value(&fingerprint).unwrap_or_default(),
            canary: serde_json::to_value(measured).ok(),
        };
        if let Some(why) = outlier(store, &class, &measured)? {
            let rejections =
                attempts.iter().filter(|a| a.block == index && a.status == AttemptStatus::Rejected).count();
            if rejections < MAX_REJECTIONS {
                let n = store.reject_block(experiment_id, index, &host, &why)?;
                eprintln!("block {}: not measured on this host (attempt {n}): {why}", block.index);
                out.rejected.push(block.index);
                continue;
            }
            eprintln!("block {}: {why}; measured anyway after {rejections} rejections", block.index);
        }
        match store.begin_block(experiment_id, index, &host)? {
            BlockStart::AlreadyDone { attempt } => {
                eprintln!("block {} is already complete (attempt {attempt}); nothing to do", block.index);
                out.skipped.push(block.index);
            }
            BlockStart::Started { attempt_id, attempt } => {
                eprintln!("block {} (attempt {attempt}) on {}", block.index, facts.hostname.as_deref().unwrap_or("?"));
                let opts = RunOptions { block: Some((experiment_id, index + 1)), ..RunOptions::default() };
                let o = run_experiment(text, path, plan, store, executor, &opts, progress)?;
                let done = store.end_block(attempt_id, o.interrupted.then_some("interrupted"))?;
                if done {
                    out.done.push(block.index);
                } else {
                    out.failed.push(block.index);
                }
                if o.interrupted {
                    out.interrupted = true;
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// Why `c` is an outlier against the class's earlier canaries, if it is.
fn outlier(store: &Store, class: &str, c: &canary::Canary) -> Result<Option<String>> {
    let history = store.class_canaries(class)?;
    let series = |key: &str| history.iter().filter_map(|h| h.get(key).and_then(|v| v.as_f64())).collect::<Vec<_>>();
    for probe in &canary::PROBES {
        let value = (probe.value)(c);
        let check = canary_outlier(&series(probe.key), value, probe.min_ratio);
        if check.outlier {
            let (key, unit) = (probe.key, probe.unit);
            return Ok(Some(format!(
                "canary {key} = {value:.1} {unit} is an outlier of host class {class} (modified z = {:.1} over {} earlier canaries; {:.2}× their median, flagged from {}×)",
                check.z.unwrap_or(0.0),
                check.history,
                check.ratio.unwrap_or(f64::NAN),
                probe.min_ratio
            )));
        }
    }
    Ok(None)
}
