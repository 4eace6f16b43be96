//! The search with a mock measurement: every config's true value is the product of its candidates'
//! effects, measured with normal noise; time advances by the cost of each step.

use std::time::Duration;

use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::advise::rules::{Area, Candidate, Risk};
use crate::stats::testutil::normal;

/// A candidate with its true effect at 2 and at 8 threads (fractions) and the memory it adds.
struct Truth {
    variable: &'static str,
    area: Area,
    risk: Risk,
    effect: (f64, f64),
    memory: u64,
}

const fn t(variable: &'static str, area: Area, risk: Risk, effect: f64) -> Truth {
    Truth { variable, area, risk, effect: (effect, effect), memory: 0 }
}

struct Mock {
    truths: Vec<Truth>,
    dedicated: f64,
    cv: f64,
    per_run: Duration,
    threads: Vec<u32>,
    clock: Duration,
    rng: Xoshiro256PlusPlus,
    measured: Vec<(Phase, Config)>,
    /// Each run takes this many times its estimate.
    slow: f64,
    /// Runs of the confirmation take this many times their estimate instead (the machine got busier).
    slow_confirm: Option<f64>,
    /// The last step left runs at its deadline.
    cut: bool,
    /// What runs took against their estimates, as the executor keeps it.
    pace: crate::experiment::Pace,
    /// Pairs `(i, k)` that stand in for each other: with both set, `k` adds nothing.
    stand_ins: Vec<(usize, usize)>,
    /// The host's speed during the n-th screening step (1 when absent): a slow spell of the VM.
    screen_levels: Vec<f64>,
    screens: usize,
}

impl Mock {
    fn new(truths: Vec<Truth>, seed: u64) -> Mock {
        Mock {
            truths,
            dedicated: 0.05,
            cv: 0.02,
            per_run: Duration::from_secs(30),
            threads: vec![2, 8],
            clock: Duration::from_secs(120),
            rng: crate::stats::seeded_rng(seed),
            measured: vec![],
            slow: 1.0,
            slow_confirm: None,
            cut: false,
            pace: crate::experiment::Pace::default(),
            stand_ins: vec![],
            screen_levels: vec![],
            screens: 0,
        }
    }

    fn candidates(&self) -> Vec<Candidate> {
        self.truths
            .iter()
            .map(|x| Candidate {
                variable: x.variable.into(),
                value: "1".into(),
                display: "1".into(),
                old: Some("0".into()),
                area: x.area,
                risk: x.risk,
                rule: "a rule".into(),
                source: "a source".into(),
                loses: (x.risk == Risk::Durability).then(|| "a second of commits".into()),
                why: "because".into(),
            })
            .collect()
    }

    fn memory(&self, set: &[usize]) -> u64 {
        (300u64 << 20) + set.iter().map(|&i| self.truths[i].memory).sum::<u64>()
    }

    fn truth(&self, c: &Config, threads: u32) -> f64 {
        let pick = |e: (f64, f64)| if threads <= 2 { e.0 } else { e.1 };
        let mut v = 1000.0 * if c.dedicated { 1.0 + self.dedicated } else { 1.0 };
        for &i in &c.set {
            if self.stand_ins.iter().any(|&(a, b)| b == i && c.set.contains(&a)) {
                continue;
            }
            v *= 1.0 + pick(self.truths[i].effect);
        }
        v
    }
}

