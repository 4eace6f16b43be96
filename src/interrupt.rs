//! Ctrl-C handling shared by every long-running command.
//!
//! The first Ctrl-C (or SIGTERM/SIGHUP) sets a flag that loops check with [`check`], so they stop
//! cleanly, stop their servers and keep what was measured. A second one stops every server that
//! versus guards and exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));
/// A guarded server process and the function that stops it.
type Guarded = (u32, fn(u32));

static GUARDED: Mutex<Vec<Guarded>> = Mutex::new(Vec::new());

/// A second signal sooner than this after the first is the same request: coreutils' `timeout -s INT`
/// signals the child and then its whole process group, microseconds apart.
const SAME_REQUEST: Duration = Duration::from_millis(100);

/// Installs the handler; call once from `main`. Later calls are ignored.
pub fn install() {
    let first: Mutex<Option<Instant>> = Mutex::new(None);
    let _ = ctrlc::set_handler(move || {
        let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
        match *first {
            Some(t) if t.elapsed() < SAME_REQUEST => {}
            Some(_) => {
                eprintln!("versus: interrupted twice, stopping servers and exiting");
                terminate_guarded();
                std::process::exit(130);
            }
            None => {
                *first = Some(Instant::now());
                INTERRUPTED.store(true, Ordering::SeqCst);
                eprintln!("versus: interrupted, stopping cleanly (press Ctrl-C again to force)");
            }
        }
    });
}

/// True once the user has asked versus to stop.
pub fn is_interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The flag itself, for code that polls an `Arc<AtomicBool>` (such as the workload runners).
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(&INTERRUPTED)
}

/// `Err(Error::Interrupted)` once the user has asked versus to stop.
pub fn check() -> Result<()> {
    if is_interrupted() { Err(Error::Interrupted) } else { Ok(()) }
}

/// Records a server process that must not outlive versus, and how to stop it (a second Ctrl-C calls
/// `stop(pid)`).
pub(crate) fn guard_pid(pid: u32, stop: fn(u32)) {
    GUARDED.lock().unwrap_or_else(|e| e.into_inner()).push((pid, stop));
}

/// Forgets a server process (stopped, or handed over to the user).
pub(crate) fn unguard_pid(pid: u32) {
    GUARDED.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| *p != pid);
}

fn terminate_guarded() {
    let guarded = GUARDED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for (pid, stop) in guarded {
        stop(pid);
    }
}
