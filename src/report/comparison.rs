//! Builds the [`CompareReport`] from the store: the metric per case and side, each candidate's ratio
//! to the baseline with its interval and verdict, stability per run, efficiency, latency percentiles,
//! the variables that differ, and the experiment definitions.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{
    CellStats, CiKind, ClientBound, CompareReport, Detectable, ExperimentInfo, MetricInfo, REPORT_FORMAT_VERSION,
    RatioRow, RunInfo, RunStability, VariableDiff, VariableRow, Verdict,
};
use super::select::{LoadedRun, Selected, Selection, select};
use super::values::{used_metrics, values_of, values_rows};
use super::variables::{TargetFacts, classify, flavor_of};
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::stats::{
    self, BootstrapConfig, BootstrapMethod, CiMethod, CompareConfig, DEFAULT_POWER, SampleLevel, StallRule,
};
use crate::store::Store;

/// Builds the comparison that `sel` asks for from `store`.
///
/// Errors: those of the selection (unknown experiment, bad filters or baseline, different workloads
/// without `force`) and a metric that no selected run recorded.
pub fn build_report(store: &Store, sel: &Selection) -> Result<CompareReport> {
    let selected = select(store, sel)?;
    let bands = super::noise::resolve(store, &selected, sel)?;
    let band = bands.summary.clone();
    let sel = &Selection { noise_band: band.band, ..sel.clone() };
    let explicit = super::explain::explicit_variables(&selected);
    let changes = super::explain::variable_changes(&selected, &explicit);
    let explain = super::explain::explain_sections(store, &selected, sel)?;
    let advise = super::advise_section::advise_sections(store, &selected, sel)?;
    let findings = super::explain::findings(&explain);
    let baseline = selected.sides.iter().position(|s| s.baseline).unwrap_or(0);
    let profiles = super::profile::sections(store, &selected, baseline, sel.confidence)?;
    let mut r = from_selected(selected, sel, &bands.per_case, &explicit, &findings)?;
    r.profiles = profiles;
    r.noise_band_source = band.source;
    r.variable_changes = changes;
    // The targets of a `versus explain` step are not an ordered series.
    r.series = if explain.is_empty() { super::explain::series_section(&r) } else { None };
    r.explain = explain;
    r.advise = advise;
    Ok(r)
}

