//! Terminal text primitives: aligned tables, ANSI colours for the tones, and [`super::Writer`]
//! sections.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use super::super::table::{Table, Tone};
use crate::markup::shown;

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

/// Sections in terminal text (see [`super::Writer`]).
pub struct TextWriter<'a> {
    /// Where the text goes.
    pub out: &'a mut String,
    /// Whether to colour.
    pub color: bool,
}

impl super::Writer for TextWriter<'_> {
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
