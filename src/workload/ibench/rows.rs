//! Row generation and the write statements, as the reference draws them: uniform `cashregisterid`,
//! `productid`, `customerid` and `price`, one `dateandtime` per statement, and a `data` string that is
//! mostly the letter `a` with a random tail cut from one buffer of base64 text.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use super::options::Options;
use crate::workload::sysbench::rng::Xoroshiro;

/// Size of the random text buffer the `data` tails are cut from (the reference's 4 MiB).
pub const DATA_BUFFER: usize = 4 << 20;

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Draws rows and builds the INSERT and DELETE statements of one client in one step.
pub struct RowGen {
    rng: Xoroshiro,
    buffer: Vec<u8>,
    cashregisters: u64,
    products: u64,
    customers: u64,
    max_price: u64,
    len_min: u64,
    len_max: u64,
    random_pct: u64,
    clock: Box<dyn FnMut() -> u64 + Send>,
    stamp: (u64, String),
}

/// Uniform integer in `[0, n)` from 64 random bits (Lemire's multiply-shift; the bias is below 2^-32).
#[inline]
pub fn below(rng: &mut Xoroshiro, n: u64) -> u64 {
    (((rng.next_u64() >> 32) * n) >> 32).min(n.saturating_sub(1))
}

fn wall_clock() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `YYYY-MM-DD hh:mm:ss` (UTC) of a Unix time, as a DATETIME literal.
pub fn datetime(unix: u64) -> String {
    crate::clock::utc_datetime(unix as i64)
}

impl RowGen {
    /// A generator seeded with `seed` for the value ranges of `o`, stamping rows with the wall clock.
    pub fn new(o: &Options, seed: u64) -> Self {
        Self::with_clock(o, seed, Box::new(wall_clock))
    }

    /// The same with another clock (Unix seconds), for tests.
    pub fn with_clock(o: &Options, seed: u64, clock: Box<dyn FnMut() -> u64 + Send>) -> Self {
        let mut rng = Xoroshiro::seeded(seed);
        let mut buffer = Vec::with_capacity(DATA_BUFFER);
        while buffer.len() < DATA_BUFFER {
            let mut bits = rng.next_u64();
            for _ in 0..10 {
                buffer.push(BASE64[(bits & 63) as usize]);
                bits >>= 6;
            }
        }
        buffer.truncate(DATA_BUFFER);
        RowGen {
            rng,
            buffer,
            cashregisters: o.cashregisters.max(1) as u64,
            products: o.products.max(1) as u64,
            customers: o.customers.max(1) as u64,
            max_price: o.max_price.max(1) as u64,
            len_min: o.data_length_min.max(1) as u64,
            len_max: o.data_length_max.max(o.data_length_min).max(1) as u64,
            random_pct: o.data_random_pct.clamp(0, 100) as u64,
            clock,
            stamp: (u64::MAX, String::new()),
        }
    }

    /// The random generator (for the delete and query parameters drawn by the same client).
    pub fn rng(&mut self) -> &mut Xoroshiro {
        &mut self.rng
    }

    /// Appends one `data` value (without quotes): `L − r` letters `a`, then `r` random characters,
    /// with `L` uniform in [min, max] and `r = ⌊L × 0.75 × pct / 100⌋`.
    pub fn push_data(&mut self, out: &mut String) {
        let len = self.len_min + below(&mut self.rng, self.len_max - self.len_min + 1);
        let random = (len as f64 * 0.75 * self.random_pct as f64 / 100.0) as u64;
        let random = random.min(len) as usize;
        for _ in 0..(len as usize - random) {
            out.push('a');
        }
        let at = below(&mut self.rng, (self.buffer.len() - random) as u64 + 1) as usize;
        // The buffer is ASCII, so any byte range is valid UTF-8.
        out.push_str(std::str::from_utf8(&self.buffer[at..at + random]).unwrap_or_default());
    }

    /// Writes a multi-row INSERT of `rows` rows into `table` into `out` (cleared first). Every row gets
    /// the same `dateandtime`: the clock's second when the statement is made.
    pub fn insert(&mut self, table: &str, rows: u64, out: &mut String) {
        out.clear();
        let now = (self.clock)();
        if self.stamp.0 != now {
            self.stamp = (now, datetime(now));
        }
        let _ = write!(out, "INSERT INTO {table} (dateandtime,cashregisterid,customerid,productid,price,data) VALUES ");
        for i in 0..rows {
            if i > 0 {
                out.push(',');
            }
            let cash = below(&mut self.rng, self.cashregisters);
            let product = below(&mut self.rng, self.products);
            let customer = below(&mut self.rng, self.customers);
            let price = below(&mut self.rng, self.max_price);
            let _ = write!(out, "('{}',{cash},{customer},{product},{price}.00,'", self.stamp.1);
            self.push_data(out);
            out.push_str("')");
        }
    }
}

/// The delete of the reference: the `rows` oldest rows at or above `min`.
pub fn delete(table: &str, min: i64, rows: u64) -> String {
    format!("DELETE FROM {table} WHERE transactionid >= {min} ORDER BY transactionid ASC LIMIT {rows}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rowgen(seed: u64) -> RowGen {
        RowGen::with_clock(&Options::default(), seed, Box::new(|| 1_780_000_000))
    }

    #[test]
    fn datetimes_are_civil_utc() {
        assert_eq!(datetime(0), "1970-01-01 00:00:00");
        assert_eq!(datetime(951_782_400 + 3661), "2000-02-29 01:01:01");
        assert_eq!(datetime(1_780_000_000), "2026-05-28 20:26:40");
    }

    #[test]
    fn data_is_filler_then_random_tail_within_the_length_bounds() {
        let mut g = rowgen(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let mut s = String::new();
            g.push_data(&mut s);
            let len = s.len();
            assert!((10..=20).contains(&len), "{s}");
            let random = (len as f64 * 0.375) as usize;
            assert!(s[..len - random].bytes().all(|b| b == b'a'), "{s}");
            assert!(s.bytes().all(|b| BASE64.contains(&b)));
            seen.insert(len);
        }
        assert_eq!(seen.len(), 11, "every length 10..=20 occurs");
    }

    #[test]
    fn insert_statements_have_the_reference_shape_and_ranges() {
        let mut g = rowgen(1);
        let mut sql = String::new();
        g.insert("pi1", 3, &mut sql);
        let prefix = "INSERT INTO pi1 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES ";
        assert!(sql.starts_with(prefix), "{sql}");
        let tuples: Vec<&str> = sql[prefix.len()..].split("),(").collect();
        assert_eq!(tuples.len(), 3);
        for t in tuples {
            let f: Vec<&str> = t.trim_matches(|c| c == '(' || c == ')').split(',').collect();
            assert_eq!(f[0], "'2026-05-28 20:26:40'");
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            assert!(n(1) < 1000.0 && n(2) < 100_000.0 && n(3) < 10_000.0 && n(4) < 500.0);
            assert!(f[4].ends_with(".00"), "price as %.2f: {}", f[4]);
        }
        // The same seed gives the same statement; another seed another.
        let mut again = String::new();
        rowgen(1).insert("pi1", 3, &mut again);
        assert_eq!(sql, again);
        rowgen(2).insert("pi1", 3, &mut again);
        assert_ne!(sql, again);
    }

    #[test]
    fn values_cover_their_ranges_uniformly() {
        let mut r = Xoroshiro::seeded(9);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[below(&mut r, 10) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
        assert_eq!(
            delete("pi2", 7, 50),
            "DELETE FROM pi2 WHERE transactionid >= 7 ORDER BY transactionid ASC LIMIT 50"
        );
    }
}
