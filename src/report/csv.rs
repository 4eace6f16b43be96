//! The CSV export: one row per case and side with the compared metric's statistics, the ratio to the
//! baseline with its interval and verdict, and the efficiency and latency means. Values are unrounded
//! (the same numbers as the JSON export); per-run stability and time series are only in JSON and HTML.
//! Workloads with sections of their own add their rows after the main rows, in the same columns
//! (script workloads: one per statement and side).

use std::fmt::Write as _;

use super::model::{CiKind, CompareReport, Verdict};
use crate::workload::CsvRow;

/// Quotes a field when it holds a comma, a quote or a line break (RFC 4180). Text a spreadsheet would
/// run as a formula (`=`, `+`, `-`, `@`, a tab or carriage return first, and no number) gets a `'` in
/// front, so that opening the file runs nothing a label carried.
fn field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.trim().parse::<f64>().is_err();
    let s = if formula { format!("'{s}") } else { s.to_string() };
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s }
}

fn num(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The CSV text of `report`.
pub fn render(r: &CompareReport) -> String {
    let mut header: Vec<String> = [
        "workload",
        "group",
        "threads",
        "side",
        "baseline",
        "metric",
        "unit",
        "n",
        "mean",
        "median",
        "std_dev",
        "min",
        "max",
        "ratio",
        "ci_lo",
        "ci_hi",
        "ci_kind",
        "ci_method",
        "change",
        "verdict",
        "detectable_increase",
        "detectable_decrease",
        "detectable_power",
        "target_change",
        "repetitions_for_target",
        "noise_band",
        "noise_band_origin",
        "noise_band_source",
        "note",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(r.efficiency_metrics.iter().map(|m| format!("efficiency:{}", m.name)));
    header.extend(r.latency_metrics.iter().map(|m| format!("latency:{}", m.name)));
    header.extend(r.replication_metrics.iter().map(|m| format!("replication:{}", m.name)));
    let mut out = header.join(",");
    out.push('\n');
    // Overrides (`--force`) qualify every number, so every row carries them in its note.
    let forced: Vec<&str> = r.notes.iter().filter(|n| n.starts_with("--force")).map(String::as_str).collect();
    for c in &r.cells {
        let case = &r.cases[c.case];
        let side = &r.sides[c.side];
        let x = if c.side == 0 { None } else { r.ratio(c.case, c.side) };
        let verdict = match x.map(|x| x.verdict) {
            _ if c.side == 0 => "baseline",
            Some(Verdict::Faster) => "faster",
            Some(Verdict::Slower) => "slower",
            Some(Verdict::NoSignificantChange) => "no_significant_change",
            Some(Verdict::NotComputed) | None => "not_computed",
        };
        let kind = match x.and_then(|x| x.ci_kind) {
            Some(CiKind::BetweenRepetitions) => "between_repetitions",
            Some(CiKind::WithinRunOnly) => "within_run_only",
            None => "",
        };
        let d = x.and_then(|x| x.detectable.as_ref());
        let mut row = vec![
            field(&case.workload),
            field(case.group.as_deref().unwrap_or("")),
            case.threads.to_string(),
            field(&side.label),
            (c.side == 0).to_string(),
            field(&r.metric.name),
            field(&r.metric.unit),
            c.n.to_string(),
            num(c.mean),
            num(c.median),
            num(c.std_dev),
            num(c.min),
            num(c.max),
            num(x.and_then(|x| x.ratio)),
            num(x.and_then(|x| x.ci_lo)),
            num(x.and_then(|x| x.ci_hi)),
            kind.to_string(),
            field(x.and_then(|x| x.ci_method.as_deref()).unwrap_or("")),
            num(x.and_then(|x| x.change)),
            verdict.to_string(),
            num(d.map(|d| d.increase)),
            num(d.and_then(|d| d.decrease)),
            num(d.map(|d| d.power)),
            num(d.map(|d| d.target)),
            d.and_then(|d| d.plan).map(super::fmt::plan).unwrap_or_default(),
            num(Some(r.band_of(c.case).band)),
            r.band_of(c.case).origin.word().to_string(),
            field(&r.noise_band_source),
            field(
                &x.and_then(|x| x.note.clone())
                    .into_iter()
                    .chain(c.client_bound.as_ref().map(|b| b.describe()))
                    .chain(forced.iter().map(|f| f.to_string()))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        ];
        let tables = [
            (&r.efficiency, &r.efficiency_metrics),
            (&r.latency, &r.latency_metrics),
            (&r.replication, &r.replication_metrics),
        ];
        for (rows, metrics) in tables {
            let values = rows.iter().find(|v| v.case == c.case && v.side == c.side);
            for (i, _) in metrics.iter().enumerate() {
                row.push(num(values.and_then(|v| v.values.get(i)).and_then(|v| v.mean)));
            }
        }
        let _ = writeln!(out, "{}", row.join(","));
    }
    let band = [num(Some(r.noise_band)), String::new(), field(&r.noise_band_source)];
    for row in r.sections.csv_rows() {
        let values = r.efficiency_metrics.len() + r.latency_metrics.len() + r.replication_metrics.len();
        section_row(&mut out, &row, &forced, &band, values);
    }
    out
}

/// A workload section's row (see [`CsvRow`]) in the main rows' columns.
fn section_row(out: &mut String, row: &CsvRow, forced: &[&str], band: &[String], extra: usize) {
    let mut line = vec![
        field(&row.workload),
        field(&row.group),
        row.threads.to_string(),
        field(&row.side),
        row.baseline.to_string(),
        field(&row.metric),
        field(&row.unit),
        row.n.to_string(),
        num(row.mean),
        num(row.median),
        num(row.std_dev),
        num(row.min),
        num(row.max),
        num(row.ratio),
        num(row.ci.map(|x| x.0)),
        num(row.ci.map(|x| x.1)),
        field(&row.ci_kind),
        String::new(),
        num(row.ratio.map(|r| r - 1.0)),
        field(&row.verdict),
    ];
    line.extend(std::iter::repeat_n(String::new(), 5));
    line.extend(band.iter().cloned());
    let notes: Vec<&str> = row.notes.iter().map(String::as_str).chain(forced.iter().copied()).collect();
    line.push(field(&notes.join("; ")));
    line.extend(std::iter::repeat_n(String::new(), extra));
    let _ = writeln!(out, "{}", line.join(","));
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
