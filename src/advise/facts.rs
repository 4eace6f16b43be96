//! What the rules are computed from: the host (or the smaller machine `--memory` names), the server's
//! variables, the size of the prepared data and a probe run's counter deltas.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::server::flavor::Feature;
use crate::server::{Flavor, Version};

/// One GiB in bytes.
pub const GIB: u64 = 1 << 30;
/// One MiB in bytes.
pub const MIB: u64 = 1 << 20;

/// The counter deltas of the probe run (the current config under the workload).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProbeFacts {
    /// Measured seconds of the run.
    pub seconds: f64,
    /// The run's metric value (tps for sysbench).
    pub tps: Option<f64>,
    /// `SHOW GLOBAL STATUS` deltas over the measured time.
    pub deltas: BTreeMap<String, i64>,
    /// `SHOW GLOBAL STATUS` gauges and log positions at the end of the measured time (of the last
    /// workload, when the probe runs several).
    #[serde(default)]
    pub ends: BTreeMap<String, i64>,
}

/// Where a server reports its checkpoint age (redo written since the last checkpoint): a gauge of its
/// own, or the end values of two log positions whose difference it is. First match wins.
const CHECKPOINT_AGE: &[(&str, Option<&str>)] = &[
    // MariaDB, Percona Server.
    ("Innodb_checkpoint_age", None),
    // MySQL 8.0.30 and later.
    ("Innodb_redo_log_current_lsn", Some("Innodb_redo_log_checkpoint_lsn")),
    // MariaDB without the gauge.
    ("Innodb_lsn_current", Some("Innodb_lsn_last_checkpoint")),
];

impl ProbeFacts {
    /// The delta of a counter (names compared without case); 0 when the server has no such counter.
    pub fn delta(&self, name: &str) -> i64 {
        self.deltas.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v).unwrap_or(0)
    }

    /// Whether the server has the counter at all.
    pub fn has(&self, name: &str) -> bool {
        self.deltas.keys().any(|k| k.eq_ignore_ascii_case(name))
    }

    /// The value of a gauge or log position at the end of the run (names compared without case).
    pub fn end(&self, name: &str) -> Option<i64> {
        self.ends.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }

    /// Bytes of redo written since the last checkpoint at the end of the run, from the first source of
    /// [`CHECKPOINT_AGE`] the server reports; `None` when it reports none (MySQL before 8.0.30).
    pub fn checkpoint_age(&self) -> Option<u64> {
        CHECKPOINT_AGE.iter().find_map(|(a, b)| {
            let age = match b {
                None => self.end(a)?,
                Some(b) => self.end(a)?.checked_sub(self.end(b)?)?,
            };
            u64::try_from(age).ok()
        })
    }

    /// A counter's delta per second of the run.
    pub fn rate(&self, name: &str) -> f64 {
        if self.seconds > 0.0 { self.delta(name) as f64 / self.seconds } else { 0.0 }
    }

    /// `part / whole` of two counters' deltas, `None` when `whole` did not move.
    pub fn share(&self, part: &str, whole: &str) -> Option<f64> {
        let w = self.delta(whole);
        (w > 0).then(|| self.delta(part) as f64 / w as f64)
    }
}

/// Everything the rules look at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// MariaDB, MySQL or Percona.
    pub flavor: Flavor,
    /// The server's version.
    pub version: Version,
    /// The memory advised for, in bytes: `--memory`, else the host's RAM.
    pub memory: u64,
    /// The host's RAM in bytes.
    pub host_memory: u64,
    /// Whether `memory` came from `--memory`.
    pub memory_given: bool,
    /// Logical CPUs of the host.
    pub cpus: u32,
    /// File system of the datadir's mount.
    pub fs_type: Option<String>,
    /// The datadir's device.
    pub device: Option<String>,
    /// Whether that device is rotational (a spinning disk).
    pub rotational: Option<bool>,
    /// Free bytes where the datadirs live.
    pub free_disk: Option<u64>,
    /// Median latency of a 4 KiB write + fdatasync there, µs.
    pub fsync_us: Option<f64>,
    /// The current config's `SHOW GLOBAL VARIABLES`, names in lower case.
    pub variables: BTreeMap<String, String>,
    /// Bytes of the prepared tables and indexes.
    pub data_bytes: Option<u64>,
    /// Tables of the prepared data.
    pub tables: Option<u64>,
    /// The most client connections the workload opens (its largest thread count).
    pub threads: u32,
    /// The probe run, when there is one (not with `--dry-run`).
    pub probe: Option<ProbeFacts>,
}

