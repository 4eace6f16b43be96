//! Why the advice does not beat `innodb_dedicated_server`, from the data: when the confirmation shows
//! the advice not significantly faster than the dedicated baseline (or slower), every setting of the
//! baseline that the advice does not share, with what became of it in the advice (recommended at
//! another value, a candidate dropped for no effect or not proven, refused by the server, proposed by no
//! rule, and why) and the measured comparison.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dedicated::Dedicated;
use super::facts::parse_size;
use super::rules::{Candidate, Considered};
use super::search::{Contribution, Fate, SearchResult};
use crate::explain::skip::Skipped;
use crate::stats::{Comparison, Direction, Verdict};

/// What became, in the advice, of one setting of the dedicated baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapStatus {
    /// The advice recommends the variable at another value.
    AdvisedOtherValue,
    /// A candidate of the rules (at this or another value), not recommended.
    CandidateNotRecommended,
    /// The server refused or adjusted the rules' value.
    Refused,
    /// A rule looked at the variable and proposed nothing.
    NoCandidate,
    /// No rule covers the variable.
    NoRule,
}

/// One setting of the dedicated baseline that the advice does not share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapSetting {
    /// The variable.
    pub variable: String,
    /// The dedicated baseline's value.
    pub dedicated: String,
    /// The current config's value.
    pub current: Option<String>,
    /// The advice's value, when it sets the variable.
    pub advised: Option<String>,
    /// What became of it.
    pub status: GapStatus,
    /// Why, in words, with the measured figures where there are some.
    pub why: String,
}

/// The advice against the dedicated baseline, when it does not beat it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedicatedGap {
    /// Over the thread counts (their geometric mean; the one thread count when there is one):
    /// the advice against the dedicated baseline.
    pub overall: Comparison,
    /// Per thread count.
    pub per_threads: Vec<(u32, Comparison)>,
    /// The baseline's settings the advice does not share.
    pub settings: Vec<GapSetting>,
}

/// `+12.3 % (CI +8.0 to +16.1 %)` as an improvement of the first over the second (positive: better).
fn gain(c: &Comparison) -> String {
    let (g, lo, hi) = if c.direction == Direction::HigherIsBetter {
        (c.change, c.ci.lo - 1.0, c.ci.hi - 1.0)
    } else {
        (-c.change, 1.0 - c.ci.hi, 1.0 - c.ci.lo)
    };
    format!("{:+.1} % (CI {:+.1} to {:+.1} %)", g * 100.0, lo * 100.0, hi * 100.0)
}

fn verdict(c: &Comparison) -> &'static str {
    match c.verdict {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoSignificantChange => "no significant change",
    }
}

