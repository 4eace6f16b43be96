//! Text for people: the progress lines of a run, its final report, and the comparison tables as
//! terminal text (optionally coloured) or markdown. Every table goes through one [`Grid`], so every
//! form carries the same numbers; the HTML section and page are drawn from the same grids
//! ([`super::section`], [`super::page`]).

use std::fmt::Write as _;

use super::compare::{Colour, Comparison, ratio};
use super::options::{Step, StepKind};
use super::result::{IbenchResult, IntervalLine, StepResult, StepStatus};
use super::stats::{BUCKET_LABELS, Kind};

/// A table whose cells may carry a colour.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    /// Column headings.
    pub header: Vec<String>,
    /// Rows of (text, colour).
    pub rows: Vec<Vec<(String, Colour)>>,
}

impl Grid {
    fn new(header: &[&str]) -> Self {
        Grid { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    fn plain(&mut self, cells: Vec<String>) {
        self.rows.push(cells.into_iter().map(|c| (c, Colour::None)).collect());
    }

    /// Aligned text: the first column left, the others right; colours as ANSI backgrounds when `color`.
    pub fn text(&self, color: bool) -> String {
        let cols = self.header.len();
        let width = |i: usize| {
            self.rows
                .iter()
                .map(move |r| r.get(i).map_or(0, |c| c.0.chars().count()))
                .chain([self.header[i].chars().count()])
        };
        let widths: Vec<usize> = (0..cols).map(|i| width(i).max().unwrap_or(0)).collect();
        let mut s = String::new();
        let pad = |text: &str, i: usize| {
            let n = widths[i].saturating_sub(text.chars().count());
            if i == 0 { format!("{text}{}", " ".repeat(n)) } else { format!("{}{text}", " ".repeat(n)) }
        };
        let header: Vec<String> = self.header.iter().enumerate().map(|(i, h)| pad(h, i)).collect();
        let _ = writeln!(s, "  {}", header.join("  ").trim_end());
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, (t, c))| {
                    let p = pad(t, i);
                    match (color, c.hex()) {
                        (true, Some(hex)) => paint(&p, hex),
                        _ => p,
                    }
                })
                .collect();
            let _ = writeln!(s, "  {}", cells.join("  ").trim_end());
        }
        s
    }

    /// A markdown table; colours are written as words after the value (`0.91 (yellow)`) so nothing is lost.
    pub fn markdown(&self) -> String {
        use crate::markup::escape;
        let header: Vec<String> = self.header.iter().map(|h| escape(h)).collect();
        let mut s = format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(self.header.len()));
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|(t, c)| (escape(t), c))
                .map(|(t, c)| match c {
                    Colour::None => t,
                    Colour::Gray => format!("~~{t}~~ (SLA)"),
                    other => format!("{t} ({})", format!("{other:?}").to_lowercase()),
                })
                .collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        s
    }
}

fn paint(text: &str, hex: &str) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    let bg = anstyle::RgbColor((v >> 16) as u8, (v >> 8) as u8, v as u8);
    let style = anstyle::Style::new().bg_color(Some(bg.into())).fg_color(Some(anstyle::AnsiColor::Black.into()));
    format!("{style}{text}{style:#}")
}

/// A rate: no decimals from 100 up, one from 10, two below.
pub fn rate(v: f64) -> String {
    if !v.is_finite() {
        "inf".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(rate).unwrap_or_else(|| "-".into())
}

/// The heading printed before a step's interval lines.
pub fn interval_header(step: Step) -> String {
    format!(
        "{step}:\n  {:>6} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9} {:>7} {:>7} {:>7}",
        "i_sec",
        "t_sec",
        "i_ips",
        "t_ips",
        "i_dps",
        "t_dps",
        "i_qps",
        "t_qps",
        "max_i",
        "max_d",
        "max_q",
        "t_ins",
        "t_del",
        "t_query",
        "retry_i",
        "retry_d",
        "retry_q"
    )
}

/// One interval line, the reference's 17 columns (max response times in µs).
pub fn interval_text(l: &IntervalLine) -> String {
    format!(
        "  {:>6.1} {:>7.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9} {:>7} {:>7} {:>7}",
        l.i_sec,
        l.t_sec,
        l.i_ips,
        l.t_ips,
        l.i_dps,
        l.t_dps,
        l.i_qps,
        l.t_qps,
        l.max_i_us,
        l.max_d_us,
        l.max_q_us,
        l.t_ins,
        l.t_del,
        l.t_query,
        l.retry_i,
        l.retry_d,
        l.retry_q
    )
}

fn status_word(s: &StepResult) -> &'static str {
    match s.status {
        StepStatus::Done if s.fell_short() => "partly done",
        StepStatus::Done => "done",
        StepStatus::Failed => "FAILED",
        StepStatus::Interrupted => "interrupted",
    }
}

