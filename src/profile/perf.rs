//! Driving the distribution's `perf`: `perf record` attached to the server for the measured interval,
//! then `perf script` on what it wrote, folded in-process.
//!
//! `perf record` rather than an own `perf_event_open` sampler: the kernel's sampling cost is the same,
//! and perf already maps PIE addresses, reads `.dynsym`, `.symtab` and separate debug files by build
//! id, and demangles C++. Frame-pointer call graphs: about 100 bytes per sample, against 8 KB for DWARF
//! stacks, and the servers of interest keep frame pointers in most non-leaf functions.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::owned;
use crate::server::process;

pub use super::fold::EVENT;

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Why profiling cannot run here, in one line naming what to change; `Ok` when `perf` is installed
/// and the kernel lets this user sample another of its processes.
pub fn availability() -> std::result::Result<(), String> {
    // Asked once per process: every run starts its recorder at the start of its measured time.
    static ANSWER: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    ANSWER.get_or_init(check_availability).clone()
}

fn check_availability() -> std::result::Result<(), String> {
    let runs = Command::new("perf").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !matches!(runs, Ok(s) if s.success()) {
        return Err("perf is not installed: install the distribution's perf (apt-get install linux-perf), \
                    or turn profiling off"
            .into());
    }
    // Root (CAP_PERFMON) is not held back by perf_event_paranoid, whatever its level.
    if nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    match paranoid_level() {
        Some(level) if level > 1 => Err(format!(
            "the kernel refuses perf events to this user (kernel.perf_event_paranoid = {level}): \
             run as root or set it to 1 (sysctl -w kernel.perf_event_paranoid=1), or turn profiling off"
        )),
        _ => Ok(()),
    }
}

/// Whether this host's perf counts instructions and cycles (a hardware PMU; a virtual machine often
/// has none). Asked once per process with `perf stat` on `true`; `false` when perf cannot say.
pub fn hardware_counters() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        let out = Command::new("perf")
            .args(["stat", "-x,", "-e", "instructions,cycles", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let text = String::from_utf8_lossy(&o.stderr);
                let counted = |event: &str| {
                    text.lines().any(|l| {
                        l.split(',').nth(2) == Some(event)
                            && l.split(',').next().is_some_and(|v| v.trim().parse::<u64>().is_ok())
                    })
                };
                counted("instructions") && counted("cycles")
            }
            _ => false,
        }
    })
}

/// The line that says, once, that this host counts no instructions or cycles; `None` where it does
/// (they are not sampled by versus yet either way; the profile is CPU time).
pub fn hardware_counters_line() -> Option<&'static str> {
    (!hardware_counters()).then_some(
        "this host offers no hardware counters (perf cannot count instructions or cycles here, as on most \
         virtual machines): the profile is CPU time from the cpu-clock timer, and no figure per instruction \
         or cycle is given",
    )
}

fn paranoid_level() -> Option<i32> {
    std::fs::read_to_string(PARANOID).ok().and_then(|t| t.trim().parse::<i32>().ok())
}

/// Whether this user may sample every CPU (root, or `kernel.perf_event_paranoid` ≤ 0).
///
/// Sampling every CPU and keeping the server's samples costs the server far less than attaching to
/// its threads (`-p`): a per-thread event is switched in and out with its thread, and each switch then
/// reprograms the sampling timer, which on a virtual machine traps to the hypervisor; with a database's
/// hundreds of thousands of switches per second that took half the throughput at 4 threads here
/// (BENCHMARKS.md, "Profiling overhead"). A per-CPU timer costs the same whatever runs.
fn may_sample_system_wide() -> bool {
    nix::unistd::geteuid().is_root() || paranoid_level().is_some_and(|p| p <= 0)
}

/// A `perf record` sampling the server (every CPU, keeping the server's samples, where the kernel
/// allows; else attached to the server's threads), writing to a directory versus made for it.
#[derive(Debug)]
pub struct Recorder {
    child: Child,
    dir: PathBuf,
    data: PathBuf,
    started: Instant,
    pid: u32,
    system_wide: bool,
    switches: bool,
}

impl Recorder {
    /// Starts sampling the on-CPU stacks of every thread of `pid` at `hz` samples per second.
    ///
    /// Errors: one line, when perf is missing or the kernel refuses (see [`availability`]). A perf that
    /// starts and then refuses the process says so when it is finished.
    pub fn start(pid: u32, hz: u32) -> std::result::Result<Recorder, String> {
        let system_wide = may_sample_system_wide();
        let args = ["-e", EVENT, "-F", &hz.to_string(), "--call-graph", "fp"].map(String::from);
        Recorder::spawn(pid, &args, system_wide, false)
    }

    /// Starts recording every context switch on every CPU with its stack, for the off-CPU time of
    /// `pid`'s threads ([`super::offcpu`]).
    ///
    /// Errors: one line, when perf is missing or this user may not record every CPU.
    pub fn start_switches(pid: u32) -> std::result::Result<Recorder, String> {
        if !may_sample_system_wide() {
            availability()?;
            return Err("off-CPU waits need every CPU's scheduler records: run as root (or set \
                        kernel.perf_event_paranoid to -1), or turn profile_waits off"
                .into());
        }
        let mut args = vec!["-e".to_string(), super::offcpu::EVENT.to_string()];
        if let Some(filter) = super::offcpu::thread_filter(&thread_names(pid)) {
            args.extend(["--filter".to_string(), filter]);
        }
        args.extend(["--call-graph".to_string(), "fp".to_string()]);
        Recorder::spawn(pid, &args, true, true)
    }

