//! Targets as the explain commands name them, and their variables: read from a sandbox started just
//! for that, or from the runs of a stored experiment.
//!
//! On the command line a target is `BUILD[:NAME=VALUE,NAME=VALUE…]`, e.g.
//! `system:log-bin,sync_binlog=0`; a bare `NAME` is a flag. More options and a base my.cnf come from
//! the commands' `--set-a/--set-b/--config-a/--config-b` flags.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::diffvars::Snapshot;
use crate::error::{Error, Result};
use crate::experiment::{ExperimentFile, Plan, TargetKind};
use crate::server::effective::{self, option_variables};
use crate::server::{Home, Sandbox, SandboxSpec, admin, config};
use crate::store::{Experiment, Status, Store};
use crate::workload::ConnectionCharset;

/// A server to start: a build with an optional base my.cnf and options on top.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetSpec {
    /// How it is called in output.
    pub label: String,
    /// A registered build.
    pub build: String,
    /// A base my.cnf whose options come first.
    pub config: Option<PathBuf>,
    /// `name=value` or bare `name` options on top, as with `--set`.
    pub overrides: Vec<String>,
    /// Client side: the character set (and collation) every workload connection sets.
    pub charset: Option<ConnectionCharset>,
}

impl TargetSpec {
    /// Parses `BUILD[:NAME=VALUE,…]`; `flag` names the argument in errors.
    pub fn parse(text: &str, flag: &str) -> Result<TargetSpec> {
        let (build, opts) = match text.split_once(':') {
            Some((b, o)) => (b.trim(), o),
            None => (text.trim(), ""),
        };
        if build.is_empty() {
            return Err(Error::option(
                flag,
                format!("'{text}' names no build; write BUILD or BUILD:NAME=VALUE,… (e.g. system:sync_binlog=0)"),
            ));
        }
        let mut spec = TargetSpec { label: text.trim().to_string(), build: build.to_string(), ..TargetSpec::default() };
        for o in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            config::parse_override(o).map_err(|e| Error::option(flag, format!("'{text}': {e}")))?;
            spec.overrides.push(o.to_string());
        }
        Ok(spec)
    }

    /// Adds a base config and more overrides (checked like `--set`).
    pub fn with(mut self, config_file: Option<PathBuf>, extra: &[String]) -> Result<TargetSpec> {
        for o in extra {
            config::parse_override(o)?;
        }
        if config_file.is_some() {
            self.config = config_file;
        }
        self.overrides.extend(extra.iter().cloned());
        Ok(self)
    }

    /// `build system, config base.cnf, set sync_binlog=0 log-bin`.
    pub fn describe(&self) -> String {
        let mut s = format!("build {}", self.build);
        if let Some(c) = &self.config {
            s.push_str(&format!(", config {}", c.display()));
        }
        if !self.overrides.is_empty() {
            s.push_str(&format!(", set {}", self.overrides.join(" ")));
        }
        if let Some(c) = &self.charset {
            s.push_str(&format!(", connections {}", c.statement()));
        }
        s
    }

    /// The variables (lower case) that this target's config file and overrides set. A config file
    /// that cannot be read is an error naming it.
    pub fn explicit_variables(&self) -> Result<BTreeSet<String>> {
        let requested = effective::requested(self.config.as_deref(), &self.overrides)?;
        Ok(requested.iter().flat_map(|r| option_variables(&r.option)).collect())
    }
}

/// Starts `spec` in a sandbox under `work`, reads its `SHOW GLOBAL VARIABLES` and version, and stops it.
pub fn capture_live(home: &Home, spec: &TargetSpec, work: &Path, name: &str) -> Result<Snapshot> {
    let dir = work.join(name);
    crate::owned::remove(&dir)?;
    let mut s = SandboxSpec::new(name, home.build(&spec.build)?, &dir);
    s.base_config = spec.config.clone();
    s.overrides = spec.overrides.clone();
    s.fresh = true;
    let result = (|| {
        let mut sb = Sandbox::start(s)?;
        let mut conn = sb.connect_root()?;
        let vars = admin::global_variables(&mut conn)?;
        let version = admin::version(&mut conn)?;
        drop(conn);
        let session = session_values(&sb, spec.charset.as_ref());
        sb.stop()?;
        Ok(Snapshot {
            label: spec.label.clone(),
            build: Some(spec.build.clone()),
            server_version: Some(version),
            variables: vars.into_iter().collect(),
            explicit: spec.explicit_variables()?,
            session: session?,
        })
    })();
    let _ = crate::owned::remove(&dir);
    result
}

/// The session variables a connection decides (character sets and collation), as a workload's
/// connection sees them: the benchmark account over TCP, with the handshake versus's clients send
/// (utf8mb4_general_ci), then the target's `SET NAMES`.
pub const SESSION_VARIABLES: &[&str] =
    &["character_set_client", "character_set_connection", "character_set_results", "collation_connection"];

/// Reads [`SESSION_VARIABLES`] over a connection like a workload's; an error names the `SET NAMES`.
pub fn session_values(sb: &Sandbox, charset: Option<&ConnectionCharset>) -> Result<BTreeMap<String, String>> {
    use mysql::prelude::Queryable;
    let i = sb.info();
    let mut conn = admin::connect_tcp(i.port, &i.user, Some(&i.password), Some(&i.database))?;
    if let Some(c) = charset {
        let sql = c.statement();
        conn.query_drop(&sql).map_err(|e| Error::Other(format!("{sql}: {e}")))?;
    }
    let select: Vec<String> = SESSION_VARIABLES.iter().map(|v| format!("@@session.{v}")).collect();
    let sql = format!("SELECT {}", select.join(", "));
    let row: Option<mysql::Row> = conn.query_first(&sql).map_err(|e| Error::Other(format!("{sql}: {e}")))?;
    let mut out = BTreeMap::new();
    if let Some(row) = row {
        for (k, name) in SESSION_VARIABLES.iter().enumerate() {
            if let Some(Some(v)) = row.get::<Option<String>, _>(k) {
                out.insert(name.to_string(), v);
            }
        }
    }
    Ok(out)
}

