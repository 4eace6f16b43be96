//! CPU time, context switches, memory and I/O of one process, read from `/proc`.
//!
//! `/proc/PID/stat` and `/proc/PID/io` cover the whole process, exited threads included. Context
//! switches are per thread in `/proc`, so for another process they are summed over its live threads
//! (`/proc/PID/task/*/status`): switches of threads that exit between two samples are lost, which is
//! fine for a server whose connection threads live through a run. For versus itself
//! ([`ProcessSample::read_self`]) `getrusage(RUSAGE_SELF)` is used instead, which keeps the counts of
//! finished worker threads and has microsecond CPU times.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of CPU times in `/proc`.
pub fn ticks_per_second() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as u64,
        _ => 100,
    })
}

/// I/O counters of `/proc/PID/io` (bytes and calls since the process started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoCounters {
    /// Bytes passed to read-like system calls (page cache hits included).
    pub rchar: u64,
    /// Bytes passed to write-like system calls.
    pub wchar: u64,
    /// Read system calls.
    pub syscr: u64,
    /// Write system calls.
    pub syscw: u64,
    /// Bytes really fetched from the storage layer.
    pub read_bytes: u64,
    /// Bytes sent to the storage layer (dirtied pages, counted when dirtied).
    pub write_bytes: u64,
    /// Bytes of dirtied pages that were truncated away before being written.
    pub cancelled_write_bytes: u64,
}

/// One reading of a process's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSample {
    /// Process id.
    pub pid: u32,
    /// When it was taken.
    pub taken: Instant,
    /// CPU time in user mode, µs.
    pub user_us: u64,
    /// CPU time in kernel mode, µs.
    pub system_us: u64,
    /// Voluntary context switches (the process blocked: I/O, locks, network).
    pub voluntary_ctxt_switches: u64,
    /// Involuntary context switches (preempted).
    pub nonvoluntary_ctxt_switches: u64,
    /// Resident set size, bytes.
    pub rss_bytes: u64,
    /// Number of threads.
    pub threads: u32,
    /// I/O counters; `None` when `/proc/PID/io` is unreadable (it needs the same user, or root).
    pub io: Option<IoCounters>,
}

/// The fields of `/proc/PID/stat` versus uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFields {
    /// User CPU, clock ticks.
    pub utime_ticks: u64,
    /// System CPU, clock ticks.
    pub stime_ticks: u64,
    /// Threads.
    pub num_threads: u32,
}

/// The fields of `/proc/PID/status` versus uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusFields {
    /// `voluntary_ctxt_switches`.
    pub voluntary_ctxt_switches: u64,
    /// `nonvoluntary_ctxt_switches`.
    pub nonvoluntary_ctxt_switches: u64,
    /// `VmRSS`, bytes (0 for kernel threads and zombies).
    pub rss_bytes: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) may hold spaces and parentheses, so fields are
/// counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<StatFields> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); utime is field 14, stime 15, num_threads 20.
    Some(StatFields {
        utime_ticks: fields.get(11)?.parse().ok()?,
        stime_ticks: fields.get(12)?.parse().ok()?,
        num_threads: fields.get(17)?.parse().ok()?,
    })
}

/// Parses `/proc/PID/status` (or `/proc/PID/task/TID/status`).
pub fn parse_status(text: &str) -> StatusFields {
    let mut s = StatusFields::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let number = || value.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        match key {
            "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = number(),
            "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = number(),
            "VmRSS" => s.rss_bytes = number() * 1024,
            _ => {}
        }
    }
    s
}

/// Parses `/proc/PID/io`; `None` when a counter is missing.
pub fn parse_io(text: &str) -> Option<IoCounters> {
    let get = |name: &str| -> Option<u64> {
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
    };
    Some(IoCounters {
        rchar: get("rchar")?,
        wchar: get("wchar")?,
        syscr: get("syscr")?,
        syscw: get("syscw")?,
        read_bytes: get("read_bytes")?,
        write_bytes: get("write_bytes")?,
        cancelled_write_bytes: get("cancelled_write_bytes")?,
    })
}

fn read_proc(path: PathBuf) -> Result<String> {
    std::fs::read_to_string(&path)
        .map_err(|e| Error::file(path, format!("cannot read process statistics ({e}); is the process still running?")))
}

