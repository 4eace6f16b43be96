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
    let cases: Vec<(&str, u32)> = s.cases.iter().map(|c| (c.workload.as_str(), c.threads)).collect();
    let l = crate::experiment::band::lookup(store, &class, &cases, metric)?;
    if let Some(none) = l.none_found(&class, metric) {
        return Ok(all(DEFAULT_NOISE_BAND, BandOrigin::Default, none));
    }
    let per_case: Vec<CaseBand> = l
        .per_case
        .iter()
        .map(|b| match b {
            Some(band) => CaseBand { band: *band, origin: BandOrigin::Calibrated },
            None => CaseBand { band: DEFAULT_NOISE_BAND, origin: BandOrigin::Default },
        })
        .collect();
    let mut source = l.source(&class, "");
    if per_case.iter().any(|b| b.band != per_case[0].band) {
        source.push_str("; each row uses the band of its own workload and thread count");
    }
    let band = per_case.iter().map(|b| b.band).fold(0.0, f64::max);
    Ok(Bands { summary: Band { band, source }, per_case })
}
