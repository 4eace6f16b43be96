//! Tests of [`super`] with a scripted executor.
use super::*;
use crate::store::{Interval, RunResult, Summary};

const FILE: &str = r#"
name = "sched"
builds = ["a", "b"]
threads = [1, 4]
repetitions = 2
duration = 1
[[workloads]]
test = "oltp_point_select"
"#;

/// Scripted executor: counts calls, fails or interrupts chosen runs by their position.
struct Script {
    prepares: usize,
    calls: Vec<(usize, u32)>,
    fail_at: Option<usize>,
    interrupt_at: Option<usize>,
    /// The progress's ETA as each run began.
    etas: Vec<std::time::Duration>,
}

impl Executor for Script {
    fn prepare(&mut self, _: &Plan, _: usize, _: &mut Progress) -> Result<()> {
        self.prepares += 1;
        Ok(())
    }
    fn run(
        &mut self,
        plan: &Plan,
        run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
    ) -> RunOutcome {
        self.etas.push(progress.eta());
        let n = self.calls.len();
        self.calls.push((run.cell, run.repetition));
        let interval = Interval { t_s: 1.0, tps: 10.0, ..Default::default() };
        if self.fail_at == Some(n) {
            return RunOutcome::Failed { error: "server died".into(), intervals: vec![interval] };
        }
        started(StartRun { server_version: "1.2.3".into(), command: serde_json::json!(["run"]) }).unwrap();
        if self.interrupt_at == Some(n) {
            return RunOutcome::Interrupted { intervals: vec![interval] };
        }
        let tps = 100.0 + plan.cells[run.cell].threads as f64;
        RunOutcome::Done(Box::new(RunResult {
            summary: Summary { events: 10, tps, ..Default::default() },
            intervals: vec![interval],
            ..Default::default()
        }))
    }
}

fn setup() -> (tempfile::TempDir, Store, ExperimentFile, Plan) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.db")).unwrap();
    let file = ExperimentFile::parse(FILE).unwrap();
    let plan = Plan::new(&file, dir.path()).unwrap();
    (dir, store, file, plan)
}

fn go(
    store: &mut Store,
    file: &ExperimentFile,
    text: &str,
    _plan: &Plan,
    ex: &mut Script,
    resume: bool,
) -> Result<Outcome> {
    // The plan of `file` itself, so that a changed file is what the store sees.
    let own = Plan::new(file, Path::new("/")).unwrap();
    run_experiment(text, None, &own, store, ex, &RunOptions { resume, ..RunOptions::default() }, &mut Progress::quiet())
}

#[test]
fn the_experiment_records_the_filesystem_of_the_datadirs() {
    let (dir, _store, _file, plan) = setup();
    let e = new_experiment(FILE, None, &plan, Some(&dir.path().join("experiments/sched")));
    let d = e.host.datadir.expect("the temp dir is on some mount");
    assert!(!d.fs_type.is_empty(), "{d:?}");
    assert!(new_experiment(FILE, None, &plan, None).host.datadir.is_none());
}

#[test]
fn runs_everything_in_plan_order_and_prepares_once_per_shape() {
    let (_d, mut store, file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] };
    let o = go(&mut store, &file, FILE, &plan, &mut ex, false).unwrap();
    assert_eq!((o.done, o.failed, o.interrupted), (8, 0, false));
    assert_eq!(ex.prepares, 2, "one preparation per build");
    let expected: Vec<(usize, u32)> = plan.runs.iter().map(|r| (r.cell, r.repetition)).collect();
    assert_eq!(ex.calls, expected);
    let runs = store.runs(o.experiment_id).unwrap();
    assert!(runs.iter().all(|r| r.status == Status::Done && r.server_version.as_deref() == Some("1.2.3")));
    assert_eq!(store.experiment(o.experiment_id).unwrap().unwrap().status, Status::Done);
}

