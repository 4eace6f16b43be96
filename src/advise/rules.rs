//! Candidates from written rules: one table row per variable and rule (what it sets, where the rule
//! comes from, which servers it applies to, its risk class), and the rule's formula over the
//! [`Facts`]. [`candidates`] walks the table in order; a rule sees the values earlier rows proposed
//! (the buffer pool instances follow the proposed buffer pool).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::facts::Facts;
use super::formulas::*;
use crate::server::effective::same_value;
use crate::server::flavor::Family;
use crate::server::{Flavor, Version};

/// What a value risks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Nothing but the time it takes to change.
    Safe,
    /// Memory: it raises what the server can allocate (the worst case is checked against the memory).
    Memory,
    /// A durability trade: a crash can lose or damage committed data. Never recommended without
    /// `--allow-durability-trade`, and then in a tier of its own.
    Durability,
}

impl Risk {
    /// Words for a table.
    pub fn label(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Memory => "memory",
            Risk::Durability => "durability trade",
        }
    }
}

/// The area of a rule: candidates are screened in groups by area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    /// Buffer pool size and instances.
    BufferPool,
    /// Redo log size.
    Redo,
    /// Flushing and I/O.
    Io,
    /// Thread concurrency.
    Concurrency,
    /// Table and thread caches.
    Caches,
    /// In-memory temporary tables.
    TempTables,
    /// Per-connection and log buffers.
    Buffers,
    /// Logging that costs on every statement.
    Logging,
    /// Durability trades.
    Durability,
}

impl Area {
    /// Words for a table.
    pub fn label(self) -> &'static str {
        match self {
            Area::BufferPool => "buffer pool",
            Area::Redo => "redo log",
            Area::Io => "flushing and I/O",
            Area::Concurrency => "concurrency",
            Area::Caches => "table and thread caches",
            Area::TempTables => "temporary tables",
            Area::Buffers => "buffers",
            Area::Logging => "logging",
            Area::Durability => "durability",
        }
    }
}

/// Servers a rule applies to: MySQL (and Percona) or MariaDB, from a version, before another.
#[derive(Debug, Clone, Copy)]
pub struct Applies {
    /// The family.
    pub family: Family,
    /// First version.
    pub from: Version,
    /// First version it no longer applies to.
    pub until: Option<Version>,
}

const fn v(major: u32, minor: u32, patch: u32) -> Version {
    Version::new(major, minor, patch)
}
const MYSQL: Applies = Applies { family: Family::Mysql, from: v(5, 6, 0), until: None };
const MARIADB: Applies = Applies { family: Family::Mariadb, from: v(10, 0, 0), until: None };
const fn mysql(from: Version, until: Option<Version>) -> Applies {
    Applies { family: Family::Mysql, from, until }
}
const fn mariadb(from: Version, until: Option<Version>) -> Applies {
    Applies { family: Family::Mariadb, from, until }
}

/// What a rule proposes for the facts at hand.
/// One row of the table.
pub struct Rule {
    /// The variable it sets.
    pub variable: &'static str,
    /// Its screening group.
    pub area: Area,
    /// Its risk class.
    pub risk: Risk,
    /// The servers it applies to.
    pub applies: &'static [Applies],
    /// The rule in words.
    pub rule: &'static str,
    /// Where the rule comes from.
    pub source: &'static str,
    /// For durability trades: what a crash can lose.
    pub loses: &'static str,
    /// The formula.
    pub propose: fn(&Ctx<'_>) -> Propose,
}

impl Rule {
    /// Whether the rule is for this server.
    pub fn applies_to(&self, flavor: Flavor, version: Version) -> bool {
        self.applies.iter().any(|a| a.family.has(flavor) && version >= a.from && a.until.is_none_or(|u| version < u))
    }
}

/// A value to try: the rule's proposal with everything the output shows about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The variable.
    pub variable: String,
    /// The value as given to the server.
    pub value: String,
    /// Its my.cnf spelling.
    pub display: String,
    /// The current value.
    pub old: Option<String>,
    /// Screening group.
    pub area: Area,
    /// Risk class.
    pub risk: Risk,
    /// The rule in words.
    pub rule: String,
    /// Its source.
    pub source: String,
    /// For durability trades: what a crash can lose.
    pub loses: Option<String>,
    /// The rule applied to the facts.
    pub why: String,
}

