//! CPU pinning for less noise (experiment files' `pin_cpus = true`): the server a run starts gets one
//! set of the CPUs versus may use, the client's threads the others, so that neither migrates onto the
//! other's CPU mid-run. Only with at least 2 CPUs. The server's mask is set in its own process between
//! fork and exec (every thread it creates inherits it); versus never changes the affinity of a process
//! it did not start.

use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use crate::error::{Error, Result};

/// Which CPUs the server and the client run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSplit {
    /// CPUs of the started server (the first half, the larger one when the count is odd).
    pub server: Vec<usize>,
    /// CPUs of versus's client threads (the rest).
    pub client: Vec<usize>,
}

impl CpuSplit {
    /// Splits `allowed` (ascending CPU numbers): `None` with fewer than 2 CPUs.
    pub fn of(allowed: &[usize]) -> Option<CpuSplit> {
        if allowed.len() < 2 {
            return None;
        }
        let cut = allowed.len().div_ceil(2);
        Some(CpuSplit { server: allowed[..cut].to_vec(), client: allowed[cut..].to_vec() })
    }

    /// The split of the CPUs the calling thread may use, or an error that names `pin_cpus`.
    pub fn here() -> Result<CpuSplit> {
        let cpus = allowed()?;
        CpuSplit::of(&cpus).ok_or_else(|| {
            Error::option(
                "pin_cpus",
                format!(
                    "pinning needs at least 2 CPUs, and versus may use only {} here ({}); remove `pin_cpus`",
                    cpus.len(),
                    list_text(&cpus)
                ),
            )
        })
    }

    /// `server 0, client 1` (CPU lists as in /proc/PID/status).
    pub fn describe(&self) -> String {
        format!("server on CPU {}, client on CPU {}", list_text(&self.server), list_text(&self.client))
    }
}

/// The CPUs the calling thread may run on, ascending.
pub fn allowed() -> Result<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(0))
        .map_err(|e| Error::Other(format!("cannot read this process's CPU affinity: {e}")))?;
    Ok((0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect())
}

fn cpu_set(cpus: &[usize]) -> Result<CpuSet> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|e| Error::Other(format!("CPU {c} cannot be pinned: {e}")))?;
    }
    Ok(set)
}

/// Makes the process `cmd` starts run on `cpus` only (set in the child before exec, so all its
/// threads inherit it). Nothing when `cpus` is empty.
pub fn pin_child(cmd: &mut Command, cpus: &[usize]) -> Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let set = cpu_set(cpus)?;
    // SAFETY: sched_setaffinity is a plain system call on the child's own (only) thread.
    unsafe {
        cmd.pre_exec(move || sched_setaffinity(Pid::from_raw(0), &set).map_err(std::io::Error::from));
    }
    Ok(())
}

/// Pins the calling thread (and the threads it starts from now on) to `cpus` until the guard drops,
/// which restores the previous mask.
pub fn pin_thread(cpus: &[usize]) -> Result<ThreadPin> {
    let previous = sched_getaffinity(Pid::from_raw(0))
        .map_err(|e| Error::Other(format!("cannot read this thread's CPU affinity: {e}")))?;
    sched_setaffinity(Pid::from_raw(0), &cpu_set(cpus)?)
        .map_err(|e| Error::Other(format!("cannot pin the client to CPU {}: {e}", list_text(cpus))))?;
    Ok(ThreadPin { previous })
}

/// Restores the calling thread's CPU mask when dropped (see [`pin_thread`]).
#[must_use]
pub struct ThreadPin {
    previous: CpuSet,
}

impl Drop for ThreadPin {
    fn drop(&mut self) {
        let _ = sched_setaffinity(Pid::from_raw(0), &self.previous);
    }
}

/// `0-3,6` for `[0, 1, 2, 3, 6]`: the kernel's list format.
pub fn list_text(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// Parses the kernel's list format (`0-3,6`), e.g. `Cpus_allowed_list` of /proc/PID/status.
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse::<usize>().ok()?),
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// The CPUs process `pid` may run on, from /proc/PID/status.
pub fn of_process(pid: u32) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_list(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_need_two_cpus_and_give_the_server_the_larger_half() {
        assert_eq!(CpuSplit::of(&[]), None);
        assert_eq!(CpuSplit::of(&[3]), None);
        assert_eq!(CpuSplit::of(&[0, 1]), Some(CpuSplit { server: vec![0], client: vec![1] }));
        let s = CpuSplit::of(&[0, 1, 2, 4, 5]).unwrap();
        assert_eq!((s.server, s.client), (vec![0, 1, 2], vec![4, 5]));
    }

    #[test]
    fn cpu_lists_round_trip_in_the_kernels_format() {
        for cpus in [vec![], vec![0], vec![0, 1, 2, 3, 6], vec![1, 3, 5], vec![0, 1, 7, 8, 9]] {
            assert_eq!(parse_list(&list_text(&cpus)), Some(cpus.clone()));
        }
        assert_eq!(list_text(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(parse_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn a_child_runs_on_the_cpus_it_was_pinned_to() {
        let cpus = allowed().unwrap();
        let one = vec![*cpus.last().unwrap()];
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        pin_child(&mut cmd, &one).unwrap();
        let mut child = cmd.spawn().unwrap();
        let seen = of_process(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, Some(one));
    }

    #[test]
    fn a_pinned_thread_gets_its_mask_back() {
        std::thread::spawn(|| {
            let before = allowed().unwrap();
            let pin = pin_thread(&before[..1]).unwrap();
            assert_eq!(allowed().unwrap(), before[..1]);
            // Threads started while pinned inherit the mask.
            assert_eq!(std::thread::spawn(|| allowed().unwrap()).join().unwrap(), before[..1]);
            drop(pin);
            assert_eq!(allowed().unwrap(), before);
        })
        .join()
        .unwrap();
    }
}
