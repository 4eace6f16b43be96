//! `versus advise` on real servers: inspect the host and the current config, run the probe, derive the
//! candidates from the rules, drop what the server refuses or adjusts, and run the proof's
//! [`super::search`] with every step stored as a normal experiment (`NAME-probe`, `NAME-screen-1`,
//! `NAME-attribution-N`, `NAME-standins-N`, `NAME-confirm-N`) that `versus compare` and `versus report`
//! read like any other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::dedicated::{Dedicated, dedicated};
use super::facts::{Facts, ProbeFacts};
use super::gap::{GapSetting, dedicated_gap, unshared};
use super::inspect;
use super::memory::{MemoryEstimate, worst_case};
use super::model::{AdviseOptions, AdviseReport, DESCRIPTION_MARKER};
use super::rules::{Candidate, Considered, candidates};
use super::samples::{probe_facts, samples_at_least};
use super::search::{self, Bench, ConfigResult, SearchResult, SearchSettings, SearchStep, step_cost};
use crate::error::{Error, Result};
use crate::experiment::progress::human;
use crate::experiment::sandbox_executor::SandboxExecutor;
use crate::experiment::spec::{ConfigDef, TargetDef};
use crate::experiment::{ExperimentFile, Pace, Plan, Progress, RunOptions};
use crate::explain::bisect::Suspect;
use crate::explain::preflight::preflight;
use crate::explain::runner::{run_step_until, set_table};
use crate::explain::skip::Skipped;
use crate::explain::targets::TargetSpec;
use crate::explain::transfer::{merge_overrides, override_for};
use crate::server::Home;
use crate::stats::{BootstrapConfig, CompareConfig};
use crate::store::Store;

/// The overrides of `set` on top of the current config.
fn overrides(current: &TargetSpec, cands: &[Candidate], set: &[usize]) -> Vec<String> {
    let extra: Vec<String> = set.iter().map(|&i| override_for(&cands[i].variable, &cands[i].value)).collect();
    merge_overrides(&current.overrides, &extra)
}

/// The worst case of the current config with `set` on top.
fn memory_of(facts: &Facts, cands: &[Candidate], set: &[usize]) -> MemoryEstimate {
    let mut vars = facts.variables.clone();
    for &i in set {
        vars.insert(cands[i].variable.clone(), cands[i].value.clone());
    }
    worst_case(facts.flavor, facts.version, &|n| vars.get(n).cloned(), facts.memory)
}

