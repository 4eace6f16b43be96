//! The terminal output of `versus compare`: a summary, the ratio table, the seed-style pivot, stability,
//! efficiency and the differing variables, with the ratios the verdict calls in colour (green better, red worse).

use crate::markup::shown;
use crate::workload::SectionOut;
use std::fmt::Write as _;

use super::model::CompareReport;
use super::tables;
use super::variables;
pub use crate::present::writers::text::{TextWriter, write_table};

/// What to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Write ANSI colours.
    pub color: bool,
    /// Only the summary and the ratio table.
    pub brief: bool,
    /// The profile section even when brief.
    pub profile: bool,
}

/// The heading line: what is compared with what.
pub fn heading(r: &CompareReport) -> String {
    let exps: Vec<String> = r.experiments.iter().map(|e| format!("{} (id {})", e.name, e.id)).collect();
    format!(
        "{} by {}, baseline {} — experiment{} {}",
        r.metric.name,
        r.vs.name(),
        r.baseline,
        if exps.len() > 1 { "s" } else { "" },
        exps.join(", ")
    )
}

/// Values longer than this are cut in the terminal.
const VALUE_WIDTH: usize = 40;

/// Up to this many targets, the variables get one column per target; with more, one line per value.
const WIDE_UP_TO: usize = 4;

/// The variables that matter (with more than [`WIDE_UP_TO`] targets one line per distinct value with
/// its targets, narrow with any number of targets), and a count per component of the rest.
fn write_variables(out: &mut String, r: &CompareReport, color: bool) {
    if r.variables.rows.is_empty() && r.variables.flavor_only.is_empty() {
        return;
    }
    let (first, groups) = variables::grouped(&r.variables);
    let title = "Server variables that differ";
    let mut t = if r.variables.targets.len() <= WIDE_UP_TO {
        variables::wide_table(r, "variables", title, &first, false, Some(VALUE_WIDTH))
    } else {
        variables::long_table(&r.variables, "variables", title, &first, VALUE_WIDTH, false)
    };
    t.caption = Some(variables::caption(r));
    write_table(out, &t, color);
    if !groups.is_empty() {
        let counts: Vec<String> = groups.iter().map(|(c, rows)| format!("{} {}", shown(c), rows.len())).collect();
        let _ = writeln!(
            out,
            "Also differ, by component: {} (all of them: versus report --format html or json).\n",
            counts.join(", ")
        );
    }
}

/// The full terminal report (`color`: with ANSI colours).
pub fn render(r: &CompareReport, color: bool) -> String {
    render_with(r, &Options { color, brief: false, profile: false })
}

/// The terminal report with `opts`.
pub fn render_with(r: &CompareReport, opts: &Options) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", shown(&heading(r)));
    for line in super::summary::summary_lines(r) {
        let _ = writeln!(out, "• {}", shown(&line));
    }
    out.push('\n');
    write_table(&mut out, &tables::ratio_table(r), opts.color);
    for (i, s) in r.advise.iter().enumerate() {
        let _ = writeln!(out, "{}", shown(&super::advise_section::heading(s)));
        for l in super::advise_section::lines(s) {
            let _ = writeln!(out, "• {}", shown(&l));
        }
        out.push('\n');
        write_table(&mut out, &super::advise_section::table(s, i), opts.color);
    }
    if !opts.brief {
        let (_, rel) = tables::pivot_tables(r);
        write_table(&mut out, &rel, opts.color);
        write_table(&mut out, &tables::stability_table(r), opts.color);
        let (eff, eff_rel) = tables::efficiency_tables(r);
        write_table(&mut out, &eff, opts.color);
        if r.sides.len() > 1 {
            write_table(&mut out, &eff_rel, opts.color);
        }
        if let Some((repl, repl_rel)) = tables::replication_tables(r) {
            write_table(&mut out, &repl, opts.color);
            if r.sides.len() > 1 {
                write_table(&mut out, &repl_rel, opts.color);
            }
        }
        write_variables(&mut out, r, opts.color);
        r.sections.write(&mut SectionOut::Text { out: &mut out, color: opts.color });
    }
    if !opts.brief || opts.profile {
        super::profile::write(&mut TextWriter { out: &mut out, color: opts.color }, r);
    }
    for n in &r.notes {
        let _ = writeln!(out, "Note: {}", shown(n));
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
