//! Progress of an experiment on stderr: a bar with the cell count, the current cell and an ETA when
//! stderr is a terminal; one plain line per run otherwise.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::outcome::Outcome;
use super::plan::{Plan, PlannedRun};
use crate::store::{RunRow, Summary};

/// Progress reporting for `versus run`.
pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    total: usize,
    position: usize,
    current: String,
}

impl Progress {
    /// A bar on a terminal, plain lines otherwise.
    pub fn stderr() -> Self {
        let tty = std::io::stderr().is_terminal();
        Progress { bar: tty.then(ProgressBar::hidden), quiet: false, total: 0, position: 0, current: String::new() }
    }

    /// Reports nothing (tests, library use).
    pub fn quiet() -> Self {
        Progress { bar: None, quiet: true, total: 0, position: 0, current: String::new() }
    }

    /// The experiment starts with `done` of `total` runs already finished and `pending` to do.
    pub fn begin(&mut self, total: usize, done: usize, plan: &Plan, pending: &[RunRow]) {
        self.total = total;
        self.position = done;
        let eta: Duration = {
            let per_run = plan.estimate().as_secs_f64() / plan.runs.len().max(1) as f64;
            Duration::from_secs_f64(per_run * pending.len() as f64)
        };
        if let Some(bar) = &mut self.bar {
            let b = ProgressBar::new(total as u64).with_position(done as u64);
            b.set_style(
                ProgressStyle::with_template("{bar:30.cyan/blue} run {pos}/{len} [{elapsed} elapsed, ETA {eta}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            *bar = b;
        }
        self.line(&format!(
            "experiment {}: {} runs, {} to do (about {} min)",
            plan.file.name,
            total,
            pending.len(),
            eta.as_secs().div_ceil(60)
        ));
    }

    /// A run starts.
    pub fn run_begins(&mut self, plan: &Plan, run: &PlannedRun) {
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

    /// A run finished.
    pub fn run_done(&mut self, s: &Summary) {
        self.position += 1;
        let text = format!("      {:.2} tps, p95 {:.2} ms", s.tps, s.latency_p95_us / 1000.0);
        self.advance(&text);
    }

    /// A run failed.
    pub fn run_failed(&mut self, error: &str) {
        self.position += 1;
        self.advance(&format!("      failed: {error}"));
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
        match &self.bar {
            Some(b) => {
                b.inc(1);
                b.println(format!("{} {text}", self.current));
            }
            None => self.line(text),
        }
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }
}
