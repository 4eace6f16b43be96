//! One config for many versions: server options that were added, renamed or removed between versions,
//! as a data table. Before a server starts, every option of its my.cnf that its version does not know is
//! translated (a rename, a unit change, a value that is the new behaviour anyway) or refused with a
//! message naming the version, instead of the server's `unknown variable` at start.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::server::build::{Build, Flavor, Version};
use crate::server::mycnf::{Entry, Line, MyCnf, normalize_key};

/// The table, compiled in.
const TABLE: &str = include_str!("../../../data/options.toml");

/// Which servers a rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Oracle MySQL and Percona Server.
    Mysql,
    /// MariaDB.
    Mariadb,
}

/// Options (name, value) computed from an option's value; `None` when it cannot be carried over.
pub type Conversion = fn(&str) -> Option<Vec<(String, String)>>;

/// One row of `data/options.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The servers it is about.
    pub family: Family,
    /// The option, normalised (`_` for `-`).
    pub option: String,
    /// Unknown before this version (added in it).
    pub unknown_before: Option<String>,
    /// Unknown from this version on (removed in it).
    pub unknown_from: Option<String>,
    /// Unknown in every version of the family.
    #[serde(default)]
    pub always: bool,
    /// The same value under this name instead.
    pub rename: Option<String>,
    /// The conversion (see [`conversion`]) that computes the options to write instead.
    pub convert: Option<String>,
    /// Left out when the value is one of these (compared case-insensitively); refused otherwise.
    pub drop_if: Option<Vec<String>>,
    /// Refused whatever the value.
    #[serde(default)]
    pub refuse: bool,
    /// Why, for messages (`the query cache was removed in MySQL 8.0.3`).
    pub why: String,
}

#[derive(Deserialize)]
struct Table {
    option: Vec<Rule>,
}

fn version(text: &str) -> Option<Version> {
    let n: Vec<u32> = text.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    (n.len() == 3).then(|| Version::new(n[0], n[1], n[2]))
}

impl Rule {
    /// True when servers of version `v` of the rule's family do not know the option.
    pub fn unknown_to(&self, v: Version) -> bool {
        self.always
            || self.unknown_before.as_deref().and_then(version).is_some_and(|b| v < b)
            || self.unknown_from.as_deref().and_then(version).is_some_and(|f| v >= f)
    }

    fn check(&self) -> Result<(), String> {
        let whens = [self.always, self.unknown_before.is_some(), self.unknown_from.is_some()];
        let insteads = [self.rename.is_some(), self.convert.is_some(), self.drop_if.is_some(), self.refuse];
        let one = |b: &[bool]| b.iter().filter(|x| **x).count() == 1;
        if !one(&whens) || !one(&insteads) {
            return Err(
                "needs one of always/unknown_before/unknown_from and one of rename/convert/drop_if/refuse".into()
            );
        }
        for v in self.unknown_before.iter().chain(&self.unknown_from) {
            version(v).ok_or_else(|| format!("bad version {v}"))?;
        }
        if let Some(c) = &self.convert {
            conversion(c).ok_or_else(|| format!("no conversion called {c}"))?;
        }
        if self.option != normalize_key(&self.option) || self.why.is_empty() {
            return Err("the option must be written normalised, with a reason".into());
        }
        Ok(())
    }
}

/// The rules of `data/options.toml`.
pub fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let table: Table = toml::from_str(TABLE).expect("data/options.toml parses");
        for r in &table.option {
            r.check().unwrap_or_else(|m| panic!("data/options.toml, {}: {m}", r.option));
        }
        table.option
    })
}

/// The conversion functions the table may name.
pub fn conversion(name: &str) -> Option<Conversion> {
    let f: Conversion = match name {
        "redo_as_two_files" => redo_as_two_files,
        "redo_as_one_file" => redo_as_one_file,
        "days_to_seconds" => days_to_seconds,
        "seconds_to_days" => seconds_to_days,
        "warnings_to_verbosity" => warnings_to_verbosity,
        "without_no_auto_create_user" => without_no_auto_create_user,
        _ => return None,
    };
    Some(f)
}

