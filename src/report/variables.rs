//! How the differing server variables are shown: what matters first (set by a config, the key settings
//! of the engine and the binary log, what `versus explain` found), the rest grouped by component, and
//! variables that only one flavor has (wsrep_*, aria_* …) counted instead of listed. A cross-flavor
//! comparison differs in some 500 variables; a reader needs the dozen that decide the numbers.
//!
//! The component of a variable and the key settings are data tables ([`COMPONENTS`], [`KEY_SETTINGS`]).

use std::collections::{BTreeMap, BTreeSet};

use super::model::{CompareReport, FlavorOnly, VariableDiff, VariableRow};
use crate::present::table::{Cell, Table, Tone};

/// Name prefix → component, first match wins (more specific prefixes first). Unmatched: "Other".
pub const COMPONENTS: &[(&str, &str)] = &[
    ("innodb_", "InnoDB"),
    ("have_innodb", "InnoDB"),
    ("log_bin", "Binary log"),
    ("binlog_", "Binary log"),
    ("sync_binlog", "Binary log"),
    ("max_binlog_", "Binary log"),
    ("expire_logs_", "Binary log"),
    ("log_slave_updates", "Replication"),
    ("log_replica_updates", "Replication"),
    ("gtid_", "Replication"),
    ("enforce_gtid", "Replication"),
    ("rpl_", "Replication"),
    ("slave_", "Replication"),
    ("replica_", "Replication"),
    ("relay_log", "Replication"),
    ("source_", "Replication"),
    ("master_", "Replication"),
    ("server_id", "Replication"),
    ("read_only", "Replication"),
    ("super_read_only", "Replication"),
    ("wsrep_", "Galera (wsrep)"),
    ("optimizer_", "Optimizer"),
    ("join_", "Optimizer"),
    ("eq_range_", "Optimizer"),
    ("range_", "Optimizer"),
    ("histogram_", "Optimizer"),
    ("use_stat_tables", "Optimizer"),
    ("max_seeks_for_key", "Optimizer"),
    ("in_predicate_", "Optimizer"),
    ("performance_schema", "Performance Schema"),
    ("query_cache", "Query cache"),
    ("have_query_cache", "Query cache"),
    ("aria_", "Aria"),
    ("myisam_", "MyISAM"),
    ("key_", "MyISAM"),
    ("concurrent_insert", "MyISAM"),
    ("ssl_", "TLS"),
    ("tls_", "TLS"),
    ("have_ssl", "TLS"),
    ("have_openssl", "TLS"),
    ("character_set", "Character sets"),
    ("collation", "Character sets"),
    ("default_collation", "Character sets"),
    ("thread_", "Threads and connections"),
    ("max_connect", "Threads and connections"),
    ("max_user_connections", "Threads and connections"),
    ("connect_timeout", "Threads and connections"),
    ("wait_timeout", "Threads and connections"),
    ("interactive_timeout", "Threads and connections"),
    ("extra_max_connections", "Threads and connections"),
    ("extra_port", "Threads and connections"),
    ("back_log", "Threads and connections"),
    ("net_", "Network"),
    ("max_allowed_packet", "Network"),
    ("log_", "Logging"),
    ("general_log", "Logging"),
    ("slow_", "Logging"),
    ("long_query_time", "Logging"),
    ("tmp_", "Memory and buffers"),
    ("max_heap_table_size", "Memory and buffers"),
    ("sort_buffer", "Memory and buffers"),
    ("read_buffer", "Memory and buffers"),
    ("read_rnd_buffer", "Memory and buffers"),
    ("bulk_insert_buffer", "Memory and buffers"),
    ("table_", "Table cache"),
    ("open_files_limit", "Table cache"),
    ("sql_", "SQL behaviour"),
    ("transaction_", "SQL behaviour"),
    ("tx_", "SQL behaviour"),
    ("autocommit", "SQL behaviour"),
    ("explicit_defaults_for_timestamp", "SQL behaviour"),
    ("lower_case_", "SQL behaviour"),
];

