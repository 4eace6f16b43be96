//! What a topology records (`topology.json` in the primary's sandbox directory), so that `server stop`
//! and `server status` find its replicas.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::server::lockdown;

/// The file, in the primary's sandbox directory, that records its topology.
const FILE: &str = "topology.json";

/// One replica of a topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaRecord {
    /// Its sandbox name.
    pub name: String,
    /// Its sandbox directory.
    pub dir: PathBuf,
    /// Its `server_id`.
    pub server_id: u32,
    /// Seconds it holds transactions back (0: none).
    pub delay_s: u32,
    /// The build it runs, when not the primary's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// A primary and its replicas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyRecord {
    /// The primary's sandbox name.
    pub primary: String,
    /// Whether commits on the primary wait for a replica's acknowledgement.
    pub semi_sync: bool,
    /// The replicas, in order.
    pub replicas: Vec<ReplicaRecord>,
}

impl TopologyRecord {
    /// The longest replica delay, in seconds.
    pub fn max_delay(&self) -> u32 {
        self.replicas.iter().map(|r| r.delay_s).max().unwrap_or(0)
    }
}

/// The sandbox name of replica `i` (1-based) of primary `primary`: `PRIMARY-r1`, `PRIMARY-r2` …
pub fn replica_name(primary: &str, i: usize) -> String {
    format!("{primary}-r{i}")
}

/// Reads the topology recorded in the primary's sandbox directory `dir`.
pub fn read_record(dir: &Path) -> Result<TopologyRecord> {
    let path = dir.join(FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::file(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::file(&path, format!("not a versus topology record: {e}")))
}

/// Forgets the topology recorded in `dir` (a sandbox started again on its own is no primary).
pub fn forget(dir: &Path) -> Result<()> {
    let path = dir.join(FILE);
    if path.exists() { crate::owned::remove_file(&path) } else { Ok(()) }
}

pub(super) fn write_record(dir: &Path, record: &TopologyRecord) -> Result<()> {
    let text = serde_json::to_string_pretty(record).expect("topology record serialises");
    lockdown::write_private(&dir.join(FILE), &(text + "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let t = tempfile::tempdir().unwrap();
        let r = TopologyRecord {
            primary: "p".into(),
            semi_sync: true,
            replicas: vec![ReplicaRecord {
                name: replica_name("p", 1),
                dir: t.path().join("p-r1"),
                server_id: 2,
                delay_s: 3,
                build: None,
            }],
        };
        write_record(t.path(), &r).unwrap();
        assert_eq!(read_record(t.path()).unwrap(), r);
        assert_eq!(r.max_delay(), 3);
        assert_eq!(r.replicas[0].name, "p-r1");
    }
}