/// The SLA line of a query step: `qr100  SLA PASSED: 100.0 of 100 inserts/s (100.0 %)`.
pub fn sla_line(s: &StepResult) -> Option<String> {
    let sla = s.sla?;
    let verdict = if sla.passed { "SLA passed" } else { "SLA FAILED" };
    Some(format!(
        "{:<8} {verdict}: {} of {} inserts/s ({:.1} % of the target; at least 95 % needed)",
        s.step.name(),
        rate(sla.achieved_ips),
        rate(sla.target_ips),
        100.0 * sla.ratio
    ))
}

/// The final report of one run.
pub fn run_text(r: &IbenchResult, color: bool) -> String {
    let o = &r.options;
    let version = match r.server_version.as_deref() {
        Some(v) if v != r.label => format!(" ({v})"),
        Some(_) => String::new(),
        None => " (unknown version)".into(),
    };
    let mut s = format!(
        "Insert Benchmark: {}{version}, {} client(s), {}\n\n",
        r.label,
        o.clients,
        if o.shared_table { "one shared table" } else { "one table per client" }
    );
    let mut g = Grid::new(&["step", "status", "secs", "ips", "dps", "qps", "op/s", "retries", "rows after"]);
    for st in &r.steps {
        if st.step == Step::Cleanup {
            g.plain(vec![st.step.name(), status_word(st).into(), format!("{:.1}", st.seconds)]);
            continue;
        }
        let retries = st.retries.insert + st.retries.delete + st.retries.query;
        let colour = if st.sla_failed() || st.status == StepStatus::Failed { Colour::Gray } else { Colour::None };
        g.rows.push(vec![
            (st.step.name(), Colour::None),
            (status_word(st).into(), Colour::None),
            (format!("{:.1}", st.seconds), Colour::None),
            (rate(st.ips), Colour::None),
            (rate(st.dps), Colour::None),
            (rate(st.qps), Colour::None),
            (rate(st.rate), colour),
            (retries.to_string(), Colour::None),
            (st.rows_after.map(|n| n.to_string()).unwrap_or_else(|| "-".into()), Colour::None),
        ]);
    }
    s.push_str(&g.text(color));
    s.push_str("  (op/s: inserted rows/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for query steps)\n");
    let sla: Vec<String> = r.steps.iter().filter_map(sla_line).collect();
    if !sla.is_empty() {
        s.push_str("\nBackground inserts in the query steps:\n");
        for l in sla {
            let _ = writeln!(s, "  {l}");
        }
    }
    let fetched: Vec<String> = r
        .steps
        .iter()
        .filter_map(|st| {
            let f = st.fetched?;
            Some(format!(
                "  {:<8} queries hit live rows: expected {:.2}, fetched {:.2} rows per query ({} queries)",
                st.step.name(),
                f.expected_per_query,
                f.fetched_per_query,
                f.queries
            ))
        })
        .collect();
    if !fetched.is_empty() {
        let _ = writeln!(s, "\nFetched rows:\n{}", fetched.join("\n"));
    }
    s.push_str("\nResponse times (% of statements per bucket, max in seconds):\n");
    let mut header: Vec<&str> = vec!["step", "kind", "count"];
    header.extend(BUCKET_LABELS);
    header.extend(["max", "p50 ms", "p99 ms"]);
    let mut g = Grid::new(&header);
    for st in &r.steps {
        for l in &st.latency {
            let mut row = vec![st.step.name(), l.kind.name().into(), l.count.to_string()];
            row.extend(l.bucket_pct().iter().map(|p| pct_cell(*p)));
            row.push(format!("{:.6}", l.max_us as f64 / 1e6));
            row.push(format!("{:.3}", l.p50_us as f64 / 1000.0));
            row.push(format!("{:.3}", l.p99_us as f64 / 1000.0));
            g.plain(row);
        }
    }
    s.push_str(&g.text(false));
    s.push_str("\nEfficiency (per insert for l.i0, l.i1, l.i2; per indexed row for l.x; per query for query steps):\n");
    s.push_str(
        &efficiency_grid(r.steps.iter().filter(|st| st.step != Step::Cleanup).map(|st| (st.step.name(), st)))
            .text(false),
    );
    s.push_str("  (cpu/o: busy CPU µs of the whole host; srv cpu/o and cs/o: the server process; vs cpu/o: versus)\n");
    let own: Vec<String> = r
        .steps
        .iter()
        .filter(|st| st.inserted_rows > 0 && matches!(st.kind, StepKind::Load | StepKind::Write))
        .filter_map(|st| {
            let e = &st.efficiency;
            Some(format!(
                "  {:<8} versus {:.2} µs, server {} µs per inserted row",
                st.step.name(),
                e.client_cpu_us_per_row?,
                e.server_cpu_us_per_row.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
            ))
        })
        .collect();
    if !own.is_empty() {
        let _ = writeln!(s, "\nCPU per inserted row, versus next to the server:\n{}", own.join("\n"));
    }
    let mut g = Grid::new(&["step", "pct", "insert/s", "delete/s", "query/s"]);
    for st in &r.steps {
        for p in &st.rate_percentiles {
            g.plain(vec![st.step.name(), format!("{:.0}th", p.pct), opt(p.insert), opt(p.delete), opt(p.query)]);
        }
    }
    if !g.rows.is_empty() {
        s.push_str("\nRates per client that the given percent of seconds met or beat (low side, stalls show here):\n");
        s.push_str(&g.text(false));
    }
    let mut notes: Vec<String> = Vec::new();
    for st in &r.steps {
        if let Some(e) = &st.error {
            notes.push(format!("{} {}: {e}", st.step.name(), status_word(st)));
        }
        if let Some(g) = st.getmin {
            notes.push(format!("{} getmin: {} queries, {:.6} secs/query", st.step.name(), g.queries, g.secs_per_query));
        }
        notes.extend(st.notes.iter().map(|n| format!("{}: {n}", st.step.name())));
    }
    notes.extend(r.skipped.iter().map(|k| format!("{}: {}", k.step.name(), k.reason)));
    if !notes.is_empty() {
        let _ = writeln!(s, "\nNotes:\n  {}", notes.join("\n  "));
    }
    s
}

