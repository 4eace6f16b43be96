//! Output of `versus advise` (see [`crate::advise`]): a terminal (or markdown) report with the
//! inspection, one line per candidate with its risk class and what became of it, the memory worst
//! case and the confirmation; a my.cnf fragment in which every line carries its old value, its rule,
//! its risk class and its measured effect with the interval; or JSON.

use std::fmt::Write as _;

use crate::advise::facts::{GIB, MIB};
use crate::advise::memory::MemoryEstimate;
use crate::advise::model::AdviseReport;
use crate::advise::rules::Risk;
use crate::advise::search::{Conclusion, Confirmation, Contribution, Fate, Tier};
use crate::error::{Error, Result};
use crate::present::table::{Cell, Table, Tone};
use crate::report::explain::OutputFormat;
use crate::report::explain::render::write_table;
use crate::stats::{Comparison, Direction, Verdict};

fn table(id: &str, title: &str, header: &[(&str, bool)]) -> Table {
    Table::new(id, title, header.iter().map(|(h, n)| (h.to_string(), *n)).collect())
}

fn bytes(b: u64) -> String {
    if b >= GIB { format!("{:.1} GiB", b as f64 / GIB as f64) } else { format!("{} MiB", b.div_ceil(MIB)) }
}

/// `+12.3 % (CI +8.0 to +16.1 %)`, as an improvement (positive: better).
pub fn gain(c: &Comparison) -> String {
    let (g, lo, hi) = if c.direction == Direction::HigherIsBetter {
        (c.change, c.ci.lo - 1.0, c.ci.hi - 1.0)
    } else {
        (-c.change, 1.0 - c.ci.hi, 1.0 - c.ci.lo)
    };
    format!("{:+.1} % (CI {:+.1} to {:+.1} %)", g * 100.0, lo * 100.0, hi * 100.0)
}

pub(super) fn verdict(c: &Comparison) -> (&'static str, Tone) {
    match c.verdict {
        Verdict::Faster => ("faster", Tone::Better),
        Verdict::Slower => ("slower", Tone::Worse),
        Verdict::NoSignificantChange => ("no significant change", Tone::Muted),
    }
}

fn contribution(c: &Contribution) -> String {
    let with = if c.together_with.is_empty() {
        String::new()
    } else {
        format!(", acting together with {}", c.together_with.join(", "))
    };
    let measured_with = if c.measured_with.is_empty() {
        String::new()
    } else {
        format!(
            ", measured with {} in the set (not recommended: leaving them out alone cost little or nothing)",
            c.measured_with.join(", ")
        )
    };
    format!("{:+.1} points of the advised mean (CI {:+.1} to {:+.1}){with}{measured_with}", c.points, c.lo, c.hi)
}

/// What became of a candidate, in words.
pub fn fate_text(f: &Fate) -> String {
    match f {
        Fate::Recommended(Tier::Safe) => "recommended".into(),
        Fate::Recommended(Tier::Durability) => "recommended in the durability tier".into(),
        Fate::NoEffect(w) => format!("not recommended: {w}"),
        Fate::Slower(w) => format!("not recommended: {w}"),
        Fate::NotProven(w) => format!("not recommended: {w}"),
        Fate::Failed(w) => format!("not recommended: {w}"),
        Fate::NotTried(w) => format!("not tried: {w}"),
        Fate::Withdrawn(w) => format!("withdrawn: {w}"),
    }
}

fn memory_line(label: &str, m: &MemoryEstimate) -> String {
    format!(
        "{label}: {} global + {} per connection × {} max_connections = {} ({:.0} % of {}; the bound is 90 %){}",
        bytes(m.global),
        bytes(m.per_connection),
        m.max_connections,
        bytes(m.total),
        m.share() * 100.0,
        bytes(m.memory),
        if m.fits() { "" } else { " — OVER THE BOUND" }
    )
}

fn conclusion_text(r: &AdviseReport) -> String {
    let Some(res) = &r.result else { return "dry run: nothing was measured".into() };
    match res.conclusion {
        Conclusion::Recommended => format!(
            "{} value(s) recommended, each with a measured contribution whose interval excludes zero, confirmed \
             against the current config",
            res.fates.iter().filter(|f| f.recommended().is_some()).count()
        ),
        Conclusion::NothingToTry => "nothing to try: no rule proposed a value this server accepts".into(),
        Conclusion::NothingProven => "nothing is recommended: no value was proven to help on this workload".into(),
        Conclusion::BudgetTooSmall => "nothing is recommended: the budget was too small to prove anything".into(),
        Conclusion::NotConfirmed => "nothing is recommended: the confirmation did not hold".into(),
        Conclusion::Undecided => {
            let open: Vec<String> = res
                .undecided
                .iter()
                .map(|u| {
                    let more = match u.would_need {
                        Some(n) if n > u.repetitions => {
                            format!("about {} more runs per config would tell", n - u.repetitions)
                        }
                        Some(_) => "another screening round would tell".to_string(),
                        None => "more runs than can be planned would be needed".to_string(),
                    };
                    format!(
                        "{} ({}) at {} over {} runs per config; {more}",
                        u.group,
                        u.variables.join(", "),
                        u.change,
                        u.repetitions
                    )
                })
                .collect();
            format!("undecided, not \"nothing helps\": the budget ended with {}", open.join("; "))
        }
        Conclusion::Failed => "nothing is recommended: the current config could not be measured".into(),
    }
}

