//! Values on trial in the confirmation ([`super::super::trial`]), with the mock measurement of the
//! search's tests.

use super::*;

#[test]
fn an_unresolved_value_is_proven_or_not_by_the_confirmation() {
    // The MySQL 9.7 field case at 45 min: screening 4 configs × 4 × 2 runs of 35 s and the confirmation's
    // reserve leave no attribution step, and a +12 % buffer pool at a CV of 8 % screens unclear. It goes
    // into the confirmation alone, which recommends it only if advised beats current there.
    let truths = |bp: f64| {
        vec![
            Truth { memory: 768 << 20, ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, bp) },
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.0),
            t("innodb_thread_concurrency", Area::Concurrency, Risk::Safe, 0.0),
        ]
    };
    let (mut tried, mut found, mut bp_found) = (0, 0, 0);
    for (bp, seeds) in [(0.12, 0..16u64), (0.0, 100..116)] {
        for seed in seeds {
            let mut mock = Mock::new(truths(bp), seed);
            mock.per_run = Duration::from_secs(35);
            mock.cv = 0.08;
            let s = SearchSettings { screen_repetitions: 4, ..settings(45, false) };
            let r = run(&mut mock, &s);
            assert!(mock.clock <= s.budget, "seed {seed}: {:?}", mock.clock);
            for i in 1..3 {
                assert!(r.fates[i].recommended().is_none(), "seed {seed}: a null value recommended: {:?}", r.notes);
            }
            if bp == 0.0 {
                assert!(r.fates[0].recommended().is_none(), "seed {seed}: a null buffer pool: {:?}", r.notes);
            }
            bp_found += usize::from(r.fates[0].recommended().is_some());
            let Some(note) = r.notes.iter().find(|n| n.contains("the confirmation measures it alone")) else {
                continue;
            };
            let k = mock.truths.iter().position(|x| note.starts_with(x.variable)).expect("names the value");
            tried += 1;
            let c = r.confirmation.as_ref().expect("the value on trial is confirmed");
            assert_eq!(c.labels, ["current", "dedicated", "advised"], "seed {seed}");
            assert!(c.repetitions >= 5, "seed {seed}: {c:?}");
            let on_confirmation = r.notes.iter().any(|n| n.contains("is recommended on the confirmation"));
            assert_eq!(on_confirmation, r.fates[k].recommended().is_some(), "seed {seed}: {:?}", r.fates[k]);
            if on_confirmation {
                found += usize::from(k == 0);
                let a = c.index("advised").unwrap();
                let row = c.rows.last().unwrap();
                assert!(c.holds && row.vs_current[a].as_ref().unwrap().verdict == Verdict::Faster, "seed {seed}");
                let con = r.contributions[k].as_ref().unwrap();
                assert!(con.lo > 0.0 && con.points > con.lo && con.hi > con.points, "seed {seed}: {con:?}");
                assert_eq!(r.conclusion, Conclusion::Recommended);
            } else {
                assert!(matches!(&r.fates[k], Fate::NotProven(w) if w.contains("confirmation")), "{:?}", r.fates[k]);
                assert_ne!(r.conclusion, Conclusion::Recommended);
            }
        }
    }
    assert!(tried >= 8, "the confirmation tried an unresolved value in {tried} of 32 cases");
    assert!(found >= 2, "a +12 % buffer pool was proven by the confirmation in {found} cases");
    assert!(bp_found >= 6, "a +12 % buffer pool was recommended in {bp_found} of 16 cases");
}

