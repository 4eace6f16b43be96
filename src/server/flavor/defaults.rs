//! Documented changes of server defaults between versions (`data/defaults.toml`), for telling a
//! difference `versus diff-vars` finds between two builds apart as a known, documented change.

use std::sync::OnceLock;

use serde::Deserialize;

use super::options::Family;
use crate::server::build::{Flavor, Version};

const TABLE: &str = include_str!("../../../data/defaults.toml");

/// One documented change of a default.
#[derive(Debug, Clone, Deserialize)]
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
}
