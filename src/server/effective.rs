//! Requested against effective values: which variables an option file and `--set` options set, whether
//! two spellings of a value mean the same, and which requested values the server clamped or adjusted
//! when it started (`innodb_flush_log_at_trx_commit=7` runs as 2). Every sandbox start checks this
//! ([`crate::server::Sandbox::adjusted`]); explain's pre-flight uses the same rules.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::error::Result;
use crate::server::config;
use crate::server::mycnf::{self, normalize_key};

/// The option groups a MySQL or MariaDB server reads from its option file.
pub const SERVER_GROUPS: &[&str] = &["mysqld", "server", "mariadb", "mariadbd", "client-server"];

/// Option names that set the same variable under two names (old and new terminology).
const ALIASES: &[(&str, &str)] = &[
    ("log_slave_updates", "log_replica_updates"),
    ("slave_parallel_workers", "replica_parallel_workers"),
    ("slave_parallel_type", "replica_parallel_type"),
    ("slave_preserve_commit_order", "replica_preserve_commit_order"),
    ("tx_isolation", "transaction_isolation"),
    ("tx_read_only", "transaction_read_only"),
];

/// Options whose value is not the value of the variable of the same name: `log-bin=NAME` names the
/// log's files and turns `log_bin` ON.
const VALUE_MEANS_ON: &[&str] = &["log_bin"];

/// The variables an option name sets: the name with `-`/`_` and `loose-` normalised, without a
/// `skip-`/`disable-`/`enable-` prefix, and its other spelling for renamed variables.
pub fn option_variables(option: &str) -> Vec<String> {
    let n = normalize_key(option).to_ascii_lowercase();
    let base = ["skip_", "disable_", "enable_"]
        .iter()
        .find_map(|p| n.strip_prefix(p).filter(|r| !r.is_empty()))
        .map(str::to_string)
        .unwrap_or(n);
    let mut out = vec![base.clone()];
    for (x, y) in ALIASES {
        if base == *x {
            out.push(y.to_string());
        } else if base == *y {
            out.push(x.to_string());
        }
    }
    out
}

/// Whether two values of a variable mean the same: equal ignoring ASCII case, equal as numbers, or
/// the same elements of a comma-separated list in any order.
pub fn same_value(x: &str, y: &str) -> bool {
    if x == y || x.eq_ignore_ascii_case(y) {
        return true;
    }
    // Integers as integers: as doubles, 18446744073709551614 and ...615 (a u64 variable's clamp) are one.
    if let (Ok(p), Ok(q)) = (x.trim().parse::<i128>(), y.trim().parse::<i128>()) {
        return p == q;
    }
    if let (Ok(p), Ok(q)) = (x.trim().parse::<f64>(), y.trim().parse::<f64>()) {
        return p == q;
    }
    if x.contains(',') || y.contains(',') {
        return list_elements(x) == list_elements(y);
    }
    false
}

/// The elements of a comma-separated list, trimmed and in lower case.
pub fn list_elements(v: &str) -> BTreeSet<String> {
    v.split(',').map(|e| e.trim().to_ascii_lowercase()).filter(|e| !e.is_empty()).collect()
}

/// One option as requested: the option name as written and its value (`None` for a bare flag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    /// The option as written (`innodb-flush-log-at-trx-commit`, `skip-log-bin`).
    pub option: String,
    /// Its value; `None` for a flag.
    pub value: Option<String>,
}

/// The options a base option file (its server groups, `!include`s followed) and `--set` overrides
/// request, in that order. A file that cannot be read is an error naming it.
pub fn requested(config_file: Option<&Path>, overrides: &[String]) -> Result<Vec<Requested>> {
    let mut out = Vec::new();
    if let Some(path) = config_file {
        for o in mycnf::resolve(path, SERVER_GROUPS)?.iter() {
            out.push(Requested { option: o.key.clone(), value: o.value().map(str::to_string) });
        }
    }
    for o in overrides {
        let (option, value) = config::parse_override(o)?;
        out.push(Requested { option, value });
    }
    Ok(out)
}

