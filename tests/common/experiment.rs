//! Experiment files the integration tests run: the two-config matrix of durable against relaxed
//! commits that the experiment, fleet and store tests each measure at their own size.
#![allow(dead_code)]

/// An experiment named `name` on the distribution's build: configs `sync`
/// (innodb_flush_log_at_trx_commit = 1) and `nosync` (= 0), oltp_point_select on one table of
/// `table_size` rows; `settings` are its top-level lines between `builds` and the configs (threads,
/// duration, warmup, repetitions), each ending in a newline.
pub fn sync_nosync(name: &str, settings: &str, table_size: u32) -> String {
    format!(
        r#"
name = "{name}"
builds = ["system"]
{settings}[[configs]]
name = "sync"
set = {{ innodb_flush_log_at_trx_commit = 1 }}
[[configs]]
name = "nosync"
set = {{ innodb_flush_log_at_trx_commit = 0 }}
[[workloads]]
test = "oltp_point_select"
options = {{ tables = 1, table-size = {table_size} }}
"#
    )
}
