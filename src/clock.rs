//! Wall-clock formatting shared by reports and workloads.

/// `YYYY-MM-DD hh:mm:ss` (UTC) of a Unix time in seconds, the format of a MySQL DATETIME literal.
pub fn utc_datetime(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", secs / 3600, secs % 3600 / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::utc_datetime;

    #[test]
    fn civil_dates_in_utc() {
        assert_eq!(utc_datetime(0), "1970-01-01 00:00:00");
        assert_eq!(utc_datetime(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc_datetime(1_795_997_328), "2026-11-30 00:08:48");
        assert_eq!(utc_datetime(-1), "1969-12-31 23:59:59");
    }
}
