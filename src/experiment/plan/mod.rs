//! From an experiment file to a plan: targets, cells (target × workload × threads), the runs in execution
//! order, and the data preparations that are done once and restored from a snapshot before every run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::spec::ExperimentFile;
use crate::server::Home;
use crate::server::variables::Line;
use crate::workload::{ConnectionCharset, Timing, Workload};

mod order;
mod targets;

pub use order::{group_chains, order_runs};

/// A server to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Label in reports.
    pub label: String,
    /// Sandbox or external server.
    pub kind: TargetKind,
    /// Client side: the character set (and collation) every connection of its workloads sets.
    pub charset: Option<ConnectionCharset>,
    /// Replicas started beside a sandbox target's server, measured during its runs.
    pub replication: Option<crate::experiment::topology::Replication>,
}

/// How a target's server is obtained.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetKind {
    /// A build started by versus in a sandbox, restored and restarted before every run.
    Sandbox {
        /// Build name.
        build: String,
        /// Config name (`default` when none).
        config: String,
        /// Base my.cnf (absolute).
        base_file: Option<PathBuf>,
        /// `--set` style overrides, config's first, then the target's.
        overrides: Vec<String>,
    },
    /// A server versus does not manage.
    External {
        /// `HOST:PORT`.
        address: String,
        /// User name.
        user: String,
        /// Environment variable with the password.
        password_env: Option<String>,
        /// Database.
        database: String,
        /// Prepare may drop and recreate existing benchmark tables.
        replace_tables: bool,
    },
}

/// One point of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Stable identity of the cell, used to match runs on resume.
    pub key: String,
    /// Index into [`Plan::targets`].
    pub target: usize,
    /// Index into [`Plan::workloads`].
    pub workload: usize,
    /// Client threads.
    pub threads: u32,
    /// Index into [`Plan::preparations`].
    pub preparation: usize,
}

/// Data to prepare once and snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    /// Stable identity (`build` or target, the server options that shape the data, the workload's
    /// data shape).
    pub key: String,
    /// Index of the first target that uses it: its build prepares the data.
    pub target: usize,
    /// The target's server options that shape the data ([`variables::data_shape_options`]), set while
    /// preparing: a target whose values differ gets data of its own.
    pub server_options: Vec<String>,
    /// Index of the first workload that uses it: it runs `prepare`.
    pub workload: usize,
    /// Rows to load, for the estimate.
    pub rows: u64,
}

/// One run: a cell at one repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    /// Index into [`Plan::cells`].
    pub cell: usize,
    /// Repetition, from 1.
    pub repetition: u32,
}

/// Everything an experiment will do, in order.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The experiment as written.
    pub file: ExperimentFile,
    /// Targets in file order.
    pub targets: Vec<Target>,
    /// Workloads in file order, each entry expanded by its kind (an Insert Benchmark entry into one
    /// workload per step).
    pub workloads: Vec<Arc<dyn Workload>>,
    /// Cells: target-major, then workload, then threads.
    pub cells: Vec<Cell>,
    /// Data preparations.
    pub preparations: Vec<Preparation>,
    /// Runs in execution order.
    pub runs: Vec<PlannedRun>,
    /// Seed of the order.
    pub seed: u64,
}

impl Plan {
    /// Builds the plan; `base_dir` resolves relative config file paths. Which options shape the data is
    /// decided without knowing the builds' versions (an option that shapes data on any server line
    /// counts); [`Plan::for_home`] knows them.
    pub fn new(file: &ExperimentFile, base_dir: &Path) -> Result<Plan, String> {
        Plan::with_lines(file, base_dir, &|_| None)
    }

    /// Builds the plan with the flavor and version of every build registered in `home`, so that the
    /// options that shape the data are those of each target's server line.
    pub fn for_home(file: &ExperimentFile, base_dir: &Path, home: &Home) -> Result<Plan, String> {
        Plan::with_lines(file, base_dir, &|build| home.build(build).ok().map(|b| (b.flavor, b.version)))
    }

