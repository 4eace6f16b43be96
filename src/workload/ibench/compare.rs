//! The Small Datum tables over several servers (section A.10 of the reference): absolute rates per
//! step, rates relative to the first (base) server, the insert rate achieved in each query step against
//! its target, the efficiency blocks and the response-time buckets, with the reference's colour rules.
//!
//! The model is built from [`SideInput`]s, which come from `versus ibench --format json` files or from
//! stored experiment runs; [`super::report`] renders it.

use serde::{Deserialize, Serialize};

use super::options::Step;
use super::result::{IbenchResult, SLA_SHARE, StepEfficiency, StepStatus};
use super::stats::Latency;

/// Background colours of the reference's HTML report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    /// No highlight.
    None,
    /// Absolute table: in the bottom quartile of the column (`#FF9A9A`); achieved-rate table: below 95 %
    /// of the target.
    Red,
    /// Absolute table: in the top quartile (`#81FFA6`).
    Green,
    /// Query step that missed its insert-rate SLA (`#D7D7D7`).
    Gray,
    /// Relative value below 0.95 (`#FFDD81`).
    Yellow,
    /// Relative value above 1.05 (`#81FFF9`).
    Blue,
}

impl Colour {
    /// The reference's HTML colour, if any.
    pub fn hex(self) -> Option<&'static str> {
        match self {
            Colour::None => None,
            Colour::Red => Some("#FF9A9A"),
            Colour::Green => Some("#81FFA6"),
            Colour::Gray => Some("#D7D7D7"),
            Colour::Yellow => Some("#FFDD81"),
            Colour::Blue => Some("#81FFF9"),
        }
    }
}

/// One step of one server, as the tables need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// The step.
    pub step: Step,
    /// How it ended.
    pub status: StepStatus,
    /// Operations/s (ips; indexed rows/s for l.x; qps for query steps).
    pub rate: f64,
    /// Inserted rows/s.
    pub ips: f64,
    /// Query steps: target inserts/s of all clients.
    pub target_ips: Option<f64>,
    /// Efficiency.
    pub efficiency: StepEfficiency,
    /// Response times of the step's operation (inserts, or queries in query steps).
    pub latency: Option<Latency>,
    /// The rate of each repetition (one for a single run); `rate` is their mean.
    #[serde(default)]
    pub rates: Vec<f64>,
}

impl StepFigures {
    /// True for a query step below 95 % of its target insert rate.
    pub fn sla_failed(&self) -> bool {
        self.target_ips.is_some_and(|t| t > 0.0 && self.ips < SLA_SHARE * t)
    }
}

/// One compared server: a label and its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideInput {
    /// Label in the tables.
    pub label: String,
    /// Its steps (those that did not finish are shown but not coloured).
    pub steps: Vec<StepFigures>,
}

impl SideInput {
    /// The side of one `versus ibench` result.
    pub fn of(r: &IbenchResult) -> SideInput {
        SideInput {
            label: r.label.clone(),
            steps: r
                .steps
                .iter()
                .filter(|s| s.step != Step::Cleanup)
                .map(|s| StepFigures {
                    step: s.step,
                    status: s.status,
                    rate: s.rate,
                    ips: s.ips,
                    target_ips: s.sla.map(|x| x.target_ips),
                    efficiency: s.efficiency.clone(),
                    latency: s.latency_of(s.primary_kind()).cloned(),
                    rates: vec![s.rate],
                })
                .collect(),
        }
    }
}

