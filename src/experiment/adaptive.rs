//! Adaptive repetitions in the run loop (`repetitions = { min, max, until }`): after every round the
//! comparisons of the experiment are looked at with the group-sequential design of
//! [`crate::stats::sequential`], and one more shuffled round of every cell is added while any of them
//! is still open. A comparison is every target against the first one, per workload and thread count,
//! on throughput (tps, the metric `versus compare` shows by default); it is closed when it is decisive
//! (a change is called, or its repeated interval lies inside the noise band), when its interval is
//! narrower than `until`, or when `max` rounds have run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::plan::Plan;
use super::spec::Repetitions;
use crate::error::Result;
use crate::stats::sequential::{Look, SequentialDesign, SequentialPlan, sequential_look};
use crate::stats::{Direction, Verdict};
use crate::store::{RunRow, Status, Store};

/// One comparison at one look.
#[derive(Debug, Clone, PartialEq)]
pub struct LookRow {
    /// `workload @ N thr: candidate vs baseline`.
    pub what: String,
    /// Ratio and repeated interval, when both sides have 2 finished runs or more.
    pub ci: Option<(f64, f64, f64)>,
    /// The verdict at this look.
    pub verdict: Option<Verdict>,
    /// Whether the comparison is still open.
    pub look: Look,
}

/// What the look after a round decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Rounds stored so far.
    pub rounds: u32,
    /// Every comparison.
    pub rows: Vec<LookRow>,
    /// The round to add next, if any.
    pub next: Option<u32>,
}

/// The sequential plan of an adaptive experiment (boundaries for looks at `min..=max`), whose looks
/// together call a change between equal targets with probability `1 − confidence` at most.
pub fn design(reps: &Repetitions, confidence: f64) -> Result<SequentialPlan> {
    Ok(SequentialDesign::new(reps.min as usize, reps.max as usize, confidence)?.plan())
}

/// The noise band of each comparison (by workload label and thread count): `--noise-band` when given,
/// else the one `versus calibrate` stored for the experiment's host class, workload and threads, else
/// [`crate::stats::DEFAULT_NOISE_BAND`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bands {
    calibrated: BTreeMap<(String, u32), f64>,
    fallback: f64,
    source: String,
}

impl Bands {
    /// One band for every comparison.
    pub fn fixed(band: f64, source: &str) -> Bands {
        Bands { calibrated: BTreeMap::new(), fallback: band, source: source.to_string() }
    }

    /// The bands for experiment `experiment_id` of `plan` (see the type's documentation).
    pub fn for_experiment(store: &Store, experiment_id: i64, plan: &Plan, given: Option<f64>) -> Result<Bands> {
        use crate::stats::DEFAULT_NOISE_BAND;
        if let Some(b) = given {
            return Ok(Bands::fixed(b, "given with --noise-band"));
        }
        let default = |why: &str| Bands::fixed(DEFAULT_NOISE_BAND, &format!("the default ({why})"));
        let Some(e) = store.experiment(experiment_id)? else { return Ok(default("experiment not stored")) };
        let f = crate::sampler::Fingerprint::of(&e.host);
        if f == crate::sampler::Fingerprint::default() {
            return Ok(default("this host is not known, so no calibration applies"));
        }
        let class = f.class();
        let mut calibrated = BTreeMap::new();
        let mut used = Vec::new();
        for cell in plan.cells.iter().filter(|c| c.target == 0) {
            let (w, t) = (plan.workloads[cell.workload].label(), cell.threads);
            if let Some(c) = store.calibration_for(&class, &w, t, "tps")? {
                used.push(format!("{w} @ {t} thr {:.1} %", c.band * 100.0));
                calibrated.insert((w, t), c.band);
            }
        }
        if calibrated.is_empty() {
            return Ok(default(&format!("no tps calibration for host class {class}; `versus calibrate` measures one")));
        }
        let source = format!(
            "calibrated on host class {class}: {}; the default {:.1} % elsewhere",
            used.join(", "),
            DEFAULT_NOISE_BAND * 100.0
        );
        Ok(Bands { calibrated, fallback: DEFAULT_NOISE_BAND, source })
    }

