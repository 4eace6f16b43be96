//! The Insert Benchmark's own section of a comparison report: the Small Datum tables of each group
//! of steps, written as terminal text and markdown by [`super::report`]'s grids, and in HTML with the
//! report's table markup and a chart of the throughput relative to the base server.

use std::fmt::Write as _;

use super::compare::{Colour, Comparison};
use super::report::{Grid, comparison_markdown, comparison_text, efficiency_grids, latency_grid, rate_grids};
use super::stored::Section;
use crate::markup::shown;
use crate::present::svg::{BarChart, charts, escape};
use crate::workload::{SectionOut, WorkloadSection};

/// The key of the Insert Benchmark's sections in a report's JSON.
pub const KEY: &str = "ibench";

impl WorkloadSection for Section {
    fn key(&self) -> &'static str {
        KEY
    }

    fn write(&self, index: usize, out: &mut SectionOut<'_>) {
        match out {
            SectionOut::Text { out, color } => {
                let _ = writeln!(out, "{}\n", shown(&self.title));
                let _ = writeln!(out, "{}", comparison_text(&self.tables, *color));
            }
            SectionOut::Markdown(out) => {
                let _ = writeln!(out, "## {}\n", crate::markup::escape(&self.title));
                let _ = writeln!(out, "{}", comparison_markdown(&self.tables));
            }
            SectionOut::Html(out) => {
                let _ = writeln!(out, "<h2 class=\"ibench\" id=\"ibench-{index}\">{}</h2>", escape(&self.title));
                write_html(out, &format!("ibench-{index}"), &self.tables, 3);
            }
        }
    }
}

fn colour_class(c: Colour) -> Option<&'static str> {
    match c {
        Colour::None => None,
        Colour::Red => Some("ib-red"),
        Colour::Green => Some("ib-green"),
        Colour::Gray => Some("ib-gray"),
        Colour::Yellow => Some("ib-yellow"),
        Colour::Blue => Some("ib-blue"),
    }
}

/// A column is numeric when any of its cells is a number; its text is then right-aligned.
fn numeric_columns(g: &Grid) -> Vec<bool> {
    (0..g.header.len())
        .map(|i| i > 0 && g.rows.iter().any(|r| r.get(i).is_some_and(|c| c.0.trim().parse::<f64>().is_ok())))
        .collect()
}

/// Writes `g` as the report's data table (`id="table-ID"`).
fn write_table(out: &mut String, id: &str, g: &Grid) {
    let num = numeric_columns(g);
    let _ = write!(out, "<div class=\"scroll\"><table class=\"data\" id=\"table-{}\"><thead><tr>", escape(id));
    for (i, h) in g.header.iter().enumerate() {
        let class = if num[i] { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &g.rows {
        out.push_str("<tr>");
        for (i, (text, colour)) in row.iter().enumerate() {
            let classes: Vec<&str> = [num.get(i).copied().unwrap_or(false).then_some("num"), colour_class(*colour)]
                .into_iter()
                .flatten()
                .collect();
            let class = if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) };
            let _ = write!(out, "<td{class}>{}</td>", escape(text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// Throughput per step relative to the base server, one bar per server; `None` with one server.
fn relative_chart(c: &Comparison) -> Option<String> {
    if c.sides.len() < 2 {
        return None;
    }
    let base = &c.sides[0];
    Some(charts::bar_chart(&BarChart {
        title: format!("Throughput per step relative to {base}"),
        y_label: format!("× {base}"),
        categories: c.steps.iter().map(|s| s.name()).collect(),
        series: c
            .sides
            .iter()
            .enumerate()
            .map(|(i, side)| {
                (side.clone(), i, c.cells[i].iter().map(|cell| cell.relative.filter(|v| v.is_finite())).collect())
            })
            .collect(),
    }))
}

/// Writes `g` with a short heading and the grid's own (long) title as its caption.
fn write_captioned(out: &mut String, id: &str, heading: &str, caption: &str, level: u8, g: &Grid) {
    let _ = writeln!(out, "<h{level} id=\"{}\">{}</h{level}>", escape(id), escape(heading));
    let _ = writeln!(out, "<p class=\"caption\">{}.</p>", escape(caption.trim_end_matches('.')));
    write_table(out, id, g);
}

/// The tables of a comparison (and its relative chart) as a section of a page: the rate tables, then
/// per step its efficiency and response times behind `<details>`. Headings are `<h{level}>`, ids start
/// with `prefix`.
pub fn write_html(out: &mut String, prefix: &str, c: &Comparison, level: u8) {
    let base = c.sides.first().map_or("", String::as_str);
    let headings = [
        ("throughput", "Throughput per step".to_string()),
        ("relative", format!("Relative to {base}")),
        ("insert-rate", "Insert rate in the query steps".to_string()),
    ];
    for (k, (caption, g)) in rate_grids(c).iter().enumerate() {
        let (id, heading) = &headings[k.min(2)];
        write_captioned(out, &format!("{prefix}-{id}"), heading, caption, level, g);
        if k == 1
            && let Some(svg) = relative_chart(c)
        {
            out.push_str(&svg);
            out.push('\n');
        }
    }
    let _ = writeln!(out, "<h{level} id=\"{prefix}-steps\">Efficiency and response times per step</h{level}>");
    for (j, step) in c.steps.iter().enumerate() {
        let mut grids = efficiency_grids(c, j);
        grids.extend(latency_grid(c, j));
        if grids.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<details><summary>{} — efficiency and response times ({} tables)</summary>",
            escape(&step.name()),
            grids.len()
        );
        for (k, (title, g)) in grids.iter().enumerate() {
            let id = format!("{prefix}-{}-{k}", step.name());
            let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(title));
            write_table(out, &id, g);
        }
        out.push_str("</details>\n");
    }
}