/// The candidates as a table.
pub fn candidates_table(r: &AdviseReport) -> Table {
    let mut t = table(
        "advise-candidates",
        "Candidates",
        &[
            ("variable", false),
            ("current", false),
            ("advised", false),
            ("risk", false),
            ("outcome", false),
            ("rule", false),
        ],
    );
    for (i, c) in r.candidates.iter().enumerate() {
        let fate = r.result.as_ref().map(|x| &x.fates[i]);
        let mut outcome = fate.map(fate_text).unwrap_or_else(|| "to be measured".into());
        if let Some(k) = r.result.as_ref().and_then(|x| x.contributions[i].as_ref()) {
            outcome = format!("{outcome}: {}", contribution(k));
        }
        let tone = match fate.and_then(Fate::recommended) {
            Some(_) => Tone::Better,
            None => Tone::Plain,
        };
        let risk = match (c.risk, &c.loses) {
            (Risk::Durability, Some(l)) => format!("durability trade (a crash can lose {l})"),
            (k, _) => k.label().to_string(),
        };
        t.rows.push(vec![
            Cell::toned(&c.variable, Tone::Plain),
            Cell::toned(c.old.clone().unwrap_or_default(), Tone::Muted),
            Cell::toned(&c.display, tone),
            Cell::toned(risk, Tone::Plain),
            Cell::toned(outcome, tone),
            Cell::toned(format!("{} ({}; {})", c.rule, c.source, c.why), Tone::Muted),
        ]);
    }
    t
}

/// The confirmation as a table: one row per thread count (and the geometric mean).
pub fn confirmation_table(r: &AdviseReport) -> Option<Table> {
    let c = r.result.as_ref()?.confirmation.as_ref()?;
    Some(confirmation_of(c, &r.metric, "advise-confirmation"))
}

/// A confirmation as a table with id `id`: one row per thread count (and the geometric mean), each
/// config's mean of `metric`, each one against the current config (and the advice against the dedicated
/// baseline, the durability tier against the advice) with interval and verdict, and what could be
/// detected.
pub fn confirmation_of(c: &Confirmation, metric: &str, id: &str) -> Table {
    let mut header: Vec<(String, bool)> = vec![("threads".into(), true)];
    for l in &c.labels {
        header.push((format!("{l} ({metric})"), true));
    }
    for l in c.labels.iter().skip(1) {
        header.push((format!("{l} vs current"), false));
    }
    let adv = c.index("advised");
    if adv.is_some() && c.index("dedicated").is_some() {
        header.push(("advised vs dedicated".into(), false));
    }
    if c.index("advised+durability").is_some() {
        header.push(("durability tier vs advised".into(), false));
    }
    header.push(("detectable".into(), true));
    let h: Vec<(&str, bool)> = header.iter().map(|(s, n)| (s.as_str(), *n)).collect();
    let mut t = table(id, &format!("Confirmation ({} shuffled repetitions)", c.repetitions), &h);
    let cmp = |x: &Option<Comparison>| match x {
        Some(x) => {
            let (v, tone) = verdict(x);
            Cell::toned(format!("{} {v}", gain(x)), tone)
        }
        None => Cell::toned("—", Tone::Muted),
    };
    for row in &c.rows {
        let mut cells =
            vec![Cell::toned(row.threads.map(|t| t.to_string()).unwrap_or_else(|| "geo. mean".into()), Tone::Plain)];
        for m in &row.means {
            cells.push(Cell::toned(m.map(|v| format!("{v:.1}")).unwrap_or_else(|| "—".into()), Tone::Plain));
        }
        for v in row.vs_current.iter().skip(1) {
            cells.push(cmp(v));
        }
        if adv.is_some() && c.index("dedicated").is_some() {
            cells.push(cmp(&row.advised_vs_dedicated));
        }
        if c.index("advised+durability").is_some() {
            cells.push(cmp(&row.durability_vs_advised));
        }
        cells.push(Cell::toned(
            row.detectable.map(|d| format!("±{:.1} %", d * 100.0)).unwrap_or_else(|| "—".into()),
            Tone::Muted,
        ));
        t.rows.push(cells);
    }
    t
}

