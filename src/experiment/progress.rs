//! Progress of an experiment on stderr: a bar with the cell count, the current cell, a countdown of the
//! current run and an ETA when stderr is a terminal; one plain line per run otherwise.
//!
//! The ETA is versus's own ([`eta`]), not the bar's rate: before the first run it is the plan's estimate
//! of the runs left ([`Plan::run_estimates`], the figures `--dry-run` adds up), after `--resume` it
//! counts only what is left, and once runs of this invocation have finished it scales the estimate by
//! how long they really took.
//!
//! The countdown belongs to the measurement: while the server is restored, started, prewarmed or the
//! data prepared, the bar names that step; once the workload says it measures
//! ([`Progress::measuring`]) it counts down the warm-up, then the measured time.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::outcome::Outcome;
use super::plan::{Plan, PlannedRun};
use crate::sampler::replication::ReplicationFigures;
use crate::store::{RunRow, Summary};

/// What the ETA is computed from.
#[derive(Debug, Clone, Default)]
struct Clock {
    /// The plan's estimate of each pending run, in run order.
    estimates: Vec<Duration>,
    /// How many of them have ended in this invocation.
    ended: usize,
    /// Estimated and real durations of the runs that ended in this invocation.
    spent: Vec<(Duration, Duration)>,
    /// When the current run started.
    run_started: Option<Instant>,
    /// The timed part of the current run: when it began, its warm-up and measured time.
    timed: Option<(Instant, Duration, Duration)>,
}

/// What the current run is doing, for the bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Between runs.
    Idle,
    /// A step that is not measured (restore, start, prepare, prewarm, stop).
    Step,
    /// The warm-up, with what is left of it.
    WarmUp(Duration),
    /// The measurement, with what is left of it.
    Measuring(Duration),
}

impl Phase {
    /// The bar's text for the phase (empty when there is no countdown).
    pub fn countdown(&self) -> String {
        match self {
            Phase::WarmUp(d) => format!("(warm-up: {} left) ", human(*d)),
            Phase::Measuring(d) => format!("(measuring: {} left) ", human(*d)),
            Phase::Idle | Phase::Step => String::new(),
        }
    }
}

/// The time left: the estimates of the runs not yet ended, scaled by how long the runs of this
/// invocation took against their estimates (when there are some), less what the current run has spent
/// (never below zero for it).
pub fn eta(left: &[Duration], spent: &[(Duration, Duration)], current: Duration) -> Duration {
    let (est, real) = spent.iter().fold((0.0, 0.0), |(e, r), (a, b)| (e + a.as_secs_f64(), r + b.as_secs_f64()));
    let scale = if est > 0.0 { real / est } else { 1.0 };
    let mut total = 0.0;
    for (i, d) in left.iter().enumerate() {
        let d = d.as_secs_f64() * scale;
        total += if i == 0 { (d - current.as_secs_f64()).max(0.0) } else { d };
    }
    Duration::from_secs_f64(total)
}

pub use super::plan::human;

impl Clock {
    fn current(&self) -> Duration {
        self.run_started.map(|t| t.elapsed()).unwrap_or_default()
    }

    fn eta(&self) -> Duration {
        eta(&self.estimates[self.ended.min(self.estimates.len())..], &self.spent, self.current())
    }

    fn phase(&self) -> Phase {
        if self.run_started.is_none() {
            return Phase::Idle;
        }
        let Some((start, warmup, duration)) = self.timed else { return Phase::Step };
        let spent = start.elapsed();
        match (warmup.checked_sub(spent), (warmup + duration).checked_sub(spent)) {
            (Some(w), _) if !w.is_zero() => Phase::WarmUp(w),
            (_, Some(m)) => Phase::Measuring(m),
            _ => Phase::Step,
        }
    }
}

/// Progress reporting for `versus run`.
pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    total: usize,
    position: usize,
    current: String,
    clock: Arc<Mutex<Clock>>,
    /// Lines kept instead of printed ([`Progress::recording`]).
    record: Option<Arc<Mutex<Vec<String>>>>,
}

impl Progress {
    /// A bar on a terminal, plain lines otherwise.
    pub fn stderr() -> Self {
        let tty = std::io::stderr().is_terminal();
        Progress {
            bar: tty.then(ProgressBar::hidden),
            quiet: false,
            total: 0,
            position: 0,
            current: String::new(),
            clock: Arc::default(),
            record: None,
        }
    }

    /// Prints nothing and keeps the plain lines it would print (tests).
    pub fn recording() -> (Self, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let mut p = Progress::quiet();
        p.record = Some(Arc::clone(&lines));
        (p, lines)
    }

