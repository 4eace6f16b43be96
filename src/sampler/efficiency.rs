//! Cost per transaction: server and client CPU, context switches and I/O from `/proc`, fsyncs and bytes
//! written from `SHOW GLOBAL STATUS` deltas, read through the per-line definitions of [`super::counters`].

use super::counters::{Quantity, ServerLine, measure};
use super::process::ProcessDelta;

/// Exact `SHOW GLOBAL STATUS` names (lower case) that are gauges (a current level, a size or an average),
/// whose difference over a run means nothing.
const GAUGES: &[&str] = &[
    "aria_pagecache_blocks_not_flushed",
    "aria_pagecache_blocks_unused",
    "aria_pagecache_blocks_used",
    "binlog_snapshot_position",
    "delayed_insert_threads",
    "error_log_buffered_bytes",
    "error_log_buffered_events",
    "error_log_latest_write",
    "global_connection_memory",
    "innodb_available_undo_logs",
    "innodb_buffer_pool_bytes_data",
    "innodb_buffer_pool_bytes_dirty",
    "innodb_buffer_pool_pages_data",
    "innodb_buffer_pool_pages_dirty",
    "innodb_buffer_pool_pages_free",
    "innodb_buffer_pool_pages_latched",
    "innodb_buffer_pool_pages_misc",
    "innodb_buffer_pool_pages_old",
    "innodb_buffer_pool_pages_total",
    "innodb_checkpoint_age",
    "innodb_checkpoint_max_age",
    "innodb_encryption_rotation_estimated_iops",
    "innodb_history_list_length",
    "innodb_ibuf_free_list",
    "innodb_ibuf_segment_size",
    "innodb_ibuf_size",
    "innodb_num_open_files",
    "innodb_page_size",
    "innodb_row_lock_current_waits",
    "key_blocks_not_flushed",
    "key_blocks_unused",
    "key_blocks_used",
    "key_blocks_warm",
    "max_memory_used",
    "max_used_connections",
    "memory_used",
    "memory_used_initial",
    "performance_schema_session_connect_attrs_longest_seen",
    "prepared_stmt_count",
    "qcache_free_blocks",
    "qcache_free_memory",
    "qcache_queries_in_cache",
    "qcache_total_blocks",
    "replica_open_temp_tables",
    "slave_open_temp_tables",
    "slaves_connected",
    "slaves_running",
    "ssl_ctx_verify_depth",
    "ssl_ctx_verify_mode",
    "ssl_default_timeout",
    "ssl_session_cache_size",
    "ssl_used_session_cache_entries",
    "ssl_verify_depth",
    "ssl_verify_mode",
    "stack_usage",
    "table_open_cache_active_instances",
    "tc_log_max_pages_used",
    "tc_log_page_size",
];

/// Name prefixes (lower case) of gauges.
const GAUGE_PREFIXES: &[&str] =
    &["innodb_buffer_pool_resize_status", "innodb_mem_", "innodb_undo_tablespaces_", "open_", "threadpool_", "uptime"];

/// Name prefixes (lower case) of groups irrelevant to a single-server benchmark: left out of
/// [`status_deltas`] (as if gauges) and of [`status_ends`].
const IRRELEVANT_PREFIXES: &[&str] = &["acl_", "mysqlx_", "rpl_semi_sync_", "wsrep"];

/// True when the status variable `name` is a gauge (or otherwise not a counter), so that
/// [`status_deltas`] leaves it out. See docs/store.md for the rules.
pub fn is_gauge(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if GAUGES.contains(&n.as_str()) || GAUGE_PREFIXES.iter().chain(IRRELEVANT_PREFIXES).any(|p| n.starts_with(p)) {
        return true;
    }
    if n.starts_with("threads_") {
        return n != "threads_created";
    }
    // MySQL 8.0.30+: sizes and states of the redo log; the *_lsn ones only grow and are kept.
    if n.starts_with("innodb_redo_log_") {
        return !n.ends_with("_lsn");
    }
    n.contains("_pending") || n.contains("_pct_") || n.ends_with("_avg") || n.ends_with("_max")
}