#[test]
fn unresolved_durability_trades_are_measured_in_the_confirmation() {
    // The 45-min case with the durability tier allowed: the search leaves no room to attribute the
    // trades, and the confirmation's durability config, reserved from the start, measures them on top of
    // the safe advice. One trade can be recommended on it; several are reported, never recommended.
    let truths = |trades: usize| {
        let mut v = vec![
            Truth { memory: 768 << 20, ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, 0.25) },
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.0),
            t("innodb_thread_concurrency", Area::Concurrency, Risk::Safe, 0.0),
            t("innodb_flush_log_at_trx_commit", Area::Durability, Risk::Durability, 0.3),
        ];
        if trades > 1 {
            v.push(t("innodb_doublewrite", Area::Durability, Risk::Durability, 0.0));
        }
        v
    };
    let (mut one, mut together) = (0, 0);
    for trades in [1, 2] {
        for seed in 0..8u64 {
            let mut mock = Mock::new(truths(trades), seed);
            mock.per_run = Duration::from_secs(35);
            mock.cv = 0.05;
            let s = SearchSettings { screen_repetitions: 4, ..settings(45, true) };
            let r = run(&mut mock, &s);
            assert!(mock.clock <= s.budget, "seed {seed}: {:?}", mock.clock);
            let Some(c) = &r.confirmation else { continue };
            if !r.notes.iter().any(|n| n.starts_with("the budget left") && n.contains("durability trade")) {
                continue;
            }
            assert!(c.labels.iter().any(|l| l == "advised+durability"), "seed {seed}: {:?}", c.labels);
            if trades == 1 {
                if r.fates[3].recommended() == Some(Tier::Durability) {
                    one += 1;
                    let con = r.contributions[3].as_ref().unwrap();
                    assert!(con.lo > 0.0, "seed {seed}: {con:?}");
                    assert_eq!(c.durability_holds, Some(true));
                }
            } else {
                for i in [3, 4] {
                    assert!(r.fates[i].recommended().is_none(), "seed {seed}: {:?}", r.fates[i]);
                    assert!(r.contributions[i].is_none());
                }
                if matches!(&r.fates[3], Fate::NotProven(w) if w.contains("together measured")) {
                    together += 1;
                }
            }
        }
    }
    assert!(one >= 4, "a +30 % trade on trial alone was recommended in {one} of 8 cases");
    assert!(together >= 4, "two trades on trial were reported together in {together} of 8 cases");
}

#[test]
fn durability_trades_on_trial_without_a_safe_advice_are_measured_on_the_current_config() {
    // No safe candidate, and a budget whose confirmation reserve leaves the attribution no room: the
    // trade goes into the confirmation on top of the current config, and alone it can be recommended.
    let mut one = 0;
    for seed in 0..6u64 {
        let mut mock =
            Mock::new(vec![t("innodb_flush_log_at_trx_commit", Area::Durability, Risk::Durability, 0.3)], seed);
        mock.per_run = Duration::from_secs(35);
        let s = settings(20, true);
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget, "seed {seed}: {:?}", mock.clock);
        assert!(r.notes.iter().any(|n| n.contains("alone on top of the current config")), "seed {seed}: {:?}", r.notes);
        let c = r.confirmation.as_ref().expect("the trade on trial is confirmed");
        assert_eq!(c.labels, ["current", "dedicated", "advised+durability"], "seed {seed}");
        assert!(!c.holds, "no safe advice to hold");
        if r.fates[0].recommended() == Some(Tier::Durability) {
            one += 1;
            assert!(r.contributions[0].as_ref().is_some_and(|k| k.lo > 0.0));
            assert_eq!(r.conclusion, Conclusion::Recommended);
        } else {
            assert_eq!(r.conclusion, Conclusion::NothingProven, "seed {seed}: {:?}", r.fates);
        }
    }
    assert!(one >= 5, "a +30 % trade alone was recommended in {one} of 6 cases");
}

#[test]
fn a_trade_on_trial_is_never_recommended_on_a_safe_advice_that_did_not_stand() {
    // The buffer pool screens faster (+25 % at 2 threads) and is recommended on its screening alone, but
    // it is slower at 8 threads: the confirmation withdraws it, and the trade measured on top of it is
    // not recommended either, however fast.
    let truths = || {
        vec![
            Truth {
                memory: 768 << 20,
                effect: (0.25, -0.08),
                ..t("innodb_buffer_pool_size", Area::BufferPool, Risk::Memory, 0.0)
            },
            t("innodb_redo_log_capacity", Area::Redo, Risk::Safe, 0.0),
            t("innodb_flush_log_at_trx_commit", Area::Durability, Risk::Durability, 0.3),
        ]
    };
    let mut checked = 0;
    for seed in 0..6u64 {
        let mut mock = Mock::new(truths(), seed);
        mock.per_run = Duration::from_secs(35);
        let s = SearchSettings { screen_repetitions: 4, ..settings(40, true) };
        let r = run(&mut mock, &s);
        assert!(mock.clock <= s.budget, "seed {seed}: {:?}", mock.clock);
        assert!(r.fates.iter().all(|f| f.recommended().is_none()), "seed {seed}: {:?}", r.fates);
        assert!(r.contributions.iter().all(Option::is_none), "seed {seed}");
        if let Some(c) = &r.confirmation
            && c.labels.iter().any(|l| l == "advised")
        {
            checked += 1;
            assert!(!c.holds, "seed {seed}: slower at 8 threads");
            assert!(
                matches!(&r.fates[2], Fate::NotProven(w) | Fate::Withdrawn(w) if w.contains("did not stand") || w.contains("not proven") || w.contains("together")),
                "seed {seed}: {:?}",
                r.fates[2]
            );
        }
    }
    assert!(checked >= 3, "the advice was confirmed in {checked} of 6 cases");
}
