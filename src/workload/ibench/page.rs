//! The page `versus ibench compare --format html` writes: the Insert Benchmark's tables as a
//! comparison report shows them ([`super::section::write_html`], from the grids of [`super::report`]),
//! charts over time, and the results compared, in the report's frame ([`crate::present::page`]).
//!
//! Charts suit the step: throughput per step relative to the base server (one bar per server and
//! step, so steps with rates orders of magnitude apart share one axis), and each step's rate over its
//! report intervals where the step ran long enough to have a few (a sub-second step gets no single-dot
//! chart, it is named instead).

use std::fmt::Write as _;

use super::compare::Comparison;
use super::options::{Step, StepKind};
use super::result::IbenchResult;
use crate::present::page::{page_end, page_start};
use crate::present::svg::{LineChart, Series, charts, escape};

/// A step needs at least this many report intervals for a chart over time.
pub const MIN_INTERVALS: usize = 3;

/// One step of one server over time: (seconds since the step started, operations/s) per interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Index into the comparison's sides.
    pub side: usize,
    /// The step.
    pub step: Step,
    /// Points in time order.
    pub points: Vec<(f64, f64)>,
}

/// Where one compared server's figures come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Its label in the tables.
    pub label: String,
    /// `SELECT VERSION()`, when known.
    pub server_version: Option<String>,
    /// The file it was read from.
    pub file: String,
    /// The options it ran with, as JSON.
    pub options: String,
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    /// The tables.
    pub comparison: &'a Comparison,
    /// One per side, in the comparison's order.
    pub sources: Vec<Source>,
    /// Per-interval rates.
    pub timelines: Vec<Timeline>,
    /// The versus version writing the page.
    pub versus_version: String,
}

/// The operations/s of one report interval of `step`: inserted rows/s for the load and write steps,
/// queries/s for query steps; `None` for steps without a per-interval rate (l.x, cleanup).
fn interval_rate(step: Step, l: &super::result::IntervalLine) -> Option<f64> {
    match step.kind() {
        StepKind::Load | StepKind::Write => Some(l.i_ips),
        StepKind::Query => Some(l.i_qps),
        StepKind::Index | StepKind::Cleanup => None,
    }
}

/// The timelines of `results` (side `i` is `results[i]`), for steps with a per-interval rate.
pub fn timelines(results: &[&IbenchResult]) -> Vec<Timeline> {
    let mut out = Vec::new();
    for (side, r) in results.iter().enumerate() {
        for st in &r.steps {
            let points: Vec<(f64, f64)> =
                st.intervals.iter().filter_map(|l| Some((l.t_sec, interval_rate(st.step, l)?))).collect();
            if !points.is_empty() {
                out.push(Timeline { side, step: st.step, points });
            }
        }
    }
    out
}

/// One line chart per step with enough intervals; the steps without one, named.
fn over_time(p: &Page<'_>) -> (Vec<String>, Vec<String>) {
    let (mut charts_out, mut short) = (Vec::new(), Vec::new());
    for step in &p.comparison.steps {
        let lines: Vec<&Timeline> = p.timelines.iter().filter(|t| t.step == *step).collect();
        let long: Vec<&&Timeline> = lines.iter().filter(|t| t.points.len() >= MIN_INTERVALS).collect();
        if long.is_empty() {
            if step.kind() != StepKind::Index {
                short.push(step.name());
            }
            continue;
        }
        let unit = if step.is_query() { "queries/s" } else { "inserted rows/s" };
        charts_out.push(charts::line_chart(&LineChart {
            title: format!("{} — {unit} per report interval", step.name()),
            x_label: "seconds since the step started".into(),
            y_label: unit.into(),
            series: long
                .iter()
                .map(|t| Series {
                    name: p.comparison.sides.get(t.side).cloned().unwrap_or_default(),
                    color: t.side,
                    points: t.points.clone(),
                    legend: true,
                })
                .collect(),
            x_categories: None,
            dots: false,
        }));
    }
    (charts_out, short)
}

/// The self-contained page of `versus ibench compare --format html`.
pub fn page(p: &Page<'_>) -> String {
    let c = p.comparison;
    let title = format!("Insert Benchmark: {}", c.sides.join(" vs "));
    let mut out = page_start(&title, &p.versus_version);
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title));
    let _ = writeln!(
        out,
        "<p class=\"lead\">{} server{}, steps {}; relative figures are to {}.</p>",
        c.sides.len(),
        if c.sides.len() == 1 { "" } else { "s" },
        escape(&c.steps.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")),
        escape(c.sides.first().map_or("", String::as_str))
    );
    let head_end = out.len();
    super::section::write_html(&mut out, "ibench", c, 2);
    out.push_str("<h2 id=\"over-time\">Over time</h2>\n");
    let (time_charts, short) = over_time(p);
    for svg in &time_charts {
        out.push_str(svg);
        out.push('\n');
    }
    if !short.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"caption\">No chart for {}: fewer than {MIN_INTERVALS} report intervals (the step was shorter \
             than its report interval, or ran without one); its figures are in the tables.</p>",
            escape(&short.join(", "))
        );
    }
    out.push_str("<h2 id=\"sources\">Results compared</h2>\n");
    for s in &p.sources {
        let version = s.server_version.as_deref().map(|v| format!(" — server {v}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "<h3>{}{}</h3>\n<p class=\"caption\">From {}.</p>\n<details><summary>Options</summary><pre>{}</pre></details>",
            escape(&s.label),
            escape(&version),
            escape(&s.file),
            escape(&s.options)
        );
    }
    page_end(&mut out, head_end, &p.versus_version);
    out
}
