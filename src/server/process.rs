//! Server processes: spawning them so that they cannot outlive versus (or, for `server start`, so that
//! they do), and stopping them by PID: SIGTERM, wait, SIGKILL after a timeout.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// How a stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopOutcome {
    /// The process was already gone.
    NotRunning,
    /// It shut down after SIGTERM.
    Terminated,
    /// It ignored SIGTERM for the whole timeout and was killed.
    Killed,
}

/// Makes `cmd` start in its own process group so that a Ctrl-C typed at the terminal reaches versus,
/// not the server. With `tie_to_parent`, the kernel kills the server when versus dies, even by SIGKILL;
/// without it the server starts a new session and lives on (for `versus server start`).
///
/// The parent-death signal is SIGKILL, not SIGTERM: a server that is still starting up can lose a
/// SIGTERM, and a guarded server's datadir is disposable (restored from a snapshot or a temporary one).
/// Normal stops still go through SIGTERM and a clean shutdown.
pub fn isolate(cmd: &mut Command, tie_to_parent: bool) {
    if tie_to_parent {
        cmd.process_group(0);
        let parent = std::process::id() as i32;
        // SAFETY: prctl and getppid are async-signal-safe and touch only the child's own state.
        unsafe {
            cmd.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL)).map_err(std::io::Error::from)?;
                // If versus died between fork and prctl, no signal will come: do not start at all.
                if nix::unistd::getppid().as_raw() != parent {
                    return Err(std::io::Error::other("versus exited while starting the server"));
                }
                Ok(())
            });
        }
    } else {
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                Ok(())
            });
        }
    }
}

/// True while `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    if kill(Pid::from_raw(pid as i32), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name.
        Ok(stat) => !matches!(stat.rsplit_once(')').and_then(|(_, r)| r.trim_start().chars().next()), Some('Z' | 'X')),
        Err(_) => false,
    }
}

/// True when the live process `pid` was started with `needle` among its arguments; guards against
/// signalling an unrelated process that reused the PID of a stopped server.
pub fn cmdline_contains(pid: u32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| raw.split(|b| *b == 0).any(|arg| arg == needle.as_bytes()))
        .unwrap_or(false)
}

/// The processes that have `arg` as one of their arguments exactly (from /proc).
pub fn with_argument(arg: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| cmdline_contains(pid, arg))
        .collect()
}

