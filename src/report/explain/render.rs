//! Output of `versus diff-vars` and `versus explain`: a terminal table, markdown, or JSON. The tables
//! are the report's [`Table`]s, written by the report's terminal and markdown writers.

use std::fmt::Write as _;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::explain::bisect::Conclusion;
use crate::explain::diffvars::{VarChanges, VarDiff};
use crate::explain::runner::{ExplainReport, SkipReason};
use crate::explain::series::SeriesReport;
use crate::present::table::{Cell, Table, Tone};
use crate::present::writers::{markdown, text as terminal};

/// How the commands print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Aligned text for the terminal.
    #[default]
    Text,
    /// Markdown.
    Markdown,
    /// JSON.
    Json,
}

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" | "table" => Ok(OutputFormat::Text),
            "markdown" | "md" => Ok(OutputFormat::Markdown),
            "json" => Ok(OutputFormat::Json),
            other => Err(format!("unknown format '{other}'; choose text, markdown or json")),
        }
    }
}

/// Writes `t` in `format` (text or markdown).
pub fn write_table(out: &mut String, t: &Table, format: OutputFormat, color: bool) {
    match format {
        OutputFormat::Markdown => markdown::write_table(out, t),
        _ => terminal::write_table(out, t, color),
    }
}

fn plain(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), tone: Tone::Plain }
}

fn muted(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), tone: Tone::Muted }
}

/// Shortens long values (optimizer_switch …) for tables; JSON keeps them whole.
fn short(v: &str) -> String {
    crate::present::svg::truncate(v, 60)
}

fn table(id: &str, title: &str, header: &[(&str, bool)]) -> Table {
    Table::new(id, title, header.iter().map(|(h, n)| (h.to_string(), *n)).collect())
}

/// The differing variables as a table.
pub fn changes_table(c: &VarChanges, id: &str, title: &str) -> Table {
    let mut t = table(
        id,
        title,
        &[("variable", false), (c.a.as_str(), false), (c.b.as_str(), false), ("what", false), ("list elements", false)],
    );
    let mut caption = c.summary.clone();
    if c.noise_hidden > 0 {
        caption.push_str(" (noise not listed)");
    }
    t.caption = Some(caption);
    for r in &c.rows {
        let cell = |v: &Option<String>| match v {
            Some(x) => plain(short(x)),
            None => muted(crate::report::fmt::ABSENT),
        };
        let what = match (&r.documented, r.noise) {
            (_, Some(_)) => muted(r.what()),
            (Some(doc), None) => plain(format!("{} ({doc})", r.what())),
            (None, None) => plain(r.what()),
        };
        let detail = crate::present::svg::truncate(r.detail.as_deref().unwrap_or(""), 100);
        t.rows.push(vec![plain(&r.name), cell(&r.a), cell(&r.b), what, plain(detail)]);
    }
    t
}

/// `versus diff-vars` output (noise only with `all`).
pub fn render_diff(d: &VarDiff, all: bool, format: OutputFormat, color: bool) -> Result<String> {
    let c = d.changes(all);
    if format == OutputFormat::Json {
        return serde_json::to_string_pretty(&c)
            .map(|s| s + "\n")
            .map_err(|e| Error::Other(format!("cannot write JSON: {e}")));
    }
    let mut out = String::new();
    let mut t = changes_table(&c, "diff-vars", "Server variables that differ");
    if !all && c.noise_hidden > 0 {
        t.caption = Some(format!("{}; --all shows the noise", c.summary));
    }
    write_table(&mut out, &t, format, color);
    if !c.session.is_empty() {
        write_table(&mut out, &session_table(&c), format, color);
    }
    Ok(out)
}

/// The session character sets and collation of both targets' workload connections.
fn session_table(c: &VarChanges) -> Table {
    let mut t = table(
        "diff-vars-session",
        "Session values of a workload connection",
        &[("variable", false), (c.a.as_str(), false), (c.b.as_str(), false), ("differs", false)],
    );
    t.caption = Some(
        "Read over a connection like a workload's (the handshake asks for utf8mb4_general_ci, then the target's \
         SET NAMES): what the connections use, whatever the global defaults above say. The client sets these \
         (--charset-a/--charset-b); the server's own defaults are startup options (character-set-server, \
         collation-server, skip-character-set-client-handshake)."
            .into(),
    );
    for r in &c.session {
        let v = |x: &Option<String>| x.clone().map(plain).unwrap_or_else(|| muted(crate::report::fmt::ABSENT));
        let differs = match (&r.a, &r.b) {
            (Some(x), Some(y)) if !crate::server::effective::same_value(x, y) => "yes",
            _ => "",
        };
        t.rows.push(vec![plain(&r.name), v(&r.a), v(&r.b), plain(differs)]);
    }
    t
}