/// One cell of the rate tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateCell {
    /// Operations/s, when the step ran to its end.
    pub value: Option<f64>,
    /// Colour in the absolute table.
    pub colour: Colour,
    /// value / base value.
    pub relative: Option<f64>,
    /// Colour in the relative table.
    pub relative_colour: Colour,
    /// Query steps: achieved inserts/s.
    pub achieved_ips: Option<f64>,
    /// Colour in the achieved-rate table.
    pub achieved_colour: Colour,
    /// True for a query step that missed its SLA.
    pub sla_failed: bool,
    /// How the step ended; `None` when the side did not run it.
    pub status: Option<StepStatus>,
    /// The interval of `relative` over repetitions, when both sides have 2 or more (then the relative
    /// colour is the verdict's: blue significantly faster, yellow significantly slower).
    #[serde(default)]
    pub relative_ci: Option<(f64, f64)>,
}

/// The tables of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Side labels, the base first.
    pub sides: Vec<String>,
    /// Columns: every step any side ran, in the reference's order (the cleanup left out).
    pub steps: Vec<Step>,
    /// `cells[side][step]`.
    pub cells: Vec<Vec<RateCell>>,
    /// Target inserts/s per query-step column (`None` for the load steps).
    pub targets: Vec<Option<f64>>,
    /// `efficiency[side][step]`, where the side ran the step.
    pub efficiency: Vec<Vec<Option<StepEfficiency>>>,
    /// `latency[side][step]`: response times of the step's operation.
    pub latency: Vec<Vec<Option<Latency>>>,
}

/// Servers needed before the absolute table marks quartiles: with two or three, the bottom and the top
/// quartile are just the slowest and the fastest, which the relative table already says.
pub const MIN_FOR_QUARTILES: usize = 4;

/// The absolute-table colours of one column: red for the bottom quartile of the range, green for the
/// top one, the maximum taken without SLA failures, red suppressed when min ≥ 0.8 × max, SLA failures
/// gray. Fewer than [`MIN_FOR_QUARTILES`] values are not coloured (SLA failures still are).
pub fn column_colours(values: &[Option<f64>], sla_failed: &[bool]) -> Vec<Colour> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let ok: Vec<f64> = values.iter().zip(sla_failed).filter(|(_, f)| !**f).filter_map(|(v, _)| *v).collect();
    let min = present.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .zip(sla_failed)
        .map(|(v, failed)| {
            if *failed {
                return Colour::Gray;
            }
            let Some(v) = v else { return Colour::None };
            if present.len() < MIN_FOR_QUARTILES || !max.is_finite() || max <= min {
                return Colour::None;
            }
            let gap = max - min;
            if *v <= min + gap / 4.0 && min < 0.8 * max {
                Colour::Red
            } else if *v >= max - gap / 4.0 {
                Colour::Green
            } else {
                Colour::None
            }
        })
        .collect()
}

/// The relative-table colour: yellow below 0.95, blue above 1.05, compared as round(100 × ratio).
pub fn relative_colour(ratio: f64) -> Colour {
    let pct = (100.0 * ratio).round();
    if pct < 95.0 {
        Colour::Yellow
    } else if pct > 105.0 {
        Colour::Blue
    } else {
        Colour::None
    }
}

/// The interval of a candidate's rate relative to the base's over their repetitions and the colour of
/// its verdict (the default noise band, 95 %), when both ran the step to its end 2 times or more.
fn repeated_call(base: Option<&StepFigures>, cand: Option<&StepFigures>) -> Option<((f64, f64), Colour)> {
    let (b, c) = (base?, cand?);
    if b.status != StepStatus::Done || c.status != StepStatus::Done || b.rates.len() < 2 || c.rates.len() < 2 {
        return None;
    }
    let cmp = crate::stats::compare_repetitions_welch(
        &b.rates,
        &c.rates,
        crate::stats::Direction::HigherIsBetter,
        crate::stats::DEFAULT_NOISE_BAND,
        REPEATED_CONFIDENCE,
    )
    .ok()?;
    let colour = match cmp.verdict {
        crate::stats::Verdict::Faster => Colour::Blue,
        crate::stats::Verdict::Slower => Colour::Yellow,
        crate::stats::Verdict::NoSignificantChange => Colour::None,
    };
    Some(((cmp.ci.lo, cmp.ci.hi), colour))
}

