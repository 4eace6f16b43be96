//! What an Insert Benchmark run does: the steps, their sizes and rates, the data shape and the seeds.
//!
//! [`Options::default`] is the reference's `cl.repro.sh` parameterisation (10M / 16M / 4M rows per client,
//! 1800 s query steps at 100, 500 and 1000 inserts/s per client). Every value is checked by
//! [`Options::validate`], whose errors name the flag (`--rows`) so that the command line and the
//! experiment file report the same one-line message.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One step of the benchmark, in the reference's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Step {
    /// `l.i0`: load in PK order without secondary indexes.
    Load,
    /// `l.x`: insert 100 rows per client, then create the three secondary indexes.
    Index,
    /// `l.i1`: inserts at the tail and as many deletes at the head, 50 rows per statement.
    Write1,
    /// `l.i2`: the same with 5 rows per statement.
    Write2,
    /// The flush-and-wait cleanup before the query steps.
    Cleanup,
    /// `qrN` (range) or `qpN` (point) queries as fast as possible with background writes at N
    /// inserts/s per client.
    Query {
        /// Point queries (`qp`) instead of range queries (`qr`).
        point: bool,
        /// Target inserts (and deletes) per second per client.
        rate: u32,
    },
}

/// What a step does, which decides its operation (the denominator of the per-operation figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// l.i0: inserts only.
    Load,
    /// l.x: the operation is an indexed row.
    Index,
    /// l.i1, l.i2: inserts and deletes.
    Write,
    /// The cleanup: nothing is measured.
    Cleanup,
    /// Query steps: the operation is a query.
    Query,
}

impl Step {
    /// The reference's name: `l.i0`, `l.x`, `l.i1`, `l.i2`, `cleanup`, `qr100`, `qp100` …
    pub fn name(self) -> String {
        match self {
            Step::Load => "l.i0".into(),
            Step::Index => "l.x".into(),
            Step::Write1 => "l.i1".into(),
            Step::Write2 => "l.i2".into(),
            Step::Cleanup => "cleanup".into(),
            Step::Query { point, rate } => format!("{}{rate}", if point { "qp" } else { "qr" }),
        }
    }

    /// What the step does.
    pub fn kind(self) -> StepKind {
        match self {
            Step::Load => StepKind::Load,
            Step::Index => StepKind::Index,
            Step::Write1 | Step::Write2 => StepKind::Write,
            Step::Cleanup => StepKind::Cleanup,
            Step::Query { .. } => StepKind::Query,
        }
    }

    /// True for the query steps.
    pub fn is_query(self) -> bool {
        matches!(self, Step::Query { .. })
    }

    /// True for the steps that delete as many rows as they insert.
    pub fn deletes(self) -> bool {
        matches!(self, Step::Write1 | Step::Write2 | Step::Query { .. })
    }

