//! The kinds of workload versus knows, and how an experiment's `[[workloads]]` entry finds its kind.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::{Sections, StoredRuns, Workload, WorkloadDef, WorkloadSection};
use crate::store::RunDetail;

/// A kind of workload: recognises its `[[workloads]]` entries, turns them into [`Workload`]s, and
/// makes its own sections of `versus compare` and `versus report` from stored runs.
pub trait Kind: Sync {
    /// The kind's name (`sysbench`, `ibench`, `script`).
    fn name(&self) -> &'static str;

    /// True when `def` is of this kind.
    fn claims(&self, def: &WorkloadDef) -> bool;

    /// The checks that need nothing but the entry itself (run when the experiment file is read).
    fn check(&self, _def: &WorkloadDef) -> Result<(), String> {
        Ok(())
    }

    /// Parses and checks the entry's options and expands it into the workloads the plan runs (one,
    /// or one per step); `base_dir` resolves relative paths.
    fn plan(&self, def: &WorkloadDef, base_dir: &Path) -> Result<Vec<Arc<dyn Workload>>, String>;

    /// This kind's own sections of a comparison of the selected runs (the default: none).
    fn sections(&self, _runs: &StoredRuns<'_>) -> Vec<Arc<dyn WorkloadSection>> {
        Vec::new()
    }

    /// Reads back one of this kind's sections stored in a report's JSON under `key`; `None` when the
    /// key is not this kind's (the default).
    fn read_section(&self, _key: &str, _value: &serde_json::Value) -> Option<Result<Arc<dyn WorkloadSection>, String>> {
        None
    }

    /// The command line `versus show` prints for a stored run, when the run is of this kind and
    /// stored its command (the default: none).
    fn stored_command(&self, _run: &RunDetail) -> Option<String> {
        None
    }

    /// What `versus show` prints after a stored run's final figures (the default: nothing).
    fn stored_figures(&self, _run: &RunDetail) -> Option<String> {
        None
    }
}

/// Every kind, in the order they are tried. Adding a workload is one module and one line here.
pub static KINDS: &[&dyn Kind] =
    &[&super::lua::KIND, &super::script::KIND, &super::ibench::KIND, &super::sysbench::KIND];

/// The kind of `def`.
pub fn kind_of(def: &WorkloadDef) -> Result<&'static dyn Kind, String> {
    KINDS.iter().copied().find(|k| k.claims(def)).ok_or_else(|| {
        if def.test.is_empty() {
            format!("workload {}: give a `test` (e.g. test = \"oltp_read_write\") or a `script` (a SQL file)", def.label())
        } else {
            format!(
                "workload {}: unknown test '{}'; choose a sysbench test (see `versus sysbench --help`), \"ibench\", or give a `script`",
                def.label(),
                def.test
            )
        }
    })
}

/// The checks of `def` that need no files (see [`Kind::check`]); entries whose kind is not known yet
/// are left to [`plan_workloads`].
pub fn check(def: &WorkloadDef) -> Result<(), String> {
    if !def.test.is_empty() && def.script.is_some() {
        return Err(format!("workload {}: give either `test` or `script`, not both", def.label()));
    }
    if def.test.is_empty() && def.script.is_none() {
        return Err(format!(
            "workload {}: give a `test` (e.g. test = \"oltp_read_write\") or a `script` (a SQL file)",
            def.label()
        ));
    }
    match kind_of(def) {
        Ok(k) => k.check(def),
        Err(_) => Ok(()),
    }
}

/// The workloads of one `[[workloads]]` entry, options checked.
pub fn plan_workloads(def: &WorkloadDef, base_dir: &Path) -> Result<Vec<Arc<dyn Workload>>, String> {
    check(def)?;
    kind_of(def)?.plan(def, base_dir)
}

/// Every kind's report sections for the selected runs, ordered by their JSON key (the order a report
/// read back from JSON has too).
pub fn sections(runs: &StoredRuns<'_>) -> Sections {
    let mut out: Vec<Arc<dyn WorkloadSection>> = KINDS.iter().flat_map(|k| k.sections(runs)).collect();
    out.sort_by_key(|s| s.key());
    Sections(out)
}

/// The section stored under `key` in a report's JSON, read by the kind that claims the key; `None`
/// when no kind does.
pub fn read_section(key: &str, value: &serde_json::Value) -> Option<Result<Arc<dyn WorkloadSection>, String>> {
    KINDS.iter().find_map(|k| k.read_section(key, value))
}

/// The command line of a stored run, as the first kind that knows it renders it.
pub fn stored_command(run: &RunDetail) -> Option<String> {
    KINDS.iter().find_map(|k| k.stored_command(run))
}

/// The figures of a stored run beyond the final report, from every kind that has some.
pub fn stored_figures(run: &RunDetail) -> Vec<String> {
    KINDS.iter().filter_map(|k| k.stored_figures(run)).collect()
}

/// Reads the sections of every key a kind claims from a map (the report's top level, flattened: the
/// report's own fields are not passed here, and keys no kind claims are left alone). Here rather than
/// beside [`Sections`], so that the sections' file does not import the kinds that import it.
impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut out = Vec::new();
        for (key, value) in map {
            let serde_json::Value::Array(items) = value else { continue };
            for item in items {
                if let Some(section) = read_section(&key, &item) {
                    out.push(section.map_err(serde::de::Error::custom)?);
                }
            }
        }
        Ok(Sections(out))
    }
}
