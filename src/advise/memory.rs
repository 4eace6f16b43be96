//! The worst case of a config's memory at `max_connections`: global buffers plus the per-connection
//! buffers times `max_connections`, which must stay within 90 % of the memory advised for.
//!
//! The terms are those of Releem's memory calculator (global: buffer pool, log buffer, key buffer, query
//! cache and one in-memory temporary table; per connection: sort, read, read_rnd and join buffers and
//! the thread stack), plus the Aria page cache on MariaDB and the binary log cache per connection when
//! the binary log is on. MySQL 8.0+ bounds all in-memory temporary tables together by
//! `temptable_max_ram` (TempTable engine), which replaces the one-table term there. It is a model of
//! the allocations the server can be driven to, not a measurement of its resident memory; the
//! performance schema's own memory is not in it.

use serde::{Deserialize, Serialize};

use super::facts::{is_on, parse_size};
use crate::server::flavor::features::{self, Feature};
use crate::server::{Flavor, Version};

/// The share of the memory the worst case may take.
pub const LIMIT_SHARE: f64 = 0.9;

/// Who a term is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Global,
    PerConnection,
}

/// One term of the model: a variable whose value is allocated once or per connection.
struct Term {
    variable: &'static str,
    scope: Scope,
    /// Only on servers with this feature.
    needs: Option<Feature>,
    /// Only when this variable is ON.
    only_with: Option<&'static str>,
}

const fn term(variable: &'static str, scope: Scope) -> Term {
    Term { variable, scope, needs: None, only_with: None }
}

/// The terms, as data.
const TERMS: &[Term] = &[
    term("innodb_buffer_pool_size", Scope::Global),
    term("innodb_log_buffer_size", Scope::Global),
    term("key_buffer_size", Scope::Global),
    term("query_cache_size", Scope::Global),
    Term { variable: "aria_pagecache_buffer_size", scope: Scope::Global, needs: Some(Feature::Aria), only_with: None },
    term("sort_buffer_size", Scope::PerConnection),
    term("read_buffer_size", Scope::PerConnection),
    term("read_rnd_buffer_size", Scope::PerConnection),
    term("join_buffer_size", Scope::PerConnection),
    term("thread_stack", Scope::PerConnection),
    Term { variable: "binlog_cache_size", scope: Scope::PerConnection, needs: None, only_with: Some("log_bin") },
];

/// One term's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPart {
    /// The variable (or `min(tmp_table_size, max_heap_table_size)`).
    pub variable: String,
    /// Its bytes.
    pub bytes: u64,
    /// Whether it is allocated per connection.
    pub per_connection: bool,
}

/// The worst case of one config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEstimate {
    /// The terms.
    pub parts: Vec<MemoryPart>,
    /// Sum of the global terms.
    pub global: u64,
    /// Sum of the per-connection terms.
    pub per_connection: u64,
    /// `max_connections`.
    pub max_connections: u64,
    /// `global + per_connection × max_connections`.
    pub total: u64,
    /// The memory advised for.
    pub memory: u64,
    /// 90 % of it.
    pub limit: u64,
}

impl MemoryEstimate {
    /// Whether the worst case stays within the limit.
    pub fn fits(&self) -> bool {
        self.total <= self.limit
    }

    /// The worst case as a share of the memory.
    pub fn share(&self) -> f64 {
        self.total as f64 / self.memory.max(1) as f64
    }

    /// The bytes of one term.
    pub fn part(&self, variable: &str) -> u64 {
        self.parts.iter().find(|p| p.variable == variable).map_or(0, |p| p.bytes)
    }
}

