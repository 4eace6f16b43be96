//! Choosing what to compare: experiments, filters, the compared dimension and the baseline, and the
//! checks that refuse a meaningless comparison.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{Case, Dimension, Side};
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::sampler::Fingerprint;
use crate::stats::DEFAULT_NOISE_BAND;
use crate::store::{Experiment, RunDetail, RunRow, Status, Store, canonical_attempts};

/// What to compare; see `versus compare --help`.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Experiments by id or name (a name means its latest run); empty: the latest experiment.
    pub experiments: Vec<String>,
    /// What the sides are.
    pub vs: Dimension,
    /// The baseline side's label; default the first side.
    pub baseline: Option<String>,
    /// The compared metric.
    pub metric: Metric,
    /// Only these target labels (empty: all).
    pub targets: Vec<String>,
    /// Only these builds (empty: all).
    pub builds: Vec<String>,
    /// Only these configs (empty: all).
    pub configs: Vec<String>,
    /// Only these workload labels (empty: all).
    pub workloads: Vec<String>,
    /// Only these thread counts (empty: all).
    pub threads: Vec<u32>,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Relative noise band: the fallback, or the band itself when `use_calibration` is false.
    pub noise_band: f64,
    /// Use the band `versus calibrate` stored for the host class and workloads of the runs when there
    /// is one (`--noise-band` not given); see [`super::noise::resolve`].
    pub use_calibration: bool,
    /// Compare runs of different workloads anyway.
    pub force: bool,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            experiments: Vec::new(),
            vs: Dimension::Target,
            baseline: None,
            metric: Metric::Tps,
            targets: Vec::new(),
            builds: Vec::new(),
            configs: Vec::new(),
            workloads: Vec::new(),
            threads: Vec::new(),
            confidence: crate::stats::DEFAULT_CONFIDENCE,
            noise_band: DEFAULT_NOISE_BAND,
            use_calibration: true,
            force: false,
        }
    }
}

/// A finished run with everything stored for it, placed in the comparison.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// The run and its stored data.
    pub detail: RunDetail,
    /// Index into [`Selected::cases`].
    pub case: usize,
    /// Index into [`Selected::sides`].
    pub side: usize,
    /// The decoded whole-run latency histogram, if stored.
    pub histogram: Option<hdrhistogram::Histogram<u64>>,
    /// The host that measured the run's block, for runs of a fleet (block attempts stored).
    pub host: Option<String>,
}

/// The runs chosen by a [`Selection`], placed on sides and cases.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The experiments, in the order asked for.
    pub experiments: Vec<Experiment>,
    /// The sides, baseline first.
    pub sides: Vec<Side>,
    /// The cases.
    pub cases: Vec<Case>,
    /// Finished runs.
    pub runs: Vec<LoadedRun>,
    /// Caveats found while selecting.
    pub notes: Vec<String>,
}

/// The selected runs as the workloads see them, for their own report sections.
pub fn stored_runs<'a>(s: &'a Selected, sel: &Selection) -> crate::workload::StoredRuns<'a> {
    crate::workload::StoredRuns {
        sides: s.sides.iter().map(|side| side.label.clone()).collect(),
        runs: s
            .runs
            .iter()
            .map(|r| crate::workload::StoredRun {
                detail: &r.detail,
                side: r.side,
                group: s.cases[r.case].group.as_deref(),
                threads: s.cases[r.case].threads,
                histogram: r.histogram.as_ref(),
            })
            .collect(),
        logical_cpus: s.experiments.first().and_then(|e| e.host.logical_cpus),
        confidence: sel.confidence,
        noise_band: sel.noise_band,
    }
}

/// The stored section (`from_stored`) of every selected experiment that has one, in the order asked
/// for. Sections are compared on tps where the selection asks for a histogram percentile, which their
/// readers do not load.
pub fn stored_sections<T>(
    store: &Store,
    s: &Selected,
    sel: &Selection,
    from_stored: impl Fn(&Store, &Experiment, Metric, f64, f64) -> Result<Option<T>>,
) -> Result<Vec<T>> {
    let metric = match sel.metric {
        Metric::P50 | Metric::P90 | Metric::P999 => Metric::Tps,
        m => m,
    };
    let mut out = Vec::new();
    for e in &s.experiments {
        if let Some(sec) = from_stored(store, e, metric, sel.noise_band, sel.confidence)? {
            out.push(sec);
        }
    }
    Ok(out)
}

