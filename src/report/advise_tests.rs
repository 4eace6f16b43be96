use std::collections::BTreeMap;

use super::*;
use crate::advise::facts::Facts;
use crate::advise::memory::worst_case;
use crate::advise::rules::{Area, Candidate};
use crate::advise::search::SearchResult;
use crate::server::{Flavor, Version};

fn cand(variable: &str, value: &str, old: &str, risk: Risk) -> Candidate {
    Candidate {
        variable: variable.into(),
        value: value.into(),
        display: value.into(),
        old: Some(old.into()),
        area: Area::BufferPool,
        risk,
        rule: format!("the rule of {variable}"),
        source: "a source".into(),
        loses: (risk == Risk::Durability).then(|| "the last second of commits".into()),
        why: "because".into(),
    }
}

fn report() -> AdviseReport {
    let vars: BTreeMap<String, String> = [("innodb_buffer_pool_size", "134217728"), ("max_connections", "151")]
        .map(|(k, v)| (k.into(), v.into()))
        .into();
    let facts = Facts {
        free_disk: None,
        fsync_us: Some(900.0),
        ..Facts::example(Flavor::Mariadb, Version::new(10, 11, 19), vars.clone())
    };
    let m = worst_case(facts.flavor, facts.version, &|n| vars.get(n).cloned(), facts.memory);
    let candidates = vec![
        cand("innodb_buffer_pool_size", "896M", "134217728", Risk::Memory),
        cand("table_open_cache", "8000", "4000", Risk::Safe),
        cand("innodb_flush_log_at_trx_commit", "2", "1", Risk::Durability),
    ];
    let result = SearchResult {
        fates: vec![
            Fate::Recommended(Tier::Safe),
            Fate::NoEffect("no effect measured on this workload (leaving it out cost nothing significant)".into()),
            Fate::Recommended(Tier::Durability),
        ],
        contributions: vec![
            Some(Contribution { points: 21.0, lo: 12.2, hi: 29.8, together_with: vec![], measured_with: vec![] }),
            None,
            Some(Contribution { points: 9.5, lo: 3.1, hi: 15.9, together_with: vec![], measured_with: vec![] }),
        ],
        screening: vec![],
        attribution: None,
        durability: None,
        confirmation: None,
        steps: vec![],
        conclusion: Conclusion::Recommended,
        notes: vec![],
        undecided: vec![],
    };
    AdviseReport {
        target: "build system".into(),
        server_version: Some("10.11.19-MariaDB".into()),
        workload: "oltp_read_write".into(),
        threads: vec![2, 8],
        metric: "tps".into(),
        noise_band: 0.034,
        noise_band_source:
            "calibrated by `versus calibrate` on host class hc-0123456789ab: oltp_read_write @ 8 thr 3.4 %".into(),
        budget_s: 2700,
        seconds_per_run: 20,
        facts,
        probe: None,
        candidates,
        considered: vec![],
        refused: vec![],
        dedicated: None,
        memory_current: m.clone(),
        memory_advised: Some(m),
        plan: vec![],
        estimate_s: 2700,
        result: Some(result),
        dedicated_gap: None,
        experiments: vec![(1, "advise-probe".into())],
        elapsed_s: 2600,
    }
}

#[test]
fn the_fragment_gives_every_line_its_old_value_rule_risk_and_effect() {
    let text = render_cnf(&report());
    let lines: Vec<&str> = text.lines().collect();
    let at = |l: &str| lines.iter().position(|x| *x == l).unwrap_or_else(|| panic!("no line {l:?} in\n{text}"));
    let bp = at("innodb_buffer_pool_size = 896M");
    assert_eq!(
        lines[bp - 1],
        "# was 134217728; rule: the rule of innodb_buffer_pool_size; risk: memory; measured: +21.0 points of the \
         advised mean (CI +12.2 to +29.8)"
    );
    let trades = at("# DURABILITY TRADES (--allow-durability-trade): a crash can lose data");
    let flush = at("innodb_flush_log_at_trx_commit = 2");
    assert!(bp < trades && trades < flush, "the durability tier comes after the safe advice:\n{text}");
    assert!(text.contains("# innodb_flush_log_at_trx_commit: a crash can lose the last second of commits"));
    assert!(
        text.contains("# table_open_cache = 8000 (was 4000): not recommended: no effect measured on this workload")
    );
    assert!(!lines.contains(&"table_open_cache = 8000"), "a value without effect is not set:\n{text}");
}

