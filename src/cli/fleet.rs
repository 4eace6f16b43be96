//! `versus fleet slurm|k8s FILE`: the experiment as a scheduler job, one task per block.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use crate::error::{Error, Result};
use crate::experiment::{ExperimentFile, Plan};
use crate::fleet::k8s::{self, K8sOptions};
use crate::fleet::requeue::{self, TaskEnd, Verdict};
use crate::fleet::{FleetJob, slurm};
use crate::server::Home;
use crate::store::{Attempt, Location, Store};

use super::DbArg;
use super::output_file::OutputFile;

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
    /// With --submit: how long to wait for the results store (or squeue) to answer again before the
    /// blocks not yet judged are given up as incomplete.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = crate::experiment::spec::parse_duration)]
    store_wait: Duration,
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
            let (mut job, out) = job(home, &a.common, "sbatch")?;
            job.partition = a.partition.clone();
            let path = write(out, &slurm::sbatch(&job)?)?;
            if a.submit {
                let Some(path) = path else {
                    return Err(Error::option("--submit", "needs the script in a file; leave out `-o -`"));
                };
                // Opened now so that a store that cannot be reached fails before anything is submitted.
                let store = a.common.db.open(home)?;
                let location = a.common.db.location(home);
                let reopen = || Store::connect_read(&location);
                return submit(&path, &job, store, &reopen, a.store_wait);
            }
            Ok(0)
        }
        FleetCommand::K8s(a) => {
            let (job, out) = job(home, &a.common, "k8s.yaml")?;
            let mut opts = K8sOptions { password_secret: a.password_secret.clone(), ..K8sOptions::default() };
            if let Some(i) = &a.image {
                opts.image = i.clone();
            }
            write(out, &k8s::manifest(&job, &opts)?)?;
            Ok(0)
        }
    }
}

/// The job, and where it is written (`None`: standard output), checked against every file the job is
/// made from (the experiment file, its option files, a SQLite store) before anything is written.
fn job(home: &Home, a: &CommonArgs, ext: &str) -> Result<(FleetJob, Option<OutputFile>)> {
    let (file, text) = ExperimentFile::load(&a.file)?;
    let base = a.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let plan = Plan::new(&file, &base).map_err(|m| Error::file(&a.file, m))?;
    let mut inputs = vec![a.file.clone()];
    inputs.extend(file.configs.iter().filter_map(|c| c.file.as_ref()).map(|f| base.join(f)));
    inputs.extend(file.workloads.iter().filter_map(|w| w.script.as_ref()).map(|f| base.join(f)));
    inputs.extend(a.db.inputs(home));
    let out = match &a.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(OutputFile::check("--output", p, &inputs)?),
        None => Some(OutputFile::check("--output", &a.file.with_extension(ext), &inputs)?),
    };
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
    Ok((job, out))
}

/// Writes `text` to `out` (`None`: standard output); returns the path written.
fn write(out: Option<OutputFile>, text: &str) -> Result<Option<PathBuf>> {
    let Some(out) = out else {
        super::output::print(text)?;
        return Ok(None);
    };
    out.write(text.as_bytes())?;
    eprintln!("wrote {}", out.path().display());
    Ok(Some(out.path().to_path_buf()))
}

