//! The random distributions of pgbench's `\set` functions, with pgbench's definitions:
//!
//! - `random(lb, ub)`: every integer of [lb, ub] equally likely.
//! - `random_exponential(lb, ub, p)`: density ∝ exp(−p·(x − lb)/(ub − lb + 1)), drawn by inverting the
//!   truncated exponential's distribution function; p > 0.
//! - `random_gaussian(lb, ub, p)`: a standard normal truncated to [−p, p) and mapped linearly onto the
//!   range, so the middle is most likely; p ≥ 2.
//! - `random_zipfian(lb, ub, s)`: P(lb + k − 1) ∝ k^−s for k = 1 … ub − lb + 1, drawn by Devroye's
//!   rejection method (Non-Uniform Random Variate Generation, 1986, pp. 550–551); 1.001 ≤ s ≤ 1000.

use rand::{Rng as _, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The smallest parameter of `random_gaussian` (pgbench's MIN_GAUSSIAN_PARAM).
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// The smallest parameter of `random_zipfian` (pgbench's MIN_ZIPFIAN_PARAM).
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
/// The largest parameter of `random_zipfian` (pgbench's MAX_ZIPFIAN_PARAM).
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// A source of the four distributions.
pub trait Draw {
    /// Uniform in [lb, ub].
    fn uniform(&mut self, lb: i64, ub: i64) -> i64;
    /// Truncated Gaussian over [lb, ub].
    fn gaussian(&mut self, lb: i64, ub: i64, p: f64) -> i64;
    /// Truncated exponential over [lb, ub].
    fn exponential(&mut self, lb: i64, ub: i64, p: f64) -> i64;
    /// Bounded Zipfian over [lb, ub].
    fn zipfian(&mut self, lb: i64, ub: i64, s: f64) -> i64;
}

/// A seeded generator (one per client thread).
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator from `seed`.
    pub fn seeded(seed: u64) -> Rng {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n.max(1))
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `lb` plus the whole part of `width × r` for r in [0, 1), kept inside the range.
    fn scale(lb: i64, ub: i64, r: f64) -> i64 {
        let width = (ub as i128 - lb as i128 + 1) as f64;
        let off = (width * r) as i128;
        (lb as i128 + off).min(ub as i128) as i64
    }
}

impl Draw for Rng {
    fn uniform(&mut self, lb: i64, ub: i64) -> i64 {
        self.0.random_range(lb..=ub)
    }

    fn gaussian(&mut self, lb: i64, ub: i64, p: f64) -> i64 {
        let stdev = loop {
            // Box–Muller: u1 in (0, 1] keeps the logarithm finite.
            let u1 = 1.0 - self.unit();
            let u2 = self.unit();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).sin();
            if (-p..p).contains(&z) {
                break z;
            }
        };
        Rng::scale(lb, ub, (stdev + p) / (2.0 * p))
    }

    fn exponential(&mut self, lb: i64, ub: i64, p: f64) -> i64 {
        let cut = (-p).exp();
        let u = 1.0 - self.unit();
        let r = -(cut + (1.0 - cut) * u).ln() / p;
        Rng::scale(lb, ub, r)
    }

    fn zipfian(&mut self, lb: i64, ub: i64, s: f64) -> i64 {
        let n = (ub as i128 - lb as i128 + 1) as f64;
        let b = 2f64.powf(s - 1.0);
        let x = loop {
            let u = 1.0 - self.unit();
            let v = self.unit();
            let x = u.powf(-1.0 / (s - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(s - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n {
                break x;
            }
        };
        (lb as i128 + x as i128 - 1) as i64
    }
}

/// The probability of every value of a distribution over [lb, ub] (for tests and checks).
pub fn probabilities(f: &str, lb: i64, ub: i64, p: f64) -> Vec<f64> {
    let n = (ub - lb + 1) as usize;
    let w = n as f64;
    match f {
        "gaussian" => {
            let phi = crate::stats::normal_cdf;
            let total = 2.0 * phi(p) - 1.0;
            (0..n)
                .map(|k| (phi(2.0 * p * (k as f64 + 1.0) / w - p) - phi(2.0 * p * k as f64 / w - p)) / total)
                .collect()
        }
        "exponential" => {
            let total = 1.0 - (-p).exp();
            (0..n).map(|k| ((-p * k as f64 / w).exp() - (-p * (k as f64 + 1.0) / w).exp()) / total).collect()
        }
        "zipfian" => {
            let h: f64 = (1..=n).map(|k| (k as f64).powf(-p)).sum();
            (1..=n).map(|k| (k as f64).powf(-p) / h).collect()
        }
        _ => vec![1.0 / w; n],
    }
}

/// Pearson's chi-square statistic of `counts` against the probabilities `probs`, and its critical value
/// at 1 % for `counts.len() − 1` degrees of freedom (the Wilson–Hilferty approximation): a sample of
/// the distribution stays below it 99 % of the time.
pub fn chi_square(counts: &[u64], probs: &[f64]) -> (f64, f64) {
    let total: u64 = counts.iter().sum();
    let x: f64 = counts
        .iter()
        .zip(probs)
        .map(|(&c, &p)| {
            let e = p * total as f64;
            (c as f64 - e).powi(2) / e
        })
        .sum();
    let k = (counts.len() - 1) as f64;
    let z = 2.326; // the 99th percentile of the standard normal
    let critical = k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
    (x, critical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draws_follow_pgbench_s_distributions() {
        let (lb, ub) = (11, 30);
        for (name, p) in [("uniform", 0.0), ("gaussian", 2.5), ("exponential", 3.0), ("zipfian", 1.3)] {
            let mut rng = Rng::seeded(42);
            let mut counts = vec![0u64; (ub - lb + 1) as usize];
            for _ in 0..200_000 {
                let v = match name {
                    "gaussian" => rng.gaussian(lb, ub, p),
                    "exponential" => rng.exponential(lb, ub, p),
                    "zipfian" => rng.zipfian(lb, ub, p),
                    _ => rng.uniform(lb, ub),
                };
                assert!((lb..=ub).contains(&v), "{name}: {v}");
                counts[(v - lb) as usize] += 1;
            }
            let probs = probabilities(name, lb, ub, p);
            assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{name}");
            let (x, critical) = chi_square(&counts, &probs);
            assert!(x < critical, "{name}: chi-square {x:.1} ≥ {critical:.1}; counts {counts:?}");
        }
    }

    #[test]
    fn a_wrong_distribution_fails_the_check() {
        let mut rng = Rng::seeded(7);
        let mut counts = vec![0u64; 20];
        for _ in 0..200_000 {
            counts[(rng.gaussian(0, 19, 2.5)) as usize] += 1;
        }
        let (x, critical) = chi_square(&counts, &probabilities("uniform", 0, 19, 0.0));
        assert!(x > critical, "a Gaussian is not uniform: {x} vs {critical}");
    }
}