#[test]
fn every_output_says_why_the_advice_does_not_beat_dedicated() {
    use crate::advise::dedicated::Dedicated;
    use crate::advise::search::{Samples, confirmation};
    let mut r = report();
    let level = |x: f64| Samples {
        per_threads: [(2, vec![x, x * 1.01, x * 0.99, x, x * 1.005]), (8, vec![x, x * 0.99, x * 1.01, x, x])].into(),
        combined: vec![x, x, x * 1.005, x * 0.995, x],
    };
    let compare = crate::stats::CompareConfig { noise_band: 0.02, ..crate::stats::CompareConfig::default() };
    let labels = ["current", "dedicated", "advised"].map(String::from).to_vec();
    let c = confirmation(labels, &[Ok(level(100.0)), Ok(level(140.0)), Ok(level(131.0))], 5, &[2, 8], &compare);
    let res = r.result.as_mut().unwrap();
    res.confirmation = Some(c);
    let d = Dedicated {
        overrides: vec![],
        settings: vec![("innodb_buffer_pool_size".into(), "2G".into()), ("innodb_log_file_size".into(), "1G".into())],
        how: "formulas".into(),
    };
    r.dedicated_gap = crate::advise::gap::dedicated_gap(&d, &r.facts.variables, &r.candidates, res, &[], &[]);
    assert!(r.dedicated_gap.is_some(), "advised is 6 % slower than dedicated");
    let want = "innodb_buffer_pool_size: dedicated sets 2G, the current config has 134217728, the advice 896M: the \
                advice sets 896M by its rule (because), measured +21.0 points";
    for format in [OutputFormat::Text, OutputFormat::Markdown] {
        let text = render_advise(&r, format, false).unwrap();
        assert!(text.contains("Why the advice does not beat innodb_dedicated_server"), "{text}");
        assert!(text.contains("- advised vs dedicated: -6.4 % (CI "), "{text}");
        assert!(text.contains(want), "{text}");
        assert!(
            text.contains(
                "innodb_log_file_size: dedicated sets 1G, the current config has ?, the advice leaves \
                               it: no rule of the advice covers it"
            ),
            "{text}"
        );
    }
    let cnf = render_cnf(&r);
    assert!(
        cnf.contains("# Why the advice does not beat innodb_dedicated_server:\n#   advised vs dedicated: -6.4 %"),
        "{cnf}"
    );
    assert!(cnf.contains(&format!("#   {want}")), "{cnf}");
    let json: serde_json::Value = serde_json::from_str(&render_advise(&r, OutputFormat::Json, false).unwrap()).unwrap();
    assert_eq!(json["dedicated_gap"]["settings"][0]["status"], "advised_other_value", "{json}");
    assert_eq!(json["dedicated_gap"]["overall"]["verdict"], "Slower");
}

#[test]
fn the_table_and_json_carry_the_risk_and_the_outcome() {
    let r = report();
    let text = render_advise(&r, OutputFormat::Text, false).unwrap();
    assert!(text.contains("durability trade (a crash can lose the last second of commits)"), "{text}");
    assert!(text.contains("recommended: +21.0 points of the advised mean (CI +12.2 to +29.8)"), "{text}");
    assert!(text.contains("advising for 4.0 GiB (--memory)"), "{text}");
    assert!(text.contains("noise band 3.4 %: calibrated by `versus calibrate` on host class hc-"), "{text}");
    let md = render_advise(&r, OutputFormat::Markdown, false).unwrap();
    assert!(md.contains("noise band 3.4 %: calibrated"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&render_advise(&r, OutputFormat::Json, false).unwrap()).unwrap();
    assert_eq!(json["result"]["fates"][1]["fate"], "no_effect");
    assert_eq!(json["candidates"][2]["risk"], "durability");
    assert_eq!(json["noise_band"], 0.034);
    assert!(json["noise_band_source"].as_str().unwrap().starts_with("calibrated"), "{json}");
    let mut r = r;
    r.result.as_mut().unwrap().contributions[0].as_mut().unwrap().measured_with = vec!["innodb_log_file_size".into()];
    let cnf = render_cnf(&r);
    assert!(cnf.contains("(CI +12.2 to +29.8), measured with innodb_log_file_size in the set (not"), "{cnf}");
}
