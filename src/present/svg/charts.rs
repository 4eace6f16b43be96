//! The charts of the HTML report: line charts (throughput over time, throughput vs threads), a
//! dot-and-whisker chart of ratios with their intervals, and grouped bars (latency percentiles).

use super::{Svg, color, dash, marker, nice_ticks, tick_label, truncate};

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 48.0;
/// Height of one legend row.
const LEGEND_ROW: f64 = 20.0;
/// Average width of a character of the 13-px sans-serif text, for laying out labels.
const CHAR_W: f64 = 7.2;

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

/// How a legend entry's key is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// A line with the series' dash and marker.
    Line,
    /// A filled box.
    Bar,
}

/// The legend's columns and rows for `names` in `width`: full labels, as many columns as fit.
fn legend_layout(names: &[String], width: f64) -> (usize, usize, f64) {
    if names.is_empty() {
        return (1, 0, width);
    }
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64;
    let col_w = (longest * CHAR_W + 44.0).clamp(120.0, width);
    let cols = ((width / col_w).floor() as usize).clamp(1, names.len());
    (cols, names.len().div_ceil(cols), col_w)
}

/// The height the legend of `names` needs under a plot of `width`.
fn legend_height(names: &[String], width: f64) -> f64 {
    let (_, rows, _) = legend_layout(names, width);
    if rows == 0 { 0.0 } else { rows as f64 * LEGEND_ROW + 8.0 }
}

/// The legend under the plot, from (x, y): each entry its key and its full label, with a tooltip.
fn legend(svg: &mut Svg, x: f64, y: f64, width: f64, entries: &[(String, usize)], key: Key) {
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let (_, rows, col_w) = legend_layout(&names, width);
    for (i, (name, c)) in entries.iter().enumerate() {
        let (row, col) = if rows == 0 { (0, 0) } else { (i % rows, i / rows) };
        let (ex, ey) = (x + col as f64 * col_w, y + 14.0 + row as f64 * LEGEND_ROW);
        svg.begin_group(name);
        match key {
            Key::Line => {
                svg.line((ex, ey - 4.0), (ex + 24.0, ey - 4.0), color(*c), 2.0, dash(*c));
                svg.marker(ex + 12.0, ey - 4.0, 3.5, marker(*c), color(*c), None);
            }
            Key::Bar => svg.rect(ex + 5.0, ey - 9.0, 14.0, 10.0, color(*c), bar_opacity(*c)),
        }
        svg.text(ex + 30.0, ey, name, "start", "");
        svg.end_group();
    }
}

/// Bars of the second round of the palette are lighter.
fn bar_opacity(i: usize) -> f64 {
    if i < super::PALETTE.len() { 1.0 } else { 0.55 }
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

/// Draws a line chart: the legend under the plot with every series' full name; each series its own
/// colour, dash and marker ([`super::color`], [`super::dash`], [`super::marker`]) and a tooltip.
pub fn line_chart(c: &LineChart) -> String {
    let plot_h = 320.0;
    let entries: Vec<(String, usize)> =
        c.series.iter().filter(|s| s.legend).map(|s| (s.name.clone(), s.color)).collect();
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let height = plot_h + legend_height(&names, WIDTH - LEFT - RIGHT);
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
        x1: WIDTH - RIGHT,
        y0: TOP,
        y1: plot_h - BOTTOM,
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
    svg.text((f.x0 + f.x1) / 2.0, plot_h - 10.0, &c.x_label, "middle", "");
    for s in &c.series {
        let p: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (f.x(x), f.y(y))).collect();
        svg.polyline_with(&p, color(s.color), 1.8, 0.85, dash(s.color), Some(&s.name));
        if c.dots || p.len() == 1 {
            for (i, (x, y)) in p.iter().enumerate() {
                let (dx, dy) = s.points[i];
                let label = match &c.x_categories {
                    Some(cats) => cats.iter().find(|(v, _)| *v == dx).map(|(_, l)| l.clone()).unwrap_or_default(),
                    None => tick_label(dx),
                };
                let tip = format!("{}: {} {label}, {} {}", s.name, c.x_label, tick_label(dy), c.y_label);
                svg.marker(*x, *y, 4.0, marker(s.color), color(s.color), Some(&tip));
            }
        }
    }
    legend(&mut svg, LEFT, plot_h, WIDTH - LEFT - RIGHT, &entries, Key::Line);
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
    /// The row's own noise band, when the rows' bands differ (then each row is shaded with its own).
    pub band: Option<f64>,
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

/// Round ratios for the ticks of a log-scale ratio axis.
const RATIO_TICKS: [f64; 27] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.75, 0.8, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.25, 1.33, 1.5,
    2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 50.0,
];