impl Facts {
    /// The facts the unit tests of advise and its report section start from: a 4-GiB server with 2
    /// CPUs on an ext4 SSD, 700 MiB in two tables, 8 client threads, no probe.
    #[cfg(test)]
    pub(crate) fn example(flavor: Flavor, version: Version, variables: BTreeMap<String, String>) -> Facts {
        Facts {
            flavor,
            version,
            memory: 4 * GIB,
            host_memory: 24 * GIB,
            memory_given: true,
            cpus: 2,
            fs_type: Some("ext4".into()),
            device: Some("/dev/vda".into()),
            rotational: Some(false),
            free_disk: Some(28 * GIB),
            fsync_us: Some(2000.0),
            variables,
            data_bytes: Some(700 * MIB),
            tables: Some(2),
            threads: 8,
            probe: None,
        }
    }

    /// A variable's current value.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.variables.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// A numeric variable's current value.
    pub fn num(&self, name: &str) -> Option<u64> {
        self.var(name).and_then(parse_size)
    }

    /// Whether a boolean variable is ON.
    pub fn on(&self, name: &str) -> bool {
        self.var(name).is_some_and(is_on)
    }

    /// True when the server has `feature` (see [`crate::server::flavor::features`]).
    pub fn has(&self, feature: Feature) -> bool {
        crate::server::flavor::features::has(feature, self.flavor, self.version)
    }
}

/// Whether a variable's value means ON.
pub fn is_on(v: &str) -> bool {
    matches!(v.trim().to_ascii_uppercase().as_str(), "ON" | "1" | "TRUE" | "YES")
}

/// A size as the server writes it (`134217728`) or as a my.cnf does (`128M`, `1G`, `16K`).
pub fn parse_size(v: &str) -> Option<u64> {
    let t = v.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Some(n);
    }
    let (num, unit) = t.split_at(t.len().checked_sub(1)?);
    let mult = match unit.to_ascii_uppercase().as_str() {
        "K" => 1 << 10,
        "M" => MIB,
        "G" => GIB,
        "T" => GIB << 10,
        _ => return None,
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

/// A size for a my.cnf line: the largest unit that divides it exactly (`896M`, `2G`, `4096`).
pub fn cnf_size(bytes: u64) -> String {
    for (unit, div) in [("G", GIB), ("M", MIB), ("K", 1 << 10)] {
        if bytes >= div && bytes.is_multiple_of(div) {
            return format!("{}{unit}", bytes / div);
        }
    }
    bytes.to_string()
}

/// `bytes` rounded up to a multiple of `step`.
pub fn round_up(bytes: u64, step: u64) -> u64 {
    bytes.div_ceil(step) * step
}

/// `bytes` rounded down to a multiple of `step` (at least one step).
pub fn round_down(bytes: u64, step: u64) -> u64 {
    (bytes / step).max(1) * step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("134217728"), Some(128 * MIB));
        assert_eq!(parse_size("128M"), Some(128 * MIB));
        assert_eq!(parse_size("2g"), Some(2 * GIB));
        assert_eq!(parse_size("16K"), Some(16384));
        assert_eq!(parse_size("ON"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(cnf_size(896 * MIB), "896M");
        assert_eq!(cnf_size(2 * GIB), "2G");
        assert_eq!(cnf_size(1000), "1000");
        assert_eq!(round_up(700 * MIB, 128 * MIB), 768 * MIB);
        assert_eq!(round_down(700 * MIB, 1024 * MIB), GIB);
        assert!(is_on("on") && is_on("1") && !is_on("OFF"));
    }

    #[test]
    fn probe_rates_and_shares() {
        let mut p = ProbeFacts { seconds: 10.0, ..ProbeFacts::default() };
        p.deltas.insert("Innodb_os_log_written".into(), 1000);
        p.deltas.insert("Created_tmp_tables".into(), 0);
        assert_eq!(p.rate("innodb_os_log_written"), 100.0);
        assert_eq!(p.share("Created_tmp_disk_tables", "Created_tmp_tables"), None);
        assert!(p.has("created_tmp_tables") && !p.has("nope"));
    }

    #[test]
    fn checkpoint_age_from_a_gauge_or_two_positions() {
        let with = |ends: &[(&str, i64)]| ProbeFacts {
            ends: ends.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..ProbeFacts::default()
        };
        assert_eq!(with(&[]).checkpoint_age(), None);
        assert_eq!(with(&[("Innodb_checkpoint_age", 5000), ("Innodb_lsn_current", 9)]).checkpoint_age(), Some(5000));
        let mysql = [("Innodb_redo_log_current_lsn", 90_000), ("Innodb_redo_log_checkpoint_lsn", 30_000)];
        assert_eq!(with(&mysql).checkpoint_age(), Some(60_000));
        // One position without the other says nothing; a checkpoint ahead of the log is not an age.
        assert_eq!(with(&mysql[..1]).checkpoint_age(), None);
        assert_eq!(with(&[("innodb_lsn_current", 10), ("innodb_lsn_last_checkpoint", 20)]).checkpoint_age(), None);
        assert_eq!(with(&[("innodb_lsn_current", 20), ("innodb_lsn_last_checkpoint", 10)]).checkpoint_age(), Some(10));
    }
}