    /// Reports nothing (tests, library use).
    pub fn quiet() -> Self {
        Progress {
            bar: None,
            quiet: true,
            total: 0,
            position: 0,
            current: String::new(),
            clock: Arc::default(),
            record: None,
        }
    }

    /// The time left by [`eta`].
    pub fn eta(&self) -> Duration {
        self.clock.lock().map(|c| c.eta()).unwrap_or_default()
    }

    /// What the current run is doing: a step, or the warm-up or measurement with what is left of it.
    pub fn phase(&self) -> Phase {
        self.clock.lock().map(|c| c.phase()).unwrap_or(Phase::Idle)
    }

    /// The experiment starts with `done` of `total` runs already finished and `pending` to do;
    /// `prepared` says which of the plan's preparations need no time; the plan's estimates are
    /// multiplied by `pace` (what runs took against their estimates before this experiment, 1 when
    /// nothing is known).
    pub fn begin(
        &mut self,
        total: usize,
        done: usize,
        plan: &Plan,
        pending: &[RunRow],
        prepared: &dyn Fn(usize) -> bool,
        pace: f64,
    ) {
        self.total = total;
        self.position = done;
        let cells: Vec<usize> =
            pending.iter().filter_map(|r| plan.cells.iter().position(|c| c.key == r.cell.key)).collect();
        let pace = if pace.is_finite() && pace > 0.0 { pace } else { 1.0 };
        let estimates: Vec<Duration> = plan.run_estimates(&cells, prepared).iter().map(|d| d.mul_f64(pace)).collect();
        if let Ok(mut c) = self.clock.lock() {
            *c = Clock { estimates, ..Clock::default() };
        }
        let eta = self.eta();
        if let Some(bar) = &mut self.bar {
            let b = ProgressBar::new(total as u64).with_position(done as u64);
            let (left, run) = (Arc::clone(&self.clock), Arc::clone(&self.clock));
            let style = ProgressStyle::with_template(
                "{bar:30.cyan/blue} run {pos}/{len} [{elapsed} elapsed, ETA {left}] {run}{msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("left", move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&human(left.lock().map(|c| c.eta()).unwrap_or_default()));
            })
            .with_key("run", move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&run.lock().map(|c| c.phase().countdown()).unwrap_or_default());
            });
            b.set_style(style);
            // Redraw every second, so that elapsed time and the countdown move during a measurement.
            b.enable_steady_tick(Duration::from_secs(1));
            *bar = b;
        }
        self.line(&format!(
            "experiment {}: {} runs, {} to do (about {})",
            plan.file.name,
            total,
            pending.len(),
            human(eta)
        ));
    }

    /// A line of information (the looks of an adaptive experiment).
    pub fn note(&mut self, text: &str) {
        self.line(text);
    }

    /// `n` runs were added to the experiment (an adaptive round).
    pub fn more_runs(&mut self, n: usize) {
        self.total += n;
        if let Some(b) = &self.bar {
            b.set_length(self.total as u64);
        }
    }

    /// A run starts.
    pub fn run_begins(&mut self, plan: &Plan, run: &PlannedRun) {
        if let Ok(mut c) = self.clock.lock() {
            c.run_started = Some(Instant::now());
            c.timed = None;
        }
        let c = &plan.cells[run.cell];
        self.current = format!(
            "{} {} {} thr rep {}",
            plan.targets[c.target].label,
            plan.workloads[c.workload].label(),
            c.threads,
            run.repetition
        );
        match &self.bar {
            Some(b) => b.set_message(self.current.clone()),
            None => self.line(&format!("[{}/{}] {}", self.position + 1, self.total, self.current)),
        }
    }

    /// The workload's timed part begins: `warmup`, then `duration` measured. The bar counts them down.
    pub fn measuring(&mut self, warmup: Duration, duration: Duration) {
        if let Ok(mut c) = self.clock.lock() {
            c.timed = Some((Instant::now(), warmup, duration));
        }
        match warmup.is_zero() {
            true => self.step(&format!("measuring {}", human(duration))),
            false => self.step(&format!("warming up {}, then measuring {}", human(warmup), human(duration))),
        }
    }

    /// A step inside a run or a preparation (restore, start, prepare …).
    pub fn step(&mut self, what: &str) {
        match &self.bar {
            Some(b) => b.set_message(format!("{} — {what}", self.current)),
            None => self.line(&format!("      {what}")),
        }
    }

    /// A warning that must be seen (also under a bar, and when the output is not a terminal).
    pub fn warn(&mut self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    /// A run finished, with its replicas' figures when its target has some.
    pub fn run_done(&mut self, s: &Summary, replicas: Option<&ReplicationFigures>) {
        self.position += 1;
        let mut text = format!("      {:.2} tps, p95 {:.2} ms", s.tps, s.latency_p95_us / 1000.0);
        if let Some(r) = replicas {
            let opt = |v: Option<f64>, digits: usize| v.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"));
            text.push_str(&format!(
                "; replica lag p95 {} ms, catch-up {} s",
                opt(r.lag_p95_ms, 0),
                opt(r.catch_up_s, 2)
            ));
            if r.faults > 0.0 {
                text.push_str(&format!(", {} replica fault(s)", r.faults));
            }
        }
        self.advance(&text);
    }

    /// Run `run_id` failed with `error`: one line with its first cause; the store keeps the whole
    /// error, and the line says where to read it when it had more.
    pub fn run_failed(&mut self, run_id: i64, error: &str) {
        self.position += 1;
        let why = one_line_error(run_id, error);
        let text = match &self.bar {
            // The bar's line starts with the run already.
            Some(_) => format!("failed (run {run_id}): {why}"),
            None => format!("      run {run_id} ({}) failed: {why}", self.current),
        };
        self.advance(&text);
    }

    /// The invocation ended.
    pub fn end(&mut self, o: &Outcome) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        let how = if o.interrupted { "interrupted" } else { "finished" };
        let failed = if o.failed > 0 { format!(", {} failed", o.failed) } else { String::new() };
        self.line(&format!("experiment {} {how}: {} run(s) done in this invocation{failed}", o.experiment_id, o.done));
    }

    fn advance(&mut self, text: &str) {
        if let Ok(mut c) = self.clock.lock() {
            let real = c.current();
            if let Some(est) = c.estimates.get(c.ended).copied() {
                c.spent.push((est, real));
            }
            c.ended += 1;
            c.run_started = None;
            c.timed = None;
        }
        match &self.bar {
            Some(b) => {
                b.inc(1);
                b.println(format!("{} {text}", self.current));
            }
            None => self.line(text),
        }
    }

    fn line(&self, text: &str) {
        if let Some(r) = &self.record
            && let Ok(mut r) = r.lock()
        {
            r.push(text.to_string());
        }
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }
}

