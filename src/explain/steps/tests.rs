//! `--resume` with a scripted executor: what is reused, continued and measured, and what is refused.

use super::*;
use crate::experiment::{PlannedRun, RunOutcome};
use crate::store::{Interval, RunResult, StartRun, Status, Summary};

/// Counts runs; interrupts the run with this position among all its calls.
struct Script {
    calls: usize,
    interrupt_at: Option<usize>,
}

impl Executor for Script {
    fn prepare(&mut self, _: &Plan, _: usize, _: &mut Progress) -> Result<()> {
        Ok(())
    }
    fn run(
        &mut self,
        plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        _: &mut Progress,
    ) -> RunOutcome {
        let n = self.calls;
        self.calls += 1;
        started(StartRun { server_version: "10.11".into(), command: serde_json::json!(["run"]) }).unwrap();
        let interval = Interval { t_s: 1.0, tps: 10.0, ..Default::default() };
        if self.interrupt_at == Some(n) {
            return RunOutcome::Interrupted { intervals: vec![interval] };
        }
        let tps = 100.0 + plan.cells[run.cell].target as f64 + run.repetition as f64;
        RunOutcome::Done(Box::new(RunResult {
            summary: Summary { events: 10, tps, ..Default::default() },
            intervals: vec![interval],
            ..Default::default()
        }))
    }
}

/// A step's experiment as `versus explain` writes it (two probes, 3 repetitions, one thread count).
fn step(name: &str, duration: u32) -> (String, Plan) {
    let text = format!(
        r#"
name = "{name}"
description = "versus explain: B = system against A = system (step 1)"
threads = [4]
repetitions = 3
duration = {duration}
[[targets]]
name = "B"
build = "system"
[[targets]]
name = "A"
build = "system"
set = {{ sync_binlog = "0" }}
[[workloads]]
test = "oltp_read_only"
"#
    );
    let file = ExperimentFile::parse(&text).unwrap();
    let plan = Plan::new(&file, std::path::Path::new("/")).unwrap();
    (text, plan)
}

struct Env {
    _dir: tempfile::TempDir,
    store: Store,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("r.db")).unwrap();
        Env { _dir: dir, store }
    }

    /// One step of a search run with `resume` and `ex`.
    fn step(&mut self, number: usize, s: &(String, Plan), ex: &mut Script, resume: &mut Resume) -> Result<i64> {
        let mut experiments = Vec::new();
        run_or_reuse(
            number,
            &s.0,
            &s.1,
            &mut self.store,
            ex,
            &mut Progress::quiet(),
            resume,
            &mut experiments,
            &mut |_| {},
        )
    }
}

#[test]
fn an_interrupted_search_goes_on_where_it_stopped() {
    let mut env = Env::new();
    let (gap, split, confirm) = (step("x-gap", 10), step("x-split-2", 10), step("x-confirm", 10));
    // First search: the gap step (6 runs), then the split step is interrupted at its third run.
    let mut ex = Script { calls: 0, interrupt_at: Some(6 + 2) };
    let mut first = Resume::new(false);
    let gap_id = env.step(1, &gap, &mut ex, &mut first).unwrap();
    let err = env.step(2, &split, &mut ex, &mut first).unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
    let split_id = first.steps[1].2;
    assert_eq!(env.store.pending_runs(split_id).unwrap().len(), 4, "two runs done, one cut off, three to go");
    assert_eq!(env.store.experiment(split_id).unwrap().unwrap().status, Status::Interrupted);

    // Again with --resume: the gap step is reused (nothing runs), the split step continued (its 4
    // missing runs), the confirmation measured.
    let mut ex = Script { calls: 0, interrupt_at: None };
    let mut again = Resume::new(true);
    assert_eq!(env.step(1, &gap, &mut ex, &mut again).unwrap(), gap_id);
    assert_eq!(ex.calls, 0, "a finished step is not measured again");
    assert_eq!(env.step(2, &split, &mut ex, &mut again).unwrap(), split_id);
    assert_eq!(ex.calls, 4, "only the missing runs of the cut-off step");
    assert_eq!(env.store.experiment(split_id).unwrap().unwrap().status, Status::Done);
    let confirm_id = env.step(3, &confirm, &mut ex, &mut again).unwrap();
    assert_eq!(ex.calls, 4 + 6);
    let sources: Vec<Source> = again.steps.iter().map(|s| s.3).collect();
    assert_eq!(sources, [Source::Reused, Source::Continued, Source::Measured]);
    let note = again.note().unwrap();
    assert!(note.contains(&format!("step 1 (x-gap, id {gap_id}) reused")), "{note}");
    assert!(note.contains("step 2 (x-split-2"), "{note}");
    assert!(!note.contains("x-confirm") && note.ends_with("; 1 step was measured now"), "{note}");

    // A third time: everything is stored and finished, so nothing runs and the same ids come back.
    let mut ex = Script { calls: 0, interrupt_at: None };
    let mut third = Resume::new(true);
    let ids: Vec<i64> = [(1, &gap), (2, &split), (3, &confirm)]
        .into_iter()
        .map(|(n, s)| env.step(n, s, &mut ex, &mut third).unwrap())
        .collect();
    assert_eq!(ids, [gap_id, split_id, confirm_id]);
    assert_eq!(ex.calls, 0);
    assert!(!third.note().unwrap().contains("measured now"), "{:?}", third.note());
}

#[test]
fn resume_refuses_other_arguments_and_without_it_everything_is_measured() {
    let mut env = Env::new();
    let gap = step("x-gap", 10);
    let mut ex = Script { calls: 0, interrupt_at: None };
    // Nothing stored: --resume says so before anything runs.
    let err = env.step(1, &gap, &mut ex, &mut Resume::new(true)).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("no stored experiment is named 'x-gap'"), "{err}");
    assert_eq!(ex.calls, 0);
    let first = env.step(1, &gap, &mut ex, &mut Resume::new(false)).unwrap();
    // Other arguments (a longer duration): refused, naming the change.
    let longer = step("x-gap", 20);
    let err = env.step(1, &longer, &mut ex, &mut Resume::new(true)).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("duration"), "{err}");
    assert_eq!(ex.calls, 6);
    // Without --resume the same step is measured again, as a new experiment, and the caller learns
    // that --resume would have reused the stored one.
    let mut plain = Resume::new(false);
    let second = env.step(1, &gap, &mut ex, &mut plain).unwrap();
    assert_ne!(second, first);
    assert_eq!(ex.calls, 12);
    assert_eq!(plain.hint, Some(("x-gap".to_string(), first)));
    assert!(plain.note().is_none());
    // A later step that is not stored ends the reuse: the steps after it are measured even when an
    // older search stored them.
    let split = step("x-split-2", 10);
    let confirm = step("x-confirm", 10);
    env.step(3, &confirm, &mut ex, &mut Resume::new(false)).unwrap();
    let mut r = Resume::new(true);
    env.step(1, &gap, &mut ex, &mut r).unwrap();
    env.step(2, &split, &mut ex, &mut r).unwrap();
    let before = ex.calls;
    env.step(3, &confirm, &mut ex, &mut r).unwrap();
    assert_eq!(ex.calls, before + 6, "measured after a step that was measured now");
    let sources: Vec<Source> = r.steps.iter().map(|s| s.3).collect();
    assert_eq!(sources, [Source::Reused, Source::Measured, Source::Measured]);
}
