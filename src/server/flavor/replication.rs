//! Replication statements and options per family and version: what a primary and its replicas need in
//! their option files, how the replication account is made, how a replica is pointed at its primary,
//! started, asked for its state, and waited for. Callers ask a [`Dialect`] and never compare flavors or
//! versions themselves; which form a server takes comes from the [`Feature`] table.
//!
//! MariaDB: `CHANGE MASTER TO … MASTER_USE_GTID=slave_pos`, `START SLAVE`, `SHOW SLAVE STATUS`,
//! positions in `gtid_binlog_pos` / `gtid_slave_pos`, `MASTER_GTID_WAIT`; semi-synchronous replication
//! built in from 10.3.3. MySQL: `CHANGE REPLICATION SOURCE TO … SOURCE_AUTO_POSITION=1` from 8.0.23
//! (`CHANGE MASTER TO … MASTER_AUTO_POSITION=1` before), `START REPLICA` from 8.0.22, positions in
//! `gtid_executed`, `WAIT_FOR_EXECUTED_GTID_SET`; semi-synchronous replication by plugin.

use super::features::{Family, Feature, has};
use super::quote_string;
use crate::server::build::{Build, Flavor, Version};

/// MySQL's semi-synchronous plugins with the `source`/`replica` names (8.0.26; the old ones are gone in 9.x).
const SEMI_SYNC_SOURCE_PLUGINS: Version = Version::new(8, 0, 26);
/// `RESET BINARY LOGS AND GTIDS` replaces `RESET MASTER` in MySQL 8.4.
const RESET_BINARY_LOGS: Version = Version::new(8, 4, 0);
/// From 8.0.4 new accounts use caching_sha2_password, which a replica without TLS can only use with the
/// source's public key.
const CACHING_SHA2: Version = Version::new(8, 0, 4);

/// Where a replica replicates from, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLink<'a> {
    /// The primary's TCP port on 127.0.0.1 (replication cannot use the socket).
    pub port: u16,
    /// The replication account.
    pub user: &'a str,
    /// Its password.
    pub password: &'a str,
    /// Seconds the replica holds each transaction back before applying it (0: none).
    pub delay_s: u32,
    /// Whether the primary offers TLS. MariaDB replicas from 11.4 ask for it by default, which a
    /// primary without it (MariaDB before 11.4 in a sandbox) refuses; they are told not to.
    pub source_tls: bool,
}

/// The column names of a replica's status row (`SHOW SLAVE STATUS` / `SHOW REPLICA STATUS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusColumns {
    /// Receiver (I/O thread) state, `Yes`/`No`/`Connecting`.
    pub io_running: &'static str,
    /// Applier (SQL thread) state.
    pub sql_running: &'static str,
    /// The server's own lag estimate in whole seconds, NULL when a thread is stopped.
    pub seconds_behind: &'static str,
    /// The receiver's last error.
    pub last_io_error: &'static str,
    /// The applier's last error.
    pub last_sql_error: &'static str,
    /// The configured delay.
    pub sql_delay: &'static str,
}

/// The replication forms of one server family at one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    flavor: Flavor,
    version: Version,
}

impl Dialect {
    /// The forms of `flavor` at `version`.
    pub fn of(flavor: Flavor, version: Version) -> Dialect {
        Dialect { flavor, version }
    }

    fn family(&self) -> Family {
        Family::of(self.flavor)
    }

    fn has(&self, f: Feature) -> bool {
        has(f, self.flavor, self.version)
    }

    /// Why `build` cannot run a primary with replicas as asked (one sentence that says what would
    /// work), or `None` when it can.
    pub fn refusal(build: &Build, semi_sync: bool) -> Option<String> {
        let d = Dialect::of(build.flavor, build.version);
        let what = format!("{} {}", build.flavor, build.version);
        if !d.has(Feature::GtidReplication) {
            return Some(format!(
                "{what} has no GTID replication, which versus topologies use; use MariaDB 10.0.2+ or MySQL 5.6.5+"
            ));
        }
        if semi_sync && !d.has(Feature::SemiSyncBuiltIn) {
            if d.family() == Family::Mariadb {
                return Some(format!("{what} has no built-in semi-synchronous replication; use MariaDB 10.3.3+"));
            }
            if build.version < SEMI_SYNC_SOURCE_PLUGINS {
                return Some(format!("{what} lacks the semisync_source plugin; use MySQL 8.0.26+ or drop --semi-sync"));
            }
            for lib in ["semisync_source.so", "semisync_replica.so"] {
                if !build.layout.plugin_dir.join(lib).is_file() {
                    return Some(format!(
                        "build {} has no {lib} in {}; use a build that ships it or drop --semi-sync",
                        build.name,
                        build.layout.plugin_dir.display()
                    ));
                }
            }
        }
        None
    }

