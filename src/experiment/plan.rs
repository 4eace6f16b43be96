//! From an experiment file to a plan: targets, cells (target × workload × threads), the runs in execution
//! order, and the data preparations that are done once and restored from a snapshot before every run.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::spec::{ExperimentFile, Order, TargetDef, set_to_overrides};
use crate::server::Home;
use crate::server::variables::{self, Line};
use crate::workload::{ConnectionCharset, Timing, Workload};

/// A server to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Label in reports.
    pub label: String,
    /// Sandbox or external server.
    pub kind: TargetKind,
    /// Client side: the character set (and collation) every connection of its workloads sets.
    pub charset: Option<ConnectionCharset>,
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
        let (targets, mut problems) = targets(file, base_dir);
        let mut workloads = Vec::new();
        for def in &file.workloads {
            match crate::workload::plan_workloads(def, base_dir) {
                Ok(w) => workloads.extend(w),
                Err(e) => problems.push(e),
            }
        }
        if !problems.is_empty() {
            // Every problem at once, one a line, so that one edit of the file fixes them all.
            return Err(problems.join("\n"));
        }
        let mut cells = Vec::new();
        let mut preparations: Vec<Preparation> = Vec::new();
        for (ti, t) in targets.iter().enumerate() {
            let shape = server_shape(t, line)?;
            for (wi, w) in workloads.iter().enumerate() {
                let data = w.data();
                let key = format!("{};{}", server_key(t, &shape), data.key);
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
        self.workloads[c.workload].estimate(c.threads, &timing)
    }

    /// A rough estimate of the wall time: preparations, then per run restore and start, prewarm,
    /// warm-up, the measured time and the stop (with `min` repetitions for an adaptive experiment).
    pub fn estimate(&self) -> Duration {
        self.estimate_preparations() + self.estimate_runs()
    }

    /// The text of `versus run FILE --dry-run`.
    pub fn describe(&self) -> String {
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
                 (group-sequential, 95 % overall), at most {} rounds",
                reps.min, reps.max
            );
        }
        let _ = writeln!(
            s,
            "each run: restore the prepared data, start the server, {}warm up {} s, measure {} s, stop",
            if f.prewarm { "prewarm, " } else { "" },
            f.warmup.as_secs(),
            f.duration.as_secs()
        );
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
                    let _ = writeln!(s, "  {:<24} build {build}{base}{set}{names}", t.label);
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
        for (i, r) in self.runs.iter().enumerate() {
            let c = &self.cells[r.cell];
            let _ = writeln!(
                s,
                "  {:>4}  rep {:<2} {:<24} {:<24} {:>3} thread{}",
                i + 1,
                r.repetition,
                self.targets[c.target].label,
                self.workloads[c.workload].label(),
                c.threads,
                if c.threads == 1 { "" } else { "s" }
            );
        }
        let hms = |d: Duration| {
            let t = d.as_secs();
            format!("{}h{:02}m{:02}s", t / 3600, t % 3600 / 60, t % 60)
        };
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

/// The targets of `file` that can be built from it, without the home's checks (for
/// [`super::validate`], which checks them even when the plan as a whole has problems).
pub fn targets_of(file: &ExperimentFile, base_dir: &Path) -> Vec<Target> {
    targets(file, base_dir).0
}

/// A rough estimate of preparing `rows` rows in a fresh sandbox and taking the snapshot.
pub fn prepare_estimate(rows: u64) -> Duration {
    const LOAD_ROWS_PER_S: u64 = 150_000;
    Duration::from_secs(3 + rows / LOAD_ROWS_PER_S)
}