    fn spawn(pid: u32, event: &[String], system_wide: bool, switches: bool) -> std::result::Result<Recorder, String> {
        availability()?;
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(sweep_stale);
        let dir = owned::create_temp_dir(DIR_PREFIX).map_err(|e| e.to_string())?;
        let data = dir.join("perf.data");
        let log = match std::fs::File::create_new(dir.join("perf.log")) {
            Ok(f) => f,
            Err(e) => {
                let _ = owned::remove(&dir);
                return Err(format!("cannot write perf's log in {}: {e}", dir.display()));
            }
        };
        let mut cmd = Command::new("perf");
        // No build-id pass at the end (-B) and nothing copied into ~/.debug (-N): perf script reads the
        // same binaries right away, and versus writes nothing outside what it made.
        cmd.args(["record", "-q", "-B", "-N"]).args(event);
        if system_wide {
            cmd.arg("-a");
        } else {
            cmd.arg("-p").arg(pid.to_string());
        }
        cmd.arg("-o").arg(&data).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(log));
        process::isolate(&mut cmd, true);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = owned::remove(&dir);
                return Err(format!("perf did not start: {e}"));
            }
        };
        let mut recorder = Recorder { child, dir, data, started: Instant::now(), pid, system_wide, switches };
        recorder.wait_attached(Duration::from_secs(5));
        Ok(recorder)
    }

    /// Waits (at most `limit`) until perf has its events open, so that the measured time that begins now
    /// is sampled from its start: on a loaded host perf's own start-up can take a good part of a second.
    /// A perf that exits first, or does not get there in time, says why when it is finished.
    fn wait_attached(&mut self, limit: Duration) {
        let fds = PathBuf::from(format!("/proc/{}/fd", self.child.id()));
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            let open = std::fs::read_dir(&fds)
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:[perf_event]"));
            if open {
                // Events open for one CPU or thread: the rest follow within a few milliseconds.
                std::thread::sleep(Duration::from_millis(20));
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
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
            return Err(format!("perf record stopped early ({status}): {}", self.log_line()));
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
            return Err(format!("perf record wrote nothing: {}", self.log_line()));
        }
        if self.switches {
            script_and_fold_switches(&self.data, self.pid)
        } else {
            script_and_fold(&self.data, self.system_wide.then_some(self.pid))
        }
    }

    /// The first line perf wrote to its log.
    fn log_line(&self) -> String {
        first_line(&self.dir.join("perf.log"))
    }
}

/// The names of process `pid`'s threads now (`/proc/PID/task/*/comm`), each once.
fn thread_names(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim_end_matches('\n').to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The first line of a log perf wrote, trimmed, or `no message`.
fn first_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message").to_string()
}

const DIR_PREFIX: &str = "versus-profile-";

/// Removes the data directories of earlier versus processes that died before removing them (killed,
/// or a second Ctrl-C that exits at once): only directories versus marked as its own, of a process
/// that is gone.
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    // Real directories only: a link of that name is nobody's data directory, and is left alone.
    for e in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(DIR_PREFIX).and_then(|r| r.split('-').next()?.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !process::is_alive(pid) && owned::has_own_marker(&e.path()) {
            let _ = owned::remove(&e.path());
        }
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

/// Runs `perf script` on `data` (keeping the samples of process `only`, when given) and folds its
/// output as it streams: memory stays that of the folded stacks, whatever the run's length.
fn script_and_fold(data: &Path, only: Option<u32>) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let mut cmd = Command::new("perf");
    cmd.args(["script", "-F", "comm,pid,tid,time,period,event,ip,sym,dso", "-i"]).arg(data);
    if let Some(pid) = only {
        cmd.arg(format!("--pid={pid}"));
    }
    run_script(cmd, data, super::fold::fold_perf_script)
}

/// Runs `perf script` on the context switches in `data` (every process's: a thread's switch-in is
/// recorded in another's context) and folds the off-CPU time of `pid`'s threads as it streams.
fn script_and_fold_switches(data: &Path, pid: u32) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let mut cmd = Command::new("perf");
    cmd.args(["script", "-F", "comm,pid,tid,time,event,trace,ip,sym,dso", "-i"]).arg(data);
    run_script(cmd, data, |out| super::offcpu::fold_switches(out, pid))
}

/// Runs `cmd` (a `perf script` on `data`) and folds its output with `fold`.
fn run_script(
    mut cmd: Command,
    data: &Path,
    fold: impl FnOnce(std::process::ChildStdout) -> std::result::Result<(Vec<(String, u64)>, u64), String>,
) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let log_path = data.with_extension("script.log");
    let log = std::fs::File::create_new(&log_path).map_err(|e| format!("cannot write perf script's log: {e}"))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .map_err(|e| format!("perf script did not run: {e}"))?;
    let folded = match child.stdout.take() {
        Some(out) => fold(out),
        None => Err("perf script gave no output".into()),
    };
    let status = child.wait().map_err(|e| format!("perf script did not finish: {e}"))?;
    if !status.success() {
        return Err(format!("perf script failed: {}", first_line(&log_path)));
    }
    folded
}
