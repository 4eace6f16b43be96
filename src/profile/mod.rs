//! Where the server's CPU went: on-CPU stacks of the server sampled during a run's measured interval
//! (with the kernel's perf events, through the distribution's `perf`), folded, stored with the run, and
//! turned into CPU µs per transaction per function (self and inclusive).
//!
//! A stored profile is a set of folded stacks (`root;…;leaf`, root first) each with the CPU
//! nanoseconds sampled in it: `cpu-clock` samples carry their period in nanoseconds, so the sum over
//! stacks estimates the server's CPU time in the window, which is what makes per-transaction figures
//! comparable with the sampler's own CPU per transaction.

pub mod diff;
pub mod flame;
pub mod fold;
pub mod offcpu;
pub mod perf;
pub mod summary;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use perf::{Recorder, availability, hardware_counters_line};

/// Sampling frequency when nothing else is asked for: low enough that the server loses well under 2 %
/// of its throughput (BENCHMARKS.md), high enough for a few thousand samples in a 30-s run.
pub const DEFAULT_HZ: u32 = 199;

/// What a frame that could not be named is called, when even its object file is unknown.
pub const UNKNOWN_FRAME: &str = "[unknown]";

/// The on-CPU profile of one run: folded stacks with the CPU nanoseconds sampled in each.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Profile {
    /// The perf event sampled (`cpu-clock`).
    pub event: String,
    /// Samples per second asked for.
    pub hz: u32,
    /// Samples taken.
    pub samples: u64,
    /// Transactions in the window the samples cover (the run's measured events).
    pub transactions: u64,
    /// `(folded stack, CPU ns)`, root first, sorted by stack.
    pub stacks: Vec<(String, u64)>,
    /// Why a run that asked for a profile has none (perf missing or refused, or failed), in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A function's CPU per transaction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionCost {
    /// CPU µs per transaction spent in the function itself (samples whose leaf it is).
    pub self_us: f64,
    /// CPU µs per transaction spent in the function and what it called (samples with it anywhere on
    /// the stack, counted once per sample even when it recurses).
    pub total_us: f64,
}

impl Profile {
    /// CPU nanoseconds over all stacks.
    pub fn total_ns(&self) -> u64 {
        self.stacks.iter().fold(0u64, |t, (_, n)| t.saturating_add(*n))
    }

    /// CPU µs per transaction over all stacks; `None` without transactions.
    pub fn total_us_per_txn(&self) -> Option<f64> {
        (self.transactions > 0).then(|| self.total_ns() as f64 / 1000.0 / self.transactions as f64)
    }

    /// The share (0–1) of the sampled CPU whose own frame ([`own_frame`]) has a name (not an object
    /// file in brackets nor `[unknown]`); 1 for an empty profile.
    pub fn named_share(&self) -> f64 {
        let total = self.total_ns();
        if total == 0 {
            return 1.0;
        }
        let named: u64 = self.stacks.iter().filter(|(s, _)| is_named(own_frame(s))).map(|(_, n)| n).sum();
        named as f64 / total as f64
    }

    /// True when the profile holds samples to compare: perf ran, sampled the server and the run
    /// counted transactions.
    pub fn is_sampled(&self) -> bool {
        self.note.is_none() && self.transactions > 0 && self.samples > 0 && !self.stacks.is_empty()
    }

    /// Self and inclusive CPU µs per transaction of every function on any stack; empty without
    /// transactions.
    pub fn function_costs(&self) -> BTreeMap<String, FunctionCost> {
        let mut out: BTreeMap<String, FunctionCost> = BTreeMap::new();
        if self.transactions == 0 {
            return out;
        }
        let per_txn = 1.0 / 1000.0 / self.transactions as f64;
        let mut seen: Vec<&str> = Vec::new();
        for (stack, ns) in &self.stacks {
            let us = *ns as f64 * per_txn;
            seen.clear();
            // The root (`fold::ROOT`) stands for the whole process, not a function.
            for frame in frames(stack).skip(1) {
                if !seen.contains(&frame) {
                    seen.push(frame);
                    out.entry(frame.to_string()).or_default().total_us += us;
                }
            }
            out.entry(own_frame(stack).to_string()).or_default().self_us += us;
        }
        out
    }
}

/// Profiling one run: begun when its measured time begins, finished when the run ends.
#[derive(Debug)]
pub struct Sampling {
    hz: u32,
    cpu: Recording,
    /// Off-CPU waits too, when asked.
    waits: Option<Recording>,
}

/// One perf recording of a run, or why it could not start.
#[derive(Debug, Default)]
struct Recording {
    recorder: Option<Recorder>,
    refused: Option<String>,
}

impl Recording {
    fn restart(&mut self, start: std::result::Result<Recorder, String>) {
        self.recorder = None;
        match start {
            Ok(r) => self.recorder = Some(r),
            Err(e) => self.refused = Some(e),
        }
    }

