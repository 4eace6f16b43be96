//! The summary of a comparison in sentences, in the manner of a blog post's tl;dr: per candidate what
//! was called and what could have been, then which noise band decided.

use super::fmt;
use super::model::{CiKind, CompareReport, Verdict};
use super::tables::ci_heading;

/// One sentence per candidate, in the manner of a blog post's tl;dr.
pub fn summary_lines(r: &CompareReport) -> Vec<String> {
    let mut lines = Vec::new();
    let base = &r.baseline;
    for (side, s) in r.sides.iter().enumerate().skip(1) {
        let rows: Vec<_> = r.ratios.iter().filter(|x| x.side == side && x.ratio.is_some()).collect();
        if rows.is_empty() {
            lines.push(format!("{}: no case with values on both sides to compare with {base}.", s.label));
            continue;
        }
        let within = if rows.iter().any(|x| x.ci_kind == Some(CiKind::WithinRunOnly)) {
            " (interval from within-run noise only)"
        } else {
            ""
        };
        if let [x] = rows.as_slice() {
            let ratio = x.ratio.unwrap_or(f64::NAN);
            let ci = match (x.ci_lo, x.ci_hi) {
                (Some(lo), Some(hi)) => format!(", {} {}", ci_heading(r), fmt::ci(lo, hi)),
                _ => ", no interval".to_string(),
            };
            let detect = match &x.detectable {
                Some(d) if x.verdict == Verdict::NoSignificantChange => format!("; {}", fmt::detectable_sentence(d)),
                Some(d) => format!("; detectable changes: beyond {}", fmt::plus_minus(d.either_way())),
                None => String::new(),
            };
            lines.push(format!(
                "{} vs {base} ({}): {} — ratio {}{ci}, {} {}{within}{detect}.",
                s.label,
                r.case_label(x.case),
                fmt::verdict(r, x.verdict),
                fmt::ratio(ratio),
                fmt::change(ratio - 1.0),
                r.metric.name
            ));
            continue;
        }
        let count = |v: Verdict| rows.iter().filter(|x| x.verdict == v).count();
        let mut ratios: Vec<f64> = rows.iter().filter_map(|x| x.ratio).collect();
        ratios.sort_by(f64::total_cmp);
        let median = crate::stats::median(&ratios).unwrap_or(f64::NAN);
        let (better, worse) = (fmt::verdict(r, Verdict::Faster), fmt::verdict(r, Verdict::Slower));
        lines.push(format!(
            "{} vs {base}: {worse} in {}, {better} in {}, no significant change in {} of {} cases; {} ratios {}–{}, \
             median {}{within}.",
            s.label,
            count(Verdict::Slower),
            count(Verdict::Faster),
            count(Verdict::NoSignificantChange),
            rows.len(),
            r.metric.name,
            fmt::ratio(ratios[0]),
            fmt::ratio(ratios[ratios.len() - 1]),
            fmt::ratio(median),
        ));
        if let (Some(last), Some(more)) = (lines.last_mut(), unchanged_sentence(&rows)) {
            last.pop();
            last.push_str(&format!("; {more}."));
        }
    }
    if r.one_band() {
        lines.push(format!("Noise band {}: {}.", fmt::percent(r.noise_band), r.noise_band_source));
    } else {
        lines.push(format!("Noise bands {}, in the ratio table: {}.", fmt::bands(r), r.noise_band_source));
    }
    lines
}

/// What the cases without a significant change could have detected: `where nothing was called it could
/// detect only changes beyond ±8.1–18 %; about 24 repetitions per side would detect ±5 % in all of
/// them`.
fn unchanged_sentence(rows: &[&super::model::RatioRow]) -> Option<String> {
    use crate::stats::RepetitionsNeeded as R;
    let quiet: Vec<_> = rows
        .iter()
        .filter(|x| x.verdict == Verdict::NoSignificantChange)
        .filter_map(|x| x.detectable.as_ref())
        .collect();
    let first = quiet.first()?;
    let mut widths: Vec<f64> = quiet.iter().map(|d| d.either_way()).collect();
    widths.sort_by(f64::total_cmp);
    let (lo, hi) = (widths[0], widths[widths.len() - 1]);
    let range = if fmt::plus_minus(lo) == fmt::plus_minus(hi) {
        fmt::plus_minus(hi)
    } else {
        format!("{}–{}", fmt::plus_minus(lo), fmt::plus_minus(hi).trim_start_matches('±'))
    };
    let mut s = format!("where nothing was called it could detect only changes beyond {range}");
    let plans: Vec<R> = quiet.iter().filter_map(|d| d.plan).collect();
    let target = fmt::plus_minus(first.target);
    if plans.len() == quiet.len() {
        if plans.iter().all(|p| matches!(p, R::PerSide(_))) {
            let most = plans.iter().map(|p| if let R::PerSide(n) = p { *n } else { 0 }).max().unwrap_or(0);
            s.push_str(&format!("; about {most} repetitions per side would detect {target} in all of them"));
        } else if plans.contains(&R::WithinNoiseBand) {
            s.push_str(&format!("; {target} is within the noise band and is never called"));
        } else {
            s.push_str(&format!("; {target} would need more repetitions than can be planned"));
        }
    }
    Some(s)
}
