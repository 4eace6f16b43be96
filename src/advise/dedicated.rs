//! The `innodb_dedicated_server` baseline: MySQL's own switch where it exists and the machine is the
//! one advised for, otherwise its formulas spelled out as settings (MariaDB has no such switch; with
//! `--memory` MySQL's switch would size from the host's RAM, not the smaller machine's).
//!
//! The formulas (MySQL manual, "Enabling Automatic InnoDB Configuration for a Dedicated MySQL
//! Server", and WL#12300):
//!
//! | variable | rule |
//! |---|---|
//! | `innodb_buffer_pool_size` | memory < 1 GB: 128 MB; 1–4 GB: memory × 0.5; > 4 GB: memory × 0.75 |
//! | `innodb_redo_log_capacity` (8.4+) | (logical CPUs / 2) GB, at most 16 GB |
//! | `innodb_log_file_size` × `innodb_log_files_in_group` (8.0.14–8.0.29) | pool < 8 GB: 512 MB; ≤ 128 GB: 1 GB; else 2 GB × ROUND(pool GB) files (2 to 64; ROUND(pool × 0.75) from 8 GB) |
//! | `innodb_log_file_size` (8.0.3–8.0.13) | memory < 1 GB: 48 MB; ≤ 4 GB: 128 MB; ≤ 8 GB: 512 MB; ≤ 16 GB: 1 GB; else 2 GB |
//! | `innodb_flush_method` (8.0) | O_DIRECT_NO_FSYNC (no longer set from 8.4) |
//!
//! MySQL 8.0.30–8.3 size the redo capacity from the memory by a table of their own; spelled out,
//! versus uses the 8.0.14 log-file formula there (log file size × files). For MariaDB the 8.4+
//! formulas are used: the buffer pool, and the redo capacity as MariaDB's one `innodb_log_file_size`.

use serde::{Deserialize, Serialize};

use super::facts::{Facts, GIB, MIB, cnf_size};
use crate::server::Version;
use crate::server::flavor::{Family, Feature};

/// The dedicated-server baseline of the confirmation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dedicated {
    /// The options on top of the current config (`innodb_dedicated_server=ON`, or the values).
    pub overrides: Vec<String>,
    /// The values it sets, variable and my.cnf spelling.
    pub settings: Vec<(String, String)>,
    /// How it was made, in words.
    pub how: String,
}

/// The buffer pool innodb_dedicated_server gives a machine with `memory` bytes.
pub fn buffer_pool(memory: u64) -> u64 {
    if memory < GIB {
        128 * MIB
    } else if memory <= 4 * GIB {
        memory / 2
    } else {
        memory / 4 * 3
    }
}

/// Rounds a size to whole MiB (the formulas produce fractions of a GiB).
fn whole_mib(b: u64) -> u64 {
    b / MIB * MIB
}

/// The settings innodb_dedicated_server chooses for `facts`' server on a machine with `facts.memory`.
pub fn formulas(facts: &Facts) -> Vec<(String, u64, String)> {
    let (flavor, version, memory) = (facts.flavor, facts.version, facts.memory);
    let bp = whole_mib(buffer_pool(memory));
    let mut out = vec![("innodb_buffer_pool_size".to_string(), bp, cnf_size(bp))];
    let by_cpus = ((facts.cpus.max(1) as u64 * GIB) / 2).min(16 * GIB);
    let pool_gb = bp as f64 / GIB as f64;
    let mysql = Family::Mysql.has(flavor);
    if !mysql || version >= Version::new(8, 4, 0) {
        let name =
            if facts.has(Feature::RedoLogCapacity) { "innodb_redo_log_capacity" } else { "innodb_log_file_size" };
        out.push((name.into(), by_cpus, cnf_size(by_cpus)));
    } else if version >= Version::new(8, 0, 14) {
        let size = if pool_gb < 8.0 {
            512 * MIB
        } else if pool_gb <= 128.0 {
            GIB
        } else {
            2 * GIB
        };
        let files = if pool_gb < 8.0 {
            pool_gb.round()
        } else if pool_gb <= 128.0 {
            (pool_gb * 0.75).round()
        } else {
            64.0
        };
        let files = (files as u64).clamp(2, 64);
        if facts.has(Feature::RedoLogCapacity) {
            out.push(("innodb_redo_log_capacity".into(), size * files, cnf_size(size * files)));
        } else {
            out.push(("innodb_log_file_size".into(), size, cnf_size(size)));
            out.push(("innodb_log_files_in_group".into(), files, files.to_string()));
        }
    } else {
        let size = match memory {
            m if m < GIB => 48 * MIB,
            m if m <= 4 * GIB => 128 * MIB,
            m if m <= 8 * GIB => 512 * MIB,
            m if m <= 16 * GIB => GIB,
            _ => 2 * GIB,
        };
        out.push(("innodb_log_file_size".into(), size, cnf_size(size)));
    }
    out
}