#[test]
fn no_run_starts_that_would_end_after_the_deadline() {
    let (_d, mut store, _file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] };
    let estimate = plan.run_estimate(0);
    assert!(estimate >= std::time::Duration::from_secs(2), "{estimate:?}");
    // Less time than one run is estimated to take: nothing starts, everything stays pending.
    let deadline = Some(std::time::Instant::now() + estimate / 2);
    let opts = RunOptions { deadline, ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert_eq!((o.done, o.failed, o.interrupted, o.out_of_time), (0, 0, false, true));
    assert!(ex.calls.is_empty() && ex.prepares == 0);
    assert_eq!(store.pending_runs(o.experiment_id).unwrap().len(), 8);
    assert_eq!(store.experiment(o.experiment_id).unwrap().unwrap().status, Status::Interrupted);
    // Time for all of them (the mock's runs take no time), the preparation included.
    let deadline = Some(std::time::Instant::now() + (estimate + prepare_estimate(plan.preparations[0].rows)) * 2);
    let opts = RunOptions { deadline, resume: true, ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert_eq!((o.done, o.out_of_time), (8, false));
}

#[test]
fn the_overrun_seen_so_far_and_the_preparation_count_against_the_deadline() {
    let (_d, mut store, _file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] };
    let (run, prep) = (plan.run_estimate(0), prepare_estimate(plan.preparations[0].rows));
    // Room for the first run and its preparation as estimated, twice over; but a run before took three
    // times its estimate: nothing starts.
    let pace = Pace::default();
    pace.run_took(run, run * 3);
    let deadline = Some(std::time::Instant::now() + (run + prep) * 2);
    let opts = RunOptions { deadline, pace: pace.clone(), ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert_eq!((o.done, o.out_of_time), (0, true));
    assert!(ex.calls.is_empty() && ex.prepares == 0);
    // Room for the first run alone, corrected, but not for the preparation it needs first: nothing.
    let deadline = Some(std::time::Instant::now() + run * 3 + prep);
    let opts = RunOptions { deadline, pace: pace.clone(), resume: true, ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert_eq!((o.done, o.out_of_time), (0, true));
    // Room for both, corrected: everything runs (the mock's runs take no time and never lower the
    // correction).
    let deadline = Some(std::time::Instant::now() + (run + prep) * 3 + std::time::Duration::from_secs(5));
    let opts = RunOptions { deadline, pace: pace.clone(), resume: true, ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert_eq!((o.done, o.out_of_time), (8, false));
    assert_eq!(pace.worst_run(run), run * 3);
}

#[test]
fn a_preparation_the_executor_already_holds_costs_no_time() {
    struct Held(Script);
    impl Executor for Held {
        fn prepare(&mut self, p: &Plan, i: usize, pr: &mut Progress) -> Result<()> {
            self.0.prepare(p, i, pr)
        }
        fn run(
            &mut self,
            p: &Plan,
            r: &PlannedRun,
            s: &mut dyn FnMut(StartRun) -> Result<()>,
            pr: &mut Progress,
        ) -> RunOutcome {
            self.0.run(p, r, s, pr)
        }
        fn is_prepared(&self, _: &Plan, _: usize) -> bool {
            true
        }
    }
    let (_d, mut store, _file, plan) = setup();
    let run = plan.run_estimate(0);
    let mut ex = Held(Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] });
    let deadline = Some(std::time::Instant::now() + run + std::time::Duration::from_millis(500));
    let opts = RunOptions { deadline, ..RunOptions::default() };
    let o = run_experiment(FILE, None, &plan, &mut store, &mut ex, &opts, &mut Progress::quiet()).unwrap();
    assert!(o.done >= 1, "the first run fits without a preparation: {o:?}");
}

#[test]
fn a_failed_run_is_recorded_and_the_experiment_goes_on() {
    let (_d, mut store, file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: Some(2), interrupt_at: None, etas: vec![] };
    let o = go(&mut store, &file, FILE, &plan, &mut ex, false).unwrap();
    assert_eq!((o.done, o.failed), (7, 1));
    let failed: Vec<_> =
        store.runs(o.experiment_id).unwrap().into_iter().filter(|r| r.status == Status::Failed).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].error.as_deref(), Some("server died"));
    assert_eq!(failed[0].order_index, 2);
    let detail = store.run(failed[0].id).unwrap().unwrap();
    assert_eq!(detail.intervals.len(), 1, "partial intervals are kept");
    let e = store.experiment(o.experiment_id).unwrap().unwrap();
    assert_eq!(e.status, Status::Partial, "an experiment with a failed run is not done; 7 done: partial");
}

#[test]
fn interrupt_then_resume_runs_exactly_what_is_missing() {
    let (_d, mut store, file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: Some(3), etas: vec![] };
    let o = go(&mut store, &file, FILE, &plan, &mut ex, false).unwrap();
    assert!(o.interrupted);
    assert_eq!(o.done, 3);
    assert_eq!(store.experiment(o.experiment_id).unwrap().unwrap().status, Status::Interrupted);
    let mut again = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] };
    let o2 = go(&mut store, &file, FILE, &plan, &mut again, true).unwrap();
    assert_eq!(o2.experiment_id, o.experiment_id);
    assert_eq!(o2.done, 5);
    let expected: Vec<(usize, u32)> = plan.runs[3..].iter().map(|r| (r.cell, r.repetition)).collect();
    assert_eq!(again.calls, expected, "the interrupted run and the rest, nothing twice");
    // The ETA before the first run is the plan's estimate of all runs; after the resume, of the
    // runs left only; and it counts down run by run.
    // (Each estimate includes the preparations the runs need: this executor holds none.)
    let estimate = |runs: &[PlannedRun]| {
        let cells: Vec<usize> = runs.iter().map(|r| r.cell).collect();
        plan.run_estimates(&cells, &|_| false).iter().sum::<std::time::Duration>()
    };
    assert_eq!(estimate(&plan.runs), plan.estimate(), "the dry run's estimate");
    let near = |a: std::time::Duration, b: std::time::Duration| a.abs_diff(b) < std::time::Duration::from_secs(1);
    assert!(estimate(&plan.runs) > std::time::Duration::ZERO);
    assert!(near(ex.etas[0], estimate(&plan.runs)), "{:?} vs {:?}", ex.etas[0], estimate(&plan.runs));
    assert!(near(again.etas[0], estimate(&plan.runs[3..])), "{:?}", again.etas);
    // Later ETAs scale by how long this invocation's runs took (here: milliseconds, with jitter), so
    // they are not strictly monotone run to run; each is below the estimate they started from.
    assert!(again.etas[1..].iter().all(|e| *e < again.etas[0]), "{:?}", again.etas);
    let runs = store.runs(o.experiment_id).unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r.status == Status::Done));
    let mut nothing = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: None, etas: vec![] };
    let o3 = go(&mut store, &file, FILE, &plan, &mut nothing, true).unwrap();
    assert_eq!((o3.done, nothing.prepares), (0, 0));
}

