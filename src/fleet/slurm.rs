//! The Slurm engine: an sbatch script that runs the experiment as a job array, one array task per
//! block (`SLURM_ARRAY_TASK_ID` = block index), at most `--hosts` at once, each task alone on its node
//! (`--exclusive`), put back in the queue when its node fails (`--requeue`). A task that was requeued
//! runs its block again as a new attempt; a block already complete does nothing.

use std::fmt::Write as _;

use super::{FleetJob, slurm_time, values};
use crate::error::{Error, Result};

/// The text as a single-quoted shell word.
pub use crate::shell::quote as shell_quote;

/// The Slurm id of the task this process runs in, from the environment `var` reads: `JOB_TASK` for a
/// job array's task (`SLURM_JOB_ID` of the array's last task is the array's own id, and `scontrol
/// requeue` of that id would requeue every task, finished ones included), `SLURM_JOB_ID` otherwise.
pub fn own_task(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let digits = |v: &String| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    match (var("SLURM_ARRAY_JOB_ID").filter(digits), var("SLURM_ARRAY_TASK_ID").filter(digits)) {
        (Some(job), Some(task)) => Some(format!("{job}_{task}")),
        _ => var("SLURM_JOB_ID").filter(digits),
    }
}

/// Where each task's output goes: next to the experiment file, `NAME-JOB_TASK.out`.
pub fn output_pattern(job: &FleetJob) -> String {
    let dir = job.file.parent().map(|d| d.display().to_string()).unwrap_or_else(|| ".".into());
    format!("{dir}/{}-%A_%a.out", job.job_name())
}

/// The sbatch script of `job`.
///
/// Errors: a partition or constraint outside Slurm's grammar (see [`values`]), an experiment file in a
/// directory that `#SBATCH --output` cannot name (sbatch reads those lines without shell quoting).
pub fn sbatch(job: &FleetJob) -> Result<String> {
    job.check_values()?;
    if let Some(p) = &job.partition {
        values::slurm_name("--partition", p)?;
    }
    if let Some(c) = &job.constraint {
        values::slurm_constraint("--constraint", c)?;
    }
    let output = output_pattern(job);
    if let Some(c) = output.chars().find(|c| c.is_control() || c.is_whitespace() || "'\"\\$`".contains(*c)) {
        return Err(Error::file(
            &job.file,
            format!(
                "its directory has a character ({}) that an #SBATCH --output line cannot hold; move the experiment \
                 to a directory whose path has no whitespace, quotes, '$', '`', '\\' or control characters",
                values::shown(c)
            ),
        ));
    }
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# versus {}: experiment '{}', plan {}, {} block(s), one array task per block.",
        env!("CARGO_PKG_VERSION"),
        crate::error::escape_controls(&job.name),
        job.plan_id,
        job.blocks
    );
    let _ = writeln!(s, "# Submit with `sbatch THIS_FILE` (or `versus fleet slurm FILE --submit`).");
    let _ = writeln!(s, "#SBATCH --job-name={}", job.job_name());
    let _ = writeln!(s, "#SBATCH --array=0-{}%{}", job.blocks.saturating_sub(1), job.hosts);
    let _ = writeln!(s, "#SBATCH --nodes=1");
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --exclusive");
    let _ = writeln!(s, "#SBATCH --requeue");
    let _ = writeln!(s, "#SBATCH --time={}", slurm_time(job.time_limit));
    if let Some(p) = &job.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    if let Some(c) = &job.constraint {
        let _ = writeln!(s, "#SBATCH --constraint={c}");
    }
    let _ = writeln!(s, "#SBATCH --output={output}");
    // A requeued task appends to the output of the attempt that died.
    let _ = writeln!(s, "#SBATCH --open-mode=append");
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "# The shared results store; a password comes from PGPASSWORD in the environment.");
    let _ = writeln!(s, "export VERSUS_DB={}", shell_quote(&job.store));
    let _ = writeln!(
        s,
        "exec {} run {} --block \"$SLURM_ARRAY_TASK_ID\" --plan-id {}",
        shell_quote(&job.versus),
        shell_quote(&job.file.display().to_string()),
        shell_quote(&job.plan_id)
    );
    Ok(s)
}

