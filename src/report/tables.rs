//! The tables of a report, laid out once from the model and written by the terminal, markdown and HTML
//! exports, so that they show the same rows with the same rounding.
//!
//! Colour means a call: a ratio is highlighted (colour, bold in markdown) only where its verdict calls
//! it better or worse — the interval excludes 1 and the change exceeds the noise band — and marked ▲
//! (significantly better) or ▼ (significantly worse), so that text without colour says the same. A
//! large ratio that the verdict does not call stays plain.

use super::fmt;
use super::model::{CiKind, CompareReport, ExperimentInfo, MetricInfo, ValuesRow, Verdict};
use crate::present::table::{Cell, Table, Tone};

/// The report's title: the metric and the sides, candidates first as the rows read (`tps: 11.8 vs
/// 10.11`); with more than three sides, their number and the baseline (the sides are listed in the
/// report).
pub fn short_title(r: &CompareReport) -> String {
    if r.sides.len() <= 3 {
        let candidates: Vec<&str> = r.sides.iter().skip(1).map(|s| s.label.as_str()).collect();
        if candidates.is_empty() {
            return format!("{}: {}", r.metric.name, r.baseline);
        }
        format!("{}: {} vs {}", r.metric.name, candidates.join(", "), r.baseline)
    } else {
        format!("{}: {} {}s against {}", r.metric.name, r.sides.len(), r.vs.name(), r.baseline)
    }
}

/// `▲` for a significant improvement, `▼` for a significant regression, nothing otherwise.
pub fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => " ▲",
        Verdict::Slower => " ▼",
        _ => "",
    }
}

/// The highlight of a verdict: only a call is highlighted.
pub fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::Faster => Tone::Better,
        Verdict::Slower => Tone::Worse,
        _ => Tone::Plain,
    }
}

/// The `N % CI` heading for the report's confidence level.
pub fn ci_heading(r: &CompareReport) -> String {
    format!("{} % CI", crate::stats::level_percent(r.confidence))
}

/// The case columns: workload, the group (config or build) when there is one, threads.
fn case_header(r: &CompareReport, with_threads: bool) -> Vec<(String, bool)> {
    let mut h = vec![("workload".to_string(), false)];
    if let Some(g) = r.vs.group_name() {
        h.push((g.to_string(), false));
    }
    if with_threads {
        h.push(("threads".to_string(), true));
    }
    h
}

fn case_cells(r: &CompareReport, case: usize, with_threads: bool) -> Vec<Cell> {
    let c = &r.cases[case];
    let mut v = vec![Cell::plain(&c.workload)];
    if r.vs.group_name().is_some() {
        v.push(Cell::plain(c.group.clone().unwrap_or_default()));
    }
    if with_threads {
        v.push(Cell::plain(c.threads.to_string()));
    }
    v
}

