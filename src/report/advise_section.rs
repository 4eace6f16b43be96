//! The advise section of the comparison report ([`crate::advise::section`]): for every selected
//! confirmation experiment of `versus advise`, what each config sets, whether the advice held, the
//! confirmation table (means, ratios against the current config with intervals and verdicts, per thread
//! count) and, in HTML, two charts: the configs' means by thread count and their ratios to the current
//! config with intervals. The writers of each format ([`super::markdown`], [`super::html`],
//! [`super::terminal`]) lay the parts out.

use super::advise::confirmation_of;
use super::select::{Selected, Selection, stored_sections};
use crate::advise::gap;
use crate::advise::section::{self, AdviseSection};
use crate::error::Result;
use crate::present::svg::{LineChart, RatioChart, RatioPoint, Series, charts};
use crate::present::table::Table;
use crate::stats::Verdict;
use crate::store::Store;

/// The advise section of every selected confirmation experiment of `versus advise`.
pub fn advise_sections(store: &Store, s: &Selected, sel: &Selection) -> Result<Vec<AdviseSection>> {
    stored_sections(store, s, sel, section::from_stored)
}

/// The heading of section `s`.
pub fn heading(s: &AdviseSection) -> String {
    format!("Advised: {}", s.experiment)
}

/// What was advised on, what each config sets, and whether the advice held.
pub fn lines(s: &AdviseSection) -> Vec<String> {
    let mut out =
        vec![format!("{} on {}; {} of every config at each thread count", s.description, s.workload, s.metric)];
    for c in s.configs.iter().skip(1) {
        let sets = if c.sets.is_empty() { "nothing on top of the current config".into() } else { c.sets.join(" ") };
        out.push(format!("{}: {sets}", c.label));
    }
    let c = &s.confirmation;
    let verdicts = |i: usize| -> (usize, usize, usize) {
        let rows = c.rows.iter().filter(|r| r.threads.is_some());
        let v: Vec<Verdict> = rows.filter_map(|r| r.vs_current.get(i).copied().flatten()).map(|x| x.verdict).collect();
        let n = |w: Verdict| v.iter().filter(|x| **x == w).count();
        (n(Verdict::Faster), n(Verdict::Slower), v.len())
    };
    if let Some(i) = c.index("advised") {
        let (faster, slower, n) = verdicts(i);
        out.push(format!(
            "the advice {}: faster than the current config at {faster} of {n} thread count(s), slower at {slower}",
            if c.holds { "holds" } else { "does not hold" }
        ));
    }
    if let Some(held) = c.durability_holds {
        out.push(format!(
            "the durability tier {}",
            if held {
                "measured faster than the safe advice (a crash can lose data); a trade is recommended only with a \
                 measured contribution of its own"
            } else {
                "is not shown faster than the safe advice"
            }
        ));
    }
    out.extend(why_not_dedicated(s));
    out.extend(s.notes.iter().map(|n| format!("not measured: {n}")));
    out
}

/// When the advice does not beat the dedicated baseline: the comparison, and what the baseline sets
/// that the advice does not (as `versus advise` recorded it, else from the configs' settings).
fn why_not_dedicated(s: &AdviseSection) -> Vec<String> {
    let c = &s.confirmation;
    let Some(per_threads) = c
        .index("dedicated")
        .and(c.index("advised"))
        .map(|_| c.rows.iter().filter_map(|r| Some((r.threads?, r.advised_vs_dedicated?))).collect::<Vec<_>>())
    else {
        return vec![];
    };
    let overall = c.rows.iter().find(|r| r.threads.is_none()).and_then(|r| r.advised_vs_dedicated);
    let Some(overall) = overall.or_else(|| per_threads.first().map(|(_, x)| *x).filter(|_| per_threads.len() == 1))
    else {
        return vec![];
    };
    if !gap::falls_short(&overall, &per_threads) {
        return vec![];
    }
    let mut out = vec![format!("{}: {}", gap::heading(&overall), gap::comparison_line(&overall, &per_threads))];
    if !s.dedicated_unshared.is_empty() {
        out.extend(s.dedicated_unshared.iter().cloned());
        return out;
    }
    let sets = |label: &str| s.configs.iter().find(|x| x.label == label).map(|x| x.sets.clone()).unwrap_or_default();
    let advised = sets("advised");
    for d in sets("dedicated") {
        if advised.contains(&d) {
            continue;
        }
        let name = d.split('=').next().unwrap_or(&d);
        let own = advised.iter().find(|a| a.split('=').next() == Some(name));
        out.push(match own {
            Some(a) => format!("dedicated sets {d}, the advice {a}"),
            None => format!("dedicated sets {d}, the advice leaves it"),
        });
    }
    out
}

/// The confirmation table of section number `i` (its title under the section's heading).
pub fn table(s: &AdviseSection, i: usize) -> Table {
    let mut t = confirmation_of(&s.confirmation, &s.metric, &format!("advise-confirmation-{i}"));
    t.title = format!("Confirmation ({} shuffled repetitions)", s.confirmation.repetitions);
    t
}

/// The configs' means by thread count (with two thread counts or more), and each config's ratio to the
/// current config with its interval, per thread count.
pub fn charts(s: &AdviseSection) -> Vec<String> {
    let c = &s.confirmation;
    let rows: Vec<_> = c.rows.iter().filter_map(|r| r.threads.map(|t| (t, r))).collect();
    let mut out = Vec::new();
    if rows.len() >= 2 {
        let series = c
            .labels
            .iter()
            .enumerate()
            .map(|(k, label)| Series {
                name: label.clone(),
                color: k,
                points: rows
                    .iter()
                    .enumerate()
                    .filter_map(|(x, (_, r))| Some((x as f64, r.means.get(k).copied().flatten()?)))
                    .collect(),
                legend: true,
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        out.push(charts::line_chart(&LineChart {
            title: format!("{} by thread count — {}", s.metric, s.workload),
            x_label: "client threads".into(),
            y_label: s.metric.clone(),
            series,
            x_categories: Some(rows.iter().enumerate().map(|(x, (t, _))| (x as f64, t.to_string())).collect()),
            dots: true,
        }));
    }
    let mut points = Vec::new();
    for (k, label) in c.labels.iter().enumerate().skip(1) {
        for (t, r) in &rows {
            let Some(cmp) = r.vs_current.get(k).copied().flatten() else { continue };
            points.push(RatioPoint {
                label: format!("{label} @{t}"),
                ratio: cmp.ci.ratio,
                ci: Some((cmp.ci.lo, cmp.ci.hi)),
                tone: match cmp.verdict {
                    Verdict::Faster => "better",
                    Verdict::Slower => "worse",
                    Verdict::NoSignificantChange => "none",
                },
                band: None,
            });
        }
    }
    if !points.is_empty() {
        out.push(charts::ratio_chart(&RatioChart {
            title: format!(
                "{} ratio to the current config, {:.0} % CI — {}",
                s.metric,
                s.confidence * 100.0,
                s.workload
            ),
            points,
            noise_band: s.noise_band,
        }));
    }
    out
}