    /// Builds the plan; `line` gives a build's flavor and version where known.
    pub fn with_lines(
        file: &ExperimentFile,
        base_dir: &Path,
        line: &dyn Fn(&str) -> Option<Line>,
    ) -> Result<Plan, String> {
        let (targets, mut problems) = targets::targets(file, base_dir);
        let mut workloads = Vec::new();
        for def in &file.workloads {
            match crate::workload::plan_workloads(def, base_dir) {
                Ok(w) => workloads.extend(w),
                Err(e) => problems.push(e),
            }
        }
        problems.extend(profile_problems(file, &targets));
        if !problems.is_empty() {
            // Every problem at once, one a line, so that one edit of the file fixes them all.
            return Err(problems.join("\n"));
        }
        let mut cells = Vec::new();
        let mut preparations: Vec<Preparation> = Vec::new();
        for (ti, t) in targets.iter().enumerate() {
            let shape = targets::server_shape(t, line)?;
            for (wi, w) in workloads.iter().enumerate() {
                let data = w.data();
                let key = format!("{};{}", targets::server_key(t, &shape), data.key);
                let preparation = match preparations.iter().position(|p| p.key == key) {
                    Some(i) => i,
                    None => {
                        preparations.push(Preparation {
                            key,
                            target: ti,
                            server_options: shape.clone(),
                            workload: wi,
                            rows: data.rows,
                        });
                        preparations.len() - 1
                    }
                };
                for &threads in w.threads().unwrap_or(&file.threads) {
                    let key = format!("target={};workload={};threads={threads}", t.label, w.label());
                    cells.push(Cell { key, target: ti, workload: wi, threads, preparation });
                }
            }
        }
        let seed = file.seed.unwrap_or(1);
        let runs = order_runs(cells.len(), file.repetitions.min, file.order, seed);
        let runs = group_chains(&runs, &cells, &workloads);
        Ok(Plan { file: file.clone(), targets, workloads, cells, preparations, runs, seed })
    }

    /// The runs of round `repetition` (every cell once) in execution order: the same order the plan
    /// would have had with that many repetitions from the start, so an adaptive experiment's extra
    /// rounds are shuffled like the first ones and round `k` is always block `k − 1`.
    pub fn round(&self, repetition: u32) -> Vec<PlannedRun> {
        let f = &self.file;
        let all = order_runs(self.cells.len(), repetition, f.order, self.seed);
        let round: Vec<PlannedRun> = all.into_iter().filter(|r| r.repetition == repetition).collect();
        group_chains(&round, &self.cells, &self.workloads)
    }

    /// The estimated wall time with `max` repetitions instead of `min` (the same as
    /// [`Plan::estimate`] for a fixed number).
    pub fn estimate_max(&self) -> Duration {
        let reps = &self.file.repetitions;
        let per_round = self.estimate_runs() / reps.min;
        self.estimate_preparations() + per_round * reps.max
    }

    fn estimate_preparations(&self) -> Duration {
        self.preparations.iter().map(|p| prepare_estimate(p.rows)).sum()
    }

    fn estimate_runs(&self) -> Duration {
        self.runs.iter().map(|r| self.run_estimate(r.cell)).sum::<Duration>()
    }

    /// The estimated duration of one run of cell `cell` (restore, start, prewarm, warm-up, measure, stop).
    pub fn run_estimate(&self, cell: usize) -> Duration {
        let timing = Timing { duration: self.file.duration, warmup: self.file.warmup, prewarm: self.file.prewarm };
        let c = &self.cells[cell];
        self.workloads[c.workload].estimate(c.threads, &timing) + self.file.settle
    }

    /// A rough estimate of the wall time: preparations, then per run restore and start, prewarm,
    /// warm-up, the measured time and the stop (with `min` repetitions for an adaptive experiment).
    /// The sum of [`Plan::run_estimates`] of every run with nothing prepared: `--dry-run` prints it and
    /// the start banner of a fresh experiment adds up the same figures.
    pub fn estimate(&self) -> Duration {
        let cells: Vec<usize> = self.runs.iter().map(|r| r.cell).collect();
        self.run_estimates(&cells, &|_| false).iter().sum()
    }