    /// Position in the canonical order: loads, cleanup, then query steps by rate, range before point.
    pub fn rank(self) -> (u8, u32, bool) {
        match self {
            Step::Load => (0, 0, false),
            Step::Index => (1, 0, false),
            Step::Write1 => (2, 0, false),
            Step::Write2 => (3, 0, false),
            Step::Cleanup => (4, 0, false),
            Step::Query { point, rate } => (5, rate, point),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Step {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        // The reference's directories carry a suffix (`qr100.L1`); accept it.
        let t = t.split_once(".l").filter(|(a, _)| a.starts_with('q')).map(|(a, _)| a.to_string()).unwrap_or(t);
        Ok(match t.as_str() {
            "l.i0" => Step::Load,
            "l.x" => Step::Index,
            "l.i1" => Step::Write1,
            "l.i2" => Step::Write2,
            "cleanup" | "vac" => Step::Cleanup,
            q if q.starts_with("qr") || q.starts_with("qp") => {
                let rate: u32 =
                    q[2..].parse().map_err(|_| format!("'{s}' is not a step; write e.g. qr100 or qp500"))?;
                Step::Query { point: q.starts_with("qp"), rate }
            }
            _ => {
                return Err(format!(
                    "unknown step '{s}'; steps are l.i0, l.x, l.i1, l.i2, cleanup, qrN and qpN (N a rate of --rates), \
                     or all, load, queries"
                ));
            }
        })
    }
}

impl From<Step> for String {
    fn from(s: Step) -> String {
        s.name()
    }
}

impl TryFrom<String> for Step {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        s.parse()
    }
}

/// Everything a run needs besides where to connect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Clients; each has an inserter, a deleter and (in query steps) a query connection.
    pub clients: u32,
    /// All clients share table `pi1` instead of one table each (`only1t`).
    pub shared_table: bool,
    /// Rows inserted per client by l.i0.
    pub rows_load: u64,
    /// Rows inserted (and deleted) per client by l.i1.
    pub rows_write1: u64,
    /// Rows inserted (and deleted) per client by l.i2.
    pub rows_write2: u64,
    /// Rows inserted per client by l.x before the indexes are built.
    pub rows_index: u64,
    /// Seconds per query step at the target rate: each client inserts `query_seconds × rate` rows.
    pub query_seconds: i64,
    /// Target inserts/s per client of the query-step pairs (qrN, qpN).
    pub rates: Vec<i64>,
    /// Rows per INSERT statement in l.i0 and l.x.
    pub rpc_load: i64,
    /// Rows per statement in l.i1.
    pub rpc_write1: i64,
    /// Rows per statement in l.i2.
    pub rpc_write2: i64,
    /// Rows per statement of the background writes in query steps.
    pub rpc_query: i64,
    /// The steps to run (always in the reference's order); empty means all.
    pub steps: Vec<Step>,
    /// Base seed; each (step, client) pair derives its own from it.
    pub seed: u64,
    /// Seconds the cleanup waits; `None`: 60 + 1 per million rows loaded by l.i0, at most 1200.
    pub cleanup_seconds: Option<i64>,
    /// Storage engine of the tables.
    pub engine: String,
    /// Text appended to CREATE TABLE after `ENGINE=…`.
    pub engine_options: String,
    /// Shortest `data` value.
    pub data_length_min: i64,
    /// Longest `data` value.
    pub data_length_max: i64,
    /// Percent of 3/4 of the `data` length that is random (the rest is the letter `a`).
    pub data_random_pct: i64,
    /// Distinct `cashregisterid` values.
    pub cashregisters: i64,
    /// Distinct `productid` values.
    pub products: i64,
    /// Distinct `customerid` values.
    pub customers: i64,
    /// Distinct `price` values.
    pub max_price: i64,
    /// LIMIT of the range queries and ids per point query.
    pub rows_per_query: i64,
    /// Re-read `min(transactionid)` every this many delete statements.
    pub resync_get_min: i64,
    /// Add FORCE INDEX to the range queries (MySQL and MariaDB both support it).
    pub force_index: bool,
    /// Count the rows of every table after each write step (`SELECT COUNT(*)`), outside the measured time.
    pub count_rows: bool,
    /// Seconds between progress lines (and the per-interval series); at least 1.
    pub report_interval: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clients: 1,
            shared_table: false,
            rows_load: 10_000_000,
            rows_write1: 16_000_000,
            rows_write2: 4_000_000,
            rows_index: 100,
            query_seconds: 1800,
            rates: vec![100, 500, 1000],
            rpc_load: 100,
            rpc_write1: 50,
            rpc_write2: 5,
            rpc_query: 50,
            steps: Vec::new(),
            seed: 1,
            cleanup_seconds: None,
            engine: "innodb".into(),
            engine_options: String::new(),
            data_length_min: 10,
            data_length_max: 20,
            data_random_pct: 50,
            cashregisters: 1000,
            products: 10_000,
            customers: 100_000,
            max_price: 500,
            rows_per_query: 10,
            resync_get_min: 1000,
            force_index: true,
            count_rows: false,
            report_interval: 1,
        }
    }
}

/// The largest target rate per client (so that `query_seconds × rate` cannot overflow).
const MAX_RATE: i64 = 100_000_000;