/// A size as my.cnf writes it (`512M`, `1G`, `1048576`), in bytes.
fn bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        (i, 't' | 'T') => (&t[..i], 1 << 40),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn size(b: u64) -> String {
    if b.is_multiple_of(1 << 30) {
        format!("{}G", b >> 30)
    } else if b.is_multiple_of(1 << 20) {
        format!("{}M", b >> 20)
    } else {
        b.to_string()
    }
}

fn one(k: &str, v: String) -> Option<Vec<(String, String)>> {
    Some(vec![(k.to_string(), v)])
}

/// The redo capacity as two files of half the size (MySQL before 8.0.30; its default was 2 files).
fn redo_as_two_files(v: &str) -> Option<Vec<(String, String)>> {
    let b = bytes(v)?;
    Some(vec![("innodb_log_file_size".into(), size(b / 2)), ("innodb_log_files_in_group".into(), "2".into())])
}

/// The redo capacity as MariaDB's single redo file (10.5 and later).
fn redo_as_one_file(v: &str) -> Option<Vec<(String, String)>> {
    one("innodb_log_file_size", size(bytes(v)?))
}

fn days_to_seconds(v: &str) -> Option<Vec<(String, String)>> {
    one("binlog_expire_logs_seconds", (v.trim().parse::<u64>().ok()? * 86_400).to_string())
}

fn seconds_to_days(v: &str) -> Option<Vec<(String, String)>> {
    let s: u64 = v.trim().parse().ok()?;
    one("expire_logs_days", s.div_ceil(86_400).to_string())
}

fn warnings_to_verbosity(v: &str) -> Option<Vec<(String, String)>> {
    let level = match v.trim().parse::<u64>().ok()? {
        0 => 1,
        1 => 2,
        _ => 3,
    };
    one("log_error_verbosity", level.to_string())
}

fn without_no_auto_create_user(v: &str) -> Option<Vec<(String, String)>> {
    let unquoted = v.trim().trim_matches(|c| c == '\'' || c == '"');
    let kept: Vec<&str> = unquoted
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty() && !m.eq_ignore_ascii_case("NO_AUTO_CREATE_USER"))
        .collect();
    one("sql_mode", kept.join(","))
}

fn family(flavor: Flavor) -> Family {
    match flavor {
        Flavor::Mariadb => Family::Mariadb,
        Flavor::Mysql | Flavor::Percona => Family::Mysql,
    }
}

/// The rule that makes `option` unknown to `flavor` `version`, if any.
pub fn rule_for(flavor: Flavor, version: Version, option: &str) -> Option<&'static Rule> {
    let f = family(flavor);
    rules().iter().find(|r| r.family == f && r.option == option && r.unknown_to(version))
}

/// What happens to one `name=value` on a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The server knows it.
    Keep,
    /// Written as these options instead (empty: left out), with why.
    Replace(Vec<(String, String)>, &'static str),
}

/// Decides about one option (normalised name) for `flavor` `version`; `Err` is a one-line refusal.
pub fn decide(flavor: Flavor, version: Version, option: &str, value: Option<&str>) -> Result<Outcome, String> {
    let Some(rule) = rule_for(flavor, version, option) else { return Ok(Outcome::Keep) };
    let shown = match value {
        Some(v) => format!("{option}={v}"),
        None => option.to_string(),
    };
    let refuse = || {
        format!(
            "{shown}: {}; {flavor} {version} does not know it (unknown variable '{shown}'). Remove it, or write \
             loose-{option} to let the server ignore it",
            rule.why
        )
    };
    let value = value.unwrap_or("1");
    let out = if let Some(to) = &rule.rename {
        vec![(to.clone(), value.to_string())]
    } else if let Some(c) = rule.convert.as_deref().and_then(conversion) {
        c(value).ok_or_else(refuse)?
    } else if rule.drop_if.as_ref().is_some_and(|vs| vs.iter().any(|v| v.eq_ignore_ascii_case(value.trim()))) {
        Vec::new()
    } else {
        return Err(refuse());
    };
    if out.len() == 1 && out[0].0 == option && out[0].1 == value {
        return Ok(Outcome::Keep);
    }
    // What it becomes must be known to the server too.
    for (k, _) in &out {
        if k != option && rule_for(flavor, version, k).is_some() {
            return Err(refuse());
        }
    }
    Ok(Outcome::Replace(out, &rule.why))
}