/// A rule that proposed nothing, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Considered {
    /// The variable.
    pub variable: String,
    /// Risk class of the rule.
    pub risk: Risk,
    /// The rule in words.
    pub rule: String,
    /// Why nothing is proposed.
    pub outcome: String,
}

const MYSQLTUNER: &str = "MySQLTuner (mysqltuner.pl)";
const MANUAL: &str = "MySQL / MariaDB manual";
const REDO_MYSQLTUNER: &str =
    "MySQLTuner: redo ≥ an hour of Innodb_os_log_written (cap 16 GB); 25 % of the buffer pool before 8.0.30";

/// The rules, in the order they are applied.
pub static RULES: &[Rule] = &[
    Rule {
        variable: "innodb_buffer_pool_size",
        area: Area::BufferPool,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "the prepared data × 1.25 (MySQLTuner: the pool should hold the InnoDB data) when the current pool does not hold it, and then at least what innodb_dedicated_server gives the RAM; at most 75 % of RAM (innodb_dedicated_server's share above 4 GB) and what the memory bound leaves",
        source: "MySQLTuner; MySQL manual, innodb_dedicated_server",
        loses: "",
        propose: buffer_pool,
    },
    Rule {
        variable: "innodb_buffer_pool_instances",
        area: Area::BufferPool,
        risk: Risk::Safe,
        applies: &[MYSQL, mariadb(v(10, 0, 0), Some(v(10, 5, 0)))],
        rule: "one instance per GiB of buffer pool, at most one per CPU (1 below 1 GiB); none on MySQL 8.4 and later, which size them from the pool and the CPUs",
        source: "MySQLTuner (mysqltuner.pl); MySQL 8.4 manual, innodb_buffer_pool_instances",
        loses: "",
        propose: buffer_pool_instances,
    },
    Rule {
        variable: "innodb_redo_log_capacity",
        area: Area::Redo,
        risk: Risk::Safe,
        applies: &[mysql(v(8, 0, 30), None)],
        rule: "an hour of the redo the probe wrote, at least 100 MB (1 GB above 8 GB of RAM), at most 16 GB and a tenth of the free disk; crash recovery takes longer",
        source: REDO_MYSQLTUNER,
        loses: "",
        propose: redo_capacity,
    },
    Rule {
        variable: "innodb_log_file_size",
        area: Area::Redo,
        risk: Risk::Safe,
        applies: &[mysql(v(5, 6, 0), Some(v(8, 0, 30))), MARIADB],
        rule: "an hour of the redo the probe wrote and at least 25 % of the buffer pool, at most 16 GB and a tenth of the free disk, over the log files; crash recovery takes longer",
        source: REDO_MYSQLTUNER,
        loses: "",
        propose: log_file_size,
    },
    Rule {
        variable: "innodb_io_capacity",
        area: Area::Io,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "the sync writes per second the datadir's device does (1 s / the measured fsync latency), 200 to 20 000; 200 on a rotational disk that syncs no faster than one (≥ 1 ms)",
        source: "MySQL manual, innodb_io_capacity (set it to the I/O operations per second the system can do)",
        loses: "",
        propose: io_capacity,
    },
    Rule {
        variable: "innodb_flush_method",
        area: Area::Io,
        risk: Risk::Safe,
        applies: &[MYSQL, mariadb(v(10, 0, 0), Some(v(11, 0, 0)))],
        rule: "O_DIRECT instead of fsync where the file system supports it",
        source: "MySQL manual, innodb_flush_method; MySQL 8.4 and MariaDB 10.6 default",
        loses: "",
        propose: flush_method_direct,
    },
    Rule {
        variable: "innodb_flush_neighbors",
        area: Area::Io,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "0 on storage that is not rotational",
        source: "MySQL manual, innodb_flush_neighbors (disable it for SSDs)",
        loses: "",
        propose: flush_neighbors,
    },
    Rule {
        variable: "innodb_thread_concurrency",
        area: Area::Concurrency,
        risk: Risk::Safe,
        applies: &[MYSQL, mariadb(v(10, 0, 0), Some(v(10, 6, 0)))],
        rule: "2 × CPUs + 1 when the workload opens more connections than that",
        source: "MySQL 5.x manual, innodb_thread_concurrency (2 × CPUs + disks)",
        loses: "",
        propose: thread_concurrency,
    },
    Rule {
        variable: "table_open_cache",
        area: Area::Caches,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "twice the current when the probe's table-open hit rate is below 20 %",
        source: MYSQLTUNER,
        loses: "",
        propose: table_open_cache,
    },
    Rule {
        variable: "table_definition_cache",
        area: Area::Caches,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "at least the tables of the data plus 400",
        source: MYSQLTUNER,
        loses: "",
        propose: table_definition_cache,
    },
    Rule {
        variable: "thread_cache_size",
        area: Area::Caches,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "start at 4 when off; the connections when more than half of the probe's connections created a thread",
        source: MYSQLTUNER,
        loses: "",
        propose: thread_cache,
    },
    Rule {
        variable: "tmp_table_size",
        area: Area::TempTables,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "256 MB when more than 25 % of the probe's temporary tables went to disk",
        source: MYSQLTUNER,
        loses: "",
        propose: tmp_tables,
    },
    Rule {
        variable: "max_heap_table_size",
        area: Area::TempTables,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "equal to tmp_table_size (the smaller of the two limits an in-memory temporary table)",
        source: MYSQLTUNER,
        loses: "",
        propose: tmp_tables,
    },
    Rule {
        variable: "sort_buffer_size",
        area: Area::Buffers,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "twice the current (at most 8 MB) when more than 10 % of the probe's sorts needed merge passes",
        source: MYSQLTUNER,
        loses: "",
        propose: |c| sort_buffers(c, "sort_buffer_size"),
    },
    Rule {
        variable: "read_rnd_buffer_size",
        area: Area::Buffers,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "twice the current (at most 8 MB) when more than 10 % of the probe's sorts needed merge passes",
        source: MYSQLTUNER,
        loses: "",
        propose: |c| sort_buffers(c, "read_rnd_buffer_size"),
    },
    Rule {
        variable: "join_buffer_size",
        area: Area::Buffers,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "twice the current, at most 4 MB, when the probe ran joins without indexes",
        source: MYSQLTUNER,
        loses: "",
        propose: join_buffer,
    },
    Rule {
        variable: "innodb_log_buffer_size",
        area: Area::Buffers,
        risk: Risk::Memory,
        applies: &[MYSQL, MARIADB],
        rule: "twice the current (at most 256 MB) when the probe waited for the log buffer",
        source: MYSQLTUNER,
        loses: "",
        propose: log_buffer,
    },
    Rule {
        variable: "general_log",
        area: Area::Logging,
        risk: Risk::Safe,
        applies: &[MYSQL, MARIADB],
        rule: "OFF: the general log writes every statement",
        source: MANUAL,
        loses: "",
        propose: |c| off_if_on(c, "general_log", "every statement is written to the general log"),
    },
    Rule {
        variable: "query_cache_type",
        area: Area::Logging,
        risk: Risk::Safe,
        applies: &[mysql(v(5, 6, 0), Some(v(8, 0, 0))), MARIADB],
        rule: "OFF when the query cache is on",
        source: "MySQLTuner; MariaDB manual, query cache",
        loses: "",
        propose: query_cache,
    },
    Rule {
        variable: "innodb_flush_log_at_trx_commit",
        area: Area::Durability,
        risk: Risk::Durability,
        applies: &[MYSQL, MARIADB],
        rule: "2: the redo log is written at commit and fsynced once a second",
        source: "MySQL manual; pt-variable-advisor ('not configured in strictly ACID mode')",
        loses: "the transactions committed in about the last second, on an OS crash or a power loss (a crash of the server alone loses none)",
        propose: trx_commit,
    },
    Rule {
        variable: "sync_binlog",
        area: Area::Durability,
        risk: Risk::Durability,
        applies: &[MYSQL, MARIADB],
        rule: "0: the OS decides when the binary log reaches the disk",
        source: "MySQL manual; pt-variable-advisor ('isn't configured so that every transaction is flushed')",
        loses: "binary-log events of committed transactions not yet written back by the OS: replicas and point-in-time recovery miss them",
        propose: sync_binlog,
    },
    Rule {
        variable: "log_bin",
        area: Area::Durability,
        risk: Risk::Durability,
        applies: &[MYSQL, MARIADB],
        rule: "skip-log-bin: no binary log",
        source: "pt-variable-advisor ('point-in-time recovery and replication are not possible')",
        loses: "point-in-time recovery and replication from this server",
        propose: skip_log_bin,
    },
    Rule {
        variable: "innodb_doublewrite",
        area: Area::Durability,
        risk: Risk::Durability,
        applies: &[MYSQL, MARIADB],
        rule: "OFF: pages are written once",
        source: "MySQL manual; pt-variable-advisor ('your data is not safe!')",
        loses: "pages torn by a crash in mid-write: they cannot be repaired from the doublewrite buffer, the table must be restored",
        propose: doublewrite,
    },
    Rule {
        variable: "innodb_flush_method",
        area: Area::Durability,
        risk: Risk::Durability,
        applies: &[mysql(v(8, 0, 14), None), mariadb(v(10, 0, 0), Some(v(11, 0, 0)))],
        rule: "O_DIRECT_NO_FSYNC: no fsync after data-file writes",
        source: "MySQL manual, innodb_flush_method (what innodb_dedicated_server set in 8.0)",
        loses: "data-file writes that the storage's volatile cache holds at a power loss (safe only where the storage makes O_DIRECT writes durable)",
        propose: flush_no_fsync,
    },
];