/// Ticks of a log-scale ratio axis over `[lo, hi]` (both > 0): 1 and round ratios outward from it, at
/// least `gap` apart in log units.
fn ratio_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let gap = (hi.ln() - lo.ln()) / 9.0;
    let inside: Vec<f64> = RATIO_TICKS.iter().copied().filter(|t| *t >= lo && *t <= hi).collect();
    let mut out = vec![1.0];
    let mut last = 1.0f64;
    for &t in inside.iter().filter(|t| **t > 1.0) {
        if (t.ln() - last.ln()).abs() >= gap {
            out.push(t);
            last = t;
        }
    }
    last = 1.0;
    for &t in inside.iter().rev().filter(|t| **t < 1.0) {
        if (last.ln() - t.ln()).abs() >= gap {
            out.push(t);
            last = t;
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

/// Draws a ratio chart on a log scale around 1 (a ratio is never negative; 0.5 and 2 are as far from 1):
/// each row's full label, its dot and whisker, with tooltips.
pub fn ratio_chart(c: &RatioChart) -> String {
    let row_h = if c.points.len() > 12 { 20.0 } else { 26.0 };
    let longest = c.points.iter().map(|p| p.label.chars().count()).max().unwrap_or(0) as f64;
    let label_w = (longest.min(60.0) * CHAR_W + 26.0).clamp(160.0, 460.0);
    let height = TOP + 10.0 + c.points.len().max(1) as f64 * row_h + BOTTOM;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    let widest = c.points.iter().filter_map(|p| p.band).fold(c.noise_band, f64::max);
    let (mut lo, mut hi) = (1.0 - widest, 1.0 + widest);
    for p in &c.points {
        let (a, b) = p.ci.unwrap_or((p.ratio, p.ratio));
        for v in [a, b, p.ratio].into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    // Bounded at 0: a whisker that reaches 0 or below is cut at the left edge.
    let pad = ((hi.ln() - lo.ln()) * 0.06).max(0.01);
    let (a, b) = (lo.ln() - pad, hi.ln() + pad);
    let (x0, x1) = (label_w, WIDTH - 90.0);
    let fx = |v: f64| x0 + (v.max(a.exp()).ln() - a) / (b - a) * (x1 - x0);
    let (y0, y1) = (TOP, height - BOTTOM);
    svg.text(16.0, 20.0, &c.title, "start", "font-weight=\"bold\"");
    let shade = |svg: &mut Svg, band: f64, top: f64, h: f64| {
        svg.rect(fx(1.0 - band), top, fx(1.0 + band) - fx(1.0 - band), h, "#999", 0.18);
    };
    if c.points.iter().all(|p| p.band.is_none()) {
        shade(&mut svg, c.noise_band, y0, y1 - y0);
    } else {
        for (i, p) in c.points.iter().enumerate() {
            shade(&mut svg, p.band.unwrap_or(c.noise_band), y0 + 10.0 + i as f64 * row_h, row_h);
        }
    }
    for t in ratio_ticks(a.exp(), b.exp()) {
        let x = fx(t);
        svg.line((x, y0), (x, y1), "#ececec", 1.0, None);
        svg.text(x, y1 + 18.0, &tick_label(t), "middle", "");
    }
    svg.line((fx(1.0), y0), (fx(1.0), y1), "#333", 1.2, Some("4 3"));
    svg.line((x0, y1), (x1, y1), "#888", 1.0, None);
    svg.text(
        (x0 + x1) / 2.0,
        height - 10.0,
        if c.points.iter().any(|p| p.band.is_some()) {
            "ratio to baseline, log scale (dot) with confidence interval (whisker); shaded: each row's noise band"
        } else {
            "ratio to baseline, log scale (dot) with confidence interval (whisker); shaded: the noise band"
        },
        "middle",
        "",
    );
    for (i, p) in c.points.iter().enumerate() {
        let y = y0 + 10.0 + (i as f64 + 0.5) * row_h;
        let col = match p.tone {
            "better" => "#1a7f37",
            "worse" => "#c62828",
            _ => "#555555",
        };
        let tip = match p.ci {
            Some((l, h)) => format!("{}: {:.3} ({:.3}–{:.3})", p.label, p.ratio, l, h),
            None => format!("{}: {:.3}", p.label, p.ratio),
        };
        svg.begin_group(&tip);
        svg.text(label_w - 10.0, y + 4.0, &truncate(&p.label, 60), "end", "");
        if let Some((l, h)) = p.ci {
            svg.line((fx(l), y), (fx(h), y), col, 2.0, None);
            svg.line((fx(l), y - 6.0), (fx(l), y + 6.0), col, 2.0, None);
            svg.line((fx(h), y - 6.0), (fx(h), y + 6.0), col, 2.0, None);
        }
        svg.circle(fx(p.ratio), y, 5.0, col);
        svg.text(x1 + 10.0, y + 4.0, &format!("{:.2}", p.ratio), "start", &format!("fill=\"{col}\""));
        svg.end_group();
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

/// Draws a grouped bar chart, the legend under it with every series' full name; each bar has a tooltip.
pub fn bar_chart(c: &BarChart) -> String {
    let plot_h = 300.0;
    let entries: Vec<(String, usize)> = c.series.iter().map(|s| (s.0.clone(), s.1)).collect();
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let height = plot_h + legend_height(&names, WIDTH - LEFT - RIGHT);
    let mut svg = Svg::new(WIDTH, height, &c.title);
    let ymax = c.series.iter().flat_map(|s| s.2.iter().flatten()).fold(0.0f64, |a, b| a.max(*b));
    let yt = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
    let f = Frame {
        x0: LEFT,
        x1: WIDTH - RIGHT,
        y0: TOP,
        y1: plot_h - BOTTOM,
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
        for (si, (name, col, values)) in c.series.iter().enumerate() {
            if let Some(Some(v)) = values.get(ci) {
                let y = f.y(*v);
                svg.begin_group(&format!("{name}: {cat} {} {}", tick_label(*v), c.y_label));
                svg.rect(
                    start + si as f64 * bar_w,
                    y,
                    (bar_w - 2.0).max(1.0),
                    f.y1 - y,
                    color(*col),
                    bar_opacity(*col),
                );
                svg.end_group();
            }
        }
        svg.text(gx + group_w / 2.0, f.y1 + 18.0, cat, "middle", "");
    }
    legend(&mut svg, LEFT, plot_h - 20.0, WIDTH - LEFT - RIGHT, &entries, Key::Bar);
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::super::Marker;
    use super::*;

    fn many(n: usize) -> Vec<Series> {
        (0..n)
            .map(|i| Series {
                name: format!("mariadb-11.8/trx{i}-binlog-sync1-with-a-long-name"),
                color: i,
                points: vec![(0.0, 10.0 + i as f64), (1.0, 11.0 + i as f64)],
                legend: true,
            })
            .collect()
    }

    #[test]
    fn past_eight_series_colours_and_markers_stay_distinct_and_labels_whole() {
        let pairs: Vec<(&str, Marker, Option<&str>)> = (0..40).map(|i| (color(i), marker(i), dash(i))).collect();
        for (i, a) in pairs.iter().enumerate() {
            assert!(!pairs[..i].contains(a), "series {i} looks like an earlier one");
        }
        let chart = line_chart(&LineChart {
            title: "tps vs threads".into(),
            x_label: "client threads".into(),
            y_label: "tps".into(),
            series: many(12),
            x_categories: Some(vec![(0.0, "1".into()), (1.0, "4".into())]),
            dots: true,
        });
        for i in 0..12 {
            let name = format!("mariadb-11.8/trx{i}-binlog-sync1-with-a-long-name");
            assert!(chart.contains(&format!(">{name}</text>")), "legend has the full label {name}");
            assert!(chart.contains(&format!("<title>{name}</title>")), "tooltip for {name}");
        }
        assert!(!chart.contains('…'), "nothing is cut");
    }

    #[test]
    fn ratio_axes_are_logarithmic_and_never_negative() {
        let t = ratio_ticks(0.45, 2.3);
        assert!(t.contains(&1.0) && t.contains(&0.5) && t.contains(&2.0), "{t:?}");
        assert!(t.iter().all(|v| *v > 0.0));
        let narrow = ratio_ticks(0.97, 1.04);
        assert!(narrow.contains(&0.98) && narrow.contains(&1.02), "{narrow:?}");
        // A whisker reaching below 0 is cut at the edge, not drawn on a negative axis.
        let chart = ratio_chart(&RatioChart {
            title: "r".into(),
            points: vec![
                RatioPoint { label: "a".into(), ratio: 0.3, ci: Some((-2.0, 1.1)), tone: "none", band: None },
                RatioPoint { label: "b".into(), ratio: 8.0, ci: Some((6.0, 10.0)), tone: "better", band: None },
            ],
            noise_band: 0.02,
        });
        assert!(!chart.contains(">-"), "no negative tick: {chart}");
        assert!(chart.contains("log scale"));
    }

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
            points: vec![RatioPoint {
                label: "x".into(),
                ratio: 0.8,
                ci: Some((0.75, 0.85)),
                tone: "worse",
                band: None,
            }],
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
        assert!(bars.contains("<title>a: p95 2 ms</title>"), "{bars}");
    }
}
