//! The attribution of a regression to configuration values in sentences and a table: shared by
//! `versus explain` (from its search) and the comparison report (recomputed from a stored
//! `versus explain` experiment, so `versus report NAME-confirm` shows the same numbers).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::bisect::{self, Effect, Gap, SearchOutcome};
use super::preflight::override_for;
use super::runner::{DESCRIPTION_MARKER, samples_by_target};
use super::targets::stored_specs;
use crate::error::Result;
use crate::experiment::ExperimentFile;
use crate::metric::Metric;
use crate::report::fmt;
use crate::report::tables::{Cell, Table, Tone};
use crate::stats::{BootstrapConfig, CompareConfig, Verdict};
use crate::store::{Experiment, Store};

/// Seed of every interval of the attribution, so that `versus explain` and `versus report` agree.
pub const ATTRIBUTION_SEED: u64 = 0x5EED;

/// One finding of an attribution: what it recovers on top of the ones before it, and alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attributed {
    /// The options set on B (`sync_binlog=0`); several for a group that acts together.
    pub names: Vec<String>,
    /// On top of the findings before it (for the first: against B).
    pub increment: Effect,
    /// Alone, against B (absent when it is the first, where it equals the increment, or unmeasured).
    pub alone: Option<Effect>,
}

/// The gap between B and A and what A's values recover of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainSection {
    /// The experiment the numbers come from (`NAME (id N)`).
    pub experiment: String,
    /// What was explained (the experiment's description).
    pub description: String,
    /// The metric.
    pub metric: String,
    /// Whether higher values are better.
    pub higher_is_better: bool,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// B against A.
    pub gap: Option<Gap>,
    /// The findings in the order found.
    pub effects: Vec<Attributed>,
    /// All of them together against B (when there are several).
    pub together: Option<Effect>,
    /// Points of the gap not recovered.
    pub unexplained_points: Option<f64>,
    /// Caveats.
    pub notes: Vec<String>,
}

/// The comparison settings of an attribution.
pub fn compare_config(metric: Metric, noise_band: f64, confidence: f64) -> CompareConfig {
    CompareConfig {
        direction: metric.direction(),
        noise_band,
        bootstrap: BootstrapConfig { confidence, seed: ATTRIBUTION_SEED, ..BootstrapConfig::default() },
    }
}

/// The section of a finished search; the findings' names become the options set on B.
pub fn from_outcome(
    o: &SearchOutcome,
    experiment: &str,
    description: &str,
    metric: &str,
    higher_is_better: bool,
    confidence: f64,
) -> ExplainSection {
    let effects = o
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| Attributed {
            names: f.set.iter().map(|&c| override_for(&o.candidates[c].name, &o.candidates[c].a)).collect(),
            increment: f.attributed().clone(),
            alone: if i == 0 { None } else { f.alone.clone() },
        })
        .collect();
    ExplainSection {
        experiment: experiment.to_string(),
        description: description.to_string(),
        metric: metric.to_string(),
        higher_is_better,
        confidence,
        gap: o.gap,
        effects,
        together: o.together.clone(),
        unexplained_points: o.unexplained_points,
        notes: o.notes.clone(),
    }
}