impl Bench for Mock {
    /// Round by round (a repetition of every config at every thread count), as the shuffled experiment
    /// runs them; a run takes `slow` × its estimate, and none starts that would end after the deadline
    /// by its estimate corrected by the worst overrun so far (as `experiment::run` does).
    fn measure(&mut self, step: &SearchStep, _candidates: &[Candidate]) -> Result<Vec<ConfigResult>> {
        let deadline = Duration::from_secs(step.deadline_s);
        let mut samples = vec![Samples::default(); step.configs.len()];
        self.measured.extend(step.configs.iter().map(|c| (step.phase, c.clone())));
        self.cut = false;
        let level = match step.phase {
            Phase::Screen => {
                self.screens += 1;
                self.screen_levels.get(self.screens - 1).copied().unwrap_or(1.0)
            }
            _ => 1.0,
        };
        'rounds: for _ in 0..step.repetitions {
            for (c, s) in step.configs.iter().zip(&mut samples) {
                let mut log = 0.0;
                let mut values = Vec::new();
                for &th in &self.threads.clone() {
                    if self.clock + self.pace.worst_run(self.per_run) > deadline {
                        self.cut = true;
                        break 'rounds;
                    }
                    let slow = match step.phase {
                        Phase::Confirm => self.slow_confirm.unwrap_or(self.slow),
                        _ => self.slow,
                    };
                    self.clock += self.per_run.mul_f64(slow);
                    self.pace.run_took(self.per_run, self.per_run.mul_f64(slow));
                    let v = level * self.truth(c, th) * (1.0 + self.cv * normal(&mut self.rng));
                    values.push((th, v));
                    log += v.ln();
                }
                for (th, v) in values {
                    s.per_threads.entry(th).or_default().push(v);
                }
                s.combined.push((log / self.threads.len() as f64).exp());
            }
        }
        Ok(samples
            .into_iter()
            .map(|s| {
                if s.combined.len() >= step.repetitions.min(2) as usize {
                    Ok(s)
                } else {
                    Err("not run: the budget ran out".into())
                }
            })
            .collect())
    }

    fn stopped_at_deadline(&self) -> bool {
        self.cut
    }

    fn cost(&self, configs: usize, repetitions: u32) -> Duration {
        steps::step_cost(configs, repetitions, self.threads.len(), self.per_run).mul_f64(self.pace.typical())
    }

    fn elapsed(&self) -> Duration {
        self.clock
    }
}

fn settings(budget_min: u64, allow: bool) -> SearchSettings {
    SearchSettings {
        budget: Duration::from_secs(budget_min * 60),
        compare: CompareConfig::default(),
        threads: vec![2, 8],
        screen_repetitions: 2,
        attribution_repetitions: 3,
        confirm_repetitions: 5,
        adaptive: None,
        allow_durability: allow,
        dedicated: true,
        singles_max: 4,
        extra_rounds: 1,
        memory_limit: (4u64 << 30) / 10 * 9,
    }
}

fn field_case() -> Vec<Truth> {
    vec![
        Truth { memory: 768 << 20, ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, 0.30) },
        t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.10),
        t("innodb_io_capacity", Area::Io, Risk::Safe, 0.0),
        t("table_open_cache", Area::Caches, Risk::Safe, 0.0),
        t("thread_cache_size", Area::Caches, Risk::Safe, 0.0),
        Truth { memory: 240 << 20, ..t("tmp_table_size", Area::TempTables, Risk::Memory, 0.0) },
        t("innodb_flush_log_at_trx_commit", Area::Durability, Risk::Durability, 0.40),
    ]
}

fn run(mock: &mut Mock, s: &SearchSettings) -> SearchResult {
    let cands = mock.candidates();
    let mem: Vec<u64> = mock.truths.iter().map(|x| x.memory).collect();
    let memory = move |set: &[usize]| (300u64 << 20) + set.iter().map(|&i| mem[i]).sum::<u64>();
    search(&cands, s, &memory, mock).unwrap()
}