/// A requested value the server runs with differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjusted {
    /// The variable (`innodb_flush_log_at_trx_commit`).
    pub variable: String,
    /// The value asked for, as written (`7`; `ON` for a flag, `OFF` for `skip-`).
    pub requested: String,
    /// What `SHOW GLOBAL VARIABLES` says.
    pub effective: String,
}

impl std::fmt::Display for Adjusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={} runs as {}", self.variable, self.requested, self.effective)
    }
}

/// The requested values that the server's variables do not show. Later requests of a variable win
/// (as they do in the server); options without a variable of their name (`server-id` is one,
/// `skip-grant-tables` is not a variable) are checked only when the server reports the variable;
/// paths are not compared (the server resolves them).
pub fn adjusted(requested: &[Requested], variables: &[(String, String)]) -> Vec<Adjusted> {
    let vars: HashMap<String, &str> = variables.iter().map(|(n, v)| (n.to_ascii_lowercase(), v.as_str())).collect();
    let mut wanted: Vec<(String, String)> = Vec::new();
    for r in requested {
        let Some((variable, value)) = expected(r, &vars) else { continue };
        wanted.retain(|(v, _)| *v != variable);
        wanted.push((variable, value));
    }
    wanted
        .into_iter()
        .filter_map(|(variable, value)| {
            let effective = vars.get(&variable)?;
            (!means_same(&value, effective)).then(|| Adjusted {
                variable,
                requested: value,
                effective: effective.to_string(),
            })
        })
        .collect()
}

/// The variable a request sets and the value it should show; `None` when the server has no such
/// variable or the value is a path.
fn expected(r: &Requested, vars: &HashMap<String, &str>) -> Option<(String, String)> {
    let full = normalize_key(&r.option).to_ascii_lowercase();
    let negated = ["skip_", "disable_"].iter().any(|p| full.starts_with(p));
    let value = r.value.as_deref().map(str::trim);
    // `skip-name-resolve` is itself a variable; `skip-log-bin` turns `log_bin` off.
    if vars.contains_key(&full) && !full.starts_with("enable_") {
        // `log_bin=NAME` names the files and turns the variable ON.
        let value = if VALUE_MEANS_ON.contains(&full.as_str()) { "ON" } else { value.unwrap_or("ON") };
        return Some((full, value.to_string()));
    }
    let variable = option_variables(&full).into_iter().find(|v| vars.contains_key(v))?;
    let value = match (negated, value) {
        (true, None) => "OFF".to_string(),
        (true, Some(v)) => if is_true(v) { "OFF" } else { "ON" }.to_string(),
        (false, None) => "ON".to_string(),
        (false, Some(_)) if VALUE_MEANS_ON.contains(&variable.as_str()) => "ON".to_string(),
        (false, Some(v)) => v.to_string(),
    };
    (!value.contains('/')).then_some((variable, value))
}

fn is_true(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "1" | "on" | "true" | "yes")
}

fn is_false(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "0" | "off" | "false" | "no")
}

/// A size with an optional K/M/G/T suffix (powers of 1024), as the server reads it: a whole number of
/// bytes, exact (a double would make sizes near 2^64 that differ by a few bytes the same).
fn size(v: &str) -> Option<u128> {
    let v = v.trim();
    let (digits, shift) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 10),
        'M' => (&v[..v.len() - 1], 20),
        'G' => (&v[..v.len() - 1], 30),
        'T' => (&v[..v.len() - 1], 40),
        _ => (v, 0),
    };
    digits.trim().parse::<u128>().ok()?.checked_mul(1 << shift)
}

