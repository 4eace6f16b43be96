//! The terminal output of `versus compare`: a summary, the ratio table, the seed-style pivot, stability,
//! efficiency and the differing variables, with the ratios the verdict calls in colour (green better, red worse).

use crate::markup::shown;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use super::model::CompareReport;
use super::tables::{self, Table, Tone};
use super::variables;

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

fn style(tone: Tone) -> Style {
    match tone {
        Tone::Plain => Style::new(),
        Tone::Better => Style::new().fg_color(Some(AnsiColor::Green.into())).bold(),
        Tone::Worse => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
        Tone::Muted => Style::new().dimmed(),
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// Sections in terminal text (see [`super::writer::Writer`]).
pub struct TextWriter<'a> {
    /// Where the text goes.
    pub out: &'a mut String,
    /// Whether to colour.
    pub color: bool,
}

impl super::writer::Writer for TextWriter<'_> {
    fn heading(&mut self, text: &str) {
        let _ = writeln!(self.out, "{}\n", shown(text));
    }
    fn table(&mut self, t: &Table) {
        write_table(self.out, t, self.color);
    }
    fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.out, "{}\n", shown(text));
    }
    fn list(&mut self, items: &[String]) {
        for i in items {
            let _ = writeln!(self.out, "• {}", shown(i));
        }
        self.out.push('\n');
    }
    fn summary(&mut self, items: &[String]) {
        for i in items {
            let _ = writeln!(self.out, "{}", shown(i));
        }
    }
}

/// Writes `t` as aligned text: numbers right-aligned, text left-aligned, two spaces between columns.
pub fn write_table(out: &mut String, t: &Table, color: bool) {
    let bold = Style::new().bold();
    let (b0, b1) =
        if color { (bold.render().to_string(), bold.render_reset().to_string()) } else { Default::default() };
    let _ = writeln!(out, "{b0}{}{b1}", shown(&t.title));
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "{}", shown(c));
    }
    if t.rows.is_empty() {
        let _ = writeln!(out, "(nothing to show)\n");
        return;
    }
    let header: Vec<String> = t.header.iter().map(|h| shown(h)).collect();
    let rows: Vec<Vec<(String, Tone)>> =
        t.rows.iter().map(|r| r.iter().map(|c| (shown(&c.text), c.tone)).collect()).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in &rows {
        for (i, (text, _)) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(text));
        }
    }
    // Drop columns that are empty in every row (e.g. a note column without notes).
    let keep: Vec<bool> = (0..widths.len()).map(|i| rows.iter().any(|r| !r[i].0.is_empty())).collect();
    let pad = |text: &str, i: usize| {
        let fill = " ".repeat(widths[i].saturating_sub(width(text)));
        if t.numeric[i] { format!("{fill}{text}") } else { format!("{text}{fill}") }
    };
    let line = |cells: Vec<String>| cells.join("  ").trim_end().to_string();
    let head: Vec<String> = (0..widths.len()).filter(|&i| keep[i]).map(|i| pad(&header[i], i)).collect();
    let _ = writeln!(out, "{}", line(head));
    let rule: Vec<String> = (0..widths.len()).filter(|&i| keep[i]).map(|i| "─".repeat(widths[i])).collect();
    let _ = writeln!(out, "{}", line(rule));
    for row in &rows {
        let cells: Vec<String> = (0..widths.len())
            .filter(|&i| keep[i])
            .map(|i| {
                let (text, tone) = &row[i];
                let text = pad(text, i);
                if color && *tone != Tone::Plain {
                    let s = style(*tone);
                    format!("{}{text}{}", s.render(), s.render_reset())
                } else {
                    text
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line(cells));
    }
    for (i, n) in t.footnotes.iter().enumerate() {
        let _ = writeln!(out, "[{}] {}", i + 1, shown(n));
    }
    out.push('\n');
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
    for line in tables::summary_lines(r) {
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
        write_variables(&mut out, r, opts.color);
        for sec in &r.ibench {
            let _ = writeln!(out, "{}\n", shown(&sec.title));
            let _ = writeln!(out, "{}", crate::workload::ibench::report::comparison_text(&sec.tables, opts.color));
        }
        super::statements::write(&mut TextWriter { out: &mut out, color: opts.color }, r);
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