/// The attribution recomputed from a stored `versus explain` experiment with A and B among its
/// targets; `None` for any other experiment. The targets after A and B are read in their order: each
/// one that sets options no earlier one set is a finding alone; one that sets the options of the
/// first findings together is their cumulative set.
pub fn from_stored(
    store: &Store,
    e: &Experiment,
    metric: Metric,
    noise_band: f64,
    confidence: f64,
) -> Result<Option<ExplainSection>> {
    let Ok(file) = ExperimentFile::parse(&e.definition) else { return Ok(None) };
    let Some(description) = file.description.filter(|d| d.starts_with(DESCRIPTION_MARKER)) else { return Ok(None) };
    let specs = stored_specs(e)?;
    let find = |l: &str| specs.iter().find(|(label, _)| label.as_str() == l).map(|(_, s)| s);
    let (Some(_), Some(b_spec)) = (find("A"), find("B")) else { return Ok(None) };
    let samples = samples_by_target(store, e.id, metric)?;
    let cfg = compare_config(metric, noise_band, confidence);
    let mut section = ExplainSection {
        experiment: format!("{} (id {})", e.name, e.id),
        description: description.trim_start_matches(DESCRIPTION_MARKER).trim().to_string(),
        metric: metric.name().to_string(),
        higher_is_better: metric.direction() == crate::stats::Direction::HigherIsBetter,
        confidence,
        gap: None,
        effects: vec![],
        together: None,
        unexplained_points: None,
        notes: vec![],
    };
    let (Some(Ok(a)), Some(Ok(b))) = (samples.get("A"), samples.get("B")) else {
        section.notes.push("A or B has fewer than 2 complete repetitions: no attribution".into());
        return Ok(Some(section));
    };
    let gap = match bisect::gap(a, b, &cfg) {
        Ok(g) => g,
        Err(err) => {
            section.notes.push(format!("no interval for the gap: {err}"));
            return Ok(Some(section));
        }
    };
    section.gap = Some(gap);
    let base: BTreeSet<&String> = b_spec.overrides.iter().collect();
    let result = |label: &str| samples.get(label).cloned().unwrap_or_else(|| Err(format!("no runs of {label}")));
    // Units (findings alone) and cumulative sets, in target order.
    let mut units: Vec<(BTreeSet<String>, String)> = Vec::new();
    let mut cumulative: Vec<(usize, String)> = Vec::new();
    for (label, spec) in specs.iter().filter(|(l, _)| l.as_str() != "A" && l.as_str() != "B") {
        let set: BTreeSet<String> = spec.overrides.iter().filter(|o| !base.contains(o)).cloned().collect();
        let seen: BTreeSet<String> = units.iter().flat_map(|(u, _)| u.iter().cloned()).collect();
        if set.is_disjoint(&seen) {
            units.push((set, label.clone()));
            continue;
        }
        let mut acc = BTreeSet::new();
        for (i, (u, _)) in units.iter().enumerate() {
            acc.extend(u.iter().cloned());
            if acc == set && i > 0 {
                cumulative.push((i, label.clone()));
            }
        }
    }
    let prefix = |i: usize| -> Option<String> {
        if i == 0 {
            units.first().map(|u| u.1.clone())
        } else {
            cumulative.iter().find(|c| c.0 == i).map(|c| c.1.clone())
        }
    };
    for (i, (set, label)) in units.iter().enumerate() {
        let names: Vec<String> = set.iter().cloned().collect();
        let alone = bisect::effect(&[], names.clone(), 1, b, &result(label), &gap, &cfg);
        let increment = match (i, prefix(i.saturating_sub(1)), prefix(i)) {
            (0, _, _) => alone.clone(),
            (_, Some(before), Some(now)) => match result(&before) {
                Ok(x) => bisect::effect(&[], names.clone(), 1, &x, &result(&now), &gap, &cfg),
                Err(err) => Effect { error: Some(err), ..alone.clone() },
            },
            _ => {
                // No cumulative set: an experiment of a search step, each part on its own.
                alone.clone()
            }
        };
        section.effects.push(Attributed { names, increment, alone: (i > 0).then_some(alone) });
    }
    if units.len() > 1
        && let Some(all) = prefix(units.len() - 1)
    {
        let names: Vec<String> = units.iter().flat_map(|(u, _)| u.iter().cloned()).collect();
        section.together = Some(bisect::effect(&[], names, 1, b, &result(&all), &gap, &cfg));
    }
    let recovered = match (&section.together, section.effects.as_slice()) {
        (Some(t), _) => t.points,
        (None, [only]) => only.increment.points,
        _ => None,
    };
    section.unexplained_points = recovered.map(|r| -gap.points - r);
    Ok(Some(section))
}

fn ci(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("{l:.1} to {h:.1}"),
        _ => "—".into(),
    }
}

