//! A small SVG writer for the charts of the HTML report: plain elements written as text, every piece
//! of user text escaped, no scripts and no external references.

pub mod charts;

use std::fmt::Write as _;

pub use charts::{BarChart, LineChart, RatioChart, RatioPoint, Series};

/// Colours of the series (Okabe–Ito, distinguishable with the common colour-vision deficiencies).
pub const PALETTE: [&str; 8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555", "#8C564B"];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Shortens `s` to at most `n` characters with an ellipsis.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n.saturating_sub(1)).collect::<String>() + "…" }
}

/// An SVG document being written.
#[derive(Debug)]
pub struct Svg {
    buf: String,
}

impl Svg {
    /// A document of `width` × `height` user units that scales to its container's width.
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        let mut buf = String::new();
        let _ = write!(
            buf,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
             height=\"{height}\" role=\"img\" aria-label=\"{t}\" class=\"chart\" font-family=\"sans-serif\" \
             font-size=\"13\"><title>{t}</title>",
            t = escape(title)
        );
        Svg { buf }
    }

    /// A line from `(x1, y1)` to `(x2, y2)`, dashed with `dash` (an SVG dash array) if given.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64, dash: Option<&str>) {
        let dash = dash.map(|d| format!(" stroke-dasharray=\"{d}\"")).unwrap_or_default();
        let _ = write!(
            self.buf,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{stroke}\" \
             stroke-width=\"{width}\"{dash}/>"
        );
    }

    /// A rectangle.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, opacity: f64) {
        let _ = write!(
            self.buf,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" fill-opacity=\"{opacity}\"/>",
            w.max(0.0),
            h.max(0.0)
        );
    }

    /// A circle.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = write!(self.buf, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{fill}\"/>");
    }

    /// A polyline through `points`.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, opacity: f64) {
        let pts: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(
            self.buf,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\" \
             stroke-opacity=\"{opacity}\" stroke-linejoin=\"round\"/>",
            pts.join(" ")
        );
    }

    /// Text at (x, y); `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f64, y: f64, text: &str, anchor: &str, extra: &str) {
        let _ = write!(
            self.buf,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" fill=\"#222\"{}{}>{}</text>",
            if extra.is_empty() { "" } else { " " },
            extra,
            escape(text)
        );
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

/// About `target` round tick values covering `[lo, hi]` (1, 2 or 5 times a power of ten apart).
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 1.0, lo + 1.0) };
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    // From the last tick at or below `lo` to the first at or above `hi`.
    let mut ticks = Vec::new();
    for i in 0..50 {
        let v = start + i as f64 * step;
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        if v >= hi - step * 1e-9 {
            break;
        }
    }
    ticks
}

/// A tick label: integers without decimals, others with as few as needed.
pub fn tick_label(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_ticks() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(truncate("abcdef", 4), "abc…");
        let t = nice_ticks(0.0, 9700.0, 5);
        assert_eq!(t.first(), Some(&0.0));
        assert!(*t.last().unwrap() >= 9700.0 && t.len() <= 8, "{t:?}");
        let r = nice_ticks(0.93, 1.07, 5);
        assert!(r[0] <= 0.93 && *r.last().unwrap() >= 1.07 && r.iter().all(|v| (0.89..=1.11).contains(v)), "{r:?}");
        assert_eq!(tick_label(2000.0), "2000");
        assert_eq!(tick_label(0.95), "0.95");
        let svg = Svg::new(100.0, 50.0, "a < b").finish();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>") && svg.contains("<title>a &lt; b</title>"));
    }
}
