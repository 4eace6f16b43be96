//! Which noise band a report uses, and where it came from: `--noise-band` when given, else the band
//! `versus calibrate` stored for the host class and workloads of the compared runs, else the default.
//! Every output states the result ([`super::model::CompareReport::noise_band_source`]).

use super::select::{Selected, Selection};
use crate::error::Result;
use crate::sampler::Fingerprint;
use crate::store::Store;

pub use crate::experiment::band::{Band, describe};

/// The band for the runs `s` selected (see the module documentation).
pub fn resolve(store: &Store, s: &Selected, sel: &Selection) -> Result<Band> {
    if !sel.use_calibration {
        return Ok(Band::given(sel.noise_band));
    }
    let default = |why: String| Band::default_because(&why);
    let mut classes: Vec<Fingerprint> = Vec::new();
    for e in &s.experiments {
        let f = Fingerprint::of(&e.host);
        if f != Fingerprint::default() && !classes.iter().any(|c| c.class() == f.class()) {
            classes.push(f);
        }
    }
    let host = match classes.as_slice() {
        [] => return Ok(default("the host of these runs is not known, so no calibration applies".into())),
        [one] => one,
        many => {
            return Ok(default(format!(
                "the runs come from {} host classes, so no one calibration applies",
                many.len()
            )));
        }
    };
    let cases: Vec<(&str, u32)> = s.cases.iter().map(|c| (c.workload.as_str(), c.threads)).collect();
    crate::experiment::band::calibrated(store, &host.class(), &cases, sel.metric.name())
}
