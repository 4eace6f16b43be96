//! Whether the client was the limit of a run: what versus itself used of the CPUs it may run on, and
//! how busy those CPUs were, over the measured time. A run whose client is the limit measures the
//! client, not the server; every report flags it. docs/fleet.md gives the measurements behind the
//! thresholds.

use serde::{Deserialize, Serialize};

use super::host::HostCpuDelta;
use super::process::ProcessDelta;

/// The client's busy CPUs over the CPUs its threads could keep busy, from which they cannot go faster
/// (each of its threads that waits for no server keeps a CPU busy).
pub const SATURATED: f64 = 0.9;

/// The busy share of the CPUs the client may run on from which they are full (a client pinned to one
/// CPU beside the server kept it 93-100 % busy while halving the throughput; the gaps are its waits).
pub const CPUS_FULL: f64 = 0.9;

/// On full CPUs, the client's share of their busy time from which the client, not the server, is what
/// fills them (on a client host of its own the share is nearly 1; beside the server, the server's
/// work is the rest).
pub const CLIENT_SHARE: f64 = 0.5;

/// What the client used over the measured time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientLoad {
    /// CPUs' worth of time the client process used (its CPU time over the wall time).
    pub client_cpus: f64,
    /// CPUs the client could keep busy: its OS threads, at most the CPUs it may run on.
    pub usable_cpus: f64,
    /// Busy share (0–1) of the CPUs the client may run on (all of the host's unless it is pinned),
    /// when `/proc/stat` was readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_busy: Option<f64>,
    /// The client's part (0–1) of those CPUs' busy time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<f64>,
}

/// Why the client was the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Its threads used nearly all the CPUs they could keep busy.
    Saturated,
    /// The CPUs it may run on were full, mostly with its own work.
    CpusFull,
}

/// Metric names as stored in the `efficiency` table beside the per-transaction costs.
const METRICS: [&str; 4] = ["client_cpus", "client_usable_cpus", "client_cpus_busy_share", "client_share_of_busy"];

impl ClientLoad {
    /// The load of a client with `threads` OS threads allowed on `allowed` CPUs, from its process's
    /// delta and those CPUs' delta over the same time. `None` when no wall time passed.
    pub fn measure(threads: u32, allowed: usize, client: &ProcessDelta, cpus: Option<&HostCpuDelta>) -> Option<Self> {
        let wall_us = client.wall.as_secs_f64() * 1e6;
        if wall_us <= 0.0 {
            return None;
        }
        let cpu_us = client.cpu_us() as f64;
        let busy_us = cpus.and_then(|h| Some(h.busy_share()? * h.total_us()));
        Some(ClientLoad {
            client_cpus: cpu_us / wall_us,
            usable_cpus: f64::from(threads.max(1)).min(allowed.max(1) as f64),
            cpus_busy: cpus.and_then(HostCpuDelta::busy_share),
            client_share: busy_us.filter(|b| *b > 0.0).map(|b| (cpu_us / b).min(1.0)),
        })
    }

    /// Why the client was the limit of the run, if it was.
    pub fn limit(&self) -> Option<Limit> {
        if self.client_cpus >= SATURATED * self.usable_cpus {
            Some(Limit::Saturated)
        } else if self.cpus_busy.is_some_and(|b| b >= CPUS_FULL) && self.client_share.is_some_and(|s| s >= CLIENT_SHARE)
        {
            Some(Limit::CpusFull)
        } else {
            None
        }
    }

    /// The figures in a few words: "the client used 0.69 CPU of the 1 it could keep busy; its CPUs were
    /// 99 % busy, 70 % of that the client's".
    pub fn describe(&self) -> String {
        let mut s = format!(
            "the client used {:.2} CPU of the {} it could keep busy",
            self.client_cpus,
            whole_or_tenths(self.usable_cpus)
        );
        if let Some(b) = self.cpus_busy {
            s.push_str(&format!("; its CPUs were {:.0} % busy", b * 100.0));
            if let Some(c) = self.client_share {
                s.push_str(&format!(", {:.0} % of that the client's", c * 100.0));
            }
        }
        s
    }

    /// The figures as stored rows.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        super::named_rows(&METRICS, [Some(self.client_cpus), Some(self.usable_cpus), self.cpus_busy, self.client_share])
    }

    /// Rebuilds from stored rows (others are ignored); `None` unless both CPU figures are there.
    pub fn from_metrics<'a>(rows: impl IntoIterator<Item = (&'a str, f64)>) -> Option<ClientLoad> {
        let v = super::named_values(&METRICS, rows);
        Some(ClientLoad { client_cpus: v[0]?, usable_cpus: v[1]?, cpus_busy: v[2], client_share: v[3] })
    }
}

/// Several client processes on one host as one client: their CPU time and their shares of the
/// host's busy time add up, their CPUs' load is the mean of what each saw, and the CPUs they could
/// keep busy add up to at most `host_cpus` (the CPUs they may run on there, when known); `None` for no
/// loads.
pub fn combine_loads(loads: &[ClientLoad], host_cpus: Option<usize>) -> Option<ClientLoad> {
    let n = loads.len();
    if n == 0 {
        return None;
    }
    let all = |f: fn(&ClientLoad) -> Option<f64>| -> Option<Vec<f64>> { loads.iter().map(f).collect() };
    Some(ClientLoad {
        client_cpus: loads.iter().map(|l| l.client_cpus).sum(),
        usable_cpus: loads
            .iter()
            .map(|l| l.usable_cpus)
            .sum::<f64>()
            .min(host_cpus.map_or(f64::MAX, |c| c.max(1) as f64)),
        cpus_busy: all(|l| l.cpus_busy).map(|v| v.iter().sum::<f64>() / n as f64),
        client_share: all(|l| l.client_share).map(|v| v.iter().sum::<f64>().min(1.0)),
    })
}