/// Differences of the numeric counters between two `SHOW GLOBAL STATUS` snapshots, in the order of
/// `after`. Left out: names missing from either snapshot, values that are not integers (text such as
/// `Innodb_buffer_pool_load_status`, `ON`/`OFF`, `NULL`, and decimals such as MariaDB's `Busy_time`),
/// and gauges ([`is_gauge`]). A counter that went down (`FLUSH STATUS`, restart) gives a negative delta.
pub fn status_deltas(before: &[(String, String)], after: &[(String, String)]) -> Vec<(String, i64)> {
    let before: std::collections::HashMap<&str, &str> = before.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    after
        .iter()
        .filter(|(name, _)| !is_gauge(name))
        .filter_map(|(name, value)| {
            let b: i128 = before.get(name.as_str())?.trim().parse().ok()?;
            let a: i128 = value.trim().parse().ok()?;
            let d = (a - b).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            Some((name.clone(), d))
        })
        .collect()
}

/// True when the status variable `name` is a log sequence number (`*_lsn`, MariaDB's `Innodb_lsn_*`):
/// a position whose difference is a counter and whose value at the end locates the checkpoint.
pub fn is_position(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("_lsn") || n.starts_with("innodb_lsn_")
}

/// The integer values in the `after` snapshot of the gauges ([`is_gauge`]) and of the log positions
/// ([`is_position`]): the state the server was in at the end of the measured time (dirty pages,
/// checkpoint age, history length, threads), in the order of `after`. Text values are left out.
pub fn status_ends(after: &[(String, String)]) -> Vec<(String, i64)> {
    after
        .iter()
        .filter(|(name, _)| is_gauge(name) || is_position(name))
        .filter(|(name, _)| {
            let n = name.to_ascii_lowercase();
            !IRRELEVANT_PREFIXES.iter().any(|p| n.starts_with(p))
        })
        .filter_map(|(name, value)| {
            let v: i128 = value.trim().parse().ok()?;
            Some((name.clone(), v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64))
        })
        .collect()
}

/// Cost per transaction (per sysbench event) of one run. `None` where the source was not available
/// (no server PID, `/proc/PID/io` unreadable, a status counter the server does not have).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Efficiency {
    /// Server user CPU µs per transaction.
    pub server_cpu_user_us: Option<f64>,
    /// Server system CPU µs per transaction.
    pub server_cpu_system_us: Option<f64>,
    /// Client (versus) user + system CPU µs per transaction.
    pub client_cpu_us: Option<f64>,
    /// Server context switches (voluntary + involuntary) per transaction.
    pub server_ctxt_switches: Option<f64>,
    /// Client context switches per transaction.
    pub client_ctxt_switches: Option<f64>,
    /// Server bytes read from storage per transaction (`/proc/PID/io` read_bytes).
    pub server_read_bytes: Option<f64>,
    /// Server bytes written to storage per transaction (`/proc/PID/io` write_bytes).
    pub server_write_bytes: Option<f64>,
    /// The raw `Innodb_data_fsyncs` counter per transaction (kept as stored; see `innodb_fsyncs`).
    pub innodb_data_fsyncs: Option<f64>,
    /// The raw `Innodb_os_log_fsyncs` counter per transaction (MySQL, MariaDB before 10.8): a part of
    /// `Innodb_data_fsyncs`, not to be added to it.
    pub innodb_log_fsyncs: Option<f64>,
    /// InnoDB bytes written to data files per transaction ([`Quantity::DataWrittenBytes`]).
    pub innodb_data_written_bytes: Option<f64>,
    /// InnoDB redo log bytes written per transaction ([`Quantity::RedoBytes`]).
    pub innodb_log_written_bytes: Option<f64>,
    /// InnoDB fsyncs (data, doublewrite, redo log, each once) per transaction ([`Quantity::InnodbFsyncs`]).
    pub innodb_fsyncs: Option<f64>,
    /// Binary log syncs per transaction, 0 with the binary log off ([`Quantity::BinlogSyncs`]).
    pub binlog_syncs: Option<f64>,
    /// What the client used of the CPUs it could use, and how busy the host was: whether the client
    /// was the run's limit (not a cost per transaction; stored beside them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_load: Option<super::client_load::ClientLoad>,
    /// The replicas' figures, for a run against a replication topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<super::replication::ReplicationFigures>,
}