/// The groups of an option file the server reads.
fn server_group(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["mysqld", "server", "mariadb", "mariadbd", "client-server"].contains(&n.as_str())
        || n.starts_with("mysqld-")
        || n.starts_with("mariadb-")
        || n.starts_with("mariadbd-")
}

/// Rewrites the option file `text` of a sandbox of `build`: options its version does not know are
/// translated (with a comment saying why) or refused. `loose-` options are left to the server.
pub fn adapt(build: &Build, text: &str, path: &std::path::Path) -> Result<String, String> {
    let mut cnf = MyCnf::parse(text, path).map_err(|e| e.to_string())?;
    let mut changed = false;
    for section in cnf.sections_mut().iter_mut().filter(|s| server_group(s.name())) {
        let mut out = Vec::with_capacity(section.lines().len());
        for line in std::mem::take(section.lines_mut()) {
            let Line::Entry(e) = &line else {
                out.push(line);
                continue;
            };
            if e.is_loose() {
                out.push(line);
                continue;
            }
            let name = normalize_key(e.key());
            match decide(build.flavor, build.version, &name, e.value()).map_err(|m| format!("{}: {m}", build.name))? {
                Outcome::Keep => out.push(line),
                Outcome::Replace(new, why) => {
                    changed = true;
                    let shown = e.value().map(|v| format!("{name}={v}")).unwrap_or(name.clone());
                    let what = if new.is_empty() {
                        "left out".to_string()
                    } else {
                        let list: Vec<String> = new.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        format!("written as {}", list.join(" "))
                    };
                    out.push(Line::comment(&format!("versus: {shown}: {why}; {what}")));
                    out.extend(new.iter().map(|(k, v)| Line::Entry(Entry::new(k, Some(v)))));
                }
            }
        }
        *section.lines_mut() = out;
    }
    Ok(if changed { cnf.to_text() } else { text.to_string() })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::build;
    use super::*;

    fn on(flavor: Flavor, v: Version, text: &str) -> Result<String, String> {
        adapt(&build(flavor, v, true), text, std::path::Path::new("my.cnf"))
    }

    #[test]
    fn redo_capacity_is_translated_for_older_servers_and_mariadb() {
        let cnf = "[mysqld]\ninnodb_redo_log_capacity=2G\n";
        assert_eq!(on(Flavor::Mysql, Version::new(8, 0, 36), cnf).unwrap(), cnf, "known from 8.0.30");
        let t = on(Flavor::Mysql, Version::new(8, 0, 28), cnf).unwrap();
        assert!(t.contains("innodb_log_file_size=1G\ninnodb_log_files_in_group=2\n"), "{t}");
        assert!(
            t.contains("# versus: innodb_redo_log_capacity=2G: innodb_redo_log_capacity was added in MySQL 8.0.30"),
            "{t}"
        );
        assert!(!t.contains("\ninnodb_redo_log_capacity"), "{t}");
        let t = on(Flavor::Mariadb, Version::new(10, 11, 9), cnf).unwrap();
        assert!(t.contains("\ninnodb_log_file_size=2G\n"), "{t}");
    }

    #[test]
    fn removed_options_are_dropped_when_harmless_and_refused_otherwise() {
        let v8 = Version::new(8, 0, 36);
        let t = on(Flavor::Mysql, v8, "[mysqld]\nquery_cache_type=0\nquery-cache-size=0\nsync_binlog=1\n").unwrap();
        assert!(
            !t.contains("\nquery_cache_type=0") && !t.contains("\nquery-cache-size=0") && t.contains("sync_binlog=1"),
            "{t}"
        );
        let e = on(Flavor::Mysql, v8, "[mysqld]\nquery_cache_size=64M\n").unwrap_err();
        assert_eq!(
            e,
            "mysql-8.0.36: query_cache_size=64M: the query cache was removed in MySQL 8.0.3; mysql 8.0.36 does not know \
             it (unknown variable 'query_cache_size=64M'). Remove it, or write loose-query_cache_size to let the server \
             ignore it"
        );
        assert_eq!(
            on(Flavor::Mysql, Version::new(5, 7, 44), "[mysqld]\nquery_cache_size=64M\n").unwrap(),
            "[mysqld]\nquery_cache_size=64M\n"
        );
        assert_eq!(
            on(Flavor::Mariadb, Version::new(11, 8, 9), "[mysqld]\nquery_cache_size=64M\n").unwrap(),
            "[mysqld]\nquery_cache_size=64M\n"
        );
        // loose- options are the server's to ignore; other groups are not the server's.
        let loose = "[mysqld]\nloose-query_cache_size=64M\n[client]\nquery_cache_size=1\n";
        assert_eq!(on(Flavor::Mysql, v8, loose).unwrap(), loose);
        assert!(
            on(Flavor::Mysql, v8, "[mysqld]\ninnodb_file_format=Antelope\n")
                .unwrap_err()
                .contains("removed in MySQL 8.0.0")
        );
        assert!(on(Flavor::Mysql, v8, "[mysqld]\ninnodb_file_format=Barracuda\n").is_ok());
    }

    #[test]
    fn renames_and_unit_changes_follow_the_version() {
        let t = on(Flavor::Mysql, Version::new(8, 4, 0), "[mysqld]\nexpire_logs_days=7\n").unwrap();
        assert!(t.contains("binlog_expire_logs_seconds=604800"), "{t}");
        assert_eq!(
            on(Flavor::Mysql, Version::new(8, 0, 36), "[mysqld]\nexpire_logs_days=7\n").unwrap(),
            "[mysqld]\nexpire_logs_days=7\n"
        );
        let t = on(Flavor::Mysql, Version::new(5, 7, 44), "[mysqld]\nbinlog_expire_logs_seconds=90000\n").unwrap();
        assert!(t.contains("expire_logs_days=2"), "{t}");
        let t = on(Flavor::Mysql, Version::new(8, 0, 25), "[mysqld]\nlog_replica_updates=ON\n").unwrap();
        assert!(t.contains("\nlog_slave_updates=ON"), "{t}");
        let t = on(Flavor::Mariadb, Version::new(10, 6, 21), "[mysqld]\nlog-replica-updates\n").unwrap();
        assert!(t.contains("\nlog_slave_updates=1"), "{t}");
        let t = on(Flavor::Mysql, Version::new(8, 0, 36), "[mysqld]\ntx_isolation=READ-COMMITTED\n").unwrap();
        assert!(t.contains("\ntransaction_isolation=READ-COMMITTED"), "{t}");
        let t =
            on(Flavor::Mysql, Version::new(8, 0, 36), "[mysqld]\nsql_mode=STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER\n")
                .unwrap();
        assert!(t.contains("\nsql_mode=STRICT_TRANS_TABLES\n"), "{t}");
        assert!(
            on(Flavor::Mysql, Version::new(8, 0, 36), "[mysqld]\nsql_mode=STRICT_TRANS_TABLES\n")
                .unwrap()
                .ends_with("sql_mode=STRICT_TRANS_TABLES\n")
        );
        let e =
            on(Flavor::Mysql, Version::new(8, 4, 0), "[mysqld]\ndefault_authentication_plugin=mysql_native_password\n")
                .unwrap_err();
        assert!(e.contains("removed in MySQL 8.4.0") && e.contains("mysql 8.4.0 does not know it"), "{e}");
        assert!(on(Flavor::Mysql, Version::new(5, 7, 44), "[mysqld]\nmysqlx=OFF\n").is_ok());
        assert!(on(Flavor::Mariadb, Version::new(10, 5, 9), "[mysqld]\nmysqlx=ON\n").is_err());
    }

    #[test]
    fn the_table_is_consistent() {
        assert!(rules().len() > 40, "data/options.toml is read");
        for r in rules() {
            if let Some(to) = &r.rename {
                assert_ne!(to, &r.option);
            }
        }
        assert_eq!(bytes("512M"), Some(512 << 20));
        assert_eq!(bytes("1g"), Some(1 << 30));
        assert_eq!(bytes("x"), None);
    }
}
