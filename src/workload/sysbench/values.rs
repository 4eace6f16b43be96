//! Option values read with sysbench's rules: booleans, sizes, counts, lists, TLS files, deprecated
//! spellings and `--config-file` lines, each error naming the option at fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::spec;
use crate::driver::tls::{SslMode, Tls};
use crate::error::{Error, Result};

pub(super) fn dashed(name: &str) -> String {
    name.replace('_', "-")
}

pub(super) fn unknown_option(name: &str) -> Error {
    let hint = match spec::closest(name) {
        Some(n) => format!("unknown option; did you mean --{}?", dashed(n)),
        None => "unknown option; see 'versus sysbench --help'".to_string(),
    };
    Error::option(format!("--{}", dashed(name)), hint)
}

pub(super) fn read_config_file(path: &str) -> Result<Vec<(String, String)>> {
    let text = crate::input::read_text(std::path::Path::new(path))?;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, "on"));
        let k = k.trim().trim_start_matches("--").replace('-', "_");
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
        if spec::find(&k).is_none() {
            return Err(Error::file(path, format!("{}", unknown_option(&k))));
        }
        out.push((k, v.to_string()));
    }
    Ok(out)
}

pub(super) fn raw<'a>(values: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    values.get(name).map(|s| s.as_str()).or_else(|| spec::find(name).and_then(|s| s.default)).unwrap_or("")
}

pub(super) fn bad(name: &str, v: &str, what: &str) -> Error {
    Error::option(format!("--{}", dashed(name)), format!("invalid value '{v}': {what}"))
}

/// A boolean option: `on|true|1` or `off|false|0`, lower case, the spellings sysbench accepts.
pub fn flag(values: &BTreeMap<String, String>, name: &str) -> Result<bool> {
    match raw(values, name) {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        v => Err(bad(name, v, "expected on or off")),
    }
}

/// A SIZE option (`64K`, `1M`): bytes, more than 0 and below 2 GiB as sysbench requires.
pub(super) fn size(values: &BTreeMap<String, String>, name: &str) -> Result<u64> {
    let v = raw(values, name);
    let (digits, unit) = match v.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => v.split_at(i),
        None => (v, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad(name, v, "expected a size such as 64K or 1M")),
    };
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << shift)) {
        Some(n) if n > 0 && n < 1 << 31 => Ok(n),
        _ => Err(bad(name, v, "expected a size above 0 and below 2G, such as 64K")),
    }
}

pub(super) fn int(values: &BTreeMap<String, String>, name: &str) -> Result<u64> {
    let v = raw(values, name);
    v.trim().parse::<u64>().map_err(|_| {
        if v.trim().starts_with('-') {
            bad(name, v, "must not be negative")
        } else {
            bad(name, v, "expected an integer")
        }
    })
}

pub(super) fn num(values: &BTreeMap<String, String>, name: &str) -> Result<f64> {
    let v = raw(values, name);
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err(bad(name, v, "must be a non-negative number")),
        Err(_) => Err(bad(name, v, "expected a number")),
    }
}

/// A count (`--tables`, `--table-size` …): a whole number from 0 to `u32::MAX`, as digits, or in a
/// float's form (`1e3`, or `1000.0` from a TOML float) when that is a whole number a float holds exactly.
/// Never truncated: 2.5 tables, or 9.2e18 rows read as a double, are refused.
pub(super) fn count(values: &BTreeMap<String, String>, name: &str) -> Result<u32> {
    const EXACT: f64 = (1u64 << f64::MANTISSA_DIGITS) as f64;
    let v = raw(values, name);
    let t = v.trim();
    let range = || format!("expected a whole number from 0 to {}", u32::MAX);
    let n = match (t.parse::<u64>(), t.parse::<f64>()) {
        (Ok(n), _) => n,
        (_, Ok(x)) if x < 0.0 || t.starts_with('-') => return Err(bad(name, v, "must not be negative")),
        (_, Ok(x)) if x.fract() == 0.0 && x < EXACT => x as u64,
        _ => return Err(bad(name, v, &range())),
    };
    u32::try_from(n).map_err(|_| bad(name, v, &range()))
}

/// `--mysql-ssl` (on/off or a mode) and its certificate files; sysbench 1.0's files in the current
/// directory fill in what the options leave unset.
pub(super) fn tls(values: &BTreeMap<String, String>) -> Result<Tls> {
    let v = raw(values, "mysql_ssl");
    let mode = SslMode::parse(v).ok_or_else(|| {
        bad("mysql_ssl", v, "expected on, off or DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY")
    })?;
    let file = |name: &str| -> Result<Option<PathBuf>> {
        match raw(values, name) {
            "" => Ok(None),
            f if Path::new(f).is_file() => Ok(Some(PathBuf::from(f))),
            f => Err(bad(name, f, "no such file")),
        }
    };
    let t = Tls { mode, ca: file("mysql_ssl_ca")?, cert: file("mysql_ssl_cert")?, key: file("mysql_ssl_key")? };
    if t.cert.is_some() != t.key.is_some() {
        let missing = if t.cert.is_some() { "--mysql-ssl-key" } else { "--mysql-ssl-cert" };
        return Err(Error::option(missing, "--mysql-ssl-cert and --mysql-ssl-key go together; give both"));
    }
    if !t.enabled() {
        return Ok(t);
    }
    Ok(match std::env::current_dir() {
        Ok(dir) => t.with_legacy_files(&dir),
        Err(_) => t,
    })
}

pub(super) fn list(values: &BTreeMap<String, String>, name: &str) -> Vec<String> {
    raw(values, name).split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

pub(super) fn deprecated(
    values: &BTreeMap<String, String>,
    old: &str,
    new: &str,
    w: &mut Vec<String>,
) -> Result<Option<u64>> {
    if !values.contains_key(old) {
        return Ok(None);
    }
    let v = int(values, old)?;
    let used = if old == "num_threads" { v > 1 } else { v > 0 };
    if !used {
        return Ok(None);
    }
    w.push(format!("WARNING: --{} is deprecated, use --{} instead", dashed(old), dashed(new)));
    Ok(Some(v))
}
