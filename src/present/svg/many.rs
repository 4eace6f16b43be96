//! Charts for many sides, where one plot with a line or a bar per side stops being readable (eleven
//! overlapping lines, eleven bars per group on a scale set by the p99.9 bars): small multiples of a
//! line chart, one panel per side on shared scales, and ranked rows of dots on a log scale.

use super::charts::LineChart;
use super::{Svg, color, marker, nice_ticks, tick_label, truncate};

const WIDTH: f64 = 1000.0;
/// Average width of a character of the 13-px sans-serif text, for laying out labels.
const CHAR_W: f64 = 7.2;

/// Panels per row of [`small_multiples`].
const COLS: usize = 4;
/// Height of one panel.
const PANEL_H: f64 = 150.0;

/// The sides of a line chart as small multiples: one panel per legend entry (all series of that colour,
/// e.g. a side's runs), `COLS` to a row, every panel on the same x and y scales so that they compare
/// by eye; each panel titled with its side's label (whole in its tooltip).
pub fn small_multiples(c: &LineChart) -> String {
    let groups: Vec<(&str, usize)> = c.series.iter().filter(|s| s.legend).map(|s| (s.name.as_str(), s.color)).collect();
    let rows = groups.len().div_ceil(COLS).max(1);
    let top = 34.0;
    let height = top + rows as f64 * PANEL_H + 28.0;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    svg.text(16.0, 20.0, &c.title, "start", "font-weight=\"bold\"");
    let (mut xmin, mut xmax, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in c.series.iter().flat_map(|s| s.points.iter()) {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymax = ymax.max(y);
    }
    if !xmin.is_finite() || xmax <= xmin {
        (xmin, xmax) = (0.0, xmin.max(0.0) + 1.0);
    }
    let yt = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 3);
    let ytop = *yt.last().unwrap_or(&1.0);
    let xt: Vec<f64> = nice_ticks(xmin, xmax, 4).into_iter().filter(|t| *t >= xmin && *t <= xmax).collect();
    let pw = (WIDTH - 20.0) / COLS as f64;
    for (i, (name, col)) in groups.iter().enumerate() {
        let (ox, oy) = (10.0 + (i % COLS) as f64 * pw, top + (i / COLS) as f64 * PANEL_H);
        let (x0, x1, y0, y1) = (ox + 48.0, ox + pw - 12.0, oy + 24.0, oy + PANEL_H - 28.0);
        let fx = |v: f64| x0 + (v - xmin) / (xmax - xmin) * (x1 - x0);
        let fy = |v: f64| y1 - v / ytop * (y1 - y0);
        svg.begin_group(name);
        let room = ((x1 - ox) / CHAR_W) as usize;
        svg.text(ox + 8.0, oy + 14.0, &truncate(name, room), "start", &format!("fill=\"{}\"", color(*col)));
        svg.end_group();
        for &t in &yt {
            svg.line((x0, fy(t)), (x1, fy(t)), "#e3e3e3", 1.0, None);
            svg.text(x0 - 5.0, fy(t) + 4.0, &tick_label(t), "end", "");
        }
        for &t in &xt {
            svg.text(fx(t), y1 + 16.0, &tick_label(t), "middle", "");
        }
        svg.line((x0, y1), (x1, y1), "#888", 1.0, None);
        svg.line((x0, y0), (x0, y1), "#888", 1.0, None);
        for s in c.series.iter().filter(|s| s.color == *col) {
            let p: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (fx(x), fy(y))).collect();
            svg.polyline_with(&p, color(*col), 1.5, 0.85, None, Some(&s.name));
        }
    }
    let axis = format!("{}; y: {} (the same scales in every panel)", c.x_label, c.y_label);
    svg.text(WIDTH / 2.0, height - 8.0, &axis, "middle", "");
    svg.finish()
}

/// Rows of dots on a shared log scale: one row per side, one dot per category (percentile), ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct DotRows {
    /// Heading.
    pub title: String,
    /// The unit of the values (`ms`).
    pub unit: String,
    /// Category names, in the order of each row's values (`p50`, `p90`, …).
    pub categories: Vec<String>,
    /// (row label, one value per category).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
}

/// Round values for the ticks of a log axis over `[lo, hi]`: 1, 2 and 5 times the powers of ten, or
/// the powers of ten alone when the range spans more than three decades.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi < lo * 10.0 {
        // Within a decade 1-2-5 gives one or two ticks: round linear steps instead.
        return nice_ticks(lo, hi, 6).into_iter().filter(|t| *t >= lo && *t <= hi && *t > 0.0).collect();
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let steps: &[f64] = if b - a > 3 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    (a..=b).flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e))).filter(|t| *t >= lo && *t <= hi).collect()
}