/// The baseline for `facts`' server: `None` before MySQL 8.0.3 (no innodb_dedicated_server, and no
/// formulas of its own to spell out).
pub fn dedicated(facts: &Facts) -> Option<Dedicated> {
    let mysql = Family::Mysql.has(facts.flavor);
    if mysql && !facts.has(Feature::DedicatedServer) {
        return None;
    }
    let mut settings: Vec<(String, String)> = formulas(facts).into_iter().map(|(n, _, d)| (n, d)).collect();
    let flush = mysql && facts.version < Version::new(8, 4, 0);
    if flush {
        settings.push(("innodb_flush_method".into(), "O_DIRECT_NO_FSYNC".into()));
    }
    let gib = facts.memory as f64 / GIB as f64;
    if mysql && !facts.memory_given {
        return Some(Dedicated {
            overrides: vec!["innodb_dedicated_server=ON".into()],
            settings,
            how: format!("MySQL's innodb_dedicated_server=ON (sizes from the host's {gib:.0} GiB)"),
        });
    }
    let how = if mysql {
        format!(
            "innodb_dedicated_server's formulas for a {gib:.0} GiB machine, spelled out (the switch itself would size \
             from this host's memory)"
        )
    } else {
        format!(
            "MariaDB has no innodb_dedicated_server: MySQL 8.4's formulas for a {gib:.0} GiB machine (buffer pool; the \
             redo capacity as innodb_log_file_size)"
        )
    };
    let overrides = settings.iter().map(|(n, v)| format!("{n}={v}")).collect();
    Some(Dedicated { overrides, settings, how })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::server::Flavor;

    fn facts(flavor: Flavor, version: Version, memory: u64, given: bool) -> Facts {
        Facts {
            flavor,
            version,
            memory,
            host_memory: 24 * GIB,
            memory_given: given,
            cpus: 2,
            fs_type: None,
            device: None,
            rotational: None,
            free_disk: None,
            fsync_us: None,
            variables: BTreeMap::new(),
            data_bytes: None,
            tables: None,
            threads: 8,
            probe: None,
        }
    }

    #[test]
    fn the_manual_s_buffer_pool_table() {
        assert_eq!(buffer_pool(512 * MIB), 128 * MIB);
        assert_eq!(buffer_pool(4 * GIB), 2 * GIB);
        assert_eq!(buffer_pool(16 * GIB), 12 * GIB);
    }

    #[test]
    fn per_version_and_flavor() {
        // The field report: 8.0.23 with 4 GB → 2 GB pool, 2 × 512 MB redo, O_DIRECT_NO_FSYNC.
        let d = dedicated(&facts(Flavor::Mysql, Version::new(8, 0, 23), 4 * GIB, true)).unwrap();
        assert_eq!(
            d.overrides,
            [
                "innodb_buffer_pool_size=2G",
                "innodb_log_file_size=512M",
                "innodb_log_files_in_group=2",
                "innodb_flush_method=O_DIRECT_NO_FSYNC"
            ]
        );
        // 9.7 on 2 CPUs: redo (2 / 2) GB, no flush method.
        let d = dedicated(&facts(Flavor::Mysql, Version::new(9, 7, 4), 4 * GIB, true)).unwrap();
        assert_eq!(d.overrides, ["innodb_buffer_pool_size=2G", "innodb_redo_log_capacity=1G"]);
        assert!(d.how.contains("spelled out"));
        // Without --memory MySQL's own switch.
        let d = dedicated(&facts(Flavor::Mysql, Version::new(9, 7, 4), 24 * GIB, false)).unwrap();
        assert_eq!(d.overrides, ["innodb_dedicated_server=ON"]);
        assert_eq!(d.settings[0], ("innodb_buffer_pool_size".to_string(), "18G".to_string()));
        // MariaDB: always spelled out.
        let d = dedicated(&facts(Flavor::Mariadb, Version::new(10, 11, 19), 4 * GIB, false)).unwrap();
        assert_eq!(d.overrides, ["innodb_buffer_pool_size=2G", "innodb_log_file_size=1G"]);
        assert!(d.how.contains("MariaDB has no innodb_dedicated_server"));
        assert!(dedicated(&facts(Flavor::Mysql, Version::new(5, 7, 44), 4 * GIB, true)).is_none());
        let d = dedicated(&facts(Flavor::Mysql, Version::new(8, 0, 35), 4 * GIB, true)).unwrap();
        assert!(d.overrides.contains(&"innodb_redo_log_capacity=1G".to_string()), "{:?}", d.overrides);
    }
}