/// Metric names as stored in the `efficiency` table, in field order.
const METRICS: [&str; 13] = [
    "server_cpu_user_us_per_txn",
    "server_cpu_system_us_per_txn",
    "client_cpu_us_per_txn",
    "server_ctxt_switches_per_txn",
    "client_ctxt_switches_per_txn",
    "server_read_bytes_per_txn",
    "server_write_bytes_per_txn",
    "innodb_data_fsyncs_per_txn",
    "innodb_log_fsyncs_per_txn",
    "innodb_data_written_bytes_per_txn",
    "innodb_log_written_bytes_per_txn",
    "innodb_fsyncs_per_txn",
    "binlog_syncs_per_txn",
];

impl Efficiency {
    /// Computes the per-transaction costs of `txns` transactions from the server's and the client's
    /// process deltas and the status deltas ([`status_deltas`]), read by the definitions of the
    /// server's `line` (none known: the counter-based costs are `None`). All `None` when `txns` is 0.
    pub fn compute(
        txns: u64,
        server: Option<&ProcessDelta>,
        client: Option<&ProcessDelta>,
        status: &[(String, i64)],
        line: Option<&ServerLine<'_>>,
    ) -> Efficiency {
        if txns == 0 {
            return Efficiency::default();
        }
        let n = txns as f64;
        let per = |v: u64| v as f64 / n;
        let counter =
            |name: &str| status.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, d)| (*d).max(0) as f64 / n);
        Efficiency {
            server_cpu_user_us: server.map(|s| per(s.user_us)),
            server_cpu_system_us: server.map(|s| per(s.system_us)),
            client_cpu_us: client.map(|c| per(c.cpu_us())),
            server_ctxt_switches: server.map(|s| per(s.ctxt_switches())),
            client_ctxt_switches: client.map(|c| per(c.ctxt_switches())),
            server_read_bytes: server.and_then(|s| s.read_bytes).map(per),
            server_write_bytes: server.and_then(|s| s.write_bytes).map(per),
            innodb_data_fsyncs: counter("Innodb_data_fsyncs"),
            innodb_log_fsyncs: counter("Innodb_os_log_fsyncs"),
            ..Efficiency::default()
        }
        .with_counters(txns, status, line)
    }

    /// These costs with the counter-based ones of `txns` transactions computed from `status` by the
    /// definitions of `line` (`None` where the line is unknown or lacks a counter).
    pub fn with_counters(mut self, txns: u64, status: &[(String, i64)], line: Option<&ServerLine<'_>>) -> Efficiency {
        if txns == 0 {
            return self;
        }
        let quantity = |q: Quantity| line.and_then(|l| measure(q, l, status)).map(|v| v / txns as f64);
        self.innodb_data_written_bytes = quantity(Quantity::DataWrittenBytes);
        self.innodb_log_written_bytes = quantity(Quantity::RedoBytes);
        self.innodb_fsyncs = quantity(Quantity::InnodbFsyncs);
        self.binlog_syncs = quantity(Quantity::BinlogSyncs);
        self
    }

    /// All fsyncs and syncs per transaction: InnoDB's plus the binary log's; `None` unless both are known.
    pub fn fsyncs(&self) -> Option<f64> {
        Some(self.innodb_fsyncs? + self.binlog_syncs?)
    }

    fn fields(&self) -> [Option<f64>; 13] {
        [
            self.server_cpu_user_us,
            self.server_cpu_system_us,
            self.client_cpu_us,
            self.server_ctxt_switches,
            self.client_ctxt_switches,
            self.server_read_bytes,
            self.server_write_bytes,
            self.innodb_data_fsyncs,
            self.innodb_log_fsyncs,
            self.innodb_data_written_bytes,
            self.innodb_log_written_bytes,
            self.innodb_fsyncs,
            self.binlog_syncs,
        ]
    }

    /// The known values as (metric name, value) rows, as stored.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let costs = METRICS.iter().zip(self.fields()).filter_map(|(name, v)| v.map(|v| (*name, v)));
        costs
            .chain(self.client_load.iter().flat_map(|l| l.metrics()))
            .chain(self.replication.iter().flat_map(|r| r.metrics()))
            .collect()
    }

    /// Rebuilds from stored rows; unknown metric names are ignored.
    pub fn from_metrics<'a>(rows: impl IntoIterator<Item = (&'a str, f64)>) -> Efficiency {
        let rows: Vec<(&str, f64)> = rows.into_iter().collect();
        let mut e = Efficiency {
            client_load: super::client_load::ClientLoad::from_metrics(rows.iter().copied()),
            replication: super::replication::ReplicationFigures::from_metrics(rows.iter().copied()),
            ..Efficiency::default()
        };
        for (name, value) in rows {
            let slot = match METRICS.iter().position(|m| *m == name) {
                Some(0) => &mut e.server_cpu_user_us,
                Some(1) => &mut e.server_cpu_system_us,
                Some(2) => &mut e.client_cpu_us,
                Some(3) => &mut e.server_ctxt_switches,
                Some(4) => &mut e.client_ctxt_switches,
                Some(5) => &mut e.server_read_bytes,
                Some(6) => &mut e.server_write_bytes,
                Some(7) => &mut e.innodb_data_fsyncs,
                Some(8) => &mut e.innodb_log_fsyncs,
                Some(9) => &mut e.innodb_data_written_bytes,
                Some(10) => &mut e.innodb_log_written_bytes,
                Some(11) => &mut e.innodb_fsyncs,
                Some(12) => &mut e.binlog_syncs,
                _ => continue,
            };
            *slot = Some(value);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pairs(text: &str) -> Vec<(String, String)> {
        text.lines().filter_map(|l| l.split_once('\t')).map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    // Lines as printed by MariaDB 10.11 `SHOW GLOBAL STATUS` (tab-separated), before and after load.
    const BEFORE: &str = "Busy_time\t0.000000\nCom_commit\t0\nCom_select\t0\nHandler_commit\t9\n\
        Innodb_buffer_pool_load_status\tBuffer pool(s) load completed at 261130  0:16:48\n\
        Innodb_buffer_pool_pages_dirty\t12\nInnodb_buffer_pool_pages_flushed\t0\nInnodb_data_fsyncs\t1\n\
        Innodb_data_written\t0\nInnodb_os_log_written\t340\nInnodb_row_lock_time_avg\t0\nMax_memory_used\tNULL\n\
        Open_tables\t10\nOpened_tables\t17\nThreads_connected\t1\nThreads_created\t1\nUptime\t0\n\
        wsrep_local_index\t18446744073709551615\nInnodb_data_pending_fsyncs\t0\nInnodb_lsn_current\t44744\n";
    const AFTER: &str = "Busy_time\t1.500000\nCom_commit\t1000\nCom_select\t10000\nHandler_commit\t1009\n\
        Innodb_buffer_pool_load_status\tBuffer pool(s) load completed at 261130  0:16:48\n\
        Innodb_buffer_pool_pages_dirty\t500\nInnodb_buffer_pool_pages_flushed\t800\nInnodb_data_fsyncs\t201\n\
        Innodb_data_written\t13107200\nInnodb_os_log_written\t2000340\nInnodb_row_lock_time_avg\t3\n\
        Max_memory_used\tNULL\nOpen_tables\t30\nOpened_tables\t37\nThreads_connected\t9\nThreads_created\t9\n\
        Uptime\t60\nwsrep_local_index\t18446744073709551615\nInnodb_data_pending_fsyncs\t1\n\
        Innodb_lsn_current\t2044744\nCom_delete\t5\n";

    #[test]
    fn deltas_of_counters_only() {
        let d = status_deltas(&pairs(BEFORE), &pairs(AFTER));
        let names: Vec<&str> = d.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Com_commit",
                "Com_select",
                "Handler_commit",
                "Innodb_buffer_pool_pages_flushed",
                "Innodb_data_fsyncs",
                "Innodb_data_written",
                "Innodb_os_log_written",
                "Opened_tables",
                "Threads_created",
                "Innodb_lsn_current",
            ]
        );
        let get = |n: &str| d.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(get("Com_select"), Some(10_000));
        assert_eq!(get("Innodb_data_fsyncs"), Some(200));
        assert_eq!(get("Innodb_os_log_written"), Some(2_000_000));
        // A counter reset shows as negative.
        let d = status_deltas(&pairs("Com_select\t50\n"), &pairs("Com_select\t7\n"));
        assert_eq!(d, [("Com_select".to_string(), -43)]);
    }

    #[test]
    fn ends_of_gauges_and_positions_only() {
        let e = status_ends(&pairs(AFTER));
        let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Innodb_buffer_pool_pages_dirty",
                "Innodb_row_lock_time_avg",
                "Open_tables",
                "Threads_connected",
                "Uptime",
                "Innodb_data_pending_fsyncs",
                "Innodb_lsn_current",
            ]
        );
        let get = |n: &str| e.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(get("Innodb_lsn_current"), Some(2_044_744));
        assert_eq!(get("Innodb_buffer_pool_pages_dirty"), Some(500));
        let e = status_ends(&pairs("Innodb_history_list_length\t18446744073709551615\nwsrep_local_index\t3\n"));
        // Beyond i64 (an unsigned -1) is clamped, not dropped or wrapped; Galera's group is left out.
        assert_eq!(e, [("Innodb_history_list_length".to_string(), i64::MAX)]);
        assert!(is_position("Innodb_redo_log_checkpoint_lsn") && is_position("Innodb_lsn_last_checkpoint"));
        assert!(!is_position("Innodb_os_log_written"));
    }

    #[test]
    fn gauge_rules() {
        for g in [
            "Threads_running",
            "Innodb_buffer_pool_pages_free",
            "Innodb_row_lock_time_max",
            "Innodb_os_log_pending_writes",
            "Innodb_redo_log_logical_size",
            "Uptime_since_flush_status",
            "Innodb_onlineddl_pct_progress",
            "Key_blocks_used",
        ] {
            assert!(is_gauge(g), "{g}");
        }
        for c in [
            "Threads_created",
            "Innodb_redo_log_current_lsn",
            "Opened_files",
            "Innodb_row_lock_time",
            "Innodb_rows_read",
            "Key_reads",
            "Max_statement_time_exceeded",
        ] {
            assert!(!is_gauge(c), "{c}");
        }
    }

    #[test]
    fn efficiency_per_transaction_and_round_trip() {
        let status = status_deltas(&pairs(BEFORE), &pairs(AFTER));
        let server = ProcessDelta {
            wall: Duration::from_secs(60),
            user_us: 2_000_000,
            system_us: 500_000,
            voluntary_ctxt_switches: 9000,
            nonvoluntary_ctxt_switches: 1000,
            read_bytes: Some(0),
            write_bytes: Some(20_000_000),
            ..ProcessDelta::default()
        };
        let client = ProcessDelta { user_us: 300_000, system_us: 100_000, voluntary_ctxt_switches: 2000, ..server };
        let vars = vec![("log_bin".to_string(), "OFF".to_string())];
        let line = ServerLine::from_version_string("10.11.19-MariaDB-0+deb12u1", &vars).unwrap();
        let e = Efficiency::compute(1000, Some(&server), Some(&client), &status, Some(&line));
        assert_eq!(e.server_cpu_user_us, Some(2000.0));
        assert_eq!(e.server_cpu_system_us, Some(500.0));
        assert_eq!(e.client_cpu_us, Some(400.0));
        assert_eq!(e.server_ctxt_switches, Some(10.0));
        assert_eq!(e.client_ctxt_switches, Some(3.0));
        assert_eq!(e.server_write_bytes, Some(20_000.0));
        assert_eq!(e.innodb_data_fsyncs, Some(0.2));
        assert_eq!(e.innodb_log_fsyncs, None, "MariaDB has no Innodb_os_log_fsyncs");
        assert_eq!(e.innodb_data_written_bytes, Some(13_107.2));
        assert_eq!(e.innodb_log_written_bytes, Some(2000.0));
        assert_eq!(e.innodb_fsyncs, Some(0.2));
        assert_eq!(e.binlog_syncs, Some(0.0), "binary log off");
        assert_eq!(e.fsyncs(), Some(0.2));

        let rows = e.metrics();
        assert_eq!(rows.len(), 12);
        assert!(rows.contains(&("innodb_data_fsyncs_per_txn", 0.2)));
        let back = Efficiency::from_metrics(rows.iter().map(|(n, v)| (*n, *v)).chain([("future_metric", 1.0)]));
        assert_eq!(back, e);

        assert_eq!(Efficiency::compute(0, Some(&server), None, &status, Some(&line)), Efficiency::default());
        let no_server = Efficiency::compute(10, None, None, &[], Some(&line));
        assert_eq!(no_server.metrics(), [("binlog_syncs_per_txn", 0.0)], "the binary log is off: none");
        let unknown_line = Efficiency::compute(1000, None, None, &status, None);
        assert_eq!((unknown_line.innodb_data_fsyncs, unknown_line.fsyncs()), (Some(0.2), None));
    }
}
