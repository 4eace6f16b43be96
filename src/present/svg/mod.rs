//! A small SVG writer for the charts of the HTML report: plain elements written as text, every piece
//! of user text escaped, no scripts and no external references.

pub mod charts;
pub mod many;

use std::fmt::Write as _;

pub use charts::{BarChart, LineChart, RatioChart, RatioPoint, Series};

/// Colours of the series: Okabe–Ito (distinguishable with the common colour-vision deficiencies), then
/// Paul Tol's muted scheme, so that 16 sides get 16 colours.
pub const PALETTE: [&str; 16] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555", "#8C564B", "#332288", "#88CCEE",
    "#44AA99", "#117733", "#999933", "#DDCC77", "#882255", "#AA4499",
];

/// Marker shapes; with the palette, 80 sides get distinct colour–marker pairs (the marker changes with
/// every side, so neighbours differ in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// ●
    Circle,
    /// ■
    Square,
    /// ▲
    Triangle,
    /// ◆
    Diamond,
    /// ▼
    Down,
}

/// The marker cycle.
pub const MARKERS: [Marker; 5] = [Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond, Marker::Down];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The marker of series `i`.
pub fn marker(i: usize) -> Marker {
    MARKERS[i % MARKERS.len()]
}

/// The dash pattern of series `i`'s line: solid for the first 16, then dashed and dotted.
pub fn dash(i: usize) -> Option<&'static str> {
    match (i / PALETTE.len()) % 3 {
        0 => None,
        1 => Some("7 3"),
        _ => Some("2 3"),
    }
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
        self.polyline_with(points, stroke, width, opacity, None, None);
    }

    /// A polyline through `points`, dashed with `dash`, with a tooltip `title`.
    pub fn polyline_with(
        &mut self,
        points: &[(f64, f64)],
        stroke: &str,
        width: f64,
        opacity: f64,
        dash: Option<&str>,
        title: Option<&str>,
    ) {
        let pts: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let dash = dash.map(|d| format!(" stroke-dasharray=\"{d}\"")).unwrap_or_default();
        let _ = write!(
            self.buf,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\" \
             stroke-opacity=\"{opacity}\" stroke-linejoin=\"round\"{dash}",
            pts.join(" ")
        );
        match title {
            Some(t) => {
                let _ = write!(self.buf, "><title>{}</title></polyline>", escape(t));
            }
            None => self.buf.push_str("/>"),
        }
    }

    /// A marker of `shape` centred on (x, y) with radius `r`, with a tooltip `title`.
    pub fn marker(&mut self, x: f64, y: f64, r: f64, shape: Marker, fill: &str, title: Option<&str>) {
        let body = match shape {
            Marker::Circle => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{fill}\""),
            Marker::Square => {
                let s = r * 0.9;
                format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"",
                    x - s,
                    y - s,
                    2.0 * s,
                    2.0 * s
                )
            }
            Marker::Triangle | Marker::Diamond | Marker::Down => {
                let k = r * 1.2;
                let pts = match shape {
                    Marker::Triangle => [(x, y - k), (x + k, y + k * 0.8), (x - k, y + k * 0.8)].to_vec(),
                    Marker::Down => [(x, y + k), (x + k, y - k * 0.8), (x - k, y - k * 0.8)].to_vec(),
                    _ => [(x, y - k), (x + k, y), (x, y + k), (x - k, y)].to_vec(),
                };
                let p: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
                format!("<path d=\"M{}Z\" fill=\"{fill}\"", p.join(" L"))
            }
        };
        self.buf.push_str(&body);
        match title {
            Some(t) => {
                let tag = match shape {
                    Marker::Circle => "circle",
                    Marker::Square => "rect",
                    _ => "path",
                };
                let _ = write!(self.buf, "><title>{}</title></{tag}>", escape(t));
            }
            None => self.buf.push_str("/>"),
        }
    }

    /// Starts a group with a tooltip (`<g><title>…</title>`); close it with [`Svg::end_group`].
    pub fn begin_group(&mut self, title: &str) {
        let _ = write!(self.buf, "<g><title>{}</title>", escape(title));
    }

    /// Ends a group.
    pub fn end_group(&mut self) {
        self.buf.push_str("</g>");
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
