//! Per-statement figures of stored script runs, compared across the sides of a report: for each
//! statement its count, mean and 95th percentile latency per side, the ratio of each candidate's mean
//! latency to the baseline's with its interval and verdict (over repetitions, as the main table), and
//! whether the server's plan of the statement differs from the baseline's.

use serde::{Deserialize, Serialize};

use super::parse::{self, Script};
use crate::stats::{self, BootstrapConfig, CompareConfig, Direction, SampleLevel, Verdict};
use crate::workload::{StoredRun, StoredRuns};

/// The histogram kind of statement `n`.
pub fn histogram_kind(n: usize) -> String {
    format!("statement {n}")
}

/// The status name of statement `n`'s failures.
pub fn errors_key(n: usize) -> String {
    format!("versus.script.statement.{n}.errors")
}

/// The status name of transaction `n`'s (from 1) finished events.
pub fn transaction_key(n: usize) -> String {
    format!("versus.script.transaction.{n}")
}

/// One statement on one side.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementSide {
    /// Runs with figures for it.
    pub runs: usize,
    /// Successful executions, all runs.
    pub count: u64,
    /// Failed executions (ignored errors, lost connections), all runs.
    pub errors: u64,
    /// Mean latency over the runs' means, ms.
    pub mean_ms: Option<f64>,
    /// 95th percentile of all executions, ms.
    pub p95_ms: Option<f64>,
    /// Each run's mean latency, ms (the samples of the comparison).
    pub values: Vec<f64>,
    /// The shape of the server's plan (`table:access:key …`), from the first run that has one.
    pub plan: Option<String>,
}

/// One candidate side against the baseline, for one statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementComparison {
    /// The candidate side.
    pub side: usize,
    /// Candidate mean / baseline mean (above 1: slower).
    pub ratio: Option<f64>,
    /// Interval of the ratio.
    pub ci_low: Option<f64>,
    /// Interval of the ratio.
    pub ci_high: Option<f64>,
    /// faster, slower or no significant change (from the candidate's point of view).
    pub verdict: Option<Verdict>,
    /// The plan's shape differs from the baseline's.
    pub plan_changed: bool,
    /// Why there is no interval or verdict.
    pub note: Option<String>,
}

/// One statement across the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementRow {
    /// Number in the script, from 1.
    pub number: usize,
    /// `file:line`.
    pub location: String,
    /// Its transaction.
    pub transaction: String,
    /// The statement as written.
    pub text: String,
    /// Per side, in the report's order.
    pub sides: Vec<StatementSide>,
    /// Per candidate side.
    pub comparisons: Vec<StatementComparison>,
}

/// One transaction across the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransactionRow {
    /// Its name.
    pub name: String,
    /// Its weight.
    pub weight: u32,
    /// Finished events per side, all runs.
    pub counts: Vec<u64>,
}

/// The per-statement section of one script workload at one thread count (within one group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// `Statements of app.sql, 4 threads`.
    pub title: String,
    /// The workload's label.
    pub workload: String,
    /// Threads.
    pub threads: u32,
    /// The group (config or build), if any.
    pub group: Option<String>,
    /// Side labels, baseline first.
    pub sides: Vec<String>,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// The statements.
    pub statements: Vec<StatementRow>,
    /// The transactions.
    pub transactions: Vec<TransactionRow>,
}

impl Section {
    /// One sentence per statement whose verdict is not "no significant change", and per changed plan:
    /// `statement 3 of app.sql (app.sql:12, SELECT …) is 2.10× slower on B (95 % CI 1.91–2.30×); its
    /// plan changed: t:ref:k → t:ALL:-`.
    pub fn sentences(&self) -> Vec<String> {
        let level = format!("{} %", (self.confidence * 100.0).round());
        let mut out = Vec::new();
        for st in &self.statements {
            for c in &st.comparisons {
                let side = &self.sides[c.side];
                let called = matches!(c.verdict, Some(Verdict::Faster | Verdict::Slower));
                if !called && !c.plan_changed {
                    continue;
                }
                let what =
                    format!("statement {} of {} ({}, {})", st.number, self.workload, st.location, short(&st.text, 50));
                let speed = match (c.verdict, c.ratio, c.ci_low, c.ci_high) {
                    (Some(Verdict::Slower), Some(r), Some(lo), Some(hi)) => {
                        format!("is {r:.2}× slower on {side} ({level} CI {lo:.2}–{hi:.2}×)")
                    }
                    (Some(Verdict::Faster), Some(r), Some(lo), Some(hi)) => {
                        format!("is {:.2}× faster on {side} ({level} CI {:.2}–{:.2}×)", 1.0 / r, 1.0 / hi, 1.0 / lo)
                    }
                    (_, Some(r), ..) => format!("is not significantly different on {side} (ratio {r:.2}×)"),
                    _ => format!("has no comparison on {side}"),
                };
                let plan = if c.plan_changed {
                    format!(
                        "; its plan changed: {} → {}",
                        st.sides[0].plan.as_deref().unwrap_or("?"),
                        st.sides[c.side].plan.as_deref().unwrap_or("?")
                    )
                } else {
                    String::new()
                };
                out.push(format!("{what} {speed}{plan}."));
            }
        }
        out
    }
}

