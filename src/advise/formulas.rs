//! The formulas of the rules in [`super::rules::RULES`]: each reads the [`Facts`] (and what earlier
//! rows proposed) and proposes a value with the computation in words, or nothing with why.

use std::collections::BTreeMap;

use super::facts::{Facts, GIB, MIB, cnf_size, parse_size, round_down, round_up};
use super::memory::{self, LIMIT_SHARE};
use crate::server::flavor::Feature;

#[derive(Debug, Clone, PartialEq)]
pub enum Propose {
    /// Set the variable: the value given to the server, its my.cnf spelling, and the computation.
    Set {
        /// The value as given to the server (sizes in bytes).
        value: String,
        /// Its my.cnf spelling (`896M`).
        display: String,
        /// The rule applied to the facts, in words.
        why: String,
    },
    /// Nothing to set, and why.
    No(String),
}

/// The facts and what earlier rules proposed.
pub struct Ctx<'a> {
    /// The facts.
    pub facts: &'a Facts,
    /// Values proposed by earlier rows (variable → value).
    pub proposed: BTreeMap<String, String>,
}

impl Ctx<'_> {
    /// A variable's value with the proposals so far.
    pub fn get(&self, name: &str) -> Option<String> {
        self.proposed.get(name).cloned().or_else(|| self.facts.var(name).map(str::to_string))
    }

    /// A size variable's value with the proposals so far.
    pub fn size(&self, name: &str) -> Option<u64> {
        self.get(name).as_deref().and_then(parse_size)
    }
}

pub(super) fn set_size(bytes: u64, why: String) -> Propose {
    Propose::Set { value: bytes.to_string(), display: cnf_size(bytes), why }
}

pub(super) fn set(value: &str, why: impl Into<String>) -> Propose {
    Propose::Set { value: value.into(), display: value.into(), why: why.into() }
}

pub(super) fn mib(b: u64) -> String {
    if b >= GIB && b.is_multiple_of(GIB / 4) {
        format!("{:.2} GiB", b as f64 / GIB as f64).replace(".00 ", " ")
    } else {
        format!("{} MiB", b.div_ceil(MIB))
    }
}

const NO_PROBE: &str = "decided by the probe run (there is none with --dry-run)";

/// The worst case of the context's config with the buffer pool left out: what the pool may take.
pub(super) fn room_for_pool(c: &Ctx<'_>) -> u64 {
    let f = c.facts;
    let get = |n: &str| if n == "innodb_buffer_pool_size" { Some("0".to_string()) } else { c.get(n) };
    let m = memory::worst_case(f.flavor, f.version, &get, f.memory);
    m.limit.saturating_sub(m.total)
}

pub(super) fn buffer_pool(c: &Ctx<'_>) -> Propose {
    let f = c.facts;
    let Some(data) = f.data_bytes else { return Propose::No("decided by the size of the prepared data".into()) };
    let current = c.size("innodb_buffer_pool_size").unwrap_or(128 * MIB);
    let share = (f.memory as f64 * 0.75) as u64;
    let room = room_for_pool(c);
    let cap = share.min(room);
    let cap = if cap >= GIB { round_down(cap, GIB) } else { round_down(cap, 128 * MIB) };
    let hold = round_up((data as f64 * 1.25) as u64, 128 * MIB).max(128 * MIB);
    let hold = if hold > GIB { round_up(hold, GIB) } else { hold };
    // A pool that must grow grows at least to what innodb_dedicated_server gives this memory: in the
    // field runs the data-sized pool was never faster than dedicated's larger one, and at times slower.
    let dedicated = super::dedicated::buffer_pool(f.memory);
    let want = hold.max(dedicated);
    let value = want.min(cap);
    let why = format!(
        "data {} × 1.25 = {}, at least innodb_dedicated_server's {} for {}; at most {} (75 % of {} and what the \
         {:.0} % memory bound leaves)",
        mib(data),
        mib(hold),
        mib(dedicated),
        mib(f.memory),
        mib(cap),
        mib(f.memory),
        LIMIT_SHARE * 100.0
    );
    if current > cap {
        return set_size(cap, format!("the current {} puts the worst case over the memory bound; {why}", mib(current)));
    }
    if hold.min(cap) <= current {
        return Propose::No(format!("the current {} already holds the data ({})", mib(current), mib(data)));
    }
    set_size(value, why)
}