/// Stops `pid`: SIGTERM, then polls until it is gone; SIGKILL once `timeout` has passed.
/// With `child`, the process is also reaped.
pub fn terminate(pid: u32, mut child: Option<&mut Child>, timeout: Duration) -> StopOutcome {
    let gone = |child: &mut Option<&mut Child>| match child {
        Some(c) => !matches!(c.try_wait(), Ok(None)),
        None => !is_alive(pid),
    };
    if gone(&mut child) {
        return StopOutcome::NotRunning;
    }
    let target = Pid::from_raw(pid as i32);
    let _ = kill(target, Signal::SIGTERM);
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if gone(&mut child) {
            return StopOutcome::Terminated;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = kill(target, Signal::SIGKILL);
    match child {
        Some(c) => {
            let _ = c.wait();
        }
        None => {
            let deadline = Instant::now() + Duration::from_secs(10);
            while is_alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    StopOutcome::Killed
}

/// The server's own explanation of a failure, from the lines of its error log since `from_byte`: its
/// last few distinct `[ERROR]` lines (without timestamps; what went wrong last is what stopped it, and
/// a server can log harmless errors long before) joined on one line, or else its last few lines.
pub fn error_summary(path: &Path, from_byte: u64) -> String {
    let raw = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(raw.get(from_byte as usize..).unwrap_or(&raw[..])).into_owned();
    let errors: Vec<String> = text
        .lines()
        .filter_map(|l| l.find("[ERROR]").map(|i| l[i + "[ERROR]".len()..].trim().to_string()))
        .filter(|l| !l.is_empty())
        .collect();
    let picked: Vec<String> = if errors.is_empty() {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].iter().map(|s| s.trim().to_string()).collect()
    } else {
        let mut last: Vec<String> = Vec::new();
        for e in errors.into_iter().rev() {
            if !last.contains(&e) && last.len() < 4 {
                last.push(e);
            }
        }
        last.reverse();
        last
    };
    if picked.is_empty() { "the error log is empty".to_string() } else { picked.join(" | ") }
}

/// True for a host name that is this machine (`127.0.0.1`, `localhost`, `::1`).
pub fn is_local_host(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

/// The process id of a server on this host, from its `@@pid_file` (relative to `@@datadir` when it is
/// relative); `ask` runs one query on the server and returns the first value. Errors, in words: the
/// server did not say, the file cannot be read or holds no id, or the process is not a MySQL or MariaDB
/// server here (a stale file, or a server on another host with the same paths).
pub fn server_pid_from_pid_file(mut ask: impl FnMut(&str) -> Option<String>) -> Result<u32, String> {
    let Some(pid_file) = ask("SELECT @@pid_file") else {
        return Err("the server did not say where its pid file is (@@pid_file)".into());
    };
    let path = match Path::new(&pid_file) {
        p if p.is_absolute() => p.to_path_buf(),
        p => Path::new(&ask("SELECT @@datadir").unwrap_or_default()).join(p),
    };
    let pid = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read the server's pid file {}: {e}", path.display()))?
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("the server's pid file {} holds no process id", path.display()))?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if !matches!(comm.trim(), "mysqld" | "mariadbd") {
        return Err(format!(
            "process {pid} (from {}) is not a MySQL or MariaDB server on this host; is the server local?",
            path.display()
        ));
    }
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_summary_keeps_error_lines_without_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("error.log");
        std::fs::write(
            &log,
            "2026-11-30  0:00:00 0 [Note] Starting\n\
             2026-11-30  0:00:00 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'foo=bar'\n\
             2026-11-30  0:00:00 0 [ERROR] Aborting\n",
        )
        .unwrap();
        assert_eq!(error_summary(&log, 0), "/usr/sbin/mariadbd: unknown variable 'foo=bar' | Aborting");
        let len = std::fs::metadata(&log).unwrap().len();
        assert_eq!(error_summary(&log, len), "the error log is empty");
        std::fs::write(&log, "a\nb\nc\nd\n").unwrap();
        assert_eq!(error_summary(&log, 0), "b | c | d");
        // Early harmless errors do not hide the ones that stopped the server.
        let early: String = (0..6).map(|i| format!("t 0 [ERROR] Incorrect definition of table mysql.t{i}\n")).collect();
        std::fs::write(
            &log,
            format!(
                "{early}t 0 [Note] ready for connections\nt 0 [ERROR] mariadbd got signal 11 ;\n\
                 Sorry, we probably made a mistake\nt 0 [ERROR] Aborting\nt 0 [ERROR] mariadbd got signal 11 ;\n"
            ),
        )
        .unwrap();
        assert_eq!(
            error_summary(&log, 0),
            "Incorrect definition of table mysql.t4 | Incorrect definition of table mysql.t5 | Aborting | mariadbd got \
             signal 11 ;",
            "the last distinct errors, in the log's order"
        );
    }

    #[test]
    fn terminate_stops_a_process_that_ignores_nothing() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(is_alive(pid));
        // Until the child has exec'd, /proc shows the test binary's command line.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cmdline_contains(pid, "sleep") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(cmdline_contains(pid, "30"));
        assert!(!cmdline_contains(pid, "31"));
        assert_eq!(terminate(pid, Some(&mut child), Duration::from_secs(5)), StopOutcome::Terminated);
        assert!(!is_alive(pid));
        assert_eq!(terminate(pid, Some(&mut child), Duration::from_secs(5)), StopOutcome::NotRunning);
    }

    #[test]
    fn terminate_kills_after_the_timeout() {
        let mut child = Command::new("sh").args(["-c", "trap '' TERM; exec sleep 30"]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let pid = child.id();
        assert_eq!(terminate(pid, Some(&mut child), Duration::from_millis(300)), StopOutcome::Killed);
        assert!(!is_alive(pid));
    }
}