/// `text` on one line, cut to `n` characters.
pub fn short(text: &str, n: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n { one } else { format!("{}…", one.chars().take(n - 1).collect::<String>()) }
}

/// The script of a stored run, parsed from the text stored with its cell.
fn script_of(r: &StoredRun<'_>) -> Option<Script> {
    stored_script(r.detail)
}

/// The script of a stored run (from the text stored with its cell), if it is a script run.
pub fn stored_script(d: &crate::store::RunDetail) -> Option<Script> {
    let options = &d.run.cell.workload_options;
    let file = options.get("script")?.as_str()?;
    let text = options.get("text")?.as_str()?;
    let mut defines = Vec::new();
    if let Some(map) = options.get("define").and_then(|d| d.as_object()) {
        for (k, v) in map {
            let value = match (v.as_i64(), v.as_f64()) {
                (Some(i), _) => super::expr::Value::Int(i),
                (None, Some(f)) => super::expr::Value::Double(f),
                _ => continue,
            };
            defines.push((k.clone(), value));
        }
    }
    parse::parse(file, text, &defines).ok()
}

/// The per-statement figures of one stored script run, as `versus script` prints them after a run.
pub fn run_report(d: &crate::store::RunDetail) -> Option<String> {
    let script = stored_script(d)?;
    let mut f = super::run::Figures::new(&script);
    for (i, st) in script.statements.iter().enumerate() {
        let kind = histogram_kind(st.number);
        if let Some(h) = d.histograms.iter().find(|h| h.kind == kind && h.t_s.is_none()) {
            f.latency[i] = crate::store::decode_histogram(&h.data).ok()?;
        }
        let status = |name: &str| d.status_deltas.iter().find(|(k, _)| k == name).map(|(_, v)| (*v).max(0) as u64);
        f.errors[i] = status(&errors_key(st.number)).unwrap_or(0);
    }
    for (t, count) in f.transactions.iter_mut().enumerate() {
        *count =
            d.status_deltas.iter().find(|(k, _)| *k == transaction_key(t + 1)).map_or(0, |(_, v)| (*v).max(0) as u64);
    }
    let seconds = d.run.summary.as_ref().map_or(0.0, |s| s.duration_s);
    Some(super::statements_report(&script, &f, seconds))
}

/// The figures of statement `n` in one run: (count, mean µs, the histogram).
fn statement_of(r: &StoredRun<'_>, n: usize) -> Option<hdrhistogram::Histogram<u64>> {
    let kind = histogram_kind(n);
    let h = r.detail.histograms.iter().find(|h| h.kind == kind && h.t_s.is_none())?;
    crate::store::decode_histogram(&h.data).ok()
}

fn plan_of(r: &StoredRun<'_>, n: usize) -> Option<String> {
    let plans = r.detail.command.as_ref()?.get("plans")?.as_array()?;
    let p = plans.iter().find(|p| p.get("statement").and_then(|s| s.as_u64()) == Some(n as u64))?;
    super::plan::shape(p.get("plan")?)
}

