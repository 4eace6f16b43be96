//! The set-up choices of an experiment file that aim at less noise between runs, beside `warmup` and
//! `prewarm`: `settle` (a pause after a server start, before the run), `pin_cpus` (the server on one set
//! of CPUs, the client on the others) and `drop_caches` (the OS page cache dropped before each restore).
//! Checked before anything runs ([`problems`]); carried out by the sandbox executor.

use std::io::Write;

use super::spec::ExperimentFile;
use crate::error::{Error, Result};
use crate::server::affinity::CpuSplit;

/// The kernel's knob that drops clean page-cache, dentry and inode entries of the whole host.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// What the file's set-up choices need of this host that it lacks, one line each.
pub fn problems(file: &ExperimentFile) -> Vec<String> {
    let mut out = Vec::new();
    if file.pin_cpus
        && let Err(e) = CpuSplit::here()
    {
        out.push(e.to_string());
    }
    if file.drop_caches
        && let Err(e) = can_drop_caches()
    {
        out.push(e.to_string());
    }
    out
}

/// The CPU split of a file with `pin_cpus` on this host (`None` without `pin_cpus`).
pub fn cpu_split(file: &ExperimentFile) -> Result<Option<CpuSplit>> {
    if !file.pin_cpus {
        return Ok(None);
    }
    CpuSplit::here().map(Some)
}

/// The `--dry-run` line of the set-up choices, `None` when none is chosen.
pub fn describe(file: &ExperimentFile) -> Option<String> {
    let mut parts = Vec::new();
    if file.drop_caches {
        parts.push("drop the OS page cache (whole host) before each restore".to_string());
    }
    if file.pin_cpus {
        parts.push(match CpuSplit::here() {
            Ok(s) => format!("pin the started server and the client: {}", s.describe()),
            Err(e) => format!("pin_cpus: {e}"),
        });
    }
    if !file.settle.is_zero() {
        parts.push(format!(
            "settle {} s after each server start (after prewarm), before the run",
            file.settle.as_secs()
        ));
    }
    if file.profile {
        let hz = file.profile_hz.unwrap_or(crate::profile::DEFAULT_HZ);
        parts.push(match crate::profile::availability() {
            Ok(()) => {
                let mut s =
                    format!("profile the server's on-CPU stacks with perf at {hz} Hz during each measured time");
                if let Some(line) = crate::profile::hardware_counters_line() {
                    s.push_str(&format!(" ({line})"));
                }
                s
            }
            Err(why) => format!("profile: {why}; the runs would go on without profiles"),
        });
    }
    (!parts.is_empty()).then(|| format!("set-up: {}", parts.join("; ")))
}

fn can_drop_caches() -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        return Err(Error::option(
            "drop_caches",
            "dropping the OS page cache needs root (it writes /proc/sys/vm/drop_caches); run versus as root or \
             remove `drop_caches`",
        ));
    }
    // Opening the knob does not drop anything; writing to it does.
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .map(|_| ())
        .map_err(|e| Error::option("drop_caches", format!("cannot write {DROP_CACHES} ({e}); remove `drop_caches`")))
}

/// Writes dirty pages out and drops the host's clean page cache, dentries and inodes.
pub fn drop_caches() -> Result<()> {
    nix::unistd::sync();
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .and_then(|mut f| f.write_all(b"3\n"))
        .map_err(|e| Error::option("drop_caches", format!("cannot write {DROP_CACHES}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(extra: &str) -> ExperimentFile {
        ExperimentFile::parse(&format!(
            "name = \"s\"\n{extra}\n[[targets]]\nbuild = \"system\"\n[[workloads]]\ntest = \"oltp_point_select\"\n"
        ))
        .unwrap()
    }

    #[test]
    fn no_set_up_choice_means_no_line_and_no_problem() {
        let f = file("");
        assert_eq!(describe(&f), None);
        assert!(problems(&f).is_empty());
        assert_eq!(cpu_split(&f).unwrap(), None);
    }

    #[test]
    fn the_dry_run_line_names_every_choice() {
        let f = file("settle = \"5s\"\ndrop_caches = true");
        let line = describe(&f).unwrap();
        assert!(line.contains("settle 5 s after each server start"), "{line}");
        assert!(line.contains("drop the OS page cache (whole host) before each restore"), "{line}");
    }

    #[test]
    fn pinning_is_refused_with_fewer_than_two_cpus_and_split_otherwise() {
        let f = file("pin_cpus = true");
        let cpus = crate::server::affinity::allowed().unwrap();
        let probs = problems(&f);
        if cpus.len() < 2 {
            assert!(probs.iter().any(|p| p.contains("pin_cpus") && p.contains("at least 2 CPUs")), "{probs:?}");
        } else {
            assert!(probs.is_empty(), "{probs:?}");
            let s = cpu_split(&f).unwrap().unwrap();
            assert_eq!([s.server.clone(), s.client.clone()].concat(), cpus);
            assert!(describe(&f).unwrap().contains("server on CPU"));
        }
    }

    #[test]
    fn dropping_caches_is_refused_unless_root() {
        let probs = problems(&file("drop_caches = true"));
        if nix::unistd::geteuid().is_root() {
            assert!(probs.is_empty() || probs[0].contains("cannot write"), "{probs:?}");
        } else {
            assert_eq!(probs.len(), 1);
            assert!(probs[0].contains("drop_caches") && probs[0].contains("needs root"), "{}", probs[0]);
        }
    }
}