/// The stored `error` of run `run_id` on one line: its [`first_cause`], and where the whole error is
/// when that left something out.
pub fn one_line_error(run_id: i64, error: &str) -> String {
    match first_cause(error) {
        (first, true) => format!("{first} (the whole error: `versus show {run_id}`)"),
        (first, false) => first,
    }
}

/// Longest first cause shown on a failed run's line, in characters.
const CAUSE_CHARS: usize = 240;

/// The first cause of a run's `error`: its first non-blank line, trimmed, at most [`CAUSE_CHARS`]
/// characters; and whether anything was left out.
pub fn first_cause(error: &str) -> (String, bool) {
    let mut lines = error.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("no reason was given");
    let mut cut = lines.next().is_some();
    let mut shown: String = first.chars().take(CAUSE_CHARS).collect();
    if shown.len() < first.len() {
        shown.push('…');
        cut = true;
    }
    (shown, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn eta_is_the_estimate_until_runs_end_then_scaled_by_them() {
        // Before the first run: the plan's estimate of what is left.
        assert_eq!(eta(&[S(60), S(60), S(30)], &[], S(0)), S(150));
        // During a run: its estimate counts down.
        assert_eq!(eta(&[S(60), S(60)], &[], S(45)), S(75));
        // A run that overruns its estimate does not make the ETA negative.
        assert_eq!(eta(&[S(60)], &[], S(90)), S(0));
        // Runs took twice their estimate: what is left is scaled.
        assert_eq!(eta(&[S(60), S(30)], &[(S(60), S(120))], S(0)), S(180));
        assert_eq!(human(S(42)), "42 s");
        assert_eq!(human(S(250)), "4 min 10 s");
        assert_eq!(human(S(3900)), "1 h 05 min");
    }

    #[test]
    fn a_failed_run_shows_its_first_cause_on_one_line() {
        assert_eq!(first_cause("server a: the server died"), ("server a: the server died".into(), false));
        let many = format!("\n  query failed: Lost connection\n{}", "  at frame\n".repeat(26));
        assert_eq!(first_cause(&many), ("query failed: Lost connection".into(), true));
        let long = "x".repeat(CAUSE_CHARS + 10);
        let (shown, cut) = first_cause(&long);
        assert!(cut && shown.chars().count() == CAUSE_CHARS + 1 && shown.ends_with('…'), "{shown}");
        assert_eq!(first_cause(" \n"), ("no reason was given".into(), false));
        assert_eq!(one_line_error(7, &many), "query failed: Lost connection (the whole error: `versus show 7`)");
        assert_eq!(one_line_error(7, "server died"), "server died");
    }
}
