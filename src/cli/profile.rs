//! The profile sections that `explain --profile` and `series --profile` print after their own output
//! (docs/profile.md).

use super::DbArg;
use crate::error::Result;
use crate::explain::series;
use crate::metric::Metric;
use crate::report::explain::OutputFormat;
use crate::report::{self, Dimension, Selection};
use crate::server::Home;
use crate::store::Store;

/// The profile section of `experiment` (explain's first step, A against B).
pub(super) fn profile_text(
    home: &Home,
    db: &DbArg,
    experiment: i64,
    metric: Metric,
    format: OutputFormat,
    color: bool,
) -> Result<String> {
    let sel = Selection {
        experiments: vec![experiment.to_string()],
        vs: Dimension::Target,
        baseline: Some("A".into()),
        metric,
        ..Selection::default()
    };
    profile_of(&db.open(home)?, &sel, format, color)
}

/// At each change point of the series `s`, the profile section of the two targets around it.
pub(super) fn change_point_profiles(
    home: &Home,
    db: &DbArg,
    experiments: &[String],
    s: &series::SeriesReport,
    metric: Metric,
    format: OutputFormat,
    color: bool,
) -> Result<String> {
    let mut steps: Vec<usize> = s.cases.iter().flat_map(|c| c.changes.iter().map(|ch| ch.index)).collect();
    steps.sort_unstable();
    steps.dedup();
    let store = db.open(home)?;
    let mut out = String::new();
    if steps.is_empty() && format != OutputFormat::Json {
        out.push_str("No change point: no step of the series to profile.\n");
    }
    for k in steps.into_iter().filter(|&k| k > 0 && k < s.labels.len()) {
        let (before, after) = (&s.labels[k - 1], &s.labels[k]);
        let sel = Selection {
            experiments: experiments.to_vec(),
            vs: Dimension::Target,
            baseline: Some(before.clone()),
            targets: vec![before.clone(), after.clone()],
            metric,
            ..Selection::default()
        };
        out.push_str(&profile_of(&store, &sel, format, color)?);
    }
    Ok(out)
}

/// The profile section of the runs `sel` selects, in `format` (nothing for JSON: `versus report
/// --format json` has it).
fn profile_of(store: &Store, sel: &Selection, format: OutputFormat, color: bool) -> Result<String> {
    let r = report::build_report(store, sel)?;
    let mut out = String::new();
    match format {
        OutputFormat::Json => {}
        OutputFormat::Markdown => report::profile::write(&mut report::markdown::MarkdownWriter { out: &mut out }, &r),
        OutputFormat::Text => report::profile::write(&mut report::terminal::TextWriter { out: &mut out, color }, &r),
    }
    if r.profiles.is_empty() && format != OutputFormat::Json {
        out.push_str("No run of these targets was profiled (docs/profile.md).\n");
    }
    Ok(out)
}
