//! Efficiency of a step: the server process and versus itself from `/proc`, the whole host from
//! `/proc/stat`, the server's status counters, normalised per operation with the reference's formulas.

use crate::sampler::client_load::ClientLoad;
use crate::sampler::{Efficiency, HostCpu, HostCpuDelta, ProcessDelta, ProcessSample, status_deltas, status_ends};

use super::result::StepEfficiency;

pub use crate::workload::probe::{NoProbe, ServerProbe};

/// Counters read at the start of a step.
pub struct Snapshot {
    server: Option<ProcessSample>,
    client: Option<ProcessSample>,
    host: Option<HostCpu>,
    status: Option<Vec<(String, String)>>,
}

impl Snapshot {
    /// Reads everything available now.
    pub fn take(probe: &mut dyn ServerProbe) -> Snapshot {
        Snapshot {
            server: probe.server_pid().and_then(|p| ProcessSample::read(p).ok()),
            client: ProcessSample::read_self().ok(),
            host: HostCpu::read().ok(),
            status: probe.global_status(),
        }
    }
}

/// What changed over a step.
#[derive(Debug, Clone, Default)]
pub struct Deltas {
    /// The server process.
    pub server: Option<ProcessDelta>,
    /// versus.
    pub client: Option<ProcessDelta>,
    /// The host.
    pub host: Option<HostCpuDelta>,
    /// Status counters.
    pub status: Vec<(String, i64)>,
    /// Status gauges and log positions at the end.
    pub ends: Vec<(String, i64)>,
}

impl Deltas {
    /// The changes from `before` to now.
    pub fn since(before: &Snapshot, probe: &mut dyn ServerProbe) -> Deltas {
        let after = Snapshot::take(probe);
        Deltas {
            server: before.server.as_ref().zip(after.server.as_ref()).map(|(b, a)| b.delta_to(a)),
            client: before.client.as_ref().zip(after.client.as_ref()).map(|(b, a)| b.delta_to(a)),
            host: before.host.as_ref().zip(after.host.as_ref()).map(|(b, a)| b.delta_to(a)),
            status: match (&before.status, &after.status) {
                (Some(b), Some(a)) => status_deltas(b, a),
                _ => Vec::new(),
            },
            ends: after.status.as_deref().map(status_ends).unwrap_or_default(),
        }
    }
}

/// Busy CPU µs of the host (user, nice, system, irq, softirq: everything but idle, I/O wait and steal),
/// which is what vmstat's `us + sy` counts.
pub fn host_busy_us(h: &HostCpuDelta) -> f64 {
    let busy = h.total_ticks.saturating_sub(h.idle_ticks + h.iowait_ticks + h.steal_ticks);
    busy as f64 * 1e6 / h.ticks_per_second.max(1) as f64
}

