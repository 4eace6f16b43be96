//! What differs between the server families and versions beyond options and defaults: the family a
//! flavor belongs to, the flavor a version string names, and a table of features by family and
//! version, so that code outside `server/flavor/` asks "does this server have X?" instead of
//! comparing flavors and version numbers itself.

use serde::Deserialize;

use crate::server::build::{Flavor, Version};

/// The two families whose variables, counters and features differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Oracle MySQL and Percona Server (the same variables and counters).
    Mysql,
    /// MariaDB.
    Mariadb,
}

impl Family {
    /// The family of `flavor`.
    pub fn of(flavor: Flavor) -> Family {
        match flavor {
            Flavor::Mariadb => Family::Mariadb,
            Flavor::Mysql | Flavor::Percona => Family::Mysql,
        }
    }

    /// True when `flavor` is of this family.
    pub fn has(self, flavor: Flavor) -> bool {
        Family::of(flavor) == self
    }
}

/// The flavor a server's version text names (`SELECT VERSION()`, `mysqld --version`): MariaDB or
/// Percona when the text says so, else MySQL.
pub fn flavor_named_in(text: &str) -> Flavor {
    let lower = text.to_ascii_lowercase();
    if lower.contains("mariadb") {
        Flavor::Mariadb
    } else if lower.contains("percona") {
        Flavor::Percona
    } else {
        Flavor::Mysql
    }
}

/// A feature that some families and versions have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// `innodb_dedicated_server`: InnoDB sizes itself from the machine's memory.
    DedicatedServer,
    /// `innodb_redo_log_capacity` sizes the redo log (instead of file size × files).
    RedoLogCapacity,
    /// The redo log may be several files (`innodb_log_files_in_group`).
    SeveralRedoLogFiles,
    /// The TempTable engine for internal temporary tables (`temptable_max_ram`).
    TempTable,
    /// The Aria engine and its page cache (`aria_pagecache_buffer_size`).
    Aria,
    /// The server sizes `innodb_buffer_pool_instances` from the pool and the CPUs by itself.
    SizesPoolInstances,
    /// GTID-based replication that a replica can position itself with (MariaDB's `MASTER_USE_GTID`,
    /// MySQL's auto-position).
    GtidReplication,
    /// `CHANGE REPLICATION SOURCE TO … SOURCE_*` (MySQL 8.0.23+) instead of `CHANGE MASTER TO`.
    ReplicationSourceSyntax,
    /// `START REPLICA`, `STOP REPLICA`, `SHOW REPLICA STATUS` (the older `… SLAVE` forms are gone
    /// from MySQL 8.4).
    ReplicaKeyword,
    /// Semi-synchronous replication built into the server, with no plugin to install.
    SemiSyncBuiltIn,
    /// The `semisync_source`/`semisync_replica` plugins (the `master`/`slave` ones are gone in 9.x).
    SemiSyncSourcePlugins,
    /// `RESET BINARY LOGS AND GTIDS` (`RESET MASTER` is gone from MySQL 8.4).
    ResetBinaryLogsAndGtids,
}

/// One row: `feature` exists on `family` from `from` until (not including) `until`.
struct Row {
    feature: Feature,
    family: Family,
    from: Version,
    until: Option<Version>,
}

const fn row(feature: Feature, family: Family, from: Version, until: Option<Version>) -> Row {
    Row { feature, family, from, until }
}

const fn v(major: u32, minor: u32, patch: u32) -> Version {
    Version::new(major, minor, patch)
}