/// A numeric value (a size or a count) is a candidate only when it is at least this factor above or
/// below the current one: a few percent more of a cache or a buffer (400 → 402 table definitions)
/// cannot show in a benchmark whose runs vary by several percent, and would spend a screening step.
const MIN_CHANGE: f64 = 1.25;

/// Whether `new` is a number within [`MIN_CHANGE`] of the number `old` (both non-zero).
fn too_close(old: &str, new: &str) -> bool {
    let (Some(o), Some(n)) = (super::facts::parse_size(old), super::facts::parse_size(new)) else { return false };
    if o == 0 || n == 0 {
        return false;
    }
    let r = n as f64 / o as f64;
    r < MIN_CHANGE && r > 1.0 / MIN_CHANGE
}

/// The rules' candidates for `facts`, and the rules that proposed nothing (with why). A rule for a
/// variable the server does not have proposes nothing; a value equal to the current one neither, nor a
/// number within 25 % of the current one (see [`MIN_CHANGE`]).
pub fn candidates(facts: &Facts) -> (Vec<Candidate>, Vec<Considered>) {
    let mut ctx = Ctx { facts, proposed: BTreeMap::new() };
    let (mut out, mut considered) = (Vec::new(), Vec::new());
    for r in RULES.iter().filter(|r| r.applies_to(facts.flavor, facts.version)) {
        let old = facts.var(r.variable).map(str::to_string);
        let no =
            |outcome: String| Considered { variable: r.variable.into(), risk: r.risk, rule: r.rule.into(), outcome };
        if old.is_none() {
            considered.push(no(format!("{} {} has no such variable", facts.flavor, facts.version)));
            continue;
        }
        match (r.propose)(&ctx) {
            Propose::No(why) => considered.push(no(why)),
            Propose::Set { value, .. } if old.as_deref().is_some_and(|o| same_value(o, &value)) => {
                considered.push(no(format!("already {value}")))
            }
            Propose::Set { display, .. }
                if r.risk != Risk::Durability && old.as_deref().is_some_and(|o| too_close(o, &display)) =>
            {
                considered.push(no(format!(
                    "the rule's {display} is within {:.0} % of the current {}: too small a change to measure",
                    (MIN_CHANGE - 1.0) * 100.0,
                    old.as_deref().unwrap_or_default()
                )))
            }
            Propose::Set { value, display, why } => {
                // A durability trade never changes what the safe rules see.
                if r.risk != Risk::Durability {
                    ctx.proposed.insert(r.variable.to_string(), value.clone());
                }
                out.push(Candidate {
                    variable: r.variable.into(),
                    value,
                    display,
                    old,
                    area: r.area,
                    risk: r.risk,
                    rule: r.rule.into(),
                    source: r.source.into(),
                    loses: (!r.loses.is_empty()).then(|| r.loses.to_string()),
                    why,
                });
            }
        }
    }
    (out, considered)
}

/// The rule row of a variable and risk class (for the report of a stored advice).
pub fn rule_for(variable: &str, risk: Risk) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.variable == variable && r.risk == risk)
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
