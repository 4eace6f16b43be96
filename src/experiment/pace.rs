//! How much longer than estimated runs and preparations took so far, so that a hard time limit
//! ([`super::RunOptions::deadline`]) corrects the estimate of the next run by the overrun already seen.
//!
//! One [`Pace`] can be shared by several experiments (`versus advise` runs one per step under one
//! budget): it is a handle, and clones see the same observations.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Observed time against estimated time, of runs and of data preparations.
#[derive(Debug, Clone, Default)]
pub struct Pace {
    inner: Arc<Mutex<Observed>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Observed {
    /// The largest actual ÷ estimate of one run so far.
    worst_run: f64,
    /// Sums of estimates and actual times of runs, seconds.
    run_estimated: f64,
    run_actual: f64,
    /// The largest actual ÷ estimate of one preparation so far.
    worst_prepare: f64,
}

fn ratio(actual: Duration, estimate: Duration) -> f64 {
    if estimate.is_zero() { 1.0 } else { actual.as_secs_f64() / estimate.as_secs_f64() }
}

fn scale(d: Duration, factor: f64) -> Duration {
    Duration::from_secs_f64(d.as_secs_f64() * factor.max(1.0))
}

impl Pace {
    fn get(&self) -> Observed {
        self.inner.lock().map(|o| *o).unwrap_or_default()
    }

    /// A run estimated at `estimate` took `actual`.
    pub fn run_took(&self, estimate: Duration, actual: Duration) {
        if let Ok(mut o) = self.inner.lock() {
            o.worst_run = o.worst_run.max(ratio(actual, estimate));
            o.run_estimated += estimate.as_secs_f64();
            o.run_actual += actual.as_secs_f64();
        }
    }

    /// A preparation estimated at `estimate` took `actual`.
    pub fn prepare_took(&self, estimate: Duration, actual: Duration) {
        if let Ok(mut o) = self.inner.lock() {
            o.worst_prepare = o.worst_prepare.max(ratio(actual, estimate));
        }
    }

    /// What a run estimated at `estimate` may take, by the worst overrun of one run so far (never less
    /// than the estimate): what a hard limit must allow before the run starts.
    pub fn worst_run(&self, estimate: Duration) -> Duration {
        scale(estimate, self.get().worst_run)
    }

    /// What a preparation estimated at `estimate` may take, by the worst overrun of one so far (runs'
    /// overrun when none was seen: a loaded machine slows both).
    pub fn worst_prepare(&self, estimate: Duration) -> Duration {
        let o = self.get();
        scale(estimate, if o.worst_prepare > 0.0 { o.worst_prepare } else { o.worst_run })
    }

    /// Runs' actual time over their estimate so far (1 before any run, never below 1): the factor by
    /// which plans of more runs are scaled.
    pub fn typical(&self) -> f64 {
        let o = self.get();
        if o.run_estimated > 0.0 { (o.run_actual / o.run_estimated).max(1.0) } else { 1.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn corrects_by_the_worst_overrun_and_never_below_the_estimate() {
        let p = Pace::default();
        assert_eq!(p.worst_run(S(10)), S(10));
        assert_eq!(p.typical(), 1.0);
        p.run_took(S(10), S(8));
        assert_eq!(p.worst_run(S(10)), S(10), "faster runs never shrink the estimate");
        p.run_took(S(10), S(15));
        p.run_took(S(10), S(12));
        assert_eq!(p.worst_run(S(20)), S(30));
        assert!((p.typical() - 35.0 / 30.0).abs() < 1e-9);
        // Clones share what was seen.
        let q = p.clone();
        q.run_took(S(10), S(20));
        assert_eq!(p.worst_run(S(10)), S(20));
    }

    #[test]
    fn a_preparation_without_its_own_observation_uses_the_runs_overrun() {
        let p = Pace::default();
        p.run_took(S(10), S(15));
        assert_eq!(p.worst_prepare(S(100)), S(150));
        p.prepare_took(S(100), S(400));
        assert_eq!(p.worst_prepare(S(10)), S(40));
        assert_eq!(p.worst_run(S(10)), S(15));
    }
}