fn pct_cell(p: f64) -> String {
    if p == 0.0 {
        String::new()
    } else if p < 0.0005 {
        "nonzero".into()
    } else {
        format!("{p:.3}")
    }
}

const EFFICIENCY_HEADER: [&str; 11] =
    ["", "op/s", "cpu/o", "cpu%", "cs/o", "srv cpu/o", "srv cs/o", "rKB/o", "wKB/o", "wKB/i", "vs cpu/o"];

fn efficiency_values(st: &StepResult) -> Vec<Option<f64>> {
    eff_values(Some(st.rate), &st.efficiency)
}

fn efficiency_grid<'a>(rows: impl Iterator<Item = (String, &'a StepResult)>) -> Grid {
    let mut header: Vec<&str> = EFFICIENCY_HEADER.to_vec();
    header[0] = "step";
    header.push("rss GB");
    let mut g = Grid::new(&header);
    for (label, st) in rows {
        let mut row = vec![label];
        row.extend(efficiency_values(st).into_iter().map(opt));
        row.push(gb(st.efficiency.server_rss_max_bytes));
        g.plain(row);
    }
    g
}

fn gb(bytes: Option<u64>) -> String {
    bytes.map(|b| format!("{:.3}", b as f64 / (1u64 << 30) as f64)).unwrap_or_else(|| "-".into())
}

