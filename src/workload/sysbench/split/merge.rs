//! One run out of its clients' parts, exactly: counts and errors summed, latency histograms added (never
//! percentiles averaged), per-second periods summed by the wall-clock second they ended in, threads'
//! fairness over every client's threads.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use hdrhistogram::Histogram;

use super::super::options::Test;
use super::super::session::Counts;
use super::super::stats::{Interval, Latency, RunResult, new_histogram};
use super::wire::{PartInterval, PartResult, decode};
use crate::error::{Error, Result};

/// Client `i`'s share of `total` split over `n` clients: the first `total % n` get one more.
pub fn share(total: u64, i: usize, n: usize) -> u64 {
    let n = n.max(1) as u64;
    total / n + u64::from((i as u64) < total % n)
}

/// The first of client `i`'s thread ids among all clients' threads.
pub fn first_thread(total: u64, i: usize, n: usize) -> u64 {
    (0..i).map(|j| share(total, j, n)).sum()
}

fn add_histogram(into: &mut Histogram<u64>, h: &Histogram<u64>) -> Result<()> {
    into.add(h).map_err(|e| Error::Other(format!("cannot add a client's latency histogram: {e:?}")))
}

/// A wall-clock period being summed over the clients.
#[derive(Default)]
struct Period {
    counts: Counts,
    latency: Latency,
    histogram: Option<Histogram<u64>>,
    threads: u32,
    queue: Option<(u64, u64)>,
    duration: f64,
    from: BTreeSet<usize>,
}

/// Sums the clients' periods by the wall-clock second they ended in, relative to the common start.
pub struct Periods {
    step: f64,
    offsets: BTreeMap<usize, f64>,
    open: BTreeMap<u64, Period>,
    emitted: u64,
}

impl Periods {
    /// Periods of `step` seconds (the clients' `--report-interval`).
    pub fn new(step: u64) -> Periods {
        Periods { step: step.max(1) as f64, offsets: BTreeMap::new(), open: BTreeMap::new(), emitted: 0 }
    }

    /// Client `part` started measuring `offset_s` seconds after the common start (its skew).
    pub fn started(&mut self, part: usize, offset_s: f64) {
        self.offsets.insert(part, offset_s);
    }

    /// Adds a period of client `part`.
    pub fn add(&mut self, part: usize, iv: &PartInterval) -> Result<()> {
        let offset = self.offsets.get(&part).copied().unwrap_or(0.0);
        let k = (((offset + iv.time) / self.step).round() as u64).max(1);
        // A client that is late by a whole period joins the next one still open.
        let k = k.max(self.emitted + 1);
        let p = self.open.entry(k).or_default();
        p.counts.add(&iv.counts);
        p.latency.merge(&iv.latency);
        let h = decode(&iv.histogram)?;
        match &mut p.histogram {
            Some(into) => add_histogram(into, &h)?,
            None => p.histogram = Some(h),
        }
        p.threads += iv.threads;
        if let Some((waiting, serving)) = iv.queue {
            let q = p.queue.get_or_insert((0, 0));
            *q = (q.0 + waiting, q.1 + serving);
        }
        p.duration = p.duration.max(iv.duration);
        p.from.insert(part);
        Ok(())
    }

    /// The periods every client in `live` has reported (or all when `flush`), oldest first, as one
    /// run's intervals with `pct` as the `--percentile`.
    pub fn ready(&mut self, live: &BTreeSet<usize>, flush: bool, pct: u32) -> Vec<Interval> {
        let mut out = Vec::new();
        while let Some((&k, p)) = self.open.first_key_value() {
            if !flush && !live.is_subset(&p.from) {
                break;
            }
            let p = self.open.remove(&k).expect("seen");
            let h = p.histogram.unwrap_or_else(new_histogram);
            let end = Duration::from_secs_f64(k as f64 * self.step);
            let length = Duration::from_secs_f64(p.duration);
            out.push(Interval::new(end, length, p.threads, p.counts, &h, p.latency, pct, p.queue));
            self.emitted = k;
        }
        out
    }
}