/// The report for the terminal or as markdown.
fn render_text(r: &AdviseReport, format: OutputFormat, color: bool) -> String {
    let mut out = String::new();
    let f = &r.facts;
    let md = format == OutputFormat::Markdown;
    // Names and values come from the user's files and the server: text, whatever they hold.
    let t = |s: &str| crate::markup::text(md, s);
    let h = |s: &str| if md { format!("## {}\n\n", t(s)) } else { format!("{}\n", t(s)) };
    out.push_str(&h("versus advise"));
    let _ = writeln!(
        out,
        "target: {} ({}); workload {} at {} thread(s); metric {}; budget {} min, {} s per run",
        t(&r.target),
        t(&r.server_version.clone().unwrap_or_else(|| format!("{} {}", f.flavor, f.version))),
        t(&r.workload),
        r.threads.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        r.metric,
        r.budget_s / 60,
        r.seconds_per_run
    );
    if !r.noise_band_source.is_empty() {
        let _ = writeln!(out, "noise band {}: {}", super::fmt::percent(r.noise_band), t(&r.noise_band_source));
    }
    let _ = writeln!(
        out,
        "host: {} CPU(s), {} RAM{}; datadir {} on {}{}; fsync {}",
        f.cpus,
        bytes(f.host_memory),
        if f.memory_given { format!(", advising for {} (--memory)", bytes(f.memory)) } else { String::new() },
        t(f.fs_type.as_deref().unwrap_or("?")),
        t(f.device.as_deref().unwrap_or("?")),
        match f.rotational {
            Some(true) => " (rotational)",
            Some(false) => " (not rotational)",
            None => "",
        },
        f.fsync_us.map(|u| format!("{:.2} ms", u / 1000.0)).unwrap_or_else(|| "not measured".into())
    );
    if let Some(d) = f.data_bytes {
        let _ = writeln!(out, "data: {} in {} table(s)", bytes(d), f.tables.unwrap_or(0));
    }
    if let Some(p) = &r.probe {
        let pct = |x: Option<f64>| x.map(|v| format!("{:.1} %", v * 100.0)).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            out,
            "probe ({:.0} s): {} {}; buffer-pool reads per request {}; redo {} per s{}; checkpoint age at the end {}; \
             temporary tables on disk {}; table-open misses {}; threads created per connection {}; log waits {}",
            p.seconds,
            p.tps.map(|v| format!("{v:.1}")).unwrap_or_else(|| "—".into()),
            r.metric,
            pct(p.pool_miss),
            p.redo_per_s.map(|v| bytes(v as u64)).unwrap_or_else(|| "—".into()),
            p.redo_log_seconds.map(|s| format!(" (the redo log holds {s:.0} s of it)")).unwrap_or_default(),
            match (p.checkpoint_age, p.checkpoint_limit.zip(p.checkpoint_share)) {
                (Some(a), Some((l, s))) => format!("{} of at most {} ({:.0} %)", bytes(a), bytes(l), s * 100.0),
                (Some(a), None) => bytes(a),
                (None, _) => "not reported by this server".into(),
            },
            pct(p.tmp_disk),
            p.table_open_misses,
            pct(p.threads_created),
            p.log_waits
        );
    }
    out.push('\n');
    write_table(&mut out, &candidates_table(r), format, color);
    out.push('\n');
    if !r.refused.is_empty() {
        out.push_str(&h("Dropped: the server refuses or adjusts the value"));
        for s in &r.refused {
            let _ = writeln!(
                out,
                "- {}",
                t(&format!("{}={}: {}", s.name, s.a.clone().unwrap_or_default(), s.reason.text()))
            );
        }
        out.push('\n');
    }
    if !r.considered.is_empty() {
        out.push_str(&h("Rules that proposed nothing"));
        for c in &r.considered {
            let _ = writeln!(out, "- {}", t(&format!("{} ({}): {}", c.variable, c.risk.label(), c.outcome)));
        }
        out.push('\n');
    }
    if let Some(d) = &r.dedicated {
        let _ = writeln!(out, "dedicated baseline: {}", t(&format!("{} — {}", d.how, d.overrides.join(" "))));
    }
    out.push_str(&h("Memory worst case at max_connections"));
    let _ = writeln!(out, "- {}", t(&memory_line("current", &r.memory_current)));
    if let Some(m) = &r.memory_advised {
        let _ = writeln!(out, "- {}", t(&memory_line("advised", m)));
    }
    out.push('\n');
    if let Some(t) = confirmation_table(r) {
        write_table(&mut out, &t, format, color);
        out.push('\n');
    }
    if let Some(g) = &r.dedicated_gap {
        out.push_str(&h(g.heading()));
        for l in g.lines() {
            let _ = writeln!(out, "- {}", t(&l));
        }
        out.push('\n');
    }
    if r.result.is_none() {
        out.push_str(&h("Plan"));
        for l in &r.plan {
            let _ = writeln!(out, "- {}", t(l));
        }
        out.push('\n');
    }
    if let Some(res) = &r.result {
        for n in &res.notes {
            let _ = writeln!(out, "note: {}", t(n));
        }
        let _ = writeln!(out, "{} steps run in {} s of a {} s budget", res.steps.len(), r.elapsed_s, r.budget_s);
    }
    let _ = writeln!(out, "conclusion: {}", t(&conclusion_text(r)));
    if !r.experiments.is_empty() {
        let list: Vec<String> = r.experiments.iter().map(|(id, n)| format!("{n} (#{id})")).collect();
        let _ = writeln!(out, "stored experiments: {}", t(&list.join(", ")));
    }
    out
}

