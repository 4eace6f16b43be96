//! `versus fleet slurm|k8s FILE`: the experiment as a scheduler job, one task per block.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use crate::error::{Error, Result};
use crate::experiment::{ExperimentFile, Plan};
use crate::fleet::follow::{self, TaskEnd, Verdict};
use crate::fleet::k8s::{self, K8sOptions};
use crate::fleet::{FleetJob, slurm};
use crate::server::Home;
use crate::store::{Location, Store};

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
                let store = a.common.db.open(home)?;
                return submit(&path, &job, &store);
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

/// `sbatch --parsable SCRIPT`, then follows the job with `squeue` every 2 s until every block has
/// ended. A task that left the queue without finishing its block (killed, its node lost, cancelled
/// alone) is put back with `scontrol requeue` (at most [`follow::MAX_REQUEUES`] times per block; see
/// `fleet::follow`); the store says which blocks are complete. Exit code 0 only when every block is.
fn submit(script: &Path, job: &FleetJob, store: &Store) -> Result<i32> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .output()
        .map_err(|e| Error::Other(format!("sbatch: {e}; is Slurm installed and SLURM_CONF set?")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Other(slurm::sbatch_failure(&script.display().to_string(), &why)));
    }
    let id = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap_or_default().to_string();
    println!("submitted job {id}: {} block(s), {} at once", job.blocks, job.hosts);
    let bar = indicatif::ProgressBar::new(job.blocks as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} blocks ended  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let blocks = u32::try_from(job.blocks).unwrap_or(u32::MAX);
    let mut settled: BTreeMap<u32, Verdict> = BTreeMap::new();
    let mut requeued: BTreeMap<u32, u32> = BTreeMap::new();
    // Blocks requeued and not yet seen back in the queue, with when.
    let mut returning: BTreeMap<u32, Instant> = BTreeMap::new();
    // A task cancelled before it started means the job was cancelled as a whole.
    let mut job_cancelled = false;
    loop {
        let queue = squeue(&id)?;
        let mut attempts = None;
        let mut ended: Vec<(u32, String, TaskEnd)> = Vec::new();
        for k in 0..blocks {
            if queue.contains_key(&k) {
                returning.remove(&k);
                continue;
            }
            if settled.contains_key(&k) || returning.get(&k).is_some_and(|t| t.elapsed() < Duration::from_secs(60)) {
                continue;
            }
            if attempts.is_none() {
                attempts = Some(match store.experiment_by_uid(&job.plan_id)? {
                    Some(e) => store.block_attempts(e)?,
                    None => Vec::new(),
                });
            }
            let task = format!("{id}_{k}");
            let end = task_end(&task);
            let started = attempts.as_deref().unwrap_or_default().iter().any(|a| a.block == k);
            job_cancelled |= !started && end.state.as_deref() == Some("CANCELLED");
            ended.push((k, task, end));
        }
        let context = follow::job_context(job_cancelled, queue.len());
        for (k, task, end) in ended {
            let n = requeued.get(&k).copied().unwrap_or(0);
            match follow::judge(k, attempts.as_deref().unwrap_or_default(), &end, n, context) {
                Verdict::Requeue(why) => match requeue(&task) {
                    Ok(()) => {
                        let line =
                            format!("block {k}: {why}; requeued task {task} ({} of {})", n + 1, follow::MAX_REQUEUES);
                        bar.suspend(|| eprintln!("{line}"));
                        requeued.insert(k, n + 1);
                        returning.insert(k, Instant::now());
                    }
                    Err(e) => {
                        settled.insert(k, Verdict::Incomplete(format!("{why}; {e}")));
                    }
                },
                v => {
                    settled.insert(k, v);
                }
            }
        }
        let running = queue.values().filter(|s| s.as_str() == "RUNNING").count();
        bar.set_position(settled.len() as u64);
        bar.set_message(format!("{running} running, {} waiting, {:.0?}", queue.len() - running, start.elapsed()));
        if settled.len() >= job.blocks {
            break;
        }
        crate::interrupt::check()?;
        std::thread::sleep(Duration::from_secs(2));
    }
    bar.finish();
    let incomplete: Vec<(u32, String)> = settled
        .into_iter()
        .filter_map(|(k, v)| match v {
            Verdict::Incomplete(why) => Some((k, why)),
            _ => None,
        })
        .collect();
    let again: u32 = requeued.values().sum();
    if incomplete.is_empty() {
        println!(
            "job {id} ended: {} of {} block(s) complete ({again} requeue(s)); `versus compare {}` shows the results",
            job.blocks, job.blocks, job.name
        );
        return Ok(0);
    }
    for (k, why) in &incomplete {
        eprintln!("block {k} is incomplete: {why}");
    }
    let list: Vec<String> = incomplete.iter().map(|(k, _)| k.to_string()).collect();
    eprintln!(
        "job {id} ended with {} of {} block(s) incomplete ({}); run them again with `versus run {} --block K`",
        incomplete.len(),
        job.blocks,
        list.join(" "),
        job.file.display()
    );
    Ok(1)
}

/// The job's tasks still in the queue (pending, running, completing …): block index -> state.
fn squeue(id: &str) -> Result<BTreeMap<u32, String>> {
    let q = Command::new("squeue")
        .args(["-h", "-r", "-j", id, "-o", "%i %T"])
        .output()
        .map_err(|e| Error::Other(format!("squeue: {e}")))?;
    let text = String::from_utf8_lossy(&q.stdout);
    let prefix = format!("{id}_");
    let tasks: BTreeMap<u32, String> = text
        .lines()
        .filter_map(|l| {
            let (task, state) = l.split_once(' ')?;
            Some((task.strip_prefix(&prefix)?.parse().ok()?, state.trim().to_string()))
        })
        .collect();
    // squeue fails for a job id the controller has forgotten: that is an empty queue.
    if !q.status.success() && !String::from_utf8_lossy(&q.stderr).contains("Invalid job id") {
        return Err(Error::Other(slurm::failure(
            &format!("squeue -j {id}"),
            "squeue",
            &String::from_utf8_lossy(&q.stderr),
        )));
    }
    Ok(tasks)
}

/// How task `task` (`JOB_K`) ended, from `scontrol show job` while the controller still knows it.
fn task_end(task: &str) -> TaskEnd {
    Command::new("scontrol")
        .args(["show", "job", "-o", task])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| follow::parse_scontrol(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default()
}

/// `scontrol requeue TASK`, then releases it at once (Slurm delays a requeued job by default).
fn requeue(task: &str) -> std::result::Result<(), String> {
    let out = Command::new("scontrol").args(["requeue", task]).output().map_err(|e| format!("scontrol: {e}"))?;
    if !out.status.success() {
        return Err(slurm::failure(
            &format!("scontrol requeue {task}"),
            "scontrol",
            &String::from_utf8_lossy(&out.stderr),
        ));
    }
    let _ = Command::new("scontrol").args(["update", &format!("JobId={task}"), "StartTime=now"]).output();
    Ok(())
}
