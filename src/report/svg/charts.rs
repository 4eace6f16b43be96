//! The charts of the HTML report: line charts (throughput over time, throughput vs threads), a
//! dot-and-whisker chart of ratios with their intervals, and grouped bars (latency percentiles).

use super::{Svg, color, nice_ticks, tick_label, truncate};

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 70.0;
const LEGEND: f64 = 200.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 48.0;

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Name in the legend.
    pub name: String,
    /// Palette index.
    pub color: usize,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// Whether it gets a legend entry (several runs of one side share one).
    pub legend: bool,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Heading inside the chart.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Category ticks instead of numeric ones (x positions and labels).
    pub x_categories: Option<Vec<(f64, String)>>,
    /// Draw a dot at every point.
    pub dots: bool,
}

/// Maps data to the plot area.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    xs: (f64, f64),
    ys: (f64, f64),
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        let (a, b) = self.xs;
        self.x0 + if b > a { (v - a) / (b - a) * (self.x1 - self.x0) } else { (self.x1 - self.x0) / 2.0 }
    }

    fn y(&self, v: f64) -> f64 {
        let (a, b) = self.ys;
        self.y1 - if b > a { (v - a) / (b - a) * (self.y1 - self.y0) } else { (self.y1 - self.y0) / 2.0 }
    }
}

fn legend(svg: &mut Svg, x: f64, entries: &[(String, usize)]) {
    for (i, (name, c)) in entries.iter().enumerate() {
        let y = TOP + 8.0 + i as f64 * 20.0;
        svg.rect(x, y - 9.0, 14.0, 10.0, color(*c), 1.0);
        svg.text(x + 20.0, y, &truncate(name, 24), "start", "");
    }
}

fn y_axis(svg: &mut Svg, f: &Frame, ticks: &[f64], label: &str) {
    for &t in ticks {
        let y = f.y(t);
        svg.line((f.x0, y), (f.x1, y), "#e3e3e3", 1.0, None);
        svg.text(f.x0 - 6.0, y + 4.0, &tick_label(t), "end", "");
    }
    svg.line((f.x0, f.y0), (f.x0, f.y1), "#888", 1.0, None);
    svg.text(
        14.0,
        (f.y0 + f.y1) / 2.0,
        label,
        "middle",
        &format!("transform=\"rotate(-90 14 {:.1})\"", (f.y0 + f.y1) / 2.0),
    );
}

/// Draws a line chart.
pub fn line_chart(c: &LineChart) -> String {
    let height = 320.0;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    let pts = c.series.iter().flat_map(|s| s.points.iter());
    let (mut xmin, mut xmax, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymax = ymax.max(y);
    }
    if !xmin.is_finite() {
        (xmin, xmax) = (0.0, 1.0);
    }
    let yt = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
    let mut f = Frame {
        x0: LEFT,
        x1: WIDTH - LEGEND,
        y0: TOP,
        y1: height - BOTTOM,
        xs: (xmin, xmax),
        ys: (0.0, *yt.last().unwrap_or(&1.0)),
    };
    if c.x_categories.is_some() {
        f.xs = (xmin - 0.5, xmax + 0.5);
    }
    svg.text(LEFT, 20.0, &c.title, "start", "font-weight=\"bold\"");
    y_axis(&mut svg, &f, &yt, &c.y_label);
    let xticks: Vec<(f64, String)> = match &c.x_categories {
        Some(cats) => cats.clone(),
        None => nice_ticks(xmin, xmax, 8)
            .into_iter()
            .filter(|t| *t >= xmin && *t <= xmax)
            .map(|t| (t, tick_label(t)))
            .collect(),
    };
    for (t, label) in &xticks {
        let x = f.x(*t);
        svg.line((x, f.y1), (x, f.y1 + 4.0), "#888", 1.0, None);
        svg.text(x, f.y1 + 18.0, label, "middle", "");
    }
    svg.line((f.x0, f.y1), (f.x1, f.y1), "#888", 1.0, None);
    svg.text((f.x0 + f.x1) / 2.0, height - 10.0, &c.x_label, "middle", "");
    for s in &c.series {
        let p: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (f.x(x), f.y(y))).collect();
        svg.polyline(&p, color(s.color), 1.8, 0.85);
        if c.dots || p.len() == 1 {
            for (x, y) in &p {
                svg.circle(*x, *y, 3.5, color(s.color));
            }
        }
    }
    let entries: Vec<(String, usize)> =
        c.series.iter().filter(|s| s.legend).map(|s| (s.name.clone(), s.color)).collect();
    legend(&mut svg, WIDTH - LEGEND + 16.0, &entries);
    svg.finish()
}

/// One row of a ratio chart.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioPoint {
    /// Row label.
    pub label: String,
    /// The ratio.
    pub ratio: f64,
    /// Its interval, if any.
    pub ci: Option<(f64, f64)>,
    /// `better`, `worse` or `none` (the verdict).
    pub tone: &'static str,
}

/// Ratios with their confidence intervals against the line at 1 and the noise band.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioChart {
    /// Heading.
    pub title: String,
    /// The rows.
    pub points: Vec<RatioPoint>,
    /// The noise band (shaded around 1).
    pub noise_band: f64,
}

