//! Documented changes of server defaults between versions (`data/defaults.toml`), for telling a
//! difference `versus diff-vars` finds between two builds apart as a known, documented change.

use std::sync::OnceLock;

use serde::Deserialize;

use super::options::Family;
use crate::server::build::{Flavor, Version};

const TABLE: &str = include_str!("../../../data/defaults.toml");

/// One documented change of a default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultChange {
    /// The servers it is about.
    pub family: Family,
    /// The variable (as `SHOW GLOBAL VARIABLES` names it).
    pub variable: String,
    /// The release that changed it.
    pub version: String,
    /// The default before.
    pub old: String,
    /// The default from `version` on.
    pub new: String,
    /// Where it is documented.
    pub source: String,
}

#[derive(Deserialize)]
struct Table {
    default: Vec<DefaultChange>,
}

fn parse_version(text: &str) -> Option<Version> {
    let n: Vec<u32> = text.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    (n.len() == 3).then(|| Version::new(n[0], n[1], n[2]))
}

/// The rows of `data/defaults.toml`.
pub fn changes() -> &'static [DefaultChange] {
    static ROWS: OnceLock<Vec<DefaultChange>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let t: Table = toml::from_str(TABLE).expect("data/defaults.toml parses");
        for r in &t.default {
            assert!(parse_version(&r.version).is_some(), "data/defaults.toml: bad version {}", r.version);
        }
        t.default
    })
}

/// Flavor and version from what `SELECT VERSION()` says (`8.4.0`, `11.8.9-MariaDB-log`, `8.0.36-28`).
pub fn server_of(version_string: &str) -> Option<(Flavor, Version)> {
    let v = Version::find_in(version_string)?;
    let f = if version_string.contains("MariaDB") { Flavor::Mariadb } else { Flavor::Mysql };
    Some((f, v))
}

fn family(f: Flavor) -> Family {
    match f {
        Flavor::Mariadb => Family::Mariadb,
        Flavor::Mysql | Flavor::Percona => Family::Mysql,
    }
}

/// The documented changes of `variable`'s default that lie between the servers `a` and `b` (same family;
/// `a` after the change and `b` before it counts too), oldest first.
pub fn between(a: (Flavor, Version), b: (Flavor, Version), variable: &str) -> Vec<&'static DefaultChange> {
    if family(a.0) != family(b.0) {
        return Vec::new();
    }
    let (lo, hi) = if a.1 <= b.1 { (a.1, b.1) } else { (b.1, a.1) };
    let mut out: Vec<&DefaultChange> = changes()
        .iter()
        .filter(|c| c.family == family(a.0) && c.variable.eq_ignore_ascii_case(variable))
        .filter(|c| parse_version(&c.version).is_some_and(|v| lo < v && v <= hi))
        .collect();
    out.sort_by_key(|c| parse_version(&c.version));
    out
}

