//! The CSV export: one row per case and side with the compared metric's statistics, the ratio to the
//! baseline with its interval and verdict, and the efficiency and latency means. Values are unrounded
//! (the same numbers as the JSON export); per-run stability and time series are only in JSON and HTML.
//! Script workloads add one row per statement and side after the main rows, in the same columns.

use std::fmt::Write as _;

use super::model::{CiKind, CompareReport, Verdict};
use crate::stats;
use crate::workload::script::stored::Section;

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
                &x.and_then(|x| x.note.as_deref())
                    .into_iter()
                    .chain(forced.iter().copied())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        ];
        for (rows, metrics) in [(&r.efficiency, &r.efficiency_metrics), (&r.latency, &r.latency_metrics)] {
            let values = rows.iter().find(|v| v.case == c.case && v.side == c.side);
            for (i, _) in metrics.iter().enumerate() {
                row.push(num(values.and_then(|v| v.values.get(i)).and_then(|v| v.mean)));
            }
        }
        let _ = writeln!(out, "{}", row.join(","));
    }
    for s in &r.statements {
        let band = [num(Some(r.noise_band)), String::new(), field(&r.noise_band_source)];
        statement_rows(&mut out, s, &forced, &band, r.efficiency_metrics.len() + r.latency_metrics.len());
    }
    out
}

/// The rows of one script workload's statements, in the columns of the main rows: per statement and
/// side its mean latency (`statement N latency (file:line)`, ms, over the runs' means) and, for a
/// candidate, the ratio to the baseline with its interval and verdict; a changed plan is in the note.
fn statement_rows(out: &mut String, s: &Section, forced: &[&str], band: &[String], extra: usize) {
    for st in &s.statements {
        for (i, side) in st.sides.iter().enumerate() {
            let c = st.comparisons.iter().find(|c| c.side == i);
            let verdict = match c.and_then(|c| c.verdict) {
                _ if i == 0 => "baseline",
                Some(stats::Verdict::Faster) => "faster",
                Some(stats::Verdict::Slower) => "slower",
                Some(stats::Verdict::NoSignificantChange) => "no_significant_change",
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
            notes.extend(forced.iter().map(|f| f.to_string()));
            let ratio = c.and_then(|c| c.ratio);
            let mut row = vec![
                field(&s.workload),
                field(s.group.as_deref().unwrap_or("")),
                s.threads.to_string(),
                field(&s.sides[i]),
                (i == 0).to_string(),
                field(&format!("statement {} latency ({})", st.number, st.location)),
                "ms".to_string(),
                v.len().to_string(),
                num(side.mean_ms),
                num(median),
                num(std_dev),
                num(min),
                num(max),
                num(ratio),
                num(ci.map(|x| x.0)),
                num(ci.map(|x| x.1)),
                if ci.is_some() { "between_repetitions".into() } else { String::new() },
                String::new(),
                num(ratio.map(|r| r - 1.0)),
                verdict.to_string(),
            ];
            row.extend(std::iter::repeat_n(String::new(), 5));
            row.extend(band.iter().cloned());
            row.push(field(&notes.join("; ")));
            row.extend(std::iter::repeat_n(String::new(), extra));
            let _ = writeln!(out, "{}", row.join(","));
        }
    }
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