/// Sums the context switches of every live thread of `pid`; `None` when the task list is unreadable.
fn thread_ctxt_switches(pid: u32) -> Option<(u64, u64)> {
    let mut sum = (0, 0);
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        // A thread may exit between listing and reading; skip it.
        if let Ok(text) = std::fs::read_to_string(entry.path().join("status")) {
            let s = parse_status(&text);
            sum.0 += s.voluntary_ctxt_switches;
            sum.1 += s.nonvoluntary_ctxt_switches;
        }
    }
    Some(sum)
}

impl ProcessSample {
    /// Builds a sample from the texts of `/proc/PID/stat`, `/proc/PID/status` and `/proc/PID/io`
    /// (`None` if unreadable), with CPU ticks converted at `ticks_per_second`.
    pub fn parse(pid: u32, stat: &str, status: &str, io: Option<&str>, ticks_per_second: u64) -> Result<Self> {
        let st = parse_stat(stat)
            .ok_or_else(|| Error::file(format!("/proc/{pid}/stat"), "cannot parse the process statistics"))?;
        let status = parse_status(status);
        let to_us = |ticks: u64| ticks.saturating_mul(1_000_000) / ticks_per_second.max(1);
        Ok(ProcessSample {
            pid,
            taken: Instant::now(),
            user_us: to_us(st.utime_ticks),
            system_us: to_us(st.stime_ticks),
            voluntary_ctxt_switches: status.voluntary_ctxt_switches,
            nonvoluntary_ctxt_switches: status.nonvoluntary_ctxt_switches,
            rss_bytes: status.rss_bytes,
            threads: st.num_threads,
            io: io.and_then(parse_io),
        })
    }

    /// Reads process `pid` (the server). Context switches are summed over its threads.
    pub fn read(pid: u32) -> Result<Self> {
        let stat = read_proc(PathBuf::from(format!("/proc/{pid}/stat")))?;
        let status = read_proc(PathBuf::from(format!("/proc/{pid}/status")))?;
        let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok();
        let mut sample = ProcessSample::parse(pid, &stat, &status, io.as_deref(), ticks_per_second())?;
        if let Some((voluntary, nonvoluntary)) = thread_ctxt_switches(pid) {
            sample.voluntary_ctxt_switches = voluntary;
            sample.nonvoluntary_ctxt_switches = nonvoluntary;
        }
        Ok(sample)
    }

    /// Reads versus itself (the load generator), all threads including finished ones: CPU times and
    /// context switches from `getrusage(RUSAGE_SELF)`, memory and I/O from `/proc/self`.
    pub fn read_self() -> Result<Self> {
        use nix::sys::resource::{UsageWho, getrusage};
        use nix::sys::time::TimeValLike;
        let pid = std::process::id();
        let mut sample = ProcessSample::read(pid)?;
        let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(|e| Error::Other(format!("getrusage failed: {e}")))?;
        sample.user_us = usage.user_time().num_microseconds().max(0) as u64;
        sample.system_us = usage.system_time().num_microseconds().max(0) as u64;
        sample.voluntary_ctxt_switches = usage.voluntary_context_switches().max(0) as u64;
        sample.nonvoluntary_ctxt_switches = usage.involuntary_context_switches().max(0) as u64;
        Ok(sample)
    }

    /// [`ProcessSample::read_self`] with the CPU time of its children that ended and were waited for
    /// (`RUSAGE_CHILDREN`): versus and the client processes of a split load.
    pub fn read_self_and_children() -> Result<Self> {
        use nix::sys::resource::{UsageWho, getrusage};
        use nix::sys::time::TimeValLike;
        let mut sample = ProcessSample::read_self()?;
        let usage = getrusage(UsageWho::RUSAGE_CHILDREN).map_err(|e| Error::Other(format!("getrusage failed: {e}")))?;
        sample.user_us += usage.user_time().num_microseconds().max(0) as u64;
        sample.system_us += usage.system_time().num_microseconds().max(0) as u64;
        Ok(sample)
    }