/// Draws [`DotRows`]: rows ranked by their last category (lowest first: the best latency on top), a
/// grey bar from each row's lowest to highest value, a coloured marker per category, the values on a
/// log scale (p50 and p99.9 decades apart both stay readable), tooltips on every dot, a legend.
pub fn dot_rows(c: &DotRows) -> String {
    let row_h = 22.0;
    let mut rows: Vec<&(String, Vec<Option<f64>>)> = c.rows.iter().collect();
    let last = |r: &(String, Vec<Option<f64>>)| r.1.iter().rev().flatten().next().copied().unwrap_or(f64::INFINITY);
    rows.sort_by(|a, b| last(a).total_cmp(&last(b)));
    let values: Vec<f64> = c.rows.iter().flat_map(|r| r.1.iter().flatten().copied()).filter(|v| *v > 0.0).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo { (lo, hi) } else { (0.1, 10.0) };
    let (a, b) = (lo.ln() - 0.08, hi.ln() + 0.08);
    let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) as f64;
    let label_w = (longest.min(48.0) * CHAR_W + 24.0).clamp(140.0, 380.0);
    let (x0, x1) = (label_w, WIDTH - 30.0);
    let fx = |v: f64| x0 + (v.ln() - a) / (b - a) * (x1 - x0);
    let (y0, height) = (34.0, 34.0 + rows.len().max(1) as f64 * row_h + 64.0);
    let y1 = y0 + rows.len().max(1) as f64 * row_h;
    let mut svg = Svg::new(WIDTH, height, &c.title);
    svg.text(16.0, 20.0, &c.title, "start", "font-weight=\"bold\"");
    for t in log_ticks(lo.min(hi), hi) {
        svg.line((fx(t), y0), (fx(t), y1), "#ececec", 1.0, None);
        svg.text(fx(t), y1 + 16.0, &tick_label(t), "middle", "");
    }
    svg.line((x0, y1), (x1, y1), "#888", 1.0, None);
    for (i, (label, vals)) in rows.iter().enumerate() {
        let y = y0 + (i as f64 + 0.5) * row_h;
        let present: Vec<f64> = vals.iter().flatten().copied().filter(|v| *v > 0.0).collect();
        svg.begin_group(label);
        svg.text(x0 - 10.0, y + 4.0, &truncate(label, 48), "end", "");
        svg.end_group();
        if !present.is_empty() {
            let min = present.iter().copied().fold(f64::INFINITY, f64::min);
            let max = present.iter().copied().fold(0.0, f64::max);
            svg.line((fx(min), y), (fx(max), y), "#bbb", 2.0, None);
        }
        for (k, v) in vals.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else { continue };
            let tip = format!("{label}: {} {} {}", c.categories[k], tick_label(v), c.unit);
            svg.marker(fx(v), y, 4.5, marker(k), color(k), Some(&tip));
        }
    }
    let mut x = x0;
    for (k, name) in c.categories.iter().enumerate() {
        svg.marker(x + 6.0, y1 + 36.0, 4.5, marker(k), color(k), None);
        svg.text(x + 16.0, y1 + 40.0, name, "start", "");
        x += (name.chars().count() as f64 * CHAR_W + 40.0).max(70.0);
    }
    let note =
        format!("{}, log scale; rows ranked by {} (lowest first)", c.unit, c.categories.last().map_or("", |s| s));
    svg.text((x0 + x1) / 2.0, height - 8.0, &note, "middle", "");
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::svg::Series;

    #[test]
    fn small_multiples_have_a_panel_per_side_on_one_scale() {
        let series: Vec<Series> = (0..12)
            .flat_map(|side| {
                (0..2).map(move |run| Series {
                    name: format!("build/config-{side}"),
                    color: side,
                    points: (0..10).map(|t| (t as f64, 100.0 * (side + 1) as f64 + run as f64)).collect(),
                    legend: run == 0,
                })
            })
            .collect();
        let svg = small_multiples(&LineChart {
            title: "tps per second".into(),
            x_label: "seconds".into(),
            y_label: "tps".into(),
            series,
            x_categories: None,
            dots: false,
        });
        assert_eq!(svg.matches("<polyline").count(), 24, "two runs in each of 12 panels");
        for side in 0..12 {
            assert!(svg.contains(&format!("<title>build/config-{side}</title>")), "panel {side}");
        }
        assert!(svg.contains("the same scales in every panel"));
    }

    #[test]
    fn dot_rows_rank_and_use_a_log_scale() {
        let rows: Vec<(String, Vec<Option<f64>>)> =
            (0..12).map(|i| (format!("t{i}"), vec![Some(1.0 + i as f64), Some(400.0 - i as f64)])).collect();
        let svg = dot_rows(&DotRows {
            title: "latency".into(),
            unit: "ms".into(),
            categories: vec!["p50".into(), "p99.9".into()],
            rows,
        });
        // Ranked by p99.9, lowest first: t11 (389 ms) on top, t0 (400 ms) last.
        let first = svg.find("<title>t11</title>").unwrap();
        let last = svg.find("<title>t0</title>").unwrap();
        assert!(first < last);
        assert!(svg.contains("log scale"));
        assert_eq!(log_ticks(1.0, 400.0), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]);
        assert_eq!(log_ticks(0.5, 20000.0), [1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(log_ticks(0.7, 2.9), [1.0, 1.5, 2.0, 2.5]);
    }
}