/// Confidence of the intervals over repetitions.
pub const REPEATED_CONFIDENCE: f64 = 0.95;

/// `x / base` as the reference's `sum_met.awk`: 1 when both are 0, infinite when only the base is 0.
pub fn ratio(x: f64, base: f64) -> f64 {
    if base == 0.0 { if x == 0.0 { 1.0 } else { f64::INFINITY } } else { x / base }
}

/// Builds the tables; the first side is the base.
pub fn build(sides: &[SideInput]) -> Comparison {
    let mut steps: Vec<Step> = sides.iter().flat_map(|s| s.steps.iter().map(|f| f.step)).collect();
    steps.sort_by_key(|s| s.rank());
    steps.dedup();
    let figure = |side: usize, step: Step| sides[side].steps.iter().find(|f| f.step == step);
    let mut cells: Vec<Vec<RateCell>> = vec![Vec::new(); sides.len()];
    let mut targets = Vec::new();
    for &step in &steps {
        let figs: Vec<Option<&StepFigures>> = (0..sides.len()).map(|i| figure(i, step)).collect();
        let values: Vec<Option<f64>> =
            figs.iter().map(|f| f.filter(|f| f.status == StepStatus::Done).map(|f| f.rate)).collect();
        let failed: Vec<bool> = figs.iter().map(|f| f.is_some_and(|f| f.sla_failed())).collect();
        let colours = column_colours(&values, &failed);
        let target = figs.iter().flatten().find_map(|f| f.target_ips);
        targets.push(target);
        let base = values.first().copied().flatten();
        for (i, f) in figs.iter().enumerate() {
            let relative = values[i].zip(base).map(|(v, b)| ratio(v, b));
            let achieved = f.filter(|f| f.target_ips.is_some()).map(|f| f.ips);
            let achieved_colour = match (achieved, target) {
                (Some(a), Some(t)) if a < SLA_SHARE * t => Colour::Red,
                _ => Colour::None,
            };
            let call = (i > 0).then(|| repeated_call(figs[0], *f)).flatten();
            let relative_colour = match (relative, call) {
                _ if failed[i] => Colour::Gray,
                (_, Some((_, c))) => c,
                // One run per server: the reference's ±5 % rule, which is not a call (the caption says so).
                (Some(r), None) if i > 0 && r.is_finite() => relative_colour(r),
                _ => Colour::None,
            };
            cells[i].push(RateCell {
                value: values[i],
                colour: colours[i],
                relative,
                relative_colour,
                achieved_ips: achieved,
                achieved_colour,
                sla_failed: failed[i],
                status: f.map(|f| f.status),
                relative_ci: call.map(|(ci, _)| ci),
            });
        }
    }
    let efficiency =
        (0..sides.len()).map(|i| steps.iter().map(|s| figure(i, *s).map(|f| f.efficiency.clone())).collect()).collect();
    let latency = (0..sides.len())
        .map(|i| steps.iter().map(|s| figure(i, *s).and_then(|f| f.latency.clone())).collect())
        .collect();
    Comparison { sides: sides.iter().map(|s| s.label.clone()).collect(), steps, cells, targets, efficiency, latency }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(step: Step, rate: f64, ips: f64, target: Option<f64>) -> StepFigures {
        StepFigures {
            step,
            status: StepStatus::Done,
            rate,
            ips,
            target_ips: target,
            efficiency: StepEfficiency::default(),
            latency: None,
            rates: vec![rate],
        }
    }

    #[test]
    fn quartile_colours_with_the_80_percent_rule_and_sla_gray() {
        let c = column_colours(&[Some(100.0), Some(10.0), Some(60.0), Some(95.0)], &[false; 4]);
        assert_eq!(c, [Colour::Green, Colour::Red, Colour::None, Colour::Green]);
        // min ≥ 0.8 × max: no red.
        let c = column_colours(&[Some(100.0), Some(85.0), Some(92.0), Some(99.0)], &[false; 4]);
        assert_eq!(c, [Colour::Green, Colour::None, Colour::None, Colour::Green]);
        // The SLA failure is gray and not the max.
        let c = column_colours(&[Some(50.0), Some(500.0), Some(10.0), Some(30.0)], &[false, true, false, false]);
        assert_eq!(c, [Colour::Green, Colour::Gray, Colour::Red, Colour::None]);
        // Two or three servers: no quartiles (the SLA failure stays gray).
        let c = column_colours(&[Some(100.0), Some(10.0), Some(5.0)], &[false, false, true]);
        assert_eq!(c, [Colour::None, Colour::None, Colour::Gray]);
        assert_eq!(column_colours(&[Some(5.0)], &[false]), [Colour::None]);
    }

    #[test]
    fn with_repetitions_the_relative_colour_is_a_call() {
        let with = |rates: &[f64]| StepFigures { rates: rates.to_vec(), ..fig(Step::Load, 0.0, 0.0, None) };
        let base = with(&[1000.0, 1010.0, 990.0]);
        // 10 % faster on average but scattered: no call, no colour, an interval.
        let noisy = with(&[800.0, 1300.0, 1200.0]);
        let t = build(&[
            SideInput { label: "a".into(), steps: vec![StepFigures { rate: 1000.0, ..base.clone() }] },
            SideInput { label: "b".into(), steps: vec![StepFigures { rate: 1100.0, ..noisy }] },
        ]);
        let cell = &t.cells[1][0];
        assert_eq!(cell.relative_colour, Colour::None);
        let (lo, hi) = cell.relative_ci.unwrap();
        assert!(lo < 1.0 && hi > 1.1, "{lo} {hi}");
        // Tightly 8 % slower: called, yellow.
        let slower = with(&[920.0, 921.0, 919.0]);
        let t = build(&[
            SideInput { label: "a".into(), steps: vec![StepFigures { rate: 1000.0, ..base }] },
            SideInput { label: "b".into(), steps: vec![StepFigures { rate: 920.0, ..slower }] },
        ]);
        assert_eq!(t.cells[1][0].relative_colour, Colour::Yellow);
    }

    #[test]
    fn relative_thresholds_use_rounded_percent() {
        assert_eq!(relative_colour(0.944), Colour::Yellow);
        assert_eq!(relative_colour(0.946), Colour::None, "rounds to 95");
        assert_eq!(relative_colour(1.054), Colour::None);
        assert_eq!(relative_colour(1.056), Colour::Blue);
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert!(ratio(3.0, 0.0).is_infinite());
    }

    #[test]
    fn tables_over_two_servers() {
        let qr = Step::Query { point: false, rate: 100 };
        let a = SideInput {
            label: "base".into(),
            steps: vec![fig(Step::Load, 1000.0, 1000.0, None), fig(qr, 2000.0, 100.0, Some(100.0))],
        };
        let b = SideInput {
            label: "new".into(),
            steps: vec![fig(Step::Load, 900.0, 900.0, None), fig(qr, 2600.0, 80.0, Some(100.0))],
        };
        let t = build(&[a, b]);
        assert_eq!(t.steps, [Step::Load, qr]);
        assert_eq!(t.targets, [None, Some(100.0)]);
        let new = &t.cells[1];
        assert_eq!(new[0].relative, Some(0.9));
        assert_eq!(new[0].relative_colour, Colour::Yellow);
        assert!(new[1].sla_failed);
        assert_eq!(new[1].colour, Colour::Gray);
        assert_eq!(new[1].relative_colour, Colour::Gray);
        assert_eq!(new[1].achieved_colour, Colour::Red);
        assert_eq!(t.cells[0][1].achieved_colour, Colour::None);
        assert_eq!(t.cells[0][0].relative, Some(1.0));
    }
}