/// `MySQL 8.4.0: 200 → 10000; …` for [`between`], or `None`.
pub fn describe(a: (Flavor, Version), b: (Flavor, Version), variable: &str) -> Option<String> {
    let found = between(a, b, variable);
    let name = match family(a.0) {
        Family::Mysql => "MySQL",
        Family::Mariadb => "MariaDB",
    };
    (!found.is_empty()).then(|| {
        found
            .iter()
            .map(|c| format!("{name} {} changed it: {} → {}", c.version, c.old, c.new))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// A documented default that a server started without settings contradicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// The table's row: the latest change of the variable at or before the server's version.
    pub row: &'static DefaultChange,
    /// What the server reports.
    pub actual: String,
}

/// The rows of the table that `variables` (a server's `SHOW GLOBAL VARIABLES`, started with none of
/// them set) contradict: for each variable, the latest documented change at or before `server`'s
/// version whose new default is a plain value (not a formula or a host-sized figure), compared with
/// sizes in bytes (`64M`) and switches in any case. Variables the server does not have are skipped.
pub fn disagreements(
    server: (Flavor, Version),
    variables: &std::collections::BTreeMap<String, String>,
) -> Vec<Disagreement> {
    let mut latest: std::collections::BTreeMap<String, &'static DefaultChange> = Default::default();
    for c in changes().iter().filter(|c| c.family == family(server.0)) {
        let Some(v) = parse_version(&c.version).filter(|v| *v <= server.1) else { continue };
        let key = c.variable.to_ascii_lowercase();
        if latest.get(&key).is_none_or(|old| parse_version(&old.version).is_some_and(|o| o <= v)) {
            latest.insert(key, c);
        }
    }
    latest
        .into_iter()
        .filter_map(|(name, row)| {
            let plain = plain_value(&row.new)?;
            let actual = variables.iter().find(|(k, _)| k.eq_ignore_ascii_case(&name)).map(|(_, v)| v)?;
            (plain_value(actual)? != plain).then(|| Disagreement { row, actual: actual.clone() })
        })
        .collect()
}

/// A default as comparable text: sizes with a K/M/G suffix in bytes, words in upper case; `None` for
/// formulas, lists and descriptions (anything with a space, a parenthesis, a comma or a leading `+`).
fn plain_value(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || t.starts_with('+') || t.contains([' ', '(', ',', '%', '=']) {
        return None;
    }
    let (digits, scale) = match t.as_bytes()[t.len() - 1].to_ascii_uppercase() {
        b'K' => (&t[..t.len() - 1], 1u64 << 10),
        b'M' => (&t[..t.len() - 1], 1 << 20),
        b'G' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    // Numbers as numbers: MySQL shows some percentages as `90.000000`.
    match (digits.parse::<u64>(), t.parse::<f64>()) {
        (Ok(n), _) => Some((n * scale).to_string()),
        (_, Ok(x)) if x.is_finite() => Some(x.to_string()),
        _ => Some(t.to_ascii_uppercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_between_8_0_and_8_4() {
        let a = server_of("8.0.36").unwrap();
        let b = server_of("8.4.0").unwrap();
        assert_eq!(describe(a, b, "innodb_io_capacity").as_deref(), Some("MySQL 8.4.0 changed it: 200 → 10000"));
        assert_eq!(describe(b, a, "innodb_io_capacity").as_deref(), Some("MySQL 8.4.0 changed it: 200 → 10000"));
        assert_eq!(describe(a, b, "innodb_redo_log_capacity"), None, "8.0.30 is not between 8.0.36 and 8.4.0");
        let old = server_of("5.6.44").unwrap();
        assert_eq!(between(old, b, "innodb_purge_threads").len(), 2, "5.7.8 and 8.4.0");
        assert_eq!(describe(server_of("10.11.9-MariaDB").unwrap(), b, "innodb_io_capacity"), None);
        let n84 = changes().iter().filter(|c| c.version == "8.4.0").count();
        assert!(n84 >= 19, "{n84}");
    }

    #[test]
    fn a_server_that_contradicts_the_latest_row_is_named() {
        let vars = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let v84 = server_of("8.4.3").unwrap();
        // 8.4's own defaults agree (sizes in bytes, switches in any case).
        let ok = vars(&[("innodb_log_buffer_size", "67108864"), ("innodb_adaptive_hash_index", "off")]);
        assert_eq!(disagreements(v84, &ok), vec![]);
        // The 8.4.0 row wins over 5.7.8's for innodb_purge_threads, and its new value is a formula.
        let bad = vars(&[("innodb_change_buffering", "all"), ("innodb_purge_threads", "1")]);
        let d = disagreements(v84, &bad);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].row.variable.as_str(), d[0].actual.as_str()), ("innodb_change_buffering", "all"));
        // Before 8.4 the 8.4 rows do not apply.
        let v80 = server_of("8.0.36").unwrap();
        assert_eq!(disagreements(v80, &vars(&[("innodb_change_buffering", "all")])), vec![]);
        assert_eq!(plain_value("1G").as_deref(), Some("1073741824"));
        assert_eq!(plain_value("90.000000"), plain_value("90"));
        assert_eq!(plain_value("CPUs/2 (min 4)"), None);
    }
}
