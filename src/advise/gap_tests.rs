//! Why the advice does not beat the dedicated baseline, on the MariaDB 10.11 field report's shape.

use std::collections::BTreeMap;

use super::*;
use crate::advise::rules::{Area, Risk};
use crate::advise::search::{Conclusion, Contribution, Samples, Tier, confirmation};
use crate::explain::skip::SkipReason;
use crate::stats::{BootstrapConfig, CompareConfig};

fn cand(variable: &str, value: &str, display: &str, area: Area) -> Candidate {
    Candidate {
        variable: variable.into(),
        value: value.into(),
        display: display.into(),
        old: Some("128M".into()),
        area,
        risk: Risk::Safe,
        rule: "a rule".into(),
        source: "a source".into(),
        loses: None,
        why: "the data × 1.25".into(),
    }
}

/// Samples around `level` at 2 and 8 threads (8 threads ×`at8`), 5 repetitions, ±1 % apart.
fn samples(level: f64, at8: f64) -> Samples {
    let wiggle = [1.0, 1.01, 0.99, 1.005, 0.995];
    let mut s = Samples::default();
    for w in wiggle {
        let (a, b) = (level * w, level * at8 * w);
        s.per_threads.entry(2).or_default().push(a);
        s.per_threads.entry(8).or_default().push(b);
        s.combined.push((a * b).sqrt());
    }
    s
}

fn result(advised: f64, dedicated: f64, fates: Vec<Fate>) -> SearchResult {
    let compare = CompareConfig {
        direction: crate::stats::Direction::HigherIsBetter,
        noise_band: 0.02,
        bootstrap: BootstrapConfig { confidence: 0.95, seed: 1, ..BootstrapConfig::default() },
    };
    let labels = vec!["current".to_string(), "dedicated".to_string(), "advised".to_string()];
    let results = vec![Ok(samples(100.0, 1.5)), Ok(samples(dedicated, 1.5)), Ok(samples(advised, 1.5))];
    let n = fates.len();
    let mut contributions = vec![None; n];
    contributions[0] =
        Some(Contribution { points: 30.0, lo: 20.0, hi: 40.0, together_with: vec![], measured_with: vec![] });
    SearchResult {
        fates,
        contributions,
        screening: vec![],
        attribution: None,
        durability: None,
        confirmation: Some(confirmation(labels, &results, 5, &[2, 8], &compare)),
        steps: vec![],
        conclusion: Conclusion::Recommended,
        notes: vec![],
        undecided: vec![],
    }
}

fn baseline() -> Dedicated {
    Dedicated {
        overrides: vec![],
        settings: vec![
            ("innodb_buffer_pool_size".into(), "2G".into()),
            ("innodb_log_file_size".into(), "1G".into()),
            ("innodb_flush_method".into(), "O_DIRECT_NO_FSYNC".into()),
            ("innodb_log_files_in_group".into(), "2".into()),
        ],
        how: "formulas".into(),
    }
}

#[test]
fn every_setting_the_advice_does_not_share_is_explained_with_the_figures() {
    let cands = vec![
        cand("innodb_buffer_pool_size", "939524096", "896M", Area::BufferPool),
        cand("innodb_log_file_size", "100663296", "96M", Area::Redo),
        cand("innodb_flush_method", "O_DIRECT_NO_FSYNC", "O_DIRECT_NO_FSYNC", Area::Io),
    ];
    let fates = vec![
        Fate::Recommended(Tier::Safe),
        Fate::NoEffect("no effect measured on this workload (its group in screening: +0.4 %)".into()),
        Fate::NotTried("a durability trade: tried only with --allow-durability-trade".into()),
    ];
    let r = result(93.0, 100.0, fates);
    let vars: BTreeMap<String, String> =
        [("innodb_buffer_pool_size", "134217728"), ("innodb_log_file_size", "100663296")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let considered = vec![Considered {
        variable: "innodb_log_files_in_group".into(),
        risk: Risk::Safe,
        rule: "one redo file".into(),
        outcome: "MariaDB has one redo log file".into(),
    }];
    let g = dedicated_gap(&baseline(), &vars, &cands, &r, &considered, &[]).expect("advised is 7 % slower");
    assert_eq!(g.overall.verdict, Verdict::Slower);
    assert_eq!(g.per_threads.len(), 2);
    let by: BTreeMap<&str, &GapSetting> = g.settings.iter().map(|s| (s.variable.as_str(), s)).collect();
    assert_eq!(by["innodb_buffer_pool_size"].status, GapStatus::AdvisedOtherValue);
    assert_eq!(by["innodb_buffer_pool_size"].advised.as_deref(), Some("896M"));
    assert!(by["innodb_buffer_pool_size"].why.contains("measured +30.0 points"), "{:?}", by["innodb_buffer_pool_size"]);
    assert_eq!(by["innodb_log_file_size"].status, GapStatus::CandidateNotRecommended);
    assert!(by["innodb_log_file_size"].why.contains("96M (not dedicated's 1G), not recommended: no effect"), "{g:?}");
    assert!(by["innodb_flush_method"].why.contains("dedicated's own value, not tried: a durability trade"), "{g:?}");
    assert_eq!(by["innodb_log_files_in_group"].status, GapStatus::NoCandidate);
    assert!(by["innodb_log_files_in_group"].why.contains("MariaDB has one redo log file"));
    let lines = g.lines();
    assert!(lines[0].starts_with("advised vs dedicated: -7.0 % (CI "), "{lines:?}");
    assert!(lines[0].contains("slower (2 thr -7.0 %"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with(
        "innodb_buffer_pool_size: dedicated sets 2G, the current config has 134217728, the advice 896M: "
    )));
    assert_eq!(lines.len(), 1 + 4);
}

#[test]
fn refused_values_and_variables_without_a_rule_are_named() {
    let cands = vec![cand("innodb_buffer_pool_size", "2147483648", "2G", Area::BufferPool)];
    let r = result(100.5, 100.0, vec![Fate::Recommended(Tier::Safe)]);
    let refused = vec![Skipped {
        name: "innodb_log_file_size".into(),
        a: Some("4G".into()),
        b: None,
        reason: SkipReason::Rejected("the server did not start: too large".into()),
    }];
    let g = dedicated_gap(&baseline(), &BTreeMap::new(), &cands, &r, &[], &refused).expect("not significantly faster");
    assert_eq!(g.overall.verdict, Verdict::NoSignificantChange);
    let vars: Vec<&str> = g.settings.iter().map(|s| s.variable.as_str()).collect();
    assert_eq!(
        vars,
        ["innodb_log_file_size", "innodb_flush_method", "innodb_log_files_in_group"],
        "the same pool is not a gap"
    );
    assert_eq!(g.settings[0].status, GapStatus::Refused);
    assert!(g.settings[0].why.contains("the rules' 4G was dropped: "), "{:?}", g.settings[0]);
    assert_eq!(g.settings[1].status, GapStatus::NoRule);
}

#[test]
fn no_gap_when_the_advice_beats_the_baseline_or_there_is_no_baseline() {
    let cands = vec![cand("innodb_buffer_pool_size", "939524096", "896M", Area::BufferPool)];
    let r = result(130.0, 100.0, vec![Fate::Recommended(Tier::Safe)]);
    assert!(dedicated_gap(&baseline(), &BTreeMap::new(), &cands, &r, &[], &[]).is_none());
    let mut r = result(90.0, 100.0, vec![Fate::Recommended(Tier::Safe)]);
    r.confirmation = None;
    assert!(dedicated_gap(&baseline(), &BTreeMap::new(), &cands, &r, &[], &[]).is_none());
}
