//! The attribution of a regression to configuration values in sentences and a table: shared by
//! `versus explain` (from its search) and the comparison report (recomputed from a stored
//! `versus explain` experiment, so `versus report NAME-confirm` shows the same numbers).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::bisect::{self, Effect, Gap, SearchOutcome};
use super::runner::{DESCRIPTION_MARKER, override_for, samples_by_target};
use super::targets::stored_specs;
use crate::error::Result;
use crate::experiment::ExperimentFile;
use crate::report::Metric;
use crate::report::fmt;
use crate::report::tables::{Cell, Table, Tone};
use crate::stats::{BootstrapConfig, CompareConfig, Verdict};
use crate::store::{Experiment, Store};

/// Seed of every interval of the attribution, so that `versus explain` and `versus report` agree.
pub const ATTRIBUTION_SEED: u64 = 0x5EED;

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
    /// Each culprit or group alone, largest recovery first; `names` are the options set on B.
    pub effects: Vec<Effect>,
    /// All of them together (when there are several).
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

/// The section of a finished search; `names` of the effects become the options set on B.
pub fn from_outcome(
    o: &SearchOutcome,
    experiment: &str,
    description: &str,
    metric: &str,
    higher_is_better: bool,
    confidence: f64,
) -> ExplainSection {
    let as_options = |e: &Effect| {
        let mut e = e.clone();
        e.names = e.set.iter().map(|&i| override_for(&o.candidates[i].name, &o.candidates[i].a)).collect();
        e
    };
    let mut effects: Vec<Effect> = o.culprits.iter().chain(&o.joint).map(as_options).collect();
    effects.sort_by(|x, y| y.points.unwrap_or(f64::MIN).total_cmp(&x.points.unwrap_or(f64::MIN)));
    ExplainSection {
        experiment: experiment.to_string(),
        description: description.to_string(),
        metric: metric.to_string(),
        higher_is_better,
        confidence,
        gap: o.gap,
        effects,
        together: o.together.as_ref().map(as_options),
        unexplained_points: o.unexplained_points,
        notes: o.notes.clone(),
    }
}

/// The attribution recomputed from a stored `versus explain` experiment with A and B among its
/// targets; `None` for any other experiment.
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
    let Some(b_spec) = specs.get("B").filter(|_| specs.contains_key("A")) else { return Ok(None) };
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
    // What each other target sets on top of B.
    let base: BTreeSet<&String> = b_spec.overrides.iter().collect();
    let applied: Vec<(String, Vec<String>)> = specs
        .iter()
        .filter(|(l, _)| l.as_str() != "A" && l.as_str() != "B")
        .map(|(l, s)| (l.clone(), s.overrides.iter().filter(|o| !base.contains(o)).cloned().collect()))
        .collect();
    let union_of = |skip: &str| -> BTreeSet<String> {
        applied.iter().filter(|(l, _)| l != skip).flat_map(|(_, o)| o.iter().cloned()).collect()
    };
    for (label, opts) in &applied {
        let with = samples.get(label).cloned().unwrap_or_else(|| Err(format!("no runs of {label}")));
        let mut eff = bisect::effect(&[], opts.clone(), 1, b, &with, &gap, &cfg);
        eff.names.sort();
        let mine: BTreeSet<String> = opts.iter().cloned().collect();
        if applied.len() > 2 && mine == union_of(label) {
            section.together = Some(eff);
        } else {
            section.effects.push(eff);
        }
    }
    section.effects.sort_by(|x, y| y.points.unwrap_or(f64::MIN).total_cmp(&x.points.unwrap_or(f64::MIN)));
    let recovered = match (&section.together, section.effects.as_slice()) {
        (Some(t), _) => t.points,
        (None, [only]) => only.points,
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
    for e in &s.effects {
        let what = e.names.join(", ");
        match (e.points, e.toward_a) {
            (Some(p), true) => out.push(format!(
                "Setting {what} on B recovers {p:.1} points ({level} {}).",
                ci(e.points_lo, e.points_hi)
            )),
            (Some(p), false) => out.push(format!(
                "Setting {what} on B moves it by {p:+.1} points ({level} {}), not significantly.",
                ci(e.points_lo, e.points_hi)
            )),
            (None, _) => out.push(format!(
                "Setting {what} on B could not be measured: {}.",
                e.error.as_deref().unwrap_or("no value")
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
        out.push(format!("{:.1} points of the gap remain unexplained by these settings.", u));
    }
    out
}

/// The attribution table: one row per culprit (or group), then all together.
pub fn table(s: &ExplainSection) -> Table {
    let level = format!("{} % CI", fmt::num(s.confidence * 100.0).trim_end_matches(".0"));
    let header =
        [("set on B", false), ("recovers (points of A)", true), (level.as_str(), true), ("significant", false)];
    let mut t = Table {
        id: "explain".into(),
        title: "Explained: A's values set on B".into(),
        caption: Some(format!(
            "From {}. A point is 1 % of A's {}; positive values move B towards A. {}",
            s.experiment, s.metric, s.description
        )),
        header: header.iter().map(|(h, _)| h.to_string()).collect(),
        numeric: header.iter().map(|(_, n)| *n).collect(),
        rows: vec![],
        footnotes: vec![],
    };
    let row = |name: String, e: &Effect| {
        let tone = if e.toward_a { Tone::Better } else { Tone::Plain };
        vec![
            Cell { text: name, tone: Tone::Plain },
            Cell { text: e.points.map(|p| format!("{p:.1}")).unwrap_or_else(|| "—".into()), tone },
            Cell { text: ci(e.points_lo, e.points_hi), tone: Tone::Plain },
            Cell {
                text: match (&e.error, e.toward_a) {
                    (Some(err), _) => err.clone(),
                    (None, true) => "yes".into(),
                    (None, false) => "no".into(),
                },
                tone: Tone::Plain,
            },
        ]
    };
    if let Some(g) = &s.gap {
        let tone = if g.comparison.verdict == Verdict::NoSignificantChange { Tone::Plain } else { Tone::Worse };
        t.rows.push(vec![
            Cell { text: "(gap of B against A)".into(), tone: Tone::Muted },
            Cell { text: format!("{:.1}", g.points), tone },
            Cell { text: format!("{:.1} to {:.1}", g.points_lo, g.points_hi), tone: Tone::Plain },
            Cell { text: if tone == Tone::Worse { "yes".into() } else { "no".into() }, tone: Tone::Plain },
        ]);
    }
    for e in &s.effects {
        t.rows.push(row(e.names.join(", "), e));
    }
    if let Some(e) = &s.together {
        t.rows.push(row("all of the above".into(), e));
    }
    if let Some(u) = s.unexplained_points {
        t.rows.push(vec![
            Cell { text: "(unexplained)".into(), tone: Tone::Muted },
            Cell { text: format!("{u:.1}"), tone: Tone::Muted },
            Cell { text: String::new(), tone: Tone::Plain },
            Cell { text: String::new(), tone: Tone::Plain },
        ]);
    }
    t.footnotes = s.notes.clone();
    t
}
