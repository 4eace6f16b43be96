//! What B accepts at startup: B is started (fresh datadir, no workload) with A's values of every
//! candidate; a variable B refuses (its error names it, or halving finds it) or reports with another
//! value is dropped and listed as unexplainable by configuration.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::bisect::Candidate;
use super::noise::NoiseKind;
use super::targets::TargetSpec;
use crate::error::{Error, Result};
use crate::server::effective::{option_variables, same_value};
use crate::server::{Home, Sandbox, SandboxSpec, admin};

/// Why a differing variable is not bisected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum SkipReason {
    /// It exists only on A: the gap it causes, if any, cannot be explained by configuration.
    NotOnB,
    /// It exists only on B: there is no A value to give it.
    OnlyOnB,
    /// Its difference is noise (paths, ports, ids, versions, host-sized or derived).
    Noise(NoiseKind),
    /// B refused to start with A's value (the server's words).
    Rejected(String),
    /// B started but reports another value than A's (the value it reports).
    Adjusted(String),
}

impl SkipReason {
    /// Whether the variable is unexplainable by configuration (as opposed to irrelevant noise).
    pub fn unexplainable(&self) -> bool {
        !matches!(self, SkipReason::Noise(_))
    }

    /// Words for a table.
    pub fn text(&self) -> String {
        match self {
            SkipReason::NotOnB => "does not exist on B".into(),
            SkipReason::OnlyOnB => "exists only on B".into(),
            SkipReason::Noise(k) => format!("noise ({})", k.label()),
            SkipReason::Rejected(why) => format!("B does not start with A's value: {why}"),
            SkipReason::Adjusted(got) => format!("B reports {got} when given A's value"),
        }
    }
}

/// A differing variable that is not bisected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Variable name.
    pub name: String,
    /// A's value.
    pub a: Option<String>,
    /// B's value.
    pub b: Option<String>,
    /// Why.
    pub reason: SkipReason,
}

/// The override that gives a variable a value at startup (`log_bin` is an option without a value).
pub fn override_for(name: &str, value: &str) -> String {
    match (name, value.to_ascii_uppercase().as_str()) {
        ("log_bin", "ON" | "1") => "log-bin".into(),
        ("log_bin", "OFF" | "0") => "skip-log-bin".into(),
        _ => format!("{name}={value}"),
    }
}

/// `base` with `extra` on top: an override of `base` that sets a variable of `extra` is dropped, so
/// that `skip-log-bin` does not fight `log-bin`.
pub fn merge_overrides(base: &[String], extra: &[String]) -> Vec<String> {
    let vars_of = |o: &str| {
        let name = o.split('=').next().unwrap_or(o);
        option_variables(name)
    };
    let replaced: Vec<String> = extra.iter().flat_map(|o| vars_of(o)).collect();
    let mut out: Vec<String> =
        base.iter().filter(|o| !vars_of(o).iter().any(|v| replaced.contains(v))).cloned().collect();
    out.extend(extra.iter().cloned());
    out
}

/// The overrides that give B A's values of `set`.
pub(super) fn overrides_with(b: &TargetSpec, candidates: &[Candidate], set: &[usize]) -> Vec<String> {
    let extra: Vec<String> = set.iter().map(|&i| override_for(&candidates[i].name, &candidates[i].a)).collect();
    merge_overrides(&b.overrides, &extra)
}

/// Starts B with A's values of `set`; `Ok(variables)` or the server's error.
fn try_start(
    home: &Home,
    b: &TargetSpec,
    c: &[Candidate],
    set: &[usize],
    work: &Path,
) -> Result<std::result::Result<BTreeMap<String, String>, String>> {
    let dir = work.join("preflight");
    crate::owned::remove(&dir)?;
    let mut spec = SandboxSpec::new("preflight", home.build(&b.build)?, &dir);
    spec.base_config = b.config.clone();
    spec.overrides = overrides_with(b, c, set);
    spec.fresh = true;
    let outcome = match Sandbox::start(spec) {
        Ok(mut sb) => {
            let vars = sb.connect_root().and_then(|mut conn| admin::global_variables(&mut conn));
            sb.stop()?;
            Ok(vars?.into_iter().collect())
        }
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => Err(e.to_string()),
    };
    let _ = crate::owned::remove(&dir);
    Ok(outcome)
}

/// The candidate a startup error names (`unknown variable 'x=…'`, `Error while setting value '…' to 'x'`).
pub(super) fn named_in_error(error: &str, c: &[Candidate], among: &[usize]) -> Option<usize> {
    let lower = error.to_ascii_lowercase();
    among.iter().copied().find(|&i| {
        let n = c[i].name.to_ascii_lowercase();
        let dashed = n.replace('_', "-");
        [
            format!("variable '{n}"),
            format!("variable '{dashed}"),
            format!("to '{n}'"),
            format!("option '--{n}"),
            format!("option '--{dashed}"),
        ]
        .iter()
        .any(|p| lower.contains(p.as_str()))
    })
}

