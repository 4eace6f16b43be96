//! A script workload's own section of a comparison report: for each statement the mean and p95
//! latency per side and, per candidate, the ratio to the baseline with its interval and verdict and a
//! mark where the server's plan changed; the sentences below the table name every statement that got
//! slower or faster or whose plan changed. The CSV export gets one row per statement and side.

use super::stored::{Section, short};
use crate::present::fmt;
use crate::present::table::{Cell, Table, Tone};
use crate::stats::Verdict;
use crate::workload::{CsvRow, SectionOut, WorkloadSection};

/// The key of script workloads' sections in a report's JSON.
pub const KEY: &str = "statements";

impl WorkloadSection for Section {
    fn key(&self) -> &'static str {
        KEY
    }

    fn write(&self, index: usize, out: &mut SectionOut<'_>) {
        out.with_writer(|w| {
            w.table(&table(self, &format!("statements-{index}")));
            w.summary(&self.sentences());
            w.summary(&plan_lines(self).into_iter().map(|l| format!("plan changed: {l}")).collect::<Vec<_>>());
            w.end_section();
        });
    }

    fn csv_rows(&self) -> Vec<CsvRow> {
        csv_rows(self)
    }
}

/// The table of one section.
fn table(s: &Section, id: &str) -> Table {
    let mut header = vec!["#".to_string(), "statement".to_string(), "location".to_string()];
    let mut numeric = vec![true, false, false];
    for (i, side) in s.sides.iter().enumerate() {
        header.push(format!("{side} mean ms"));
        header.push(format!("{side} p95 ms"));
        numeric.extend([true, true]);
        if i > 0 {
            header.push(format!("ratio {side}"));
            header.push(format!("{} % CI", (s.confidence * 100.0).round()));
            header.push("verdict".into());
            header.push("plan".into());
            numeric.extend([true, true, false, false]);
        }
    }
    header.push("count".into());
    numeric.push(true);
    let mut t = Table {
        id: id.to_string(),
        title: s.title.clone(),
        caption: Some(
            "Mean latency per statement (the mean of each run's mean) and its 95th percentile over every execution of the runs; \
             ratio (of the means) above 1: slower than the baseline. \
             plan: 'changed' where the server's EXPLAIN shape (access type and index per table) differs from the baseline's."
                .into(),
        ),
        header,
        numeric,
        rows: Vec::new(),
        footnotes: Vec::new(),
    };
    for st in &s.statements {
        let mut row = vec![
            Cell::toned(st.number.to_string(), Tone::Plain),
            Cell::toned(short(&st.text, 48), Tone::Plain),
            Cell::toned(st.location.clone(), Tone::Muted),
        ];
        for (i, side) in st.sides.iter().enumerate() {
            let side_tone = if i == 0 { Tone::Muted } else { Tone::Plain };
            row.push(Cell::toned(fmt::opt_num(side.mean_ms), side_tone));
            row.push(Cell::toned(fmt::opt_num(side.p95_ms), side_tone));
            if i == 0 {
                continue;
            }
            let c = st.comparisons.iter().find(|c| c.side == i);
            let tone = match c.and_then(|c| c.verdict) {
                Some(Verdict::Slower) => Tone::Worse,
                Some(Verdict::Faster) => Tone::Better,
                _ => Tone::Plain,
            };
            row.push(Cell::toned(c.and_then(|c| c.ratio).map(fmt::ratio).unwrap_or_else(|| "—".into()), tone));
            row.push(Cell::toned(
                match c.map(|c| (c.ci_low, c.ci_high)) {
                    Some((Some(lo), Some(hi))) => fmt::ci(lo, hi),
                    _ => "—".into(),
                },
                Tone::Plain,
            ));
            let verdict = match c.and_then(|c| c.verdict) {
                Some(Verdict::Slower) => "slower",
                Some(Verdict::Faster) => "faster",
                Some(_) => "no significant change",
                None => "—",
            };
            if let Some(note) = c.and_then(|c| c.note.clone())
                && !t.footnotes.contains(&note)
            {
                t.footnotes.push(note);
            }
            row.push(Cell::toned(verdict, tone));
            let changed = c.is_some_and(|c| c.plan_changed);
            row.push(Cell::toned(
                if changed { "changed" } else { "" },
                if changed { Tone::Worse } else { Tone::Plain },
            ));
        }
        let count: u64 = st.sides.iter().map(|x| x.count).sum();
        row.push(Cell::toned(count.to_string(), Tone::Muted));
        t.rows.push(row);
    }
    t
}

/// The plans that changed, one line each: statement, baseline's shape, candidate's shape.
fn plan_lines(s: &Section) -> Vec<String> {
    let mut out = Vec::new();
    for st in &s.statements {
        for c in st.comparisons.iter().filter(|c| c.plan_changed) {
            out.push(format!(
                "statement {} on {}: {} (on {}: {})",
                st.number,
                s.sides[c.side],
                st.sides[c.side].plan.as_deref().unwrap_or("?"),
                s.sides[0],
                st.sides[0].plan.as_deref().unwrap_or("?")
            ));
        }
    }
    out
}

/// Per statement and side its mean latency (`statement N latency (file:line)`, ms, over the runs'
/// means) and, for a candidate, the ratio to the baseline with its interval and verdict; a changed
/// plan is in the notes.
fn csv_rows(s: &Section) -> Vec<CsvRow> {
    let mut rows = Vec::new();
    for st in &s.statements {
        for (i, side) in st.sides.iter().enumerate() {
            let c = st.comparisons.iter().find(|c| c.side == i);
            let verdict = match c.and_then(|c| c.verdict) {
                _ if i == 0 => "baseline",
                Some(Verdict::Faster) => "faster",
                Some(Verdict::Slower) => "slower",
                Some(Verdict::NoSignificantChange) => "no_significant_change",
                None => "not_computed",
            };
            let v = &side.values;
            let (median, std_dev, min, max) = if v.is_empty() {
                (None, None, None, None)
            } else {
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                let n = sorted.len();
                let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
                let mean = v.iter().sum::<f64>() / n as f64;
                let sd = (n > 1).then(|| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
                (Some(median), sd, sorted.first().copied(), sorted.last().copied())
            };
            let ci = c.and_then(|c| c.ci_low.zip(c.ci_high));
            let mut notes: Vec<String> = Vec::new();
            if let Some(c) = c.filter(|c| c.plan_changed) {
                notes.push(format!(
                    "plan changed: {} -> {}",
                    st.sides[0].plan.as_deref().unwrap_or("?"),
                    st.sides[c.side].plan.as_deref().unwrap_or("?")
                ));
            }
            notes.extend(c.and_then(|c| c.note.clone()));
            rows.push(CsvRow {
                workload: s.workload.clone(),
                group: s.group.clone().unwrap_or_default(),
                threads: s.threads,
                side: s.sides[i].clone(),
                baseline: i == 0,
                metric: format!("statement {} latency ({})", st.number, st.location),
                unit: "ms".into(),
                n: v.len(),
                mean: side.mean_ms,
                median,
                std_dev,
                min,
                max,
                ratio: c.and_then(|c| c.ratio),
                ci,
                ci_kind: if ci.is_some() { "between_repetitions".into() } else { String::new() },
                verdict: verdict.into(),
                notes,
            });
        }
    }
    rows
}
