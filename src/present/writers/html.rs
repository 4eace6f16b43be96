//! HTML primitives: escaping, data tables in the report's markup, and [`super::Writer`] sections
//! (pictures in sandboxed inline frames).

use std::fmt::Write as _;

use super::super::table::{Table, Tone};
use crate::present::svg;

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    svg::escape(s)
}

/// `text` (escaped HTML) with line-break opportunities after `/`, `-`, `_` and `,`: a column header such
/// as `mariadb-11.8/trx1-binlog-sync1` may wrap there, so ten targets side by side fit the page.
fn breakable(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        s.push(c);
        if matches!(c, '/' | '-' | '_' | ',') {
            s.push_str("<wbr>");
        }
    }
    s
}

/// Sections in HTML (see [`super::Writer`]); pictures are shown each in an inline frame of
/// its own, so that the flame graphs' scripts (zoom, search) work and do not meet, sandboxed: the
/// script runs with an origin of its own and cannot reach the page.
pub struct HtmlWriter<'a> {
    /// Where the HTML goes.
    pub out: &'a mut String,
    /// Headings written so far (for their ids).
    pub headings: usize,
    /// The heading level of a table's title (2 when the table is the section, 3 below a heading).
    pub table_level: u8,
}

impl super::Writer for HtmlWriter<'_> {
    fn heading(&mut self, text: &str) {
        self.headings += 1;
        let _ = writeln!(self.out, "<h2 id=\"section-{}\">{}</h2>", self.headings, escape(text));
    }
    fn table(&mut self, t: &Table) {
        write_table(self.out, t, self.table_level);
    }
    fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.out, "<p>{}</p>", escape(text));
    }
    fn list(&mut self, items: &[String]) {
        self.out.push_str("<ul>\n");
        for i in items {
            let _ = writeln!(self.out, "<li>{}</li>", escape(i));
        }
        self.out.push_str("</ul>\n");
    }
    fn summary(&mut self, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.out.push_str("<ul class=\"summary\">\n");
        for i in items {
            let _ = writeln!(self.out, "<li>{}</li>", escape(i));
        }
        self.out.push_str("</ul>\n");
    }
    fn figure(&mut self, caption: &str, svg: &str) {
        let height = svg_height(svg).unwrap_or(600) + 8;
        let _ = writeln!(
            self.out,
            "<figure class=\"flame\"><iframe title=\"{}\" sandbox=\"allow-scripts\" \
             style=\"width:100%;height:{height}px;border:0\" srcdoc=\"{}\"></iframe><figcaption>{}</figcaption></figure>",
            escape(caption),
            escape(svg),
            escape(caption)
        );
    }
    fn shows_figures(&self) -> bool {
        true
    }
}

/// The `height` of an SVG document's root element, in pixels.
fn svg_height(svg: &str) -> Option<usize> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let at = root.find(" height=\"")? + 9;
    root[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Writes `t` as an HTML table with an `h2` (or `h3`) heading.
/// Without a title, only the table (and its caption).
/// Whether `text` is one number (`134217728`, `0.75`, `-1`), which must never wrap.
fn is_number(text: &str) -> bool {
    !text.is_empty() && text.parse::<f64>().is_ok() && text.chars().all(|c| c.is_ascii_digit() || ".-+e".contains(c))
}

pub fn write_table(out: &mut String, t: &Table, level: u8) {
    if !t.title.is_empty() {
        let _ = writeln!(out, "<h{level} id=\"{}\">{}</h{level}>", escape(&t.id), escape(&t.title));
    }
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    if t.rows.is_empty() {
        let _ = writeln!(out, "<p>(nothing to show)</p>");
        return;
    }
    let keep: Vec<bool> = (0..t.header.len()).map(|i| t.rows.iter().any(|r| !r[i].text.is_empty())).collect();
    let _ = write!(out, "<div class=\"scroll\"><table class=\"data\" id=\"table-{}\"><thead><tr>", escape(&t.id));
    for (i, h) in t.header.iter().enumerate().filter(|(i, _)| keep[*i]) {
        let class = if t.numeric[i] { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", breakable(&escape(h)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate().filter(|(i, _)| keep[*i]) {
            let mut classes = Vec::new();
            if t.numeric[i] {
                classes.push("num");
            } else if is_number(&c.text) {
                // A number in a column that may wrap (variables) must not break mid-number.
                classes.push("nb");
            }
            match c.tone {
                Tone::Better => classes.push("better"),
                Tone::Worse => classes.push("worse"),
                Tone::Muted => classes.push("muted"),
                Tone::Plain => {}
            }
            let class = if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) };
            let _ = write!(out, "<td{class}>{}</td>", escape(&c.text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    if !t.footnotes.is_empty() {
        out.push_str("<ol class=\"footnotes\">");
        for n in &t.footnotes {
            let _ = write!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ol>\n");
    }
}
