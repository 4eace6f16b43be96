//! Everything about an experiment that can be checked before anything runs, checked at once: the
//! file's targets and workloads (tests and options, by the parser `versus sysbench` uses), the builds
//! its sandboxes need, their config files and `set` options (managed options in any spelling, options
//! the build's version does not know), external targets' addresses and password variables, and the
//! free space the prepared data needs. `versus run --dry-run` and the real run list every problem.

use std::path::Path;

use super::plan::{Plan, Target, TargetKind, targets_of};
use super::spec::ExperimentFile;
use crate::server::Home;

/// Disk a sandbox's datadir takes before any data (system tables, redo and undo logs).
const DATADIR_BYTES: u64 = 200 << 20;
/// Disk a benchmark row takes with its indexes (sysbench's rows are about 190 bytes of data).
const ROW_BYTES: u64 = 300;

/// The problems of `file` (read from `base_dir`) for a run from `home`, one line each; empty when it
/// can run. Its plan, when it has no problems, is the one [`Plan::new`] makes.
pub fn problems(home: &Home, file: &ExperimentFile, base_dir: &Path) -> Vec<String> {
    let plan = Plan::new(file, base_dir);
    let mut out: Vec<String> = match &plan {
        Ok(_) => Vec::new(),
        Err(m) => m.lines().map(String::from).collect(),
    };
    for t in targets_of(file, base_dir) {
        out.extend(target_problems(home, &t));
    }
    out.extend(super::setup::problems(file));
    if let Ok(plan) = &plan {
        out.extend(connection_problems(plan));
        let mut seen = std::collections::BTreeSet::new();
        for c in &plan.cells {
            if seen.insert((c.workload, c.threads))
                && let Some(p) = plan.workloads[c.workload].threads_problem(c.threads)
            {
                out.push(p);
            }
        }
    }
    if let (Ok(plan), true) = (&plan, out.is_empty()) {
        out.extend(space_problem(home, plan));
    }
    out
}

/// `max_connections` of MariaDB and MySQL when nothing sets it.
const DEFAULT_MAX_CONNECTIONS: u64 = 151;

/// Sandbox targets measured at more threads (one connection each) than their server's
/// `max_connections`, from their config and `set`: every such run would fail at its start.
fn connection_problems(plan: &Plan) -> Vec<String> {
    const GROUPS: &[&str] = &["mysqld", "server", "mariadb", "mariadbd", "client-server"];
    let mut out = Vec::new();
    for (i, t) in plan.targets.iter().enumerate() {
        let TargetKind::Sandbox { build, base_file, overrides, .. } = &t.kind else { continue };
        let Some(threads) = plan.cells.iter().filter(|c| c.target == i).map(|c| u64::from(c.threads)).max() else {
            continue;
        };
        let Ok(text) = crate::server::config::render(&t.label, build, base_file.as_deref(), &[], overrides) else {
            continue;
        };
        let file = Path::new("/versus-check.cnf");
        let Ok(options) = crate::server::mycnf::MyCnf::parse(&text, file).and_then(|c| c.resolve(file, GROUPS)) else {
            continue;
        };
        let (max, whose) = match options.value("max_connections") {
            None => (DEFAULT_MAX_CONNECTIONS, ", the server's default"),
            Some(Some(v)) => match v.trim().parse::<u64>() {
                Ok(n) => (n, ""),
                Err(_) => continue,
            },
            Some(None) => continue,
        };
        if threads > max {
            out.push(format!(
                "target {}: {threads} threads open {threads} connections, more than its max_connections ({max}{whose}); add max_connections = {threads} or more to its `set`, or use fewer threads",
                t.label
            ));
        }
    }
    out
}

/// `problems` as one message: the problem itself when there is one, else a count and one problem a
/// line.
pub fn listing(problems: &[String]) -> String {
    match problems {
        [one] => one.clone(),
        many => format!("{} problems, nothing was run:\n  - {}", many.len(), many.join("\n  - ")),
    }
}

