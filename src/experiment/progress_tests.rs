//! The progress of `versus run` driven by a mock executor: the start banner's estimate is the dry run's,
//! the ETA before the first run is the plan's, after `--resume` it counts only the runs left, and the
//! countdown belongs to the warm-up and the measurement (the other steps are named, not counted down).

use std::time::Duration;

use super::plan::human;
use super::progress::Phase;
use super::*;
use crate::error::Result;
use crate::store::{Interval, RunResult, StartRun, Store, Summary};

const FILE: &str = r#"
name = "eta"
builds = ["a", "b"]
threads = [1, 4]
repetitions = 2
duration = "60s"
warmup = "5s"
[[workloads]]
test = "oltp_point_select"
"#;

/// Walks each run through the steps of the sandbox executor and records the phase the bar shows.
#[derive(Default)]
struct Steps {
    /// (what happened just before, the phase then) for the first run.
    phases: Vec<(&'static str, Phase)>,
    /// The ETA as each run began.
    etas: Vec<Duration>,
    runs: usize,
    interrupt_at: Option<usize>,
}

impl Executor for Steps {
    fn prepare(&mut self, _: &Plan, _: usize, progress: &mut Progress) -> Result<()> {
        progress.step("preparing");
        Ok(())
    }

    fn run(
        &mut self,
        _plan: &Plan,
        _run: &PlannedRun,
        started: &mut dyn FnMut(StartRun) -> Result<()>,
        progress: &mut Progress,
    ) -> RunOutcome {
        self.etas.push(progress.eta());
        let n = self.runs;
        self.runs += 1;
        let interval = Interval { t_s: 1.0, tps: 10.0, ..Default::default() };
        if self.interrupt_at == Some(n) {
            return RunOutcome::Interrupted { intervals: vec![interval] };
        }
        let first = n == 0;
        let mut seen = |what: &'static str, p: &Progress| {
            if first {
                self.phases.push((what, p.phase()));
            }
        };
        seen("run begins", progress);
        progress.step("restoring the prepared data");
        progress.step("starting the server");
        seen("server starting", progress);
        started(StartRun { server_version: "1.2.3".into(), command: serde_json::json!(["run"]) }).unwrap();
        progress.measuring(Duration::from_secs(5), Duration::from_secs(60));
        seen("warm-up begins", progress);
        progress.measuring(Duration::ZERO, Duration::from_secs(60));
        seen("measurement begins", progress);
        // A measurement that has ended: the bar does not sit at a countdown of 0.
        progress.measuring(Duration::ZERO, Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(40));
        progress.step("stopping the server");
        seen("stopping", progress);
        RunOutcome::Done(Box::new(RunResult {
            summary: Summary { events: 10, tps: 100.0, ..Default::default() },
            intervals: vec![interval],
            ..Default::default()
        }))
    }
}

fn setup() -> (tempfile::TempDir, Store, Plan) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.db")).unwrap();
    let plan = Plan::new(&ExperimentFile::parse(FILE).unwrap(), dir.path()).unwrap();
    (dir, store, plan)
}

fn run(plan: &Plan, store: &mut Store, ex: &mut Steps, resume: bool) -> (Outcome, Vec<String>) {
    let (mut progress, lines) = Progress::recording();
    let opts = RunOptions { resume, ..RunOptions::default() };
    let o = run_experiment(FILE, None, plan, store, ex, &opts, &mut progress).unwrap();
    let lines = lines.lock().unwrap().clone();
    (o, lines)
}

fn near(a: Duration, b: Duration) -> bool {
    a.abs_diff(b) < Duration::from_secs(1)
}

#[test]
fn the_banner_says_the_dry_runs_estimate_and_the_eta_starts_from_it() {
    let (_d, mut store, plan) = setup();
    let mut ex = Steps::default();
    let (o, lines) = run(&plan, &mut store, &mut ex, false);
    assert_eq!(o.done, 8);
    let dry = plan.describe();
    let estimate = format!("about {}", human(plan.estimate()));
    assert!(dry.contains(&format!("estimated duration: {estimate}\n")), "{dry}");
    assert_eq!(lines[0], format!("experiment eta: 8 runs, 8 to do ({estimate})"), "{lines:?}");
    // 8 runs of 5 s warm-up + 60 s each, and two preparations: minutes, known before any run ended.
    assert!(plan.estimate() > Duration::from_secs(8 * 65), "{:?}", plan.estimate());
    assert!(near(ex.etas[0], plan.estimate()), "{:?} vs {:?}", ex.etas[0], plan.estimate());
}

#[test]
fn the_countdown_is_the_warm_up_and_the_measurement_only() {
    let (_d, mut store, plan) = setup();
    let mut ex = Steps::default();
    let (_, lines) = run(&plan, &mut store, &mut ex, false);
    let phase = |what: &str| ex.phases.iter().find(|(w, _)| *w == what).unwrap().1.clone();
    assert_eq!(phase("run begins"), Phase::Step, "{:?}", ex.phases);
    assert_eq!(phase("server starting"), Phase::Step);
    assert_eq!(phase("server starting").countdown(), "", "a step is named by the bar, not counted down");
    let Phase::WarmUp(w) = phase("warm-up begins") else { panic!("{:?}", ex.phases) };
    assert!(w > Duration::from_secs(4) && w <= Duration::from_secs(5), "{w:?}");
    let Phase::Measuring(m) = phase("measurement begins") else { panic!("{:?}", ex.phases) };
    assert!(m > Duration::from_secs(59) && m <= Duration::from_secs(60), "{m:?}");
    assert_eq!(Phase::Measuring(Duration::from_secs(42)).countdown(), "(measuring: 42 s left) ");
    assert_eq!(Phase::WarmUp(Duration::from_secs(5)).countdown(), "(warm-up: 5 s left) ");
    assert_eq!(phase("stopping"), Phase::Step, "an ended measurement is not a countdown at 0");
    assert!(lines.iter().any(|l| l.trim() == "warming up 5 s, then measuring 1 min 00 s"), "{lines:?}");
    assert!(lines.iter().any(|l| l.trim() == "preparing"), "{lines:?}");
}

#[test]
fn after_a_resume_the_eta_counts_only_the_runs_left() {
    let (_d, mut store, plan) = setup();
    let mut ex = Steps { interrupt_at: Some(3), ..Steps::default() };
    let (o, _) = run(&plan, &mut store, &mut ex, false);
    assert_eq!((o.done, o.interrupted), (3, true));
    let mut again = Steps::default();
    let (o, lines) = run(&plan, &mut store, &mut again, true);
    assert_eq!(o.done, 5);
    let left: Vec<usize> = plan.runs[3..].iter().map(|r| r.cell).collect();
    let estimate: Duration = plan.run_estimates(&left, &|_| false).iter().sum();
    assert!(estimate < plan.estimate() * 3 / 4, "{estimate:?} vs {:?}", plan.estimate());
    assert_eq!(lines[0], format!("experiment eta: 8 runs, 5 to do (about {})", human(estimate)), "{lines:?}");
    assert!(near(again.etas[0], estimate), "{:?} vs {estimate:?}", again.etas[0]);
}