/// Finds an experiment by id or name.
fn resolve_experiment(store: &Store, spec: &str) -> Result<Experiment> {
    if let Ok(id) = spec.parse::<i64>()
        && let Some(e) = store.experiment(id)?
    {
        return Ok(e);
    }
    if let Some(e) = store.latest_experiment_named(spec)? {
        return Ok(e);
    }
    let known = store.list_experiments()?;
    let hint = if known.is_empty() {
        "the store has no experiments yet; run one with `versus run FILE`".to_string()
    } else {
        let names: Vec<String> = known.iter().take(8).map(|e| format!("{} (id {})", e.name, e.id)).collect();
        format!("stored experiments: {}", names.join(", "))
    };
    Err(Error::Other(format!("experiment '{spec}' is not in the results store {}; {hint}", store.path().display())))
}

/// The side value of a run's cell for the compared dimension.
fn side_value(vs: Dimension, r: &RunRow) -> String {
    let c = &r.cell;
    match vs {
        Dimension::Target => c.target.clone(),
        Dimension::Build => c.build.clone().unwrap_or_else(|| c.target.clone()),
        Dimension::Config => c.config.clone().unwrap_or_else(|| c.target.clone()),
    }
}

/// The group of a run's cell: its config when builds are compared, its build when configs are.
fn group_value(vs: Dimension, r: &RunRow) -> Option<String> {
    let c = &r.cell;
    match vs {
        Dimension::Target => None,
        Dimension::Build => Some(c.config.clone().unwrap_or_else(|| "default".to_string())),
        Dimension::Config => Some(c.build.clone().unwrap_or_else(|| c.target.clone())),
    }
}

