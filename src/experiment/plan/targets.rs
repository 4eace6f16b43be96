//! The targets of an experiment file (builds × configs, or explicit targets) and the data-shaping key
//! of each one's server: which options decide what `prepare` creates on its server line.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Target, TargetKind};
use crate::experiment::spec::{ExperimentFile, TargetDef, set_to_overrides};
use crate::experiment::topology::Replication;
use crate::server::variables::{self, Line};
use crate::workload::ConnectionCharset;

/// The targets of `file`, and the problems of those that cannot be built.
pub(super) fn targets(file: &ExperimentFile, base_dir: &Path) -> (Vec<Target>, Vec<String>) {
    let configs: BTreeMap<&str, _> = file.configs.iter().map(|c| (c.name.as_str(), c)).collect();
    // The target's own character set wins over its config's.
    let charset = |own: Option<&TargetDef>, config: Option<&str>| -> Result<Option<ConnectionCharset>, String> {
        match own.filter(|t| t.charset.is_some()) {
            Some(t) => ConnectionCharset::new(t.charset.as_deref(), t.collation.as_deref()),
            None => match config.map(|c| configs[c]) {
                Some(c) => ConnectionCharset::new(c.charset.as_deref(), c.collation.as_deref()),
                None => Ok(None),
            },
        }
    };
    let sandbox = |build: &str, config: Option<&str>, own: Option<&TargetDef>| -> Result<Target, String> {
        let (base_file, mut overrides, cname) = match config {
            Some(name) => {
                let c = configs[name];
                let base = c.file.as_ref().map(|p| base_dir.join(p));
                (base, set_to_overrides(&c.set, &format!("config '{name}'"))?, name.to_string())
            }
            None => (None, Vec::new(), "default".to_string()),
        };
        if let Some(t) = own {
            overrides.extend(set_to_overrides(&t.set, &format!("target {build}"))?);
        }
        let label = match (own.and_then(|t| t.name.as_deref()), config) {
            (Some(l), _) => l.to_string(),
            (None, Some(c)) => format!("{build}/{c}"),
            (None, None) => build.to_string(),
        };
        // The target's own topology replaces its config's.
        let replication = match own.and_then(|t| t.replication.as_ref()) {
            Some(r) => Some((r, format!("target {label}"))),
            None => config.and_then(|c| configs[c].replication.as_ref().map(|r| (r, format!("config '{c}'")))),
        };
        let replication = match replication {
            Some((r, what)) => {
                Some(Replication::of(r, set_to_overrides(&r.replica_set, &format!("{what}: replication"))?))
            }
            None => None,
        };
        let kind = TargetKind::Sandbox { build: build.into(), config: cname, base_file, overrides };
        Ok(Target { label, kind, charset: charset(own, config)?, replication })
    };
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut keep = |t: Result<Target, String>| match t {
        Ok(t) => out.push(t),
        Err(e) => problems.push(e),
    };
    if file.targets.is_empty() {
        let names: Vec<Option<&str>> = if file.configs.is_empty() {
            vec![None]
        } else {
            file.configs.iter().map(|c| Some(c.name.as_str())).collect()
        };
        for b in &file.builds {
            for c in &names {
                keep(sandbox(b, *c, None));
            }
        }
    } else {
        for t in &file.targets {
            match (&t.build, &t.address) {
                (Some(b), _) => keep(sandbox(b, t.config.as_deref(), Some(t))),
                (None, Some(a)) if t.replication.is_some() => keep(Err(format!(
                    "target {}: replication needs a server versus starts (a build); an external server's replicas \
                     are its own",
                    t.name.as_deref().unwrap_or(a)
                ))),
                (None, Some(a)) => keep(charset(Some(t), None).map(|charset| Target {
                    charset,
                    replication: None,
                    label: t.name.clone().unwrap_or_else(|| a.clone()),
                    kind: TargetKind::External {
                        address: a.clone(),
                        user: t.user.clone().unwrap_or_else(|| crate::server::sandbox::DEFAULT_USER.into()),
                        password_env: t.password_env.clone(),
                        database: t.database.clone().unwrap_or_else(|| crate::server::sandbox::DEFAULT_DATABASE.into()),
                        replace_tables: t.replace_tables,
                    },
                })),
                (None, None) => unreachable!("checked when the file was parsed"),
            }
        }
    }
    // Labels that differ only by Unicode normalisation or spacing would print as one target.
    if let Err(m) = crate::experiment::names::check("target", out.iter().map(|t| t.label.as_str())) {
        problems.push(m.replace("distinct names", "distinct `name`s"));
    }
    (out, problems)
}

/// The options of a sandbox target (its base config's `[mysqld]` options, then its overrides) that
/// shape the data on its server line; none for an external server (its data are its own).
pub(super) fn server_shape(t: &Target, line: &dyn Fn(&str) -> Option<Line>) -> Result<Vec<String>, String> {
    match &t.kind {
        TargetKind::Sandbox { build, base_file, overrides, .. } => {
            // A base config that is gone (a stored experiment read again) sets nothing; a run would
            // name it when the server starts.
            let mut options = match base_file {
                Some(path) if path.exists() => crate::server::effective::requested(Some(path), &[])
                    .map_err(|e| format!("target {}: {e}", t.label))?
                    .into_iter()
                    .map(|r| match r.value {
                        Some(v) => format!("{}={v}", r.option),
                        None => r.option,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            options.extend(overrides.iter().cloned());
            Ok(variables::data_shape_options(&options, line(build)))
        }
        TargetKind::External { .. } => Ok(Vec::new()),
    }
}

pub(super) fn server_key(t: &Target, shape: &[String]) -> String {
    match &t.kind {
        TargetKind::Sandbox { build, .. } if shape.is_empty() => format!("build={build}"),
        TargetKind::Sandbox { build, .. } => format!("build={build};{}", shape.join(";")),
        TargetKind::External { .. } => format!("target={}", t.label),
    }
}