/// The variables bisected, how each is given to B, and what became of it.
fn candidates_table(r: &ExplainReport) -> Table {
    let mut t = table(
        "explain-candidates",
        "Variables bisected",
        &[
            ("variable", false),
            ("A", false),
            ("B", false),
            ("given to B as", false),
            ("data", false),
            ("result", false),
        ],
    );
    t.caption = Some("Differing variables that B accepts with A's value at startup.".into());
    for (i, c) in r.candidates.iter().enumerate() {
        let result = match &r.outcome {
            None => String::new(),
            Some(o) => super::mapping::result_text(r, o, i),
        };
        let given = crate::present::svg::truncate(&super::mapping::given_text(r, i), 70);
        let data = super::mapping::data_text(r, i);
        t.rows.push(vec![
            plain(&c.name),
            plain(short(&c.a)),
            plain(short(&c.b)),
            plain(given),
            plain(data),
            plain(result),
        ]);
    }
    if let Some(note) = r.outcome.as_ref().and_then(super::mapping::cleared_together_note) {
        t.footnotes.push(note);
    }
    t
}

/// The differing variables not bisected (noise only counted).
fn skipped_table(r: &ExplainReport) -> Table {
    let mut t = table(
        "explain-skipped",
        "Variables not bisected",
        &[("variable", false), ("A", false), ("B", false), ("why", false)],
    );
    let noise = r.skipped.iter().filter(|s| !s.reason.unexplainable()).count();
    t.caption = Some(format!(
        "A gap they cause cannot be explained by configuration. {noise} noise difference(s) (paths, ports, ids, \
         versions, host-sized or derived values) are not listed."
    ));
    for s in r.skipped.iter().filter(|s| s.reason.unexplainable()) {
        let v = |x: &Option<String>| {
            x.as_deref().map(short).map(plain).unwrap_or_else(|| muted(crate::report::fmt::ABSENT))
        };
        t.rows.push(vec![plain(&s.name), v(&s.a), v(&s.b), plain(s.reason.text())]);
    }
    t
}

/// The variables not bisected, or one line when every differing variable could be tried.
fn write_skipped(out: &mut String, r: &ExplainReport, format: OutputFormat, color: bool) {
    let t = skipped_table(r);
    if t.rows.is_empty() {
        let noise = r.skipped.len();
        let _ = writeln!(
            out,
            "Every differing variable could be given A's value on B; {noise} noise difference(s) are not bisected.\n"
        );
    } else {
        write_table(out, &t, format, color);
    }
}

fn steps_table(r: &ExplainReport) -> Table {
    let mut t =
        table("explain-steps", "Steps", &[("step", true), ("experiment", false), ("probes", false), ("runs", true)]);
    if let Some(o) = &r.outcome {
        for (i, s) in o.steps.iter().enumerate() {
            let exp = r.experiments.get(i).map(|(id, n)| format!("{n} (id {id})")).unwrap_or_default();
            t.rows.push(vec![
                plain(s.step.number.to_string()),
                plain(exp),
                plain(s.labels.join(", ")),
                plain(s.runs.to_string()),
            ]);
        }
    }
    t
}

fn header(r: &ExplainReport) -> Vec<String> {
    let v = |i: usize| r.versions[i].as_deref().map(|v| format!(" — {v}")).unwrap_or_default();
    let mut lines = vec![
        format!("A = {}{}", r.a, v(0)),
        format!("B = {}{}", r.b, v(1)),
        format!(
            "{} at {} thread(s), {} s per run, {} repetitions per probe; metric {} ({} is better)",
            r.workload,
            r.threads.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            r.duration_s,
            r.repetitions,
            r.metric,
            if r.higher_is_better { "higher" } else { "lower" }
        ),
    ];
    if !r.noise_band_source.is_empty() {
        lines.push(format!("noise band {}: {}", crate::report::fmt::percent(r.noise_band), r.noise_band_source));
    }
    if !r.repetition_rule.is_empty() {
        lines.push(r.repetition_rule.clone());
    }
    lines
}

fn plan_lines(r: &ExplainReport) -> Vec<String> {
    let minutes = |runs: usize| (runs as u64 * r.seconds_per_run).div_ceil(60);
    let rpp = r.repetitions as usize * r.threads.len();
    vec![
        format!(
            "plan: each round runs its base (B, then B with the values found so far), A and the base with the \
             other {} value(s) ({} runs), then resolves them: up to 4 at a time one by one, more by halving; \
             the confirmation runs B, A, each finding alone and the findings cumulatively (without the findings \
             alone after the first when the budget is short)",
            r.candidates.len(),
            3 * rpp
        ),
        format!(
            "worst case {} runs for 1 finding, {} for 2, {} for 3 (about {}, {}, {} min at {} s per run); budget \
             --max-runs {}",
            r.estimate_runs[0],
            r.estimate_runs[1],
            r.estimate_runs[2],
            minutes(r.estimate_runs[0]),
            minutes(r.estimate_runs[1]),
            minutes(r.estimate_runs[2]),
            r.seconds_per_run,
            r.max_runs
        ),
    ]
}