#[test]
fn an_adaptive_experiment_adds_rounds_until_its_comparisons_are_decided() {
    // Scripted tps: b is 40 % faster than a, with a little noise: decided at the first look.
    let text = FILE
        .replace("repetitions = 2", "repetitions = { min = 3, max = 5 }")
        .replace("threads = [1, 4]", "threads = [1]");
    let file = ExperimentFile::parse(&text).unwrap();
    let plan = Plan::new(&file, Path::new("/")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("v.db")).unwrap();
    let mut ex = Tps { factor: 1.4, calls: vec![] };
    let o = run_experiment(&text, None, &plan, &mut store, &mut ex, &RunOptions::default(), &mut Progress::quiet())
        .unwrap();
    assert_eq!(o.done, 6, "3 rounds of 2 cells, then stopped: {:?}", ex.calls);
    // No difference: every round up to the maximum, each round every cell once.
    let mut ex = Tps { factor: 1.0, calls: vec![] };
    let o = run_experiment(&text, None, &plan, &mut store, &mut ex, &RunOptions::default(), &mut Progress::quiet())
        .unwrap();
    assert_eq!(o.done, 10, "{:?}", ex.calls);
    for rep in 1..=5 {
        let mut cells: Vec<usize> = ex.calls.iter().filter(|c| c.1 == rep).map(|c| c.0).collect();
        cells.sort();
        assert_eq!(cells, vec![0, 1], "round {rep}");
    }
    let runs = store.runs(o.experiment_id).unwrap();
    assert_eq!(runs.len(), 10);
    assert!(runs.iter().all(|r| r.status == Status::Done));
    assert_eq!(store.experiment(o.experiment_id).unwrap().unwrap().status, Status::Done);
    let order: Vec<(usize, u32)> =
        runs.iter().map(|r| (if r.cell.target == "a" { 0 } else { 1 }, r.repetition)).collect();
    let planned: Vec<(usize, u32)> = (1..=5).flat_map(|k| plan.round(k)).map(|r| (r.cell, r.repetition)).collect();
    assert_eq!(order, planned, "stored in the order the rounds were planned");
}

/// Executor with scripted tps: target b is `factor` × target a, both with a fixed jitter.
struct Tps {
    factor: f64,
    calls: Vec<(usize, u32)>,
}

impl Executor for Tps {
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
        self.calls.push((run.cell, run.repetition));
        started(StartRun { server_version: "x".into(), command: serde_json::Value::Null }).unwrap();
        let jitter = [1.0, 1.03, 0.97, 1.02, 0.98, 1.01][(self.calls.len() - 1) % 6];
        let side = if plan.cells[run.cell].target == 0 { 1.0 } else { self.factor };
        let summary = Summary { tps: 100.0 * side * jitter, ..Summary::default() };
        RunOutcome::Done(Box::new(RunResult { summary, ..RunResult::default() }))
    }
}

#[test]
fn resume_refuses_a_changed_file_and_names_the_change() {
    let (_d, mut store, file, plan) = setup();
    let mut ex = Script { prepares: 0, calls: vec![], fail_at: None, interrupt_at: Some(0), etas: vec![] };
    go(&mut store, &file, FILE, &plan, &mut ex, false).unwrap();
    let text = FILE.replace("repetitions = 2", "repetitions = 3");
    let changed = ExperimentFile::parse(&text).unwrap();
    let err = go(&mut store, &changed, &text, &plan, &mut ex, true).unwrap_err().to_string();
    assert!(err.contains("repetitions: 2 → 3"), "{err}");
    let text = format!("# a comment\n{FILE}");
    let same = ExperimentFile::parse(&text).unwrap();
    assert!(go(&mut store, &same, &text, &plan, &mut ex, true).is_ok(), "comments do not block a resume");
    let other = ExperimentFile::parse(&FILE.replace("\"sched\"", "\"other\"")).unwrap();
    let err = go(&mut store, &other, FILE, &plan, &mut ex, true).unwrap_err().to_string();
    assert!(err.contains("no stored experiment is named 'other'"), "{err}");
}
