//! `versus run`, `versus runs` and `versus show`: experiments and their stored runs.

use std::path::{Path, PathBuf};

use clap::Args;
use comfy_table::{Table, presets::NOTHING};

use crate::error::{Error, Result};
use crate::experiment::block_run::run_blocks as run_blocks_into;
use crate::experiment::blocks::{BlockPlan, parse_range};
use crate::experiment::sandbox_executor::SandboxExecutor;
use crate::experiment::{ExperimentFile, Plan, Progress, Repetitions, RunOptions, run_experiment};
use crate::server::Home;
use crate::store::{Status, Store};

use super::DbArg;

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// The experiment file (TOML; see docs/experiments.md); with --resume-id it may be left out.
    #[arg(required_unless_present = "resume_id")]
    file: Option<PathBuf>,
    /// Print the plan and the estimated duration, run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Continue the latest experiment of the same name: run only what is missing.
    #[arg(long)]
    resume: bool,
    /// Continue the stored experiment with this id (its definition is read from the store when no
    /// FILE is given).
    #[arg(long, value_name = "ID")]
    resume_id: Option<i64>,
    /// Keep the prepared data snapshots after the experiment has finished.
    #[arg(long)]
    keep_data: bool,
    /// Fail a run whose server clamped or adjusted a value its config or options request (by default
    /// that is a warning and the run goes on under its label).
    #[arg(long)]
    strict: bool,
    /// Run only block K (repetition K + 1 of every cell, from 0) into the shared experiment of this
    /// plan, as a fleet task does; a block already complete does nothing.
    #[arg(long, value_name = "K", conflicts_with_all = ["resume", "resume_id", "dry_run", "blocks"])]
    block: Option<String>,
    /// Run blocks K to L (inclusive), one after the other.
    #[arg(long, value_name = "K..L", conflicts_with_all = ["resume", "resume_id", "dry_run"])]
    blocks: Option<String>,
    /// With --block: refuse (exit code 3) unless FILE still has this plan id (the file changed since
    /// the job was submitted).
    #[arg(long, value_name = "ID")]
    plan_id: Option<String>,
    #[command(flatten)]
    adaptive: AdaptiveArgs,
    /// The noise band of the adaptive looks (e.g. 2% or 0.02) [default: the band `versus calibrate`
    /// measured for this host class, workload and threads, else 2%].
    #[arg(long, value_name = "FRACTION", value_parser = super::compare::parse_fraction)]
    noise_band: Option<f64>,
    /// Overall confidence of the adaptive looks: equal targets are called different at one look or
    /// another with probability 1 − LEVEL at most (e.g. 0.99; give `versus compare` the same level)
    /// [default: 0.95].
    #[arg(long, value_name = "LEVEL", value_parser = parse_confidence)]
    confidence: Option<f64>,
    #[command(flatten)]
    db: DbArg,
}

/// `--until` / `--max-repetitions`: adaptive repetitions from the command line.
#[derive(Debug, Clone, Default, Args)]
pub(super) struct AdaptiveArgs {
    /// Keep adding shuffled rounds until every comparison's interval is narrower than this (e.g.
    /// "±3%") or decisive, up to --max-repetitions (overrides `until` in the file).
    #[arg(long, value_name = "±PCT", value_parser = parse_until)]
    pub until: Option<f64>,
    /// Most repetitions per cell: the experiment runs its `repetitions` (the minimum), then adds
    /// rounds while a comparison is still open (overrides `max` in the file).
    #[arg(long, value_name = "N")]
    pub max_repetitions: Option<u32>,
}

fn parse_confidence(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number; write a level such as 0.99"))?;
    crate::stats::check_confidence(v).map(|()| v).map_err(|e| e.to_string())
}

fn parse_until(s: &str) -> std::result::Result<f64, String> {
    crate::experiment::spec::parse_until(s)
}

impl AdaptiveArgs {
    /// `reps` with the flags applied; `None` when no flag was given.
    pub fn apply(&self, reps: Repetitions) -> Result<Option<Repetitions>> {
        if self.until.is_none() && self.max_repetitions.is_none() {
            return Ok(None);
        }
        let mut r = reps;
        if let Some(max) = self.max_repetitions {
            r.max = max;
        }
        if let Some(until) = self.until {
            if !r.is_adaptive() {
                return Err(Error::option(
                    "--until",
                    "needs a maximum: add --max-repetitions N (or write repetitions = { min, max, until } in the file)",
                ));
            }
            r.until = Some(until);
        }
        let flag = if self.max_repetitions.is_some() { "--max-repetitions" } else { "--until" };
        r.check().map_err(|m| Error::option(flag, m))?;
        Ok(Some(r))
    }
}