/// MySQLTuner's one instance per GiB of the pool, at most one per CPU, on the servers that take 8
/// instances by themselves once the pool reaches 1 GiB (MySQL before 8.4, MariaDB before 10.5). MySQL
/// 8.4 and later size the instances from the pool and the CPUs themselves (1 up to a 1 GiB pool, else
/// half the pool's chunks and at most a quarter of the CPUs): nothing is proposed there, as a value
/// set beside the pool would only replace that choice with a coarser one (2 instances on a 2-CPU
/// host, where the server takes 1), and would ride in the pool's screening group.
pub(super) fn buffer_pool_instances(c: &Ctx<'_>) -> Propose {
    let bp = c.size("innodb_buffer_pool_size").unwrap_or(128 * MIB);
    let cpus = c.facts.cpus.clamp(1, 64) as u64;
    if c.facts.has(Feature::SizesPoolInstances) {
        let chunk = c.size("innodb_buffer_pool_chunk_size").filter(|&x| x > 0).unwrap_or(128 * MIB);
        let own = if bp <= GIB { 1 } else { (bp / chunk / 2).min(cpus / 4).clamp(1, 64) };
        return Propose::No(format!(
            "{} {} sizes the instances from the pool and the CPUs itself ({own} for a {} pool on {cpus} CPU(s))",
            c.facts.flavor,
            c.facts.version,
            mib(bp)
        ));
    }
    let n = if bp < GIB { 1 } else { (bp / GIB).clamp(1, cpus) };
    Propose::Set {
        value: n.to_string(),
        display: n.to_string(),
        why: format!("buffer pool {} → {n} (one per GiB, at most one per CPU of {cpus})", mib(bp)),
    }
}

/// An hour of the probe's redo, between `lo` and the cap (16 GiB, a tenth of the free disk).
pub(super) fn redo_total(c: &Ctx<'_>, lo: u64) -> Result<(u64, String), String> {
    let Some(p) = &c.facts.probe else { return Err(NO_PROBE.into()) };
    if !p.has("Innodb_os_log_written") {
        return Err("the server has no Innodb_os_log_written counter".into());
    }
    let rate = p.rate("Innodb_os_log_written");
    let hour = (rate * 3600.0) as u64;
    let cap = c.facts.free_disk.map_or(16 * GIB, |f| (f / 10).min(16 * GIB));
    let total = round_up(hour.max(lo), 256 * MIB).min(round_down(cap, 256 * MIB));
    let why = format!(
        "probe redo {:.2} MiB/s × 1 h = {}, at least {}, at most {} (16 GiB or a tenth of the free disk){}",
        rate / MIB as f64,
        mib(hour),
        mib(lo),
        mib(cap),
        checkpoint_note(c)
    );
    Ok((total, why))
}

/// `; checkpoint age at the probe's end N MiB`, where the server reports it.
fn checkpoint_note(c: &Ctx<'_>) -> String {
    let age = c.facts.probe.as_ref().and_then(|p| p.checkpoint_age());
    age.map(|a| format!("; checkpoint age at the probe's end {}", mib(a))).unwrap_or_default()
}

pub(super) fn redo_capacity(c: &Ctx<'_>) -> Propose {
    let current = c.size("innodb_redo_log_capacity").unwrap_or(100 * MIB);
    let lo = if c.facts.memory > 8 * GIB { GIB } else { 100 * MIB };
    match redo_total(c, lo) {
        Err(e) => Propose::No(e),
        Ok((total, _)) if (total as f64) < current as f64 * 1.25 => {
            Propose::No(format!("the current {} holds an hour of the probe's redo{}", mib(current), checkpoint_note(c)))
        }
        Ok((total, why)) => set_size(total, why),
    }
}

pub(super) fn log_file_size(c: &Ctx<'_>) -> Propose {
    let current = c.size("innodb_log_file_size").unwrap_or(48 * MIB);
    let files = if c.facts.has(Feature::SeveralRedoLogFiles) {
        c.size("innodb_log_files_in_group").unwrap_or(2).max(1)
    } else {
        1
    };
    let bp = c.size("innodb_buffer_pool_size").unwrap_or(128 * MIB);
    match redo_total(c, bp / 4) {
        Err(e) => Propose::No(e),
        Ok((total, why)) => {
            let per = round_down(total / files, 128 * MIB);
            if (per as f64) < current as f64 * 1.25 {
                Propose::No(format!(
                    "the current {} × {files} holds an hour of the probe's redo{}",
                    mib(current),
                    checkpoint_note(c)
                ))
            } else {
                set_size(per, format!("{why}; 25 % of the buffer pool at least; over {files} file(s)"))
            }
        }
    }
}

