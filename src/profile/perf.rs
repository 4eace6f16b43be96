//! Driving the distribution's `perf`: `perf record` attached to the server for the measured interval,
//! then `perf script` on what it wrote, folded in-process.
//!
//! `perf record` rather than an own `perf_event_open` sampler: the kernel's sampling cost is the same,
//! and perf already maps PIE addresses, reads `.dynsym`, `.symtab` and separate debug files by build
//! id, and demangles C++. Frame-pointer call graphs: about 100 bytes per sample, against 8 KB for DWARF
//! stacks, and the servers of interest keep frame pointers in most non-leaf functions.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::owned;
use crate::server::process;

/// The event sampled: the only one a VM without a PMU offers, and timer-driven, so samples are CPU time.
pub const EVENT: &str = "cpu-clock";

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Why profiling cannot run here, in one line naming what to change; `Ok` when `perf` is installed
/// and the kernel lets this user sample another of its processes.
pub fn availability() -> std::result::Result<(), String> {
    let runs = Command::new("perf").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !matches!(runs, Ok(s) if s.success()) {
        return Err("perf is not installed: install the distribution's perf (apt-get install linux-perf), \
                    or leave out --profile"
            .into());
    }
    let paranoid = std::fs::read_to_string(PARANOID).ok().and_then(|t| t.trim().parse::<i32>().ok());
    let root = nix::unistd::geteuid().is_root();
    match paranoid {
        Some(level) if level > 2 || (!root && level > 1) => Err(format!(
            "the kernel refuses perf events to this user (kernel.perf_event_paranoid = {level}): \
             run as root or set it to 1 (sysctl -w kernel.perf_event_paranoid=1), or leave out --profile"
        )),
        _ => Ok(()),
    }
}

/// Whether this user may sample every CPU (root, or `kernel.perf_event_paranoid` ≤ 0).
///
/// Sampling every CPU and keeping the server's samples costs the server far less than attaching to
/// its threads (`-p`): a per-thread event is switched in and out with its thread, and each switch then
/// reprograms the sampling timer, which on a virtual machine traps to the hypervisor; with a database's
/// hundreds of thousands of switches per second that took half the throughput at 4 threads here
/// (BENCHMARKS.md, "Profiling overhead"). A per-CPU timer costs the same whatever runs.
fn may_sample_system_wide() -> bool {
    let paranoid = std::fs::read_to_string(PARANOID).ok().and_then(|t| t.trim().parse::<i32>().ok());
    nix::unistd::geteuid().is_root() || paranoid.is_some_and(|p| p <= 0)
}

/// A `perf record` sampling the server (every CPU, keeping the server's samples, where the kernel
/// allows; else attached to the server's threads), writing to a directory versus made for it.
#[derive(Debug)]
pub struct Recorder {
    child: Child,
    dir: PathBuf,
    data: PathBuf,
    started: Instant,
    hz: u32,
    pid: u32,
    system_wide: bool,
}

impl Recorder {
    /// Starts sampling the on-CPU stacks of every thread of `pid` at `hz` samples per second.
    ///
    /// Errors: one line, when perf is missing or the kernel refuses (see [`availability`]). A perf that
    /// starts and then refuses the process says so when it is finished.
    pub fn start(pid: u32, hz: u32) -> std::result::Result<Recorder, String> {
        availability()?;
        let dir = std::env::temp_dir().join(format!("versus-profile-{}-{}", std::process::id(), unique()));
        owned::create_dir(&dir).map_err(|e| e.to_string())?;
        let data = dir.join("perf.data");
        let mut cmd = Command::new("perf");
        let system_wide = may_sample_system_wide();
        cmd.args(["record", "-q", "-e", EVENT, "-F", &hz.to_string(), "--call-graph", "fp"]);
        if system_wide {
            cmd.arg("-a");
        } else {
            cmd.arg("-p").arg(pid.to_string());
        }
        cmd.arg("-o").arg(&data).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        process::isolate(&mut cmd, true);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = owned::remove(&dir);
                return Err(format!("perf did not start: {e}"));
            }
        };
        Ok(Recorder { child, dir, data, started: Instant::now(), hz, pid, system_wide })
    }

    /// The sampling frequency asked for.
    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// Stops sampling and returns the folded stacks with their CPU nanoseconds and the number of
    /// samples. The data file and its directory are removed whatever happens.
    pub fn finish(mut self) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
        let result = self.stop_and_fold();
        let _ = owned::remove(&self.dir);
        result
    }

    fn stop_and_fold(&mut self) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(format!("perf record stopped early ({status}): {}", stderr_line(&mut self.child)));
        }
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!(
                        "perf record did not stop within 60 s of the end of the run ({} s sampled)",
                        self.started.elapsed().as_secs()
                    ));
                }
            }
        }
        if !self.data.exists() {
            return Err(format!("perf record wrote nothing: {}", stderr_line(&mut self.child)));
        }
        script_and_fold(&self.data, self.system_wide.then_some(self.pid))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = owned::remove(&self.dir);
    }
}

/// Runs `perf script` on `data` and folds its output.
fn script_and_fold(data: &Path, only: Option<u32>) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let mut cmd = Command::new("perf");
    cmd.args(["script", "-F", "comm,pid,tid,time,period,event,ip,sym,dso", "-i"]).arg(data);
    if let Some(pid) = only {
        cmd.arg(format!("--pid={pid}"));
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("perf script did not run: {e}"))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
        return Err(format!("perf script failed: {line}"));
    }
    super::fold::fold_perf_script(&out.stdout)
}

fn stderr_line(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut text);
    }
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message").to_string()
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (N.fetch_add(1, Ordering::Relaxed) << 32)
}