    /// The profile, or an empty one (`base`) with a note saying why there is none.
    fn finish(self, base: Profile, nothing: &str) -> Profile {
        match (self.recorder, self.refused) {
            (Some(r), _) => match r.finish() {
                Ok((_, 0)) => Profile { note: Some(nothing.into()), ..base },
                Ok((stacks, samples)) => Profile { samples, stacks, ..base },
                Err(e) => Profile { note: Some(e), ..base },
            },
            (None, Some(why)) => Profile { note: Some(why), ..base },
            (None, None) => Profile {
                note: Some("not profiled: the server's process is not on this machine or not known".into()),
                ..base
            },
        }
    }
}

impl Sampling {
    /// A run to be profiled at `hz` samples per second.
    pub fn new(hz: u32) -> Sampling {
        Sampling { hz, cpu: Recording::default(), waits: None }
    }

    /// The same, recording the server threads' off-CPU waits too when `waits` ([`offcpu`]).
    pub fn with_waits(self, waits: bool) -> Sampling {
        Sampling { waits: waits.then(Recording::default), ..self }
    }

    /// Starts sampling process `pid` (again, if it had begun: a warm-up's samples are dropped).
    pub fn begin(&mut self, pid: u32) {
        self.cpu.restart(Recorder::start(pid, self.hz));
        if let Some(w) = self.waits.as_mut() {
            w.restart(Recorder::start_switches(pid));
        }
    }

    /// Stops sampling: the on-CPU profile, without transactions (the caller knows them), or an empty
    /// one with a note saying why there is none.
    pub fn finish(self) -> Profile {
        self.finish_all().0
    }

    /// Stops sampling: the on-CPU profile and, when asked, the off-CPU one (see [`Sampling::finish`]).
    pub fn finish_all(self) -> (Profile, Option<Profile>) {
        let cpu = Profile { event: perf::EVENT.into(), hz: self.hz, ..Profile::default() };
        let waits = self.waits.map(|w| {
            let base = Profile { event: offcpu::EVENT.into(), hz: 0, ..Profile::default() };
            w.finish(base, "perf recorded no context switch of the server")
        });
        (self.cpu.finish(cpu, "perf took no sample of the server"), waits)
    }
}

/// The frames of a folded stack, root first.
pub fn frames(stack: &str) -> impl Iterator<Item = &str> {
    stack.split(';').filter(|f| !f.is_empty())
}

/// The leaf (last) frame of a folded stack.
pub fn leaf(stack: &str) -> &str {
    stack.rsplit(';').next().unwrap_or(stack)
}

/// The frame a stack's CPU is spent in: its leaf, or [`UNKNOWN_FRAME`] for a sample with no frame
/// below the root (code nobody could name).
pub fn own_frame(stack: &str) -> &str {
    if frames(stack).nth(1).is_some() { leaf(stack) } else { UNKNOWN_FRAME }
}

/// True when a frame names a function: not `[unknown]` and not an object file standing in for an
/// unnamed address (`[mariadbd]`, `[libc.so.6]`).
pub fn is_named(frame: &str) -> bool {
    let object = frame.starts_with('[') && frame.ends_with(']');
    !object && !frame.starts_with("0x")
}

/// A profile of `stacks` (one sample each) over `transactions`, for the module's tests.
#[cfg(test)]
pub(crate) fn profile(stacks: &[(&str, u64)], transactions: u64) -> Profile {
    Profile {
        event: "cpu-clock".into(),
        hz: 99,
        samples: stacks.len() as u64,
        transactions,
        stacks: stacks.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_inclusive_costs_per_transaction() {
        let p = profile(
            &[("server;a;b", 4_000), ("server;a", 2_000), ("server;a;a;c", 2_000), ("server;[mariadbd]", 2_000)],
            2,
        );
        let f = p.function_costs();
        assert_eq!(f["b"].self_us, 2.0);
        assert_eq!(f["a"].self_us, 1.0);
        // `a` recurses in one stack: counted once there.
        assert_eq!(f["a"].total_us, 4.0);
        // The root is the process, not a function.
        assert!(!f.contains_key("server"));
        assert_eq!(p.total_us_per_txn(), Some(5.0));
        assert!((p.named_share() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn no_transactions_no_costs() {
        let p = profile(&[("main;a", 1_000)], 0);
        assert!(p.function_costs().is_empty());
        assert_eq!(p.total_us_per_txn(), None);
    }

    #[test]
    fn unnamed_frames_are_recognised() {
        assert!(!is_named("[unknown]"));
        assert!(!is_named("[libc.so.6]"));
        assert!(!is_named("0x7f00"));
        assert!(is_named("JOIN::exec"));
        assert!(is_named("operator new[]"));
    }
}
