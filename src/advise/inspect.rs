//! Inspection on the real machine: the host (CPUs, RAM or `--memory`, the datadir's file system and
//! device, a short fsync-latency probe), the server (its variables, from a sandbox started for it), the
//! prepared data (the size of its tables and indexes in the data snapshot) and the probe run's counter
//! deltas, with what they say in a few figures.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::facts::{Facts, GIB, ProbeFacts};
use crate::error::{Error, Result};
use crate::explain::targets::{TargetSpec, capture_live};
use crate::sampler::HostFacts;
use crate::sampler::canary::{self, CanarySize};
use crate::server::flavor::Feature;
use crate::server::{Build, Home, snapshot};

/// fsyncs of the latency probe (the median counts).
const FSYNCS: usize = 40;

/// The host as inspected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// Logical CPUs.
    pub cpus: u32,
    /// RAM in bytes.
    pub memory: u64,
    /// File system of the datadirs' mount.
    pub fs_type: Option<String>,
    /// Its device.
    pub device: Option<String>,
    /// Whether the device is rotational.
    pub rotational: Option<bool>,
    /// Free bytes there.
    pub free_disk: Option<u64>,
    /// Median 4 KiB write + fdatasync, µs.
    pub fsync_us: Option<f64>,
}

/// Reads the host's facts for datadirs under `dir`, with the fsync probe there.
pub fn host(dir: &Path) -> Result<Host> {
    crate::owned::create_dir_all(dir)?;
    let f = HostFacts::collect(Some(dir));
    let size = CanarySize { cpu_iterations: 1, cpu_rounds: 1, fsyncs: FSYNCS };
    let fsync_us = canary::measure(dir, &size).ok().map(|c| c.fsync_us);
    Ok(Host {
        cpus: f.logical_cpus.unwrap_or(1),
        memory: f.memory_bytes.unwrap_or(0),
        fs_type: f.datadir.as_ref().map(|d| d.fs_type.clone()),
        device: f.datadir.as_ref().map(|d| d.device.clone()),
        rotational: f.datadir.as_ref().and_then(|d| d.rotational),
        free_disk: snapshot::free_space(dir).ok(),
        fsync_us,
    })
}

/// Checks `--memory` (GiB) against the host: at least 1 GiB and not above its RAM.
pub fn memory_for(host: &Host, memory_gib: Option<f64>) -> Result<(u64, bool)> {
    match memory_gib {
        None => Ok((host.memory, false)),
        Some(g) if !(g.is_finite() && g >= 1.0) => Err(Error::option(
            "--memory",
            format!("{g} GiB is too little to advise for; give 1 or more (e.g. --memory 4)"),
        )),
        Some(g) => {
            let bytes = (g * GIB as f64) as u64;
            // /proc/meminfo's total is a little below the installed RAM: allow 5 %.
            if host.memory > 0 && bytes as f64 > host.memory as f64 * 1.05 {
                return Err(Error::option(
                    "--memory",
                    format!(
                        "{g} GiB is more than this host's {:.1} GiB: the advice could not be measured here; give at most {:.0}",
                        host.memory as f64 / GIB as f64,
                        (host.memory as f64 / GIB as f64).floor()
                    ),
                ));
            }
            Ok((bytes, true))
        }
    }
}

/// Starts the current config in a sandbox under `work` and reads its variables (names in lower case).
/// A server that does not start is an error naming the target.
pub fn server(home: &Home, current: &TargetSpec, work: &Path) -> Result<(BTreeMap<String, String>, Option<String>)> {
    let snap = capture_live(home, current, work, "inspect").map_err(|e| {
        Error::Other(format!("the server does not start with the current config ({}): {e}", current.describe()))
    })?;
    let vars = snap.variables.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    Ok((vars, snap.server_version))
}

/// The server's own databases, not the workload's data.
const SYSTEM_DATABASES: &[&str] =
    &["mysql", "sys", "performance_schema", "information_schema", "#innodb_redo", "#innodb_temp"];

/// Bytes and tables of the prepared data in a datadir snapshot: the table files (`.ibd`, and
/// MyISAM/Aria data and index files) of every database but the server's own, whichever workload
/// prepared them; one table per `.ibd`/`.MYD`/`.MAD` file.
pub fn data_size(snapshot: &Path) -> (u64, u64) {
    let Ok(dbs) = std::fs::read_dir(snapshot) else { return (0, 0) };
    let (mut bytes, mut tables) = (0, 0);
    for db in dbs.flatten().filter(|d| d.path().is_dir()) {
        let name = db.file_name().to_string_lossy().to_ascii_lowercase();
        if SYSTEM_DATABASES.contains(&name.as_str()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(db.path()) else { continue };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            let ext = name.rsplit('.').next().unwrap_or("");
            if matches!(ext, "ibd" | "myd" | "myi" | "mad" | "mai") {
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
                if matches!(ext, "ibd" | "myd" | "mad") {
                    tables += 1;
                }
            }
        }
    }
    (bytes, tables)
}

