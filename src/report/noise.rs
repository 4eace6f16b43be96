//! Which noise band a report uses, and where it came from: `--noise-band` when given, else the band
//! `versus calibrate` stored for the host class and workloads of the compared runs, else the default.
//! Every output states the result ([`super::model::CompareReport::noise_band_source`]).

use super::fmt::percent;
use super::select::{Selected, Selection};
use crate::error::Result;
use crate::sampler::Fingerprint;
use crate::stats::DEFAULT_NOISE_BAND;
use crate::store::Store;

/// The band a report uses and a sentence on where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The relative noise band.
    pub band: f64,
    /// Where it came from, e.g. `calibrated on host class hc-… (…): oltp_read_only @ 1 thr ±4.1 % …`.
    pub source: String,
}

pub use crate::experiment::band::describe;

/// The band for the runs `s` selected (see the module documentation).
pub fn resolve(store: &Store, s: &Selected, sel: &Selection) -> Result<Band> {
    if !sel.use_calibration {
        return Ok(Band { band: sel.noise_band, source: "given with --noise-band".to_string() });
    }
    let default = |why: String| Band { band: DEFAULT_NOISE_BAND, source: format!("the default ({why})") };
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
    let class = host.class();
    let metric = sel.metric.name();
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for case in &s.cases {
        match store.calibration_for(&class, &case.workload, case.threads, metric)? {
            Some(c) if !found.contains(&c) => found.push(c),
            Some(_) => {}
            None => {
                let what = format!("{} @ {} thr", case.workload, case.threads);
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
    let mut band = found.iter().map(|c| c.band).fold(0.0, f64::max);
    let list: Vec<String> = found.iter().map(describe).collect();
    let mut source = format!("calibrated by `versus calibrate` on host class {class}: {}", list.join("; "));
    if found.len() > 1 {
        source.push_str("; the largest is used");
    }
    if !missing.is_empty() {
        band = band.max(DEFAULT_NOISE_BAND);
        source.push_str(&format!(
            "; not calibrated: {} (the default {} counts for them)",
            missing.join(", "),
            percent(DEFAULT_NOISE_BAND)
        ));
    }
    Ok(Band { band, source })
}
