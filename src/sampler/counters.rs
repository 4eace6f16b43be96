//! What the server's counters measure, per server line: a table of definitions (quantity, flavor,
//! version range, formula, source) that [`Efficiency`](super::Efficiency) reads, instead of conditionals
//! scattered over the code. A quantity that a line cannot count has no row, and its value is `None`.
//!
//! The facts behind the rows were measured on the lines versus runs (MariaDB 10.5, 10.11, 11.8 and
//! MySQL 9.7 from Debian, `oltp_write_only` at one thread): with `innodb_flush_log_at_trx_commit=1` and
//! the binary log off, `Innodb_data_fsyncs` rose by one per transaction on every line, and where
//! `Innodb_os_log_fsyncs` exists (MariaDB before 10.8, MySQL) it rose by the same count: the redo log's
//! fsyncs are part of `Innodb_data_fsyncs`, so adding the two counts them twice. The binary log's syncs
//! are in neither counter.

use crate::server::flavor::{Family, flavor_named_in};
use crate::server::{Flavor, Version};

/// The name under which the binary log's sync count from `performance_schema` is kept among the status
/// counters of a run: `SUM(COUNT_MISC)` of `file_summary_by_event_name` for `wait/io/file/sql/binlog`.
/// It is not a `SHOW GLOBAL STATUS` variable; versus samples it next to them (see
/// [`BINLOG_SYNCS_SQL`]).
pub const PS_BINLOG_SYNCS: &str = "Ps_binlog_syncs";

/// The query that reads [`PS_BINLOG_SYNCS`]. Its `COUNT_MISC` counts the binary log's syncs (and the
/// file's open, close and stat calls, which happen only when the log rotates).
pub const BINLOG_SYNCS_SQL: &str = "SELECT CAST(SUM(COUNT_MISC) AS SIGNED) FROM performance_schema.file_summary_by_event_name \
     WHERE EVENT_NAME = 'wait/io/file/sql/binlog'";

/// A quantity a run's counters are turned into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// InnoDB's fsyncs of data files, doublewrite buffer and redo log, each counted once.
    InnodbFsyncs,
    /// Syncs of the binary log.
    BinlogSyncs,
    /// Bytes written to the InnoDB redo log.
    RedoBytes,
    /// Bytes InnoDB wrote to its data files.
    DataWrittenBytes,
}

