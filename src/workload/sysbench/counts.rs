//! What a run counts: events, statements by kind, ignored errors and reconnects.

use serde::{Deserialize, Serialize};

use crate::driver::Outcome;

/// Statement and event counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Completed events (transactions).
    pub events: u64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements that changed rows.
    pub writes: u64,
    /// Statements that neither returned rows nor changed any.
    pub other: u64,
    /// Ignored (retried) errors.
    pub errors: u64,
    /// Reconnects after a lost connection.
    pub reconnects: u64,
}

impl Counts {
    /// reads + writes + other.
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.other
    }

    /// Counts one successful statement by sysbench's rules.
    #[inline]
    pub fn statement(&mut self, o: Outcome) {
        match o {
            Outcome::Read => self.reads += 1,
            Outcome::Write => self.writes += 1,
            Outcome::Other => self.other += 1,
        }
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &Counts) {
        self.events += o.events;
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
    }
}
