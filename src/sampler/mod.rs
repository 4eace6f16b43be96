//! Sampling the machine and the processes of a run: CPU time, context switches, memory and I/O of the
//! server and of versus itself (from `/proc`), whole-host CPU, host facts recorded with each experiment,
//! and cost per transaction from those plus `SHOW GLOBAL STATUS` deltas. Linux only.

pub mod canary;
pub mod client_load;
pub mod counters;
mod efficiency;
mod host;
mod process;
pub mod replica_lag;
pub mod replication;

pub use counters::ServerLine;
pub use efficiency::{Efficiency, is_gauge, is_position, status_deltas, status_ends};
pub use host::{
    CpuInfo, DiskFacts, Fingerprint, HostCpu, HostCpuDelta, HostFacts, Mount, disk_facts, fingerprint, mount_for,
    parse_cpuinfo, parse_meminfo, parse_mountinfo, parse_os_release, parse_proc_stat, parse_proc_stat_of,
};
pub use process::{
    IoCounters, PerOp, ProcessDelta, ProcessSample, StatFields, StatusFields, parse_io, parse_stat, parse_status,
    ticks_per_second,
};

/// The `(name, value)` rows of the values that are there, in the order of `names` (how a group of
/// figures is stored in the `efficiency` table).
pub(crate) fn named_rows<const N: usize>(
    names: &[&'static str; N],
    values: [Option<f64>; N],
) -> Vec<(&'static str, f64)> {
    names.iter().zip(values).filter_map(|(n, v)| v.map(|v| (*n, v))).collect()
}

/// The values of `names` among stored rows (other names are ignored), in the order of `names`.
pub(crate) fn named_values<'a, const N: usize>(
    names: &[&str; N],
    rows: impl IntoIterator<Item = (&'a str, f64)>,
) -> [Option<f64>; N] {
    let mut v = [None; N];
    for (name, value) in rows {
        if let Some(i) = names.iter().position(|m| *m == name) {
            v[i] = Some(value);
        }
    }
    v
}
