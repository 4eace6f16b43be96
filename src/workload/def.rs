//! A workload as an experiment file writes it (`[[workloads]]`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One `[[workloads]]` entry: a `test` (a sysbench test, or `ibench`) or a `script` (a SQL file), with
/// its options.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadDef {
    /// Label in reports [default: the test name, or the script's file name].
    #[serde(default)]
    pub name: Option<String>,
    /// The test (`oltp_read_write`, `oltp_update_index`, `ibench` …); empty with `script`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub test: String,
    /// A SQL script (pgbench-style, see docs/workloads.md), relative to the experiment file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
    /// Thread counts for this workload instead of the experiment's.
    #[serde(default)]
    pub threads: Option<Vec<u32>>,
    /// Options of the test or script with their own names (`tables = 4`, `table-size = 100000`).
    #[serde(default)]
    pub options: toml::Table,
}

impl WorkloadDef {
    /// The label of the workload in reports.
    pub fn label(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        match &self.script {
            Some(p) if self.test.is_empty() => {
                p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
            }
            _ => self.test.clone(),
        }
    }

    /// The option value of `name`, with dashes and underscores treated alike.
    pub fn option(&self, name: &str) -> Option<&toml::Value> {
        self.options.iter().find(|(k, _)| k.replace('-', "_") == name).map(|(_, v)| v)
    }
}
