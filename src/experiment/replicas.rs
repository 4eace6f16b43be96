//! The replicas of a topology target during and after one run: lag sampled each second while the load
//! runs, then the time they take to catch up and the data check, folded into the run's
//! [`ReplicationFigures`]. A replica that fails is a warning and a fault in the figures; the primary's
//! figures of the run are kept.

use std::time::Duration;

use super::progress::Progress;
use crate::error::Result;
use crate::sampler::replica_lag::{LagRecording, LagSample, ReplicaLagSampler};
use crate::sampler::replication::ReplicationFigures;
use crate::server::replication::{Heartbeat, Topology, catch_up, compare_data};
use crate::store::ReplicaSecond;

/// How long healthy replicas may take to catch up after a run (beyond their delays).
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a replica that showed a fault is waited for.
const FAULTY_CATCH_UP_TIMEOUT: Duration = Duration::from_secs(5);

/// Starts the heartbeat on the primary and samples every replica once a second.
pub(super) fn start(topology: &Topology) -> Result<LagRecording> {
    Ok(ReplicaLagSampler::start(topology, Heartbeat::DEFAULT_INTERVAL)?.record(Duration::from_secs(1)))
}

/// Stops sampling at the end of the load, restarts a replica that died, waits for the replicas to catch
/// up, compares their data with the primary's and sums it up; samples before `warmup` ended are left out
/// of the lag figures, and the replicas' costs are per transaction of the primary at `primary_tps`.
pub(super) fn finish(
    recording: LagRecording,
    topology: &mut Topology,
    warmup: Duration,
    primary_tps: Option<f64>,
    progress: &mut Progress,
) -> (ReplicationFigures, Vec<ReplicaSecond>) {
    let recorded = recording.finish_kept();
    if let Some(e) = &recorded.error {
        progress.warn(&format!("warning: replica lag sampling stopped before the load ended: {e}"));
    }
    let mut warned = std::collections::BTreeSet::new();
    for r in recorded.samples.iter().flat_map(|s| &s.replicas) {
        if !r.last_error.is_empty() && warned.insert(r.replica.clone()) {
            progress.warn(&format!("warning: replica {}: {}", r.replica, r.last_error));
        }
    }
    // A replica that died during the run is started again: it resumes from its GTID position, and its
    // catch-up and data are checked like the others'.
    for r in topology.replicas_mut() {
        if let Err(e) = r.check_alive() {
            let name = r.info().name.clone();
            let died = e.to_string();
            let died = died.split("; error log").next().unwrap_or_default();
            progress.warn(&format!("warning: {died} during the run; restarting it"));
            if let Err(e) = r.restart() {
                progress.warn(&format!("warning: replica {name} could not be restarted: {e}"));
            }
        }
    }
    // Replicas stopped by an error would hold the catch-up until its timeout.
    let healthy = topology.states().is_ok_and(|states| {
        states.iter().all(|r| r.last_error.is_empty() && r.sql_running == "Yes" && r.io_running != "No")
    });
    let timeout = if healthy {
        CATCH_UP_TIMEOUT + Duration::from_secs(u64::from(topology.record().max_delay()))
    } else {
        FAULTY_CATCH_UP_TIMEOUT
    };
    progress.step("waiting for the replicas to catch up");
    let n = topology.replicas().len();
    let times: Vec<Option<f64>> = match catch_up(topology, timeout) {
        Ok(c) => {
            for late in c.iter().filter(|c| !c.reached) {
                progress.warn(&format!(
                    "warning: replica {} had not caught up {:.0} s after the load",
                    late.replica, late.seconds
                ));
            }
            c.iter().map(|c| c.reached.then_some(c.seconds)).collect()
        }
        Err(e) => {
            progress.warn(&format!("warning: the replicas' catch-up could not be timed: {e}"));
            vec![None; n]
        }
    };
    let data_equal = if times.iter().all(Option::is_some) {
        progress.step("comparing the replicas' data with the primary's");
        match compare_data(topology) {
            Ok(check) => {
                for d in &check.differences {
                    progress
                        .warn(&format!("warning: replica {}: table {} differs from the primary's", d.replica, d.table));
                }
                Some(check.equal())
            }
            Err(e) => {
                progress.warn(&format!("warning: the replicas' data could not be compared: {e}"));
                None
            }
        }
    } else {
        None
    };
    let figures = ReplicationFigures::of(&recorded.samples, warmup.as_secs_f64(), &times, data_equal, primary_tps);
    (figures, seconds(&recorded.samples))
}

/// Each replica each second, as the store keeps them.
fn seconds(samples: &[LagSample]) -> Vec<ReplicaSecond> {
    samples
        .iter()
        .flat_map(|s| {
            s.replicas.iter().map(|r| ReplicaSecond {
                replica: r.replica.clone(),
                t_s: (s.at_s * 1000.0).round() / 1000.0,
                lag_ms: r.heartbeat_ms,
                seconds_behind: r.seconds_behind.map(|b| b as i64),
                applied_ps: r.applied_per_s,
            })
        })
        .collect()
}