    /// What changed from `self` to the `later` sample of the same process. Counters that went
    /// backwards (threads exited) count as 0.
    pub fn delta_to(&self, later: &ProcessSample) -> ProcessDelta {
        let io = |f: fn(&IoCounters) -> u64| match (self.io.as_ref(), later.io.as_ref()) {
            (Some(a), Some(b)) => Some(f(b).saturating_sub(f(a))),
            _ => None,
        };
        ProcessDelta {
            wall: later.taken.saturating_duration_since(self.taken),
            user_us: later.user_us.saturating_sub(self.user_us),
            system_us: later.system_us.saturating_sub(self.system_us),
            voluntary_ctxt_switches: later.voluntary_ctxt_switches.saturating_sub(self.voluntary_ctxt_switches),
            nonvoluntary_ctxt_switches: later
                .nonvoluntary_ctxt_switches
                .saturating_sub(self.nonvoluntary_ctxt_switches),
            read_bytes: io(|c| c.read_bytes),
            write_bytes: io(|c| c.write_bytes),
            rchar: io(|c| c.rchar),
            wchar: io(|c| c.wchar),
            rss_bytes: later.rss_bytes,
        }
    }
}

/// The change of a process's counters between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ProcessDelta {
    /// Wall-clock time between the samples.
    pub wall: Duration,
    /// User CPU, µs.
    pub user_us: u64,
    /// System CPU, µs.
    pub system_us: u64,
    /// Voluntary context switches.
    pub voluntary_ctxt_switches: u64,
    /// Involuntary context switches.
    pub nonvoluntary_ctxt_switches: u64,
    /// Bytes read from storage, if `/proc/PID/io` was readable both times.
    pub read_bytes: Option<u64>,
    /// Bytes written to storage, likewise.
    pub write_bytes: Option<u64>,
    /// Bytes passed to read calls, likewise.
    pub rchar: Option<u64>,
    /// Bytes passed to write calls, likewise.
    pub wchar: Option<u64>,
    /// Resident set size at the later sample, bytes.
    pub rss_bytes: u64,
}

/// A [`ProcessDelta`] divided by a number of operations (transactions, queries …).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PerOp {
    /// User CPU µs per operation.
    pub user_us: f64,
    /// System CPU µs per operation.
    pub system_us: f64,
    /// User + system CPU µs per operation.
    pub cpu_us: f64,
    /// Voluntary context switches per operation.
    pub voluntary_ctxt_switches: f64,
    /// Involuntary context switches per operation.
    pub nonvoluntary_ctxt_switches: f64,
    /// All context switches per operation.
    pub ctxt_switches: f64,
    /// Storage bytes read per operation.
    pub read_bytes: Option<f64>,
    /// Storage bytes written per operation.
    pub write_bytes: Option<f64>,
}

impl ProcessDelta {
    /// User + system CPU, µs.
    pub fn cpu_us(&self) -> u64 {
        self.user_us + self.system_us
    }

    /// All context switches.
    pub fn ctxt_switches(&self) -> u64 {
        self.voluntary_ctxt_switches + self.nonvoluntary_ctxt_switches
    }

    /// CPU used per wall-clock second: 1.0 is one core busy. `None` when no time passed.
    pub fn cores_busy(&self) -> Option<f64> {
        let wall_us = self.wall.as_secs_f64() * 1e6;
        (wall_us > 0.0).then(|| self.cpu_us() as f64 / wall_us)
    }

    /// The fraction (0–1) of all the machine's CPU time, over the same period, that this process used.
    pub fn share_of_host(&self, host: &super::HostCpuDelta) -> Option<f64> {
        let total = host.total_us();
        (total > 0.0).then(|| self.cpu_us() as f64 / total)
    }