/// The targets of `file`, and the problems of those that cannot be built.
fn targets(file: &ExperimentFile, base_dir: &Path) -> (Vec<Target>, Vec<String>) {
    let configs: BTreeMap<&str, _> = file.configs.iter().map(|c| (c.name.as_str(), c)).collect();
    // The target's own character set wins over its config's.
    let charset = |own: Option<&TargetDef>, config: Option<&str>| -> Result<Option<ConnectionCharset>, String> {
        match own.filter(|t| t.charset.is_some()) {
            Some(t) => ConnectionCharset::new(t.charset.as_deref(), t.collation.as_deref()),
            None => match config.map(|c| configs[c]) {
                Some(c) => ConnectionCharset::new(c.charset.as_deref(), c.collation.as_deref()),
                None => Ok(None),
            },
        }
    };
    let sandbox = |build: &str, config: Option<&str>, own: Option<&TargetDef>| -> Result<Target, String> {
        let (base_file, mut overrides, cname) = match config {
            Some(name) => {
                let c = configs[name];
                let base = c.file.as_ref().map(|p| base_dir.join(p));
                (base, set_to_overrides(&c.set, &format!("config '{name}'"))?, name.to_string())
            }
            None => (None, Vec::new(), "default".to_string()),
        };
        if let Some(t) = own {
            overrides.extend(set_to_overrides(&t.set, &format!("target {build}"))?);
        }
        let label = match (own.and_then(|t| t.name.as_deref()), config) {
            (Some(l), _) => l.to_string(),
            (None, Some(c)) => format!("{build}/{c}"),
            (None, None) => build.to_string(),
        };
        let kind = TargetKind::Sandbox { build: build.into(), config: cname, base_file, overrides };
        Ok(Target { label, kind, charset: charset(own, config)? })
    };
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut keep = |t: Result<Target, String>| match t {
        Ok(t) => out.push(t),
        Err(e) => problems.push(e),
    };
    if file.targets.is_empty() {
        let names: Vec<Option<&str>> = if file.configs.is_empty() {
            vec![None]
        } else {
            file.configs.iter().map(|c| Some(c.name.as_str())).collect()
        };
        for b in &file.builds {
            for c in &names {
                keep(sandbox(b, *c, None));
            }
        }
    } else {
        for t in &file.targets {
            match (&t.build, &t.address) {
                (Some(b), _) => keep(sandbox(b, t.config.as_deref(), Some(t))),
                (None, Some(a)) => keep(charset(Some(t), None).map(|charset| Target {
                    charset,
                    label: t.name.clone().unwrap_or_else(|| a.clone()),
                    kind: TargetKind::External {
                        address: a.clone(),
                        user: t.user.clone().unwrap_or_else(|| crate::server::sandbox::DEFAULT_USER.into()),
                        password_env: t.password_env.clone(),
                        database: t.database.clone().unwrap_or_else(|| crate::server::sandbox::DEFAULT_DATABASE.into()),
                        replace_tables: t.replace_tables,
                    },
                })),
                (None, None) => unreachable!("checked when the file was parsed"),
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for t in &out {
        if !seen.insert(t.label.clone()) {
            problems.push(format!("two targets are labelled '{}'; give them distinct `name`s", t.label));
        }
    }
    (out, problems)
}

/// The options of a sandbox target (its base config's `[mysqld]` options, then its overrides) that
/// shape the data on its server line; none for an external server (its data are its own).
fn server_shape(t: &Target, line: &dyn Fn(&str) -> Option<Line>) -> Result<Vec<String>, String> {
    match &t.kind {
        TargetKind::Sandbox { build, base_file, overrides, .. } => {
            // A base config that is gone (a stored experiment read again) sets nothing; a run would
            // name it when the server starts.
            let mut options = match base_file {
                Some(path) if path.exists() => crate::server::effective::requested(Some(path), &[])
                    .map_err(|e| format!("target {}: {e}", t.label))?
                    .into_iter()
                    .map(|r| match r.value {
                        Some(v) => format!("{}={v}", r.option),
                        None => r.option,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            options.extend(overrides.iter().cloned());
            Ok(variables::data_shape_options(&options, line(build)))
        }
        TargetKind::External { .. } => Ok(Vec::new()),
    }
}

fn server_key(t: &Target, shape: &[String]) -> String {
    match &t.kind {
        TargetKind::Sandbox { build, .. } if shape.is_empty() => format!("build={build}"),
        TargetKind::Sandbox { build, .. } => format!("build={build};{}", shape.join(";")),
        TargetKind::External { .. } => format!("target={}", t.label),
    }
}

/// Runs in rounds of every cell (shuffled per round, or in order), or cell by cell.
pub fn order_runs(cells: usize, repetitions: u32, order: Order, seed: u64) -> Vec<PlannedRun> {
    let mut runs = Vec::with_capacity(cells * repetitions as usize);
    match order {
        Order::Sequential => {
            for cell in 0..cells {
                runs.extend((1..=repetitions).map(|repetition| PlannedRun { cell, repetition }));
            }
        }
        Order::Interleaved | Order::Shuffled => {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            for repetition in 1..=repetitions {
                let mut round: Vec<usize> = (0..cells).collect();
                if order == Order::Shuffled {
                    round.shuffle(&mut rng);
                }
                runs.extend(round.into_iter().map(|cell| PlannedRun { cell, repetition }));
            }
        }
    }
    runs
}

/// Reorders runs so that the runs of each chain (target × chain × threads × repetition, see
/// [`crate::workload::Link`]) run back to back, in rank order, where the first of them was planned.
pub fn group_chains(runs: &[PlannedRun], cells: &[Cell], workloads: &[Arc<dyn Workload>]) -> Vec<PlannedRun> {
    let links: Vec<_> = workloads.iter().map(|w| w.link()).collect();
    let chain = |r: &PlannedRun| {
        let c = &cells[r.cell];
        links[c.workload].as_ref().map(|l| (c.target, l.chain.clone(), c.threads, r.repetition))
    };
    let rank = |r: &PlannedRun| links[cells[r.cell].workload].as_ref().map(|l| l.rank);
    let mut out = Vec::with_capacity(runs.len());
    let mut emitted = HashSet::new();
    for r in runs {
        match chain(r) {
            None => out.push(*r),
            Some(k) if emitted.insert(k.clone()) => {
                let mut group: Vec<PlannedRun> =
                    runs.iter().filter(|x| chain(x).as_ref() == Some(&k)).copied().collect();
                group.sort_by_key(|x| rank(x));
                out.extend(group);
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        Plan::new(&ExperimentFile::parse(text).unwrap(), Path::new("/exp")).unwrap()
    }

    const TWO_CONFIGS: &str = r#"
name = "x"
builds = ["a", "b"]
threads = [1, 8]
repetitions = 3
[[configs]]
name = "c1"
file = "base.cnf"
set = { sync_binlog = 1 }
[[configs]]
name = "c2"
set = { sync_binlog = 0, innodb_page_size = "8k" }
[[workloads]]
test = "oltp_read_write"
options = { tables = 2, table-size = 1000 }
[[workloads]]
test = "oltp_point_select"
options = { tables = 2, table_size = 1000 }
"#;

    #[test]
    fn builds_cross_configs_and_cells_cross_workloads_and_threads() {
        let p = plan(TWO_CONFIGS);
        let labels: Vec<&str> = p.targets.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["a/c1", "a/c2", "b/c1", "b/c2"]);
        assert_eq!(p.cells.len(), 4 * 2 * 2);
        assert_eq!(p.runs.len(), 16 * 3);
        assert_eq!(p.cells[0].key, "target=a/c1;workload=oltp_read_write;threads=1");
        match &p.targets[0].kind {
            TargetKind::Sandbox { base_file, overrides, .. } => {
                assert_eq!(base_file.as_deref(), Some(Path::new("/exp/base.cnf")));
                assert_eq!(overrides, &["sync_binlog=1"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn data_is_prepared_once_per_build_and_shape_unless_init_options_differ() {
        let p = plan(TWO_CONFIGS);
        // Both workloads share the oltp shape; c2 has an init-time option, so it gets its own data.
        let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "build=a;oltp;table_size=1000;tables=2",
                "build=a;innodb_page_size=8k;oltp;table_size=1000;tables=2",
                "build=b;oltp;table_size=1000;tables=2",
                "build=b;innodb_page_size=8k;oltp;table_size=1000;tables=2",
            ]
        );
        assert_eq!(p.preparations[0].rows, 2000);
    }

    #[test]
    fn targets_whose_data_shaping_values_differ_get_their_own_data() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("latin1.cnf"), "[mysqld]\ncharacter-set-server = latin1\nsync_binlog = 0\n")
            .unwrap();
        let text = r#"
name = "x"
[[configs]]
name = "l1"
file = "latin1.cnf"
[[targets]]
name = "utf8"
build = "b"
set = { character_set_server = "utf8mb4", collation_server = "utf8mb4_general_ci", sync_binlog = 1 }
[[targets]]
name = "latin1"
build = "b"
set = { collation-server = "latin1_swedish_ci", character-set-server = "latin1" }
charset = "latin1"
[[targets]]
name = "latin1-from-file"
build = "b"
config = "l1"
set = { collation_server = "latin1_swedish_ci", innodb_buffer_pool_size = "1G" }
[[targets]]
name = "checksums"
build = "b"
set = { innodb_checksum_algorithm = "crc32" }
[[workloads]]
test = "oltp_read_only"
options = { tables = 1, table-size = 100 }
"#;
        let file = ExperimentFile::parse(text).unwrap();
        let mariadb = |_: &str| Some((crate::server::Flavor::Mariadb, crate::server::Version::new(11, 8, 9)));
        let p = Plan::with_lines(&file, dir.path(), &mariadb).unwrap();
        let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "build=b;character_set_server=utf8mb4;collation_server=utf8mb4_general_ci;oltp;table_size=100;tables=1",
                "build=b;character_set_server=latin1;collation_server=latin1_swedish_ci;oltp;table_size=100;tables=1",
                "build=b;innodb_checksum_algorithm=crc32;oltp;table_size=100;tables=1",
            ],
            "the character set from a base config counts; the buffer pool and sync_binlog do not"
        );
        let prep: Vec<usize> = p.cells.iter().map(|c| c.preparation).collect();
        assert_eq!(prep, [0, 1, 1, 2]);
        assert_eq!(
            p.preparations[1].server_options,
            ["character_set_server=latin1", "collation_server=latin1_swedish_ci"]
        );
        // On MySQL the page checksum algorithm does not shape the data.
        let mysql = |_: &str| Some((crate::server::Flavor::Mysql, crate::server::Version::new(8, 0, 36)));
        let p = Plan::with_lines(&file, dir.path(), &mysql).unwrap();
        assert_eq!(p.preparations.len(), 3);
        assert!(p.preparations[2].key.starts_with("build=b;oltp"), "{}", p.preparations[2].key);
        // The client side is the target's, not the data's.
        assert_eq!(p.targets[1].charset.as_ref().map(|c| c.statement()).as_deref(), Some("SET NAMES latin1"));
        assert!(p.describe().contains("; connections run SET NAMES latin1"), "{}", p.describe());
    }

    #[test]
    fn a_collation_needs_a_character_set() {
        let t = "name = \"x\"\n[[targets]]\nbuild = \"b\"\ncollation = \"latin1_bin\"\n[[workloads]]\ntest = \"oltp_read_only\"\n";
        let e = ExperimentFile::parse(t).unwrap_err();
        assert!(e.starts_with("target #1: collation 'latin1_bin' needs the character set too"), "{e}");
        let t = t.replace("collation = \"latin1_bin\"", "charset = \"latin1; DROP\"");
        assert!(ExperimentFile::parse(&t).unwrap_err().contains("is not a character set or collation name"));
    }

    #[test]
    fn shuffled_rounds_contain_every_cell_once_and_depend_on_the_seed() {
        let a = order_runs(5, 4, Order::Shuffled, 1);
        for rep in 1..=4 {
            let mut cells: Vec<usize> = a.iter().filter(|r| r.repetition == rep).map(|r| r.cell).collect();
            cells.sort();
            assert_eq!(cells, vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(a, order_runs(5, 4, Order::Shuffled, 1));
        assert_ne!(a, order_runs(5, 4, Order::Shuffled, 2));
        let i = order_runs(2, 2, Order::Interleaved, 1);
        assert_eq!(i.iter().map(|r| r.cell).collect::<Vec<_>>(), vec![0, 1, 0, 1]);
        let s = order_runs(2, 2, Order::Sequential, 1);
        assert_eq!(s.iter().map(|r| r.cell).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
    }

    #[test]
    fn dry_run_lists_every_run_and_an_estimate() {
        let p = plan(TWO_CONFIGS);
        let text = p.describe();
        assert!(
            text.starts_with(
                "experiment x: 4 target(s) × 2 workload(s) × 2 thread count(s) → 16 cells × 3 repetition(s) = 48 runs"
            ),
            "{text}"
        );
        assert_eq!(text.lines().filter(|l| l.ends_with("  1 thread")).count(), 24, "{text}");
        assert_eq!(text.lines().filter(|l| l.ends_with("  8 threads")).count(), 24, "{text}");
        assert!(text.contains("estimated duration: 0h"));
        assert!(p.estimate() >= Duration::from_secs(48 * 60));
    }

    #[test]
    fn adaptive_plans_run_the_minimum_first_and_extra_rounds_continue_the_shuffle() {
        let text = TWO_CONFIGS.replace("repetitions = 3", "repetitions = { min = 2, max = 6, until = \"±3%\" }");
        let p = plan(&text);
        assert_eq!(p.runs.len(), 16 * 2, "the first look comes after min rounds");
        let fixed = plan(&TWO_CONFIGS.replace("repetitions = 3", "repetitions = 6"));
        for rep in 1..=6u32 {
            let want: Vec<PlannedRun> = fixed.runs.iter().filter(|r| r.repetition == rep).copied().collect();
            assert_eq!(p.round(rep), want, "round {rep} is the fixed plan's round");
        }
        let text = p.describe();
        assert!(text.contains("16 cells × 2–6 repetition(s) = 32–96 runs"), "{text}");
        assert!(text.contains("until every comparison is decisive or narrower than ±3%"), "{text}");
        let est = text.lines().find(|l| l.starts_with("estimated duration")).unwrap();
        assert!(est.contains("(2 rounds) to ") && est.ends_with("(6 rounds)"), "{est}");
        assert!(p.estimate_max() > p.estimate() * 2, "{est}");
    }

    #[test]
    fn duplicate_labels_are_refused() {
        let t = r#"
name = "x"
[[targets]]
build = "a"
[[targets]]
build = "a"
[[workloads]]
test = "oltp_read_only"
"#;
        let e = Plan::new(&ExperimentFile::parse(t).unwrap(), Path::new("/")).unwrap_err();
        assert!(e.contains("two targets are labelled 'a'"), "{e}");
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    #[test]
    fn the_shipped_examples_parse_and_plan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let (file, _) = ExperimentFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
                let plan = Plan::new(&file, &dir).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!plan.runs.is_empty());
                n += 1;
            }
        }
        assert!(n >= 3, "examples/ holds the three seed matrices");
    }
}
