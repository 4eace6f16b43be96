//! The profile section: for every case with profiled runs, each side's server CPU per transaction as
//! sampled, and for each candidate the functions whose CPU per transaction differs from the
//! baseline's beyond the noise (false discoveries controlled over all functions), the few that make
//! most of the gap first; flame graphs where the format shows pictures. Written once against
//! [`Writer`] for every format.

use super::fmt;
use super::model::CompareReport;
pub use super::profile_model::{ProfileKind, ProfileSection, ProfileSide};
use super::select::Selected;
use crate::error::Result;
use crate::present::table::{Cell, Table, Tone};
use crate::present::writers::Writer;
use crate::profile::diff::{self, CostKind, DiffConfig, DiffRow, Differential, RunCosts};
use crate::profile::{Profile, flame};
use crate::store::Store;

/// Rows of each table (the largest differences); the rest are counted below it.
const ROWS: usize = 15;

/// The words a section of each kind is written with.
struct Words {
    heading: &'static str,
    intro: &'static str,
    what: &'static str,
    title: &'static str,
    id: &'static str,
    flame: &'static str,
    diff_flame: &'static str,
}

fn words(kind: ProfileKind) -> Words {
    match kind {
        ProfileKind::Cpu => Words {
            heading: "Where the server's CPU went",
            intro: "Server CPU per transaction, sampled on-CPU with perf during the measured time",
            what: "CPU",
            title: "CPU per transaction",
            id: "profile",
            flame: "Flame graph (width in proportion to CPU per transaction)",
            diff_flame: "Differential flame graph",
        },
        ProfileKind::Waits => Words {
            heading: "Where the server waited, off the CPU",
            intro: "Server threads' off-CPU time per transaction, from every context switch to the thread's return \
                    during the measured time, counted under the stack it left with ([preempted]: runnable, \
                    waiting for a CPU; every thread counts, so threads that sleep through the run weigh less \
                    per transaction the more transactions there are)",
            what: "off-CPU time",
            title: "Off-CPU time per transaction",
            id: "waits",
            flame: "Off-CPU flame graph (width in proportion to off-CPU time per transaction)",
            diff_flame: "Off-CPU differential flame graph",
        },
    }
}

/// The profile sections of the selected runs, on-CPU then off-CPU; empty when no run was profiled.
pub fn sections(store: &Store, s: &Selected, baseline: usize, confidence: f64) -> Result<Vec<ProfileSection>> {
    let mut out = kind_sections(store, s, baseline, confidence, ProfileKind::Cpu)?;
    out.extend(kind_sections(store, s, baseline, confidence, ProfileKind::Waits)?);
    Ok(out)
}

fn kind_sections(
    store: &Store,
    s: &Selected,
    baseline: usize,
    confidence: f64,
    kind: ProfileKind,
) -> Result<Vec<ProfileSection>> {
    let mut out = Vec::new();
    for case in 0..s.cases.len() {
        let mut sides = Vec::new();
        let mut costs: Vec<(usize, Vec<RunCosts>)> = Vec::new();
        let order = std::iter::once(baseline).chain((0..s.sides.len()).filter(|&i| i != baseline));
        for side in order {
            let runs: Vec<_> = s.runs.iter().filter(|r| r.case == case && r.side == side).collect();
            if runs.is_empty() {
                continue;
            }
            let mut profiles = Vec::new();
            for r in &runs {
                let id = r.detail.run.id;
                let stored = match kind {
                    ProfileKind::Cpu => store.profile(id),
                    ProfileKind::Waits => store.waits(id),
                };
                match stored {
                    Ok(Some(p)) => profiles.push(p),
                    Ok(None) => {}
                    // A damaged profile costs its run's profile, not the report.
                    Err(e) => profiles.push(Profile { note: Some(format!("run {id}: {e}")), ..Profile::default() }),
                }
            }
            costs.push((side, profiles.iter().filter_map(run_costs).collect()));
            sides.push(side_of(side, runs.len(), &profiles));
        }
        if sides.iter().all(|x| x.profiled == 0 && x.notes.is_empty()) {
            continue;
        }
        let cfg = DiffConfig { confidence, ..DiffConfig::default() };
        let mut comparisons = Vec::new();
        if let Some((_, base)) = costs.first().filter(|(b, c)| *b == baseline && !c.is_empty()) {
            for (side, cand) in costs.iter().skip(1).filter(|(_, c)| !c.is_empty()) {
                comparisons.push((*side, diff::differential(base, cand, &cfg)));
            }
        }
        out.push(ProfileSection { case, kind, sides, comparisons });
    }
    Ok(out)
}