    /// Why a replica of build `replica` cannot replicate from a primary of build `primary` (one sentence
    /// that says what would work), or `None` when it can: both of one family (MariaDB, or MySQL and
    /// Percona Server), and the replica not older than its primary (replication to an older server is
    /// not supported by either).
    pub fn cross_version_refusal(primary: &Build, replica: &Build) -> Option<String> {
        let (p, r) = (Dialect::of(primary.flavor, primary.version), Dialect::of(replica.flavor, replica.version));
        if p.family() != r.family() {
            return Some(format!(
                "a {} {} replica cannot replicate from a {} {} primary; use a replica build of the primary's family",
                replica.flavor, replica.version, primary.flavor, primary.version
            ));
        }
        if replica.version < primary.version {
            return Some(format!(
                "replica build {} ({}) is older than the primary's {} ({}), and replication to an older server is \
                 not supported; use a replica of version {} or newer",
                replica.name, replica.version, primary.name, primary.version, primary.version
            ));
        }
        None
    }

    /// Options (`name=value`, applied after the user's `--set`) of the topology member with `server_id`
    /// (1 for the primary): binary log, row format, GTIDs, stable relay-log names, read-only replicas and
    /// semi-synchronous replication when asked.
    pub fn server_options(&self, server_id: u32, primary: bool, semi_sync: bool) -> Vec<String> {
        let mut o = vec![format!("server_id={server_id}"), "log_bin=binlog".to_string(), "relay_log=relay-bin".into()];
        match self.family() {
            Family::Mariadb => o.push("binlog_format=ROW".into()),
            Family::Mysql => {
                o.push("gtid_mode=ON".into());
                o.push("enforce_gtid_consistency=ON".into());
            }
        }
        if !primary {
            o.push("read_only=ON".into());
        }
        if semi_sync {
            o.extend(self.semi_sync_options(primary));
        }
        o
    }

    fn semi_sync_options(&self, primary: bool) -> Vec<String> {
        match (self.family(), primary) {
            (Family::Mariadb, true) => vec![
                "rpl_semi_sync_master_enabled=ON".into(),
                // The defaults differ (MariaDB AFTER_COMMIT, MySQL AFTER_SYNC): always say which.
                "rpl_semi_sync_master_wait_point=AFTER_SYNC".into(),
                "rpl_semi_sync_master_timeout=10000".into(),
            ],
            (Family::Mariadb, false) => vec!["rpl_semi_sync_slave_enabled=ON".into()],
            (Family::Mysql, true) => vec![
                "plugin_load_add=semisync_source.so".into(),
                "loose_rpl_semi_sync_source_enabled=ON".into(),
                "loose_rpl_semi_sync_source_wait_point=AFTER_SYNC".into(),
                "loose_rpl_semi_sync_source_timeout=10000".into(),
            ],
            (Family::Mysql, false) => {
                vec!["plugin_load_add=semisync_replica.so".into(), "loose_rpl_semi_sync_replica_enabled=ON".into()]
            }
        }
    }