/// The per-statement sections of a comparison: one per script workload, group and thread count.
pub fn sections(s: &StoredRuns<'_>) -> Vec<Section> {
    let runs: Vec<&StoredRun<'_>> = s.runs.iter().filter(|r| r.option("script").is_some()).collect();
    let mut keys: Vec<(String, Option<String>, u32)> = Vec::new();
    for r in &runs {
        let k = (r.detail.run.cell.workload.clone(), r.group.map(str::to_string), r.threads);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (workload, group, threads) in keys {
        let mine: Vec<&StoredRun<'_>> = runs
            .iter()
            .copied()
            .filter(|r| r.detail.run.cell.workload == workload && r.group == group.as_deref() && r.threads == threads)
            .collect();
        let Some(script) = mine.iter().find_map(|r| script_of(r)) else { continue };
        out.push(section(s, &script, &workload, group, threads, &mine));
    }
    out
}

fn section(
    s: &StoredRuns<'_>,
    script: &Script,
    workload: &str,
    group: Option<String>,
    threads: u32,
    runs: &[&StoredRun<'_>],
) -> Section {
    let of_side = |side: usize| runs.iter().copied().filter(move |r| r.side == side);
    let statements = script
        .statements
        .iter()
        .map(|st| {
            let sides: Vec<StatementSide> = (0..s.sides.len())
                .map(|side| {
                    let mut f = StatementSide::default();
                    let mut all = crate::workload::sysbench::stats::new_histogram();
                    for r in of_side(side) {
                        if let Some(h) = statement_of(r, st.number) {
                            f.runs += 1;
                            f.count += h.len();
                            if !h.is_empty() {
                                f.values.push(h.mean() / 1000.0);
                            }
                            let _ = all.add(&h);
                        }
                        f.errors += r.status(&errors_key(st.number)).unwrap_or(0).max(0) as u64;
                        if f.plan.is_none() {
                            f.plan = plan_of(r, st.number);
                        }
                    }
                    if !f.values.is_empty() {
                        f.mean_ms = Some(f.values.iter().sum::<f64>() / f.values.len() as f64);
                        f.p95_ms = Some(all.value_at_quantile(0.95) as f64 / 1000.0);
                    }
                    f
                })
                .collect();
            let comparisons =
                (1..s.sides.len()).map(|side| compare(s, &sides[0], &sides[side], side, st.number)).collect();
            StatementRow {
                number: st.number,
                location: script.line_of(st.loc),
                transaction: st.transaction.map(|t| script.transactions[t].name.clone()).unwrap_or_default(),
                text: st.text.clone(),
                sides,
                comparisons,
            }
        })
        .collect();
    let transactions = script
        .transactions
        .iter()
        .enumerate()
        .map(|(i, t)| TransactionRow {
            name: t.name.clone(),
            weight: t.weight,
            counts: (0..s.sides.len())
                .map(|side| of_side(side).map(|r| r.status(&transaction_key(i + 1)).unwrap_or(0).max(0) as u64).sum())
                .collect(),
        })
        .collect();
    let g = group.as_ref().map(|g| format!(", {g}")).unwrap_or_default();
    Section {
        title: format!("Statements of {workload}{g}, {threads} thread(s)"),
        workload: workload.to_string(),
        threads,
        group,
        sides: s.sides.clone(),
        confidence: s.confidence,
        statements,
        transactions,
    }
}

fn compare(
    s: &StoredRuns<'_>,
    b: &StatementSide,
    c: &StatementSide,
    side: usize,
    number: usize,
) -> StatementComparison {
    let plan_changed = matches!((&b.plan, &c.plan), (Some(x), Some(y)) if x != y);
    let mut out =
        StatementComparison { side, ratio: None, ci_low: None, ci_high: None, verdict: None, plan_changed, note: None };
    let (Some(bm), Some(cm)) = (b.mean_ms, c.mean_ms) else {
        out.note = Some("no executions on one side".into());
        return out;
    };
    if bm <= 0.0 {
        return out;
    }
    out.ratio = Some(cm / bm);
    if b.values.len() < 2 || c.values.len() < 2 {
        out.note = Some(format!(
            "no interval: the baseline has {} run(s) and the candidate {}; both need 2 or more",
            b.values.len(),
            c.values.len()
        ));
        return out;
    }
    let cfg = CompareConfig {
        direction: Direction::LowerIsBetter,
        noise_band: s.noise_band,
        bootstrap: BootstrapConfig {
            confidence: s.confidence,
            seed: 0x5EED ^ ((number as u64) << 20) ^ side as u64,
            ..BootstrapConfig::default()
        },
    };
    match stats::compare(&b.values, &c.values, SampleLevel::Repetitions, &cfg) {
        Ok(cmp) => {
            out.ratio = Some(cmp.ci.ratio);
            out.ci_low = Some(cmp.ci.lo);
            out.ci_high = Some(cmp.ci.hi);
            out.verdict = Some(cmp.verdict);
        }
        Err(e) => out.note = Some(e.to_string()),
    }
    out
}
