//! The Slurm engine: an sbatch script that runs the experiment as a job array, one array task per
//! block (`SLURM_ARRAY_TASK_ID` = block index), at most `--hosts` at once, each task alone on its node
//! (`--exclusive`), put back in the queue when its node fails (`--requeue`). A task that was requeued
//! runs its block again as a new attempt; a block already complete does nothing.

use std::fmt::Write as _;

use super::{FleetJob, slurm_time};

/// The text as a single-quoted shell word.
pub use crate::shell::quote as shell_quote;

/// Where each task's output goes: next to the experiment file, `NAME-JOB_TASK.out`.
pub fn output_pattern(job: &FleetJob) -> String {
    let dir = job.file.parent().map(|d| d.display().to_string()).unwrap_or_else(|| ".".into());
    format!("{dir}/{}-%A_%a.out", job.job_name())
}

/// The sbatch script of `job`.
pub fn sbatch(job: &FleetJob) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# versus {}: experiment '{}', plan {}, {} block(s), one array task per block.",
        env!("CARGO_PKG_VERSION"),
        job.name,
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
    let _ = writeln!(s, "#SBATCH --output={}", output_pattern(job));
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
        job.plan_id
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/versus"), "/usr/bin/versus");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}