/// A run's costs for the comparison; `None` for a profile without samples or transactions.
fn run_costs(p: &Profile) -> Option<RunCosts> {
    let total_us = p.total_us_per_txn().filter(|_| p.is_sampled())?;
    Some(RunCosts {
        functions: p.function_costs(),
        total_us,
        sample_us: p.total_ns() as f64 / p.samples as f64 / 1000.0 / p.transactions as f64,
    })
}

fn side_of(side: usize, runs: usize, profiles: &[Profile]) -> ProfileSide {
    let sampled: Vec<&Profile> = profiles.iter().filter(|p| p.is_sampled()).collect();
    let mut notes: Vec<String> = Vec::new();
    for n in profiles.iter().filter_map(|p| p.note.clone()) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let mean = |f: &dyn Fn(&Profile) -> Option<f64>| {
        let v: Vec<f64> = sampled.iter().filter_map(|p| f(p)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    ProfileSide {
        side,
        runs,
        profiled: sampled.len(),
        samples: sampled.iter().map(|p| p.samples).sum(),
        cpu_us_per_txn: mean(&|p| p.total_us_per_txn()),
        named_share: mean(&|p| Some(p.named_share())),
        notes,
        stacks: flame::per_transaction(&sampled),
    }
}

/// The profile sections of `r`, written to `w`.
pub fn write(w: &mut dyn Writer, r: &CompareReport) {
    for sec in &r.profiles {
        w.heading(&format!("{}: {}", words(sec.kind).heading, r.case_label(sec.case)));
        w.paragraph(&side_line(r, sec));
        let notes: Vec<String> = sec
            .sides
            .iter()
            .flat_map(|s| s.notes.iter().map(move |n| format!("{}: {n}", r.sides[s.side].label)))
            .collect();
        if !notes.is_empty() {
            w.list(&notes);
        }
        for (side, d) in &sec.comparisons {
            let label = &r.sides[*side].label;
            w.paragraph(&gap_line(r, label, d, sec.kind));
            for kind in [CostKind::SelfCost, CostKind::Inclusive] {
                let rows = if kind == CostKind::SelfCost { &d.self_rows } else { &d.inclusive_rows };
                if !rows.is_empty() {
                    w.table(&table(r, sec, *side, d, kind));
                }
            }
        }
        if w.shows_figures() {
            figures(w, r, sec);
        }
    }
}

fn side_line(r: &CompareReport, sec: &ProfileSection) -> String {
    let unit = if sec.kind == ProfileKind::Waits { "switches" } else { "samples" };
    let parts: Vec<String> = sec
        .sides
        .iter()
        .map(|s| {
            let cpu = s.cpu_us_per_txn.map(|v| format!("{} µs", fmt::num(v))).unwrap_or_else(|| "not profiled".into());
            let named = s.named_share.map(|v| format!(", {:.0} % named", v * 100.0)).unwrap_or_default();
            format!("{} {cpu} ({} of {} runs, {} {unit}{named})", r.sides[s.side].label, s.profiled, s.runs, s.samples)
        })
        .collect();
    format!(
        "{}: {}. Unnamed code is counted under its object file in brackets, kernel functions end in _[k].",
        words(sec.kind).intro,
        parts.join("; ")
    )
}

fn gap_line(r: &CompareReport, label: &str, d: &Differential, kind: ProfileKind) -> String {
    let base = &r.sides[r.baseline_index()].label;
    let explained = match d.explained_share {
        Some(s) if !d.self_rows.is_empty() => {
            format!("; the functions in the first table add up to {:.0} % of it in their own code", s * 100.0)
        }
        _ if !d.inclusive_rows.is_empty() => {
            "; no function's own code differs beyond the noise: the difference is spread over many, and the \
             table shows where they are called from"
                .to_string()
        }
        _ => String::new(),
    };
    format!(
        "{label} against {base}: {} µs {} per transaction ({} % CI {}){explained}. {} functions compared, \
         {} with a self cost and {} with an inclusive cost beyond the noise (false discovery rate 5 %; runs {} and {}).",
        signed(d.gap_us),
        words(kind).what,
        (r.confidence * 100.0).round(),
        fmt::ci(d.gap_low_us, d.gap_high_us),
        d.tested,
        d.self_rows.len(),
        d.inclusive_rows.len(),
        d.runs.0,
        d.runs.1,
    )
}

fn signed(v: f64) -> String {
    if v >= 0.0 { format!("+{}", fmt::num(v)) } else { format!("−{}", fmt::num(-v)) }
}

fn table(r: &CompareReport, sec: &ProfileSection, side: usize, d: &Differential, kind: CostKind) -> Table {
    let (case, w) = (sec.case, words(sec.kind));
    let (rows, what, id, level) = match kind {
        CostKind::SelfCost => (&d.self_rows, "in the function itself", "self", d.level),
        CostKind::Inclusive => (&d.inclusive_rows, "with what it calls", "inclusive", d.inclusive_level),
    };
    let base = &r.sides[r.baseline_index()].label;
    let cand = &r.sides[side].label;
    let mut header = vec![
        "function".to_string(),
        format!("{base} µs/txn"),
        format!("{cand} µs/txn"),
        "Δ µs/txn".into(),
        format!("{} % CI", crate::stats::level_percent(level)),
        "q".into(),
    ];
    let mut numeric = vec![false, true, true, true, true, true];
    header.push("share of gap".into());
    numeric.push(true);
    let mut t = Table {
        id: format!("{}-{case}-{side}-{id}", w.id),
        title: format!("{} {what}: {cand} against {base}, {}", w.title, r.case_label(case)),
        caption: Some(format!(
            "Functions whose {} per transaction {what} differs beyond the noise, {} ({} µs per \
             transaction, means over the runs; q: the false-discovery-adjusted p value; share of gap: the \
             difference over the whole difference in {} per transaction).",
            w.what,
            match kind {
                CostKind::SelfCost => "the largest difference first",
                CostKind::Inclusive => "the largest difference that the interval assures first",
            },
            if sec.kind == ProfileKind::Waits { "off-CPU" } else { "sampled CPU" },
            w.what,
        )),
        header,
        numeric,
        rows: Vec::new(),
        footnotes: Vec::new(),
    };
    for row in rows.iter().take(ROWS) {
        t.rows.push(cells(row));
    }
    if rows.iter().take(ROWS).any(|r| r.trunk) {
        t.footnotes.push(
            "*: on the stacks of more than half of either side's CPU (an entry point): its difference is mostly \
             that of what it calls, listed above it."
                .into(),
        );
    }
    if rows.len() > ROWS {
        t.footnotes.push(format!("{} more beyond the noise, smaller (in the JSON export).", rows.len() - ROWS));
    }
    t
}

fn cells(row: &DiffRow) -> Vec<Cell> {
    let tone = if row.delta_us > 0.0 { Tone::Worse } else { Tone::Better };
    let mut c = vec![
        Cell::toned(
            format!(
                "{}{}",
                crate::workload::script::stored::short(&row.function, 60),
                if row.trunk { " *" } else { "" }
            ),
            Tone::Plain,
        ),
        Cell::toned(fmt::num(row.baseline_us), Tone::Muted),
        Cell::toned(fmt::num(row.candidate_us), Tone::Plain),
        Cell::toned(signed(row.delta_us), tone),
        Cell::toned(fmt::ci(row.low_us, row.high_us), Tone::Plain),
        Cell::toned(format!("{:.2e}", row.q), Tone::Muted),
    ];
    c.push(Cell::toned(row.share_of_gap.map(|s| format!("{:.0} %", s * 100.0)).unwrap_or_else(|| "—".into()), tone));
    c
}

fn figures(w: &mut dyn Writer, r: &CompareReport, sec: &ProfileSection) {
    let Some(base) = sec.sides.first().filter(|s| !s.stacks.is_empty()) else { return };
    let total = |s: &ProfileSide| s.stacks.iter().map(|(_, v)| *v).sum::<u64>();
    let max = sec.sides.iter().map(total).max().unwrap_or(1).max(1);
    for (side, _) in &sec.comparisons {
        let Some(cand) = sec.sides.iter().find(|s| s.side == *side && !s.stacks.is_empty()) else { continue };
        let title =
            format!("{} against {}, {}", r.sides[*side].label, r.sides[base.side].label, r.case_label(sec.case));
        if let Ok(svg) = flame::differential(&title, &base.stacks, &cand.stacks) {
            w.figure(&format!("{}: {title}", words(sec.kind).diff_flame), &svg);
        }
    }
    for s in sec.sides.iter().filter(|s| !s.stacks.is_empty()) {
        let width = (flame::FULL_WIDTH as f64 * total(s) as f64 / max as f64).round() as usize;
        let title = format!("{}, {}", r.sides[s.side].label, r.case_label(sec.case));
        if let Ok(svg) = flame::plain(&title, &s.stacks, width) {
            w.figure(&format!("{}: {title}", words(sec.kind).flame), &svg);
        }
    }
}