pub(super) fn io_capacity(c: &Ctx<'_>) -> Propose {
    let current = c.size("innodb_io_capacity").unwrap_or(200);
    // What was measured wins over the kernel's flag: a spinning disk cannot sync a write in under a
    // millisecond, so one that does has a write cache in front, or is a virtual disk whose flag
    // says rotational by default.
    let measured = c.facts.fsync_us.filter(|us| *us > 0.0);
    let (value, why) = match (c.facts.rotational, measured) {
        (Some(true), Some(us)) if us >= 1000.0 => (200, "a rotational disk: 200".to_string()),
        (Some(true), None) => (200, "a rotational disk: 200".to_string()),
        (rotational, Some(us)) => {
            let value = ((1e6 / us / 100.0).round() as u64 * 100).clamp(200, 20_000);
            let flag = if rotational == Some(true) {
                " (the device says rotational, but syncs faster than a spinning disk can)"
            } else {
                ""
            };
            (value, format!("fsync {:.2} ms → about {value} sync writes/s, between 200 and 20 000{flag}", us / 1000.0))
        }
        (_, None) => return Propose::No("no fsync latency measured".into()),
    };
    if value > current * 2 || value * 2 < current {
        set(&value.to_string(), why)
    } else {
        Propose::No(format!("the current {current} is within a factor 2 of {value} ({why})"))
    }
}

pub(super) fn flush_method_direct(c: &Ctx<'_>) -> Propose {
    match c.get("innodb_flush_method").as_deref().map(str::to_ascii_uppercase).as_deref() {
        Some("FSYNC") | Some("") | None => {}
        Some(other) => return Propose::No(format!("already {other}")),
    }
    if c.facts.fs_type.as_deref() == Some("tmpfs") {
        return Propose::No("the datadir is on tmpfs, which has no O_DIRECT".into());
    }
    set("O_DIRECT", "data pages are cached once (in the buffer pool), not also by the OS")
}

pub(super) fn flush_neighbors(c: &Ctx<'_>) -> Propose {
    match c.facts.rotational {
        Some(false) => set("0", "the datadir's device is not rotational: neighbour pages cost as much as any other"),
        Some(true) => Propose::No("the datadir's device is rotational".into()),
        None => Propose::No("the device's kind is unknown".into()),
    }
}

pub(super) fn thread_concurrency(c: &Ctx<'_>) -> Propose {
    let limit = 2 * c.facts.cpus.max(1) + 1;
    if c.size("innodb_thread_concurrency").unwrap_or(0) != 0 {
        return Propose::No("already limited".into());
    }
    if c.facts.threads <= limit {
        return Propose::No(format!("{} connection(s) do not exceed 2 × CPUs + 1 = {limit}", c.facts.threads));
    }
    set(
        &limit.to_string(),
        format!("{} connections on {} CPU(s): 2 × CPUs + 1 disk = {limit}", c.facts.threads, c.facts.cpus),
    )
}

pub(super) fn table_open_cache(c: &Ctx<'_>) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let current = c.size("table_open_cache").unwrap_or(2000);
    let (hits, misses) = (p.delta("Table_open_cache_hits"), p.delta("Table_open_cache_misses"));
    let hit = if hits + misses > 0 { hits as f64 / (hits + misses) as f64 } else { 1.0 };
    if hit >= 0.2 {
        return Propose::No(format!("table-open hit rate {:.0} % in the probe (≥ 20 %)", hit * 100.0));
    }
    let value = (current * 2).max(round_up(c.facts.tables.unwrap_or(0) * c.facts.threads as u64, 100));
    set(&value.to_string(), format!("table-open hit rate {:.0} % < 20 % in the probe: twice the current", hit * 100.0))
}

pub(super) fn table_definition_cache(c: &Ctx<'_>) -> Propose {
    let Some(tables) = c.facts.tables else {
        return Propose::No("decided by the table count of the prepared data".into());
    };
    let current = c.size("table_definition_cache").unwrap_or(400);
    let need = tables + 400;
    if current >= need {
        return Propose::No(format!("{current} ≥ {tables} table(s) + 400 for the system schemas"));
    }
    set(&need.to_string(), format!("{tables} table(s) + 400 for the system schemas"))
}

pub(super) fn thread_cache(c: &Ctx<'_>) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let current = c.size("thread_cache_size").unwrap_or(0);
    let created = p.share("Threads_created", "Connections").unwrap_or(0.0);
    if current == 0 {
        return set(&c.facts.threads.max(4).to_string(), "the thread cache is off: start at max(4, connections)");
    }
    if created <= 0.5 || current >= c.facts.threads as u64 {
        return Propose::No(format!("{:.0} % of the probe's connections created a thread", created * 100.0));
    }
    set(&c.facts.threads.to_string(), format!("{:.0} % of connections created a thread (> 50 %)", created * 100.0))
}

