//! The markdown export, ready for a blog post: a summary in sentences, the ratio table, the seed-style
//! pivot tables, stability, efficiency, latency, the differing variables, and the exact experiment
//! definitions with host facts. Markdown has no colour: ratios the verdict calls are in bold.

use crate::workload::SectionOut;
use std::fmt::Write as _;

use super::model::CompareReport;
use super::tables;
use super::terminal::heading;
use super::variables;
use crate::markup::{escape, html};
pub use crate::present::writers::markdown::{MarkdownWriter, fence, write_table};

/// The differing server variables: what matters first, the rest by component in collapsed `<details>`
/// (GitHub and most blog engines render them).
fn write_variables(out: &mut String, r: &CompareReport) {
    let _ = writeln!(out, "## Server variables that differ\n\n{}\n", variables::caption(r));
    let (first, groups) = variables::grouped(&r.variables);
    if !first.is_empty() {
        let mut t = variables::wide_table(r, "variables-first", "", &first, true, None);
        t.caption = Some("What matters:".into());
        write_table(out, &t);
    }
    for (component, rows) in &groups {
        let _ = writeln!(out, "<details><summary>{} ({} differ)</summary>\n", html(component), rows.len());
        write_table(out, &variables::wide_table(r, "variables", "", rows, false, None));
        out.push_str("</details>\n\n");
    }
}

/// The markdown text of `report`.
pub fn render(r: &CompareReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", escape(&tables::short_title(r)));
    let _ = writeln!(out, "{}.\n", escape(&heading(r)));
    let _ = writeln!(
        out,
        "Metric: {} ({}, {} is better). Intervals: {} of the ratio of means over repetitions; noise band {}.\n",
        r.metric.name,
        r.metric.unit,
        if r.metric.higher_is_better { "higher" } else { "lower" },
        tables::ci_heading(r),
        super::fmt::bands(r)
    );
    let _ = writeln!(out, "## Summary\n");
    for line in super::summary::summary_lines(r) {
        let _ = writeln!(out, "- {}", escape(&line));
    }
    out.push('\n');
    super::explain::write_markdown(&mut out, r);
    for (i, s) in r.advise.iter().enumerate() {
        let _ = writeln!(out, "## {}\n", escape(&super::advise_section::heading(s)));
        for l in super::advise_section::lines(s) {
            let _ = writeln!(out, "- {}", escape(&l));
        }
        out.push('\n');
        write_table(&mut out, &super::advise_section::table(s, i));
    }
    write_table(&mut out, &tables::ratio_table(r));
    let (abs, rel) = tables::pivot_tables(r);
    write_table(&mut out, &abs);
    write_table(&mut out, &rel);
    write_table(&mut out, &tables::stability_table(r));
    let (eff, eff_rel) = tables::efficiency_tables(r);
    write_table(&mut out, &eff);
    write_table(&mut out, &eff_rel);
    if let Some((repl, repl_rel)) = tables::replication_tables(r) {
        write_table(&mut out, &repl);
        write_table(&mut out, &repl_rel);
    }
    write_table(&mut out, &tables::latency_table(r));
    write_variables(&mut out, r);
    r.sections.write(&mut SectionOut::Markdown(&mut out));
    super::profile::write(&mut MarkdownWriter { out: &mut out }, r);
    super::explain::write_markdown_changes(&mut out, r);
    if !r.notes.is_empty() {
        let _ = writeln!(out, "## Notes\n");
        for n in &r.notes {
            let _ = writeln!(out, "- {}", escape(n));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "## Reproduce\n");
    for e in &r.experiments {
        let mut t = tables::experiment_table(e);
        t.title = format!("Experiment {} (id {})", e.name, e.id);
        write_table(&mut out, &t);
        let fence = fence(&e.definition);
        let _ = writeln!(out, "Definition:\n\n{fence}toml\n{}\n{fence}\n", e.definition.trim_end());
    }
    out.trim_end().to_string() + "\n"
}