/// The grids of a comparison, with their titles, in report order: [`rate_grids`], then every step's
/// [`efficiency_grids`], then every step's [`latency_grid`].
pub fn comparison_grids(c: &Comparison) -> Vec<(String, Grid)> {
    let mut out = rate_grids(c);
    for j in 0..c.steps.len() {
        out.extend(efficiency_grids(c, j));
    }
    out.extend((0..c.steps.len()).filter_map(|j| latency_grid(c, j)));
    out
}

/// What the relative table's colours mean: a call where repetitions give intervals, else the
/// reference's ±5 % rule, which is not one.
fn relative_caption(c: &Comparison, base: &str) -> String {
    let repeated = c.cells.iter().flatten().any(|x| x.relative_ci.is_some());
    if repeated {
        format!(
            "Relative to {base}, with its {:.0} % interval over the repetitions; blue = significantly faster, yellow = \
             significantly slower (the interval excludes 1 and the change exceeds the 2 % noise band), gray = \
             insert SLA missed",
            100.0 * super::compare::REPEATED_CONFIDENCE
        )
    } else {
        format!(
            "Relative to {base}; one run per server, so no interval: yellow < 0.95 and blue > 1.05 are the \
             reference's rule, not a call (repetitions = 3 in an experiment give intervals); gray = insert SLA missed"
        )
    }
}

/// The rate grids: absolute operations/s per step, relative to the base, and (with query steps) the
/// insert rate achieved against its target.
pub fn rate_grids(c: &Comparison) -> Vec<(String, Grid)> {
    let steps: Vec<String> = c.steps.iter().map(|s| s.name()).collect();
    let mut header = vec!["server".to_string()];
    header.extend(steps.iter().cloned());
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let status_text = |cell: &super::compare::RateCell| match cell.status {
        None => "-".to_string(),
        Some(StepStatus::Failed) => "failed".into(),
        Some(StepStatus::Interrupted) => "stopped".into(),
        Some(StepStatus::Done) => String::new(),
    };
    let mut abs = Grid::new(&header_refs);
    let mut rel = Grid::new(&header_refs);
    for (i, side) in c.sides.iter().enumerate() {
        let cells = &c.cells[i];
        let mut a = vec![(side.clone(), Colour::None)];
        let mut r = vec![(side.clone(), Colour::None)];
        for cell in cells {
            match cell.value {
                Some(v) => a.push((rate(v), cell.colour)),
                None => a.push((status_text(cell), Colour::None)),
            }
            match cell.relative {
                Some(v) if v.is_finite() => r.push((
                    match cell.relative_ci {
                        Some((lo, hi)) => format!("{v:.2} ({lo:.2}–{hi:.2})"),
                        None => format!("{v:.2}"),
                    },
                    cell.relative_colour,
                )),
                Some(_) => r.push(("inf".into(), cell.relative_colour)),
                None => r.push((status_text(cell), Colour::None)),
            }
        }
        abs.rows.push(a);
        rel.rows.push(r);
    }
    let query_cols: Vec<usize> = (0..c.steps.len()).filter(|&j| c.targets[j].is_some()).collect();
    let mut iput_header = vec!["server".to_string()];
    iput_header.extend(query_cols.iter().map(|&j| steps[j].clone()));
    let mut iput = Grid::new(&iput_header.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, side) in c.sides.iter().enumerate() {
        let mut row = vec![(side.clone(), Colour::None)];
        row.extend(query_cols.iter().map(|&j| {
            let cell = &c.cells[i][j];
            (cell.achieved_ips.map(rate).unwrap_or_else(|| "-".into()), cell.achieved_colour)
        }));
        iput.rows.push(row);
    }
    let mut target = vec![("target".to_string(), Colour::None)];
    target.extend(query_cols.iter().map(|&j| (opt(c.targets[j]), Colour::None)));
    iput.rows.push(target);
    let base = c.sides.first().cloned().unwrap_or_default();
    let mut out = vec![
        (
            "Throughput (operations/s: inserted rows for l.i0, l.i1, l.i2; indexed rows for l.x; queries for query \
             steps). Per column, with 4 servers or more, red = bottom quartile, green = top quartile; gray = \
             insert SLA missed"
                .to_string(),
            abs,
        ),
        (relative_caption(c, &base), rel),
    ];
    if !query_cols.is_empty() {
        out.push(("Insert rate achieved in the query steps (red: below 95 % of the target)".to_string(), iput));
    }
    out
}