/// Variables that decide durability, memory and concurrency: when their values differ they are shown
/// first, whether a config set them or the builds' defaults differ.
pub const KEY_SETTINGS: &[&str] = &[
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "log_bin",
    "binlog_format",
    "binlog_row_image",
    "innodb_doublewrite",
    "innodb_flush_method",
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_redo_log_capacity",
    "innodb_log_buffer_size",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_adaptive_hash_index",
    "innodb_change_buffering",
    "innodb_max_dirty_pages_pct",
    "innodb_page_size",
    "innodb_use_native_aio",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_purge_threads",
    "innodb_checksum_algorithm",
    "innodb_autoinc_lock_mode",
    "transaction_isolation",
    "tx_isolation",
    "thread_handling",
    "thread_cache_size",
    "table_open_cache",
    "max_connections",
    "performance_schema",
    "query_cache_type",
    "query_cache_size",
    "character_set_server",
    "collation_server",
    "default_storage_engine",
];

/// The component of variable `name` ([`COMPONENTS`]).
pub fn component(name: &str) -> &'static str {
    let n = name.to_ascii_lowercase();
    COMPONENTS.iter().find(|(p, _)| n.starts_with(p)).map(|(_, c)| *c).unwrap_or("Other")
}

/// The flavor a target's `SELECT VERSION()` (or `version_comment`) names: MariaDB, Percona Server or
/// MySQL.
pub fn flavor_of(version: &str, comment: &str) -> &'static str {
    let text = format!("{version} {comment}").to_ascii_lowercase();
    if text.contains("mariadb") {
        "MariaDB"
    } else if text.contains("percona") {
        "Percona Server"
    } else {
        "MySQL"
    }
}

/// What a target brings to the grouping: its flavor and the variables its config sets.
#[derive(Debug, Clone, Default)]
pub struct TargetFacts {
    /// [`flavor_of`].
    pub flavor: String,
    /// Variables (lower case) the target's config or overrides set.
    pub explicit: BTreeSet<String>,
}

/// Classifies the rows of `diff` in place: each gets its component and, when it matters, why; rows of
/// variables that only one flavor's targets have are taken out and counted in `diff.flavor_only`.
/// `targets` is in `diff.targets` order; `findings` are the variables `versus explain` named.
pub fn classify(diff: &mut VariableDiff, targets: &[TargetFacts], findings: &BTreeSet<String>) {
    let flavors: BTreeSet<&str> = targets.iter().map(|t| t.flavor.as_str()).collect();
    let mut only: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let rows = std::mem::take(&mut diff.rows);
    for mut row in rows {
        let has: BTreeSet<&str> =
            row.values.iter().zip(targets).filter(|(v, _)| v.is_some()).map(|(_, t)| t.flavor.as_str()).collect();
        let lacks: BTreeSet<&str> =
            row.values.iter().zip(targets).filter(|(v, _)| v.is_none()).map(|(_, t)| t.flavor.as_str()).collect();
        let name = row.name.to_ascii_lowercase();
        let set_on: Vec<bool> =
            targets.iter().zip(&row.values).map(|(t, v)| v.is_some() && t.explicit.contains(&name)).collect();
        let set = set_on.contains(&true);
        if flavors.len() > 1 && !set && has.len() == 1 && has.is_disjoint(&lacks) {
            let flavor = has.into_iter().next().unwrap_or_default().to_string();
            let prefix = match name.find('_') {
                Some(i) => format!("{}_*", &name[..i]),
                None => name.clone(),
            };
            *only.entry(flavor).or_default().entry(prefix).or_default() += 1;
            continue;
        }
        row.component = component(&row.name).to_string();
        let with_value = row.values.iter().filter(|v| v.is_some()).count();
        let setting = set_on.iter().filter(|x| **x).count();
        row.first = if set && setting == with_value {
            Some("set by a config".into())
        } else if set {
            Some(format!("set by {setting} of {with_value} configs"))
        } else if findings.contains(&name) {
            Some("named by explain".into())
        } else if KEY_SETTINGS.contains(&name.as_str()) {
            Some(if row.values.iter().any(Option::is_none) {
                "key setting; not every build has it".into()
            } else {
                "key setting; the defaults differ".into()
            })
        } else {
            None
        };
        if set {
            row.set_on = set_on;
        }
        diff.rows.push(row);
    }
    diff.flavor_only = only
        .into_iter()
        .map(|(flavor, prefixes)| {
            let count = prefixes.values().sum();
            let mut p: Vec<(String, usize)> = prefixes.into_iter().collect();
            p.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            FlavorOnly { flavor, count, examples: p.into_iter().take(4).map(|(name, _)| name).collect() }
        })
        .collect();
}