/// One run of the clients' results, in client order: what every client measured, as sysbench's figures
/// of one run with all their threads.
pub fn runs(test: Option<Test>, parts: &[&PartResult], intervals: Vec<Interval>) -> Result<RunResult> {
    let threads = parts.iter().map(|p| p.per_thread.len()).sum();
    let mut r = RunResult::empty_for(test, threads);
    r.per_thread.clear();
    for p in parts {
        r.total_time = r.total_time.max(Duration::from_secs_f64(p.total_time));
        r.time_interval = r.time_interval.max(Duration::from_secs_f64(p.time_interval));
        r.counts.add(&p.counts);
        r.latency.merge(&p.latency);
        add_histogram(&mut r.histogram, &decode(&p.histogram)?)?;
        r.per_thread.extend(&p.per_thread);
        r.interrupted |= p.interrupted;
        let sum = |a: Option<u64>, b: Option<u64>| {
            if a.is_none() && b.is_none() { None } else { Some(a.unwrap_or(0) + b.unwrap_or(0)) }
        };
        r.forced_unfinished = sum(r.forced_unfinished, p.forced_unfinished);
        r.interrupted_unfinished = sum(r.interrupted_unfinished, p.interrupted_unfinished);
    }
    r.intervals = intervals;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::super::wire::encode;
    use super::*;
    use proptest::prelude::*;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        h
    }

    fn part(values: &[u64], threads: usize) -> PartResult {
        let mut latency = Latency::default();
        for v in values {
            latency.record(v * 1000);
        }
        PartResult {
            total_time: 10.0,
            time_interval: 10.0,
            counts: Counts { events: values.len() as u64, reads: 2 * values.len() as u64, ..Counts::default() },
            latency,
            histogram: encode(&hist(values)).unwrap(),
            per_thread: vec![Default::default(); threads],
            interrupted: false,
            forced_unfinished: None,
            interrupted_unfinished: None,
            client: None,
        }
    }

    proptest! {
        /// Shares add up to the whole, differ by at most one, and thread ids do not overlap.
        #[test]
        fn shares_split_the_whole(total in 1u64..10_000, n in 1usize..64) {
            let s: Vec<u64> = (0..n).map(|i| share(total, i, n)).collect();
            prop_assert_eq!(s.iter().sum::<u64>(), total);
            prop_assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
            for i in 1..n {
                prop_assert_eq!(first_thread(total, i, n), first_thread(total, i - 1, n) + s[i - 1]);
            }
        }

        /// The merged percentiles are those of one histogram of every raw latency.
        #[test]
        fn merged_percentiles_are_those_of_all_latencies(
            parts in proptest::collection::vec(proptest::collection::vec(1u64..5_000_000, 1..200), 1..5)
        ) {
            let results: Vec<PartResult> = parts.iter().map(|v| part(v, 2)).collect();
            let refs: Vec<&PartResult> = results.iter().collect();
            let r = runs(None, &refs, vec![]).unwrap();
            let all: Vec<u64> = parts.concat();
            let one = hist(&all);
            for p in [50.0, 95.0, 99.0, 99.9, 100.0] {
                prop_assert_eq!(super::super::super::stats::percentile(&r.histogram, p), super::super::super::stats::percentile(&one, p));
            }
            prop_assert_eq!(r.counts.events, all.len() as u64);
            prop_assert_eq!(r.latency.max_ns, all.iter().max().unwrap() * 1000);
            prop_assert_eq!(r.per_thread.len(), 2 * parts.len());
        }
    }

    fn period(time: f64, events: u64, values: &[u64]) -> PartInterval {
        PartInterval {
            time,
            duration: 1.0,
            threads: 1,
            counts: Counts { events, ..Counts::default() },
            latency: Latency::default(),
            queue: None,
            histogram: encode(&hist(values)).unwrap(),
        }
    }

    #[test]
    fn periods_are_summed_by_wall_clock_second_once_every_client_reported() {
        let mut p = Periods::new(1);
        p.started(0, 0.0);
        p.started(1, 0.004);
        let live: BTreeSet<usize> = [0, 1].into();
        p.add(0, &period(1.0, 10, &[100])).unwrap();
        assert!(p.ready(&live, false, 95).is_empty(), "client 1 has not reported the first second");
        p.add(0, &period(2.0, 20, &[100])).unwrap();
        p.add(1, &period(0.998, 5, &[300])).unwrap();
        let out = p.ready(&live, false, 95);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].time, out[0].counts.events, out[0].threads), (1.0, 15, 2));
        assert!(out[0].p95_ms >= 0.299, "{}", out[0].p95_ms);
        // Client 1 died: the rest is flushed with what the others sent.
        let out = p.ready(&[0].into(), true, 95);
        assert_eq!((out.len(), out[0].time, out[0].counts.events), (1, 2.0, 20));
    }
}
