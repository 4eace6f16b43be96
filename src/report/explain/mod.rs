//! The report sections that explain a difference (see [`crate::explain`]):
//!
//! - **Changed defaults and settings**: each candidate's server variables against the baseline's,
//!   classified as changed default, set by a config, new or removed, noise left out.
//! - **Version series**: with three sides or more, each case as a relative-to-first series with its
//!   change points (E-divisive means), and a chart in HTML.
//! - **Explained**: for an experiment stored by `versus explain`, the gap of B against A and what each
//!   of A's values set on B recovers, recomputed from the stored runs.

mod attribution;
mod mapping;
pub mod render;

pub use attribution::{attribution_table, sentences};
pub use render::{OutputFormat, changes_table, render_diff, render_explain, render_series, series_lines, series_table};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::error::Result;
use crate::present::svg::{Svg, color, nice_ticks, tick_label, truncate};
use crate::present::writers::{html, markdown};
use crate::report::model::CompareReport;
use crate::report::select::{LoadedRun, Selected, Selection, stored_sections};

use crate::explain::diffvars::{self, Snapshot, VarChanges};
use crate::explain::section::{self, ExplainSection};
use crate::explain::series::{self, SeriesReport};
use crate::explain::targets::stored_specs;
use crate::store::Store;

/// The variables (lower case) each target's config and overrides set, by (experiment id, target label).
pub type Explicit = BTreeMap<(i64, String), BTreeSet<String>>;

/// What the stored definitions of the selected experiments set on each target (a base config file that
/// no longer exists counts as setting nothing).
pub fn explicit_variables(s: &Selected) -> Explicit {
    let mut explicit = Explicit::new();
    for e in &s.experiments {
        if let Ok(specs) = stored_specs(e) {
            for (label, mut spec) in specs {
                if spec.config.as_ref().is_some_and(|c| !c.is_file()) {
                    spec.config = None;
                }
                explicit.insert((e.id, label), spec.explicit_variables().unwrap_or_default());
            }
        }
    }
    explicit
}

/// The variables (lower case, `_` for `-`) that stored attributions of `versus explain` name.
pub fn findings(sections: &[ExplainSection]) -> BTreeSet<String> {
    sections
        .iter()
        .flat_map(|e| e.effects.iter().flat_map(|a| a.names.iter()))
        .map(|n| n.to_ascii_lowercase().replace('-', "_"))
        .collect()
}

/// Each candidate side's variables against the baseline side's: one target per side (the first with
/// stored variables, the baseline's in the same group where there is one); pairs that differ only by
/// noise are left out.
pub fn variable_changes(s: &Selected, explicit: &Explicit) -> Vec<VarChanges> {
    let mut runs: Vec<&LoadedRun> = s.runs.iter().filter(|r| !r.detail.variables.is_empty()).collect();
    runs.sort_by_key(|r| (r.side, r.detail.run.cell.id, r.detail.run.repetition));
    let snapshot = |r: &LoadedRun| {
        let cell = &r.detail.run.cell;
        Snapshot {
            label: cell.target.clone(),
            build: cell.build.clone(),
            server_version: r.detail.run.server_version.clone(),
            variables: r.detail.variables.iter().cloned().collect(),
            explicit: explicit.get(&(r.detail.run.experiment_id, cell.target.clone())).cloned().unwrap_or_default(),
            session: BTreeMap::new(),
        }
    };
    let mut out = Vec::new();
    for side in 1..s.sides.len() {
        let Some(cand) = runs.iter().find(|r| r.side == side) else { continue };
        let group = &s.cases[cand.case].group;
        let base = runs
            .iter()
            .find(|r| r.side == 0 && &s.cases[r.case].group == group)
            .or_else(|| runs.iter().find(|r| r.side == 0));
        let Some(base) = base else { continue };
        let (a, b) = (snapshot(base), snapshot(cand));
        if a.label == b.label && a.variables == b.variables {
            continue;
        }
        let changes = diffvars::diff(&a, &b).changes(false);
        if !changes.rows.is_empty() {
            out.push(changes);
        }
    }
    out
}

/// The version series of a report with three sides or more: sides in order, one case per case (the
/// report leaves it out for experiments of `versus explain`, whose targets are not a series).
pub fn series_section(r: &CompareReport) -> Option<SeriesReport> {
    if r.sides.len() < 3 || !ordered_by_version(r) {
        return None;
    }
    let labels: Vec<String> = r.sides.iter().map(|s| s.label.clone()).collect();
    let cp = series::change_point_config(labels.len(), 0.05);
    let cases = (0..r.cases.len())
        .map(|case| {
            let values: Vec<Vec<f64>> = (0..labels.len())
                .map(|side| r.cell(case, side).map(|c| c.values.clone()).unwrap_or_default())
                .collect();
            let c = &r.cases[case];
            let workload = match &c.group {
                Some(g) => format!("{} {g}", c.workload),
                None => c.workload.clone(),
            };
            series::build_case(&workload, c.threads, &labels, &values, r.confidence, &cp)
        })
        .collect();
    Some(SeriesReport {
        metric: r.metric.name.clone(),
        higher_is_better: r.metric.higher_is_better,
        confidence: r.confidence,
        p_value: cp.p_value,
        min_segment: cp.min_segment,
        experiments: r.experiments.iter().map(|e| format!("{} (id {})", e.name, e.id)).collect(),
        labels,
        cases,
    })
}