/// The rows that matter ([`VariableRow::first`]), then the rest by component in [`COMPONENTS`] order
/// ("Other" last): `(component, rows)`.
pub fn grouped(diff: &VariableDiff) -> (Vec<&VariableRow>, Vec<(String, Vec<&VariableRow>)>) {
    let first: Vec<&VariableRow> = diff.rows.iter().filter(|r| r.first.is_some()).collect();
    let mut order: Vec<&str> = Vec::new();
    for (_, c) in COMPONENTS.iter().chain([&("", "Other")]) {
        if !order.contains(c) {
            order.push(c);
        }
    }
    let mut groups: Vec<(String, Vec<&VariableRow>)> = Vec::new();
    for c in order {
        let rows: Vec<&VariableRow> =
            diff.rows.iter().filter(|r| r.first.is_none() && component(&r.name) == c).collect();
        if !rows.is_empty() {
            groups.push((c.to_string(), rows));
        }
    }
    (first, groups)
}

/// One sentence on the flavor-only variables, if there are any.
pub fn flavor_only_sentence(diff: &VariableDiff) -> Option<String> {
    if diff.flavor_only.is_empty() {
        return None;
    }
    let parts: Vec<String> = diff
        .flavor_only
        .iter()
        .map(|f| {
            let more = if f.examples.len() >= 4 { ", …" } else { "" };
            format!("{} only on {} ({}{more})", f.count, f.flavor, f.examples.join(", "))
        })
        .collect();
    Some(format!("Variables that only one flavor has are counted, not listed: {}.", parts.join("; ")))
}

/// What the variable tables are, what is shown first and what is left out.
pub fn caption(r: &CompareReport) -> String {
    let d = &r.variables;
    let (first, groups) = grouped(d);
    let rest: usize = groups.iter().map(|(_, rows)| rows.len()).sum();
    let mut c = format!(
        "From SHOW GLOBAL VARIABLES of each run, per target: {} variable(s) differ; {} shown first (set by a \
         config, key settings whose defaults differ, named by explain), {rest} grouped by component.",
        d.rows.len(),
        first.len()
    );
    c.push_str(&format!(
        " {} whose differences are noise (sandbox paths, ports, ids, versions, host-sized or derived values) are \
         not shown.",
        d.hidden
    ));
    if d.rows.iter().any(|r| r.values.iter().any(Option::is_none)) {
        c.push_str(&format!(" {}: that server has no such variable.", super::fmt::ABSENT));
    }
    if let Some(f) = flavor_only_sentence(d) {
        c.push(' ');
        c.push_str(&f);
    }
    if !d.targets_without_variables.is_empty() {
        c.push_str(&format!(" No variables stored for: {}.", d.targets_without_variables.join(", ")));
    }
    c
}

fn value_cell(v: &Option<String>) -> Cell {
    match v {
        Some(s) => Cell::plain(s),
        None => Cell::toned(crate::report::fmt::ABSENT, Tone::Muted),
    }
}

/// `rows` with one column per target (and, with `why`, the reason each is shown first); values longer
/// than `max` characters are cut when it is given.
pub fn wide_table(
    r: &CompareReport,
    id: &str,
    title: &str,
    rows: &[&VariableRow],
    why: bool,
    max: Option<usize>,
) -> Table {
    let mut h = vec![("variable".to_string(), false)];
    if why {
        h.push(("shown because".into(), false));
    }
    h.extend(r.variables.targets.iter().map(|t| (t.clone(), false)));
    let mut t = Table::new(id, title, h);
    for v in rows {
        let mut row = vec![Cell::plain(&v.name)];
        if why {
            row.push(Cell::toned(v.first.clone().unwrap_or_default(), Tone::Muted));
        }
        row.extend(v.values.iter().map(|v| match (v, max) {
            (Some(s), Some(n)) => Cell::plain(crate::present::svg::truncate(s, n)),
            _ => value_cell(v),
        }));
        t.rows.push(row);
    }
    t
}