#[test]
fn a_value_without_effect_is_never_recommended() {
    let (mut bp, mut redo) = (0, 0);
    for seed in 0..12 {
        let mut mock = Mock::new(field_case(), seed);
        let r = run(&mut mock, &settings(120, false));
        for (i, truth) in mock.truths.iter().enumerate() {
            if truth.effect == (0.0, 0.0) {
                assert!(
                    r.fates[i].recommended().is_none(),
                    "seed {seed}: {} recommended: {:?}",
                    truth.variable,
                    r.fates[i]
                );
            }
            if let Some(c) = &r.contributions[i] {
                assert!(c.lo > 0.0, "seed {seed}: {} recommended with an interval reaching 0: {c:?}", truth.variable);
            }
        }
        bp += usize::from(r.fates[0].recommended().is_some());
        redo += usize::from(r.fates[1].recommended().is_some());
        assert!(mock.clock <= Duration::from_secs(120 * 60), "seed {seed}: {:?}", mock.clock);
        if r.conclusion == Conclusion::Recommended {
            let c = r.confirmation.as_ref().unwrap();
            assert!(c.holds && c.repetitions >= 5, "{c:?}");
            assert_eq!(c.labels, ["current", "dedicated", "advised"]);
            assert_eq!(c.rows.len(), 3, "2 and 8 threads and their geometric mean");
        }
        // A null group can screen slower by chance (a 5 % false alarm): it is dropped all the same.
        assert!(
            r.fates[2..6].iter().all(|f| matches!(f, Fate::NoEffect(_) | Fate::NotProven(_) | Fate::Slower(_))),
            "seed {seed}: {:?}",
            r.fates
        );
    }
    assert!(bp >= 11, "a +30 % buffer pool is found ({bp} of 12)");
    assert!(redo >= 8, "a +10 % redo log is found ({redo} of 12)");
}

#[test]
fn a_durability_trade_never_appears_without_the_flag() {
    for seed in 0..4 {
        let mut mock = Mock::new(field_case(), seed);
        let r = run(&mut mock, &settings(120, false));
        assert!(matches!(&r.fates[6], Fate::NotTried(w) if w.contains("--allow-durability-trade")), "{:?}", r.fates[6]);
        assert!(mock.measured.iter().all(|(_, c)| !c.set.contains(&6)), "the trade was measured without the flag");
        assert!(r.durability.is_none());
        assert!(r.confirmation.iter().all(|c| !c.labels.iter().any(|l| l.contains("durability"))));
    }
    let mut mock = Mock::new(field_case(), 7);
    let r = run(&mut mock, &settings(120, true));
    assert_eq!(r.fates[6], Fate::Recommended(Tier::Durability), "{:?}", r.fates);
    for (phase, c) in &mock.measured {
        if c.set.contains(&6) {
            assert!(
                matches!(phase, Phase::Attribution(Tier::Durability)) || c.label == "advised+durability",
                "the trade in a safe config: {phase:?} {c:?}"
            );
        }
    }
    let c = r.confirmation.as_ref().unwrap();
    assert_eq!(c.labels, ["current", "dedicated", "advised", "advised+durability"]);
    assert_eq!(c.durability_holds, Some(true));
    assert_eq!(r.recommended(Tier::Safe), [0, 1], "the safe tier is the same with the flag");
}

#[test]
fn the_memory_bound_is_never_exceeded() {
    let mut truths = field_case();
    truths[0].memory = 3 << 30;
    truths[5].memory = 1 << 30;
    truths[5].effect = (0.05, 0.05);
    for seed in 0..4 {
        let mut mock = Mock::new(std::mem::take(&mut truths), seed);
        let s = settings(120, true);
        let r = run(&mut mock, &s);
        for (_, c) in mock.measured.iter().filter(|(_, c)| !c.dedicated) {
            assert!(mock.memory(&c.set) <= s.memory_limit, "measured over the bound: {c:?}");
        }
        let all: Vec<usize> = (0..r.fates.len()).filter(|&i| r.fates[i].recommended().is_some()).collect();
        assert!(mock.memory(&all) <= s.memory_limit, "recommended over the bound: {all:?}");
        assert!(matches!(&r.fates[0], Fate::NotTried(w) if w.contains("90 %")), "{:?}", r.fates[0]);
        truths = std::mem::take(&mut mock.truths);
    }
}