/// The report from runs already selected and placed.
fn from_selected(
    s: Selected,
    sel: &Selection,
    bands: &[super::model::CaseBand],
    explicit: &super::explain::Explicit,
    findings: &BTreeSet<String>,
) -> Result<CompareReport> {
    let metric = sel.metric;
    let sections = crate::workload::registry::sections(&super::select::stored_runs(&s, sel));
    let mut notes = s.notes.clone();
    let present = s.runs.iter().filter(|r| values_of(r, metric).is_some()).count();
    if present == 0 {
        let why = match metric {
            Metric::P50 | Metric::P90 | Metric::P999 => "they were stored without a latency histogram",
            m if m.kind() == crate::metric::MetricKind::Cost => {
                "they were stored without per-transaction costs (no access to the server process, or an older versus)"
            }
            _ => "they were stored by an older versus",
        };
        return Err(Error::option(
            "--metric",
            format!(
                "{metric} is not stored for any of the {} selected runs ({why}); choose another metric",
                s.runs.len()
            ),
        ));
    }
    if present < s.runs.len() {
        notes.push(format!(
            "{metric} is missing for {} of {} runs (stored without it); those runs are left out of its figures",
            s.runs.len() - present,
            s.runs.len()
        ));
    }

    let mut cells = Vec::new();
    for case in 0..s.cases.len() {
        for side in 0..s.sides.len() {
            let mut runs: Vec<&LoadedRun> = s.runs.iter().filter(|r| r.case == case && r.side == side).collect();
            if runs.is_empty() {
                continue;
            }
            runs.sort_by_key(|r| (r.detail.run.experiment_id, r.detail.run.repetition));
            cells.push(cell_stats(case, side, &runs, metric));
        }
    }

    for c in &cells {
        if let Some(b) = &c.client_bound {
            let case = &s.cases[c.case];
            notes.push(format!(
                "{}, {} at {} thr, is {}: its figures measure the client, not the server",
                s.sides[c.side].label,
                case.workload,
                case.threads,
                b.describe()
            ));
        }
    }

    let rate_metric = if metric == Metric::Qps { Metric::Qps } else { Metric::Tps };
    let adaptive = adaptive_plan(&s, sel);
    if let Some(p) = &adaptive {
        notes.push(format!(
            "Adaptive experiment ({}–{} rounds, stopped when every comparison was decided): the intervals are the \
             repeated confidence intervals of its group-sequential design (Pocock-type alpha spending), which hold \
             despite the look after every round.",
            p.design.min, p.design.max
        ));
    }
    // The selection as one case sees it: with that case's noise band.
    let in_case =
        |case: usize| Selection { noise_band: bands.get(case).map_or(sel.noise_band, |b| b.band), ..sel.clone() };
    let mut ratios = Vec::new();
    let mut within_run = false;
    for case in 0..s.cases.len() {
        let base = cells.iter().find(|c| c.case == case && c.side == 0);
        for side in 1..s.sides.len() {
            let cand = cells.iter().find(|c| c.case == case && c.side == side);
            if base.is_none() && cand.is_none() {
                continue;
            }
            let seed = 0x5EED ^ ((case as u64) << 20) ^ side as u64;
            let row = ratio_row(&s, case, side, base, cand, metric, &in_case(case), adaptive.as_ref(), seed);
            within_run |= row.ci_kind == Some(CiKind::WithinRunOnly);
            ratios.push(row);
        }
    }
    if within_run {
        notes.push(
            "Rows marked 'within-run' have one repetition per side: their interval comes from the 1-s intervals of \
             single runs and reflects only within-run noise, not the variation between server restarts. Repeat the \
             runs (repetitions >= 5) for an interval that does."
                .to_string(),
        );
    }

    let runs = run_infos(&s, metric, rate_metric);
    let efficiency_metrics = used_metrics(&s, &Metric::EFFICIENCY, true);
    let latency_metrics = used_metrics(&s, &Metric::LATENCIES, false);
    let efficiency = values_rows(&s, &efficiency_metrics, &in_case);
    let latency = values_rows(&s, &latency_metrics, &in_case);
    let replication_metrics = used_metrics(&s, &Metric::REPLICATION, false);
    let replication =
        if replication_metrics.is_empty() { Vec::new() } else { values_rows(&s, &replication_metrics, &in_case) };
    let variables = variable_diff(&s, explicit, findings);
    let experiments = s
        .experiments
        .iter()
        .map(|e| ExperimentInfo {
            id: e.id,
            name: e.name.clone(),
            file: e.file.clone(),
            created_at: e.created_at,
            status: e.status.to_string(),
            seed: e.seed,
            versus_version: e.versus_version.clone(),
            definition_hash: e.definition_hash.clone(),
            definition: e.definition.clone(),
            host: e.host.clone(),
        })
        .collect();
    Ok(CompareReport {
        format_version: REPORT_FORMAT_VERSION,
        versus_version: env!("CARGO_PKG_VERSION").to_string(),
        metric: MetricInfo::of(metric),
        rate_metric: MetricInfo::of(rate_metric),
        vs: sel.vs,
        baseline: s.sides[0].label.clone(),
        confidence: sel.confidence,
        noise_band: sel.noise_band,
        noise_band_source: "given".to_string(),
        forced: sel.force,
        sides: s.sides.clone(),
        cases: s.cases.clone(),
        case_bands: bands.to_vec(),
        cells,
        ratios,
        runs,
        efficiency_metrics: efficiency_metrics.iter().map(|m| MetricInfo::of(*m)).collect(),
        efficiency,
        latency_metrics: latency_metrics.iter().map(|m| MetricInfo::of(*m)).collect(),
        latency,
        replication_metrics: replication_metrics.iter().map(|m| MetricInfo::of(*m)).collect(),
        replication,
        variables,
        experiments,
        notes,
        sections,
        variable_changes: Vec::new(),
        series: None,
        explain: Vec::new(),
        advise: Vec::new(),
        profiles: Vec::new(),
    })
}

