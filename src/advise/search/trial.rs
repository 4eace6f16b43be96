//! Values on trial in the confirmation: when the budget left the search's values unresolved, the
//! confirmation, which runs anyway and whose configs are reserved from the start, is their measurement.
//! For one value, advised against current (or the durability tier against the safe advice) *is* its
//! leave-one-out comparison, so it can be recommended on it; several trades on trial together are
//! measured as a tier and reported, never recommended, since which of them pays was not attributed.

use super::{Confirmation, Fate, Group, Search, Tier, alone, could_detect, describe, gain, gain_lo, left_open};
use crate::stats::{Comparison, Verdict};

/// The fate text of a value on trial until the confirmation decides it.
const ON_TRIAL: &str = "not resolved within the budget; on trial in the confirmation";

/// What the confirmation tries besides what the search proved.
#[derive(Debug, Default)]
pub(super) struct Trial {
    /// The safe value on trial (only when no safe value was proven).
    pub safe: Option<usize>,
    /// The durability trades on trial (only when none was proven and the attribution left them
    /// unresolved).
    pub trades: Vec<usize>,
}

impl Trial {
    /// Whether nothing is on trial.
    pub fn is_empty(&self) -> bool {
        self.safe.is_none() && self.trades.is_empty()
    }
}

/// The comparison of the last confirmation row (the geometric mean over the thread counts, or the one
/// thread count), picked by `get`, with the detectable change of that row.
fn overall(c: &Confirmation, get: impl Fn(&super::ConfirmRow) -> Option<Comparison>) -> (Option<Comparison>, String) {
    let row = c.rows.last();
    (row.and_then(get), could_detect(row.and_then(|r| r.detectable)))
}

