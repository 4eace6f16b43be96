//! `versus fleet slurm|k8s FILE`: the experiment as a scheduler job, one task per block.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use crate::error::{Error, Result};
use crate::experiment::{ExperimentFile, Plan};
use crate::fleet::k8s::{self, K8sOptions};
use crate::fleet::{FleetJob, slurm};
use crate::server::Home;
use crate::store::Location;

use super::DbArg;

#[derive(Debug, Subcommand)]
pub(super) enum FleetCommand {
    /// Write an sbatch script: a job array with one task per block, N at once, exclusive nodes,
    /// requeued on node failure; with --submit, submit it and follow it to the end.
    Slurm(SlurmArgs),
    /// Write a Kubernetes Indexed Job (and the ConfigMap with the experiment) for `kubectl apply -f`.
    K8s(K8sArgs),
}

#[derive(Debug, Args)]
pub(super) struct CommonArgs {
    /// The experiment file (TOML; see docs/experiments.md).
    file: PathBuf,
    /// Blocks that run at once: hosts of the fleet.
    #[arg(long, value_name = "N", default_value_t = 2)]
    hosts: usize,
    /// Only hosts of this class: a Slurm node feature, or the value of the versus/host-class node label.
    #[arg(long, value_name = "CLASS")]
    constraint: Option<String>,
    /// Where to write the script or manifest [default: next to FILE]; `-` for standard output.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Debug, Args)]
pub(super) struct SlurmArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The Slurm partition.
    #[arg(long, value_name = "P")]
    partition: Option<String>,
    /// Submit the script with sbatch and follow the job with squeue until every task has ended.
    #[arg(long)]
    submit: bool,
}

#[derive(Debug, Args)]
pub(super) struct K8sArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The container image with versus and the server builds the experiment names.
    #[arg(long, value_name = "IMAGE")]
    image: Option<String>,
    /// The Secret that holds the store's password under the key `password`.
    #[arg(long, value_name = "NAME", default_value = "versus-db")]
    password_secret: String,
}

/// Runs a `versus fleet` command.
pub(super) fn run(home: &Home, cmd: FleetCommand) -> Result<i32> {
    match cmd {
        FleetCommand::Slurm(a) => {
            let mut job = job(home, &a.common)?;
            job.partition = a.partition.clone();
            let path = write(&a.common, "sbatch", &slurm::sbatch(&job))?;
            if a.submit {
                let Some(path) = path else {
                    return Err(Error::option("--submit", "needs the script in a file; leave out `-o -`"));
                };
                return submit(&path, &job);
            }
            Ok(0)
        }
        FleetCommand::K8s(a) => {
            let job = job(home, &a.common)?;
            let mut opts = K8sOptions { password_secret: a.password_secret.clone(), ..K8sOptions::default() };
            if let Some(i) = &a.image {
                opts.image = i.clone();
            }
            write(&a.common, "k8s.yaml", &k8s::manifest(&job, &opts)?)?;
            Ok(0)
        }
    }
}

fn job(home: &Home, a: &CommonArgs) -> Result<FleetJob> {
    let (file, text) = ExperimentFile::load(&a.file)?;
    let base = a.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let plan = Plan::new(&file, &base).map_err(|m| Error::file(&a.file, m))?;
    let store = a.db.location(home);
    if let Location::Sqlite(p) = &store {
        eprintln!(
            "note: the results store {} is a SQLite file: that works only when every task runs on this machine; \
             give --db postgres://USER@HOST/DB for a fleet",
            p.display()
        );
    }
    let mut job = FleetJob::new(&plan, &a.file, &text, &store, a.hosts)?;
    job.constraint = a.constraint.clone();
    Ok(job)
}

/// Writes `text` to `-o` (default: FILE with the extension `ext`); returns the path, `None` for stdout.
fn write(a: &CommonArgs, ext: &str, text: &str) -> Result<Option<PathBuf>> {
    let path = a.output.clone().unwrap_or_else(|| a.file.with_extension(ext));
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(None);
    }
    std::fs::write(&path, text).map_err(|e| Error::file(&path, format!("cannot write: {e}")))?;
    eprintln!("wrote {}", path.display());
    Ok(Some(path))
}

/// `sbatch --parsable SCRIPT`, then `squeue` every 2 s until no task of the job is left.
fn submit(script: &Path, job: &FleetJob) -> Result<i32> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .output()
        .map_err(|e| Error::Other(format!("sbatch: {e}; is Slurm installed and SLURM_CONF set?")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Other(format!("sbatch {}: {}", script.display(), why.trim())));
    }
    let id = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap_or_default().to_string();
    println!("submitted job {id}: {} block(s), {} at once", job.blocks, job.hosts);
    let bar = indicatif::ProgressBar::new(job.blocks as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} blocks ended  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-r", "-j", &id, "-o", "%i %T"])
            .output()
            .map_err(|e| Error::Other(format!("squeue: {e}")))?;
        let text = String::from_utf8_lossy(&q.stdout);
        let states: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().nth(1)).collect();
        if !q.status.success() && !states.is_empty() {
            return Err(Error::Other(format!("squeue -j {id}: {}", String::from_utf8_lossy(&q.stderr).trim())));
        }
        let running = states.iter().filter(|s| **s == "RUNNING").count();
        let pending = states.len() - running;
        bar.set_position(job.blocks.saturating_sub(states.len()) as u64);
        bar.set_message(format!("{running} running, {pending} waiting, {:.0?}", start.elapsed()));
        if states.is_empty() {
            break;
        }
        crate::interrupt::check()?;
        std::thread::sleep(Duration::from_secs(2));
    }
    bar.finish();
    println!("job {id} ended; `versus compare {}` shows the results", job.name);
    Ok(0)
}