/// What the probe run's counters say, in the figures the output shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    /// Measured seconds.
    pub seconds: f64,
    /// The metric of the run (tps).
    pub tps: Option<f64>,
    /// Buffer-pool reads from disk per logical read request.
    pub pool_miss: Option<f64>,
    /// Redo bytes per second.
    pub redo_per_s: Option<f64>,
    /// Seconds of that redo the current redo log holds (how soon checkpoints are forced).
    pub redo_log_seconds: Option<f64>,
    /// Bytes of redo since the last checkpoint at the end of the probe (`None`: not reported).
    #[serde(default)]
    pub checkpoint_age: Option<u64>,
    /// The most the server lets that age reach before it stalls writes for a checkpoint:
    /// `Innodb_checkpoint_max_age` (MariaDB, Percona Server), else the redo capacity (MySQL's
    /// `Innodb_redo_log_capacity_resized`, or from the variables). Flushing turns aggressive before it.
    #[serde(default)]
    pub checkpoint_limit: Option<u64>,
    /// The age as a share of that limit.
    #[serde(default)]
    pub checkpoint_share: Option<f64>,
    /// Share of temporary tables created on disk.
    pub tmp_disk: Option<f64>,
    /// Table-open cache misses.
    pub table_open_misses: i64,
    /// Threads created / connections.
    pub threads_created: Option<f64>,
    /// Waits for the log buffer.
    pub log_waits: i64,
}

/// The summary of a probe for a server with `facts`' variables.
pub fn summarize(p: &ProbeFacts, facts: &Facts) -> ProbeSummary {
    let redo = p.has("Innodb_os_log_written").then(|| p.rate("Innodb_os_log_written"));
    let capacity = facts.num("innodb_redo_log_capacity").or_else(|| {
        let files = if facts.has(Feature::SeveralRedoLogFiles) {
            facts.num("innodb_log_files_in_group").unwrap_or(2)
        } else {
            1
        };
        facts.num("innodb_log_file_size").map(|s| s * files)
    });
    let age = p.checkpoint_age();
    let limit = ["Innodb_checkpoint_max_age", "Innodb_redo_log_capacity_resized"]
        .iter()
        .find_map(|n| p.end(n).and_then(|v| u64::try_from(v).ok()))
        .or(capacity)
        .filter(|c| *c > 0);
    ProbeSummary {
        seconds: p.seconds,
        tps: p.tps,
        pool_miss: p.share("Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests"),
        redo_per_s: redo,
        redo_log_seconds: redo.zip(capacity).filter(|(r, _)| *r > 0.0).map(|(r, c)| c as f64 / r),
        checkpoint_age: age,
        checkpoint_limit: limit,
        checkpoint_share: age.zip(limit).map(|(a, c)| a as f64 / c as f64),
        tmp_disk: p.share("Created_tmp_disk_tables", "Created_tmp_tables"),
        table_open_misses: p.delta("Table_open_cache_misses"),
        threads_created: p.share("Threads_created", "Connections"),
        log_waits: p.delta("Innodb_log_waits"),
    }
}

/// The facts of a server, before the probe run and the data are known.
pub fn facts(
    build: &Build,
    host: &Host,
    memory: (u64, bool),
    variables: BTreeMap<String, String>,
    threads: u32,
) -> Facts {
    Facts {
        flavor: build.flavor,
        version: build.version,
        memory: memory.0,
        host_memory: host.memory,
        memory_given: memory.1,
        cpus: host.cpus,
        fs_type: host.fs_type.clone(),
        device: host.device.clone(),
        rotational: host.rotational,
        free_disk: host.free_disk,
        fsync_us: host.fsync_us,
        variables,
        data_bytes: None,
        tables: None,
        threads,
        probe: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_size_counts_table_files_of_the_workloads_databases() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(data_size(dir.path()), (0, 0), "nothing prepared");
        for (db, file, len) in [
            ("sbtest", "sbtest1.ibd", 4096),
            ("sbtest", "sbtest2.ibd", 8192),
            ("sbtest", "sbtest1.frm", 100),
            ("app", "orders.MYD", 1000),
            ("app", "orders.MYI", 500),
            ("mysql", "innodb_table_stats.ibd", 65536),
            ("performance_schema", "x.ibd", 65536),
        ] {
            std::fs::create_dir_all(dir.path().join(db)).unwrap();
            std::fs::write(dir.path().join(db).join(file), vec![0u8; len]).unwrap();
        }
        std::fs::write(dir.path().join("ibdata1"), vec![0u8; 50_000]).unwrap();
        assert_eq!(data_size(dir.path()), (4096 + 8192 + 1000 + 500, 3));
    }

    #[test]
    fn memory_is_checked_against_the_host() {
        let h = Host {
            cpus: 2,
            memory: 24 * GIB - GIB / 10,
            fs_type: None,
            device: None,
            rotational: None,
            free_disk: None,
            fsync_us: None,
        };
        assert_eq!(memory_for(&h, Some(4.0)).unwrap(), (4 * GIB, true));
        assert_eq!(memory_for(&h, Some(24.0)).unwrap().0, 24 * GIB, "meminfo's total is a little short");
        let e = memory_for(&h, Some(64.0)).unwrap_err().to_string();
        assert!(e.starts_with("--memory: 64 GiB is more than this host's 23.9 GiB"), "{e}");
        assert!(memory_for(&h, Some(0.5)).unwrap_err().to_string().contains("too little"));
        assert_eq!(memory_for(&h, None).unwrap(), (h.memory, false));
    }
}