/// `versus explain` output (a dry run prints the plan instead of results).
pub fn render_explain(r: &ExplainReport, format: OutputFormat, color: bool) -> Result<String> {
    if format == OutputFormat::Json {
        return serde_json::to_string_pretty(r)
            .map(|s| s + "\n")
            .map_err(|e| Error::Other(format!("cannot write JSON: {e}")));
    }
    let md = format == OutputFormat::Markdown;
    let mut out = String::new();
    if md {
        let _ = writeln!(out, "# versus explain: B against A\n");
    }
    for l in header(r) {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, crate::markup::text(md, &l));
    }
    out.push('\n');
    let Some(o) = &r.outcome else {
        write_table(&mut out, &candidates_table(r), format, color);
        if let Some(t) = super::mapping::mapping_table(r) {
            write_table(&mut out, &t, format, color);
        }
        write_skipped(&mut out, r, format, color);
        let total = r.total_estimate();
        for l in plan_lines(r).into_iter().chain(super::mapping::data_plan_line(r)).chain([total]) {
            let _ = writeln!(out, "{}", crate::markup::text(md, &l));
        }
        return Ok(out);
    };
    let last = r.final_experiment().map(|(id, n)| format!("{n} (id {id})")).unwrap_or_default();
    let s = crate::explain::section::from_outcome(o, &last, "", &r.metric, r.higher_is_better, r.confidence);
    let verdict = match o.conclusion {
        Conclusion::NoGap => "B is not significantly different from A: there is no gap to explain.",
        Conclusion::NotConfig if !r.shaping.is_empty() => {
            "Setting all of A's values on B (those that shape the data on data prepared under them) does not move \
             it significantly towards A: the gap is not in the variables that could be set; they were cleared \
             together."
        }
        Conclusion::NotConfig => {
            "Setting all of A's values on B does not move it significantly towards A: the gap is not in the \
             variables that could be set; they were cleared together."
        }
        Conclusion::Explained => "",
        Conclusion::Partial => "The search is incomplete (see the notes): some groups are unresolved.",
    };
    for line in super::sentences(&s).into_iter().chain((!verdict.is_empty()).then(|| verdict.to_string())) {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, crate::markup::text(md, &line));
    }
    let unexplainable: Vec<String> = r
        .skipped
        .iter()
        .filter(|x| {
            matches!(
                x.reason,
                SkipReason::NotOnB | SkipReason::Rejected(_) | SkipReason::Adjusted(_) | SkipReason::NotGiven(_)
            )
        })
        .map(|x| x.name.clone())
        .collect();
    if !unexplainable.is_empty() {
        let _ = writeln!(
            out,
            "{}Unexplainable by configuration (cannot be given A's value on B): {}.",
            if md { "- " } else { "" },
            crate::markup::text(md, &unexplainable.join(", "))
        );
    }
    out.push('\n');
    if o.gap.is_some() && !s.effects.is_empty() {
        write_table(&mut out, &super::attribution_table(&s), format, color);
    }
    write_table(&mut out, &candidates_table(r), format, color);
    if let Some(t) = super::mapping::mapping_table(r) {
        write_table(&mut out, &t, format, color);
    }
    write_skipped(&mut out, r, format, color);
    if let Some(t) = super::mapping::prepared_table(r) {
        write_table(&mut out, &t, format, color);
    }
    write_table(&mut out, &steps_table(r), format, color);
    if !o.notes.is_empty() && s.effects.is_empty() {
        for n in &o.notes {
            let _ = writeln!(out, "note: {}", crate::markup::text(md, n));
        }
    }
    let _ = writeln!(out, "{} runs used of --max-runs {}.", o.runs_used, r.max_runs);
    if let Some((_, name)) = r.final_experiment() {
        let _ = writeln!(
            out,
            "Every step is a stored experiment; for the report: versus report {} -o explain.html",
            crate::markup::text(md, name)
        );
    }
    Ok(out)
}

/// One line per case: where the metric stepped, or that it did not.
pub fn series_lines(s: &SeriesReport) -> Vec<String> {
    s.cases
        .iter()
        .map(|c| {
            let case = format!("{} @{}", c.workload, c.threads);
            if c.changes.is_empty() {
                let why = c.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
                format!("{case}: no change point in {} at p ≤ {}{why}.", s.metric, s.p_value)
            } else {
                let steps: Vec<String> = c
                    .changes
                    .iter()
                    .map(|x| {
                        format!(
                            "at {} {} stepped {} ({} → {}, p = {:.3})",
                            x.label,
                            s.metric,
                            crate::report::fmt::change(x.step),
                            crate::report::fmt::num(x.mean_before),
                            crate::report::fmt::num(x.mean_after),
                            x.p_value
                        )
                    })
                    .collect();
                format!("{case}: {}.", steps.join("; "))
            }
        })
        .collect()
}

