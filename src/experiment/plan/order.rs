//! The order of an experiment's runs: rounds of every cell (shuffled or in order) or cell by cell, and
//! the chains of linked runs (Insert Benchmark steps) kept back to back.

use std::collections::HashSet;
use std::sync::Arc;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Cell, PlannedRun};
use crate::experiment::spec::Order;
use crate::workload::Workload;

/// Runs in rounds of every cell (shuffled per round, or in order), or cell by cell.
pub fn order_runs(cells: usize, repetitions: u32, order: Order, seed: u64) -> Vec<PlannedRun> {
    let mut runs = Vec::with_capacity(cells * repetitions as usize);
    match order {
        Order::Sequential => {
            for cell in 0..cells {
                runs.extend((1..=repetitions).map(|repetition| PlannedRun { cell, repetition }));
            }
        }
        Order::Interleaved | Order::Shuffled => {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            for repetition in 1..=repetitions {
                let mut round: Vec<usize> = (0..cells).collect();
                if order == Order::Shuffled {
                    round.shuffle(&mut rng);
                }
                runs.extend(round.into_iter().map(|cell| PlannedRun { cell, repetition }));
            }
        }
    }
    runs
}

/// Reorders runs so that the runs of each chain (target × chain × threads × repetition, see
/// [`crate::workload::Link`]) run back to back, in rank order, where the first of them was planned.
pub fn group_chains(runs: &[PlannedRun], cells: &[Cell], workloads: &[Arc<dyn Workload>]) -> Vec<PlannedRun> {
    let links: Vec<_> = workloads.iter().map(|w| w.link()).collect();
    let chain = |r: &PlannedRun| {
        let c = &cells[r.cell];
        links[c.workload].as_ref().map(|l| (c.target, l.chain.clone(), c.threads, r.repetition))
    };
    let rank = |r: &PlannedRun| links[cells[r.cell].workload].as_ref().map(|l| l.rank);
    let mut out = Vec::with_capacity(runs.len());
    let mut emitted = HashSet::new();
    for r in runs {
        match chain(r) {
            None => out.push(*r),
            Some(k) if emitted.insert(k.clone()) => {
                let mut group: Vec<PlannedRun> =
                    runs.iter().filter(|x| chain(x).as_ref() == Some(&k)).copied().collect();
                group.sort_by_key(|x| rank(x));
                out.extend(group);
            }
            Some(_) => {}
        }
    }
    out
}