    /// The prefix of the primary's semi-synchronous status counters: `PREFIX` + `status` (ON while
    /// commits wait for a replica), `tx_wait_time` (µs) and `tx_waits` (commits that waited), `no_tx`
    /// (commits not acknowledged), `no_times` (fallbacks to asynchronous).
    pub fn semi_sync_status_prefix(&self) -> &'static str {
        match self.family() {
            Family::Mariadb => "Rpl_semi_sync_master_",
            Family::Mysql => "Rpl_semi_sync_source_",
        }
    }

    /// Statements (run as root on the primary, not written to its binary log) that create the replication
    /// account at 127.0.0.1 with the one privilege replication needs.
    pub fn create_account(&self, user: &str, password: &str) -> Vec<String> {
        let account = format!("{}@'127.0.0.1'", quote_string(user));
        let pw = quote_string(password);
        let identified = match self.family() {
            Family::Mariadb => format!("IDENTIFIED BY {pw}"),
            Family::Mysql if self.version >= CACHING_SHA2 => format!("IDENTIFIED WITH caching_sha2_password BY {pw}"),
            Family::Mysql => format!("IDENTIFIED BY {pw}"),
        };
        // REPLICATION SLAVE is the name every version knows (REPLICATION REPLICA is its alias in
        // MariaDB 10.5+ and MySQL 8.0.26+).
        vec![
            "SET SESSION sql_log_bin = 0".into(),
            format!("DROP USER IF EXISTS {account}"),
            format!("CREATE USER {account} {identified}"),
            format!("GRANT REPLICATION SLAVE ON *.* TO {account}"),
            "SET SESSION sql_log_bin = 1".into(),
        ]
    }

    /// The query that reads the primary's position: the GTIDs it has written to its binary log.
    pub fn primary_position(&self) -> &'static str {
        match self.family() {
            Family::Mariadb => "SELECT @@GLOBAL.gtid_binlog_pos",
            Family::Mysql => "SELECT @@GLOBAL.gtid_executed",
        }
    }

    /// The query that reads what a replica has applied, comparable with [`Dialect::primary_position`].
    pub fn replica_position(&self) -> &'static str {
        match self.family() {
            Family::Mariadb => "SELECT @@GLOBAL.gtid_slave_pos",
            Family::Mysql => "SELECT @@GLOBAL.gtid_executed",
        }
    }

    /// How many transactions a position (of [`Dialect::primary_position`] or
    /// [`Dialect::replica_position`]) accounts for: MariaDB numbers the transactions of a domain one
    /// after another, so it is the sum of each domain's sequence number (`0-1-531` is 531); MySQL's is
    /// the size of the GTID set (`uuid:1-531:600` is 532).
    pub fn transactions_in(&self, position: &str) -> u64 {
        let entries = position.split(',').map(str::trim).filter(|e| !e.is_empty());
        match self.family() {
            Family::Mariadb => entries.filter_map(|e| e.rsplit('-').next()?.parse::<u64>().ok()).sum(),
            Family::Mysql => entries
                .flat_map(|e| e.split(':').skip(1))
                .filter_map(|range| match range.split_once('-') {
                    Some((a, b)) => Some(b.parse::<u64>().ok()?.saturating_sub(a.parse().ok()?) + 1),
                    None => range.parse::<u64>().ok().map(|_| 1),
                })
                .sum(),
        }
    }

    /// Statements that make a fresh replica start replicating after `position` (the primary's position
    /// once its own set-up is done), so that it does not replay the primary's account set-up.
    pub fn start_after(&self, position: &str) -> Vec<String> {
        let pos = quote_string(position);
        match self.family() {
            Family::Mariadb => vec![format!("SET GLOBAL gtid_slave_pos = {pos}")],
            Family::Mysql => {
                let reset =
                    if self.version >= RESET_BINARY_LOGS { "RESET BINARY LOGS AND GTIDS" } else { "RESET MASTER" };
                let mut s = vec![reset.to_string()];
                if !position.is_empty() {
                    s.push(format!("SET GLOBAL gtid_purged = {pos}"));
                }
                s
            }
        }
    }

    /// The statement that points a replica at its primary on 127.0.0.1, positioned by GTID; it retries
    /// a lost connection every second (a restarted primary is found at once).
    pub fn change_source(&self, link: &SourceLink) -> String {
        let (user, pw) = (quote_string(link.user), quote_string(link.password));
        let port = link.port;
        let delay = link.delay_s;
        match self.family() {
            Family::Mariadb => format!(
                "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, MASTER_USER = {user}, \
                 MASTER_PASSWORD = {pw}, MASTER_USE_GTID = slave_pos, MASTER_DELAY = {delay}, MASTER_CONNECT_RETRY = 1{}",
                if link.source_tls { "" } else { ", MASTER_SSL = 0" }
            ),
            Family::Mysql if self.has(Feature::ReplicationSourceSyntax) => format!(
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {port}, SOURCE_USER = {user}, \
                 SOURCE_PASSWORD = {pw}, SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1, SOURCE_DELAY = {delay}, \
                 SOURCE_CONNECT_RETRY = 1"
            ),
            Family::Mysql => {
                let key = if self.version >= CACHING_SHA2 { ", GET_MASTER_PUBLIC_KEY = 1" } else { "" };
                format!(
                    "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, MASTER_USER = {user}, \
                     MASTER_PASSWORD = {pw}, MASTER_AUTO_POSITION = 1{key}, MASTER_DELAY = {delay}, MASTER_CONNECT_RETRY = 1"
                )
            }
        }
    }

    fn replica_word(&self) -> &'static str {
        if self.has(Feature::ReplicaKeyword) { "REPLICA" } else { "SLAVE" }
    }

    /// `START REPLICA` / `START SLAVE`.
    pub fn start_replica(&self) -> String {
        format!("START {}", self.replica_word())
    }

    /// `STOP REPLICA` / `STOP SLAVE`.
    pub fn stop_replica(&self) -> String {
        format!("STOP {}", self.replica_word())
    }

    /// `SHOW REPLICA STATUS` / `SHOW SLAVE STATUS`.
    pub fn show_status(&self) -> String {
        format!("SHOW {} STATUS", self.replica_word())
    }

    /// The columns of [`Dialect::show_status`]'s row (MariaDB keeps the `Slave_`/`Master` names under
    /// `SHOW REPLICA STATUS`; MySQL renamed them with the statement).
    pub fn status_columns(&self) -> StatusColumns {
        let renamed = self.family() == Family::Mysql && self.has(Feature::ReplicaKeyword);
        if renamed {
            StatusColumns {
                io_running: "Replica_IO_Running",
                sql_running: "Replica_SQL_Running",
                seconds_behind: "Seconds_Behind_Source",
                last_io_error: "Last_IO_Error",
                last_sql_error: "Last_SQL_Error",
                sql_delay: "SQL_Delay",
            }
        } else {
            StatusColumns {
                io_running: "Slave_IO_Running",
                sql_running: "Slave_SQL_Running",
                seconds_behind: "Seconds_Behind_Master",
                last_io_error: "Last_IO_Error",
                last_sql_error: "Last_SQL_Error",
                sql_delay: "SQL_Delay",
            }
        }
    }

    /// A query run on a replica that returns once it has applied `position` (a primary position), or
    /// after `timeout_s` seconds; its one value is 0 on success.
    pub fn wait_for(&self, position: &str, timeout_s: u32) -> String {
        let pos = quote_string(position);
        match self.family() {
            // 0 when reached, -1 on timeout.
            Family::Mariadb => format!("SELECT MASTER_GTID_WAIT({pos}, {timeout_s})"),
            // 0 when reached, 1 on timeout.
            Family::Mysql => format!("SELECT WAIT_FOR_EXECUTED_GTID_SET({pos}, {timeout_s})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::build;
    use super::*;

    fn link() -> SourceLink<'static> {
        SourceLink { port: 24001, user: "versus_repl", password: "pw'1", delay_s: 3, source_tls: true }
    }

    #[test]
    fn mariadb_uses_change_master_with_gtid_slave_pos() {
        let d = Dialect::of(Flavor::Mariadb, Version::new(10, 11, 19));
        assert_eq!(
            d.change_source(&link()),
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 24001, MASTER_USER = 'versus_repl', \
             MASTER_PASSWORD = 'pw''1', MASTER_USE_GTID = slave_pos, MASTER_DELAY = 3, MASTER_CONNECT_RETRY = 1"
        );
        let plain = SourceLink { source_tls: false, ..link() };
        assert!(d.change_source(&plain).ends_with("MASTER_CONNECT_RETRY = 1, MASTER_SSL = 0"), "a primary without TLS");
        assert_eq!(d.start_replica(), "START REPLICA");
        assert_eq!(Dialect::of(Flavor::Mariadb, Version::new(10, 4, 30)).start_replica(), "START SLAVE");
        assert_eq!(d.status_columns().seconds_behind, "Seconds_Behind_Master");
        assert_eq!(d.status_columns().io_running, "Slave_IO_Running");
        assert_eq!(d.wait_for("0-1-5", 10), "SELECT MASTER_GTID_WAIT('0-1-5', 10)");
        assert_eq!(d.start_after("0-1-5"), ["SET GLOBAL gtid_slave_pos = '0-1-5'"]);
    }

    #[test]
    fn mysql_uses_replication_source_from_8_0_23() {
        let d = Dialect::of(Flavor::Mysql, Version::new(9, 7, 4));
        let s = d.change_source(&link());
        assert!(s.starts_with("CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1'"), "{s}");
        assert!(s.contains("SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1, SOURCE_DELAY = 3"), "{s}");
        assert_eq!(d.show_status(), "SHOW REPLICA STATUS");
        assert_eq!(d.status_columns().seconds_behind, "Seconds_Behind_Source");
        assert_eq!(d.start_after("u:1-3"), ["RESET BINARY LOGS AND GTIDS", "SET GLOBAL gtid_purged = 'u:1-3'"]);
        let old = Dialect::of(Flavor::Mysql, Version::new(8, 0, 22));
        assert!(old.change_source(&link()).starts_with("CHANGE MASTER TO"));
        assert!(old.change_source(&link()).contains("GET_MASTER_PUBLIC_KEY = 1"));
        assert_eq!(old.start_replica(), "START REPLICA");
        assert_eq!(old.start_after(""), ["RESET MASTER"]);
        assert_eq!(Dialect::of(Flavor::Mysql, Version::new(8, 0, 21)).show_status(), "SHOW SLAVE STATUS");
    }

    #[test]
    fn positions_count_transactions() {
        let m = Dialect::of(Flavor::Mariadb, Version::new(10, 11, 19));
        assert_eq!(m.transactions_in("0-1-531"), 531);
        assert_eq!(m.transactions_in("0-1-531,1-2-10"), 541);
        assert_eq!(m.transactions_in(""), 0);
        let y = Dialect::of(Flavor::Mysql, Version::new(9, 7, 4));
        assert_eq!(y.transactions_in("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-531:600"), 532);
        assert_eq!(y.transactions_in("a:1-5,\nb:1-10:12-13"), 17);
    }

    #[test]
    fn the_replication_account_has_one_privilege_and_stays_out_of_the_binary_log() {
        let sql = Dialect::of(Flavor::Mariadb, Version::new(11, 8, 9)).create_account("versus_repl", "x");
        assert_eq!(sql.first().unwrap(), "SET SESSION sql_log_bin = 0");
        assert!(sql.contains(&"GRANT REPLICATION SLAVE ON *.* TO 'versus_repl'@'127.0.0.1'".to_string()), "{sql:?}");
        assert_eq!(sql.iter().filter(|s| s.starts_with("GRANT")).count(), 1);
        let sql = Dialect::of(Flavor::Mysql, Version::new(9, 7, 4)).create_account("r", "x");
        assert!(sql.contains(&"CREATE USER 'r'@'127.0.0.1' IDENTIFIED WITH caching_sha2_password BY 'x'".to_string()));
    }

    #[test]
    fn options_by_role_and_family() {
        let m = Dialect::of(Flavor::Mariadb, Version::new(10, 11, 19));
        let p = m.server_options(1, true, true);
        assert!(p.contains(&"server_id=1".to_string()) && p.contains(&"binlog_format=ROW".to_string()), "{p:?}");
        assert!(p.contains(&"rpl_semi_sync_master_enabled=ON".to_string()));
        assert!(!p.contains(&"read_only=ON".to_string()));
        let r = m.server_options(3, false, false);
        assert!(r.contains(&"server_id=3".to_string()) && r.contains(&"read_only=ON".to_string()), "{r:?}");
        assert!(!r.iter().any(|o| o.contains("semi_sync")));
        let y = Dialect::of(Flavor::Mysql, Version::new(9, 7, 4)).server_options(2, false, true);
        assert!(y.contains(&"gtid_mode=ON".to_string()) && y.contains(&"plugin_load_add=semisync_replica.so".into()));
    }

    #[test]
    fn topologies_a_build_cannot_run_are_refused_with_what_would_work() {
        assert_eq!(Dialect::refusal(&build(Flavor::Mariadb, Version::new(10, 11, 19), false), true), None);
        let e = Dialect::refusal(&build(Flavor::Mariadb, Version::new(10, 2, 44), true), true).unwrap();
        assert!(e.contains("use MariaDB 10.3.3+"), "{e}");
        let e = Dialect::refusal(&build(Flavor::Mysql, Version::new(8, 0, 20), true), true).unwrap();
        assert!(e.contains("MySQL 8.0.26+"), "{e}");
        let e = Dialect::refusal(&build(Flavor::Mysql, Version::new(9, 7, 4), true), true).unwrap();
        assert!(e.contains("has no semisync_source.so in /opt/srv/lib/plugin"), "{e}");
        assert_eq!(Dialect::refusal(&build(Flavor::Mysql, Version::new(9, 7, 4), true), false), None);
        let e = Dialect::refusal(&build(Flavor::Mysql, Version::new(5, 5, 62), true), false).unwrap();
        assert!(e.contains("no GTID replication"), "{e}");
    }
}