#[derive(Debug, Args)]
pub(super) struct RunsArgs {
    /// An experiment id or name: list its runs (default: list experiments).
    experiment: Option<String>,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Debug, Args)]
pub(super) struct ShowArgs {
    /// The run id (see `versus runs EXPERIMENT`).
    run: i64,
    /// Also print the latency histogram (sysbench's --histogram layout).
    #[arg(long)]
    histogram: bool,
    #[command(flatten)]
    db: DbArg,
}

/// `versus run FILE`.
pub(super) fn run(home: &Home, a: RunArgs) -> Result<i32> {
    if let Some(range) = a.block.clone().or_else(|| a.blocks.clone()) {
        return run_blocks(home, &a, &range);
    }
    let (path, file, text) = match (&a.file, a.resume_id) {
        (Some(p), _) => {
            let (file, text) = ExperimentFile::load(p)?;
            (p.clone(), file, text)
        }
        (None, Some(id)) => {
            let store = a.db.open(home)?;
            let e = store.experiment(id)?.ok_or_else(|| {
                Error::option(
                    "--resume-id",
                    format!("no experiment {id} in {}; `versus runs` lists them", store.path().display()),
                )
            })?;
            let path = PathBuf::from(e.file.clone().unwrap_or_else(|| format!("experiment-{id}.toml")));
            let file = ExperimentFile::parse(&e.definition).map_err(|m| Error::file(&path, m))?;
            (path, file, e.definition)
        }
        (None, None) => unreachable!("clap requires FILE unless --resume-id is given"),
    };
    // Flags that make the experiment adaptive are part of its definition (stored, compared on resume).
    let (file, text) = match a.adaptive.apply(file.repetitions)? {
        Some(reps) => {
            let mut f = file;
            f.repetitions = reps;
            let text =
                toml::to_string(&f).map_err(|e| Error::file(&path, format!("cannot write the definition: {e}")))?;
            let f = ExperimentFile::parse(&text).map_err(|m| Error::file(&path, m))?;
            (f, text)
        }
        None => (file, text),
    };
    if a.confidence.is_some() && !file.repetitions.is_adaptive() {
        return Err(Error::option(
            "--confidence",
            "sets the level of the adaptive looks, and this experiment has a fixed number of repetitions: add \
             --max-repetitions N (or write repetitions = { min, max } in the file), or leave --confidence to `versus compare`",
        ));
    }
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let problems = crate::experiment::validate::problems(home, &file, &base);
    if !problems.is_empty() {
        return Err(Error::file(&path, crate::experiment::validate::listing(&problems)));
    }
    let plan = Plan::new(&file, &base).map_err(|m| Error::file(&path, m))?;
    if a.dry_run {
        // The store the real run would refuse is refused here too; nothing is created or migrated.
        Store::check_writable(&a.db.location(home))?;
        print!("{}", plan.describe_at(a.confidence.unwrap_or(crate::stats::DEFAULT_CONFIDENCE)));
        print!("\nwhat it changes on each server:\n{}", crate::experiment::external::describe_changes(&plan));
        return Ok(0);
    }
    if file.profile
        && let Err(why) = crate::profile::availability()
    {
        // Said once here; every run stores it with its (missing) profile.
        eprintln!("versus: warning: {why}; the runs go on without profiles");
    }
    let mut store = a.db.open(home)?;
    let mut executor = SandboxExecutor::locked(home, &file.name)?.strict(a.strict);
    let mut progress = Progress::stderr();
    let abs = std::path::absolute(&path).unwrap_or(path.clone());
    let opts = RunOptions {
        resume: a.resume || a.resume_id.is_some(),
        experiment_id: a.resume_id,
        noise_band: a.noise_band,
        confidence: a.confidence,
        ..RunOptions::default()
    };
    let outcome = run_experiment(&text, Some(&abs), &plan, &mut store, &mut executor, &opts, &mut progress)?;
    let status = store.experiment(outcome.experiment_id)?.map(|e| e.status);
    let finished = matches!(status, Some(Status::Done | Status::Failed | Status::Partial));
    if finished && !a.keep_data {
        let _ = crate::owned::remove(executor.work_dir());
    }
    println!("experiment {} stored in {}", outcome.experiment_id, store.path().display());
    if outcome.interrupted {
        // Said once, here: an Err would add a second 'versus: error: interrupted' after a clean stop.
        let db = a.db.db.is_some().then(|| store.location());
        println!("interrupted; continue with: {}", crate::experiment::resume_command(outcome.experiment_id, db));
        return Ok(130);
    }
    if outcome.failed > 0 || matches!(status, Some(Status::Failed | Status::Partial)) {
        let runs = store.runs(outcome.experiment_id)?;
        let failed = runs.iter().filter(|r| r.status == Status::Failed).count();
        return Err(Error::Other(format!(
            "{failed} of {} runs failed; experiment {id} is stored as {}; `versus runs {id}` shows their errors",
            runs.len(),
            status.map(|s| s.to_string()).unwrap_or_default(),
            id = outcome.experiment_id
        )));
    }
    Ok(0)
}

