//! Debian package versions (`[epoch:]upstream[-revision]`): ordering as dpkg orders them, and the upstream
//! server version inside them.

use std::cmp::Ordering;

use crate::server::build::Version;

/// Compares two Debian versions the way `dpkg --compare-versions` does.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (ea, ua, ra) = split(a);
    let (eb, ub, rb) = split(b);
    ea.cmp(&eb).then_with(|| compare_part(ua, ub)).then_with(|| compare_part(ra, rb))
}

/// The server version a Debian package version carries: `1:11.8.9+ds-0+deb13u1` → 11.8.9.
pub fn upstream(debian_version: &str) -> Option<Version> {
    let (_, up, _) = split(debian_version);
    let end = up.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(up.len());
    let nums: Vec<u32> = up[..end].split('.').map(|s| s.parse().ok()).collect::<Option<_>>()?;
    match nums[..] {
        [major, minor, patch] => Some(Version::new(major, minor, patch)),
        [major, minor] => Some(Version::new(major, minor, 0)),
        _ => None,
    }
}

fn split(v: &str) -> (u64, &str, &str) {
    let (epoch, rest) = match v.split_once(':') {
        Some((e, r)) if e.chars().all(|c| c.is_ascii_digit()) => (e.parse().unwrap_or(0), r),
        _ => (0, v),
    };
    match rest.rsplit_once('-') {
        Some((up, rev)) => (epoch, up, rev),
        None => (epoch, rest, ""),
    }
}

/// dpkg's order of a non-digit character: `~` before the end of the string, letters before other signs.
fn weight(c: Option<char>) -> i32 {
    match c {
        None => 0,
        Some('~') => -1,
        Some(c) if c.is_ascii_alphabetic() => c as i32,
        Some(c) => c as i32 + 256,
    }
}

fn compare_part(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    while !a.is_empty() || !b.is_empty() {
        let na = a.find(|c: char| c.is_ascii_digit()).unwrap_or(a.len());
        let nb = b.find(|c: char| c.is_ascii_digit()).unwrap_or(b.len());
        let (sa, sb) = (&a[..na], &b[..nb]);
        let (mut ca, mut cb) = (sa.chars(), sb.chars());
        loop {
            let (x, y) = (ca.next(), cb.next());
            if x.is_none() && y.is_none() {
                break;
            }
            match weight(x).cmp(&weight(y)) {
                Ordering::Equal => {}
                other => return other,
            }
        }
        a = &a[na..];
        b = &b[nb..];
        let da = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
        let db = b.find(|c: char| !c.is_ascii_digit()).unwrap_or(b.len());
        let (xa, xb) = (a[..da].trim_start_matches('0'), b[..db].trim_start_matches('0'));
        match xa.len().cmp(&xb.len()).then_with(|| xa.cmp(xb)) {
            Ordering::Equal => {}
            other => return other,
        }
        a = &a[da..];
        b = &b[db..];
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn orders_like_dpkg() {
        use Ordering::*;
        let cases = [
            ("1:10.11.19-0+deb12u1", "1:10.11.18-0+deb12u1", Greater),
            ("2.36-9+deb12u14", "2.36-9+deb12u7", Greater),
            ("1:1.0", "2.0", Greater),
            ("1.0~rc1", "1.0", Less),
            ("1.0", "1.0+b1", Less),
            ("1.0a", "1.0+", Less),
            ("9.7.4-2", "9.7.4-10", Less),
            ("1.01", "1.1", Equal),
            ("1:11.8.9+ds-4", "1:11.8.9+ds-0+deb13u1", Greater),
            ("1.0-1", "1.0", Greater),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare(a, b), want, "{a} vs {b}");
            assert_eq!(compare(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn reads_upstream_server_versions() {
        assert_eq!(upstream("1:11.8.9+ds-0+deb13u1"), Some(Version::new(11, 8, 9)));
        assert_eq!(upstream("1:10.5.29-0+deb11u1"), Some(Version::new(10, 5, 29)));
        assert_eq!(upstream("9.7.4-2"), Some(Version::new(9, 7, 4)));
        assert_eq!(upstream("8.0"), Some(Version::new(8, 0, 0)));
        assert_eq!(upstream("1:abc-1"), None);
    }

    proptest! {
        #[test]
        fn comparison_is_antisymmetric_and_reflexive(a in "[0-9]{1,2}(:)?[0-9a-z.+~]{1,8}(-[0-9a-z.+~]{1,4})?",
                                                     b in "[0-9]{1,2}(:)?[0-9a-z.+~]{1,8}(-[0-9a-z.+~]{1,4})?") {
            prop_assert_eq!(compare(&a, &a), Ordering::Equal);
            prop_assert_eq!(compare(&a, &b), compare(&b, &a).reverse());
        }
    }
}