/// The main table: one row per case and candidate with both means, the ratio, its interval and the
/// verdict.
pub fn ratio_table(r: &CompareReport) -> Table {
    let mut h = case_header(r, true);
    let m = &r.metric.label;
    h.extend([
        ("candidate".to_string(), false),
        (format!("baseline {m} (n)"), true),
        (format!("candidate {m} (n)"), true),
        ("ratio".to_string(), true),
        (ci_heading(r), true),
        ("change".to_string(), true),
        ("detectable".to_string(), true),
    ]);
    // Bands per case: when they differ, each row says its own, and the change its `n` is for.
    let one = r.one_band();
    let target = |case: usize| crate::stats::power::target_effect(r.band_of(case).band);
    let targets: Vec<f64> = r.ratios.iter().map(|x| target(x.case)).collect();
    let first = targets.first().copied().unwrap_or_else(|| crate::stats::power::target_effect(r.noise_band));
    let one_target = targets.iter().all(|t| *t == first);
    if !one {
        h.push(("noise band".to_string(), true));
    }
    let common = fmt::plus_minus(first);
    h.push((if one_target { format!("n for {common}") } else { "n (for)".to_string() }, true));
    h.extend([("verdict".to_string(), false), ("note".to_string(), false)]);
    let mut t = Table::new("ratios", format!("{} relative to {}", r.metric.name, r.baseline), h);
    let band = if one {
        format!("the {} noise band", fmt::percent(r.noise_band))
    } else {
        "the noise band of its row (calibrated for that workload and thread count, else the default)".to_string()
    };
    let n_for = if one_target {
        format!("n for {common}: repetitions per side that would call that change")
    } else {
        "n (for): repetitions per side that would call the change in brackets (5 %, or 1.5 × the row's band)".into()
    };
    t.caption = Some(format!(
        "ratio = candidate / baseline ({}); a change is called only when the interval excludes 1 and the change \
         exceeds {band}. detectable: the smallest change this comparison calls with {} power (from the observed \
         variation between repetitions); {n_for}.",
        if r.metric.higher_is_better { "higher is better" } else { "lower is better" },
        fmt::percent(crate::stats::DEFAULT_POWER).replace(".0 %", " %"),
    ));
    for x in &r.ratios {
        let mut row = case_cells(r, x.case, true);
        let with_n = |mean: Option<f64>, n: usize| match mean {
            Some(v) => format!("{} ({n})", fmt::num(v)),
            None => "—".to_string(),
        };
        row.push(Cell::plain(&r.sides[x.side].label));
        row.push(Cell::plain(with_n(x.baseline_mean, x.baseline_n)));
        row.push(Cell::plain(with_n(x.candidate_mean, x.candidate_n)));
        row.push(match x.ratio {
            // The verdict column names the call; the colour repeats it.
            Some(v) => Cell::toned(fmt::ratio(v), verdict_tone(x.verdict)),
            None => Cell::plain("—"),
        });
        row.push(Cell::plain(match (x.ci_lo, x.ci_hi) {
            (Some(lo), Some(hi)) if x.ci_kind == Some(CiKind::WithinRunOnly) => format!("{} w", fmt::ci(lo, hi)),
            (Some(lo), Some(hi)) => fmt::ci(lo, hi),
            _ => "—".to_string(),
        }));
        row.push(Cell::plain(x.change.map(fmt::change).unwrap_or_else(|| "—".into())));
        row.push(Cell::plain(match &x.detectable {
            Some(d) if x.ci_kind == Some(CiKind::WithinRunOnly) => format!("{} w", fmt::plus_minus(d.either_way())),
            Some(d) => fmt::plus_minus(d.either_way()),
            None => "—".to_string(),
        }));
        if !one {
            let b = r.band_of(x.case);
            row.push(Cell::plain(format!("{} {}", fmt::percent(b.band), b.origin.word())));
        }
        let plan = x.detectable.as_ref().and_then(|d| d.plan).map(fmt::plan).unwrap_or_else(|| "—".into());
        row.push(Cell::plain(if one_target || plan == "—" {
            plan
        } else {
            format!("{plan} ({})", fmt::plus_minus(target(x.case)))
        }));
        row.push(Cell::toned(fmt::verdict(r, x.verdict), verdict_tone(x.verdict)));
        let note = x.note.as_deref().map(|n| t.footnote(n)).unwrap_or_default();
        row.push(Cell::plain(note));
        t.rows.push(row);
    }
    t
}