fn cell_stats(case: usize, side: usize, runs: &[&LoadedRun], metric: Metric) -> CellStats {
    let mut run_ids = Vec::new();
    let mut values = Vec::new();
    for r in runs {
        if let Some(v) = values_of(r, metric) {
            run_ids.push(r.detail.run.id);
            values.push(v);
        }
    }
    CellStats {
        case,
        side,
        n: values.len(),
        mean: stats::mean(&values),
        median: stats::median(&values),
        std_dev: stats::std_dev(&values),
        min: stats::min(&values),
        max: stats::max(&values),
        missing: runs.len() - values.len(),
        client_bound: client_bound(runs),
        run_ids,
        values,
    }
}

/// The runs whose client was the limit, with the figures of the one whose client used the most CPU.
fn client_bound(runs: &[&LoadedRun]) -> Option<ClientBound> {
    let loads: Vec<_> = runs.iter().filter_map(|r| r.detail.efficiency.client_load).collect();
    let bound: Vec<_> = loads.iter().filter(|l| l.limit().is_some()).collect();
    let worst = bound.iter().max_by(|a, b| a.client_cpus.total_cmp(&b.client_cpus))?;
    Some(ClientBound { runs: bound.len(), of: loads.len(), figures: worst.describe() })
}

fn method_name(m: CiMethod) -> String {
    match m {
        CiMethod::Bootstrap { method, expanded } => {
            let base = match method {
                BootstrapMethod::Percentile => "bootstrap-percentile",
                BootstrapMethod::Bca => "bootstrap-bca",
            };
            if expanded { format!("{base}-expanded") } else { base.to_string() }
        }
        CiMethod::LogDeltaWelch => "log-delta-welch".to_string(),
        CiMethod::LogDeltaAutocorrelated => "log-delta-autocorrelated".to_string(),
        CiMethod::BlockedHosts => "blocked-hosts".to_string(),
        CiMethod::BlockedBlocks => "blocked-blocks".to_string(),
    }
}

