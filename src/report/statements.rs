//! The per-statement sections of script workloads: for each statement the mean and p95 latency per side and,
//! per candidate, the ratio to the baseline with its interval and verdict and a mark where the server's
//! plan changed; the sentences below the table name every statement that got slower or faster or whose
//! plan changed.

use super::fmt;
use super::model::CompareReport;
use super::tables::{Cell, Table, Tone};
use super::writers::Writer;
use crate::stats::Verdict;
use crate::workload::script::stored::{Section, short};

/// The table of one section.
pub fn table(s: &Section, id: &str) -> Table {
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

/// The sections, written to `w`: per section its table, the sentences that sum it up, and the plans
/// that changed.
pub fn write(w: &mut dyn Writer, r: &CompareReport) {
    for (i, s) in r.statements.iter().enumerate() {
        w.table(&table(s, &format!("statements-{i}")));
        w.summary(&s.sentences());
        w.summary(&plan_lines(s).into_iter().map(|l| format!("plan changed: {l}")).collect::<Vec<_>>());
        w.end_section();
    }
}
