//! `versus ibench run --profile`: each step's server profiles, from its first statement to its last
//! (a step has no warm-up), per operation of the step (an inserted row, or a query).

use super::result::{IntervalLine, Skipped, StepResult};
use super::{Step, StepObserver};
use crate::error::Result;
use crate::profile::Sampling;
use crate::profile::summary::Profiles;

/// An observer that profiles every step and passes every report on.
pub struct ProfiledSteps<'a> {
    inner: &'a mut dyn StepObserver,
    pid: u32,
    hz: u32,
    waits: bool,
    current: Option<Sampling>,
    /// Each finished step's profiles, or why one asked for is missing.
    pub done: Vec<(Step, Result<Profiles>)>,
}

impl<'a> ProfiledSteps<'a> {
    /// Profiles server process `pid` at `hz` (and its waits when `waits`) around `inner`'s steps.
    pub fn new(inner: &'a mut dyn StepObserver, pid: u32, hz: u32, waits: bool) -> ProfiledSteps<'a> {
        ProfiledSteps { inner, pid, hz, waits, current: None, done: Vec::new() }
    }
}

impl StepObserver for ProfiledSteps<'_> {
    fn step_started(&mut self, step: Step) {
        self.inner.step_started(step);
        let mut s = Sampling::new(self.hz).with_waits(self.waits);
        s.begin(self.pid);
        self.current = Some(s);
    }

    fn interval(&mut self, step: Step, line: &IntervalLine) {
        self.inner.interval(step, line);
    }

    fn note(&mut self, step: Step, text: &str) {
        self.inner.note(step, text);
    }

    fn step_done(&mut self, result: &StepResult) {
        if let Some(s) = self.current.take() {
            self.done.push((result.step, Profiles::finish(s, result.operations)));
        }
        self.inner.step_done(result);
    }

    fn step_skipped(&mut self, skipped: &Skipped) {
        self.inner.step_skipped(skipped);
    }
}