/// The ratio of a candidate to the baseline in one case, with its interval and verdict where the data
/// allow one.
#[allow(clippy::too_many_arguments)]
fn ratio_row(
    s: &Selected,
    case: usize,
    side: usize,
    base: Option<&CellStats>,
    cand: Option<&CellStats>,
    metric: Metric,
    sel: &Selection,
    adaptive: Option<&stats::SequentialPlan>,
    seed: u64,
) -> RatioRow {
    let mut row = RatioRow {
        case,
        side,
        baseline_mean: base.and_then(|c| c.mean),
        candidate_mean: cand.and_then(|c| c.mean),
        baseline_n: base.map_or(0, |c| c.n),
        candidate_n: cand.map_or(0, |c| c.n),
        ratio: None,
        ci_lo: None,
        ci_hi: None,
        ci_kind: None,
        ci_method: None,
        change: None,
        verdict: Verdict::NotComputed,
        detectable: None,
        note: None,
    };
    let (Some(b), Some(c)) = (base, cand) else {
        let who = if base.is_none() { "the baseline" } else { "the candidate" };
        row.note = Some(format!("{who} has no finished run with {metric} in this case"));
        return row;
    };
    let (Some(bm), Some(cm)) = (b.mean, c.mean) else {
        let who = if b.n == 0 { "the baseline" } else { "the candidate" };
        row.note = Some(format!("{who} has no finished run with {metric} in this case"));
        return row;
    };
    if let Some(why) = metric.no_ratio_reason(bm, cm) {
        row.note = Some(why);
        return row;
    }
    if bm <= 0.0 {
        row.note = Some(format!("the baseline's {metric} is 0, so there is no ratio"));
        return row;
    }
    // One definition of the ratio everywhere: the ratio of the means shown beside it.
    row.ratio = Some(cm / bm);
    row.change = Some(cm / bm - 1.0);
    let cfg = CompareConfig {
        direction: metric.direction(),
        noise_band: sel.noise_band,
        bootstrap: BootstrapConfig { confidence: sel.confidence, seed, ..BootstrapConfig::default() },
    };
    let samples = if b.n >= 2 && c.n >= 2 {
        (SampleLevel::Repetitions, b.values.clone(), c.values.clone())
    } else if b.n == 1 && c.n == 1 {
        let series = |id: i64| {
            s.runs.iter().find(|r| r.detail.run.id == id).and_then(|r| metric.interval_series(&r.detail.intervals))
        };
        match (series(b.run_ids[0]), series(c.run_ids[0])) {
            (Some(bs), Some(cs)) if bs.len() >= 2 && cs.len() >= 2 => {
                // The 1-s rates' means differ a little from the runs' whole-run values; scaled to them,
                // the interval keeps its relative width and is centred on the ratio of the means shown.
                let scaled = |xs: Vec<f64>, to: f64| match stats::mean(&xs) {
                    Some(m) if m > 0.0 => xs.iter().map(|x| x * to / m).collect(),
                    _ => xs,
                };
                (SampleLevel::Intervals, scaled(bs, bm), scaled(cs, cm))
            }
            (Some(_), Some(_)) => {
                row.note = Some("one run per side with fewer than 2 intervals: no interval".into());
                return row;
            }
            _ => {
                row.note = Some(format!(
                    "one run per side and {metric} has no 1-s series: no interval; repeat the runs for one"
                ));
                return row;
            }
        }
    } else {
        row.note = Some(format!(
            "no interval: the baseline has {} repetition(s) and the candidate {}; both need 2 or more",
            b.n, c.n
        ));
        return row;
    };
    let (level, bs, cs) = samples;
    // Blocks measured on two hosts or more: the interval from paired (per-host) differences.
    let pairs = block_pairs(s, b, c);
    let blocked = pairs
        .as_ref()
        .map(|p| stats::blocked::compare_blocked(p, cm / bm, metric.direction(), sel.noise_band, sel.confidence));
    let repeated = blocked.is_none() && adaptive.is_some() && level == SampleLevel::Repetitions;
    let compared = match (blocked, adaptive) {
        (Some(Ok((_, cmp))), _) => Ok(cmp),
        (Some(Err(e)), _) => Err(e),
        (None, Some(p)) if repeated => {
            stats::sequential_look(&bs, &cs, p, cfg.direction, cfg.noise_band, 0.0).map(|(cmp, _)| cmp)
        }
        (None, _) => stats::compare(&bs, &cs, level, &cfg),
    };
    match compared {
        Ok(cmp) => {
            row.ci_lo = Some(cmp.ci.lo);
            row.ci_hi = Some(cmp.ci.hi);
            row.ci_method =
                Some(if repeated { "repeated-log-delta-welch".to_string() } else { method_name(cmp.ci.method) });
            row.ci_kind = Some(match cmp.ci.kind {
                stats::CiKind::BetweenRepetitions => CiKind::BetweenRepetitions,
                stats::CiKind::WithinRunOnly => CiKind::WithinRunOnly,
            });
            row.verdict = match cmp.verdict {
                stats::Verdict::Faster => Verdict::Faster,
                stats::Verdict::Slower => Verdict::Slower,
                stats::Verdict::NoSignificantChange => Verdict::NoSignificantChange,
            };
            // The figure of the interval that gave the verdict: the repeated one for adaptive experiments.
            let d = match adaptive {
                Some(p) if repeated => stats::sequential_detectable_effect(&bs, &cs, p, sel.noise_band, DEFAULT_POWER),
                _ => stats::detectable_effect_of(&bs, &cs, level, sel.confidence, sel.noise_band, DEFAULT_POWER),
            };
            let seq = adaptive.filter(|_| repeated);
            row.detectable = d.ok().map(|d| detectable(d, &bs, &cs, level, sel, seq));
            if let (Some(p), Some(unit)) = (&pairs, blocked_unit(row.ci_method.as_deref())) {
                let hosts = p.iter().map(|x| x.host.as_str()).collect::<std::collections::BTreeSet<_>>().len();
                row.note = Some(format!("blocked: {} block(s) on {hosts} hosts, interval over {unit}", p.len()));
            } else if row.ci_kind == Some(CiKind::WithinRunOnly) {
                row.note = Some("within-run: the interval reflects only within-run noise".into());
            } else if cmp.ci_excludes_one && !cmp.exceeds_noise_band {
                row.note = Some(format!("the change is within the {:.0} % noise band", sel.noise_band * 100.0));
            }
        }
        Err(e) => row.note = Some(format!("no interval: {e}")),
    }
    row
}

/// What a blocked interval's units were, from its method name.
fn blocked_unit(method: Option<&str>) -> Option<&'static str> {
    match method {
        Some("blocked-hosts") => Some("per-host mean differences"),
        Some("blocked-blocks") => Some("per-block differences (fewer than 3 hosts)"),
        _ => None,
    }
}

