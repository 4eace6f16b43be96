//! How numbers are written in the text exports (terminal, markdown, HTML). JSON and CSV carry the
//! values unrounded.

use super::model::{CompareReport, Verdict};

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

/// A value with a precision that suits its size: no decimals from 1000, one from 10, two from 1, three
/// below (`9521`, `95.3`, `2.35`, `0.200`).
pub fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "—".to_string()
    } else if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.3}")
    }
}

/// An optional value; `—` when absent.
pub fn opt_num(x: Option<f64>) -> String {
    x.map(num).unwrap_or_else(|| "—".to_string())
}

/// A ratio with two decimals, as in Small Datum's relative tables.
pub fn ratio(r: f64) -> String {
    format!("{r:.2}")
}

/// An interval of a ratio: `0.84–0.90`. An interval that excludes 1 but would print an end as `1.00`
/// gets more decimals (`0.912–0.997`), so that it never looks as if it touched 1.
pub fn ci(lo: f64, hi: f64) -> String {
    let excludes_one = lo > 1.0 || hi < 1.0;
    let touches_one =
        |d: usize| format!("{lo:.d$}") == format!("{:.d$}", 1.0) || format!("{hi:.d$}") == format!("{:.d$}", 1.0);
    let d = if excludes_one { (2..4).find(|&d| !touches_one(d)).unwrap_or(4) } else { 2 };
    format!("{lo:.d$}–{hi:.d$}")
}

/// A relative change as a signed percentage with one decimal: `+12.3 %`, `−4.0 %`.
pub fn change(c: f64) -> String {
    let p = c * 100.0;
    if p < 0.0 { format!("−{:.1} %", -p) } else { format!("+{p:.1} %") }
}

/// A fraction as a percentage with one decimal: `3.2 %`.
pub fn percent(f: f64) -> String {
    format!("{:.1} %", f * 100.0)
}

/// A detectable effect as `±18 %` (no decimals from 10 %, one below unless it is 0: `±4.2 %`, `±5 %`),
/// `±∞` when no change can be
/// detected.
pub fn plus_minus(f: f64) -> String {
    let p = f * 100.0;
    if !p.is_finite() {
        "±∞".to_string()
    } else if p >= 9.95 {
        format!("±{p:.0} %")
    } else {
        format!("±{} %", format!("{p:.1}").trim_end_matches(".0"))
    }
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
    fn numbers() {
        assert_eq!(num(9521.4), "9521");
        assert_eq!(num(95.34), "95.3");
        assert_eq!(num(2.345), "2.35");
        assert_eq!(num(0.2), "0.200");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-12.0), "-12.0");
        assert_eq!(opt_num(None), "—");
        assert_eq!(ratio(0.8666), "0.87");
        assert_eq!(ci(0.8412, 0.9049), "0.84–0.90");
        assert_eq!(ci(0.912, 0.9968), "0.912–0.997");
        assert_eq!(ci(0.95, 1.0021), "0.95–1.00", "an interval containing 1 keeps two decimals");
        assert_eq!(change(-0.13), "−13.0 %");
        assert_eq!(change(0.064), "+6.4 %");
        assert_eq!(percent(0.0321), "3.2 %");
        assert_eq!(plus_minus(0.1834), "±18 %");
        assert_eq!(plus_minus(0.0421), "±4.2 %");
        assert_eq!(plus_minus(0.05), "±5 %");
        assert_eq!(plus_minus(f64::INFINITY), "±∞");
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