/// Samples versus and the CPUs it may run on from [`Watch::start`] to [`Watch::finish`].
pub struct Watch {
    cpus: Vec<usize>,
    client: Option<super::process::ProcessSample>,
    host: Option<super::host::HostCpu>,
}

impl Watch {
    /// Takes the first samples.
    pub fn start() -> Watch {
        let cpus = allowed_cpus();
        let host = super::host::HostCpu::read_of(&cpus).ok();
        Watch { client: super::process::ProcessSample::read_self().ok(), host, cpus }
    }

    /// The load since [`Watch::start`] of a client with `threads` OS threads; `None` when `/proc` could
    /// not be read.
    pub fn finish(self, threads: u32) -> Option<ClientLoad> {
        let client = self.client?.delta_to(&super::process::ProcessSample::read_self().ok()?);
        let cpus = self.host.zip(super::host::HostCpu::read_of(&self.cpus).ok()).map(|(b, a)| b.delta_to(&a));
        ClientLoad::measure(threads, self.cpus.len(), &client, cpus.as_ref())
    }
}

/// A whole number of CPUs without decimals, others with one.
fn whole_or_tenths(x: f64) -> String {
    if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// The CPUs this process may run on (its affinity mask); all of them when the mask cannot be read.
pub fn allowed_cpus() -> Vec<usize> {
    use nix::sched::{CpuSet, sched_getaffinity};
    use nix::unistd::Pid;
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count()).filter(|&i| set.is_set(i).unwrap_or(false)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    fn delta(cpu_us: u64, wall_ms: u64) -> ProcessDelta {
        ProcessDelta { wall: Duration::from_millis(wall_ms), user_us: cpu_us, ..ProcessDelta::default() }
    }

    fn cpus(busy_ticks: u64, total_ticks: u64) -> HostCpuDelta {
        HostCpuDelta { total_ticks, idle_ticks: total_ticks - busy_ticks, ticks_per_second: 100, ..Default::default() }
    }

    #[test]
    fn a_client_whose_threads_spin_is_saturated() {
        // One event loop that used 0.95 of its CPU.
        let l = ClientLoad::measure(1, 2, &delta(950_000, 1000), Some(&cpus(120, 200))).unwrap();
        assert_eq!((l.usable_cpus, l.limit()), (1.0, Some(Limit::Saturated)));
    }

    #[test]
    fn a_client_pinned_beside_the_server_fills_its_cpu() {
        // 16 threads pinned to one CPU, 99 % busy, 0.69 of it the client's (the server takes the rest).
        let l = ClientLoad::measure(16, 1, &delta(690_000, 1000), Some(&cpus(99, 100))).unwrap();
        assert_eq!(l.limit(), Some(Limit::CpusFull));
        assert_eq!(
            l.describe(),
            "the client used 0.69 CPU of the 1 it could keep busy; its CPUs were 99 % busy, 70 % of that the client's"
        );
        // Unpinned on a host the server fills: a third of the busy time is the client's.
        let l = ClientLoad::measure(16, 2, &delta(620_000, 1000), Some(&cpus(197, 200))).unwrap();
        assert_eq!(l.limit(), None);
    }

    #[test]
    fn clients_on_one_host_add_up() {
        let one = ClientLoad { client_cpus: 0.3, usable_cpus: 1.0, cpus_busy: Some(0.95), client_share: Some(0.3) };
        assert_eq!(one.limit(), None, "each alone owns too little of the CPU");
        let both = combine_loads(&[one, one], Some(1)).unwrap();
        assert!((both.client_cpus - 0.6).abs() < 1e-9 && (both.client_share.unwrap() - 0.6).abs() < 1e-9);
        assert_eq!((both.usable_cpus, both.limit()), (1.0, Some(Limit::CpusFull)));
        assert_eq!(combine_loads(&[one, one], None).unwrap().usable_cpus, 2.0);
        assert_eq!(combine_loads(&[], None), None);
    }

    #[test]
    fn rows_round_trip_and_partial_rows_are_none() {
        let l = ClientLoad { client_cpus: 0.4, usable_cpus: 2.0, cpus_busy: Some(0.7), client_share: None };
        let rows = l.metrics();
        assert_eq!(rows.len(), 3);
        assert_eq!(ClientLoad::from_metrics(rows.iter().copied().chain([("tps", 1.0)])), Some(l));
        assert_eq!(ClientLoad::from_metrics([("client_cpus", 0.4)]), None);
        assert!(ClientLoad::measure(1, 1, &delta(5, 0), None).is_none());
    }

    #[test]
    fn this_process_may_run_on_at_least_one_cpu() {
        assert!(!allowed_cpus().is_empty());
    }

    proptest! {
        #[test]
        fn shares_stay_in_range(cpu in 0u64..10_000_000, wall in 1u64..10_000, busy in 0u64..1000, threads in 0u32..64,
                                allowed in 0usize..64) {
            let l = ClientLoad::measure(threads, allowed, &delta(cpu, wall), Some(&cpus(busy, 1000))).unwrap();
            prop_assert!(l.usable_cpus >= 1.0 && l.client_cpus >= 0.0);
            prop_assert!(l.cpus_busy.unwrap() <= 1.0);
            prop_assert!(l.client_share.is_none_or(|s| (0.0..=1.0).contains(&s)));
            prop_assert_eq!(l.limit() == Some(Limit::Saturated), l.client_cpus >= SATURATED * l.usable_cpus);
        }
    }
}