/// Whether a requested value and the server's value of a variable mean the same: [`same_value`],
/// booleans in any spelling, sizes with suffixes, and `key=value` lists (`optimizer_switch`) of which
/// only the requested keys are compared.
fn means_same(requested: &str, effective: &str) -> bool {
    if same_value(requested, effective) {
        return true;
    }
    if (is_true(requested) && is_true(effective)) || (is_false(requested) && is_false(effective)) {
        return true;
    }
    if let (Some(a), Some(b)) = (size(requested), size(effective)) {
        return a == b;
    }
    if requested.contains('=') {
        let have = list_elements(effective);
        return list_elements(requested).iter().all(|e| have.contains(e));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(items: &[&str]) -> Vec<Requested> {
        items
            .iter()
            .map(|o| match o.split_once('=') {
                Some((n, v)) => Requested { option: n.into(), value: Some(v.into()) },
                None => Requested { option: o.to_string(), value: None },
            })
            .collect()
    }

    fn vars(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn clamped_and_adjusted_values_are_found() {
        let v = vars(&[
            ("innodb_flush_log_at_trx_commit", "2"),
            ("log_bin", "OFF"),
            ("sync_binlog", "0"),
            ("innodb_buffer_pool_size", "134217728"),
            ("optimizer_switch", "index_merge=on,mrr=off,hash_join=off"),
            ("skip_name_resolve", "ON"),
            ("performance_schema", "OFF"),
            ("character_set_server", "utf8mb3"),
            ("log_error", "/tmp/x/error.log"),
            ("server_id", "1"),
        ]);
        let r = req(&[
            "innodb-flush-log-at-trx-commit=1",
            "innodb_flush_log_at_trx_commit=7",
            "skip-log-bin",
            "sync_binlog=0",
            "innodb_buffer_pool_size=128M",
            "optimizer_switch=mrr=off",
            "skip-name-resolve",
            "loose-enable-performance-schema",
            "character-set-server=utf8",
            "server-id=1",
            "no_such_option=3",
        ]);
        let got: Vec<String> = adjusted(&r, &v).iter().map(|a| a.to_string()).collect();
        assert_eq!(
            got,
            [
                "innodb_flush_log_at_trx_commit=7 runs as 2",
                "performance_schema=ON runs as OFF",
                "character_set_server=utf8 runs as utf8mb3"
            ]
        );
        let on = vars(&[("log_bin", "ON"), ("optimizer_switch", "mrr=on")]);
        assert_eq!(adjusted(&req(&["log-bin=mysql-bin", "log_bin"]), &on), []);
        assert_eq!(adjusted(&req(&["log_bin=binlog"]), &on), []);
        assert_eq!(adjusted(&req(&["optimizer_switch=mrr=off"]), &on)[0].effective, "mrr=on");
        assert_eq!(adjusted(&req(&["skip-log-bin"]), &on)[0].to_string(), "log_bin=OFF runs as ON");
    }

    #[test]
    fn requested_from_a_file_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let cnf = dir.path().join("my.cnf");
        std::fs::write(&cnf, "[mysqld]\ninnodb-buffer-pool-size=1G\nloose-skip-log-bin\n[client]\nuser=x\n").unwrap();
        let r = requested(Some(&cnf), &["sync_binlog=0".into()]).unwrap();
        let names: Vec<(&str, Option<&str>)> = r.iter().map(|r| (r.option.as_str(), r.value.as_deref())).collect();
        assert_eq!(
            names,
            [("innodb-buffer-pool-size", Some("1G")), ("loose-skip-log-bin", None), ("sync_binlog", Some("0"))]
        );
        let v = vars(&[("innodb_buffer_pool_size", "1073741824"), ("log_bin", "OFF"), ("sync_binlog", "0")]);
        assert_eq!(adjusted(&r, &v), []);
        assert!(requested(Some(&dir.path().join("nope.cnf")), &[]).unwrap_err().to_string().contains("nope.cnf"));
    }

    #[test]
    fn spelling_differences_are_not_differences() {
        assert!(same_value("10", "10.000000"));
        assert!(same_value("ON", "on"));
        assert!(same_value("A,B,C", "C,A,B"));
        assert!(!same_value("A,B", "A,B,C"));
        assert!(!same_value("0", "1"));
        assert!(!same_value("", "0"));
        // Near 2^64, integers that one double holds stay different numbers.
        assert!(!same_value("18446744073709551614", "18446744073709551615"));
        assert!(!means_same("18446744073709551614", "18446744073709551615"));
        assert!(means_same("16777216T", "18446744073709551616"));
        assert!(means_same("1G", "1073741824"));
    }
}
