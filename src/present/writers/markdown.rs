//! Markdown primitives: tables as GitHub-flavoured markdown and [`super::Writer`] sections.

use std::fmt::Write as _;

use super::super::table::{Table, Tone};
use crate::markup::escape;

/// A code fence that `text` cannot close: more backticks than its longest run (at least three).
pub fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// Sections in markdown (see [`super::Writer`]).
pub struct MarkdownWriter<'a> {
    /// Where the markdown goes.
    pub out: &'a mut String,
}

impl super::Writer for MarkdownWriter<'_> {
    fn heading(&mut self, text: &str) {
        let _ = writeln!(self.out, "## {}\n", escape(text));
    }
    fn table(&mut self, t: &Table) {
        write_table(self.out, t);
    }
    fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.out, "{}\n", escape(text));
    }
    fn list(&mut self, items: &[String]) {
        for i in items {
            let _ = writeln!(self.out, "- {}", escape(i));
        }
        self.out.push('\n');
    }
    fn summary(&mut self, items: &[String]) {
        for i in items {
            let _ = writeln!(self.out, "- {}", escape(i));
        }
    }
    fn end_section(&mut self) {
        self.out.push('\n');
    }
}

/// Writes `t` as a GitHub-flavoured markdown table with a level-2 heading.
/// Without a title, only the table (and its caption).
pub fn write_table(out: &mut String, t: &Table) {
    if !t.title.is_empty() {
        let _ = writeln!(out, "## {}\n", escape(&t.title));
    }
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "{}\n", escape(c));
    }
    if t.rows.is_empty() {
        let _ = writeln!(out, "(nothing to show)\n");
        return;
    }
    let keep: Vec<bool> = (0..t.header.len()).map(|i| t.rows.iter().any(|r| !r[i].text.is_empty())).collect();
    let cols = |f: &dyn Fn(usize) -> String| {
        let cells: Vec<String> = (0..t.header.len()).filter(|&i| keep[i]).map(f).collect();
        format!("| {} |", cells.join(" | "))
    };
    let _ = writeln!(out, "{}", cols(&|i| escape(&t.header[i])));
    let _ = writeln!(out, "{}", cols(&|i| if t.numeric[i] { "---:".into() } else { "---".into() }));
    for row in &t.rows {
        let _ = writeln!(
            out,
            "{}",
            cols(&|i| {
                let c = &row[i];
                let text = escape(&c.text);
                match c.tone {
                    Tone::Better | Tone::Worse if !text.is_empty() => format!("**{text}**"),
                    _ => text,
                }
            })
        );
    }
    if !t.footnotes.is_empty() {
        out.push('\n');
        for (i, n) in t.footnotes.iter().enumerate() {
            let _ = writeln!(out, "[{}] {}  ", i + 1, escape(n));
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_text_not_html_and_never_break_a_table() {
        assert_eq!(
            escape("<img src=x onerror=alert(1)> a|b & c\nd"),
            "&lt;img src=x onerror=alert(1)&gt; a\\|b &amp; c d"
        );
        let t = Table {
            id: "t".into(),
            title: "<b>t</b>".into(),
            caption: None,
            header: vec!["target".into()],
            numeric: vec![false],
            rows: vec![vec![crate::present::table::Cell { text: "x|<script>".into(), tone: Tone::Plain }]],
            footnotes: vec![],
        };
        let mut out = String::new();
        write_table(&mut out, &t);
        assert!(out.contains("## &lt;b&gt;t&lt;/b&gt;") && out.contains("| x\\|&lt;script&gt; |"), "{out}");
        assert!(!out.contains('<'), "{out}");
    }
}