/// The relative-to-first table of one case of a series, change points marked.
pub fn series_table(s: &SeriesReport, case: usize) -> Table {
    let c = &s.cases[case];
    let level = format!("{} % CI", crate::stats::level_percent(s.confidence));
    let mut t = table(
        &format!("series-{case}"),
        &format!("Series: {} @{} threads", c.workload, c.threads),
        &[
            ("target", false),
            ("n", true),
            (&s.metric, true),
            ("relative to first", true),
            (&level, true),
            ("change point", false),
        ],
    );
    t.caption = Some(format!(
        "Each target's mean over its runs divided by the first target's, highlighted where its interval excludes 1; \
         change points by E-divisive means with a permutation test (p ≤ {}, at least {} target(s) per segment).",
        s.p_value, s.min_segment
    ));
    for (i, p) in c.points.iter().enumerate() {
        // A call: the interval excludes 1, better or worse by the metric's direction.
        let tone = match (p.ci_lo, p.ci_hi) {
            (Some(lo), _) if i > 0 && lo > 1.0 => {
                if s.higher_is_better {
                    Tone::Better
                } else {
                    Tone::Worse
                }
            }
            (_, Some(hi)) if i > 0 && hi < 1.0 => {
                if s.higher_is_better {
                    Tone::Worse
                } else {
                    Tone::Better
                }
            }
            _ => Tone::Plain,
        };
        let change = c.changes.iter().find(|x| x.index == i).map(|x| {
            let arrow = if (x.step > 0.0) == s.higher_is_better { "▲" } else { "▼" };
            format!("{arrow} {} (p = {:.3})", crate::report::fmt::change(x.step), x.p_value)
        });
        t.rows.push(vec![
            plain(&p.label),
            plain(p.values.len().to_string()),
            plain(crate::report::fmt::opt_num(p.mean)),
            Cell { text: p.relative.map(crate::report::fmt::ratio).unwrap_or_else(|| "—".into()), tone },
            plain(match (p.ci_lo, p.ci_hi) {
                (Some(lo), Some(hi)) if i > 0 => crate::report::fmt::ci(lo, hi),
                _ => String::new(),
            }),
            plain(change.unwrap_or_default()),
        ]);
    }
    if let Some(n) = &c.note {
        t.footnotes.push(n.clone());
    }
    t
}

/// `versus series` output.
pub fn render_series(s: &SeriesReport, format: OutputFormat, color: bool) -> Result<String> {
    if format == OutputFormat::Json {
        return serde_json::to_string_pretty(s)
            .map(|x| x + "\n")
            .map_err(|e| Error::Other(format!("cannot write JSON: {e}")));
    }
    let md = format == OutputFormat::Markdown;
    let mut out = String::new();
    if md {
        let _ = writeln!(out, "# Series: {}\n", crate::markup::text(md, &s.labels.join(" → ")));
    } else {
        let _ = writeln!(
            out,
            "series {}\n",
            crate::markup::text(md, &format!("{} from {}", s.labels.join(" → "), s.experiments.join(", ")))
        );
    }
    for l in series_lines(s) {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, crate::markup::text(md, &l));
    }
    out.push('\n');
    for i in 0..s.cases.len() {
        write_table(&mut out, &series_table(s, i), format, color);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::series;

    /// Hostile target and workload names in the series output: text in markdown and in the terminal.
    #[test]
    fn series_names_are_text() {
        let evil = "<script>x</script>|`t`*s*\n# injected\n[x](javascript:y)\x1b[31m";
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|l| format!("{l}{evil}")).collect();
        let values = vec![vec![100.0, 101.0], vec![99.0, 100.0], vec![80.0, 81.0]];
        let case = series::build_case(evil, 4, &labels, &values, 0.95, &series::change_point_config(3, 0.05));
        let s = SeriesReport {
            metric: "tps".into(),
            higher_is_better: true,
            confidence: 0.95,
            p_value: 0.05,
            min_segment: 1,
            experiments: vec![format!("e{evil}")],
            labels,
            cases: vec![case],
        };
        for format in [OutputFormat::Markdown, OutputFormat::Text] {
            let out = render_series(&s, format, false).unwrap();
            assert!(!out.lines().any(|l| l.starts_with("# injected")), "{out}");
            assert!(!out.contains('\x1b'), "{out}");
            if format == OutputFormat::Markdown {
                for raw in ["<script", "`t`", "*s*", "[x]("] {
                    assert!(!out.contains(raw), "{raw}: {out}");
                }
            }
        }
    }
}
