//! Which noise band each row of a report uses, and where it came from: `--noise-band` when given, else
//! the band `versus calibrate` stored for the host class, workload and thread count of the row's case,
//! else the default. A band measured at one thread count says nothing about another, so each case gets
//! its own. Every output states the result ([`super::model::CompareReport::noise_band_source`], and
//! per row [`super::model::CompareReport::case_bands`]).

use super::model::{BandOrigin, CaseBand};
use super::select::{Selected, Selection};
use crate::error::Result;
use crate::sampler::Fingerprint;
use crate::stats::DEFAULT_NOISE_BAND;
use crate::store::Store;

pub use crate::experiment::band::{Band, describe};

/// The bands of a report: one per case, and the sentence that says where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Bands {
    /// The largest band of any case, with the sentence every output prints.
    pub summary: Band,
    /// Per case, in [`Selected::cases`] order.
    pub per_case: Vec<CaseBand>,
}

/// The bands for the runs `s` selected (see the module documentation).
pub fn resolve(store: &Store, s: &Selected, sel: &Selection) -> Result<Bands> {
    let all = |band: f64, origin: BandOrigin, summary: Band| Bands {
        summary,
        per_case: vec![CaseBand { band, origin }; s.cases.len()],
    };
    if !sel.use_calibration {
        return Ok(all(sel.noise_band, BandOrigin::Given, Band::given(sel.noise_band)));
    }
    let default = |why: String| all(DEFAULT_NOISE_BAND, BandOrigin::Default, Band::default_because(&why));
    let mut classes: Vec<Fingerprint> = Vec::new();
    for e in &s.experiments {
        let f = Fingerprint::of(&e.host);
        if f != Fingerprint::default() && !classes.iter().any(|c| c.class() == f.class()) {
            classes.push(f);
        }
    }
    let class = match classes.as_slice() {
        [] => return Ok(default("the host of these runs is not known, so no calibration applies".into())),
        [one] => one.class(),
        many => {
            return Ok(default(format!(
                "the runs come from {} host classes, so no one calibration applies",
                many.len()
            )));
        }
    };
    let metric = sel.metric.name();
    let mut per_case = Vec::new();
    let (mut found, mut missing) = (Vec::new(), Vec::<String>::new());
    for c in &s.cases {
        match store.calibration_for(&class, &c.workload, c.threads, metric)? {
            Some(cal) => {
                per_case.push(CaseBand { band: cal.band, origin: BandOrigin::Calibrated });
                if !found.contains(&cal) {
                    found.push(cal);
                }
            }
            None => {
                per_case.push(CaseBand { band: DEFAULT_NOISE_BAND, origin: BandOrigin::Default });
                let what = format!("{} @ {} thr", c.workload, c.threads);
                if !missing.contains(&what) {
                    missing.push(what);
                }
            }
        }
    }
    if found.is_empty() {
        return Ok(default(format!(
            "no {metric} calibration for host class {class} and {}; `versus calibrate` measures one",
            missing.join(", ")
        )));
    }
    let list: Vec<String> = found.iter().map(describe).collect();
    let mut source = format!("calibrated by `versus calibrate` on host class {class}: {}", list.join("; "));
    if !missing.is_empty() {
        source.push_str(&format!(
            "; not calibrated: {} (the default {:.1} % counts for them)",
            missing.join(", "),
            DEFAULT_NOISE_BAND * 100.0
        ));
    }
    let distinct = per_case.iter().any(|b| b.band != per_case[0].band);
    if distinct {
        source.push_str("; each row uses the band of its own workload and thread count");
    }
    let band = per_case.iter().map(|b| b.band).fold(0.0, f64::max);
    Ok(Bands { summary: Band { band, source }, per_case })
}