/// Distinct (workload, group) pairs in case order.
fn row_keys(r: &CompareReport) -> Vec<(String, Option<String>)> {
    let mut keys = Vec::new();
    for c in &r.cases {
        let k = (c.workload.clone(), c.group.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

fn find_case(r: &CompareReport, key: &(String, Option<String>), threads: u32) -> Option<usize> {
    r.cases.iter().position(|c| c.workload == key.0 && c.group == key.1 && c.threads == threads)
}

fn key_cells(r: &CompareReport, key: &(String, Option<String>)) -> Vec<Cell> {
    let mut v = vec![Cell::plain(&key.0)];
    if r.vs.group_name().is_some() {
        v.push(Cell::plain(key.1.clone().unwrap_or_default()));
    }
    v
}

fn relative_cell(r: &CompareReport, case: Option<usize>, side: usize) -> Cell {
    if side == 0 {
        return match case.and_then(|c| r.cell(c, 0)).and_then(|c| c.mean) {
            Some(_) => Cell::toned("1.00", Tone::Muted),
            None => Cell::plain("—"),
        };
    }
    match case.and_then(|c| r.ratio(c, side)) {
        Some(x) if x.ratio.is_some() => {
            let v = x.ratio.unwrap_or(f64::NAN);
            Cell::toned(format!("{}{}", fmt::ratio(v), verdict_mark(x.verdict)), verdict_tone(x.verdict))
        }
        _ => Cell::plain("—"),
    }
}

/// The seed layouts: with several thread counts, sides as rows and thread counts as columns; with one,
/// cases as rows and sides as columns (a version series). Returns the absolute and the relative table.
pub fn pivot_tables(r: &CompareReport) -> (Table, Table) {
    let threads = r.thread_counts();
    let keys = row_keys(r);
    let m = &r.metric.name;
    let caption_rel = format!(
        "{m} / {m} of {}; ▲ significantly better, ▼ significantly worse (highlighted); a ratio without a mark \
         is no significant change, however large.",
        r.baseline
    );
    if threads.len() > 1 {
        let mut h = case_header(r, false);
        h.push((r.vs.name().to_string(), false));
        h.extend(threads.iter().map(|t| (format!("{t} thr"), true)));
        let mut abs = Table::new("by-threads", format!("{} by thread count", r.metric.label), h.clone());
        let mut rel = Table::new("by-threads-relative", format!("{m} relative to {} by thread count", r.baseline), h);
        rel.caption = Some(caption_rel);
        for key in &keys {
            for (side, s) in r.sides.iter().enumerate() {
                let cases: Vec<Option<usize>> = threads.iter().map(|&t| find_case(r, key, t)).collect();
                if !cases.iter().flatten().any(|&c| r.cell(c, side).is_some()) {
                    continue;
                }
                let mut a = key_cells(r, key);
                a.push(Cell::plain(&s.label));
                let mut b = a.clone();
                for &c in &cases {
                    a.push(Cell::plain(fmt::opt_num(c.and_then(|c| r.cell(c, side)).and_then(|x| x.mean))));
                    b.push(relative_cell(r, c, side));
                }
                abs.rows.push(a);
                rel.rows.push(b);
            }
        }
        return (abs, rel);
    }
    let t = threads.first().copied().unwrap_or(0);
    let mut h = case_header(r, false);
    h.extend(r.sides.iter().map(|s| (s.label.clone(), true)));
    let mut abs = Table::new("by-side", format!("{} at {t} threads", r.metric.label), h);
    let mut h = case_header(r, false);
    h.extend(r.sides.iter().skip(1).map(|s| (s.label.clone(), true)));
    let mut rel = Table::new("by-side-relative", format!("{m} relative to {} at {t} threads", r.baseline), h);
    rel.caption = Some(caption_rel);
    for key in &keys {
        let case = find_case(r, key, t);
        let mut a = key_cells(r, key);
        let mut b = a.clone();
        for side in 0..r.sides.len() {
            a.push(Cell::plain(fmt::opt_num(case.and_then(|c| r.cell(c, side)).and_then(|x| x.mean))));
            if side > 0 {
                b.push(relative_cell(r, case, side));
            }
        }
        abs.rows.push(a);
        rel.rows.push(b);
    }
    (abs, rel)
}

/// Per run: range, mean and coefficient of variation of the 1-s rates, and the stall intervals.
pub fn stability_table(r: &CompareReport) -> Table {
    let rate = &r.rate_metric.name;
    let mut h = vec![("run".to_string(), true), (r.vs.name().to_string(), false)];
    h.extend(case_header(r, true));
    h.extend([
        ("rep".to_string(), true),
        ("server".to_string(), false),
        ("intervals".to_string(), true),
        (format!("min {rate}"), true),
        (format!("max {rate}"), true),
        (format!("mean {rate}"), true),
        ("CV".to_string(), true),
        ("stalls".to_string(), false),
    ]);
    let mut t = Table::new("stability", format!("Stability of the 1-s {rate}"), h);
    t.caption = Some(
        "A stall is a 1-s interval below min(median − 3.5 robust σ, 0.9 × median); times are seconds since the \
         run started."
            .into(),
    );
    for run in &r.runs {
        let mut row = vec![Cell::plain(run.id.to_string()), Cell::plain(&r.sides[run.side].label)];
        row.extend(case_cells(r, run.case, true));
        row.push(Cell::plain(run.repetition.to_string()));
        row.push(Cell::plain(run.server_version.clone().unwrap_or_else(|| "—".into())));
        match &run.stability {
            Some(s) => {
                row.push(Cell::plain(s.intervals.to_string()));
                row.push(Cell::plain(fmt::num(s.min)));
                row.push(Cell::plain(fmt::num(s.max)));
                row.push(Cell::plain(fmt::num(s.mean)));
                row.push(Cell::plain(s.cv.map(fmt::percent).unwrap_or_else(|| "—".into())));
                let stalls = if s.stalls_at.is_empty() {
                    "none".to_string()
                } else {
                    let at: Vec<String> = s.stalls_at.iter().take(5).map(|t| format!("{t:.0} s")).collect();
                    let more = if s.stalls_at.len() > 5 { ", …" } else { "" };
                    format!("{} (at {}{more})", s.stalls_at.len(), at.join(", "))
                };
                let tone = if s.stalls_at.is_empty() { Tone::Plain } else { Tone::Worse };
                row.push(Cell::toned(stalls, tone));
            }
            None => {
                row.push(Cell::plain("0"));
                row.extend((0..5).map(|_| Cell::plain("—")));
            }
        }
        t.rows.push(row);
    }
    t
}

/// A table of per-case, per-side values (efficiency or latency): absolute, or relative to the baseline.
fn values_table(
    r: &CompareReport,
    id: &str,
    title: String,
    metrics: &[super::model::MetricInfo],
    rows: &[super::model::ValuesRow],
    relative: bool,
) -> Table {
    let mut h = case_header(r, true);
    h.push((r.vs.name().to_string(), false));
    h.extend(metrics.iter().map(|m| (m.label.clone(), true)));
    let mut t = Table::new(id, title, h);
    for row in rows {
        let mut cells = case_cells(r, row.case, true);
        cells.push(Cell::plain(&r.sides[row.side].label));
        for v in &row.values {
            cells.push(if !relative {
                Cell::plain(fmt::opt_num(v.mean))
            } else if row.side == 0 {
                Cell::toned(if v.mean.is_some() { "1.00" } else { "—" }, Tone::Muted)
            } else {
                match v.ratio {
                    Some(x) => {
                        Cell::toned(format!("{}{}", fmt::ratio(x), verdict_mark(v.verdict)), verdict_tone(v.verdict))
                    }
                    None if v.both_near_zero => Cell::toned("—, both ≈ 0", Tone::Muted),
                    None => Cell::plain("—"),
                }
            });
        }
        t.rows.push(cells);
    }
    t
}

/// One group of values as two tables, `id` absolute and `id-relative` to the baseline, each with its
/// caption.
fn absolute_and_relative(
    r: &CompareReport,
    (id, title): (&str, &str),
    (metrics, rows): (&[MetricInfo], &[ValuesRow]),
    (absolute, relative): (&str, &str),
) -> (Table, Table) {
    let mut abs = values_table(r, id, title.into(), metrics, rows, false);
    abs.caption = Some(absolute.into());
    let title = format!("{title} relative to {}", r.baseline);
    let mut rel = values_table(r, &format!("{id}-relative"), title, metrics, rows, true);
    rel.caption = Some(relative.into());
    (abs, rel)
}

/// Cost per transaction next to throughput: absolute, and relative to the baseline.
pub fn efficiency_tables(r: &CompareReport) -> (Table, Table) {
    let (mut abs, rel) = absolute_and_relative(
        r,
        ("efficiency", "Efficiency"),
        (&r.efficiency_metrics, &r.efficiency),
        (
            "Means over the runs. CPU: server user + system µs; csw: server context switches; KB read/written: the \
             server process's storage I/O; fsyncs: InnoDB's (data files, doublewrite, redo log) plus the binary \
             log's syncs.",
            "value / baseline value (for costs, lower is better); ▲ significantly better, ▼ significantly worse \
             (highlighted), from the runs' values with the report's confidence and noise band; a ratio without a \
             mark is no significant change.",
        ),
    );
    abs.title = "Efficiency per transaction".into();
    (abs, rel)
}

/// The replicas of topology targets: absolute and relative to the baseline; `None` when no run had
/// replicas.
pub fn replication_tables(r: &CompareReport) -> Option<(Table, Table)> {
    if r.replication_metrics.is_empty() {
        return None;
    }
    Some(absolute_and_relative(
        r,
        ("replication", "Replicas"),
        (&r.replication_metrics, &r.replication),
        (
            "Means over the runs of each run's worst replica. Lag: heartbeat lag sampled each second of the \
             measured time (written on the primary every 100 ms, so up to 100 ms over); applied/s: transactions \
             the slowest replica applied a second; catch-up: seconds from the end of the load until the last \
             replica had applied all the primary committed; commit wait: mean wait of a semi-synchronous commit \
             for an acknowledgement; replica CPU and KB written: the busiest replica's server, per transaction of \
             the primary.",
            "value / baseline value (for lag, catch-up and commit wait, lower is better); ▲ significantly better, \
             ▼ significantly worse.",
        ),
    ))
}

/// Latency percentiles per case and side (means over the runs, ms).
pub fn latency_table(r: &CompareReport) -> Table {
    let mut t = values_table(r, "latency", "Latency (ms)".into(), &r.latency_metrics, &r.latency, false);
    t.caption = Some(
        "Means over the runs of each run's value; p50, p90 and p99.9 come from the stored latency histograms.".into(),
    );
    t
}

/// Facts of one experiment and its host.
pub fn experiment_table(e: &ExperimentInfo) -> Table {
    let mut t = Table::new(
        &format!("experiment-{}", e.id),
        format!("Experiment {} (id {})", e.name, e.id),
        vec![("fact".into(), false), ("value".into(), false)],
    );
    let h = &e.host;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    let facts = [
        ("file", opt(&e.file)),
        ("created", fmt::timestamp(e.created_at)),
        ("status", e.status.clone()),
        ("seed", e.seed.to_string()),
        ("versus", e.versus_version.clone()),
        ("definition hash", e.definition_hash.clone()),
        ("host", opt(&h.hostname)),
        ("CPU", opt(&h.cpu_model)),
        ("logical CPUs", h.logical_cpus.map(|c| c.to_string()).unwrap_or_else(|| "—".into())),
        ("physical cores", h.physical_cores.map(|c| c.to_string()).unwrap_or_else(|| "—".into())),
        ("memory", h.memory_bytes.map(fmt::bytes).unwrap_or_else(|| "—".into())),
        ("kernel", opt(&h.kernel)),
        ("OS", opt(&h.os)),
        (
            "datadir filesystem",
            h.datadir
                .as_ref()
                .map(|d| format!("{} on {} ({}, {})", d.fs_type, d.device, d.mount_point.display(), d.options))
                .unwrap_or_else(|| "—".into()),
        ),
    ];
    for (k, v) in facts {
        t.rows.push(vec![Cell::plain(k), Cell::plain(v)]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_is_highlighted() {
        assert_eq!(verdict_tone(Verdict::Faster), Tone::Better);
        assert_eq!(verdict_tone(Verdict::Slower), Tone::Worse);
        // However large the ratio, no call means no colour.
        assert_eq!(verdict_tone(Verdict::NoSignificantChange), Tone::Plain);
        assert_eq!(verdict_tone(Verdict::NotComputed), Tone::Plain);
        assert_eq!(verdict_mark(Verdict::Slower), " ▼");
        assert_eq!(verdict_mark(Verdict::NoSignificantChange), "");
    }
}