/// An experiment of `targets` (label, overrides) on the current config's build.
fn experiment(
    current: &TargetSpec,
    opts: &AdviseOptions,
    name: String,
    targets: &[(String, Vec<String>)],
    repetitions: u32,
    threads: Vec<u32>,
    seed: u64,
) -> Result<ExperimentFile> {
    let configs: Vec<ConfigDef> =
        current.config.iter().map(|file| ConfigDef::of_file("current".into(), file)).collect();
    let targets = targets
        .iter()
        .map(|(label, o)| {
            Ok(TargetDef::sandbox(
                label.clone(),
                current.build.clone(),
                current.config.as_ref().map(|_| "current".to_string()),
                set_table(o)?,
                None,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ExperimentFile {
        threads,
        duration: opts.duration,
        warmup: opts.warmup,
        ..ExperimentFile::generated(
            name.clone(),
            format!("{DESCRIPTION_MARKER} {} ({name})", current.describe()),
            configs,
            targets,
            opts.workload.clone(),
            repetitions,
            seed,
        )
    })
}

/// The plan of a step's experiment, with the options that shape the data decided for the build's own
/// server line (as explain's steps), so candidates that shape data only elsewhere share one preparation.
fn step_plan(file: &ExperimentFile, home: &Home) -> Result<Plan> {
    Plan::for_home(file, Path::new("/"), home).map_err(Error::Other)
}

/// Runs each step as an experiment on sandboxes.
struct ServerBench<'a> {
    home: &'a Home,
    store: &'a mut Store,
    current: &'a TargetSpec,
    opts: &'a AdviseOptions,
    dedicated: Vec<String>,
    executor: SandboxExecutor,
    progress: Progress,
    experiments: Vec<(i64, String)>,
    started: Instant,
    per_run: Duration,
    log: &'a mut dyn FnMut(&str),
    /// The last step left runs at its deadline.
    cut: bool,
    /// What runs and the preparation took against their estimates, over all steps.
    pace: Pace,
    /// For the confirmation's stored description: the baseline, the current variables, what the rules
    /// did not propose and what the server refused.
    gap: GapContext,
    /// The baseline's settings the advice does not share, set before the confirmation.
    unshared: Vec<GapSetting>,
}

/// What [`unshared`] needs besides the search's findings.
#[derive(Default)]
struct GapContext {
    dedicated: Option<Dedicated>,
    cands: Vec<Candidate>,
    variables: BTreeMap<String, String>,
    considered: Vec<Considered>,
    refused: Vec<Skipped>,
}

impl ServerBench<'_> {
    /// Runs `file`, starting no run that would end after `deadline` (since advise started) by its estimate.
    fn run(&mut self, file: ExperimentFile, deadline: Duration) -> Result<i64> {
        let text =
            toml::to_string(&file).map_err(|e| Error::Other(format!("cannot write the step's experiment: {e}")))?;
        let plan = step_plan(&file, self.home)?;
        let (id, cut) = run_step_until(
            &text,
            &plan,
            self.store,
            &mut self.executor,
            &mut self.progress,
            &mut self.experiments,
            &RunOptions { deadline: Some(self.started + deadline), pace: self.pace.clone(), ..RunOptions::default() },
        )?;
        self.cut = cut;
        if cut {
            (self.log)(&format!(
                "{}: stopped at its time limit ({} s after the start); the runs left were not started",
                file.name,
                deadline.as_secs()
            ));
        }
        Ok(id)
    }
}

impl Bench for ServerBench<'_> {
    fn measure(&mut self, step: &SearchStep, cands: &[Candidate]) -> Result<Vec<ConfigResult>> {
        let phase = match step.phase {
            search::Phase::Screen => "screen".to_string(),
            search::Phase::Rung(k) => format!("rung{k}"),
            search::Phase::Attribution(_) => "attribution".to_string(),
            search::Phase::StandIns => "standins".to_string(),
            search::Phase::Confirm => "confirm".to_string(),
        };
        let name = format!("{}-{phase}-{}", self.opts.name, step.number);
        // Target labels are words without spaces: `current+buffer-pool`.
        let labels: Vec<String> = step.configs.iter().map(|c| c.label.replace(' ', "-")).collect();
        let targets: Vec<(String, Vec<String>)> = step
            .configs
            .iter()
            .zip(&labels)
            .map(|(c, l)| {
                let o = if c.dedicated {
                    merge_overrides(&self.current.overrides, &self.dedicated)
                } else {
                    overrides(self.current, cands, &c.set)
                };
                (l.clone(), o)
            })
            .collect();
        // The overall ETA: at the earliest this step and the confirmation after it, at the latest the budget.
        let elapsed = self.started.elapsed();
        let this = self.cost(targets.len(), step.repetitions);
        let confirm = match step.phase {
            search::Phase::Confirm => Duration::ZERO,
            _ => self.cost(
                2 + usize::from(!self.dedicated.is_empty()) + usize::from(self.opts.allow_durability),
                self.opts.confirm_repetitions,
            ),
        };
        let left = self.opts.budget.saturating_sub(elapsed);
        (self.log)(&format!(
            "step {} ({name}): {}; about {}; the advice ends in {} to {} ({} spent of the {} budget)",
            step.number,
            labels.join(", "),
            human(this),
            human((this + confirm).min(left)),
            human(left),
            human(elapsed),
            human(self.opts.budget)
        ));
        let seed = self.opts.seed.wrapping_add(step.number as u64);
        let mut file =
            experiment(self.current, self.opts, name, &targets, step.repetitions, self.opts.threads.clone(), seed)?;
        if step.phase == search::Phase::Confirm {
            // What the dedicated baseline sets that the advice does not, for the report of this
            // experiment, one line each after the description's first.
            for u in std::mem::take(&mut self.unshared) {
                file.description = file.description.map(|d| format!("{d}\n{}", u.line()));
            }
        }
        let id = self.run(file, Duration::from_secs(step.deadline_s))?;
        let mut by = samples_at_least(self.store, id, self.opts.metric, step.repetitions.min(2) as usize)?;
        Ok(labels.iter().map(|l| by.remove(l).unwrap_or_else(|| Err(format!("no runs of {l}")))).collect())
    }

    /// The estimate, scaled by how much longer than estimated the runs so far took.
    fn cost(&self, configs: usize, repetitions: u32) -> Duration {
        step_cost(configs, repetitions, self.opts.threads.len(), self.per_run).mul_f64(self.pace.typical())
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn stopped_at_deadline(&self) -> bool {
        self.cut
    }

    fn before_confirmation(&mut self, found: &SearchResult) {
        let g = &self.gap;
        if let Some(d) = &g.dedicated {
            self.unshared =
                unshared(d, &g.variables, &g.cands, &found.fates, &found.contributions, &g.considered, &g.refused);
        }
    }
}

/// The probe: the current config once at the largest thread count; its counter deltas.
fn probe(bench: &mut ServerBench<'_>) -> Result<ProbeFacts> {
    let threads = *bench.opts.threads.iter().max().unwrap_or(&1);
    let name = format!("{}-probe", bench.opts.name);
    (bench.log)(&format!("probe ({name}): the current config at {threads} thread(s)"));
    let file = experiment(
        bench.current,
        bench.opts,
        name,
        &[("current".into(), bench.current.overrides.clone())],
        1,
        vec![threads],
        bench.opts.seed,
    )?;
    let id = bench.run(file, bench.opts.budget)?;
    probe_facts(bench.store, id, bench.opts.metric, bench.opts.duration)
}

/// The search settings of `opts`.
fn settings(opts: &AdviseOptions, memory_limit: u64, dedicated: bool) -> SearchSettings {
    SearchSettings {
        budget: opts.budget,
        compare: CompareConfig {
            direction: opts.metric.direction(),
            noise_band: opts.noise_band,
            bootstrap: BootstrapConfig { confidence: opts.confidence, seed: 0x5EED, ..BootstrapConfig::default() },
        },
        threads: opts.threads.clone(),
        screen_repetitions: opts.screen_repetitions,
        attribution_repetitions: opts.attribution_repetitions,
        confirm_repetitions: opts.confirm_repetitions,
        allow_durability: opts.allow_durability,
        dedicated,
        singles_max: 4,
        extra_rounds: 1,
        adaptive: opts.adaptive,
        memory_limit,
    }
}

/// Checks what can be checked before anything starts.
pub fn validate(opts: &AdviseOptions) -> Result<()> {
    if opts.confirm_repetitions < 5 {
        return Err(Error::option("--confirm-repetitions", "needs at least 5 (shuffled) repetitions"));
    }
    for (flag, n) in
        [("--screen-repetitions", opts.screen_repetitions), ("--repetitions", opts.attribution_repetitions)]
    {
        if n < 2 {
            return Err(Error::option(
                flag,
                format!("{n} is too few: needs at least 2, so that every step has an interval"),
            ));
        }
    }
    if opts.threads.is_empty() || opts.threads.contains(&0) {
        return Err(Error::option("--threads", "give thread counts of at least 1, e.g. --threads 2,8"));
    }
    Ok(())
}

/// `versus advise`: inspects, then (unless `dry_run`) runs the probe and the proof. `work` and the
/// executor's sandboxes are removed at the end.
#[allow(clippy::too_many_arguments)]
pub fn advise(
    home: &Home,
    store: &mut Store,
    current: &TargetSpec,
    opts: &AdviseOptions,
    dry_run: bool,
    progress: Progress,
    log: &mut dyn FnMut(&str),
) -> Result<AdviseReport> {
    validate(opts)?;
    let started = Instant::now();
    let build = home.build(&current.build)?;
    let work: PathBuf = home.root().join("advise").join(crate::owned::slug(&opts.name));
    // The work directory and its entries are versus's: a link to a place versus did not make is refused.
    crate::owned::check_dir(&work)?;
    crate::owned::check_entries(&work)?;
    // The time per run, from a plan of the probe's shape: one and two repetitions of every thread count.
    let plan_of = |reps| -> Result<Duration> {
        let f =
            experiment(current, opts, "estimate".into(), &[("current".into(), vec![])], reps, opts.threads.clone(), 0)?;
        Ok(step_plan(&f, home)?.estimate())
    };
    let (one, two) = (plan_of(1)?, plan_of(2)?);
    let per_run = two.saturating_sub(one) / opts.threads.len() as u32;
    let prepare = one.saturating_sub(per_run * opts.threads.len() as u32);
    let threads = opts.threads.len();
    let confirm = step_cost(3, opts.confirm_repetitions, threads, per_run);
    let screen = step_cost(2, opts.screen_repetitions.min(super::search::MIN_FITTED_SCREEN), threads, per_run);
    let minimum = prepare + per_run + screen + confirm + Duration::from_secs(60);
    if opts.budget < minimum {
        return Err(Error::option(
            "--budget",
            format!(
                "{} min is below the minimum of about {} min for this workload (inspection, probe, one screening \
                 step and the confirmation at {} s per run); give --budget {}m or more, or shorter --duration",
                opts.budget.as_secs() / 60,
                minimum.as_secs().div_ceil(60),
                per_run.as_secs(),
                minimum.as_secs().div_ceil(60)
            ),
        ));
    }
    let result = (|| {
        log("inspecting the host and the datadir's file system (fsync probe)");
        let host = inspect::host(&work)?;
        let memory = inspect::memory_for(&host, opts.memory_gib)?;
        log(&format!("reading the variables of the current config ({})", current.describe()));
        let (vars, version) = inspect::server(home, current, &work)?;
        let mut facts = inspect::facts(&build, &host, memory, vars, *opts.threads.iter().max().unwrap_or(&1));
        let mut bench = ServerBench {
            home,
            store,
            current,
            opts,
            dedicated: vec![],
            executor: SandboxExecutor::new(home, &opts.name),
            progress,
            experiments: vec![],
            started,
            per_run,
            log,
            cut: false,
            pace: Pace::default(),
            gap: GapContext::default(),
            unshared: vec![],
        };
        let mut probe_summary = None;
        if !dry_run {
            (bench.log)(&format!(
                "the data is prepared once (about {}, counted in the budget), then the probe runs (about {})",
                human(prepare),
                human(per_run)
            ));
            let p = probe(&mut bench)?;
            // The prepared data (every database of the snapshot but the server's own), plus what the
            // workload's runs add to it (the Insert Benchmark loads its tables in its first step).
            let snap = bench.executor.work_dir().join("snapshot-0");
            let (bytes, tables) = inspect::data_size(&snap);
            let plan = step_plan(
                &experiment(current, opts, "growth".into(), &[("current".into(), vec![])], 1, opts.threads.clone(), 0)?,
                home,
            )?;
            let top = *opts.threads.iter().max().unwrap_or(&1);
            let growth: u64 = plan.workloads.iter().map(|w| w.disk_growth(top)).sum();
            if bytes + growth > 0 {
                facts.data_bytes = Some(bytes + growth);
                facts.tables = (tables > 0).then_some(tables);
            }
            probe_summary = Some(inspect::summarize(&p, &facts));
            facts.probe = Some(p);
        }
        let (mut cands, considered) = candidates(&facts);
        let mut refused = Vec::new();
        if !cands.is_empty() {
            (bench.log)(&format!("checking that the server starts with each of {} candidate value(s)", cands.len()));
            let as_bisect: Vec<Suspect> = cands
                .iter()
                .map(|c| Suspect::new(c.variable.clone(), c.value.clone(), c.old.clone().unwrap_or_default()))
                .collect();
            let (ok, skipped) = preflight(home, current, as_bisect, &work, &mut *bench.log)?;
            cands.retain(|c| ok.iter().any(|o| o.name == c.variable && o.a == c.value));
            refused = skipped;
        }
        let base = dedicated(&facts);
        bench.dedicated = base.as_ref().map(|d| d.overrides.clone()).unwrap_or_default();
        bench.gap = GapContext {
            dedicated: base.clone(),
            cands: cands.clone(),
            variables: facts.variables.clone(),
            considered: considered.clone(),
            refused: refused.clone(),
        };
        let memory_current = memory_of(&facts, &cands, &[]);
        let s = settings(opts, memory_current.limit, base.is_some());
        let spent = started.elapsed();
        let safe: Vec<&Candidate> = cands.iter().filter(|c| c.risk != super::rules::Risk::Durability).collect();
        let rows: u64 = step_plan(
            &experiment(current, opts, "rows".into(), &[("current".into(), vec![])], 1, opts.threads.clone(), 0)?,
            home,
        )?
        .preparations
        .iter()
        .map(|p| p.rows)
        .sum();
        let mut plan = vec![match dry_run {
            true => format!("inspection: {} s (spent)", spent.as_secs()),
            false => format!("inspection, preparing the data and the probe: {} s (spent)", spent.as_secs()),
        }];
        if dry_run {
            plan.push(format!(
                "preparing the data ({rows} rows) and its snapshot, once: about {}; the probe (1 run): about {}",
                human(prepare),
                human(per_run)
            ));
        }
        plan.extend([
            format!(
                "screening: {} group(s) of {} candidate(s){} against the current config, {} repetition(s): about {} s \
                 per config (the current config, all together, one per group)",
                safe.iter().map(|c| c.area).collect::<std::collections::BTreeSet<_>>().len(),
                safe.len(),
                if dry_run { " known before the probe (the probe's rules add more)" } else { "" },
                opts.screen_repetitions,
                step_cost(1, opts.screen_repetitions, threads, per_run).as_secs()
            ),
            format!(
                "successive halving, leave-one-out attribution and values that stand in for each other measured one by \
                 one ({} repetitions per probe): what the budget leaves",
                opts.attribution_repetitions
            ),
            format!(
                "confirmation: current{} vs advised{}, {} shuffled repetitions (up to twice as many with values on \
                 trial, when the budget leaves room): about {} s",
                if base.is_some() { " vs dedicated" } else { "" },
                if opts.allow_durability { " vs advised+durability" } else { "" },
                opts.confirm_repetitions,
                confirm.as_secs()
            ),
        ]);
        let mut report = AdviseReport {
            target: current.describe(),
            server_version: version,
            workload: opts.workload.label(),
            threads: opts.threads.clone(),
            metric: opts.metric.name().to_string(),
            noise_band: opts.noise_band,
            noise_band_source: opts.noise_band_source.clone(),
            budget_s: opts.budget.as_secs(),
            seconds_per_run: per_run.as_secs(),
            facts: facts.clone(),
            probe: probe_summary,
            candidates: cands.clone(),
            considered,
            refused,
            dedicated: base,
            memory_current,
            memory_advised: None,
            plan,
            estimate_s: opts.budget.as_secs(),
            result: None,
            dedicated_gap: None,
            experiments: vec![],
            elapsed_s: 0,
        };
        if dry_run {
            report.elapsed_s = started.elapsed().as_secs();
            return Ok(report);
        }
        let memory = |set: &[usize]| memory_of(&facts, &cands, set).total;
        let outcome = search::search(&cands, &s, &memory, &mut bench);
        let _ = crate::owned::remove(bench.executor.work_dir());
        report.experiments = std::mem::take(&mut bench.experiments);
        let outcome = outcome?;
        let all: Vec<usize> = (0..cands.len()).filter(|&i| outcome.fates[i].recommended().is_some()).collect();
        if !all.is_empty() {
            report.memory_advised = Some(memory_of(&facts, &cands, &all));
        }
        report.dedicated_gap = report
            .dedicated
            .as_ref()
            .and_then(|d| dedicated_gap(d, &facts.variables, &cands, &outcome, &report.considered, &report.refused));
        report.result = Some(outcome);
        report.elapsed_s = started.elapsed().as_secs();
        Ok(report)
    })();
    let _ = crate::owned::remove(&work);
    result
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