/// Sources: the MySQL and MariaDB manuals' pages of each variable (introduced, removed).
const FEATURES: &[Row] = &[
    row(Feature::DedicatedServer, Family::Mysql, v(8, 0, 3), None),
    row(Feature::RedoLogCapacity, Family::Mysql, v(8, 0, 30), None),
    row(Feature::SeveralRedoLogFiles, Family::Mysql, v(5, 0, 0), Some(v(8, 0, 30))),
    row(Feature::SeveralRedoLogFiles, Family::Mariadb, v(5, 0, 0), Some(v(10, 5, 0))),
    row(Feature::TempTable, Family::Mysql, v(8, 0, 0), None),
    row(Feature::Aria, Family::Mariadb, v(5, 1, 0), None),
    row(Feature::SizesPoolInstances, Family::Mysql, v(8, 4, 0), None),
    // MariaDB GTID 10.0.2, MySQL GTID auto-position 5.6.5.
    row(Feature::GtidReplication, Family::Mariadb, v(10, 0, 2), None),
    row(Feature::GtidReplication, Family::Mysql, v(5, 6, 5), None),
    row(Feature::ReplicationSourceSyntax, Family::Mysql, v(8, 0, 23), None),
    // MySQL 8.0.22 added the REPLICA forms; MariaDB 10.5.1 added them as aliases.
    row(Feature::ReplicaKeyword, Family::Mysql, v(8, 0, 22), None),
    row(Feature::ReplicaKeyword, Family::Mariadb, v(10, 5, 1), None),
    row(Feature::SemiSyncBuiltIn, Family::Mariadb, v(10, 3, 3), None),
    row(Feature::SemiSyncSourcePlugins, Family::Mysql, v(8, 0, 26), None),
    row(Feature::ResetBinaryLogsAndGtids, Family::Mysql, v(8, 4, 0), None),
];

/// True when `flavor` at `version` has `feature`.
pub fn has(feature: Feature, flavor: Flavor, version: Version) -> bool {
    let family = Family::of(flavor);
    FEATURES
        .iter()
        .any(|r| r.feature == feature && r.family == family && r.from <= version && r.until.is_none_or(|u| version < u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_by_family_and_version() {
        assert!(has(Feature::DedicatedServer, Flavor::Mysql, v(8, 0, 3)));
        assert!(has(Feature::DedicatedServer, Flavor::Percona, v(8, 0, 36)));
        assert!(!has(Feature::DedicatedServer, Flavor::Mysql, v(8, 0, 2)));
        assert!(!has(Feature::DedicatedServer, Flavor::Mariadb, v(11, 8, 0)));
        assert!(has(Feature::SeveralRedoLogFiles, Flavor::Mysql, v(8, 0, 29)));
        assert!(!has(Feature::SeveralRedoLogFiles, Flavor::Mysql, v(8, 0, 30)));
        assert!(has(Feature::SeveralRedoLogFiles, Flavor::Mariadb, v(10, 4, 30)));
        assert!(!has(Feature::SeveralRedoLogFiles, Flavor::Mariadb, v(10, 5, 0)));
        assert!(has(Feature::TempTable, Flavor::Mysql, v(9, 7, 4)));
        assert!(!has(Feature::TempTable, Flavor::Mariadb, v(11, 8, 0)));
        assert!(has(Feature::Aria, Flavor::Mariadb, v(10, 11, 0)));
        assert!(!has(Feature::Aria, Flavor::Mysql, v(8, 0, 36)));
        assert!(has(Feature::SizesPoolInstances, Flavor::Mysql, v(8, 4, 0)));
        assert!(!has(Feature::SizesPoolInstances, Flavor::Mariadb, v(11, 8, 0)));
        assert!(has(Feature::ReplicationSourceSyntax, Flavor::Mysql, v(9, 7, 4)));
        assert!(!has(Feature::ReplicationSourceSyntax, Flavor::Mysql, v(8, 0, 22)));
        assert!(!has(Feature::ReplicationSourceSyntax, Flavor::Mariadb, v(11, 8, 0)));
        assert!(has(Feature::SemiSyncBuiltIn, Flavor::Mariadb, v(10, 11, 19)));
        assert!(!has(Feature::SemiSyncBuiltIn, Flavor::Mysql, v(9, 7, 4)));
        assert!(!has(Feature::GtidReplication, Flavor::Mariadb, v(5, 5, 60)));
    }

    #[test]
    fn flavors_named_in_version_text() {
        assert_eq!(flavor_named_in("10.11.19-MariaDB-0+deb12u1"), Flavor::Mariadb);
        assert_eq!(flavor_named_in("8.0.36-28 (Percona Server (GPL), Release 28)"), Flavor::Percona);
        assert_eq!(flavor_named_in("9.7.4-2"), Flavor::Mysql);
        assert_eq!(Family::of(Flavor::Percona), Family::Mysql);
        assert!(Family::Mariadb.has(Flavor::Mariadb) && !Family::Mariadb.has(Flavor::Mysql));
    }
}
