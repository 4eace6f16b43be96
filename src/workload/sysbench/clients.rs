//! `--clients`: how many client processes share one load (src/workload/sysbench/split), checked
//! against what they share before anything runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::values::{bad, int, raw};
use crate::error::Result;

/// Where `--clients-on` may place the clients (each a launcher of src/workload/sysbench/split).
pub const PLACES: [&str; 2] = ["local", "slurm"];

/// `--clients-on`.
pub(super) fn place(values: &BTreeMap<String, String>) -> Result<String> {
    let v = raw(values, "clients_on");
    if !PLACES.contains(&v) {
        return Err(bad("clients_on", v, &format!("expected {}", PLACES.join(" or "))));
    }
    Ok(v.to_string())
}

/// `--clients`, checked against what is split among them.
pub(super) fn option(
    values: &BTreeMap<String, String>,
    threads: u64,
    rate: u64,
    events: u64,
    checkpoints: bool,
) -> Result<u32> {
    let n = int(values, "clients")?;
    let v = raw(values, "clients");
    let refuse = |what: String| Err(bad("clients", v, &what));
    if n == 0 || n > 1024 {
        return refuse("expected 1 to 1024 client processes".into());
    }
    if n > 1 {
        if threads < n {
            return refuse(format!("{n} clients need at least {n} threads to share; give --threads={n} or more"));
        }
        if rate > 0 && rate < n {
            return refuse(format!("--rate={rate} cannot be shared by {n} clients; give --rate={n} or more"));
        }
        if events > 0 && events < n {
            return refuse(format!("--events={events} cannot be shared by {n} clients; give --events={n} or more"));
        }
        if checkpoints {
            return refuse("--report-checkpoints are not taken with several clients; leave one of the two out".into());
        }
    }
    Ok(n as u32)
}

/// The file of client `index` (from 0) of `n` for `--latency-log=path`: `path` itself for one client,
/// else `path.N` (N from 1).
pub fn latency_file(path: &Path, index: usize, n: u32) -> PathBuf {
    if n <= 1 {
        return path.to_path_buf();
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}", index + 1));
    PathBuf::from(name)
}

/// `--latency-log`: refused when a file it would write exists already.
pub(super) fn latency_log(values: &BTreeMap<String, String>, clients: u32) -> Result<Option<PathBuf>> {
    let v = raw(values, "latency_log");
    if v.is_empty() {
        return Ok(None);
    }
    let path = PathBuf::from(v);
    for i in 0..clients.max(1) as usize {
        let f = latency_file(&path, i, clients);
        if f.symlink_metadata().is_ok() {
            return Err(bad(
                "latency_log",
                v,
                &format!("{} exists; versus does not overwrite files: give a new name", f.display()),
            ));
        }
    }
    Ok(Some(path))
}