/// The worst case of the config whose variables `get` returns, on a machine with `memory` bytes.
pub fn worst_case(
    flavor: Flavor,
    version: Version,
    get: &dyn Fn(&str) -> Option<String>,
    memory: u64,
) -> MemoryEstimate {
    let size = |name: &str| get(name).as_deref().and_then(parse_size);
    let mut parts = Vec::new();
    for t in TERMS {
        if t.needs.is_some_and(|f| !features::has(f, flavor, version)) {
            continue;
        }
        if let Some(v) = t.only_with
            && !get(v).as_deref().is_some_and(is_on)
        {
            continue;
        }
        if let Some(b) = size(t.variable) {
            parts.push(MemoryPart {
                variable: t.variable.into(),
                bytes: b,
                per_connection: t.scope == Scope::PerConnection,
            });
        }
    }
    let temptable = features::has(Feature::TempTable, flavor, version)
        && get("internal_tmp_mem_storage_engine").is_none_or(|e| e.eq_ignore_ascii_case("TempTable"));
    match (temptable, size("temptable_max_ram")) {
        (true, Some(b)) => {
            parts.push(MemoryPart { variable: "temptable_max_ram".into(), bytes: b, per_connection: false })
        }
        _ => {
            let b = size("tmp_table_size").unwrap_or(0).min(size("max_heap_table_size").unwrap_or(u64::MAX));
            parts.push(MemoryPart {
                variable: "min(tmp_table_size, max_heap_table_size)".into(),
                bytes: b,
                per_connection: false,
            });
        }
    }
    let global = parts.iter().filter(|p| !p.per_connection).map(|p| p.bytes).sum();
    let per_connection = parts.iter().filter(|p| p.per_connection).map(|p| p.bytes).sum();
    let max_connections = size("max_connections").unwrap_or(151);
    let total = global + per_connection * max_connections;
    let limit = (memory as f64 * LIMIT_SHARE) as u64;
    MemoryEstimate { parts, global, per_connection, max_connections, total, memory, limit }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::advise::facts::{GIB, MIB};

    fn vars(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn releem_terms_and_the_limit() {
        let v = vars(&[
            ("innodb_buffer_pool_size", "2G"),
            ("innodb_log_buffer_size", "16M"),
            ("key_buffer_size", "8M"),
            ("sort_buffer_size", "2M"),
            ("read_buffer_size", "128K"),
            ("read_rnd_buffer_size", "256K"),
            ("join_buffer_size", "8M"),
            ("thread_stack", "256K"),
            ("binlog_cache_size", "32K"),
            ("log_bin", "OFF"),
            ("tmp_table_size", "32M"),
            ("max_heap_table_size", "16M"),
            ("max_connections", "100"),
        ]);
        let m = worst_case(Flavor::Mariadb, Version::new(10, 11, 0), &|n| v.get(n).cloned(), 4 * GIB);
        assert_eq!(m.global, 2 * GIB + 16 * MIB + 8 * MIB + 16 * MIB, "{m:?}");
        assert_eq!(
            m.per_connection,
            2 * MIB + 128 * 1024 + 256 * 1024 + 8 * MIB + 256 * 1024,
            "no binlog cache with log_bin OFF"
        );
        assert_eq!(m.total, m.global + 100 * m.per_connection);
        assert_eq!(m.limit, (4.0 * GIB as f64 * 0.9) as u64);
        assert!(m.fits(), "{m:?}");
        // Releem #529: join_buffer_size 8M at 2500 connections on a 4 GB host.
        let mut v2 = v.clone();
        v2.insert("max_connections".into(), "2500".into());
        let m2 = worst_case(Flavor::Mariadb, Version::new(10, 11, 0), &|n| v2.get(n).cloned(), 4 * GIB);
        assert!(!m2.fits() && m2.share() > 6.0, "{m2:?}");
    }

    #[test]
    fn mysql_8_counts_temptable_once() {
        let v = vars(&[("innodb_buffer_pool_size", "1G"), ("temptable_max_ram", "1G"), ("tmp_table_size", "16M")]);
        let m = worst_case(Flavor::Mysql, Version::new(9, 7, 0), &|n| v.get(n).cloned(), 4 * GIB);
        assert_eq!(m.part("temptable_max_ram"), GIB);
        assert_eq!(m.global, 2 * GIB);
        assert_eq!(m.max_connections, 151, "the default when the variable is missing");
    }
}