/// `rows` one line per distinct value, with the targets that have it: narrow whatever the number of
/// targets. Values longer than `max` characters are cut (the HTML and JSON exports have them whole).
pub fn long_table(d: &VariableDiff, id: &str, title: &str, rows: &[&VariableRow], max: usize, why: bool) -> Table {
    let mut h = vec![("variable".to_string(), false)];
    if why {
        h.push(("shown because".to_string(), false));
    }
    h.extend([("value".to_string(), false), ("targets".to_string(), false)]);
    let mut t = Table::new(id, title, h);
    for v in rows {
        let mut values: Vec<(Option<&String>, Vec<&str>)> = Vec::new();
        for (value, target) in v.values.iter().zip(&d.targets) {
            match values.iter_mut().find(|(x, _)| *x == value.as_ref()) {
                Some((_, ts)) => ts.push(target),
                None => values.push((value.as_ref(), vec![target])),
            }
        }
        for (i, (value, targets)) in values.into_iter().enumerate() {
            let name = if i == 0 { Cell::plain(&v.name) } else { Cell::plain("") };
            let reason = match (i, &v.first) {
                (0, Some(f)) => Cell::toned(f.clone(), Tone::Muted),
                _ => Cell::plain(""),
            };
            let value = match value {
                Some(s) => Cell::plain(crate::present::svg::truncate(s, max)),
                None => Cell::toned(crate::report::fmt::ABSENT, Tone::Muted),
            };
            let mut who = compact(&targets, &d.targets);
            // Say which of them set it when only some did (the rest have it by default).
            if !v.set_on.is_empty() {
                let setting: Vec<&str> = targets
                    .iter()
                    .filter(|t| d.targets.iter().position(|x| x == *t).is_some_and(|i| v.set_on[i]))
                    .copied()
                    .collect();
                if setting.is_empty() {
                    who.push_str(" (by default)");
                } else if setting.len() < targets.len() {
                    who.push_str(&format!(" (set by {})", compact(&setting, &d.targets)));
                }
            }
            let mut row = vec![name];
            if why {
                row.push(reason);
            }
            row.extend([value, Cell::plain(who)]);
            t.rows.push(row);
        }
    }
    t
}