/// Step `j`'s efficiency grid, and relative to the base when there are several sides.
pub fn efficiency_grids(c: &Comparison, j: usize) -> Vec<(String, Grid)> {
    let step = &c.steps[j];
    let base = c.sides.first().cloned().unwrap_or_default();
    let mut out = Vec::new();
    let mut header: Vec<&str> = EFFICIENCY_HEADER.to_vec();
    header[0] = "server";
    header.push("rss GB");
    let mut g = Grid::new(&header);
    let mut rg = Grid::new(&header);
    let base_vals = c.efficiency[0][j].as_ref().map(|e| eff_values(c.cells[0][j].value, e));
    for (i, side) in c.sides.iter().enumerate() {
        let Some(e) = &c.efficiency[i][j] else { continue };
        let vals = eff_values(c.cells[i][j].value, e);
        let mut row = vec![side.clone()];
        row.extend(vals.iter().map(|v| opt(*v)));
        row.push(gb(e.server_rss_max_bytes));
        g.plain(row);
        if let Some(b) = &base_vals {
            let mut row = vec![side.clone()];
            row.extend(vals.iter().zip(b).map(|(v, b)| match (v, b) {
                (Some(v), Some(b)) => {
                    let r = ratio(*v, *b);
                    if r.is_finite() { format!("{r:.2}") } else { "inf".into() }
                }
                _ => "-".into(),
            }));
            let rss = e.server_rss_max_bytes.zip(c.efficiency[0][j].as_ref().and_then(|b| b.server_rss_max_bytes));
            row.push(rss.map(|(a, b)| format!("{:.2}", ratio(a as f64, b as f64))).unwrap_or_else(|| "-".into()));
            rg.plain(row);
        }
    }
    let per = c.efficiency.iter().find_map(|side| side[j].as_ref()).map(|e| e.per.clone()).unwrap_or_default();
    out.push((format!("{step}: efficiency per {per}"), g));
    if c.sides.len() > 1 && !rg.rows.is_empty() {
        out.push((format!("{step}: efficiency relative to {base}"), rg));
    }
    out
}

/// Step `j`'s response-time buckets, when any side measured them.
pub fn latency_grid(c: &Comparison, j: usize) -> Option<(String, Grid)> {
    let step = &c.steps[j];
    let mut header: Vec<&str> = vec!["server", "kind"];
    header.extend(BUCKET_LABELS);
    header.push("max s");
    let mut g = Grid::new(&header);
    for (i, side) in c.sides.iter().enumerate() {
        let Some(l) = &c.latency[i][j] else { continue };
        let mut row = vec![side.clone(), l.kind.name().to_string()];
        row.extend(l.bucket_pct().iter().map(|p| pct_cell(*p)));
        row.push(format!("{:.6}", l.max_us as f64 / 1e6));
        g.plain(row);
    }
    if !g.rows.is_empty() {
        let kind = if step.is_query() { Kind::Query } else { Kind::Insert };
        return Some((format!("{step}: {} response time, % of statements per bucket", kind.name()), g));
    }
    None
}

fn eff_values(rate: Option<f64>, e: &super::result::StepEfficiency) -> Vec<Option<f64>> {
    vec![
        rate,
        e.host_cpu_us_per_op,
        e.host_cpu_pct,
        e.host_cs_per_op,
        e.server_cpu_us_per_op,
        e.server_cs_per_op,
        e.read_kb_per_op,
        e.write_kb_per_op,
        e.write_kb_per_insert,
        e.client_cpu_us_per_op,
    ]
}

/// The comparison as terminal text.
pub fn comparison_text(c: &Comparison, color: bool) -> String {
    comparison_grids(c).iter().map(|(title, g)| format!("{title}\n{}", g.text(color))).collect::<Vec<_>>().join("\n")
}

/// The comparison as markdown.
pub fn comparison_markdown(c: &Comparison) -> String {
    comparison_grids(c)
        .iter()
        .map(|(title, g)| format!("**{title}**\n\n{}", g.markdown()))
        .collect::<Vec<_>>()
        .join("\n")
}