/// `versus run FILE --block K`: a fleet task. Errors that no retry can fix (a bad or changed file, a
/// block outside the plan) exit with code 3, so that schedulers do not retry them.
fn run_blocks(home: &Home, a: &RunArgs, range: &str) -> Result<i32> {
    let flag = if a.block.is_some() { "--block" } else { "--blocks" };
    let spec_error = |e: Error| {
        eprintln!("versus: error: {e}");
        Ok(crate::fleet::EXIT_SPEC_ERROR)
    };
    let Some(path) = a.file.clone() else { return spec_error(Error::option(flag, "needs the experiment FILE")) };
    let (file, text) = match ExperimentFile::load(&path) {
        Ok(x) => x,
        Err(e) => return spec_error(e),
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let plan = match Plan::new(&file, &base) {
        Ok(p) => p,
        Err(m) => return spec_error(Error::file(&path, m)),
    };
    let blocks = BlockPlan::new(&plan);
    if let Some(expected) = a.plan_id.as_deref().filter(|id| *id != blocks.plan_id) {
        return spec_error(Error::file(
            &path,
            format!(
                "the experiment file changed since the job was submitted (it is now plan {}, the job is for plan \
                 {expected}); undo the change or submit the job again",
                blocks.plan_id
            ),
        ));
    }
    let selected = match parse_range(range).and_then(|(k, l)| blocks.select(k, l, flag)) {
        Ok(s) => s.to_vec(),
        Err(m) => return spec_error(Error::option(flag, m)),
    };
    let problems = crate::experiment::validate::problems(home, &file, &base);
    if !problems.is_empty() {
        return spec_error(Error::file(&path, crate::experiment::validate::listing(&problems)));
    }
    let mut store = a.db.open(home)?;
    let mut executor = SandboxExecutor::new(home, &file.name).strict(a.strict);
    let mut progress = Progress::stderr();
    let abs = std::path::absolute(&path).unwrap_or(path.clone());
    let o = run_blocks_into(
        &text,
        Some(&abs),
        &plan,
        &blocks.plan_id,
        &selected,
        &mut store,
        &mut executor,
        &mut progress,
        home.root(),
    )?;
    let list = |v: &[usize]| {
        if v.is_empty() { "none".to_string() } else { v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ") }
    };
    println!(
        "blocks done: {}; already complete: {}; failed: {}; not measured (canary): {}; experiment {} in {}",
        list(&o.done),
        list(&o.skipped),
        list(&o.failed),
        list(&o.rejected),
        o.experiment_id,
        store.path().display()
    );
    if o.interrupted {
        return Err(Error::Interrupted);
    }
    if !o.rejected.is_empty() {
        // Ask the scheduler to run this task again, on another host if it can.
        if let Some(task) = crate::fleet::slurm::own_task(|k| std::env::var(k).ok()) {
            let _ = std::process::Command::new("scontrol").args(["requeue", &task]).status();
        }
        return Ok(75);
    }
    Ok(if o.failed.is_empty() { 0 } else { 1 })
}

/// `versus runs [EXPERIMENT]`.
pub(super) fn runs(home: &Home, a: RunsArgs) -> Result<i32> {
    let store = a.db.open_read(home)?;
    let Some(which) = a.experiment else {
        let mut t = table(&["ID", "NAME", "CREATED", "STATUS", "RUNS", "DONE", "FAILED", "FILE"]);
        for e in store.list_experiments()? {
            t.add_row(vec![
                e.id.to_string(),
                e.name,
                crate::report::fmt::timestamp(e.created_at),
                e.status.to_string(),
                e.runs.to_string(),
                e.done.to_string(),
                e.failed.to_string(),
                e.file.unwrap_or_default(),
            ]);
        }
        println!("{t}");
        return Ok(0);
    };
    let id = resolve_experiment(&store, &which)?;
    let runs = store.runs(id)?;
    if let Some(e) = store.experiment(id)? {
        let count = |s: Status| runs.iter().filter(|r| r.status == s).count();
        println!(
            "experiment {id} ({}): {}, {} runs, {} done, {} failed",
            e.name,
            e.status,
            runs.len(),
            count(Status::Done),
            count(Status::Failed)
        );
    }
    let mut t =
        table(&["RUN", "#", "TARGET", "WORKLOAD", "THREADS", "REP", "STATUS", "TPS", "P95 MS", "VERSION", "ERROR"]);
    for r in runs {
        let (tps, p95) = match &r.summary {
            Some(s) => (format!("{:.2}", s.tps), format!("{:.2}", s.latency_p95_us / 1000.0)),
            None => ("-".into(), "-".into()),
        };
        t.add_row(vec![
            r.id.to_string(),
            (r.order_index + 1).to_string(),
            r.cell.target,
            r.cell.workload,
            r.cell.threads.to_string(),
            r.repetition.to_string(),
            r.status.to_string(),
            tps,
            p95,
            r.server_version.unwrap_or_default(),
            r.error.map(|e| crate::experiment::progress::first_cause(&e).0).unwrap_or_default(),
        ]);
    }
    println!("{t}");
    Ok(0)
}

/// Finds an experiment by id or by name (the latest of that name).
pub(super) fn resolve_experiment(store: &Store, which: &str) -> Result<i64> {
    if let Ok(id) = which.parse::<i64>() {
        if store.experiment(id)?.is_some() {
            return Ok(id);
        }
    } else if let Some(e) = store.latest_experiment_named(which)? {
        return Ok(e.id);
    }
    Err(Error::Other(format!(
        "no experiment '{which}' in {}; `versus runs` lists the stored ones",
        store.path().display()
    )))
}

/// `versus show RUN`: the run's sysbench-style report, rebuilt from the store.
pub(super) fn show(home: &Home, a: ShowArgs) -> Result<i32> {
    let store = a.db.open_read(home)?;
    let Some(d) = store.run(a.run)? else {
        return Err(Error::Other(format!(
            "no run {} in {}; `versus runs EXPERIMENT` lists them",
            a.run,
            store.path().display()
        )));
    };
    let r = &d.run;
    println!(
        "run {} of experiment {}: {} / {} / {} thread(s) / repetition {} — {}",
        r.id, r.experiment_id, r.cell.target, r.cell.workload, r.cell.threads, r.repetition, r.status
    );
    if let Some(v) = &r.server_version {
        println!("server: {v}");
    }
    if let Some(cmd) = crate::workload::registry::stored_command(&d) {
        println!("command: {cmd}");
    }
    if let Some(e) = &r.error {
        println!("error: {e}");
    }
    println!();
    for i in &d.intervals {
        println!("{}", crate::workload::sysbench::report::stored_interval_line(i));
    }
    if !d.intervals.is_empty() {
        println!();
    }
    match &r.summary {
        Some(s) => {
            let hist = d
                .histograms
                .iter()
                .filter(|_| a.histogram)
                .find(|h| h.kind == "total")
                .map(|h| crate::store::decode_histogram(&h.data))
                .transpose()?;
            print!("{}", crate::workload::sysbench::report::stored_final_report(s, hist.as_ref()));
            for figures in crate::workload::registry::stored_figures(&d) {
                print!("\n{figures}");
            }
            if let Some(l) = d.efficiency.client_load {
                let verdict = if l.limit().is_some() { "client-bound" } else { "not client-bound" };
                println!("\nclient: {verdict}: {}", l.describe());
            }
            if let Some(r) = d.efficiency.replication {
                print!("\n{}", r.describe());
            }
        }
        None => println!("(no final figures: the run did not finish)"),
    }
    Ok(0)
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(NOTHING).set_header(header.to_vec());
    t
}