/// The my.cnf fragment: the recommended values under `[mysqld]`, each after a comment with its old
/// value, rule, risk class and measured effect; the durability tier in a section of its own saying
/// what a crash can lose; the values not recommended as comments.
pub fn render_cnf(r: &AdviseReport) -> String {
    let mut out = String::new();
    let f = &r.facts;
    let _ = writeln!(
        out,
        "# versus advise: {} ({}), {} at {} thread(s), for {} of RAM",
        // A line break in a name would end the comment and put an option into the fragment.
        crate::markup::shown(&r.target),
        crate::markup::shown(&r.server_version.clone().unwrap_or_else(|| format!("{} {}", f.flavor, f.version))),
        crate::markup::shown(&r.workload),
        r.threads.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        bytes(f.memory)
    );
    let _ = writeln!(out, "# {}", crate::markup::shown(&conclusion_text(r)));
    if let Some(m) = &r.memory_advised {
        let _ = writeln!(out, "# {}", memory_line("worst case", m));
    }
    let _ = writeln!(out, "[mysqld]");
    let line = |out: &mut String, i: usize, prefix: &str| {
        let c = &r.candidates[i];
        let effect = r
            .result
            .as_ref()
            .and_then(|x| x.contributions[i].as_ref())
            .map(contribution)
            .unwrap_or_else(|| "no measured effect".into());
        let _ = writeln!(
            out,
            "# was {}; rule: {}; risk: {}; measured: {effect}",
            c.old.as_deref().unwrap_or("unset"),
            c.rule,
            c.risk.label()
        );
        let _ = writeln!(out, "{prefix}{} = {}", c.variable, c.display);
    };
    let Some(res) = &r.result else {
        let _ = writeln!(out, "# dry run: nothing measured, nothing recommended");
        return out;
    };
    if let Some(g) = &r.dedicated_gap {
        let _ = writeln!(out, "# {}:", g.heading());
        for l in g.lines() {
            let _ = writeln!(out, "#   {l}");
        }
    }
    for i in res.recommended(Tier::Safe) {
        line(&mut out, i, "");
    }
    let traded = res.recommended(Tier::Durability);
    if !traded.is_empty() {
        let _ = writeln!(out, "\n# DURABILITY TRADES (--allow-durability-trade): a crash can lose data");
        for &i in &traded {
            if let Some(l) = &r.candidates[i].loses {
                let _ = writeln!(out, "# {}: a crash can lose {l}", r.candidates[i].variable);
            }
            line(&mut out, i, "");
        }
    }
    let not: Vec<usize> = (0..r.candidates.len()).filter(|&i| res.fates[i].recommended().is_none()).collect();
    if !not.is_empty() {
        let _ = writeln!(out, "\n# Not recommended");
        for i in not {
            let c = &r.candidates[i];
            let _ = writeln!(
                out,
                "# {} = {} (was {}): {}",
                c.variable,
                c.display,
                c.old.as_deref().unwrap_or("unset"),
                fate_text(&res.fates[i])
            );
        }
    }
    out
}

/// The report in `format`.
pub fn render_advise(r: &AdviseReport, format: OutputFormat, color: bool) -> Result<String> {
    match format {
        OutputFormat::Json => serde_json::to_string_pretty(r)
            .map(|s| s + "\n")
            .map_err(|e| Error::Other(format!("cannot write the advice as JSON: {e}"))),
        _ => Ok(render_text(r, format, color)),
    }
}

#[cfg(test)]
#[path = "advise_tests.rs"]
mod tests;