    /// The estimate of each of `cells`' runs, in that order: the run itself ([`Plan::run_estimate`]),
    /// and for the first run of a preparation not `prepared` yet, that preparation too (it is made
    /// just before that run). The ETA of `versus run` counts these down.
    pub fn run_estimates(&self, cells: &[usize], prepared: &dyn Fn(usize) -> bool) -> Vec<Duration> {
        let mut made = std::collections::HashSet::new();
        cells
            .iter()
            .map(|&cell| {
                let prep = self.cells[cell].preparation;
                let first = !prepared(prep) && made.insert(prep);
                let p = if first { prepare_estimate(self.preparations[prep].rows) } else { Duration::ZERO };
                self.run_estimate(cell) + p
            })
            .collect()
    }

    /// The text of `versus run FILE --dry-run`.
    pub fn describe(&self) -> String {
        self.describe_at(crate::stats::DEFAULT_CONFIDENCE)
    }

    /// [`Plan::describe`] with the adaptive looks at overall `confidence` (`versus run --confidence`).
    pub fn describe_at(&self, confidence: f64) -> String {
        let mut s = String::new();
        let f = &self.file;
        let mut thread_counts: Vec<u32> = self.cells.iter().map(|c| c.threads).collect();
        thread_counts.sort_unstable();
        thread_counts.dedup();
        let crossed = self.targets.len() * self.workloads.len() * thread_counts.len() == self.cells.len();
        let threads = if crossed {
            format!(" × {} thread count(s)", thread_counts.len())
        } else {
            " (thread counts per workload)".to_string()
        };
        let reps = &f.repetitions;
        let (repetitions, runs) = if reps.is_adaptive() {
            let n = self.cells.len();
            (format!("{}–{}", reps.min, reps.max), format!("{}–{}", n * reps.min as usize, n * reps.max as usize))
        } else {
            (reps.min.to_string(), self.runs.len().to_string())
        };
        let _ = writeln!(
            s,
            "experiment {}: {} target(s) × {} workload(s){threads} → {} cells × {repetitions} repetition(s) = {runs} runs \
             (order {:?}, seed {})",
            f.name,
            self.targets.len(),
            self.workloads.len(),
            self.cells.len(),
            f.order,
            self.seed
        );
        if reps.is_adaptive() {
            let until = match reps.until_text() {
                Some(u) => format!("decisive or narrower than {u}"),
                None => "decisive".to_string(),
            };
            let _ = writeln!(
                s,
                "adaptive: {} rounds, then one shuffled round of every cell at a time until every comparison is {until} \
                 (group-sequential, {} % overall), at most {} rounds",
                reps.min,
                crate::stats::level_percent(confidence),
                reps.max
            );
        }
        let _ = writeln!(
            s,
            "each run: restore the prepared data, start the server, {}warm up {} s, measure {} s, stop",
            if f.prewarm { "prewarm, " } else { "" },
            f.warmup.as_secs(),
            f.duration.as_secs()
        );
        if let Some(line) = super::setup::describe(f) {
            let _ = writeln!(s, "{line}");
        }
        let mut notes: Vec<&str> = Vec::new();
        for note in self.workloads.iter().filter_map(|w| w.plan_note()) {
            if !notes.contains(&note) {
                notes.push(note);
                let _ = writeln!(s, "{note}");
            }
        }
        let _ = writeln!(s, "\ntargets:");
        for t in &self.targets {
            let names = t.charset.as_ref().map(|c| format!("; connections run {}", c.statement())).unwrap_or_default();
            match &t.kind {
                TargetKind::Sandbox { build, base_file, overrides, .. } => {
                    let base = base_file.as_ref().map(|p| format!(" base {}", p.display())).unwrap_or_default();
                    let set =
                        if overrides.is_empty() { String::new() } else { format!(" set {}", overrides.join(" ")) };
                    let repl = t.replication.as_ref().map(|r| format!("; with {}", r.describe())).unwrap_or_default();
                    let _ = writeln!(s, "  {:<24} build {build}{base}{set}{names}{repl}", t.label);
                }
                TargetKind::External { address, user, database, .. } => {
                    let _ = writeln!(s, "  {:<24} external {user}@{address}/{database}{names}", t.label);
                }
            }
        }
        let _ = writeln!(
            s,
            "\ndata prepared once per build and data shape (the target's options that shape the data are set while \
             preparing), then restored before every run:"
        );
        for p in &self.preparations {
            let _ = writeln!(s, "  {} ({} rows)", p.key, p.rows);
        }
        let _ = writeln!(s, "\nruns in order{}:", if reps.is_adaptive() { " (the first rounds)" } else { "" });
        // Columns as wide as their longest value, so that long labels do not push the rest out of line.
        let width = |f: &dyn Fn(&Cell) -> usize| self.cells.iter().map(f).max().unwrap_or(0);
        let tw = width(&|c| self.targets[c.target].label.chars().count());
        let ww = width(&|c| self.workloads[c.workload].label().chars().count());
        for (i, r) in self.runs.iter().enumerate() {
            let c = &self.cells[r.cell];
            let _ = writeln!(
                s,
                "  {:>4}  rep {:<2} {:<tw$}  {:<ww$}  {:>3} thread{}",
                i + 1,
                r.repetition,
                self.targets[c.target].label,
                self.workloads[c.workload].label(),
                c.threads,
                if c.threads == 1 { "" } else { "s" }
            );
        }
        let hms = |d: Duration| format!("about {}", human(d));
        if reps.is_adaptive() {
            let _ = writeln!(
                s,
                "\nestimated duration: {} ({} rounds) to {} ({} rounds)",
                hms(self.estimate()),
                reps.min,
                hms(self.estimate_max()),
                reps.max
            );
        } else {
            let _ = writeln!(s, "\nestimated duration: {}", hms(self.estimate()));
        }
        s
    }
}