/// How a quantity is computed from the counter deltas of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formula {
    /// The delta of one counter.
    Counter(&'static str),
    /// The delta of a group-commit counter divided by the server variable that says after how many
    /// group commits the log is synced (`sync_binlog`); 0 when that variable is 0 (the server never
    /// syncs, the OS writes back when it wants).
    EveryNth {
        /// The counter of group commits.
        counter: &'static str,
        /// The variable holding N.
        every: &'static str,
    },
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Definition {
    /// What the row computes.
    pub quantity: Quantity,
    /// For which servers.
    pub family: Family,
    /// First version the row applies to.
    pub from: Version,
    /// First version it no longer applies to (`None`: still applies).
    pub until: Option<Version>,
    /// A variable that must be `ON` for the quantity to be non-zero (`log_bin`): when it is `OFF` the
    /// value is 0 without reading any counter.
    pub only_with: Option<&'static str>,
    /// How it is computed.
    pub formula: Formula,
    /// Where the counter comes from and why the formula is right.
    pub source: &'static str,
}

const fn v(major: u32, minor: u32) -> Version {
    Version::new(major, minor, 0)
}

/// The definitions, by quantity and line.
pub const DEFINITIONS: &[Definition] = &[
    Definition {
        quantity: Quantity::InnodbFsyncs,
        family: Family::Mariadb,
        from: v(10, 0),
        until: Some(v(10, 8)),
        only_with: None,
        formula: Formula::Counter("Innodb_data_fsyncs"),
        source: "SHOW GLOBAL STATUS Innodb_data_fsyncs; it includes the redo log's fsyncs, which \
                 Innodb_os_log_fsyncs counts again (measured on 10.5.29: both rise by one per commit)",
    },
    Definition {
        quantity: Quantity::InnodbFsyncs,
        family: Family::Mariadb,
        from: v(10, 8),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_data_fsyncs"),
        source: "SHOW GLOBAL STATUS Innodb_data_fsyncs, redo log included (Innodb_os_log_fsyncs was \
                 removed in 10.8; measured on 10.11.19 and 11.8.9: one per commit)",
    },
    Definition {
        quantity: Quantity::InnodbFsyncs,
        family: Family::Mysql,
        from: v(5, 6),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_data_fsyncs"),
        source: "SHOW GLOBAL STATUS Innodb_data_fsyncs; it includes the redo log's fsyncs, which \
                 Innodb_os_log_fsyncs counts again (measured on 9.7.4: both rise by one per commit)",
    },
    Definition {
        quantity: Quantity::BinlogSyncs,
        family: Family::Mariadb,
        from: v(10, 0),
        until: None,
        only_with: Some("log_bin"),
        formula: Formula::EveryNth { counter: "Binlog_group_commits", every: "sync_binlog" },
        source: "SHOW GLOBAL STATUS Binlog_group_commits divided by sync_binlog: MariaDB syncs the binary \
                 log once every sync_binlog group commits and has no counter of the syncs themselves",
    },
    Definition {
        quantity: Quantity::BinlogSyncs,
        family: Family::Mysql,
        from: v(5, 6),
        until: None,
        only_with: Some("log_bin"),
        formula: Formula::Counter(PS_BINLOG_SYNCS),
        source: "performance_schema.file_summary_by_event_name, COUNT_MISC of wait/io/file/sql/binlog: \
                 the binary log's syncs (measured on 9.7.4: one per commit at sync_binlog=1, a third at 3, \
                 none at 0); unknown when performance_schema is off",
    },
    Definition {
        quantity: Quantity::RedoBytes,
        family: Family::Mariadb,
        from: v(10, 0),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_os_log_written"),
        source: "SHOW GLOBAL STATUS Innodb_os_log_written",
    },
    Definition {
        quantity: Quantity::RedoBytes,
        family: Family::Mysql,
        from: v(5, 6),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_os_log_written"),
        source: "SHOW GLOBAL STATUS Innodb_os_log_written",
    },
    Definition {
        quantity: Quantity::DataWrittenBytes,
        family: Family::Mariadb,
        from: v(10, 0),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_data_written"),
        source: "SHOW GLOBAL STATUS Innodb_data_written",
    },
    Definition {
        quantity: Quantity::DataWrittenBytes,
        family: Family::Mysql,
        from: v(5, 6),
        until: None,
        only_with: None,
        formula: Formula::Counter("Innodb_data_written"),
        source: "SHOW GLOBAL STATUS Innodb_data_written",
    },
];

/// The server a run was measured on: its line and its `SHOW GLOBAL VARIABLES`.
#[derive(Debug, Clone, Copy)]
pub struct ServerLine<'a> {
    /// MariaDB, MySQL or Percona.
    pub flavor: Flavor,
    /// Its version.
    pub version: Version,
    /// Its global variables (name, value).
    pub variables: &'a [(String, String)],
}

impl<'a> ServerLine<'a> {
    /// The line of a server from the version string it reports (`SELECT VERSION()`): MariaDB when the
    /// string says so, else MySQL (Percona's counters are MySQL's); `None` without a version number.
    pub fn from_version_string(version: &str, variables: &'a [(String, String)]) -> Option<ServerLine<'a>> {
        Some(ServerLine { flavor: flavor_named_in(version), version: Version::find_in(version)?, variables })
    }

    fn variable(&self, name: &str) -> Option<&'a str> {
        self.variables.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The row that defines `quantity` on `line`, if the line can count it.
pub fn definition(quantity: Quantity, flavor: Flavor, version: Version) -> Option<&'static Definition> {
    let family = Family::of(flavor);
    DEFINITIONS.iter().find(|d| {
        d.quantity == quantity && d.family == family && d.from <= version && d.until.is_none_or(|u| version < u)
    })
}

/// The value of `quantity` over a run on `line` from the run's counter deltas (not per transaction);
/// `None` when the line has no definition for it or a counter it needs is missing.
pub fn measure(quantity: Quantity, line: &ServerLine<'_>, deltas: &[(String, i64)]) -> Option<f64> {
    let d = definition(quantity, line.flavor, line.version)?;
    if let Some(var) = d.only_with
        && line.variable(var).is_some_and(is_off)
    {
        return Some(0.0);
    }
    let delta = |name: &str| deltas.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, d)| (*d).max(0) as f64);
    match d.formula {
        Formula::Counter(name) => delta(name),
        Formula::EveryNth { counter, every } => {
            let n: f64 = line.variable(every)?.trim().parse().ok()?;
            if n <= 0.0 { Some(0.0) } else { delta(counter).map(|c| (c / n).floor()) }
        }
    }
}