/// Fails when `wanted` names something `have` lacks, listing what there is.
fn check_filter(flag: &str, wanted: &[String], have: &BTreeSet<String>) -> Result<()> {
    for w in wanted {
        if !have.contains(w) {
            let list: Vec<&str> = have.iter().map(String::as_str).collect();
            return Err(Error::option(
                flag,
                format!("no runs of '{w}' in the selected experiments; choose from {}", list.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A short description of a workload's options for error messages.
fn describe_options(v: &serde_json::Value) -> String {
    match v.as_object() {
        Some(o) => {
            let parts: Vec<String> = o.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{{{}}}", parts.join(", "))
        }
        None => v.to_string(),
    }
}

/// Chooses the runs of `sel` from `store` and places them on sides and cases.
///
/// Errors (one line each, naming the flag): an unknown experiment, a filter matching nothing, an
/// unknown baseline or one without finished runs, cells of one side that mix targets, and runs of
/// different workloads (unless `sel.force`).
pub fn select(store: &Store, sel: &Selection) -> Result<Selected> {
    if !(sel.confidence > 0.0 && sel.confidence < 1.0) {
        return Err(Error::option("--confidence", format!("{} must lie strictly between 0 and 1", sel.confidence)));
    }
    if !(sel.noise_band >= 0.0 && sel.noise_band < 1.0) {
        return Err(Error::option("--noise-band", format!("{} must be a fraction in [0, 1), e.g. 2%", sel.noise_band)));
    }
    let mut experiments: Vec<Experiment> = Vec::new();
    if sel.experiments.is_empty() {
        let Some(latest) = store.list_experiments()?.into_iter().next() else {
            return Err(Error::Other(format!(
                "the results store {} has no experiments yet; run one with `versus run FILE`",
                store.path().display()
            )));
        };
        experiments.extend(store.experiment(latest.id)?);
    }
    for spec in &sel.experiments {
        let e = resolve_experiment(store, spec)?;
        if !experiments.iter().any(|x| x.id == e.id) {
            experiments.push(e);
        }
    }

    // Every run of the experiments, cell order within each experiment.
    let mut all: Vec<RunRow> = Vec::new();
    for e in &experiments {
        let mut runs = store.runs(e.id)?;
        runs.sort_by_key(|r| (r.cell.id, r.repetition));
        all.extend(runs);
    }
    let set = |f: &dyn Fn(&RunRow) -> Option<String>| all.iter().filter_map(f).collect::<BTreeSet<String>>();
    check_filter("--target", &sel.targets, &set(&|r| Some(r.cell.target.clone())))?;
    check_filter("--build", &sel.builds, &set(&|r| r.cell.build.clone()))?;
    check_filter("--config", &sel.configs, &set(&|r| r.cell.config.clone()))?;
    check_filter("--workload", &sel.workloads, &set(&|r| Some(r.cell.workload.clone())))?;
    let threads: BTreeSet<u32> = all.iter().map(|r| r.cell.threads).collect();
    if let Some(t) = sel.threads.iter().find(|t| !threads.contains(t)) {
        let list: Vec<String> = threads.iter().map(u32::to_string).collect();
        return Err(Error::option("--threads", format!("no runs at {t} threads; choose from {}", list.join(", "))));
    }
    let keep = |wanted: &[String], v: Option<&String>| wanted.is_empty() || v.is_some_and(|v| wanted.contains(v));
    all.retain(|r| {
        let c = &r.cell;
        keep(&sel.targets, Some(&c.target))
            && keep(&sel.builds, c.build.as_ref())
            && keep(&sel.configs, c.config.as_ref())
            && keep(&sel.workloads, Some(&c.workload))
            && (sel.threads.is_empty() || sel.threads.contains(&c.threads))
    });
    if all.is_empty() {
        return Err(Error::Other("no runs match the selection; loosen --target/--build/--config/--workload".into()));
    }

    // Sides: a value used by several experiments is qualified with the experiment id.
    let mut side_values: Vec<(String, i64)> = Vec::new();
    for r in &all {
        let key = (side_value(sel.vs, r), r.experiment_id);
        if !side_values.contains(&key) {
            side_values.push(key);
        }
    }
    let label_of = |value: &str, exp: i64| {
        if side_values.iter().filter(|(v, _)| v == value).count() > 1 { format!("{value}@{exp}") } else { value.into() }
    };
    let mut sides: Vec<Side> = Vec::new();
    let mut run_side: Vec<usize> = Vec::with_capacity(all.len());
    for r in &all {
        let label = label_of(&side_value(sel.vs, r), r.experiment_id);
        let i = match sides.iter().position(|s| s.label == label) {
            Some(i) => i,
            None => {
                sides.push(Side {
                    label,
                    baseline: false,
                    experiments: vec![r.experiment_id],
                    targets: Vec::new(),
                    server_versions: Vec::new(),
                    runs_done: 0,
                    runs_failed: 0,
                    runs_unfinished: 0,
                });
                sides.len() - 1
            }
        };
        let s = &mut sides[i];
        if !s.targets.contains(&r.cell.target) {
            s.targets.push(r.cell.target.clone());
        }
        match r.status {
            Status::Done => s.runs_done += 1,
            Status::Failed => s.runs_failed += 1,
            _ => s.runs_unfinished += 1,
        }
        // MariaDB appends "-log" to its version while the binary log is on: one build, one version.
        if let Some(v) = r.server_version.as_deref().map(|v| v.strip_suffix("-log").unwrap_or(v))
            && r.status == Status::Done
            && !s.server_versions.iter().any(|x| x == v)
        {
            s.server_versions.push(v.to_string());
        }
        run_side.push(i);
    }

    // The baseline goes first.
    let base = match &sel.baseline {
        None => 0,
        Some(b) => {
            let exact = sides.iter().position(|s| &s.label == b);
            let by_value: Vec<usize> = sides
                .iter()
                .enumerate()
                .filter(|(_, s)| s.label.split('@').next() == Some(b))
                .map(|(i, _)| i)
                .collect();
            match (exact, by_value.as_slice()) {
                (Some(i), _) | (None, &[i]) => i,
                _ => {
                    let labels: Vec<&str> = sides.iter().map(|s| s.label.as_str()).collect();
                    let what = if by_value.len() > 1 { "is ambiguous" } else { "is not among the selected runs" };
                    return Err(Error::option(
                        "--baseline",
                        format!("{} '{b}' {what}; choose one of {}", sel.vs.name(), labels.join(", ")),
                    ));
                }
            }
        }
    };
    if sides[base].runs_done == 0 {
        let s = &sides[base];
        let with_runs: Vec<String> = sides
            .iter()
            .filter(|x| x.runs_done > 0)
            .map(|x| format!("{} ({} finished)", x.label, x.runs_done))
            .collect();
        let choose = if with_runs.is_empty() {
            "no other has finished runs either".to_string()
        } else {
            format!("{} with finished runs: {}; choose one with --baseline LABEL", sel.vs.name(), with_runs.join(", "))
        };
        let finish: Vec<String> = s.experiments.iter().map(|&id| crate::experiment::resume_command(id, None)).collect();
        return Err(Error::option(
            "--baseline",
            format!(
                "{} '{}' has no finished runs ({} failed, {} not finished); {choose}, or finish its runs with `{}`",
                sel.vs.name(),
                s.label,
                s.runs_failed,
                s.runs_unfinished,
                finish.join("` and `")
            ),
        ));
    }
    let mut order: Vec<usize> = (0..sides.len()).collect();
    order.retain(|&i| i != base);
    order.insert(0, base);
    let new_index: Vec<usize> = (0..sides.len()).map(|old| order.iter().position(|&o| o == old).unwrap_or(0)).collect();
    let mut sides: Vec<Side> = order.iter().map(|&i| sides[i].clone()).collect();
    sides[0].baseline = true;
    let run_side: Vec<usize> = run_side.iter().map(|&i| new_index[i]).collect();

    // One side must not pool different targets within a case (e.g. two targets with the same build
    // and config that differ by `set` options).
    if sel.vs != Dimension::Target {
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate().skip(i + 1) {
                if run_side[i] == run_side[j]
                    && group_value(sel.vs, a) == group_value(sel.vs, b)
                    && a.cell.workload == b.cell.workload
                    && a.cell.threads == b.cell.threads
                    && a.cell.target != b.cell.target
                {
                    return Err(Error::option(
                        "--vs",
                        format!(
                            "targets '{}' and '{}' share {} '{}' and {} '{}' but are different targets; compare them \
                             with --vs target",
                            a.cell.target,
                            b.cell.target,
                            sel.vs.name(),
                            side_value(sel.vs, a),
                            sel.vs.group_name().unwrap_or("group"),
                            group_value(sel.vs, a).unwrap_or_default()
                        ),
                    ));
                }
            }
        }
    }

    let workload_of = workload_labels(&all, &run_side, sides.len(), sel.force)?;
    check_workload_options(&all, &run_side, &workload_of, &sides, sel.force)?;

    // Cases, in the order workloads and groups first appear, threads ascending.
    let mut cases: Vec<Case> = Vec::new();
    for (i, r) in all.iter().enumerate() {
        let c = Case { workload: workload_of[i].clone(), group: group_value(sel.vs, r), threads: r.cell.threads };
        if !cases.contains(&c) {
            cases.push(c);
        }
    }
    let first = |f: &dyn Fn(&Case) -> String| {
        let mut seen: Vec<String> = Vec::new();
        for c in &cases {
            let v = f(c);
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
        seen
    };
    let workload_rank = first(&|c| c.workload.clone());
    let group_rank = first(&|c| c.group.clone().unwrap_or_default());
    let rank = |v: &str, list: &[String]| list.iter().position(|x| x == v).unwrap_or(0);
    cases.sort_by_key(|c| {
        (rank(&c.workload, &workload_rank), rank(c.group.as_deref().unwrap_or(""), &group_rank), c.threads)
    });

    // Fleet experiments: the host and class of the attempt that measured each block (repetition).
    let mut block_hosts = BlockHosts::new();
    for e in &experiments {
        let attempts = store.block_attempts(e.id)?;
        for (block, a) in canonical_attempts(&attempts) {
            block_hosts.insert((e.id, block + 1), (a.host.clone(), a.host_class.clone()));
        }
    }
    let mut notes = Vec::new();
    if let Some(note) = check_host_classes(&experiments, &all, &block_hosts, sel.force)? {
        notes.push(note);
    }
    if sel.force && workload_of.iter().zip(&all).any(|(w, r)| *w != r.cell.workload) {
        notes.push("--force: runs of different workloads are compared with each other".to_string());
    }
    let mut runs = Vec::new();
    for (i, r) in all.iter().enumerate() {
        if r.status != Status::Done {
            continue;
        }
        let detail = store.run(r.id)?.ok_or_else(|| Error::Other(format!("run {} vanished from the store", r.id)))?;
        let histogram = detail
            .histograms
            .iter()
            .find(|h| h.kind == "total" && h.t_s.is_none())
            .and_then(|h| crate::store::decode_histogram(&h.data).ok());
        let c = Case { workload: workload_of[i].clone(), group: group_value(sel.vs, r), threads: r.cell.threads };
        let case = cases.iter().position(|x| *x == c).unwrap_or(0);
        let host = block_hosts.get(&(r.experiment_id, r.repetition)).and_then(|(h, _)| h.clone());
        runs.push(LoadedRun { detail, case, side: run_side[i], histogram, host });
    }
    let failed: usize = sides.iter().map(|s| s.runs_failed + s.runs_unfinished).sum();
    if failed > 0 {
        notes.push(format!("{failed} selected run(s) are failed or unfinished and are left out"));
    }
    Ok(Selected { experiments, sides, cases, runs, notes })
}

/// (experiment id, repetition) -> (host, host class) of the attempt that measured that block.
type BlockHosts = BTreeMap<(i64, u32), (Option<String>, Option<String>)>;

/// Refuses, unless `force`, runs measured on hosts of different classes (see
/// [`crate::sampler::Fingerprint`]): their differences may be the hardware's. With `force` it returns the
/// note every output carries. Experiments whose host is entirely unknown are not judged. The blocks of a
/// fleet experiment count with the class of the host that measured them (`block_hosts`).
fn check_host_classes(
    experiments: &[Experiment],
    all: &[RunRow],
    block_hosts: &BlockHosts,
    force: bool,
) -> Result<Option<String>> {
    let mut classes: Vec<(String, String)> = Vec::new();
    for r in all {
        if let Some((host, Some(class))) = block_hosts.get(&(r.experiment_id, r.repetition))
            && !classes.iter().any(|(c, _)| c == class)
        {
            classes.push((class.clone(), format!("host {}", host.as_deref().unwrap_or("?"))));
        }
    }
    for e in experiments.iter().filter(|e| {
        all.iter().any(|r| r.experiment_id == e.id && !block_hosts.contains_key(&(r.experiment_id, r.repetition)))
    }) {
        let f = Fingerprint::of(&e.host);
        if f == Fingerprint::default() {
            continue;
        }
        let class = f.class();
        if !classes.iter().any(|(c, _)| *c == class) {
            classes.push((class, f.describe()));
        }
    }
    if classes.len() < 2 {
        return Ok(None);
    }
    let list: Vec<String> = classes.iter().map(|(c, d)| format!("{c}: {d}")).collect();
    if !force {
        return Err(Error::option(
            "--force",
            format!(
                "the selected runs were measured on {} host classes ({}); results from different hardware are \
                 not comparable. Compare within one class, or pass --force to compare them anyway",
                classes.len(),
                list.join("; ")
            ),
        ));
    }
    Ok(Some(format!(
        "--force: runs from {} host classes are compared ({}); differences may be the hardware's",
        classes.len(),
        list.join("; ")
    )))
}

/// The workload label each run is compared under. Sides whose workloads share no name with the
/// baseline's are refused, unless `force`, in which case (with one workload per side) the workloads are
/// paired with each other.
fn workload_labels(all: &[RunRow], run_side: &[usize], sides: usize, force: bool) -> Result<Vec<String>> {
    let names = |side: usize| -> BTreeSet<&str> {
        all.iter().zip(run_side).filter(|(_, s)| **s == side).map(|(r, _)| r.cell.workload.as_str()).collect()
    };
    let base = names(0);
    let disjoint: Vec<usize> = (1..sides).filter(|&s| !names(s).is_empty() && names(s).is_disjoint(&base)).collect();
    if disjoint.is_empty() {
        return Ok(all.iter().map(|r| r.cell.workload.clone()).collect());
    }
    let side_desc = |s: usize| names(s).into_iter().collect::<Vec<_>>().join(", ");
    if !force {
        let s = disjoint[0];
        let label = all.iter().zip(run_side).find(|(_, x)| **x == s).map(|(r, _)| r.cell.target.clone());
        return Err(Error::option(
            "--force",
            format!(
                "runs of different workloads: the baseline ran {} but '{}' ran {}; their numbers are not comparable. \
                 Select one workload (--workload) or pass --force to compare them anyway",
                side_desc(0),
                label.unwrap_or_default(),
                side_desc(s)
            ),
        ));
    }
    if (0..sides).any(|s| names(s).len() > 1) {
        return Err(Error::option(
            "--force",
            "cannot pair different workloads when a side ran several; select one workload per side with --workload",
        ));
    }
    let mut all_names: Vec<&str> = Vec::new();
    for r in all {
        if !all_names.contains(&r.cell.workload.as_str()) {
            all_names.push(&r.cell.workload);
        }
    }
    let joined = all_names.join(" / ");
    Ok(all.iter().map(|_| joined.clone()).collect())
}

/// Refuses, unless `force`, a case whose sides ran the same workload name with different options.
fn check_workload_options(
    all: &[RunRow],
    run_side: &[usize],
    workload_of: &[String],
    sides: &[Side],
    force: bool,
) -> Result<()> {
    if force {
        return Ok(());
    }
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate().skip(i + 1) {
            if workload_of[i] == workload_of[j] && a.cell.workload_options != b.cell.workload_options {
                return Err(Error::option(
                    "--force",
                    format!(
                        "runs of different workloads: '{}' is {} for '{}' but {} for '{}'; their numbers are not \
                         comparable. Select runs of one workload or pass --force to compare them anyway",
                        a.cell.workload,
                        describe_options(&a.cell.workload_options),
                        sides[run_side[i]].label,
                        describe_options(&b.cell.workload_options),
                        sides[run_side[j]].label
                    ),
                ));
            }
        }
    }
    Ok(())
}