/// Whether two values of a variable are the same setting (sizes compared in bytes, words without case).
fn same(a: &str, b: &str) -> bool {
    match (parse_size(a), parse_size(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// The gap between the advice and the dedicated baseline, from the search's confirmation; `None` when
/// there is no confirmation with both, or the advice is faster over the thread counts and slower at none.
pub fn dedicated_gap(
    dedicated: &Dedicated,
    variables: &BTreeMap<String, String>,
    cands: &[Candidate],
    result: &SearchResult,
    considered: &[Considered],
    refused: &[Skipped],
) -> Option<DedicatedGap> {
    let c = result.confirmation.as_ref()?;
    c.index("dedicated")?;
    c.index("advised")?;
    let per_threads: Vec<(u32, Comparison)> =
        c.rows.iter().filter_map(|r| Some((r.threads?, r.advised_vs_dedicated?))).collect();
    let single = match per_threads.as_slice() {
        [(_, one)] => Some(*one),
        _ => None,
    };
    let overall = c.rows.iter().find(|r| r.threads.is_none()).and_then(|r| r.advised_vs_dedicated).or(single)?;
    if !falls_short(&overall, &per_threads) {
        return None;
    }
    let settings = unshared(dedicated, variables, cands, &result.fates, &result.contributions, considered, refused);
    Some(DedicatedGap { overall, per_threads, settings })
}

/// Whether the advice does not beat the baseline: not faster over the thread counts, or slower at one.
pub fn falls_short(overall: &Comparison, per_threads: &[(u32, Comparison)]) -> bool {
    overall.verdict != Verdict::Faster || per_threads.iter().any(|(_, x)| x.verdict == Verdict::Slower)
}

/// The settings of the dedicated baseline that the advice (the values whose fate is recommended) does
/// not share, each with what became of it.
pub fn unshared(
    dedicated: &Dedicated,
    variables: &BTreeMap<String, String>,
    cands: &[Candidate],
    fates: &[Fate],
    contributions: &[Option<Contribution>],
    considered: &[Considered],
    refused: &[Skipped],
) -> Vec<GapSetting> {
    let advised: Vec<usize> = (0..cands.len()).filter(|&i| fates[i].recommended().is_some()).collect();
    let mut settings = Vec::new();
    for (variable, value) in &dedicated.settings {
        let current = variables.get(variable).cloned();
        let advice = advised.iter().copied().find(|&i| cands[i].variable == *variable);
        if advice.is_some_and(|i| same(&cands[i].value, value)) {
            continue;
        }
        let (status, why) = if let Some(i) = advice {
            let a = &cands[i];
            let effect = contributions[i]
                .as_ref()
                .map(|k| {
                    format!(", measured {:+.1} points of the advised mean (CI {:+.1} to {:+.1})", k.points, k.lo, k.hi)
                })
                .unwrap_or_default();
            (
                GapStatus::AdvisedOtherValue,
                format!(
                    "the advice sets {} by its rule ({}){effect}; dedicated's {value} was not tried",
                    a.display, a.why
                ),
            )
        } else if let Some(i) = (0..cands.len()).find(|&i| cands[i].variable == *variable) {
            let what = match &fates[i] {
                Fate::NoEffect(w) | Fate::Slower(w) | Fate::NotProven(w) | Fate::Failed(w) => {
                    format!("not recommended: {w}")
                }
                Fate::NotTried(w) => format!("not tried: {w}"),
                Fate::Withdrawn(w) => format!("withdrawn: {w}"),
                Fate::Recommended(_) => "recommended".into(),
            };
            let tried = if same(&cands[i].value, value) {
                "dedicated's own value".to_string()
            } else {
                format!("{} (not dedicated's {value})", cands[i].display)
            };
            (GapStatus::CandidateNotRecommended, format!("a candidate at {tried}, {what}"))
        } else if let Some(s) = refused.iter().find(|s| s.name == *variable) {
            (
                GapStatus::Refused,
                format!("the rules' {} was dropped: {}", s.a.clone().unwrap_or_default(), s.reason.text()),
            )
        } else if let Some(k) = considered.iter().find(|k| k.variable == *variable) {
            (GapStatus::NoCandidate, format!("no candidate: {} (rule: {})", k.outcome, k.rule))
        } else {
            (GapStatus::NoRule, "no rule of the advice covers it".to_string())
        };
        settings.push(GapSetting {
            variable: variable.clone(),
            dedicated: value.clone(),
            current,
            advised: advice.map(|i| cands[i].display.clone()),
            status,
            why,
        });
    }
    settings
}

impl GapSetting {
    /// The setting in one line: what dedicated sets, the current and the advised value, and why.
    pub fn line(&self) -> String {
        format!(
            "{}: dedicated sets {}, the current config has {}{}: {}",
            self.variable,
            self.dedicated,
            self.current.as_deref().unwrap_or("?"),
            self.advised
                .as_ref()
                .map(|a| format!(", the advice {a}"))
                .unwrap_or_else(|| ", the advice leaves it".into()),
            self.why
        )
    }
}

/// `advised vs dedicated: -7.0 % (CI …) over the thread counts, slower (2 thr …; 8 thr …)`.
pub fn comparison_line(overall: &Comparison, per_threads: &[(u32, Comparison)]) -> String {
    format!(
        "advised vs dedicated: {} over the thread counts, {}{}",
        gain(overall),
        verdict(overall),
        if per_threads.len() > 1 {
            let each: Vec<String> =
                per_threads.iter().map(|(t, c)| format!("{t} thr {} {}", gain(c), verdict(c))).collect();
            format!(" ({})", each.join("; "))
        } else {
            String::new()
        }
    )
}

/// The heading of the explanation, by the comparison over the thread counts.
pub fn heading(overall: &Comparison) -> &'static str {
    if overall.verdict == Verdict::Faster {
        "Why the advice is slower than innodb_dedicated_server at some thread counts"
    } else {
        "Why the advice does not beat innodb_dedicated_server"
    }
}

impl DedicatedGap {
    /// The heading of the explanation.
    pub fn heading(&self) -> &'static str {
        heading(&self.overall)
    }

    /// The explanation, one sentence a line: the measured comparison, then each setting of the baseline
    /// the advice does not share.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![comparison_line(&self.overall, &self.per_threads)];
        if self.settings.is_empty() {
            out.push(
                "the advice sets every value the baseline sets; the difference is in what the advice adds, or noise"
                    .into(),
            );
        }
        out.extend(self.settings.iter().map(GapSetting::line));
        out
    }
}

#[cfg(test)]
#[path = "gap_tests.rs"]
mod tests;