#[test]
fn the_budget_is_never_exceeded() {
    for minutes in [5u64, 15, 20, 25, 30, 40, 45, 60, 90] {
        for allow in [false, true] {
            let mut mock = Mock::new(field_case(), minutes);
            let s = settings(minutes, allow);
            let r = run(&mut mock, &s);
            assert!(mock.clock <= s.budget, "{minutes} min: used {:?}", mock.clock);
            let estimated: u64 = r.steps.iter().map(|x| x.estimated_s).sum();
            assert!(Duration::from_secs(120 + estimated) <= s.budget, "{minutes} min: estimates {estimated} s");
            if r.conclusion == Conclusion::BudgetTooSmall {
                assert!(r.fates.iter().all(|f| f.recommended().is_none()));
                assert!(r.confirmation.is_none(), "{minutes} min");
                assert!(r.notes.iter().any(|n| n.contains("budget")), "{:?}", r.notes);
            }
        }
    }
    // 5 minutes after 2 of inspection cannot hold the confirmation and a screening.
    let mut mock = Mock::new(field_case(), 1);
    assert_eq!(run(&mut mock, &settings(5, false)).conclusion, Conclusion::BudgetTooSmall);
}

#[test]
fn many_groups_are_halved_within_a_tight_budget() {
    let truths = vec![
        t("a", Area::BufferPool, Risk::Safe, 0.25),
        t("b", Area::Redo, Risk::Safe, 0.0),
        t("c", Area::Io, Risk::Safe, 0.0),
        t("d", Area::Concurrency, Risk::Safe, 0.0),
        t("e", Area::Caches, Risk::Safe, 0.03),
        t("e2", Area::Caches, Risk::Safe, 0.03),
        t("f", Area::TempTables, Risk::Safe, 0.0),
        t("g", Area::Logging, Risk::Safe, 0.04),
    ];
    let mut mock = Mock::new(truths, 3);
    mock.cv = 0.06;
    mock.per_run = Duration::from_secs(20);
    let s = SearchSettings { screen_repetitions: 2, ..settings(45, false) };
    let r = run(&mut mock, &s);
    assert!(mock.clock <= s.budget);
    for i in [1, 2, 3, 6] {
        assert!(r.fates[i].recommended().is_none(), "{i}: {:?}", r.fates[i]);
    }
    let rungs = r.steps.iter().filter(|x| matches!(x.step.phase, Phase::Rung(_))).count();
    let screened = r.screening.iter().filter(|x| x.decision.starts_with("kept")).count();
    assert!(screened < 3 || rungs > 0 || r.attribution.is_some(), "{:?}", r.screening);
}

#[test]
fn advice_that_is_slower_at_one_thread_count_is_withdrawn() {
    let truths = vec![
        Truth { effect: (-0.12, 0.30), ..t("innodb_thread_concurrency", Area::Concurrency, Risk::Safe, 0.0) },
        t("table_open_cache", Area::Caches, Risk::Safe, 0.0),
    ];
    let mut mock = Mock::new(truths, 11);
    mock.cv = 0.01;
    let r = run(&mut mock, &settings(120, false));
    let c = r.confirmation.as_ref().expect("a confirmation");
    let advised = c.index("advised").unwrap();
    assert_eq!(c.rows[0].vs_current[advised].unwrap().verdict, Verdict::Slower, "{c:?}");
    assert!(!c.holds);
    assert!(matches!(&r.fates[0], Fate::Withdrawn(w) if w.contains("confirmation")), "{:?}", r.fates[0]);
    assert_eq!(r.conclusion, Conclusion::NotConfirmed);
}