    /// Everything divided by `n_ops`; `None` for zero operations.
    pub fn per_op(&self, n_ops: u64) -> Option<PerOp> {
        if n_ops == 0 {
            return None;
        }
        let n = n_ops as f64;
        let per = |v: u64| v as f64 / n;
        Some(PerOp {
            user_us: per(self.user_us),
            system_us: per(self.system_us),
            cpu_us: per(self.cpu_us()),
            voluntary_ctxt_switches: per(self.voluntary_ctxt_switches),
            nonvoluntary_ctxt_switches: per(self.nonvoluntary_ctxt_switches),
            ctxt_switches: per(self.ctxt_switches()),
            read_bytes: self.read_bytes.map(per),
            write_bytes: self.write_bytes.map(per),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A mariadbd whose command name holds a space and a parenthesis, to check field counting.
    const STAT: &str = "4242 (mariadbd (x) y) S 1 4242 4242 0 -1 4194560 51234 0 12 0 1530 420 0 0 20 0 37 0 \
                        123456 1804759040 52000 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 1 0 0 3 0 0";
    const STATUS: &str = "Name:\tmariadbd\nState:\tS (sleeping)\nVmRSS:\t  208000 kB\nThreads:\t37\n\
                          voluntary_ctxt_switches:\t1500\nnonvoluntary_ctxt_switches:\t25\n";
    const IO: &str = "rchar: 1000\nwchar: 2000\nsyscr: 10\nsyscw: 20\nread_bytes: 4096\nwrite_bytes: 8192\n\
                      cancelled_write_bytes: 0\n";

    #[test]
    fn parses_stat_after_the_last_parenthesis() {
        assert_eq!(parse_stat(STAT), Some(StatFields { utime_ticks: 1530, stime_ticks: 420, num_threads: 37 }));
        assert_eq!(parse_stat("12 (short) S 1 2"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn parses_status_and_io() {
        let s = parse_status(STATUS);
        assert_eq!(s.voluntary_ctxt_switches, 1500);
        assert_eq!(s.nonvoluntary_ctxt_switches, 25);
        assert_eq!(s.rss_bytes, 208_000 * 1024);
        let io = parse_io(IO).unwrap();
        assert_eq!((io.rchar, io.wchar, io.read_bytes, io.write_bytes, io.syscw), (1000, 2000, 4096, 8192, 20));
        assert_eq!(parse_io("rchar: 1\n"), None);
    }

    #[test]
    fn sample_converts_ticks_to_microseconds() {
        let s = ProcessSample::parse(4242, STAT, STATUS, Some(IO), 100).unwrap();
        assert_eq!(s.user_us, 15_300_000);
        assert_eq!(s.system_us, 4_200_000);
        assert_eq!(s.threads, 37);
        assert_eq!(s.io.unwrap().write_bytes, 8192);
        let s = ProcessSample::parse(4242, STAT, STATUS, None, 250).unwrap();
        assert_eq!(s.user_us, 6_120_000);
        assert!(s.io.is_none());
        assert!(ProcessSample::parse(1, "1 (x) S", STATUS, None, 100).is_err());
    }

    #[test]
    fn delta_and_per_op() {
        let a = ProcessSample::parse(1, STAT, STATUS, Some(IO), 100).unwrap();
        let mut b = a.clone();
        b.taken = a.taken + Duration::from_secs(2);
        b.user_us += 3_000_000;
        b.system_us += 1_000_000;
        b.voluntary_ctxt_switches += 400;
        b.nonvoluntary_ctxt_switches += 100;
        b.io = b.io.map(|mut io| {
            io.write_bytes += 1_000_000;
            io
        });
        let d = a.delta_to(&b);
        assert_eq!(d.cpu_us(), 4_000_000);
        assert_eq!(d.ctxt_switches(), 500);
        assert_eq!(d.write_bytes, Some(1_000_000));
        assert_eq!(d.read_bytes, Some(0));
        assert_eq!(d.cores_busy(), Some(2.0));
        let p = d.per_op(1000).unwrap();
        assert_eq!(p.cpu_us, 4000.0);
        assert_eq!(p.user_us, 3000.0);
        assert_eq!(p.ctxt_switches, 0.5);
        assert_eq!(p.write_bytes, Some(1000.0));
        assert!(d.per_op(0).is_none());
        // Counters that go backwards (a thread exited) do not underflow.
        let back = b.delta_to(&a);
        assert_eq!(back.cpu_us(), 0);
        // Without io on one side there is no io delta.
        let mut c = b.clone();
        c.io = None;
        assert_eq!(a.delta_to(&c).write_bytes, None);
    }

    #[test]
    fn reads_this_process_from_proc() {
        let pid = std::process::id();
        let by_pid = ProcessSample::read(pid).unwrap();
        assert_eq!(by_pid.pid, pid);
        assert!(by_pid.threads >= 1);
        assert!(by_pid.rss_bytes > 0);
        let a = ProcessSample::read_self().unwrap();
        // Burn some CPU so that the counters move.
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(120) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = ProcessSample::read_self().unwrap();
        let d = a.delta_to(&b);
        assert!(d.cpu_us() > 0, "{d:?}");
        assert!(d.wall >= Duration::from_millis(120));
    }

    #[test]
    fn unknown_pid_names_the_file() {
        // PIDs are below 2^22 on Linux.
        let err = ProcessSample::read(u32::MAX - 1).unwrap_err().to_string();
        assert!(err.contains(&format!("/proc/{}/stat", u32::MAX - 1)), "{err}");
    }

    #[test]
    fn clock_ticks_are_known() {
        assert!(ticks_per_second() >= 100);
    }
}