/// What sbatch's refusals mean for a `versus fleet slurm` user: a fragment of sbatch's message (lower
/// case) and what to do about it.
const SBATCH_HINTS: &[(&str, &str)] = &[
    ("invalid partition", "`sinfo -s` lists the partitions; choose one with --partition"),
    ("unable to contact slurm controller", "is Slurm running? `scontrol ping` asks its controller (slurmctld)"),
    ("could not establish a configuration source", "sbatch found no slurm.conf: set SLURM_CONF to the cluster's"),
    ("unable to process configuration file", "sbatch cannot read its slurm.conf: set SLURM_CONF to the cluster's"),
    ("invalid feature specification", "`sinfo -o '%P %f'` lists the node features; check --constraint"),
    (
        "requested node configuration is not available",
        "no node fits (a whole node each, --constraint); `sinfo -N -l` lists them; check --partition and --constraint",
    ),
    ("invalid account", "the cluster wants an account: set SBATCH_ACCOUNT, or ask its administrators"),
    ("qos", "the job breaks a QOS limit (`sacctmgr show qos`): lower --hosts or ask for another QOS"),
    (
        "time limit",
        "the experiment's estimate exceeds the partition's time limit (`sinfo -o '%P %l'`): choose another \
         --partition or shorten the experiment",
    ),
    ("not permitted", "you may not use that partition: choose another with --partition (`sinfo -s`)"),
    ("array size", "the job array is larger than the cluster's MaxArraySize: fewer repetitions or targets per file"),
];

/// sbatch's refusal of `script` on one line: see [`failure`].
pub fn sbatch_failure(script: &str, stderr: &str) -> String {
    failure(&format!("sbatch refused {script}"), "sbatch", stderr)
}

/// A failed Slurm command (`what`: how to name it; `program`: its name) on one line: the reason from
/// its `stderr` (a `Batch job submission failed` line, else its last fatal or error line, else its last
/// line), and a hint when the reason is a known one.
pub fn failure(what: &str, program: &str, stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let after = |l: &&str, mark: &str| l.rfind(mark).map(|i| l[i + mark.len()..].trim().to_string());
    let reason = lines
        .iter()
        .rev()
        .find_map(|l| after(l, "submission failed:"))
        .or_else(|| lines.iter().rev().find_map(|l| after(l, "fatal:")))
        .or_else(|| lines.iter().rev().find_map(|l| after(l, "error:")))
        .or_else(|| lines.last().map(|l| l.to_string()))
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| format!("{program} gave no reason"));
    let lower = reason.to_ascii_lowercase();
    match SBATCH_HINTS.iter().find(|(needle, _)| lower.contains(needle)) {
        Some((_, hint)) => format!("{what}: {reason}; {hint}"),
        None => format!("{what}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_task_is_named_by_its_array_and_index_not_by_its_job_id() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        // The last task of array 40: its SLURM_JOB_ID is the array's id.
        let last = env(&[("SLURM_JOB_ID", "40"), ("SLURM_ARRAY_JOB_ID", "40"), ("SLURM_ARRAY_TASK_ID", "2")]);
        assert_eq!(own_task(last).as_deref(), Some("40_2"));
        let first = env(&[("SLURM_JOB_ID", "41"), ("SLURM_ARRAY_JOB_ID", "40"), ("SLURM_ARRAY_TASK_ID", "0")]);
        assert_eq!(own_task(first).as_deref(), Some("40_0"));
        assert_eq!(own_task(env(&[("SLURM_JOB_ID", "7")])).as_deref(), Some("7"));
        assert_eq!(own_task(env(&[("SLURM_JOB_ID", "7; reboot")])), None);
        assert_eq!(own_task(env(&[])), None);
    }

    #[test]
    fn sbatch_refusals_are_one_line_with_a_hint() {
        let partition = "sbatch: error: invalid partition specified: nosuch\n\
                         sbatch: error: Batch job submission failed: Invalid partition name specified\n";
        assert_eq!(
            sbatch_failure("x.sbatch", partition),
            "sbatch refused x.sbatch: Invalid partition name specified; `sinfo -s` lists the partitions; choose one \
             with --partition"
        );
        let no_conf = "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n\
                       sbatch: error: fetch_config: DNS SRV lookup failed\n\
                       sbatch: fatal: Could not establish a configuration source\n";
        let m = sbatch_failure("x.sbatch", no_conf);
        assert!(m.starts_with("sbatch refused x.sbatch: Could not establish a configuration source; "), "{m}");
        assert!(m.ends_with("set SLURM_CONF to the cluster's"), "{m}");
        let other = "sbatch: error: something new\n";
        assert_eq!(sbatch_failure("x", other), "sbatch refused x: something new");
        assert_eq!(sbatch_failure("x", "\n"), "sbatch refused x: sbatch gave no reason");
        let lost = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
        let m = failure("squeue -j 12", "squeue", lost);
        assert!(
            m.starts_with("squeue -j 12: Unable to contact slurm controller (connect failure); is Slurm running?"),
            "{m}"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/versus"), "/usr/bin/versus");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}