/// Draws a ratio chart.
pub fn ratio_chart(c: &RatioChart) -> String {
    let row_h = 26.0;
    let label_w = 330.0;
    let height = TOP + 10.0 + c.points.len().max(1) as f64 * row_h + BOTTOM;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    let (mut lo, mut hi) = (1.0 - c.noise_band, 1.0 + c.noise_band);
    for p in &c.points {
        let (a, b) = p.ci.unwrap_or((p.ratio, p.ratio));
        lo = lo.min(a).min(p.ratio);
        hi = hi.max(b).max(p.ratio);
    }
    let pad = (hi - lo) * 0.05;
    let ticks = nice_ticks(lo - pad, hi + pad, 8);
    let f = Frame {
        x0: label_w,
        x1: WIDTH - 90.0,
        y0: TOP,
        y1: height - BOTTOM,
        xs: (ticks[0], *ticks.last().unwrap_or(&2.0)),
        ys: (0.0, 1.0),
    };
    svg.text(16.0, 20.0, &c.title, "start", "font-weight=\"bold\"");
    svg.rect(
        f.x(1.0 - c.noise_band),
        f.y0,
        f.x(1.0 + c.noise_band) - f.x(1.0 - c.noise_band),
        f.y1 - f.y0,
        "#999",
        0.18,
    );
    for &t in &ticks {
        let x = f.x(t);
        svg.line((x, f.y0), (x, f.y1), "#ececec", 1.0, None);
        svg.text(x, f.y1 + 18.0, &tick_label(t), "middle", "");
    }
    svg.line((f.x(1.0), f.y0), (f.x(1.0), f.y1), "#333", 1.2, Some("4 3"));
    svg.line((f.x0, f.y1), (f.x1, f.y1), "#888", 1.0, None);
    svg.text(
        (f.x0 + f.x1) / 2.0,
        height - 10.0,
        "ratio to baseline (dot) with confidence interval (whisker)",
        "middle",
        "",
    );
    for (i, p) in c.points.iter().enumerate() {
        let y = f.y0 + 10.0 + (i as f64 + 0.5) * row_h;
        let col = match p.tone {
            "better" => "#1a7f37",
            "worse" => "#c62828",
            _ => "#555555",
        };
        svg.text(label_w - 10.0, y + 4.0, &truncate(&p.label, 44), "end", "");
        if let Some((a, b)) = p.ci {
            svg.line((f.x(a), y), (f.x(b), y), col, 2.0, None);
            svg.line((f.x(a), y - 6.0), (f.x(a), y + 6.0), col, 2.0, None);
            svg.line((f.x(b), y - 6.0), (f.x(b), y + 6.0), col, 2.0, None);
        }
        svg.circle(f.x(p.ratio), y, 5.0, col);
        svg.text(f.x1 + 10.0, y + 4.0, &format!("{:.2}", p.ratio), "start", &format!("fill=\"{col}\""));
    }
    svg.finish()
}

/// Grouped bars: categories along x, one bar per series in each.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Heading.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// Category labels.
    pub categories: Vec<String>,
    /// (series name, palette index, one value per category).
    pub series: Vec<(String, usize, Vec<Option<f64>>)>,
}

/// Draws a grouped bar chart.
pub fn bar_chart(c: &BarChart) -> String {
    let height = 300.0;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    let ymax = c.series.iter().flat_map(|s| s.2.iter().flatten()).fold(0.0f64, |a, b| a.max(*b));
    let yt = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
    let f = Frame {
        x0: LEFT,
        x1: WIDTH - LEGEND,
        y0: TOP,
        y1: height - BOTTOM,
        xs: (0.0, c.categories.len().max(1) as f64),
        ys: (0.0, *yt.last().unwrap_or(&1.0)),
    };
    svg.text(LEFT, 20.0, &c.title, "start", "font-weight=\"bold\"");
    y_axis(&mut svg, &f, &yt, &c.y_label);
    svg.line((f.x0, f.y1), (f.x1, f.y1), "#888", 1.0, None);
    let group_w = (f.x1 - f.x0) / c.categories.len().max(1) as f64;
    let bar_w = (group_w * 0.8 / c.series.len().max(1) as f64).min(40.0);
    for (ci, cat) in c.categories.iter().enumerate() {
        let gx = f.x0 + ci as f64 * group_w;
        let start = gx + (group_w - bar_w * c.series.len() as f64) / 2.0;
        for (si, (_, col, values)) in c.series.iter().enumerate() {
            if let Some(Some(v)) = values.get(ci) {
                let y = f.y(*v);
                svg.rect(start + si as f64 * bar_w, y, bar_w - 2.0, f.y1 - y, color(*col), 1.0);
            }
        }
        svg.text(gx + group_w / 2.0, f.y1 + 18.0, cat, "middle", "");
    }
    let entries: Vec<(String, usize)> = c.series.iter().map(|s| (s.0.clone(), s.1)).collect();
    legend(&mut svg, WIDTH - LEGEND + 16.0, &entries);
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_hold_their_data() {
        let line = line_chart(&LineChart {
            title: "tps over time".into(),
            x_label: "s".into(),
            y_label: "tps".into(),
            series: vec![Series { name: "a<b".into(), color: 0, points: vec![(1.0, 10.0), (2.0, 12.0)], legend: true }],
            x_categories: None,
            dots: false,
        });
        assert!(line.contains("<polyline") && line.contains("a&lt;b"), "{line}");
        let ratio = ratio_chart(&RatioChart {
            title: "ratios".into(),
            points: vec![RatioPoint { label: "x".into(), ratio: 0.8, ci: Some((0.75, 0.85)), tone: "worse" }],
            noise_band: 0.02,
        });
        assert!(ratio.contains("0.80") && ratio.contains("#c62828"), "{ratio}");
        let bars = bar_chart(&BarChart {
            title: "latency".into(),
            y_label: "ms".into(),
            categories: vec!["p95".into()],
            series: vec![("a".into(), 0, vec![Some(2.0)]), ("b".into(), 1, vec![None])],
        });
        assert_eq!(bars.matches("<rect").count(), 1 + 2, "one bar and two legend keys: {bars}");
    }
}
