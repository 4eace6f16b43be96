//! How numbers are written in the text formats (terminal, markdown, HTML): a precision that suits the
//! size, ratios and their intervals, changes and percentages. JSON and CSV carry values unrounded.

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
        assert_eq!(num(f64::NAN), "—");
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
    }
}
