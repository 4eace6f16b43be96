//! Processes seen from the tests: which ones mention a path (servers or tasks left behind), and a
//! SIGKILL for one of them.
#![allow(dead_code)]

/// The processes whose command line mentions `needle`: (PID, command line with its NUL separators
/// as spaces), in the order /proc lists them.
pub fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else { continue };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains(needle) {
            found.push((pid, line));
        }
    }
    found
}

/// SIGKILL to `pid`, which must exist.
pub fn kill9(pid: u32) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
}