pub(super) fn tmp_tables(c: &Ctx<'_>) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let Some(disk) = p.share("Created_tmp_disk_tables", "Created_tmp_tables") else {
        return Propose::No("no temporary tables in the probe".into());
    };
    let small = c.size("tmp_table_size").unwrap_or(0).min(c.size("max_heap_table_size").unwrap_or(0));
    if disk <= 0.25 {
        return Propose::No(format!("{:.0} % of the probe's temporary tables went to disk (≤ 25 %)", disk * 100.0));
    }
    if small >= 256 * MIB {
        return Propose::No("already 256 MiB: reduce the result sets instead".into());
    }
    set_size(256 * MIB, format!("{:.0} % of the probe's temporary tables went to disk (> 25 %)", disk * 100.0))
}

pub(super) fn sort_buffers(c: &Ctx<'_>, name: &str) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let sorts = p.delta("Sort_range") + p.delta("Sort_scan");
    let passes = p.delta("Sort_merge_passes");
    if sorts == 0 || (passes as f64) <= 0.1 * sorts as f64 {
        return Propose::No(format!("{passes} merge pass(es) for {sorts} sort(s) in the probe (≤ 10 %)"));
    }
    let current = c.size(name).unwrap_or(256 * 1024);
    set_size((current * 2).min(8 * MIB), format!("{passes} merge passes for {sorts} sorts (> 10 %): twice the current"))
}

pub(super) fn join_buffer(c: &Ctx<'_>) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let joins = p.delta("Select_full_join") + p.delta("Select_range_check");
    let current = c.size("join_buffer_size").unwrap_or(256 * 1024);
    if joins == 0 {
        return Propose::No("no joins without indexes in the probe".into());
    }
    if current >= 4 * MIB {
        return Propose::No("already 4 MiB: add indexes instead".into());
    }
    set_size(
        (current * 2).min(4 * MIB),
        format!("{joins} join(s) without indexes in the probe: twice the current, at most 4 MiB"),
    )
}

pub(super) fn log_buffer(c: &Ctx<'_>) -> Propose {
    let Some(p) = &c.facts.probe else { return Propose::No(NO_PROBE.into()) };
    let waits = p.delta("Innodb_log_waits");
    if waits == 0 {
        return Propose::No("no log waits in the probe".into());
    }
    let current = c.size("innodb_log_buffer_size").unwrap_or(16 * MIB);
    set_size((current * 2).min(256 * MIB), format!("{waits} log wait(s) in the probe: twice the current"))
}

pub(super) fn off_if_on(c: &Ctx<'_>, name: &str, why: &str) -> Propose {
    match c.get(name) {
        Some(v) if super::facts::is_on(v.as_str()) => set("OFF", why),
        _ => Propose::No("already OFF".into()),
    }
}

pub(super) fn query_cache(c: &Ctx<'_>) -> Propose {
    let on = c.get("query_cache_type").is_some_and(|v| !matches!(v.to_ascii_uppercase().as_str(), "OFF" | "0"));
    if on && c.size("query_cache_size").unwrap_or(0) > 0 {
        set("OFF", "the query cache serialises writers on one mutex and is flushed by every write")
    } else {
        Propose::No("already off".into())
    }
}

pub(super) fn trx_commit(c: &Ctx<'_>) -> Propose {
    match c.get("innodb_flush_log_at_trx_commit").as_deref() {
        Some("1") | None => set("2", "write the redo log at commit, fsync it once a second"),
        Some(other) => Propose::No(format!("already {other}")),
    }
}

pub(super) fn sync_binlog(c: &Ctx<'_>) -> Propose {
    if !c.get("log_bin").as_deref().is_some_and(super::facts::is_on) {
        return Propose::No("the binary log is off".into());
    }
    match c.get("sync_binlog").as_deref() {
        Some("0") => Propose::No("already 0".into()),
        _ => set("0", "leave syncing the binary log to the OS"),
    }
}

pub(super) fn skip_log_bin(c: &Ctx<'_>) -> Propose {
    off_if_on(c, "log_bin", "no binary log to write and sync at commit")
}

pub(super) fn doublewrite(c: &Ctx<'_>) -> Propose {
    off_if_on(c, "innodb_doublewrite", "pages are written once instead of twice")
}

pub(super) fn flush_no_fsync(c: &Ctx<'_>) -> Propose {
    if c.get("innodb_flush_method").is_some_and(|m| m.eq_ignore_ascii_case("O_DIRECT_NO_FSYNC")) {
        return Propose::No("already O_DIRECT_NO_FSYNC".into());
    }
    if c.facts.fs_type.as_deref() == Some("tmpfs") {
        return Propose::No("the datadir is on tmpfs, which has no O_DIRECT".into());
    }
    set("O_DIRECT_NO_FSYNC", "no fsync after data-file writes")
}
