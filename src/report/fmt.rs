//! How numbers are written in the text exports (terminal, markdown, HTML). JSON and CSV carry the
//! values unrounded.

use super::model::{CompareReport, Verdict};
pub use crate::present::fmt::{change, ci, num, opt_num, percent, plus_minus, ratio};

/// What a variable table shows where a server has no such variable (unlike a value such as `none`).
pub const ABSENT: &str = "(absent)";

/// The report's noise band (`2.0 %`), or the range of its rows' bands (`2.0–29.4 % (per row)`).
pub fn bands(r: &CompareReport) -> String {
    if r.one_band() {
        return percent(r.noise_band);
    }
    let lo = r.case_bands.iter().map(|b| b.band).fold(f64::INFINITY, f64::min);
    format!("{}–{} (per row)", percent(lo).trim_end_matches(" %"), percent(r.noise_band))
}

/// Repetitions per side of a plan: `24`, `> 10000`, or `never` (the target is within the noise band).
pub fn plan(p: crate::stats::RepetitionsNeeded) -> String {
    match p {
        crate::stats::RepetitionsNeeded::PerSide(n) => n.to_string(),
        crate::stats::RepetitionsNeeded::MoreThan(n) => format!("> {n}"),
        crate::stats::RepetitionsNeeded::WithinNoiseBand => "never".to_string(),
    }
}

/// The sentence on what a comparison could detect: `it could detect only changes beyond ±18 %; about
/// 24 repetitions per side would detect ±5 %`.
pub fn detectable_sentence(d: &super::model::Detectable) -> String {
    use crate::stats::RepetitionsNeeded as R;
    let first = format!("it could detect only changes beyond {}", plus_minus(d.either_way()));
    let target = plus_minus(d.target);
    match d.plan {
        Some(R::PerSide(n)) => format!("{first}; about {n} repetitions per side would detect {target}"),
        Some(R::MoreThan(n)) => format!("{first}; even {n} repetitions per side would not detect {target}"),
        Some(R::WithinNoiseBand) => format!("{first}; {target} is within the noise band and is never called"),
        None => format!("{first} (within-run noise only)"),
    }
}

/// The verdict in the metric's words (`faster`, `slower`, `cheaper` …).
pub fn verdict(report: &CompareReport, v: Verdict) -> &'static str {
    let (better, worse) = match report.metric.kind {
        crate::metric::MetricKind::Cost => ("cheaper", "costlier"),
        _ => ("faster", "slower"),
    };
    match v {
        Verdict::Faster => better,
        Verdict::Slower => worse,
        Verdict::NoSignificantChange => "no significant change",
        Verdict::NotComputed => "—",
    }
}

/// A timestamp as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn timestamp(secs: i64) -> String {
    format!("{} UTC", crate::clock::utc_datetime(secs))
}

/// Bytes in binary units: `24.0 GiB`.
pub fn bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 { format!("{b} B") } else { format!("{v:.1} {}", units[i]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        assert_eq!(plan(crate::stats::RepetitionsNeeded::PerSide(24)), "24");
    }

    #[test]
    fn timestamps_and_bytes() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(timestamp(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(timestamp(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(24 * 1024 * 1024 * 1024), "24.0 GiB");
    }
}
