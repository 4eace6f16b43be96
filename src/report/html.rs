//! The HTML export: one self-contained page (inline CSS and SVG; no JavaScript, no fonts, images or
//! styles from anywhere else) with the ratio table and chart, the seed-style pivots, throughput over
//! time per run, throughput vs threads per side, latency percentiles, efficiency, stability, the
//! variables that differ, and the experiment definitions with host facts.

use crate::workload::SectionOut;
use std::fmt::Write as _;

use super::model::{CompareReport, Verdict};
use super::tables;
use super::terminal::heading;
use super::variables;
use crate::present::page::{page_end, page_start};
use crate::present::svg::many::{self, DotRows};
use crate::present::svg::{BarChart, LineChart, RatioChart, RatioPoint, Series, charts};
use crate::present::table::Table;
pub use crate::present::writers::html::{HtmlWriter, escape, write_table};

fn ratio_chart(r: &CompareReport) -> Option<String> {
    let points: Vec<RatioPoint> = r
        .ratios
        .iter()
        .filter_map(|x| {
            Some(RatioPoint {
                label: format!("{} — {}", r.sides[x.side].label, r.case_label(x.case)),
                ratio: x.ratio?,
                ci: x.ci_lo.zip(x.ci_hi),
                tone: match x.verdict {
                    Verdict::Faster => "better",
                    Verdict::Slower => "worse",
                    _ => "none",
                },
                band: (!r.one_band()).then(|| r.band_of(x.case).band),
            })
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    Some(charts::ratio_chart(&RatioChart {
        title: format!("{} ratio to {} with {}", r.metric.name, r.baseline, tables::ci_heading(r)),
        points,
        noise_band: r.noise_band,
    }))
}

/// Past this many sides a chart draws one panel per side (throughput over time) or ranked rows
/// (latency percentiles) instead of one line or bar per side.
const MANY_SIDES: usize = 5;

/// Percentiles whose largest is this many times the smallest are drawn on a log scale.
const DECADES_FOR_LOG: f64 = 100.0;

/// Values longer than this are cut in the one-line-per-value variable tables (the JSON has them whole).
const LONG_VALUE: usize = 400;

fn many_sides(r: &CompareReport) -> bool {
    r.sides.len() > MANY_SIDES
}

/// A run needs at least this many per-second samples for a line over time (a sub-second Insert
/// Benchmark step has one: it is named under the charts instead of drawn as a dot).
const MIN_SAMPLES: usize = 3;

/// The charts over time, one per case, and the labels of cases whose runs were too short for one.
fn over_time_charts(r: &CompareReport) -> (Vec<String>, Vec<String>) {
    let what = format!("{} per second", r.rate_metric.name);
    per_second_charts(r, |x| &x.series, &what, &r.rate_metric.name)
}

/// The most lagging replica's lag each second, one chart per case with replicas.
fn lag_charts(r: &CompareReport) -> Vec<String> {
    per_second_charts(r, |x| &x.lag_series, "replica lag per second (worst replica)", "lag ms").0
}

/// One line chart per case of the runs' per-second `series`, and the cases whose runs had too few
/// seconds for one.
fn per_second_charts(
    r: &CompareReport,
    series_of: fn(&super::model::RunInfo) -> &Vec<[f64; 2]>,
    what: &str,
    y_label: &str,
) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut short = Vec::new();
    for case in 0..r.cases.len() {
        let mut series = Vec::new();
        let mut seen = Vec::new();
        if r.runs.iter().any(|x| x.case == case && !series_of(x).is_empty())
            && !r.runs.iter().any(|x| x.case == case && series_of(x).len() >= MIN_SAMPLES)
        {
            short.push(r.case_label(case));
        }
        for run in r.runs.iter().filter(|x| x.case == case && series_of(x).len() >= MIN_SAMPLES) {
            let first = !seen.contains(&run.side);
            seen.push(run.side);
            series.push(Series {
                name: r.sides[run.side].label.clone(),
                color: run.side,
                points: series_of(run).iter().map(|p| (p[0], p[1])).collect(),
                legend: first,
            });
        }
        if series.is_empty() {
            continue;
        }
        let chart = LineChart {
            title: format!("{what} — {}", r.case_label(case)),
            x_label: "seconds since the run started (one line per run)".into(),
            y_label: y_label.to_string(),
            series,
            x_categories: None,
            dots: false,
        };
        out.push(if many_sides(r) { many::small_multiples(&chart) } else { charts::line_chart(&chart) });
    }
    (out, short)
}

fn threads_charts(r: &CompareReport) -> Vec<String> {
    let threads = r.thread_counts();
    if threads.len() < 2 {
        return Vec::new();
    }
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    for c in &r.cases {
        let k = (c.workload.clone(), c.group.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for key in keys {
        let series: Vec<Series> = r
            .sides
            .iter()
            .enumerate()
            .map(|(side, s)| Series {
                name: s.label.clone(),
                color: side,
                points: threads
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &t)| {
                        let case =
                            r.cases.iter().position(|c| c.workload == key.0 && c.group == key.1 && c.threads == t)?;
                        Some((i as f64, r.cell(case, side)?.mean?))
                    })
                    .collect(),
                legend: true,
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let title = match &key.1 {
            Some(g) => format!("{} vs threads — {} {}", r.metric.name, key.0, g),
            None => format!("{} vs threads — {}", r.metric.name, key.0),
        };
        out.push(charts::line_chart(&LineChart {
            title,
            x_label: "client threads".into(),
            y_label: r.metric.label.clone(),
            series,
            x_categories: Some(threads.iter().enumerate().map(|(i, t)| (i as f64, t.to_string())).collect()),
            dots: true,
        }));
    }
    out
}

fn latency_charts(r: &CompareReport) -> Vec<String> {
    let cols: Vec<usize> = (0..r.latency_metrics.len())
        .filter(|&i| !matches!(r.latency_metrics[i].name.as_str(), "avg-latency" | "max-latency"))
        .collect();
    if cols.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for case in 0..r.cases.len() {
        let series: Vec<(String, usize, Vec<Option<f64>>)> = r
            .latency
            .iter()
            .filter(|row| row.case == case)
            .map(|row| (r.sides[row.side].label.clone(), row.side, cols.iter().map(|&i| row.values[i].mean).collect()))
            .collect();
        if series.is_empty() {
            continue;
        }
        let title = format!("Latency percentiles — {}", r.case_label(case));
        let categories: Vec<String> = cols.iter().map(|&i| r.latency_metrics[i].name.clone()).collect();
        let values: Vec<f64> = series.iter().flat_map(|s| s.2.iter().flatten().copied()).filter(|v| *v > 0.0).collect();
        let span = values.iter().copied().fold(0.0, f64::max) / values.iter().copied().fold(f64::INFINITY, f64::min);
        // Bars on a linear scale work for a few sides whose percentiles lie within two decades.
        if many_sides(r) || span >= DECADES_FOR_LOG {
            let rows = series.into_iter().map(|(label, _, v)| (label, v)).collect();
            out.push(many::dot_rows(&DotRows { title, unit: "ms".into(), categories, rows }));
        } else {
            out.push(charts::bar_chart(&BarChart { title, y_label: "ms".into(), categories, series }));
        }
    }
    out
}

/// Runs of the stability table shown open; more are collapsed behind `<details>` (the durability
/// example's 30 runs would be a page of their own), with how many runs stalled in the summary.
const STABILITY_OPEN_ROWS: usize = 12;

fn write_stability(out: &mut String, r: &CompareReport) {
    let t = tables::stability_table(r);
    if t.rows.len() <= STABILITY_OPEN_ROWS {
        return write_table(out, &t, 2);
    }
    let _ = writeln!(out, "<h2 id=\"{}\">{}</h2>", escape(&t.id), escape(&t.title));
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    let stalled = r.runs.iter().filter(|run| run.stability.as_ref().is_some_and(|s| !s.stalls_at.is_empty())).count();
    let _ =
        writeln!(out, "<details class=\"stability\"><summary>{} runs, {stalled} with stalls</summary>", t.rows.len());
    write_table(out, &Table { title: String::new(), caption: None, ..t }, 2);
    out.push_str("</details>\n");
}

/// `t` under its heading, its rows behind `<details>` when there are more than
/// [`STABILITY_OPEN_ROWS`] (a table per side and case at twelve targets is pages long; its chart or
/// its relative table is above it).
fn write_collapsible(out: &mut String, t: &Table, level: u8) {
    if t.rows.len() <= STABILITY_OPEN_ROWS {
        return write_table(out, t, level);
    }
    let _ = writeln!(out, "<h{level} id=\"{}\">{}</h{level}>", escape(&t.id), escape(&t.title));
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    let _ = writeln!(out, "<details><summary>{} rows</summary>", t.rows.len());
    write_table(out, &Table { title: String::new(), caption: None, ..t.clone() }, level);
    out.push_str("</details>\n");
}

/// The differing server variables: what matters first, the rest by component behind `<details>`.
fn write_variables(out: &mut String, r: &CompareReport) {
    out.push_str("<section class=\"variables\">\n<h2 id=\"variables\">Server variables that differ</h2>\n");
    let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(&variables::caption(r)));
    let (first, groups) = variables::grouped(&r.variables);
    if r.variables.rows.is_empty() {
        out.push_str("<p>(nothing to show)</p>\n");
    }
    // Past a handful of targets, one line per distinct value with its targets: a column per target
    // would not fit the page once numbers no longer wrap.
    let table = |id: &str, title: &str, rows: &[&crate::report::model::VariableRow], why: bool| {
        if many_sides(r) {
            variables::long_table(&r.variables, id, title, rows, LONG_VALUE, why)
        } else {
            variables::wide_table(r, id, title, rows, why, None)
        }
    };
    if !first.is_empty() {
        write_table(out, &table("variables-first", "What matters", &first, true), 3);
    }
    for (i, (component, rows)) in groups.iter().enumerate() {
        let _ = writeln!(
            out,
            "<details><summary>{} — {} variable{} differ{}</summary>",
            escape(component),
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            if rows.len() == 1 { "s" } else { "" }
        );
        write_table(out, &table(&format!("variables-{i}"), "", rows, false), 3);
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

/// The HTML page of `report`.
pub fn render(r: &CompareReport) -> String {
    let title = tables::short_title(r);
    let mut out = page_start(&title, &r.versus_version);
    let _ = writeln!(out, "<h1>{}</h1>\n<p class=\"lead\">{}.</p>", escape(&title), escape(&heading(r)));
    let _ = writeln!(
        out,
        "<p class=\"lead\">Metric: {} ({}, {} is better). Intervals: {} of the ratio of means; noise band {}.</p>",
        escape(&r.metric.name),
        escape(&r.metric.unit),
        if r.metric.higher_is_better { "higher" } else { "lower" },
        escape(&tables::ci_heading(r)),
        escape(&super::fmt::bands(r))
    );
    let head_end = out.len();
    out.push_str("<h2 id=\"summary\">Summary</h2>\n<ul class=\"summary\">\n");
    for line in super::summary::summary_lines(r) {
        let _ = writeln!(out, "<li>{}</li>", escape(&line));
    }
    out.push_str("</ul>\n");
    if !r.notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in &r.notes {
            let _ = writeln!(out, "<li><strong>Note:</strong> {}</li>", escape(n));
        }
        out.push_str("</ul>\n");
    }
    super::explain::write_html(&mut out, r);
    for (i, s) in r.advise.iter().enumerate() {
        let id = if i == 0 { "advised".to_string() } else { format!("advised-{i}") };
        let _ = writeln!(
            out,
            "<h2 id=\"{id}\">{}</h2>\n<ul class=\"summary\">",
            escape(&super::advise_section::heading(s))
        );
        for l in super::advise_section::lines(s) {
            let _ = writeln!(out, "<li>{}</li>", escape(&l));
        }
        out.push_str("</ul>\n");
        for svg in super::advise_section::charts(s) {
            out.push_str(&svg);
            out.push('\n');
        }
        write_table(&mut out, &super::advise_section::table(s, i), 3);
    }
    write_table(&mut out, &tables::ratio_table(r), 2);
    if let Some(svg) = ratio_chart(r) {
        out.push_str(&svg);
        out.push('\n');
    }
    out.push_str("<h2 id=\"pivot\">Tables</h2>\n");
    let (abs, rel) = tables::pivot_tables(r);
    write_table(&mut out, &abs, 3);
    write_table(&mut out, &rel, 3);
    let _ = writeln!(out, "<h2 id=\"over-time\">{} over time</h2>", escape(&r.rate_metric.name));
    let (time_charts, short) = over_time_charts(r);
    for svg in time_charts {
        out.push_str(&svg);
        out.push('\n');
    }
    if !short.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"caption\">No chart for {}: fewer than {MIN_SAMPLES} samples per run (shorter than {MIN_SAMPLES} s).</p>",
            escape(&short.join(", "))
        );
    }
    out.push_str("<h2 id=\"threads\">By thread count</h2>\n");
    let threads = threads_charts(r);
    if threads.is_empty() {
        out.push_str("<p>All runs used one thread count.</p>\n");
    }
    for svg in threads {
        out.push_str(&svg);
        out.push('\n');
    }
    out.push_str("<h2 id=\"latency\">Latency</h2>\n");
    for svg in latency_charts(r) {
        out.push_str(&svg);
        out.push('\n');
    }
    let mut lat = tables::latency_table(r);
    lat.id = "latency-table".into();
    write_collapsible(&mut out, &lat, 3);
    let (eff, eff_rel) = tables::efficiency_tables(r);
    // The relative table first when its rows are many: it is the one read; the values are behind it.
    if eff.rows.len() > STABILITY_OPEN_ROWS {
        let _ = writeln!(out, "<h2 id=\"efficiency\">{}</h2>", escape(&eff.title));
        write_table(&mut out, &eff_rel, 3);
        if let Some(c) = &eff.caption {
            let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
        }
        let _ = writeln!(out, "<details><summary>Values: {} rows</summary>", eff.rows.len());
        write_table(&mut out, &Table { title: String::new(), caption: None, ..eff }, 3);
        out.push_str("</details>\n");
    } else {
        write_table(&mut out, &eff, 2);
        write_table(&mut out, &eff_rel, 3);
    }
    if let Some((repl, repl_rel)) = tables::replication_tables(r) {
        write_table(&mut out, &repl, 2);
        write_table(&mut out, &repl_rel, 3);
        for svg in lag_charts(r) {
            out.push_str(&svg);
            out.push('\n');
        }
    }
    write_stability(&mut out, r);
    write_variables(&mut out, r);
    r.sections.write(&mut SectionOut::Html(&mut out));
    let mut w = HtmlWriter { out: &mut out, headings: 0, table_level: 3 };
    super::profile::write(&mut w, r);
    super::explain::write_html_changes(&mut out, r);
    out.push_str("<h2 id=\"reproduce\">Reproduce</h2>\n");
    for e in &r.experiments {
        write_table(&mut out, &tables::experiment_table(e), 3);
        let _ = writeln!(
            out,
            "<p class=\"caption\">Definition (TOML, secrets redacted):</p>\n<pre>{}</pre>",
            escape(&e.definition)
        );
    }
    page_end(&mut out, head_end, &r.versus_version);
    out
}