/// What keeps the experiment's `profile` settings from being honoured.
fn profile_problems(file: &ExperimentFile, targets: &[Target]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(hz) = file.profile_hz.filter(|hz| !(1..=10_000).contains(hz)) {
        out.push(format!("profile_hz = {hz}: give a sampling rate from 1 to 10000 per second (199 by default)"));
    }
    if file.profile_waits && !file.profile {
        out.push("profile_waits = true: waits are recorded with the profile; set profile = true too".into());
    }
    if file.profile {
        for t in targets.iter().filter(|t| matches!(t.kind, TargetKind::External { .. })) {
            out.push(format!(
                "profile = true: target {} is an external server; versus profiles only the servers it starts \
                 (sandboxes): drop profile or the target",
                crate::markup::shown(&t.label)
            ));
        }
    }
    out
}

/// `1 h 05 min`, `4 min 10 s`, `42 s`: how estimates and ETAs are written (dry run, start banner,
/// progress bar, ibench).
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The targets of `file` that can be built from it, without the home's checks (for
/// [`super::validate`], which checks them even when the plan as a whole has problems).
pub fn targets_of(file: &ExperimentFile, base_dir: &Path) -> Vec<Target> {
    targets::targets(file, base_dir).0
}

/// A rough estimate of preparing `rows` rows in a fresh sandbox and taking the snapshot. Measured on a
/// 2-core VM (MariaDB 10.11, sysbench tables, 2 × 1.5M rows incl. the secondary index and the snapshot:
/// about 75 s); a run under a deadline corrects it by what earlier preparations took
/// ([`crate::experiment::Pace`]).
pub fn prepare_estimate(rows: u64) -> Duration {
    const LOAD_ROWS_PER_S: u64 = 40_000;
    Duration::from_secs(3 + rows / LOAD_ROWS_PER_S)
}

#[cfg(test)]
mod tests;