/// The baseline's and the candidate's values paired by block (experiment and repetition) measured on
/// one host, when the blocks of this case ran on two hosts or more; `None` otherwise (one host, or runs
/// that are not a fleet's), and then the usual unpaired interval applies.
fn block_pairs(s: &Selected, b: &CellStats, c: &CellStats) -> Option<Vec<stats::blocked::BlockPair>> {
    let placed = |cell: &CellStats| -> Option<BTreeMap<(i64, u32), (String, f64)>> {
        cell.run_ids
            .iter()
            .zip(&cell.values)
            .map(|(id, v)| {
                let r = s.runs.iter().find(|r| r.detail.run.id == *id)?;
                Some(((r.detail.run.experiment_id, r.detail.run.repetition), (r.host.clone()?, *v)))
            })
            .collect()
    };
    let (base, cand) = (placed(b)?, placed(c)?);
    let hosts: std::collections::BTreeSet<&str> = base.values().chain(cand.values()).map(|(h, _)| h.as_str()).collect();
    if hosts.len() < 2 {
        return None;
    }
    let pairs: Vec<stats::blocked::BlockPair> = base
        .iter()
        .filter_map(|(k, (host, bv))| {
            let (ch, cv) = cand.get(k)?;
            (ch == host).then(|| stats::blocked::BlockPair { host: host.clone(), baseline: *bv, candidate: *cv })
        })
        .collect();
    Some(pairs)
}

/// The sequential plan of the selected experiments when one of them is adaptive (`repetitions =
/// { min, max, … }`): its comparisons were looked at after every round, so its intervals must be the
/// repeated ones, at the report's confidence.
fn adaptive_plan(s: &Selected, sel: &Selection) -> Option<stats::SequentialPlan> {
    s.experiments.iter().find_map(|e| {
        let reps = crate::experiment::ExperimentFile::parse(&e.definition).ok()?.repetitions;
        let design = stats::SequentialDesign::new(reps.min as usize, reps.max as usize, sel.confidence).ok()?;
        reps.is_adaptive().then(|| design.plan())
    })
}

/// The row's detectable effect and the repetitions that would detect the target: of the adaptive
/// experiment's sequential design `seq` when the row's interval is the repeated one (the first look
/// that detects it), else of a fixed plan.
fn detectable(
    d: stats::DetectableEffect,
    b: &[f64],
    c: &[f64],
    level: SampleLevel,
    sel: &Selection,
    seq: Option<&stats::SequentialPlan>,
) -> Detectable {
    let target = stats::power::target_effect(sel.noise_band);
    let cv = |xs: &[f64]| stats::coefficient_of_variation(xs).unwrap_or(0.0);
    let plan = match (level, seq) {
        (_, Some(p)) => stats::sequential_repetitions_for(cv(b), cv(c), target, p, sel.noise_band, d.power).ok(),
        (SampleLevel::Repetitions, None) => {
            stats::repetitions_for(cv(b), cv(c), target, sel.confidence, sel.noise_band, d.power).ok()
        }
        (SampleLevel::Intervals, None) => None,
    };
    Detectable { increase: d.increase, decrease: d.decrease, power: d.power, target, plan }
}

fn run_infos(s: &Selected, metric: Metric, rate: Metric) -> Vec<RunInfo> {
    let mut runs: Vec<&LoadedRun> = s.runs.iter().collect();
    runs.sort_by_key(|r| (r.case, r.side, r.detail.run.experiment_id, r.detail.run.repetition));
    runs.iter()
        .map(|r| {
            let run = &r.detail.run;
            let rates = rate.interval_series(&r.detail.intervals).unwrap_or_default();
            let stability = stats::stability(&rates, &StallRule::default()).ok().map(|st| RunStability {
                intervals: st.n,
                min: st.min,
                max: st.max,
                mean: st.mean,
                cv: st.cv,
                stall_threshold: st.stall_threshold,
                stalls_at: st.stalls.iter().map(|&i| r.detail.intervals[i].t_s).collect(),
            });
            RunInfo {
                id: run.id,
                experiment: run.experiment_id,
                case: r.case,
                side: r.side,
                target: run.cell.target.clone(),
                repetition: run.repetition,
                server_version: run.server_version.clone(),
                started_at: run.started_at,
                value: values_of(r, metric),
                stability,
                series: r.detail.intervals.iter().zip(&rates).map(|(i, v)| [i.t_s, *v]).collect(),
                lag_series: worst_lag(&r.detail.replica_seconds),
            }
        })
        .collect()
}

