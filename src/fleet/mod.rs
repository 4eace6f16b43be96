//! Spreading an experiment over a fleet with the schedulers fleets already run: one task per block
//! (see `experiment::blocks`), each task `versus run FILE --block K --plan-id ID` into a shared results
//! store. `slurm.rs` writes an sbatch job array, `k8s.rs` a Kubernetes Indexed Job; versus schedules
//! nothing itself. Both return text; `cli/fleet.rs` writes and submits it.

pub mod k8s;
pub mod requeue;
pub mod slurm;
pub mod values;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::experiment::Plan;
use crate::experiment::blocks::BlockPlan;
use crate::store::{Location, scrub_arg};

/// Exit code of a worker whose task can never succeed as given (the experiment file is invalid or is
/// not the one the job was submitted with): schedulers are told not to retry it.
pub const EXIT_SPEC_ERROR: i32 = 3;

/// What a fleet job runs: everything the engines need, engine-neutral.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetJob {
    /// The experiment's name.
    pub name: String,
    /// The plan id the workers check.
    pub plan_id: String,
    /// Number of blocks (tasks).
    pub blocks: usize,
    /// Tasks running at once (hosts).
    pub hosts: usize,
    /// The experiment file, absolute.
    pub file: PathBuf,
    /// Its text.
    pub definition: String,
    /// Config files the experiment names, as (the path written in the file, contents), for engines
    /// that ship them.
    pub config_files: Vec<(String, String)>,
    /// The results store the workers write to, without its password.
    pub store: String,
    /// The versus program the workers run.
    pub versus: String,
    /// Upper bound of one block's wall time.
    pub time_limit: Duration,
    /// Slurm partition / Kubernetes namespace-free scheduling hints.
    pub partition: Option<String>,
    /// Host class constraint (Slurm feature, Kubernetes node label value).
    pub constraint: Option<String>,
}

impl FleetJob {
    /// The job for `plan` from `file` (its text `definition`), writing into `store`.
    ///
    /// Errors: fewer than one host, a store that a fleet cannot share (see [`check_store`]).
    pub fn new(plan: &Plan, file: &Path, definition: &str, store: &Location, hosts: usize) -> Result<FleetJob> {
        if hosts == 0 {
            return Err(Error::option("--hosts", "must be at least 1"));
        }
        let blocks = BlockPlan::new(plan);
        let per_block = plan.estimate().as_secs_f64() / blocks.blocks.len().max(1) as f64;
        let base = file.parent().unwrap_or(Path::new(""));
        let mut config_files: Vec<(String, String)> = Vec::new();
        for c in &plan.file.configs {
            if let Some(f) = &c.file {
                let name = f.display().to_string();
                if !config_files.iter().any(|(n, _)| *n == name) {
                    let path = base.join(f);
                    let text = crate::input::read_text(&path)?;
                    config_files.push((name, text));
                }
            }
        }
        let versus = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "versus".into());
        Ok(FleetJob {
            name: plan.file.name.clone(),
            plan_id: blocks.plan_id.clone(),
            blocks: blocks.blocks.len(),
            hosts,
            file: std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()),
            definition: definition.to_string(),
            config_files,
            store: scrub_arg(&match store {
                Location::Sqlite(p) => std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string(),
                Location::Postgres(url) => url.clone(),
            })
            .replace(":<redacted>@", "@"),
            versus,
            // Twice the estimate and ten minutes: a block that takes longer is stuck.
            time_limit: Duration::from_secs_f64(per_block * 2.0 + 600.0),
            partition: None,
            constraint: None,
        })
    }

    /// Checks what every engine writes as it is given: no control character in the experiment file's
    /// path, the results store or the versus program (each is one quoted word or field, on one line).
    pub fn check_values(&self) -> Result<()> {
        let file = self.file.display().to_string();
        if let Some(c) = values::control_char(&file) {
            return Err(Error::file(
                &self.file,
                format!("its path has a control character ({}); rename it", values::shown(c)),
            ));
        }
        if let Some(c) = values::control_char(&self.store) {
            return Err(Error::option(
                "--db",
                format!("'{}' has a control character ({}); give the store without one", self.store, values::shown(c)),
            ));
        }
        values::path("the versus program", &self.versus)
    }

    /// A name for scheduler objects: `versus-` and the experiment name in lower-case letters, digits
    /// and dashes, at most 40 characters.
    pub fn job_name(&self) -> String {
        let mut s: String =
            self.name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        s = s.trim_matches('-').to_string();
        s.truncate(32);
        let s = s.trim_end_matches('-');
        // A name of no letter or digit at all gives `versus`: a name or label may not end in '-'.
        if s.is_empty() { "versus".to_string() } else { format!("versus-{s}") }
    }
}

/// `D-HH:MM:SS`, Slurm's time format.
pub fn slurm_time(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}-{:02}:{:02}:{:02}", s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60)
}