impl Search<'_> {
    /// Whether the attribution left candidate `i` unresolved for want of budget.
    pub(super) fn unresolved(&self, i: usize) -> bool {
        matches!(&self.out.fates[i], Fate::NotProven(why) if why == super::steps::UNRESOLVED)
    }

    /// The surviving groups of one value each that the attribution left unresolved, with their
    /// screening: what may be recommended on its screening alone, or go on trial in the confirmation.
    pub(super) fn unresolved_alone<'g>(&self, survivors: &'g [Group]) -> Vec<(usize, &'g Comparison)> {
        survivors
            .iter()
            .filter_map(|(_, members, c)| match members.as_slice() {
                &[i] if self.unresolved(i) => Some((i, c)),
                _ => None,
            })
            .collect()
    }

    /// When nothing was proven, the value the attribution left unresolved for want of budget that
    /// screened alone (its group held only it) and best, faster by its point estimate, goes into the
    /// confirmation as the advice on trial.
    pub(super) fn safe_on_trial(&mut self, survivors: &[Group]) -> Option<usize> {
        let (i, c) = self
            .unresolved_alone(survivors)
            .into_iter()
            .filter(|(_, c)| gain(c) > 0.0)
            .max_by(|x, y| gain_lo(x.1).total_cmp(&gain_lo(y.1)))?;
        self.out.notes.push(format!(
            "{} screened {} and the budget left it unresolved: the confirmation measures it alone against the \
             current config, and it is recommended only if that comparison is faster",
            self.cands[i].variable,
            describe(c)
        ));
        self.out.fates[i] = Fate::NotProven(ON_TRIAL.into());
        Some(i)
    }

    /// The durability trades the attribution left unresolved for want of budget: they go into the
    /// confirmation's durability config, which is reserved from the start, on top of the safe advice
    /// (or of the current config, when there is none).
    pub(super) fn trades_on_trial(&mut self, trades: &[usize], on_safe_advice: bool) -> Vec<usize> {
        let open: Vec<usize> = trades.iter().copied().filter(|&i| self.unresolved(i)).collect();
        if open.is_empty() {
            return open;
        }
        let base = if on_safe_advice { "the safe advice" } else { "the current config" };
        let names: Vec<&str> = open.iter().map(|&i| self.cands[i].variable.as_str()).collect();
        let what = if open.len() == 1 {
            format!(
                "durability trade {} unresolved: the confirmation measures it alone on top of {base}, and it is \
                 recommended in the durability tier only if it is faster there",
                names[0]
            )
        } else {
            format!(
                "{} durability trades unresolved ({}): the confirmation measures them together on top of {base}, as a \
                 tier, and does not recommend them: which of them pays is not attributed",
                open.len(),
                names.join(", ")
            )
        };
        self.out.notes.push(format!("the budget left {what}"));
        for &i in &open {
            self.out.fates[i] = Fate::NotProven(ON_TRIAL.into());
        }
        open
    }

    /// Recommends the safe value on trial `i` when the confirmation holds and advised against current
    /// over every thread count is faster: its contribution is that comparison. Returns whether it was
    /// recommended.
    pub(super) fn judge_on_trial(&mut self, i: usize, c: &Confirmation) -> bool {
        let k = c.index("advised");
        let (cmp, could) = overall(c, |r| r.vs_current.get(k?).copied().flatten());
        let (fate, contribution) = match &cmp {
            Some(x) if c.holds && x.verdict == Verdict::Faster => match alone(x) {
                Some(con) => {
                    self.out.notes.push(format!(
                        "{} is recommended on the confirmation, which measured it alone against the current config: {}",
                        self.cands[i].variable,
                        describe(x)
                    ));
                    (Fate::Recommended(Tier::Safe), Some(con))
                }
                None => (Fate::NotProven("the confirmation gave no interval for it".into()), None),
            },
            Some(x) if x.verdict == Verdict::Faster => (
                Fate::NotProven(format!(
                    "screened faster, and the confirmation, which measured it alone, found it faster over the thread \
                     counts ({}) but slower at one of them",
                    describe(x)
                )),
                None,
            ),
            Some(x) => {
                self.open_after_confirmation(i, x, c);
                (
                    Fate::NotProven(format!(
                        "screened faster, but the confirmation, which measured it alone, did not show it faster: {}{could}",
                        describe(x)
                    )),
                    None,
                )
            }
            None => (Fate::NotProven("the confirmation could not measure it".into()), None),
        };
        let recommended = fate.recommended().is_some();
        self.out.fates[i] = fate;
        self.out.contributions[i] = contribution;
        recommended
    }

    /// Records value `i` as undecided when the confirmation, which measured it alone, left it faster by
    /// its estimate with a worthwhile gain not excluded: the repetitions that would call that gain are
    /// scaled from the confirmation's detectable change (its width shrinks as √n).
    fn open_after_confirmation(&mut self, i: usize, x: &Comparison, c: &Confirmation) {
        if !left_open(x) {
            return;
        }
        let target = gain(x).max(1.5 * x.noise_band);
        let reps = c.repetitions as usize;
        let would_need = c.rows.last().and_then(|r| r.detectable).map(|d| {
            let scaled = (reps as f64 * (d / target).powi(2)).ceil();
            (scaled as usize).max(reps + 1)
        });
        self.out.undecided.retain(|u| !u.variables.contains(&self.cands[i].variable));
        self.out.undecided.push(super::Undecided {
            group: self.cands[i].area.label().to_string(),
            variables: vec![self.cands[i].variable.clone()],
            change: describe(x),
            repetitions: reps,
            would_need,
        });
    }

    /// Decides the durability trades on trial: one trade is recommended in its tier when the
    /// confirmation shows the tier faster than its base (the safe advice, or the current config) at one
    /// thread count or more, slower at none and over every thread count (and the safe advice it was
    /// measured on stands); several are only reported with what they measured together.
    pub(super) fn judge_trades_on_trial(&mut self, trades: &[usize], safe_stands: bool, c: &Confirmation) {
        // The row's detectable change is the advice's against the current config, not the tier's.
        let (cmp, _) = overall(c, |r| r.durability_vs_advised);
        let held = c.durability_holds == Some(true);
        let base = if c.index("advised").is_some() { "the safe advice" } else { "the current config" };
        for &i in trades {
            self.out.contributions[i] = None;
            self.out.fates[i] = match (&cmp, trades.len()) {
                (None, _) => Fate::NotProven("the confirmation could not measure the durability tier".into()),
                (Some(x), n) if n > 1 => Fate::NotProven(format!(
                    "the durability trades together measured {} against {base} in the confirmation; which of them \
                     pays was not attributed within the budget",
                    describe(x)
                )),
                (Some(x), _) if !safe_stands => Fate::NotProven(format!(
                    "measured {} on top of a safe advice that did not stand, so it is not recommended",
                    describe(x)
                )),
                (Some(x), _) if held && x.verdict == Verdict::Faster => match alone(x) {
                    Some(con) => {
                        self.out.notes.push(format!(
                            "{} is recommended in the durability tier on the confirmation, which measured it alone on \
                             top of {base}: {}",
                            self.cands[i].variable,
                            describe(x)
                        ));
                        self.out.contributions[i] = Some(con);
                        Fate::Recommended(Tier::Durability)
                    }
                    None => Fate::NotProven("the confirmation gave no interval for it".into()),
                },
                (Some(x), _) if x.verdict == Verdict::Faster => Fate::NotProven(format!(
                    "the confirmation, which measured it alone on top of {base}, found it faster over the thread \
                     counts ({}) but slower at one of them",
                    describe(x)
                )),
                (Some(x), _) => Fate::NotProven(format!(
                    "the confirmation, which measured it alone on top of {base}, did not show it faster: {}",
                    describe(x)
                )),
            };
        }
    }
}