#[test]
fn the_budget_holds_when_runs_take_longer_than_estimated() {
    // Budgets a few seconds apart, so that some step's limit falls inside a run.
    for (minutes, extra_s) in (20u64..=60).step_by(5).flat_map(|m| [(m, 0u64), (m, 7), (m, 13), (m, 21)]) {
        for seed in 0..3 {
            let mut mock = Mock::new(field_case(), seed + minutes);
            mock.slow = 1.6;
            let mut s = settings(minutes, true);
            s.budget += Duration::from_secs(extra_s);
            let r = run(&mut mock, &s);
            // No run starts that would end after the budget by its estimate corrected by the overrun seen
            // so far: runs that are steadily slower than estimated never overrun the budget.
            assert!(mock.clock <= s.budget, "{minutes} min {extra_s} s, seed {seed}: used {:?}", mock.clock);
            for (i, f) in r.fates.iter().enumerate() {
                if f.recommended().is_some() {
                    let c = r.confirmation.as_ref().expect("a recommendation is confirmed");
                    assert!(c.holds, "{minutes} min, seed {seed}: {i} recommended without a holding confirmation");
                    assert!(c.rows.iter().all(|row| row.vs_current[1..].iter().all(Option::is_some)));
                }
            }
        }
    }
    // Runs three times slower than estimated: the screening runs into its limit (the budget less the
    // confirmation's reserve), says so, and nothing is recommended.
    let mut mock = Mock::new(field_case(), 3);
    mock.slow = 3.0;
    let r = run(&mut mock, &settings(35, false));
    assert!(r.notes.iter().any(|n| n.contains("step 1 ran into its time limit")), "{:?}", r.notes);
    assert!(mock.clock <= Duration::from_secs(35 * 60), "{:?}", mock.clock);
    assert!(r.fates.iter().all(|f| f.recommended().is_none()), "{:?}", r.fates);
}

#[test]
fn the_budget_holds_when_runs_get_slower_in_the_confirmation() {
    // The confirmation ends by the budget itself: once its first runs took twice their estimate, no run
    // starts that would end after the budget at that pace (uncorrected, the last run would overrun it).
    let mut cut = 0;
    for (minutes, extra_s) in (30u64..=60).step_by(10).flat_map(|m| [(m, 0u64), (m, 11), (m, 23), (m, 37)]) {
        for seed in 0..3 {
            let mut mock = Mock::new(field_case(), seed + minutes);
            mock.slow_confirm = Some(2.0);
            let mut s = settings(minutes, false);
            s.budget += Duration::from_secs(extra_s);
            let r = run(&mut mock, &s);
            assert!(mock.clock <= s.budget, "{minutes} min {extra_s} s, seed {seed}: used {:?}", mock.clock);
            cut += usize::from(r.notes.iter().any(|n| n.contains("ran into its time limit")));
        }
    }
    assert!(cut > 0, "some confirmation ran into the budget");
}

#[test]
fn an_unclear_screening_is_screened_again_while_the_budget_allows() {
    // A small true gain under much noise: two screening repetitions rarely decide it. With budget to
    // spare the group is screened again (its values pooled with the first screening's), and the budget
    // holds.
    let truths = || {
        vec![
            t("innodb_buffer_pool_size", Area::BufferPool, Risk::Safe, 0.08),
            t("table_open_cache", Area::Caches, Risk::Safe, 0.0),
        ]
    };
    let mut again = 0;
    for seed in 0..10 {
        let mut mock = Mock::new(truths(), seed);
        mock.cv = 0.06;
        let s = settings(120, false);
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget);
        let screened =
            mock.measured.iter().filter(|(p, c)| *p == Phase::Screen && c.set == vec![0] && !c.dedicated).count();
        if screened > 1 {
            again += 1;
            assert!(r.notes.iter().any(|n| n.contains("unclear group(s) again")), "{:?}", r.notes);
            // Screened again with the current config, never alone.
            assert!(r.steps.iter().filter(|s| s.step.phase == Phase::Screen).all(|s| s.step.configs[0].set.is_empty()));
        }
    }
    assert!(again > 0, "some seed screened the unclear group again");
    // No budget to spare: one screening only.
    let mut mock = Mock::new(truths(), 1);
    mock.cv = 0.06;
    let r = run(&mut mock, &settings(18, false));
    let screens = r.steps.iter().filter(|s| s.step.phase == Phase::Screen).count();
    assert!(screens <= 1, "{screens} screenings in 18 min: {:?}", r.notes);
}