impl Options {
    /// Checks every value; the error names the flag and says what is allowed.
    pub fn validate(&self) -> Result<()> {
        let at_least = |flag: &str, v: i64, min: i64, what: &str| -> Result<()> {
            if v < min { Err(Error::option(flag, format!("{v} is out of range; {what}"))) } else { Ok(()) }
        };
        if self.clients == 0 || self.clients > 1024 {
            return Err(Error::option("--clients", format!("{} is out of range; use 1 to 1024", self.clients)));
        }
        for (flag, v) in [
            ("--rpc-load", self.rpc_load),
            ("--rpc-write1", self.rpc_write1),
            ("--rpc-write2", self.rpc_write2),
            ("--rpc-query", self.rpc_query),
        ] {
            at_least(flag, v, 1, "rows per statement must be at least 1")?;
            if v > 100_000 {
                return Err(Error::option(flag, format!("{v} rows per statement is too many; use at most 100000")));
            }
        }
        at_least("--query-seconds", self.query_seconds, 1, "seconds per query step must be at least 1")?;
        if self.rates.is_empty() {
            return Err(Error::option("--rates", "no rates given; list inserts/s per client, e.g. 100,500,1000"));
        }
        for &r in &self.rates {
            at_least("--rates", r, 1, "a target rate must be at least 1 insert/s per client")?;
            if r > MAX_RATE {
                return Err(Error::option("--rates", format!("{r} inserts/s is out of range; use at most {MAX_RATE}")));
            }
        }
        if let Some(c) = self.cleanup_seconds {
            at_least("--cleanup-seconds", c, 0, "the cleanup wait cannot be negative")?;
        }
        at_least("--data-length-min", self.data_length_min, 1, "use at least 1")?;
        if self.data_length_max < self.data_length_min || self.data_length_max > 4000 {
            return Err(Error::option(
                "--data-length-max",
                format!("{} is out of range; use {} to 4000", self.data_length_max, self.data_length_min),
            ));
        }
        if !(0..=100).contains(&self.data_random_pct) {
            return Err(Error::option(
                "--data-random-pct",
                format!("{} is not a percent (0-100)", self.data_random_pct),
            ));
        }
        for (flag, v) in [
            ("--cashregisters", self.cashregisters),
            ("--products", self.products),
            ("--customers", self.customers),
            ("--max-price", self.max_price),
        ] {
            at_least(flag, v, 1, "use at least 1")?;
            if v > i64::from(i32::MAX) {
                return Err(Error::option(flag, format!("{v} does not fit the INT column; use at most {}", i32::MAX)));
            }
        }
        at_least("--rows-per-query", self.rows_per_query, 1, "use at least 1")?;
        at_least("--resync-get-min", self.resync_get_min, 1, "use at least 1")?;
        at_least("--report-interval", self.report_interval, 1, "use at least 1 s")?;
        if self.engine.is_empty() || !self.engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Error::option("--engine", format!("'{}' is not a storage engine name", self.engine)));
        }
        for s in &self.steps {
            if let Step::Query { rate, .. } = s
                && !self.rates.contains(&i64::from(*rate))
            {
                let list: Vec<String> = self.rates.iter().map(i64::to_string).collect();
                return Err(Error::option(
                    "--steps",
                    format!(
                        "step {s} needs rate {rate} in --rates (now {}); add it or pick another step",
                        list.join(",")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every step these options define, in order: the four load steps, the cleanup, then qrN and qpN per
    /// rate in the order of [`Options::rates`].
    pub fn all_steps(&self) -> Vec<Step> {
        let mut v = vec![Step::Load, Step::Index, Step::Write1, Step::Write2, Step::Cleanup];
        for &r in &self.rates {
            let rate = r.clamp(1, MAX_RATE) as u32;
            v.push(Step::Query { point: false, rate });
            v.push(Step::Query { point: true, rate });
        }
        v
    }

    /// The steps to run, in the reference's order (rates in the order given, range before point).
    pub fn selected_steps(&self) -> Vec<Step> {
        let all = self.all_steps();
        if self.steps.is_empty() {
            return all;
        }
        all.into_iter().filter(|s| self.steps.contains(s)).collect()
    }

    /// A rough estimate of `step`'s wall time with these options (an experiment's plan and the banner
    /// of `versus ibench` use it).
    pub fn step_estimate(&self, step: Step) -> std::time::Duration {
        let clients = u64::from(self.clients.max(1));
        let rows = self.rows_for(step) * clients;
        let first_query = self.selected_steps().into_iter().find(|s| s.is_query());
        std::time::Duration::from_secs(match step.kind() {
            StepKind::Load => 2 + rows / 50_000,
            StepKind::Index => 2 + self.rows_load * clients / 200_000,
            StepKind::Write => 2 + rows / 10_000,
            StepKind::Cleanup => self.cleanup_wait(),
            StepKind::Query => {
                self.query_seconds.max(1) as u64 + if Some(step) == first_query { self.cleanup_wait() } else { 0 }
            }
        })
    }

    /// [`Options::step_estimate`] of every selected step.
    pub fn estimate(&self) -> std::time::Duration {
        self.selected_steps().into_iter().map(|s| self.step_estimate(s)).sum()
    }

    /// Rows per client a step inserts.
    pub fn rows_for(&self, step: Step) -> u64 {
        match step {
            Step::Load => self.rows_load,
            Step::Index => self.rows_index,
            Step::Write1 => self.rows_write1,
            Step::Write2 => self.rows_write2,
            Step::Cleanup => 0,
            Step::Query { rate, .. } => self.query_seconds.max(0) as u64 * u64::from(rate),
        }
    }

    /// Rows per statement of a step (lowered to the rate when the rate is smaller, as the reference does).
    pub fn rpc_for(&self, step: Step) -> u64 {
        let rpc = match step {
            Step::Load | Step::Index | Step::Cleanup => self.rpc_load,
            Step::Write1 => self.rpc_write1,
            Step::Write2 => self.rpc_write2,
            Step::Query { .. } => self.rpc_query,
        }
        .max(1) as u64;
        match step {
            Step::Query { rate, .. } => rpc.min(u64::from(rate).max(1)),
            _ => rpc,
        }
    }

    /// Target inserts/s of all clients together in a query step.
    pub fn target_ips(&self, step: Step) -> Option<f64> {
        match step {
            Step::Query { rate, .. } => Some(f64::from(rate) * f64::from(self.clients)),
            _ => None,
        }
    }

    /// Seconds the cleanup waits.
    pub fn cleanup_wait(&self) -> u64 {
        match self.cleanup_seconds {
            Some(s) => s.max(0) as u64,
            None => (60 + self.rows_load * u64::from(self.clients) / 1_000_000).min(1200),
        }
    }

    /// The table names: `pi1 … piN`, or `pi1` alone when shared.
    pub fn tables(&self) -> Vec<String> {
        let n = if self.shared_table { 1 } else { self.clients };
        (1..=n).map(|i| format!("pi{i}")).collect()
    }

    /// The table client `client` (from 0) writes and queries.
    pub fn table_of(&self, client: u32) -> String {
        if self.shared_table { "pi1".into() } else { format!("pi{}", client + 1) }
    }

    /// The seed of `client` in `step`: fixed for a given base seed, so that two servers see the same key
    /// stream, and different for every step and client.
    pub fn seed_for(&self, step: Step, client: u32) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.seed;
        for b in step.name().bytes().chain(client.to_le_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // splitmix64 finaliser, so that neighbouring clients get unrelated streams
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

/// Parses a `--steps` list: step names, `all`, `load` (l.i0 … l.i2) and `queries` (every query step of
/// `rates`), comma-separated.
pub fn parse_steps(list: &str, rates: &[i64]) -> Result<Vec<Step>> {
    let mut out = Vec::new();
    let mut push = |s: Step| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "all" => {
                for s in (Options { rates: rates.to_vec(), ..Options::default() }).all_steps() {
                    push(s);
                }
            }
            "load" => [Step::Load, Step::Index, Step::Write1, Step::Write2].into_iter().for_each(&mut push),
            "queries" => {
                for &r in rates {
                    let rate = r.clamp(1, MAX_RATE) as u32;
                    push(Step::Query { point: false, rate });
                    push(Step::Query { point: true, rate });
                }
            }
            _ => push(word.parse::<Step>().map_err(|m| Error::option("--steps", m))?),
        }
    }
    if out.is_empty() {
        return Err(Error::option("--steps", "no steps given; write e.g. all, or l.i0,l.x,qr100"));
    }
    // The order they run in: the reference's, query steps by the order of --rates.
    let key = |s: &Step| match *s {
        Step::Query { point, rate } => {
            (5, rates.iter().position(|&r| r == i64::from(rate)).unwrap_or(usize::MAX), rate, point)
        }
        s => (s.rank().0, 0, 0, false),
    };
    if let Some(w) = out.windows(2).find(|w| key(&w[0]) > key(&w[1])) {
        let mut sorted = out.clone();
        sorted.sort_by_key(key);
        let list: Vec<String> = sorted.into_iter().map(Step::name).collect();
        return Err(Error::option(
            "--steps",
            format!(
                "{} runs before {}, not after; list the steps in the order they run: {} (l.i0, l.x, l.i1, l.i2, cleanup, then qrN and qpN for each rate in the order of --rates)",
                w[1],
                w[0],
                list.join(",")
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_of_the_defaults_is_hours_and_adds_up_the_steps() {
        let o = Options::default();
        let total = o.estimate();
        assert!(total > std::time::Duration::from_secs(3 * 3600), "{total:?}");
        let sum: std::time::Duration = o.selected_steps().into_iter().map(|s| o.step_estimate(s)).sum();
        assert_eq!(total, sum);
        // The README's sizes: minutes.
        let small = Options { rows_load: 200_000, rows_write1: 20_000, rows_write2: 5_000, query_seconds: 30, ..o };
        let t = small.estimate();
        assert!(t > std::time::Duration::from_secs(120) && t < std::time::Duration::from_secs(600), "{t:?}");
    }

    #[test]
    fn step_names_round_trip() {
        let o = Options::default();
        let names: Vec<String> = o.all_steps().iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            ["l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
        );
        for s in o.all_steps() {
            assert_eq!(s.name().parse::<Step>(), Ok(s));
        }
        assert_eq!("qr100.L1".parse::<Step>(), Ok(Step::Query { point: false, rate: 100 }));
        assert!("qx5".parse::<Step>().unwrap_err().contains("unknown step"));
        assert!("qrfast".parse::<Step>().unwrap_err().contains("not a step"));
    }

    #[test]
    fn steps_out_of_their_running_order_are_refused() {
        let s = parse_steps("l.i0, l.x ,qr100, qp100", &[100]).unwrap();
        let names: Vec<String> = s.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["l.i0", "l.x", "qr100", "qp100"]);
        let e = parse_steps("l.i1,l.i0", &[100]).unwrap_err().to_string();
        assert_eq!(
            e,
            "--steps: l.i0 runs before l.i1, not after; list the steps in the order they run: l.i0,l.i1 (l.i0, l.x, l.i1, l.i2, cleanup, then qrN and qpN for each rate in the order of --rates)"
        );
        assert!(parse_steps("qp100,qr100", &[100]).unwrap_err().to_string().contains(": qr100,qp100 ("));
        assert!(parse_steps("qr100,qr500", &[500, 100]).unwrap_err().to_string().contains(": qr500,qr100 ("));
        assert!(parse_steps("l.i1,load", &[100]).is_err(), "a group after its own step");
        assert_eq!(parse_steps("qr500,qr100", &[500, 100]).unwrap().len(), 2, "the order of --rates");
        let s = parse_steps("load,queries", &[7]).unwrap();
        assert_eq!(s.len(), 6);
        assert!(parse_steps(" , ", &[1]).is_err());
        let o = Options { steps: s, rates: vec![7], ..Options::default() };
        assert_eq!(o.selected_steps().len(), 6, "cleanup is not selected unless listed");
    }

    #[test]
    fn out_of_range_values_name_the_flag() {
        let cases: Vec<(Options, &str)> = vec![
            (Options { rpc_load: 0, ..Options::default() }, "--rpc-load: 0 is out of range"),
            (Options { rates: vec![100, 0], ..Options::default() }, "--rates: 0 is out of range"),
            (Options { query_seconds: -5, ..Options::default() }, "--query-seconds: -5 is out of range"),
            (Options { clients: 0, ..Options::default() }, "--clients"),
            (Options { cleanup_seconds: Some(-1), ..Options::default() }, "--cleanup-seconds"),
            (Options { data_length_max: 5, ..Options::default() }, "--data-length-max"),
            (
                Options { steps: vec![Step::Query { point: true, rate: 7 }], ..Options::default() },
                "step qp7 needs rate 7",
            ),
        ];
        for (o, want) in cases {
            let e = o.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(!e.contains('\n'));
        }
        Options::default().validate().unwrap();
    }

    #[test]
    fn sizes_rates_and_seeds() {
        let o = Options { clients: 4, query_seconds: 20, rows_load: 3_000_000, ..Options::default() };
        let qr = Step::Query { point: false, rate: 100 };
        assert_eq!(o.rows_for(qr), 2000);
        assert_eq!(o.target_ips(qr), Some(400.0));
        assert_eq!(o.rpc_for(Step::Write2), 5);
        assert_eq!(o.rpc_for(Step::Query { point: true, rate: 20 }), 20, "rpc is lowered to the rate");
        assert_eq!(o.cleanup_wait(), 72);
        assert_eq!(o.tables(), ["pi1", "pi2", "pi3", "pi4"]);
        assert_eq!(Options { shared_table: true, ..o.clone() }.table_of(3), "pi1");
        assert_eq!(o.seed_for(Step::Load, 0), o.seed_for(Step::Load, 0));
        assert_ne!(o.seed_for(Step::Load, 0), o.seed_for(Step::Load, 1));
        assert_ne!(o.seed_for(Step::Load, 0), o.seed_for(Step::Write1, 0));
        assert_ne!(o.seed_for(Step::Load, 0), Options { seed: 2, ..o.clone() }.seed_for(Step::Load, 0));
    }
}