/// Whether the sides are an ordered axis: each one build of one flavor (one version string), and the
/// versions ascending in side order. A matrix of configs, or builds out of order, is not a series.
fn ordered_by_version(r: &CompareReport) -> bool {
    let mut versions = Vec::new();
    for side in &r.sides {
        let [one] = side.server_versions.as_slice() else { return false };
        let Some(v) = crate::server::Version::find_in(one) else { return false };
        versions.push((one.to_ascii_lowercase().contains("mariadb"), v));
    }
    versions.windows(2).all(|w| w[0].0 == w[1].0 && w[0].1 < w[1].1)
}

/// The attribution of every selected experiment that `versus explain` stored (with A and B).
pub fn explain_sections(store: &Store, s: &Selected, sel: &Selection) -> Result<Vec<ExplainSection>> {
    stored_sections(store, s, sel, section::from_stored)
}

/// Relative-to-first per case over the series, change points marked with their step.
pub fn series_chart(s: &SeriesReport) -> String {
    const W: f64 = 1000.0;
    let (left, right, top, bottom) = (70.0, 200.0, 34.0, 64.0);
    let height = 340.0;
    let title = format!("{} relative to {} — change points marked", s.metric, s.labels.first().map_or("", |l| l));
    let mut g = Svg::new(W, height, &title);
    let values = s.cases.iter().flat_map(|c| c.points.iter().filter_map(|p| p.relative));
    let (lo, hi) = values.fold((1.0f64, 1.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = ((hi - lo) * 0.1).max(0.02);
    let ticks = nice_ticks(lo - pad, hi + pad, 6);
    let (y0, y1) = (ticks[0], *ticks.last().unwrap_or(&(hi + pad)));
    let n = s.labels.len().max(1);
    let x = |i: usize| left + (i as f64 + 0.5) * (W - left - right) / n as f64;
    let y = |v: f64| top + (y1 - v) / (y1 - y0).max(1e-9) * (height - top - bottom);
    g.text(left, 20.0, &title, "start", "font-weight=\"bold\"");
    for &t in &ticks {
        g.line((left, y(t)), (W - right, y(t)), "#e3e3e3", 1.0, None);
        g.text(left - 6.0, y(t) + 4.0, &tick_label(t), "end", "");
    }
    g.line((left, y(1.0)), (W - right, y(1.0)), "#333", 1.2, Some("4 3"));
    for (i, l) in s.labels.iter().enumerate() {
        g.text(x(i), height - bottom + 18.0, &truncate(l, 18), "middle", "");
    }
    g.text(
        (left + W - right) / 2.0,
        height - 10.0,
        "series order (one dot per target: mean / first target's mean)",
        "middle",
        "",
    );
    for (ci, c) in s.cases.iter().enumerate() {
        let pts: Vec<(f64, f64)> =
            c.points.iter().enumerate().filter_map(|(i, p)| p.relative.map(|r| (x(i), y(r)))).collect();
        g.polyline(&pts, color(ci), 1.8, 0.9);
        for (px, py) in &pts {
            g.circle(*px, *py, 3.5, color(ci));
        }
        for ch in &c.changes {
            let xs = (x(ch.index - 1) + x(ch.index)) / 2.0;
            g.line((xs, top), (xs, height - bottom), color(ci), 1.5, Some("6 4"));
            g.text(
                xs + 4.0,
                top + 14.0 + 16.0 * ci as f64,
                &format!("{:+.1} %", ch.step * 100.0),
                "start",
                &format!("fill=\"{}\"", color(ci)),
            );
        }
        let ly = top + 8.0 + ci as f64 * 20.0;
        g.rect(W - right + 16.0, ly - 9.0, 14.0, 10.0, color(ci), 1.0);
        g.text(W - right + 36.0, ly, &truncate(&format!("{} @{}", c.workload, c.threads), 24), "start", "");
    }
    g.finish()
}

/// Writes the attributions and the version series in markdown (before the ratio table).
pub fn write_markdown(out: &mut String, r: &CompareReport) {
    for s in &r.explain {
        let _ = writeln!(out, "## Explained: {}\n", crate::markup::escape(&s.experiment));
        for l in sentences(s) {
            let _ = writeln!(out, "- {}", crate::markup::escape(&l));
        }
        out.push('\n');
        let mut t = attribution_table(s);
        t.title = "Attribution".into();
        markdown::write_table(out, &t);
    }
    if let Some(s) = &r.series {
        let _ = writeln!(out, "## Version series\n");
        for l in series_lines(s) {
            let _ = writeln!(out, "- {}", crate::markup::escape(&l));
        }
        out.push('\n');
        for i in 0..s.cases.len() {
            markdown::write_table(out, &series_table(s, i));
        }
    }
}

/// Writes the changed defaults and settings in markdown (after the variables table).
pub fn write_markdown_changes(out: &mut String, r: &CompareReport) {
    if r.variable_changes.is_empty() {
        return;
    }
    out.push_str("## Changed defaults and settings\n\n");
    for (i, c) in r.variable_changes.iter().enumerate() {
        let _ = writeln!(
            out,
            "<details><summary>{} against {}: {}</summary>\n",
            crate::markup::html(&c.b),
            crate::markup::html(&c.a),
            changes_counts(c)
        );
        let mut t = changes_table(c, &format!("changes-{i}"), &changes_title(c));
        t.title.clear();
        markdown::write_table(out, &t);
        out.push_str("</details>\n\n");
    }
}

/// `15 changed defaults, 1 set by a config, 44 new, 16 removed` (the kinds there are).
fn changes_counts(c: &VarChanges) -> String {
    use crate::explain::diffvars::{Change, Origin};
    let count = |f: &dyn Fn(&diffvars::VarRow) -> bool| c.rows.iter().filter(|r| f(r)).count();
    let parts = [
        (count(&|r| r.change == Change::Changed && r.origin == Origin::Default), "changed default(s)"),
        (count(&|r| r.origin != Origin::Default), "set by a config"),
        (count(&|r| r.change == Change::New && r.origin == Origin::Default), "new"),
        (count(&|r| r.change == Change::Removed && r.origin == Origin::Default), "removed"),
    ];
    let shown: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")).collect();
    if shown.is_empty() { "no differences but noise".into() } else { shown.join(", ") }
}

fn changes_title(c: &VarChanges) -> String {
    format!("Changed defaults and settings: {} against {}", c.b, c.a)
}

/// Writes the attributions and the version series (with its chart) in HTML.
pub fn write_html(out: &mut String, r: &CompareReport) {
    for (i, s) in r.explain.iter().enumerate() {
        let id = if i == 0 { "explained".to_string() } else { format!("explained-{i}") };
        let _ =
            writeln!(out, "<h2 id=\"{id}\">Explained: {}</h2>\n<ul class=\"summary\">", html::escape(&s.experiment));
        for l in sentences(s) {
            let _ = writeln!(out, "<li>{}</li>", html::escape(&l));
        }
        out.push_str("</ul>\n");
        let mut t = attribution_table(s);
        t.title = "Attribution".into();
        t.id = format!("attribution-{i}");
        html::write_table(out, &t, 3);
    }
    if let Some(s) = &r.series {
        out.push_str("<h2 id=\"series\">Version series</h2>\n<ul class=\"summary\">\n");
        for l in series_lines(s) {
            let _ = writeln!(out, "<li>{}</li>", html::escape(&l));
        }
        out.push_str("</ul>\n");
        out.push_str(&series_chart(s));
        out.push('\n');
        for i in 0..s.cases.len() {
            html::write_table(out, &series_table(s, i), 3);
        }
    }
}

/// Writes the changed defaults and settings in HTML (after the variables table).
pub fn write_html_changes(out: &mut String, r: &CompareReport) {
    if !r.variable_changes.is_empty() {
        out.push_str("<h2 id=\"changes\">Changed defaults and settings</h2>\n");
        let _ = writeln!(
            out,
            "<p class=\"caption\">Each candidate's server variables against the baseline's: changed defaults, \
             settings of a config, new and removed variables (noise left out). One list per candidate, collapsed.</p>"
        );
        for (i, c) in r.variable_changes.iter().enumerate() {
            let _ = writeln!(
                out,
                "<details class=\"changes\"><summary>{} against {}: {}</summary>",
                html::escape(&c.b),
                html::escape(&c.a),
                html::escape(&changes_counts(c))
            );
            let mut t = changes_table(c, &format!("changes-{i}"), &changes_title(c));
            t.title.clear();
            html::write_table(out, &t, 3);
            out.push_str("</details>\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::series::SeriesCase;

    #[test]
    fn the_series_chart_marks_the_change_points() {
        let labels: Vec<String> = ["10.5", "10.11", "11.8", "12.0"].iter().map(|s| s.to_string()).collect();
        let values = vec![vec![100.0, 101.0], vec![99.0, 100.0], vec![80.0, 81.0], vec![79.0, 80.0]];
        let mut case: SeriesCase =
            series::build_case("w", 4, &labels, &values, 0.95, &series::change_point_config(4, 0.05));
        case.changes = vec![series::SeriesChange {
            index: 2,
            label: "11.8".into(),
            mean_before: 100.0,
            mean_after: 80.0,
            step: -0.2,
            p_value: 0.01,
        }];
        let s = SeriesReport {
            metric: "tps".into(),
            higher_is_better: true,
            confidence: 0.95,
            p_value: 0.05,
            min_segment: 1,
            experiments: vec![],
            labels,
            cases: vec![case],
        };
        let chart = series_chart(&s);
        assert!(chart.contains("−20.0 %") || chart.contains("-20.0 %"), "{chart}");
        assert!(chart.contains("<polyline") && chart.contains("11.8"));
    }
}