/// Keeps the candidates B starts with; the others are skipped with the server's words or the value
/// B reports instead.
pub fn preflight(
    home: &Home,
    b: &TargetSpec,
    candidates: Vec<Candidate>,
    work: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<(Vec<Candidate>, Vec<Skipped>)> {
    let mut live: Vec<usize> = (0..candidates.len()).collect();
    let mut refused: Vec<Skipped> = Vec::new();
    let skip = |i: usize, reason: SkipReason| Skipped {
        name: candidates[i].name.clone(),
        a: Some(candidates[i].a.clone()),
        b: Some(candidates[i].b.clone()),
        reason,
    };
    let mut attempts = 0;
    let vars = loop {
        attempts += 1;
        if attempts > 2 * candidates.len() + 4 {
            return Err(Error::Other(format!(
                "B does not start with A's values and the failing variable could not be found after {} attempts",
                attempts - 1
            )));
        }
        let error = match try_start(home, b, &candidates, &live, work)? {
            Ok(vars) => break vars,
            Err(e) => e,
        };
        let culprit = match named_in_error(&error, &candidates, &live) {
            Some(i) => Some((i, error.clone())),
            None => {
                // The message names no variable: halve until one variable alone fails.
                let mut group = live.clone();
                let mut found = None;
                while group.len() > 1 {
                    attempts += 1;
                    let first = group[..group.len() / 2].to_vec();
                    match try_start(home, b, &candidates, &first, work)? {
                        Err(_) => group = first,
                        Ok(_) => group = group[group.len() / 2..].to_vec(),
                    }
                }
                if let Some(&i) = group.first()
                    && let Err(e) = try_start(home, b, &candidates, &[i], work)?
                {
                    found = Some((i, e));
                }
                found
            }
        };
        let Some((i, why)) = culprit else {
            return Err(Error::Other(format!("B does not start with A's values: {error}")));
        };
        let short = why.rsplit(" | ").find(|p| p.contains(&candidates[i].name)).unwrap_or(&why).trim().to_string();
        log(&format!("  B refuses {}={}: {short}", candidates[i].name, candidates[i].a));
        refused.push(skip(i, SkipReason::Rejected(short)));
        live.retain(|&x| x != i);
        if live.is_empty() {
            break BTreeMap::new();
        }
    };
    let mut ok = Vec::new();
    for i in live {
        let c = &candidates[i];
        match vars.get(&c.name) {
            Some(got) if !same_value(got, &c.a) => {
                log(&format!("  B takes {}={} as {got}", c.name, c.a));
                refused.push(skip(i, SkipReason::Adjusted(got.clone())));
            }
            _ => ok.push(c.clone()),
        }
    }
    Ok((ok, refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_for_variables_and_merging() {
        assert_eq!(override_for("log_bin", "ON"), "log-bin");
        assert_eq!(override_for("log_bin", "OFF"), "skip-log-bin");
        assert_eq!(override_for("sync_binlog", "0"), "sync_binlog=0");
        let base: Vec<String> =
            ["skip-log-bin", "sync-binlog=1", "innodb_buffer_pool_size=1G"].map(String::from).into();
        let got = merge_overrides(&base, &["log-bin".into(), "sync_binlog=0".into()]);
        assert_eq!(got, ["innodb_buffer_pool_size=1G", "log-bin", "sync_binlog=0"]);
    }

    #[test]
    fn startup_errors_name_the_variable() {
        let c: Vec<Candidate> = ["binlog_format", "sync_binlog", "innodb_adaptive_hash_index_parts"]
            .iter()
            .map(|n| Candidate { name: n.to_string(), a: "x".into(), b: "y".into() })
            .collect();
        let all = [0, 1, 2];
        let maria = "server preflight: initialising the datadir failed: /usr/sbin/mariadbd: unknown variable \
                     'innodb_adaptive_hash_index_parts=8' | Aborting";
        assert_eq!(named_in_error(maria, &c, &all), Some(2));
        let value = "... [ERROR] /usr/sbin/mariadbd: Error while setting value 'XYZ' to 'binlog_format'";
        assert_eq!(named_in_error(value, &c, &all), Some(0));
        let mysql = "[ERROR] [MY-000067] [Server] unknown variable 'sync_binlog=7'.";
        assert_eq!(named_in_error(mysql, &c, &all), Some(1));
        assert_eq!(named_in_error("the server died", &c, &all), None);
        assert_eq!(named_in_error(maria, &c, &[0, 1]), None, "only live candidates count");
    }
}