fn target_problems(home: &Home, t: &Target) -> Vec<String> {
    let at = |m: String| format!("target {}: {m}", t.label);
    let mut out = Vec::new();
    match &t.kind {
        TargetKind::Sandbox { build, base_file, overrides, .. } => {
            let b = match home.build(build) {
                Ok(b) => Some(b),
                Err(e) => {
                    out.push(at(e.to_string()));
                    None
                }
            };
            if let (Some(b), Some(r)) = (&b, &t.replication) {
                let replica_build = match r.replica_build.as_deref().map(|name| home.build(name)) {
                    Some(Err(e)) => {
                        out.push(at(format!("replication.build: {e}")));
                        None
                    }
                    Some(Ok(rb)) => Some(rb),
                    None => None,
                };
                if let Some(why) = r.problem(b, replica_build.as_ref()) {
                    out.push(at(why));
                }
            }
            if let Some(f) = base_file.as_ref().filter(|f| !f.is_file()) {
                out.push(at(format!("config file {} does not exist", f.display())));
                return out;
            }
            // Each override on its own, so that every refused one is listed.
            let refused: Vec<String> = overrides
                .iter()
                .filter_map(|o| crate::server::config::parse_override(o).err())
                .map(|e| at(e.to_string().replacen("--set: ", "set: ", 1)))
                .collect();
            if !refused.is_empty() {
                out.extend(refused);
                return out;
            }
            match crate::server::config::render(&t.label, build, base_file.as_deref(), &[], overrides) {
                Err(e) => out.push(at(e.to_string())),
                // Options the build's version does not know are refused now, not when its server starts.
                Ok(text) => {
                    if let Some(b) = &b
                        && let Err(m) = crate::server::flavor::options::adapt(b, &text, Path::new(&t.label))
                    {
                        out.push(at(m));
                    }
                    // A bare option the server needs a value for would stop its start.
                    if let Some(b) = &b
                        && let Err(m) = crate::server::bare::check(b, overrides)
                    {
                        out.push(at(format!("set: {m}")));
                    }
                }
            }
        }
        TargetKind::External { address, password_env, .. } => {
            match address.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>())) {
                Some((h, Ok(_))) if !h.is_empty() => {}
                _ => out.push(at(format!("address '{address}' is not HOST:PORT (e.g. 127.0.0.1:3306)"))),
            }
            if let Some(var) = password_env
                && std::env::var_os(var).is_none()
            {
                out.push(at(format!(
                    "password_env names {var}, which is not set; export {var} with the password (an empty one \
                     is `export {var}=`)"
                )));
            }
        }
    }
    out
}

/// The disk the plan's sandboxes need in the home, against what is free there.
fn space_problem(home: &Home, plan: &Plan) -> Option<String> {
    let sandboxed = |i: usize| matches!(plan.targets[i].kind, TargetKind::Sandbox { .. });
    // Each preparation is kept as a snapshot, and the run's datadir is a copy of it.
    let need: u64 = plan
        .preparations
        .iter()
        .filter(|p| sandboxed(p.target))
        .map(|p| 2 * (DATADIR_BYTES + p.rows.saturating_mul(ROW_BYTES)))
        .sum::<u64>()
        + growth(plan);
    if need == 0 {
        return None;
    }
    let root = home.root();
    let dir = root.ancestors().find(|d| d.exists())?;
    let stat = nix::sys::statvfs::statvfs(dir).ok()?;
    let free = stat.blocks_available() as u64 * stat.fragment_size() as u64;
    (free < need).then(|| {
        format!(
            "the prepared data needs about {} in {} but only {} is free there; free some space, choose a smaller \
             table-size, or pass --home on a larger disk",
            gib(need),
            root.display(),
            gib(free)
        )
    })
}

/// The most that one chain of runs on a sandbox adds to its datadir (the Insert Benchmark's steps
/// insert into one datadir, one after the other): the largest sum of [`Workload::disk_growth`] over the
/// cells of one sandboxed target and thread count.
///
/// [`Workload::disk_growth`]: crate::workload::Workload::disk_growth
fn growth(plan: &Plan) -> u64 {
    let mut chains: std::collections::HashMap<(usize, u32), u64> = Default::default();
    for c in &plan.cells {
        if matches!(plan.targets[c.target].kind, TargetKind::Sandbox { .. }) {
            *chains.entry((c.target, c.threads)).or_default() += plan.workloads[c.workload].disk_growth(c.threads);
        }
    }
    chains.into_values().max().unwrap_or(0)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_listed_at_once() {
        let home = tempfile::tempdir().unwrap();
        let home = Home::at(home.path());
        let text = r#"
name = "bad"
threads = [1]
[[targets]]
name = "a"
build = "not-registered"
set = { port = 1 }
[[targets]]
name = "ext"
address = "127.0.0.1:3306"
password_env = "VERSUS_VALIDATE_TEST_UNSET"
[[workloads]]
test = "oltp_nope"
[[workloads]]
test = "oltp_point_select"
options = { tabels = 2 }
"#;
        let file = ExperimentFile::parse(text).unwrap();
        let p = problems(&home, &file, Path::new("/"));
        let all = p.join("\n");
        assert!(p.len() >= 5, "{all}");
        for needle in ["oltp_nope", "tabels", "not-registered", "'port'", "VERSUS_VALIDATE_TEST_UNSET"] {
            assert!(all.contains(needle), "{needle} missing from:\n{all}");
        }
        let shown = listing(&p);
        assert!(shown.starts_with(&format!("{} problems, nothing was run:\n  - ", p.len())), "{shown}");
    }

    #[test]
    fn the_insert_benchmarks_rows_count_toward_the_space_it_needs() {
        let plan = |workload: &str| {
            let text = format!(
                "name = \"g\"\nthreads = [2]\n[[targets]]\nname = \"a\"\nbuild = \"system\"\n[[workloads]]\n{workload}\n"
            );
            Plan::new(&ExperimentFile::parse(&text).unwrap(), Path::new("/")).unwrap()
        };
        assert_eq!(growth(&plan("test = \"oltp_point_select\"")), 0, "sysbench works on the prepared rows");
        let ib = plan("test = \"ibench\"\noptions = { rows = 1000000, rows_i1 = 100000, rows_i2 = 0 }");
        // 1 000 000 loaded + 100 000 written per client, 2 clients, 250 bytes a row.
        assert_eq!(growth(&ib), 2 * 1_100_000 * 250);
    }
}