/// `targets` (a subset of `all`, in its order) shortened for `build/config` labels: every target of a
/// build as `build/*`, then every target of a config as `*/config`.
pub fn compact(targets: &[&str], all: &[String]) -> String {
    let whole = |part: &dyn Fn(&str) -> Option<String>, key: &str| {
        let of: Vec<&String> = all.iter().filter(|a| part(a).as_deref() == Some(key)).collect();
        of.len() > 1 && of.iter().all(|a| targets.contains(&a.as_str()))
    };
    let build = |t: &str| t.split_once('/').map(|(b, _)| b.to_string());
    let config = |t: &str| t.split_once('/').map(|(_, c)| c.to_string());
    let mut out: Vec<String> = Vec::new();
    for t in targets {
        let item = match (build(t), config(t)) {
            (Some(b), _) if whole(&build, &b) => format!("{b}/*"),
            // Only when no target of the config is already in a `build/*`.
            (_, Some(c))
                if whole(&config, &c)
                    && all
                        .iter()
                        .filter(|a| config(a).as_deref() == Some(c.as_str()))
                        .all(|a| build(a).is_none_or(|b| !whole(&build, &b))) =>
            {
                format!("*/{c}")
            }
            _ => t.to_string(),
        };
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, values: &[Option<&str>]) -> VariableRow {
        VariableRow {
            name: name.into(),
            values: values.iter().map(|v| v.map(str::to_string)).collect(),
            component: String::new(),
            first: None,
            set_on: Vec::new(),
        }
    }

    #[test]
    fn whole_builds_are_shortened() {
        let all: Vec<String> = ["a/x", "a/y", "b/x", "b/y", "c"].iter().map(|s| s.to_string()).collect();
        assert_eq!(compact(&["a/x", "a/y", "b/x"], &all), "a/*, b/x");
        assert_eq!(compact(&["b/y", "c"], &all), "b/y, c");
        assert_eq!(compact(&["a/x", "b/x", "c"], &all), "*/x, c");
    }

    #[test]
    fn components_come_from_the_table() {
        assert_eq!(component("innodb_flush_method"), "InnoDB");
        assert_eq!(component("sync_binlog"), "Binary log");
        assert_eq!(component("log_slave_updates"), "Replication");
        assert_eq!(component("log_error_verbosity"), "Logging");
        assert_eq!(component("optimizer_switch"), "Optimizer");
        assert_eq!(component("frobnicate"), "Other");
    }

    #[test]
    fn what_matters_first_and_flavor_only_counted() {
        let mut diff = VariableDiff {
            targets: vec!["maria".into(), "mysql".into()],
            rows: vec![
                row("aria_block_size", &[Some("8192"), None]),
                row("wsrep_on", &[Some("OFF"), None]),
                row("innodb_redo_log_capacity", &[None, Some("104857600")]),
                row("innodb_flush_log_at_trx_commit", &[Some("2"), Some("1")]),
                row("sync_binlog", &[Some("0"), Some("1")]),
                row("optimizer_switch", &[Some("a=on"), Some("b=on")]),
            ],
            ..VariableDiff::default()
        };
        let targets = [
            TargetFacts { flavor: "MariaDB".into(), explicit: ["innodb_flush_log_at_trx_commit".to_string()].into() },
            TargetFacts { flavor: "MySQL".into(), explicit: BTreeSet::new() },
        ];
        classify(&mut diff, &targets, &BTreeSet::new());
        let names: Vec<&str> = diff.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["innodb_flush_log_at_trx_commit", "sync_binlog", "optimizer_switch"]);
        assert_eq!(diff.rows[0].first.as_deref(), Some("set by 1 of 2 configs"));
        assert_eq!(diff.rows[0].set_on, [true, false]);
        assert!(diff.rows[1].first.as_deref().unwrap().starts_with("key setting"));
        assert_eq!(diff.rows[2].first, None);
        let counts: Vec<(&str, usize)> = diff.flavor_only.iter().map(|f| (f.flavor.as_str(), f.count)).collect();
        assert_eq!(counts, [("MariaDB", 2), ("MySQL", 1)]);
        let (first, groups) = grouped(&diff);
        assert_eq!(first.len(), 2);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].0, "Optimizer");
        // One flavor: a variable a newer release added is a row, not a flavor-only count.
        let mut one = VariableDiff {
            targets: vec!["10.11".into(), "11.8".into()],
            rows: vec![row("innodb_log_file_buffering", &[None, Some("OFF")])],
            ..VariableDiff::default()
        };
        let maria = TargetFacts { flavor: "MariaDB".into(), explicit: BTreeSet::new() };
        classify(&mut one, &[maria.clone(), maria], &BTreeSet::new());
        assert_eq!(one.rows.len(), 1);
        assert!(one.flavor_only.is_empty());
    }

    #[test]
    fn a_value_only_some_targets_set_says_which() {
        let mut diff = VariableDiff {
            targets: vec!["s/a".into(), "s/b".into(), "s/c".into()],
            rows: vec![row("innodb_flush_log_at_trx_commit", &[Some("1"), Some("2"), Some("2")])],
            ..VariableDiff::default()
        };
        let facts = |set: bool| TargetFacts {
            flavor: "MariaDB".into(),
            explicit: if set { ["innodb_flush_log_at_trx_commit".to_string()].into() } else { BTreeSet::new() },
        };
        classify(&mut diff, &[facts(false), facts(true), facts(false)], &BTreeSet::new());
        assert_eq!(diff.rows[0].first.as_deref(), Some("set by 1 of 3 configs"));
        let rows: Vec<&VariableRow> = diff.rows.iter().collect();
        let t = long_table(&diff, "v", "v", &rows, 40, false);
        let who: Vec<&str> = t.rows.iter().map(|row| row[2].text.as_str()).collect();
        assert_eq!(who, ["s/a (by default)", "s/b, s/c (set by s/b)"]);
    }
}
