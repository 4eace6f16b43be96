//! What B accepts at startup: B is started (fresh datadir, no workload) with A's values of every
//! candidate; a variable B refuses (its error names it, or halving finds it) or reports with another
//! value is dropped and listed as unexplainable by configuration.

use std::collections::BTreeMap;
use std::path::Path;

use super::bisect::Suspect;
use super::skip::{SkipReason, Skipped};
use super::targets::{TargetSpec, session_values};
use super::transfer::{charset_with, expectations, options_of, overrides_with, reported};
use crate::error::{Error, Result};
use crate::server::effective::same_value;
use crate::server::{Home, Sandbox, SandboxSpec, admin};

/// Starts B with A's values of `set`; `Ok(variables)` or the server's error.
fn try_start(
    home: &Home,
    b: &TargetSpec,
    c: &[Suspect],
    set: &[usize],
    work: &Path,
) -> Result<std::result::Result<BTreeMap<String, String>, String>> {
    let dir = work.join("preflight");
    crate::owned::remove(&dir)?;
    let mut spec = SandboxSpec::new("preflight", home.build(&b.build)?, &dir);
    spec.base_config = b.config.clone();
    spec.overrides = overrides_with(b, c, set);
    spec.fresh = true;
    // A client-side candidate's SET NAMES is tried on a workload connection.
    let charset = charset_with(b, c, set).filter(|_| set.iter().any(|&i| c[i].transfer.charset.is_some()));
    let outcome = match Sandbox::start(spec) {
        Ok(mut sb) => {
            let vars = sb.connect_root().and_then(|mut conn| admin::global_variables(&mut conn));
            let session = match &charset {
                Some(cs) => session_values(&sb, Some(cs)).map(|_| ()),
                None => Ok(()),
            };
            sb.stop()?;
            match session {
                Err(e) => Err(e.to_string()),
                Ok(()) => Ok(vars?.into_iter().collect()),
            }
        }
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => Err(e.to_string()),
    };
    let _ = crate::owned::remove(&dir);
    Ok(outcome)
}

/// The candidate a startup error names (`unknown variable 'x=…'`, `Error while setting value '…' to 'x'`):
/// the first whose options set the variable named.
pub(super) fn named_in_error(error: &str, c: &[Suspect], among: &[usize]) -> Option<usize> {
    let lower = error.to_ascii_lowercase();
    let set_names = among.iter().copied().find(|&i| {
        c[i].transfer.charset.as_ref().is_some_and(|cs| lower.contains(&cs.statement().to_ascii_lowercase()))
    });
    if set_names.is_some() {
        return set_names;
    }
    among.iter().copied().find(|&i| {
        options_of(&c[i]).iter().any(|o| {
            let n = crate::server::variables::option_variable(o);
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
    })
}

/// Keeps the candidates B starts with; the others are skipped with the server's words or the value
/// B reports instead.
pub fn preflight(
    home: &Home,
    b: &TargetSpec,
    candidates: Vec<Suspect>,
    work: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<(Vec<Suspect>, Vec<Skipped>)> {
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
        let adjusted: Vec<String> = expectations(c)
            .into_iter()
            .filter_map(|(var, want)| {
                let got = reported(&vars, &var)?;
                (!same_value(&got, &want)).then(|| if c.name == var { got } else { format!("{var}={got}") })
            })
            .collect();
        if adjusted.is_empty() {
            ok.push(c.clone());
        } else {
            let got = adjusted.join(", ");
            log(&format!("  B takes {}={} as {got}", c.name, c.a));
            refused.push(skip(i, SkipReason::Adjusted(got)));
        }
    }
    Ok((ok, refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_for_variables_and_merging() {
        use super::super::transfer::{merge_overrides, override_for};
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
        let c: Vec<Suspect> = ["binlog_format", "sync_binlog", "innodb_adaptive_hash_index_parts"]
            .iter()
            .map(|n| Suspect::new(*n, "x", "y"))
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