    /// The band of the comparisons of `workload` at `threads`.
    pub fn of(&self, workload: &str, threads: u32) -> f64 {
        self.calibrated.get(&(workload.to_string(), threads)).copied().unwrap_or(self.fallback)
    }

    /// Where the bands came from, for the run's output.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// Looks at every comparison of `plan` over the stored `runs` of its experiment.
pub fn decide(plan: &Plan, runs: &[RunRow], seq: &SequentialPlan, bands: &Bands) -> Result<Decision> {
    let reps = &plan.file.repetitions;
    let rounds = runs.iter().map(|r| r.repetition).max().unwrap_or(0);
    let values = |cell: usize| -> Vec<f64> {
        let key = &plan.cells[cell].key;
        let mut done: Vec<(u32, f64)> = runs
            .iter()
            .filter(|r| r.cell.key == *key && r.status == Status::Done)
            .filter_map(|r| r.summary.as_ref().map(|s| (r.repetition, s.tps)))
            .collect();
        done.sort_by_key(|(rep, _)| *rep);
        done.into_iter().map(|(_, v)| v).collect()
    };
    let until = reps.until.unwrap_or(0.0);
    let mut rows = Vec::new();
    for (bi, base) in plan.cells.iter().enumerate().filter(|(_, c)| c.target == 0) {
        for (ci, cand) in plan.cells.iter().enumerate() {
            if cand.target == 0 || cand.workload != base.workload || cand.threads != base.threads {
                continue;
            }
            let what = format!(
                "{} @ {} thr: {} vs {}",
                plan.workloads[base.workload].label(),
                base.threads,
                plan.targets[cand.target].label,
                plan.targets[0].label
            );
            let (b, c) = (values(bi), values(ci));
            let noise_band = bands.of(&plan.workloads[base.workload].label(), base.threads);
            let row = if b.len() >= 2 && c.len() >= 2 {
                let (cmp, look) = sequential_look(&b, &c, seq, Direction::HigherIsBetter, noise_band, until)?;
                let look = if look == Look::Continue && rounds >= reps.max { Look::Exhausted } else { look };
                LookRow { what, ci: Some((cmp.ci.ratio, cmp.ci.lo, cmp.ci.hi)), verdict: Some(cmp.verdict), look }
            } else {
                let look = if rounds >= reps.max { Look::Exhausted } else { Look::Continue };
                LookRow { what, ci: None, verdict: None, look }
            };
            rows.push(row);
        }
    }
    let open = rows.iter().any(|r| r.look == Look::Continue);
    let next = (open && rounds < reps.max).then_some(rounds + 1);
    Ok(Decision { rounds, rows, next })
}

impl Decision {
    /// The lines `versus run` prints after a look.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let open = self.rows.iter().filter(|r| r.look == Look::Continue).count();
        let _ = match self.next {
            Some(n) => writeln!(
                s,
                "look after {} round(s): {open} of {} comparison(s) still open; adding round {n}",
                self.rounds,
                self.rows.len()
            ),
            None if self.rows.is_empty() => {
                writeln!(s, "look after {} round(s): nothing to compare (one target); stopping", self.rounds)
            }
            None => writeln!(s, "look after {} round(s): stopping", self.rounds),
        };
        for r in &self.rows {
            let ci = match r.ci {
                Some((ratio, lo, hi)) => format!("{ratio:.3} [{lo:.3}, {hi:.3}]"),
                None => "no interval yet".to_string(),
            };
            let state = match r.look {
                Look::Continue => "open",
                Look::Decisive => match r.verdict {
                    Some(Verdict::Faster) => "decisive: faster",
                    Some(Verdict::Slower) => "decisive: slower",
                    _ => "decisive: within the noise band",
                },
                Look::Narrow => "narrow enough",
                Look::Exhausted => "max rounds reached",
            };
            let _ = writeln!(s, "  {:<48} {ci:<24} {state}", r.what);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::experiment::ExperimentFile;
    use crate::store::{Cell, Summary};

    const FILE: &str = r#"
name = "adaptive"
builds = ["a", "b"]
repetitions = { min = 3, max = 6, until = "±1%" }
duration = 1
[[workloads]]
test = "oltp_point_select"
"#;

    fn runs(plan: &Plan, tps: impl Fn(usize, u32) -> f64, rounds: u32) -> Vec<RunRow> {
        let mut out = Vec::new();
        for rep in 1..=rounds {
            for (i, c) in plan.cells.iter().enumerate() {
                let summary = Summary { tps: tps(i, rep), ..Summary::default() };
                out.push(RunRow {
                    id: out.len() as i64,
                    experiment_id: 1,
                    cell: Cell {
                        id: i as i64,
                        key: c.key.clone(),
                        target: String::new(),
                        build: None,
                        config: None,
                        workload: String::new(),
                        threads: c.threads,
                        workload_options: serde_json::Value::Null,
                    },
                    repetition: rep,
                    order_index: out.len() as u32,
                    status: Status::Done,
                    error: None,
                    started_at: None,
                    finished_at: None,
                    server_version: None,
                    summary: Some(summary),
                });
            }
        }
        out
    }

    #[test]
    fn a_large_change_stops_at_the_minimum_and_noise_goes_on_to_the_maximum() {
        let plan = Plan::new(&ExperimentFile::parse(FILE).unwrap(), Path::new("/")).unwrap();
        let seq = design(&plan.file.repetitions, crate::stats::DEFAULT_CONFIDENCE).unwrap();
        let jitter = |rep: u32| [1.0, 1.03, 0.97, 1.02, 0.98, 1.01][(rep - 1) as usize];
        let big = runs(&plan, |cell, rep| if cell == 0 { 100.0 * jitter(rep) } else { 150.0 / jitter(rep) }, 3);
        let d = decide(&plan, &big, &seq, &Bands::fixed(0.02, "test")).unwrap();
        assert_eq!((d.rounds, d.next), (3, None), "{}", d.describe());
        assert_eq!(d.rows[0].look, Look::Decisive);
        assert_eq!(d.rows[0].verdict, Some(Verdict::Faster));

        let same = |n| runs(&plan, |cell, rep| 100.0 * if cell == 0 { jitter(rep) } else { 2.0 - jitter(rep) }, n);
        let d = decide(&plan, &same(3), &seq, &Bands::fixed(0.02, "test")).unwrap();
        assert_eq!(d.next, Some(4), "{}", d.describe());
        assert!(d.describe().contains("1 of 1 comparison(s) still open; adding round 4"), "{}", d.describe());
        let d = decide(&plan, &same(6), &seq, &Bands::fixed(0.02, "test")).unwrap();
        assert_eq!((d.next, d.rows[0].look), (None, Look::Exhausted), "{}", d.describe());
        assert_eq!(d.rows[0].verdict, Some(Verdict::NoSignificantChange));
    }

    #[test]
    fn a_comparison_without_an_interval_stays_open_until_the_maximum() {
        let plan = Plan::new(&ExperimentFile::parse(FILE).unwrap(), Path::new("/")).unwrap();
        let seq = design(&plan.file.repetitions, crate::stats::DEFAULT_CONFIDENCE).unwrap();
        let mut r = runs(&plan, |_, _| 100.0, 3);
        for run in r.iter_mut().filter(|r| r.cell.key == plan.cells[1].key) {
            run.status = Status::Failed;
        }
        let d = decide(&plan, &r, &seq, &Bands::fixed(0.02, "test")).unwrap();
        assert_eq!(d.next, Some(4));
        assert!(d.describe().contains("no interval yet"));
    }
}