/// Finds a stored experiment by id or by name (the latest of that name).
pub fn find_experiment(store: &Store, which: &str) -> Result<Experiment> {
    if let Ok(id) = which.parse::<i64>()
        && let Some(e) = store.experiment(id)?
    {
        return Ok(e);
    }
    store.latest_experiment_named(which)?.ok_or_else(|| {
        Error::option(
            "--from",
            format!("no experiment '{which}' in {}; `versus runs` lists the stored ones", store.path().display()),
        )
    })
}

/// The targets of a stored experiment as (label, spec) in definition order, from its stored definition
/// (config files are resolved next to the experiment file it was run from).
pub fn stored_specs(e: &Experiment) -> Result<Vec<(String, TargetSpec)>> {
    let file = ExperimentFile::parse(&e.definition)
        .map_err(|m| Error::Other(format!("experiment {} ({}): its stored definition: {m}", e.id, e.name)))?;
    let base = e.file.as_deref().and_then(|f| Path::new(f).parent()).map(Path::to_path_buf).unwrap_or_default();
    let plan = Plan::new(&file, &base).map_err(|m| Error::Other(format!("experiment {} ({}): {m}", e.id, e.name)))?;
    Ok(plan
        .targets
        .into_iter()
        .filter_map(|t| match t.kind {
            TargetKind::Sandbox { build, base_file, overrides, .. } => Some((
                t.label.clone(),
                TargetSpec { label: t.label, build, config: base_file, overrides, charset: t.charset },
            )),
            TargetKind::External { .. } => None,
        })
        .collect())
}

/// The variables of target `label` as stored with its first finished run in experiment `which`, with
/// what its definition sets (a base config file that no longer exists counts as setting nothing).
pub fn capture_stored(store: &Store, which: &str, label: &str) -> Result<Snapshot> {
    let e = find_experiment(store, which)?;
    let runs = store.runs(e.id)?;
    let labels: BTreeSet<&str> = runs.iter().map(|r| r.cell.target.as_str()).collect();
    if !labels.contains(label) {
        let known: Vec<&str> = labels.into_iter().collect();
        return Err(Error::option(
            "--from",
            format!("experiment {} has no target '{label}'; its targets: {}", e.name, known.join(", ")),
        ));
    }
    let mut found = None;
    for r in runs.iter().filter(|r| r.cell.target == label && r.status == Status::Done) {
        if let Some(d) = store.run(r.id)?
            && !d.variables.is_empty()
        {
            found = Some(d);
            break;
        }
    }
    let Some(d) = found else {
        return Err(Error::option(
            "--from",
            format!("target '{label}' of experiment {} has no finished run with stored variables", e.name),
        ));
    };
    let explicit = match stored_specs(&e).ok().and_then(|v| v.into_iter().find(|(l, _)| l == label).map(|(_, s)| s)) {
        Some(mut spec) => {
            if spec.config.as_ref().is_some_and(|c| !c.is_file()) {
                spec.config = None;
            }
            spec.explicit_variables().unwrap_or_default()
        }
        None => BTreeSet::new(),
    };
    Ok(Snapshot {
        label: label.to_string(),
        build: d.run.cell.build.clone(),
        server_version: d.run.server_version.clone(),
        variables: d.variables.into_iter().collect(),
        explicit,
        session: BTreeMap::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_build_and_options() {
        let t = TargetSpec::parse("system:log-bin, sync_binlog=0,innodb_flush_log_at_trx_commit=2", "A").unwrap();
        assert_eq!(t.build, "system");
        assert_eq!(t.overrides, ["log-bin", "sync_binlog=0", "innodb_flush_log_at_trx_commit=2"]);
        assert_eq!(t.label, "system:log-bin, sync_binlog=0,innodb_flush_log_at_trx_commit=2");
        let t = TargetSpec::parse("mariadb-11.8", "B").unwrap();
        assert!(t.overrides.is_empty());
        let e = TargetSpec::parse(":x=1", "A").unwrap_err().to_string();
        assert!(e.starts_with("A: ':x=1' names no build"), "{e}");
        let e = TargetSpec::parse("system:port=3306", "B").unwrap_err().to_string();
        assert!(e.contains("managed by versus"), "{e}");
        let t = TargetSpec::parse("system", "A").unwrap().with(None, &["sync_binlog=1".into()]).unwrap();
        assert_eq!(t.describe(), "build system, set sync_binlog=1");
    }

    #[test]
    fn explicit_variables_come_from_the_config_file_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let cnf = dir.path().join("my.cnf");
        std::fs::write(&cnf, "[mysqld]\ninnodb-buffer-pool-size=1G\nloose-skip-log-bin\n[client]\nuser=x\n").unwrap();
        let t = TargetSpec::parse("system:sync_binlog=0,log-slave-updates", "A")
            .unwrap()
            .with(Some(cnf), &["enable-performance-schema".into()])
            .unwrap();
        let got: Vec<String> = t.explicit_variables().unwrap().into_iter().collect();
        assert_eq!(
            got,
            [
                "innodb_buffer_pool_size",
                "log_bin",
                "log_replica_updates",
                "log_slave_updates",
                "performance_schema",
                "sync_binlog"
            ]
        );
        let missing = t.clone().with(Some(dir.path().join("nope.cnf")), &[]).unwrap();
        assert!(missing.explicit_variables().unwrap_err().to_string().contains("nope.cnf"));
    }
}
