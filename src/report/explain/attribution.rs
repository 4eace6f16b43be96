//! The attribution of a `versus explain` experiment ([`crate::explain::section::ExplainSection`]) in
//! sentences and as a table.

use crate::explain::bisect::Effect;
use crate::explain::section::ExplainSection;
use crate::present::table::{Cell, Table, Tone};
use crate::report::fmt;
use crate::stats::Verdict;

fn ci(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("{l:.1} to {h:.1}"),
        _ => "—".into(),
    }
}

/// The smallest change a comparison could have called, `±X %`.
fn detectable(d: Option<&crate::stats::DetectableEffect>) -> String {
    d.map(|d| fmt::plus_minus(d.either_way())).unwrap_or_else(|| "—".into())
}

/// What a result that is not significant could have seen: `; it could detect only changes
/// beyond ±X %`.
fn could_detect(d: Option<&crate::stats::DetectableEffect>) -> String {
    d.map(|d| format!("; it could detect only changes beyond {}", fmt::plus_minus(d.either_way()))).unwrap_or_default()
}

/// The attribution in sentences, as in a blog post.
pub fn sentences(s: &ExplainSection) -> Vec<String> {
    let level = format!("{} % CI", crate::stats::level_percent(s.confidence));
    let mut out = Vec::new();
    let Some(g) = &s.gap else {
        out.push("There is no measurement of the gap between B and A.".into());
        return out;
    };
    let (worse, better) = if s.higher_is_better { ("slower", "faster") } else { ("worse", "better") };
    if g.comparison.verdict == Verdict::NoSignificantChange {
        out.push(format!(
            "B is not significantly different from A in {} ({:+.1} %, {level} {:.1} to {:.1} %{}).",
            s.metric,
            g.points,
            g.points_lo,
            g.points_hi,
            could_detect(g.detectable.as_ref())
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
                "{prefix} {what} on B moves it by {p:+.1}{more} points ({level} {}), not significantly{}{}.",
                ci(inc.points_lo, inc.points_hi),
                could_detect(inc.detectable.as_ref()),
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
        // The unexplained rest has the gap's sign while the findings fall short of it.
        if u * g.points >= 0.0 {
            out.push(format!("{:.1} points of the gap remain unexplained by these settings.", u.abs()));
        } else {
            out.push(format!(
                "They recover all of the gap, {:.1} points more than it (within the intervals above).",
                u.abs()
            ));
        }
    }
    out
}

/// The attribution table: one row per finding in the order found, then all together.
pub fn attribution_table(s: &ExplainSection) -> Table {
    let level = format!("{} % CI", crate::stats::level_percent(s.confidence));
    let header = [
        ("set on B, in this order", false),
        ("recovers (points of A)", true),
        (level.as_str(), true),
        ("significant", false),
        ("detectable", true),
        ("alone", true),
        ("alone CI", true),
    ];
    let mut t = Table {
        id: "explain".into(),
        title: "Explained: A's values set on B".into(),
        caption: Some(format!(
            "From {}. A point is 1 % of A's {}; positive values move B towards A. Each row is what the value \
             recovers on top of the rows above it, and alone; detectable: the smallest change of that \
             comparison it could have called (80 % power). {}",
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
            Cell { text: detectable(e.detectable.as_ref()), tone: Tone::Plain },
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
            Cell { text: detectable(g.detectable.as_ref()), tone: Tone::Plain },
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
        // The rest has the gap's sign while the findings fall short of it; past the gap it flips, and a
        // bare "(unexplained) 8.8" would read as 8.8 points still missing.
        let over = s.gap.as_ref().is_some_and(|g| u * g.points < 0.0);
        let (label, value) = if over {
            (
                format!("(over-recovered: the settings explain {:.1} points more than the gap)", u.abs()),
                format!("+{:.1}", u.abs()),
            )
        } else {
            ("(unexplained)".to_string(), format!("{u:.1}"))
        };
        t.rows.push(vec![
            Cell { text: label, tone: Tone::Muted },
            Cell { text: value, tone: Tone::Muted },
            blank(),
            blank(),
            blank(),
            blank(),
            blank(),
        ]);
    }
    t.footnotes = s.notes.clone();
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::bisect::Gap;
    use crate::explain::section::Attributed;
    use crate::stats::{CompareConfig, SampleLevel, compare};

    fn effect(points: f64) -> Effect {
        Effect {
            set: vec![0],
            names: vec!["sync_binlog".into()],
            step: 1,
            comparison: None,
            points: Some(points),
            points_lo: Some(points - 2.0),
            points_hi: Some(points + 2.0),
            toward_a: true,
            error: None,
            detectable: None,
        }
    }

    /// B 22.6 % slower than A, the settings recovering `recovered` points of it.
    fn section(recovered: f64) -> ExplainSection {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b: Vec<f64> = a.iter().map(|x| x * 0.774).collect();
        let comparison = compare(&a, &b, SampleLevel::Repetitions, &CompareConfig::default()).unwrap();
        let gap =
            Gap { comparison, points: -22.6, points_lo: -23.5, points_hi: -21.7, a_mean: 100.0, detectable: None };
        ExplainSection {
            experiment: "e (id 1)".into(),
            description: String::new(),
            metric: "tps".into(),
            higher_is_better: true,
            confidence: 0.95,
            gap: Some(gap),
            effects: vec![Attributed {
                names: vec!["sync_binlog=0".into()],
                increment: effect(recovered),
                alone: None,
            }],
            together: None,
            unexplained_points: Some(-22.6 + recovered),
            notes: vec![],
        }
    }

    fn last_row(s: &ExplainSection) -> (String, String) {
        let t = attribution_table(s);
        let r = t.rows.last().unwrap();
        (r[0].text.clone(), r[1].text.clone())
    }

    #[test]
    fn a_recovery_beyond_the_gap_is_labelled_as_such() {
        let (label, value) = last_row(&section(31.4));
        assert_eq!(label, "(over-recovered: the settings explain 8.8 points more than the gap)");
        assert_eq!(value, "+8.8");
        assert!(sentences(&section(31.4)).iter().any(|l| l.contains("8.8 points more than it")));
    }

    #[test]
    fn a_recovery_short_of_the_gap_leaves_the_rest_unexplained() {
        let (label, value) = last_row(&section(10.6));
        assert_eq!(label, "(unexplained)");
        assert_eq!(value, "-12.0");
    }
}