/// `[t_s, lag ms]` of the most lagging replica at each second sampled (seconds when no replica's lag
/// was read are left out).
fn worst_lag(seconds: &[crate::store::ReplicaSecond]) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::new();
    for s in seconds {
        let Some(lag) = s.lag_ms else { continue };
        match out.last_mut() {
            Some(last) if last[0] == s.t_s => last[1] = last[1].max(lag),
            _ => out.push([s.t_s, lag]),
        }
    }
    out
}

/// The variables that differ between the targets, leaving out noise (sandbox paths, ports, ids,
/// versions, host-sized and derived values: [`crate::explain::noise`]), classified for display
/// ([`super::variables::classify`]).
fn variable_diff(s: &Selected, explicit: &super::explain::Explicit, findings: &BTreeSet<String>) -> VariableDiff {
    // Targets in side order, then run order; a label used by several experiments is qualified.
    let mut keys: Vec<(usize, String, i64)> = Vec::new();
    let mut runs: Vec<&LoadedRun> = s.runs.iter().collect();
    runs.sort_by_key(|r| (r.side, r.detail.run.cell.id));
    for r in &runs {
        let k = (r.side, r.detail.run.cell.target.clone(), r.detail.run.experiment_id);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let label = |(_, t, e): &(usize, String, i64)| {
        if keys.iter().filter(|k| &k.1 == t).count() > 1 { format!("{t}@{e}") } else { t.clone() }
    };
    let n = keys.len();
    // name -> per target: the distinct values seen.
    let mut by_name: BTreeMap<&str, Vec<Vec<&str>>> = BTreeMap::new();
    let mut has_vars = vec![false; n];
    for r in &runs {
        let k = (r.side, r.detail.run.cell.target.clone(), r.detail.run.experiment_id);
        let col = keys.iter().position(|x| *x == k).unwrap_or(0);
        if r.detail.variables.is_empty() {
            continue;
        }
        has_vars[col] = true;
        for (name, value) in &r.detail.variables {
            let slot = by_name.entry(name.as_str()).or_insert_with(|| vec![Vec::new(); n]);
            if !slot[col].contains(&value.as_str()) {
                slot[col].push(value.as_str());
            }
        }
    }
    let mut diff = VariableDiff {
        targets: keys.iter().zip(&has_vars).filter(|(_, h)| **h).map(|(k, _)| label(k)).collect(),
        targets_without_variables: keys.iter().zip(&has_vars).filter(|(_, h)| !**h).map(|(k, _)| label(k)).collect(),
        ..VariableDiff::default()
    };
    for (name, per_target) in by_name {
        let values: Vec<Option<String>> = per_target
            .iter()
            .zip(&has_vars)
            .filter(|(_, h)| **h)
            .map(|(v, _)| if v.is_empty() { None } else { Some(v.join(" | ")) })
            .collect();
        let differs = values.windows(2).any(|w| w[0] != w[1]) || per_target.iter().any(|v| v.len() > 1);
        if !differs {
            continue;
        }
        let seen: Vec<&str> = per_target.iter().flatten().copied().collect();
        if crate::explain::noise::noise_of(name, &seen).is_some() {
            diff.hidden += 1;
            continue;
        }
        diff.rows.push(VariableRow {
            name: name.to_string(),
            values,
            component: String::new(),
            first: None,
            set_on: Vec::new(),
        });
    }
    let facts: Vec<TargetFacts> = keys
        .iter()
        .zip(&has_vars)
        .filter(|(_, h)| **h)
        .map(|((side, target, experiment), _)| {
            let run = runs.iter().find(|r| {
                r.side == *side && &r.detail.run.cell.target == target && r.detail.run.experiment_id == *experiment
            });
            let var = |name: &str| {
                run.and_then(|r| r.detail.variables.iter().find(|(n, _)| n == name)).map(|(_, v)| v.as_str())
            };
            TargetFacts {
                flavor: flavor_of(var("version").unwrap_or_default(), var("version_comment").unwrap_or_default())
                    .to_string(),
                explicit: explicit.get(&(*experiment, target.clone())).cloned().unwrap_or_default(),
            }
        })
        .collect();
    classify(&mut diff, &facts, findings);
    diff
}