fn status(d: &Deltas, name: &str) -> Option<i64> {
    d.status.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

/// Below this many clock ticks of CPU a step's CPU figures are coarse (one tick is 1 % of them or more).
pub const MIN_CPU_TICKS: f64 = 100.0;

/// A note when the server's or versus's CPU over a step is so short that the kernel's clock tick
/// (`/proc` counts CPU in ticks of 10 ms) rounds it visibly: how many ticks, and what one is worth.
pub fn coarse_cpu_note(d: &Deltas) -> Option<String> {
    let tick_us = 1e6 / crate::sampler::ticks_per_second().max(1) as f64;
    let mut parts = Vec::new();
    for (who, us) in
        [("server", d.server.as_ref().map(|s| s.cpu_us())), ("versus", d.client.as_ref().map(|c| c.cpu_us()))]
    {
        let Some(us) = us else { continue };
        let ticks = us as f64 / tick_us;
        if ticks < MIN_CPU_TICKS {
            let share = if ticks >= 1.0 { format!("±{:.0} %", 100.0 / ticks) } else { "all of it".to_string() };
            parts.push(format!("{who} {ticks:.0} tick(s) (one tick is {share})"));
        }
    }
    (!parts.is_empty()).then(|| {
        format!(
            "CPU per operation is coarse: the step used {} of {:.0} ms CPU time; a longer step resolves it",
            parts.join(" and "),
            tick_us / 1000.0
        )
    })
}

/// The efficiency figures of a step with `ops` operations named `per` and `inserted` rows, from the
/// deltas and the largest server RSS seen.
pub fn efficiency(per: &str, ops: u64, inserted: u64, d: &Deltas, rss_max: Option<u64>) -> StepEfficiency {
    let per_n = |v: f64, n: u64| (n > 0).then(|| v / n as f64);
    let per_op = |v: f64| per_n(v, ops);
    let mut e = StepEfficiency {
        per: per.to_string(),
        operations: ops,
        server_rss_max_bytes: rss_max.or(d.server.as_ref().map(|s| s.rss_bytes)).filter(|r| *r > 0),
        ..StepEfficiency::default()
    };
    if let Some(h) = &d.host {
        let busy = host_busy_us(h);
        e.host_cpu_us_per_op = per_op(busy);
        e.host_cpu_pct = (h.total_ticks > 0).then(|| 100.0 * busy / h.total_us());
        e.host_cs_per_op = per_op(h.ctxt_switches as f64);
    }
    if let Some(s) = &d.server {
        e.server_cpu_us_per_op = per_op(s.cpu_us() as f64);
        e.server_cs_per_op = per_op(s.ctxt_switches() as f64);
        e.server_cpu_us_per_row = per_n(s.cpu_us() as f64, inserted);
    }
    if let Some(c) = &d.client {
        e.client_cpu_us_per_op = per_op(c.cpu_us() as f64);
        e.client_cpu_us_per_row = per_n(c.cpu_us() as f64, inserted);
    }
    let process_io = d.server.as_ref().and_then(|s| s.read_bytes.zip(s.write_bytes));
    let innodb_io = status(d, "Innodb_data_read").zip(status(d, "Innodb_data_written"));
    let (read, written, source) = match (process_io, innodb_io) {
        (Some((r, w)), _) => (Some(r as f64), Some(w as f64), Some("process")),
        (None, Some((r, w))) => (Some(r.max(0) as f64), Some(w.max(0) as f64), Some("innodb")),
        _ => (None, None, None),
    };
    e.read_kb_per_op = read.and_then(|r| per_op(r / 1024.0));
    e.write_kb_per_op = written.and_then(|w| per_op(w / 1024.0));
    e.write_kb_per_insert = written.and_then(|w| per_n(w / 1024.0, inserted));
    e.io_source = source.map(str::to_string);
    e
}

/// The per-operation costs in the results store's form ([`Efficiency`]); the counter-based ones need
/// the server's line and are added when the step is stored ([`Efficiency::with_counters`]).
/// `threads` are the client's OS threads of the step, for whether the client was its limit
/// ([`ClientLoad`]); the host's CPUs count as the client's only when it may run on all of them.
pub fn store_efficiency(ops: u64, d: &Deltas, threads: u32) -> Efficiency {
    let mut e = Efficiency::compute(ops, d.server.as_ref(), d.client.as_ref(), &d.status, None);
    let allowed = crate::sampler::client_load::allowed_cpus().len();
    // Online CPUs, not available_parallelism(): that one counts the affinity mask, so it always equals
    // `allowed` and a pinned client would be judged on the whole host's busy time.
    let online = nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN).ok().flatten();
    let all = online.map_or(allowed, |n| n.max(1) as usize);
    let host = d.host.as_ref().filter(|_| allowed >= all);
    e.client_load = d.client.as_ref().and_then(|c| ClientLoad::measure(threads, allowed, c, host));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn deltas() -> Deltas {
        Deltas {
            server: Some(ProcessDelta {
                wall: Duration::from_secs(10),
                user_us: 3_000_000,
                system_us: 1_000_000,
                voluntary_ctxt_switches: 5_000,
                nonvoluntary_ctxt_switches: 1_000,
                read_bytes: Some(1024 * 100),
                write_bytes: Some(1024 * 2000),
                rss_bytes: 500 << 20,
                ..ProcessDelta::default()
            }),
            client: Some(ProcessDelta { user_us: 800_000, system_us: 200_000, ..ProcessDelta::default() }),
            host: Some(HostCpuDelta {
                total_ticks: 2000,
                idle_ticks: 900,
                iowait_ticks: 100,
                steal_ticks: 0,
                ctxt_switches: 40_000,
                ticks_per_second: 100,
            }),
            status: vec![("Innodb_data_read".into(), 7), ("Innodb_data_written".into(), 9)],
            ends: Vec::new(),
        }
    }

    #[test]
    fn per_operation_formulas() {
        // 1000 queries while 500 rows were inserted.
        let e = efficiency("query", 1000, 500, &deltas(), Some(600 << 20));
        // host: 1000 busy ticks of 2000 = 10 s busy CPU → 10 000 µs per query, 50 % of the host.
        assert_eq!(e.host_cpu_us_per_op, Some(10_000.0));
        assert_eq!(e.host_cpu_pct, Some(50.0));
        assert_eq!(e.host_cs_per_op, Some(40.0));
        assert_eq!(e.server_cpu_us_per_op, Some(4_000.0));
        assert_eq!(e.server_cs_per_op, Some(6.0));
        assert_eq!(e.client_cpu_us_per_op, Some(1_000.0));
        assert_eq!(e.client_cpu_us_per_row, Some(2_000.0));
        assert_eq!(e.server_cpu_us_per_row, Some(8_000.0));
        assert_eq!(e.read_kb_per_op, Some(0.1));
        assert_eq!(e.write_kb_per_op, Some(2.0));
        assert_eq!(e.write_kb_per_insert, Some(4.0), "wKB/i is always per insert");
        assert_eq!(e.server_rss_max_bytes, Some(600 << 20));
        assert_eq!(e.io_source.as_deref(), Some("process"));
    }

    #[test]
    fn innodb_counters_stand_in_for_unreadable_process_io_and_zero_ops_give_nothing() {
        let mut d = deltas();
        if let Some(s) = d.server.as_mut() {
            s.read_bytes = None;
        }
        let e = efficiency("insert", 1024, 1024, &d, None);
        assert_eq!(e.io_source.as_deref(), Some("innodb"));
        assert_eq!(e.write_kb_per_op, Some(9.0 / 1024.0 / 1024.0));
        assert_eq!(e.server_rss_max_bytes, Some(500 << 20), "the last sample when none was taken during the step");
        let none = efficiency("insert", 0, 0, &Deltas::default(), None);
        assert_eq!(none.host_cpu_us_per_op, None);
        assert_eq!(none.write_kb_per_insert, None);
        assert_eq!(none.server_rss_max_bytes, None);
    }

    #[test]
    fn a_step_too_short_for_the_clock_tick_says_so() {
        // 4 s of server and 1 s of versus CPU: hundreds of ticks, no note.
        assert_eq!(coarse_cpu_note(&deltas()), None);
        let tick_us = 1_000_000 / crate::sampler::ticks_per_second().max(1);
        let mut d = deltas();
        d.client = Some(ProcessDelta { user_us: 4 * tick_us, ..ProcessDelta::default() });
        let note = coarse_cpu_note(&d).unwrap();
        assert!(note.contains("versus 4 tick(s) (one tick is ±25 %)") && !note.contains("server"), "{note}");
    }
}