#[test]
fn a_screening_round_in_a_slow_spell_does_not_reopen_the_groups_it_did_not_measure() {
    // The buffer pool screens unclear and is screened again while the host runs at 60 % of its speed.
    // The redo group (10 % slower) was decided in the first round: judged against that round's current
    // config only, it stays decided. Against the current config pooled over both rounds, fast and slow,
    // it looked faster and was screened again, on the slow spell alone.
    let truths = || {
        vec![
            t("innodb_buffer_pool_size", Area::BufferPool, Risk::Safe, 0.08),
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, -0.10),
        ]
    };
    let mut again = 0;
    for seed in 0..10 {
        let mut mock = Mock::new(truths(), seed);
        mock.cv = 0.06;
        mock.screen_levels = vec![1.0, 0.6, 1.0];
        let r = run(&mut mock, &settings(120, false));
        if r.steps.iter().filter(|s| s.step.phase == Phase::Screen).count() < 2 {
            continue;
        }
        again += 1;
        let redo_screens = mock.measured.iter().filter(|(p, c)| *p == Phase::Screen && c.set == vec![1]).count();
        assert_eq!(redo_screens, 1, "seed {seed}: the redo group was screened again: {:?}", r.notes);
        let redo = r.screening.iter().find(|g| g.area == Area::Redo).expect("the redo group was screened");
        assert!(!redo.decision.starts_with("kept"), "seed {seed}: {}", redo.decision);
    }
    assert!(again > 0, "some seed screened the unclear group again");
}

/// Adaptive attribution steps (`--until ±1% --max-repetitions 10`): rounds of one repetition are
/// added to open attribution probes, and the budget still holds at every size.
#[test]
fn adaptive_attribution_steps_stay_within_the_budget() {
    let adaptive = crate::experiment::Repetitions { min: 3, max: 10, until: Some(0.01) };
    let mut added = 0;
    for minutes in [15u64, 25, 40, 60, 90, 120, 180] {
        let mut mock = Mock::new(field_case(), minutes);
        mock.cv = 0.05;
        let s = SearchSettings { adaptive: Some(adaptive), ..settings(minutes, true) };
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget, "{minutes} min: used {:?}", mock.clock);
        added +=
            r.steps.iter().filter(|x| matches!(x.step.phase, Phase::Attribution(_)) && x.step.repetitions == 1).count();
    }
    assert!(added > 0, "no attribution step added a round of one repetition");
}

/// A value not recommended from the screening or the attribution says what could have been detected.
#[test]
fn not_recommended_values_say_what_could_have_been_detected() {
    let (mut said, mut without) = (0, Vec::new());
    for (minutes, seed) in [(40u64, 1u64), (60, 2), (90, 3)] {
        let mut mock = Mock::new(field_case(), seed);
        let r = run(&mut mock, &settings(minutes, false));
        for f in &r.fates {
            let w = match f {
                Fate::NoEffect(w) if w.contains("in screening") => w,
                Fate::NotProven(w) if w.contains("was not significant") => w,
                _ => continue,
            };
            if w.contains("it could detect only changes beyond ±") { said += 1 } else { without.push(w.clone()) }
        }
    }
    assert!(said > 0 && without.is_empty(), "{said} said it; without: {without:?}");
}

