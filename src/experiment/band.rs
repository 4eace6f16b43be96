//! The noise band of the comparisons a command runs on this host (`versus explain`, `versus advise`):
//! `--noise-band` when given, else the largest band `versus calibrate` stored for this host class, the
//! workload and each thread count, else [`DEFAULT_NOISE_BAND`]. The source is a sentence every output
//! prints, so that a reader knows which band decided the verdicts.

use crate::error::Result;
use crate::metric::Metric;
use crate::sampler::Fingerprint;
use crate::stats::DEFAULT_NOISE_BAND;
use crate::store::{Calibration, Store};

/// A noise band and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The relative noise band.
    pub band: f64,
    /// Where it came from, e.g. `calibrated by \`versus calibrate\` on host class hc-…: oltp_read_only @
    /// 1 thr 4.1 % (…)`.
    pub source: String,
}

impl Band {
    /// The band given with `--noise-band`.
    pub fn given(band: f64) -> Band {
        Band { band, source: "given with --noise-band".to_string() }
    }

    /// [`DEFAULT_NOISE_BAND`], with why no calibration applies.
    pub fn default_because(why: &str) -> Band {
        Band { band: DEFAULT_NOISE_BAND, source: format!("the default ({why})") }
    }
}

/// One calibration as an output names it.
pub fn describe(c: &Calibration) -> String {
    let mut date = crate::clock::utc_datetime(c.created_at);
    date.truncate(10);
    let from = c.experiment_id.map(|id| format!(", experiment {id}")).unwrap_or_default();
    format!(
        "{} @ {} thr {} (CV {}, {} repetitions per side of {}{from}, {date})",
        c.workload,
        c.threads,
        percent(c.band),
        percent(c.cv),
        c.repetitions,
        c.target
    )
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The band for `metric` of `workload` at every one of `threads` on a host of fingerprint `host` (see
/// the module documentation); `given` is `--noise-band`.
pub fn for_host(
    store: &Store,
    host: &Fingerprint,
    workload: &str,
    threads: &[u32],
    metric: Metric,
    given: Option<f64>,
) -> Result<Band> {
    if let Some(b) = given {
        return Ok(Band::given(b));
    }
    if *host == Fingerprint::default() {
        return Ok(Band::default_because("this host is not known, so no calibration applies"));
    }
    let cases: Vec<(&str, u32)> = threads.iter().map(|&t| (workload, t)).collect();
    calibrated(store, &host.class(), &cases, metric.name())
}

/// What `versus calibrate` stored for host class `class` and `metric`, case by case.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    /// Per (workload, threads) case, in the order asked: its band, when one is stored.
    pub per_case: Vec<Option<f64>>,
    /// The calibrations found, each once.
    found: Vec<Calibration>,
    /// The cases without one (`oltp_read_only @ 4 thr`), each once.
    missing: Vec<String>,
}

/// Looks up the latest calibration of every (workload, threads) case.
pub fn lookup(store: &Store, class: &str, cases: &[(&str, u32)], metric: &str) -> Result<Lookup> {
    let mut l = Lookup { per_case: Vec::new(), found: Vec::new(), missing: Vec::new() };
    for &(workload, t) in cases {
        match store.calibration_for(class, workload, t, metric)? {
            Some(c) => {
                l.per_case.push(Some(c.band));
                if !l.found.contains(&c) {
                    l.found.push(c);
                }
            }
            None => {
                l.per_case.push(None);
                let what = format!("{workload} @ {t} thr");
                if !l.missing.contains(&what) {
                    l.missing.push(what);
                }
            }
        }
    }
    Ok(l)
}

impl Lookup {
    /// The default band, with why, when no case has a calibration.
    pub fn none_found(&self, class: &str, metric: &str) -> Option<Band> {
        self.found.is_empty().then(|| {
            Band::default_because(&format!(
                "no {metric} calibration for host class {class} and {}; `versus calibrate` measures one",
                self.missing.join(", ")
            ))
        })
    }

    /// The largest band found.
    pub fn largest(&self) -> f64 {
        self.found.iter().map(|c| c.band).fold(0.0, f64::max)
    }

    /// Whether some case has no calibration.
    pub fn any_missing(&self) -> bool {
        !self.missing.is_empty()
    }

    /// The sentence naming what was found (then `how`, the rule applied to them) and what was not.
    pub fn source(&self, class: &str, how: &str) -> String {
        let list: Vec<String> = self.found.iter().map(describe).collect();
        let mut source = format!("calibrated by `versus calibrate` on host class {class}: {}{how}", list.join("; "));
        if !self.missing.is_empty() {
            source.push_str(&format!(
                "; not calibrated: {} (the default {} counts for them)",
                self.missing.join(", "),
                percent(DEFAULT_NOISE_BAND)
            ));
        }
        source
    }
}

/// The band `versus calibrate` stored for host class `class` and `metric` over every (workload, threads)
/// case: the largest found, at least [`DEFAULT_NOISE_BAND`] when some case has none, the default when
/// none has one; the source lists what was found and what was not.
pub fn calibrated(store: &Store, class: &str, cases: &[(&str, u32)], metric: &str) -> Result<Band> {
    let l = lookup(store, class, cases, metric)?;
    if let Some(none) = l.none_found(class, metric) {
        return Ok(none);
    }
    let mut band = l.largest();
    if l.any_missing() {
        band = band.max(DEFAULT_NOISE_BAND);
    }
    let how = if l.found.len() > 1 { "; the largest is used" } else { "" };
    Ok(Band { band, source: l.source(class, how) })
}

/// [`for_host`] for this host, whose sandboxes' data live on the storage of `datadir` (the home). The
/// host is fingerprinted only when no band is given (a given band wins without looking at the host).
pub fn for_this_host(
    store: &Store,
    datadir: &std::path::Path,
    workload: &str,
    threads: &[u32],
    metric: Metric,
    given: Option<f64>,
) -> Result<Band> {
    let host = if given.is_some() { Fingerprint::default() } else { crate::sampler::fingerprint(Some(datadir)) };
    for_host(store, &host, workload, threads, metric, given)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(class: &str, threads: u32, band: f64) -> Calibration {
        Calibration::example(class, "oltp_read_only", threads, band)
    }

    #[test]
    fn the_calibrated_band_of_this_host_counts_else_the_default_and_the_source_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("r.db")).unwrap();
        let host = Fingerprint { logical_cpus: Some(2), ..Fingerprint::default() };
        let class = host.class();
        let band = |store: &Store, threads: &[u32], given| {
            for_host(store, &host, "oltp_read_only", threads, Metric::Tps, given)
        };

        let b = band(&store, &[1], None).unwrap();
        assert_eq!(b.band, DEFAULT_NOISE_BAND);
        assert!(b.source.starts_with("the default (no tps calibration for host class"), "{}", b.source);

        store.save_calibration(&cal(&class, 1, 0.05)).unwrap();
        store.save_calibration(&cal(&class, 4, 0.08)).unwrap();
        store.save_calibration(&cal("hc-elsewhere", 1, 0.30)).unwrap();
        let b = band(&store, &[1], None).unwrap();
        assert_eq!(b.band, 0.05);
        assert!(b.source.contains(&format!("host class {class}: oltp_read_only @ 1 thr 5.0 %")), "{}", b.source);
        assert!(b.source.contains("(CV 3.0 %, 5 repetitions per side of system, 20"), "{}", b.source);
        let b = band(&store, &[1, 4], None).unwrap();
        assert_eq!(b.band, 0.08);
        assert!(b.source.ends_with("the largest is used"), "{}", b.source);
        let b = band(&store, &[1, 16], None).unwrap();
        assert_eq!(b.band, 0.05);
        assert!(b.source.contains("not calibrated: oltp_read_only @ 16 thr"), "{}", b.source);
        assert_eq!(band(&store, &[1], Some(0.03)).unwrap(), Band::given(0.03));
        let p95 = for_host(&store, &host, "oltp_read_only", &[1], Metric::P95, None).unwrap();
        assert_eq!(p95.band, DEFAULT_NOISE_BAND, "a tps calibration is not a p95 one");
        let unknown = for_host(&store, &Fingerprint::default(), "oltp_read_only", &[1], Metric::Tps, None).unwrap();
        assert!(unknown.source.contains("this host is not known"), "{}", unknown.source);
    }
}
