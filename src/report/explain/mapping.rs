//! The parts of `versus explain`'s output about how A's values reach B: the mapping of list-valued,
//! retyped, linked, session and derived variables, the data prepared under values that shape it (and
//! what that costs in a dry run), and how each bisected variable ended, with groups that were cleared
//! together said to be so.

use crate::explain::bisect::SearchOutcome;
use crate::explain::runner::ExplainReport;
use crate::explain::transfer::options_of;
use crate::present::table::{Cell, Table, Tone};

fn plain(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), tone: Tone::Plain }
}

fn muted(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), tone: Tone::Muted }
}

fn table(id: &str, title: &str, header: &[&str]) -> Table {
    Table::new(id, title, header.iter().map(|h| (h.to_string(), false)).collect())
}

/// How the variables that are not simply `name=value` are given to B; `None` when there are none.
pub fn mapping_table(r: &ExplainReport) -> Option<Table> {
    if r.mapping.is_empty() {
        return None;
    }
    let mut t = table("explain-mapping", "How A's values are given to B", &["variable", "A", "B", "given to B"]);
    t.caption = Some(
        "Lists are taken element by element, values whose type changed are mapped where the vendor documents \
         how, variables valid only together move as one; values that shape the data are set while preparing."
            .into(),
    );
    let short = |v: &Option<String>| match v {
        Some(x) => plain(crate::present::svg::truncate(x, 40)),
        None => muted(crate::report::fmt::ABSENT),
    };
    for m in &r.mapping {
        t.rows.push(vec![plain(&m.variable), short(&m.a), short(&m.b), plain(&m.how)]);
    }
    Some(t)
}

/// What a bisected variable became: culprit, cleared (alone or together with others), unresolved.
pub fn result_text(r: &ExplainReport, o: &SearchOutcome, i: usize) -> String {
    if let Some((n, f)) = o.findings.iter().enumerate().find(|(_, f)| f.set.contains(&i)) {
        let what = if f.set.len() == 1 { "culprit" } else { "acts together with others" };
        return format!("{what} #{} (round {})", n + 1, f.round);
    }
    if o.unresolved.iter().any(|g| g.contains(&i)) {
        return "unresolved".into();
    }
    match o.cleared_group(i) {
        Some(group) if group.len() > 1 => {
            let others: Vec<&str> = group.iter().filter(|&&j| j != i).map(|&j| r.candidates[j].name.as_str()).collect();
            let shown: Vec<&str> = others.iter().take(3).copied().collect();
            let more = if others.len() > 3 { format!(" and {} more", others.len() - 3) } else { String::new() };
            format!("cleared together with {}{more}", shown.join(", "))
        }
        Some(_) => "cleared".into(),
        None if o.conclusion == crate::explain::bisect::Conclusion::NoGap => "not searched: no significant gap".into(),
        None => "not searched".into(),
    }
}

/// The footnote for groups cleared together, when there are any.
pub fn cleared_together_note(o: &SearchOutcome) -> Option<String> {
    o.cleared_with.iter().any(|g| g.len() > 1).then(|| {
        "Cleared together: left out (or set) as one group, the group's absence cost nothing significant, so its \
         values were not tried one by one. A value that matters inside such a group while another cancels it \
         would need the group split to be found (raise --singles-max to try groups up to that size value by \
         value)."
            .to_string()
    })
}

/// How each bisected candidate is given to B, for the candidates table: the startup options, or the
/// client side's `SET NAMES`.
pub fn given_text(r: &ExplainReport, i: usize) -> String {
    let c = &r.candidates[i];
    match (&c.transfer.charset, options_of(c).join(" ")) {
        (Some(cs), o) if o.is_empty() => format!("connections: {}", cs.statement()),
        (_, o) => o,
    }
}

/// `prepared under it` for a candidate whose A value shapes the data.
pub fn data_text(r: &ExplainReport, i: usize) -> &'static str {
    if r.candidates[i].transfer.shapes_data { "prepared under it" } else { "" }
}

/// The dry run's line about data-shaping candidates and what preparing under them costs.
pub fn data_plan_line(r: &ExplainReport) -> Option<String> {
    if r.shaping.is_empty() {
        return None;
    }
    let each = r.seconds_per_preparation;
    Some(format!(
        "{} variable(s) shape the data ({}): the probes that set A's value run on data prepared under it, up to {} \
         preparation(s) besides B's and A's, about {each} s each ({} s in all), in the worst case",
        r.shaping.len(),
        r.shaping.join(", "),
        r.extra_preparations,
        each * r.extra_preparations as u64
    ))
}

/// The data the search prepared and the probes that ran on each; `None` when nothing was prepared.
pub fn prepared_table(r: &ExplainReport) -> Option<Table> {
    if r.prepared.is_empty() {
        return None;
    }
    let mut t = table("explain-data", "Data prepared", &["server options set while preparing", "probes run on it"]);
    t.caption = Some(
        "Each set of values that shape the data was prepared once and restored before every run of the probes \
         that set it."
            .into(),
    );
    for d in &r.prepared {
        let options =
            if d.options.is_empty() { "(none: the build's defaults)".to_string() } else { d.options.join(" ") };
        t.rows.push(vec![plain(options), plain(d.probes.join(", "))]);
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::bisect::{Conclusion, Suspect};

    fn report(names: &[&str], cleared: Vec<usize>, cleared_with: Vec<Vec<usize>>) -> ExplainReport {
        let candidates: Vec<Suspect> = names.iter().map(|n| Suspect::new(*n, "1", "2")).collect();
        let outcome = SearchOutcome {
            candidates: candidates.clone(),
            gap: None,
            rounds: vec![],
            findings: vec![],
            together: None,
            unresolved: vec![],
            cleared,
            cleared_with,
            unexplained_points: None,
            conclusion: Conclusion::NotConfig,
            steps: vec![],
            runs_used: 0,
            notes: vec![],
        };
        let text = serde_json::json!({
            "a": "A", "b": "B", "versions": [null, null], "workload": "w", "threads": [1], "duration_s": 1,
            "repetitions": 2, "metric": "tps", "higher_is_better": true, "confidence": 0.95,
            "candidates": candidates, "skipped": [], "max_runs": 10, "estimate_runs": [1, 2, 3],
            "seconds_per_run": 1, "outcome": outcome, "experiments": []
        });
        serde_json::from_value(text).unwrap()
    }

    #[test]
    fn values_cleared_as_a_group_are_said_to_be_cleared_together() {
        let r = report(&["a", "b", "c", "d"], vec![0, 1, 2], vec![vec![0], vec![1, 2, 3], vec![1, 2, 3]]);
        let o = r.outcome.as_ref().unwrap();
        assert_eq!(result_text(&r, o, 0), "cleared");
        assert_eq!(result_text(&r, o, 1), "cleared together with c, d");
        assert_eq!(result_text(&r, o, 3), "not searched");
        let note = cleared_together_note(o).unwrap();
        assert!(note.contains("would need the group split"), "{note}");
        let alone = report(&["a"], vec![0], vec![vec![0]]);
        assert!(cleared_together_note(alone.outcome.as_ref().unwrap()).is_none());
    }
}