/// The attribution in sentences, as in a blog post.
pub fn sentences(s: &ExplainSection) -> Vec<String> {
    let level = format!("{} % CI", fmt::num(s.confidence * 100.0).trim_end_matches(".0"));
    let mut out = Vec::new();
    let Some(g) = &s.gap else {
        out.push("There is no measurement of the gap between B and A.".into());
        return out;
    };
    let (worse, better) = if s.higher_is_better { ("slower", "faster") } else { ("worse", "better") };
    if g.comparison.verdict == Verdict::NoSignificantChange {
        out.push(format!(
            "B is not significantly different from A in {} ({:+.1} %, {level} {:.1} to {:.1} %).",
            s.metric, g.points, g.points_lo, g.points_hi
        ));
    } else {
        let (word, lo, hi) =
            if g.points < 0.0 { (worse, -g.points_hi, -g.points_lo) } else { (better, g.points_lo, g.points_hi) };
        out.push(format!("B is {:.1} % {word} than A in {} ({level} {lo:.1} to {hi:.1} %).", g.points.abs(), s.metric));
    }
    let alone_text = |e: &Option<Effect>| match e.as_ref().and_then(|a| a.points.map(|p| (p, a))) {
        Some((p, a)) => format!(
            "; alone it recovers {p:.1} ({level} {}{})",
            ci(a.points_lo, a.points_hi),
            if a.toward_a { "" } else { ", not significant" }
        ),
        None => String::new(),
    };
    for (i, e) in s.effects.iter().enumerate() {
        let what = e.names.join(", ");
        let inc = &e.increment;
        let (prefix, more) = if i == 0 { ("Setting", "") } else { ("With that, setting", " more") };
        match (inc.points, inc.toward_a) {
            (Some(p), true) => out.push(format!(
                "{prefix} {what} on B recovers {p:.1}{more} points ({level} {}){}.",
                ci(inc.points_lo, inc.points_hi),
                alone_text(&e.alone)
            )),
            (Some(p), false) => out.push(format!(
                "{prefix} {what} on B moves it by {p:+.1}{more} points ({level} {}), not significantly{}.",
                ci(inc.points_lo, inc.points_hi),
                alone_text(&e.alone)
            )),
            (None, _) => out.push(format!(
                "{prefix} {what} on B could not be measured: {}.",
                inc.error.as_deref().unwrap_or("no value")
            )),
        }
    }
    if let Some(t) = &s.together
        && let Some(p) = t.points
    {
        out.push(format!("Together they recover {p:.1} points ({level} {}).", ci(t.points_lo, t.points_hi)));
    }
    if let Some(u) = s.unexplained_points
        && g.comparison.verdict != Verdict::NoSignificantChange
    {
        if u >= 0.0 {
            out.push(format!("{u:.1} points of the gap remain unexplained by these settings."));
        } else {
            out.push(format!(
                "They recover all of the gap, {:.1} points more than it (within the intervals above).",
                -u
            ));
        }
    }
    out
}

/// The attribution table: one row per finding in the order found, then all together.
pub fn table(s: &ExplainSection) -> Table {
    let level = format!("{} % CI", fmt::num(s.confidence * 100.0).trim_end_matches(".0"));
    let header = [
        ("set on B, in this order", false),
        ("recovers (points of A)", true),
        (level.as_str(), true),
        ("significant", false),
        ("alone", true),
        ("alone CI", true),
    ];
    let mut t = Table {
        id: "explain".into(),
        title: "Explained: A's values set on B".into(),
        caption: Some(format!(
            "From {}. A point is 1 % of A's {}; positive values move B towards A. Each row is what the value \
             recovers on top of the rows above it, and alone. {}",
            s.experiment, s.metric, s.description
        )),
        header: header.iter().map(|(h, _)| h.to_string()).collect(),
        numeric: header.iter().map(|(_, n)| *n).collect(),
        rows: vec![],
        footnotes: vec![],
    };
    let pts = |e: &Effect| e.points.map(|p| format!("{p:.1}")).unwrap_or_else(|| "—".into());
    let row = |name: String, e: &Effect, alone: Option<&Effect>| {
        let tone = if e.toward_a { Tone::Better } else { Tone::Plain };
        vec![
            Cell { text: name, tone: Tone::Plain },
            Cell { text: pts(e), tone },
            Cell { text: ci(e.points_lo, e.points_hi), tone: Tone::Plain },
            Cell {
                text: match (&e.error, e.toward_a) {
                    (Some(err), _) => err.clone(),
                    (None, true) => "yes".into(),
                    (None, false) => "no".into(),
                },
                tone: Tone::Plain,
            },
            Cell { text: alone.map(pts).unwrap_or_default(), tone: Tone::Plain },
            Cell { text: alone.map(|a| ci(a.points_lo, a.points_hi)).unwrap_or_default(), tone: Tone::Plain },
        ]
    };
    let blank = || Cell { text: String::new(), tone: Tone::Plain };
    if let Some(g) = &s.gap {
        let tone = if g.comparison.verdict == Verdict::NoSignificantChange { Tone::Plain } else { Tone::Worse };
        t.rows.push(vec![
            Cell { text: "(gap of B against A)".into(), tone: Tone::Muted },
            Cell { text: format!("{:.1}", g.points), tone },
            Cell { text: format!("{:.1} to {:.1}", g.points_lo, g.points_hi), tone: Tone::Plain },
            Cell { text: if tone == Tone::Worse { "yes".into() } else { "no".into() }, tone: Tone::Plain },
            blank(),
            blank(),
        ]);
    }
    for e in &s.effects {
        t.rows.push(row(e.names.join(", "), &e.increment, e.alone.as_ref()));
    }
    if let Some(e) = &s.together {
        t.rows.push(row("all of the above together".into(), e, None));
    }
    if let Some(u) = s.unexplained_points {
        t.rows.push(vec![
            Cell { text: "(unexplained)".into(), tone: Tone::Muted },
            Cell { text: format!("{u:.1}"), tone: Tone::Muted },
            blank(),
            blank(),
            blank(),
            blank(),
        ]);
    }
    t.footnotes = s.notes.clone();
    t
}