#[test]
fn a_value_screened_alone_is_recommended_when_the_budget_leaves_no_attribution() {
    // Screening 5 configs × 2 repetitions × 2 thread counts of 30 s and the confirmation's 3 × 5 × 2
    // leave 60 s of 28 min for the attribution: not one step of it (the MySQL 9.7 field case).
    let truths = || {
        vec![
            Truth { memory: 768 << 20, ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, 0.25) },
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.0),
            t("innodb_io_capacity", Area::Io, Risk::Safe, 0.0),
        ]
    };
    let mut found = 0;
    for seed in 0..12 {
        let mut mock = Mock::new(truths(), seed);
        let s = settings(28, false);
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget, "seed {seed}: {:?}", mock.clock);
        assert!(
            !mock.measured.iter().any(|(p, _)| matches!(p, Phase::Attribution(_))),
            "seed {seed}: the budget had no room for an attribution step"
        );
        for i in 1..3 {
            assert!(r.fates[i].recommended().is_none(), "seed {seed}: a null value recommended: {:?}", r.fates[i]);
        }
        if r.fates[0].recommended().is_some() {
            found += 1;
            let c = r.contributions[0].as_ref().unwrap();
            // +25 % is 20 points of the advised mean.
            assert!(c.lo > 0.0 && c.lo < 20.0 && 20.0 < c.hi, "seed {seed}: {c:?}");
            let proof = ["on its screening alone", "is recommended on the confirmation"];
            assert!(r.notes.iter().any(|n| proof.iter().any(|p| n.contains(p))), "seed {seed}: {:?}", r.notes);
            assert_eq!(r.conclusion, Conclusion::Recommended, "seed {seed}: {:?}", r.notes);
            assert_eq!(r.confirmation.as_ref().unwrap().labels, ["current", "dedicated", "advised"]);
        }
    }
    assert!(found >= 11, "a +25 % buffer pool screened alone is recommended ({found} of 12)");
}

#[test]
fn a_screening_that_does_not_fit_is_fitted_before_the_budget_is_called_too_small() {
    // The MySQL 9.7 field case at 35 s per run with the durability tier allowed: the confirmation's
    // 4 configs × 5 × 2 reserve 1400 s, and screening the current config, all together and three
    // groups at 4 repetitions (1400 s) did not fit the 1180 s left, so nothing was tried.
    let truths = || {
        vec![
            Truth { memory: 768 << 20, ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, 0.25) },
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.0),
            t("innodb_thread_concurrency", Area::Concurrency, Risk::Safe, 0.0),
            t("innodb_flush_log_at_trx_commit", Area::Durability, Risk::Durability, 0.3),
        ]
    };
    let screened = |mock: &Mock| -> Vec<String> {
        let labels = mock.measured.iter().filter(|(p, _)| *p == Phase::Screen).map(|(_, c)| c.label.clone());
        labels.collect::<BTreeSet<_>>().into_iter().collect()
    };
    for (minutes, reps) in [(45, 4), (42, 3)] {
        let mut mock = Mock::new(truths(), 3);
        mock.per_run = Duration::from_secs(35);
        let s = SearchSettings { screen_repetitions: 4, ..settings(minutes, true) };
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget, "{minutes} min: {:?}", mock.clock);
        assert_ne!(r.conclusion, Conclusion::BudgetTooSmall, "{minutes} min: {:?}", r.notes);
        let labels = screened(&mock);
        assert!(labels.len() == 4 && !labels.iter().any(|l| l == "current+all"), "{labels:?}");
        let first = &r.steps[0].step;
        assert_eq!((first.phase, first.repetitions, first.configs.len()), (Phase::Screen, reps, 4), "{minutes} min");
        assert!(r.notes.iter().any(|n| n.contains("(current+all) are not screened")), "{:?}", r.notes);
        let fewer = r.notes.iter().any(|n| n.contains(&format!("runs {reps} repetitions instead of 4")));
        assert_eq!(fewer, reps < 4, "{minutes} min: {:?}", r.notes);
        assert!(r.fates[1].recommended().is_none() && r.fates[2].recommended().is_none(), "{:?}", r.fates);
    }
    // Below 3 repetitions it is not fitted: too small a budget is still said so.
    let mut mock = Mock::new(truths(), 3);
    mock.per_run = Duration::from_secs(35);
    let r = run(&mut mock, &SearchSettings { screen_repetitions: 4, ..settings(36, true) });
    assert_eq!(r.conclusion, Conclusion::BudgetTooSmall, "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("even at 3 repetitions")), "{:?}", r.notes);
    assert!(mock.measured.is_empty());
}

#[path = "trial_tests.rs"]
mod trial;

#[path = "groups_tests.rs"]
mod groups;

#[path = "budget_tests.rs"]
mod budget;