fn is_off(v: &str) -> bool {
    matches!(v.trim().to_ascii_uppercase().as_str(), "OFF" | "0" | "FALSE" | "NO")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    fn deltas(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
        pairs.iter().map(|(a, b)| (a.to_string(), *b)).collect()
    }

    #[test]
    fn every_line_has_one_row_per_quantity() {
        let lines = [
            (Flavor::Mariadb, Version::new(10, 5, 29)),
            (Flavor::Mariadb, Version::new(10, 11, 19)),
            (Flavor::Mariadb, Version::new(11, 8, 9)),
            (Flavor::Mysql, Version::new(8, 0, 45)),
            (Flavor::Mysql, Version::new(9, 7, 4)),
            (Flavor::Percona, Version::new(8, 4, 2)),
        ];
        for (f, ver) in lines {
            for q in [Quantity::InnodbFsyncs, Quantity::BinlogSyncs, Quantity::RedoBytes, Quantity::DataWrittenBytes] {
                let n = DEFINITIONS
                    .iter()
                    .filter(|d| {
                        d.quantity == q && d.family == Family::of(f) && d.from <= ver && d.until.is_none_or(|u| ver < u)
                    })
                    .count();
                assert_eq!(n, 1, "{f} {ver} {q:?}");
            }
        }
        let at = |ver| definition(Quantity::InnodbFsyncs, Flavor::Mariadb, ver).unwrap().source;
        assert!(at(Version::new(10, 7, 9)).contains("10.5"));
        assert!(at(Version::new(10, 8, 0)).contains("removed in 10.8"));
        assert!(definition(Quantity::InnodbFsyncs, Flavor::Mariadb, Version::new(5, 5, 0)).is_none());
    }

    #[test]
    fn innodb_fsyncs_count_the_redo_log_once() {
        // Deltas as measured on MySQL 9.7.4 (1434 commits, binary log off).
        let v = vars(&[("log_bin", "OFF"), ("sync_binlog", "1")]);
        let line = ServerLine::from_version_string("9.7.4-2", &v).unwrap();
        let d = deltas(&[("Innodb_data_fsyncs", 1460), ("Innodb_os_log_fsyncs", 1446)]);
        assert_eq!(measure(Quantity::InnodbFsyncs, &line, &d), Some(1460.0));
        assert_eq!(measure(Quantity::BinlogSyncs, &line, &d), Some(0.0), "binary log off");
        let maria = ServerLine::from_version_string("10.5.29-MariaDB-0+deb11u1", &v).unwrap();
        assert_eq!(maria.flavor, Flavor::Mariadb);
        assert_eq!(measure(Quantity::InnodbFsyncs, &maria, &d), Some(1460.0));
        assert_eq!(measure(Quantity::InnodbFsyncs, &maria, &[]), None, "counter missing");
    }

    #[test]
    fn binlog_syncs_per_flavor() {
        let on = |n: &str| vars(&[("log_bin", "ON"), ("sync_binlog", n)]);
        let d = deltas(&[("Binlog_group_commits", 900), (PS_BINLOG_SYNCS, 300)]);
        for (n, want) in [("1", 900.0), ("3", 300.0), ("0", 0.0)] {
            let v = on(n);
            let maria = ServerLine::from_version_string("11.8.9-MariaDB-0+deb13u1-log", &v).unwrap();
            assert_eq!(measure(Quantity::BinlogSyncs, &maria, &d), Some(want), "sync_binlog={n}");
        }
        let v = on("3");
        let mysql = ServerLine::from_version_string("9.7.4-2", &v).unwrap();
        assert_eq!(measure(Quantity::BinlogSyncs, &mysql, &d), Some(300.0));
        assert_eq!(measure(Quantity::BinlogSyncs, &mysql, &deltas(&[])), None, "performance_schema off");
        assert!(ServerLine::from_version_string("unknown", &v).is_none());
    }
}