/// `sbatch --parsable SCRIPT`, then follows the job with `squeue` every 2 s until every block has
/// ended. A task that left the queue without finishing its block (killed, its node lost, cancelled
/// alone) is put back with `scontrol requeue` (at most [`requeue::MAX_REQUEUES`] times per block; see
/// `fleet::requeue`); the store says which blocks are complete. When the store (or squeue) does not
/// answer, nothing is judged: the follower reconnects every 2 s for up to `wait`, then gives up on the
/// blocks not yet judged. Exit code 0 only when every block is complete; otherwise the incomplete
/// blocks are named with the command that finishes them.
fn submit(
    script: &Path,
    job: &FleetJob,
    store: Store,
    reopen: &dyn Fn() -> Result<Store>,
    wait: Duration,
) -> Result<i32> {
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
    let say = |line: String| bar.suspend(|| eprintln!("{line}"));
    let start = Instant::now();
    let blocks = u32::try_from(job.blocks).unwrap_or(u32::MAX);
    let mut store = Some(store);
    let mut outage = requeue::Outage::default();
    let mut settled: BTreeMap<u32, Verdict> = BTreeMap::new();
    let mut requeued: BTreeMap<u32, u32> = BTreeMap::new();
    // Blocks requeued and not yet seen back in the queue, with when.
    let mut returning: BTreeMap<u32, Instant> = BTreeMap::new();
    // A task cancelled before it started means the job was cancelled as a whole.
    let mut job_cancelled = false;
    loop {
        // The queue and the attempts, or why they cannot be read now.
        let read = squeue(&id).and_then(|queue| {
            let waiting = |k: &u32| {
                !queue.contains_key(k)
                    && !settled.contains_key(k)
                    && returning.get(k).is_none_or(|t| t.elapsed() >= Duration::from_secs(60))
            };
            let attempts =
                if (0..blocks).any(|k| waiting(&k)) { attempts(&mut store, reopen, &job.plan_id)? } else { Vec::new() };
            Ok((queue, attempts))
        });
        let (queue, attempts) = match read {
            Ok(x) => {
                if let Some(down) = outage.recovered(Instant::now()) {
                    say(format!("the results store and the queue answer again after {down:.0?}"));
                }
                x
            }
            Err(e) => {
                store = None;
                match outage.failed(Instant::now(), wait) {
                    requeue::OutageStep::Began => {
                        say(format!("{e}; waiting up to {wait:.0?} for it before judging any block"))
                    }
                    requeue::OutageStep::Goes => {}
                    requeue::OutageStep::GaveUp(down) => {
                        let why = format!("not known to be complete: nothing could be read for {down:.0?} ({e})");
                        for k in 0..blocks {
                            settled.entry(k).or_insert_with(|| Verdict::Incomplete(why.clone()));
                        }
                        break;
                    }
                }
                crate::interrupt::check()?;
                std::thread::sleep(Duration::from_secs(2));
                continue;
            }
        };
        let mut ended: Vec<(u32, String, TaskEnd)> = Vec::new();
        for k in 0..blocks {
            if queue.contains_key(&k) {
                returning.remove(&k);
                continue;
            }
            if settled.contains_key(&k) || returning.get(&k).is_some_and(|t| t.elapsed() < Duration::from_secs(60)) {
                continue;
            }
            let task = format!("{id}_{k}");
            let end = task_end(&task);
            let started = attempts.iter().any(|a| a.block == k);
            job_cancelled |= !started && end.state.as_deref() == Some("CANCELLED");
            ended.push((k, task, end));
        }
        let context = requeue::job_context(job_cancelled, queue.len());
        for (k, task, end) in ended {
            let n = requeued.get(&k).copied().unwrap_or(0);
            match requeue::judge(k, &attempts, &end, n, context) {
                Verdict::Requeue(why) => match requeue(&task) {
                    Ok(()) => {
                        say(format!("block {k}: {why}; requeued task {task} ({} of {})", n + 1, requeue::MAX_REQUEUES));
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
    let list: Vec<u32> = incomplete.iter().map(|(k, _)| *k).collect();
    eprintln!(
        "job {id} ended with {} of {} block(s) incomplete ({}); {}",
        incomplete.len(),
        job.blocks,
        list.iter().map(u32::to_string).collect::<Vec<_>>().join(" "),
        requeue::finish_command(job, &list)
    );
    Ok(1)
}

/// Every attempt of the job's experiment (none before its first task created it), reconnecting to
/// the store first when `store` was lost.
fn attempts(store: &mut Option<Store>, reopen: &dyn Fn() -> Result<Store>, plan_id: &str) -> Result<Vec<Attempt>> {
    if store.is_none() {
        *store = Some(reopen()?);
    }
    let s = store.as_ref().expect("opened above");
    match s.experiment_by_uid(plan_id)? {
        Some(e) => s.block_attempts(e),
        None => Ok(Vec::new()),
    }
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
        .map(|o| requeue::parse_scontrol(&String::from_utf8_lossy(&o.stdout)))
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
