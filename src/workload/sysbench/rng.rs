//! Random numbers as sysbench draws them: a per-thread xoroshiro128+ generator, the `--rand-type`
//! distributions over `[a, b]`, the global unique-id permutation and the `#`-template strings.

use std::sync::atomic::{AtomicU32, Ordering};

use super::options::{RandOptions, RandType};

/// xoroshiro128+ state, one per thread.
#[derive(Debug, Clone)]
pub struct Xoroshiro {
    s: [u64; 2],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Xoroshiro {
    /// A generator whose state is derived from `seed` (any value, 0 included).
    pub fn seeded(seed: u64) -> Self {
        let mut x = seed;
        let s = [splitmix(&mut x), splitmix(&mut x)];
        Xoroshiro { s: if s == [0, 0] { [1, 0] } else { s } }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, mut s1] = self.s;
        let r = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s = [s0.rotate_left(24) ^ s1 ^ (s1 << 16), s1.rotate_left(37)];
        r
    }

    /// Uniform double in [0, 1) from the top 52 bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        f64::from_bits(0x3FF0_0000_0000_0000 | (self.next_u64() >> 12)) - 1.0
    }

    /// Uniform integer in `[a, b]`.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let x = self.next_f64() * span(a, b) as f64;
        // SAFETY: next_f64 is in [0, 1 - 2^-52] and the span is an integer below 2^32, so the product is
        // finite, at least 0 and, rounded to nearest, still below the span: its truncation fits a u32.
        // (A plain `as` adds a clamp per draw, 4 of the ~30 instructions per character of a c/pad string.)
        a.wrapping_add(unsafe { x.to_int_unchecked::<u32>() })
    }
}

/// `b - a + 1` in sysbench's 32-bit unsigned arithmetic: an empty range (`--table-size=0` gives [1, 0])
/// wraps as it does in sysbench, so such runs draw the same out-of-range ids and fail the same way.
#[inline]
fn span(a: u32, b: u32) -> u32 {
    b.wrapping_sub(a).wrapping_add(1)
}

/// Zipf parameters that depend only on the exponent.
#[derive(Debug, Clone, Copy)]
struct Zipf {
    e: f64,
    s: f64,
    h_x1: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.ln_1p() / x } else { 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)) }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.exp_m1() / x } else { 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x)) }
}

fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral(x: f64, e: f64) -> f64 {
    let lx = x.ln();
    helper2((1.0 - e) * lx) * lx
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (helper1(t) * x).exp()
}

impl Zipf {
    fn new(e: f64) -> Self {
        Zipf { e, s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e), h_x1: h_integral(1.5, e) - 1.0 }
    }

    /// Rejection-inversion sampling (Hörmann & Derflinger) of k in [1, n] with P(k) ∝ k^-e.
    fn sample(&self, rng: &mut Xoroshiro, n: u32) -> u32 {
        let e = self.e;
        let h_n = h_integral(n as f64 + 0.5, e);
        loop {
            let u = h_n + rng.next_f64() * (self.h_x1 - h_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u32).clamp(1, n.max(1));
            if k as f64 - x <= self.s || u >= h_integral(k as f64 + 0.5, e) - h(k as f64, e) {
                return k;
            }
        }
    }
}

/// A thread's random source: the generator plus the `--rand-type` distribution.
#[derive(Debug, Clone)]
pub struct Random {
    /// The generator.
    pub rng: Xoroshiro,
    kind: RandType,
    iter: u32,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf: Zipf,
}

impl Random {
    /// A source for `opts`, seeded with `seed`.
    pub fn new(opts: &RandOptions, seed: u64) -> Self {
        let iter = opts.spec_iter.max(1);
        Random {
            rng: Xoroshiro::seeded(seed),
            kind: opts.rand_type,
            iter,
            iter_mult: 1.0 / iter as f64,
            pct_mult: opts.spec_pct as f64 / 100.0,
            pct_2_mult: opts.spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - opts.spec_res as f64),
            pareto_power: opts.pareto_h.ln() / (1.0 - opts.pareto_h).ln(),
            zipf: Zipf::new(opts.zipfian_exp),
        }
    }

    /// Uniform in `[a, b]` whatever `--rand-type` says (table choice, template digits).
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        self.rng.uniform(a, b)
    }

    /// A value in `[a, b]` from the `--rand-type` distribution (`sysbench.rand.default`).
    #[unsafe(link_section = ".text.hot.versus")]
    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => self.rng.uniform(a, b),
            RandType::Gaussian => {
                let t = span(a, b) as f64;
                let sum: f64 = (0..self.iter).map(|_| self.rng.next_f64() * t).sum();
                a.wrapping_add((sum * self.iter_mult) as u32)
            }
            RandType::Special => self.special(a, b),
            RandType::Pareto => {
                let t = span(a, b) as f64;
                a.wrapping_add((t * self.rng.next_f64().powf(self.pareto_power)) as u32)
            }
            RandType::Zipfian => {
                let n = span(a, b);
                a.wrapping_add(self.zipf.sample(&mut self.rng, n)).wrapping_sub(1)
            }
        }
    }

    /// A value in `[a, b]` from distribution `kind`, whatever `--rand-type` says (`sysbench.rand.gaussian`
    /// and its siblings in Lua scripts).
    pub fn draw(&mut self, kind: RandType, a: u32, b: u32) -> u32 {
        let own = std::mem::replace(&mut self.kind, kind);
        let v = self.default(a, b);
        self.kind = own;
        v
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn special(&mut self, a: u32, b: u32) -> u32 {
        let t = b.wrapping_sub(a) as f64;
        let rnd = self.rng.next_f64();
        if rnd * t * self.res_mult < t {
            let sum: f64 = (0..self.iter).map(|_| self.rng.next_f64()).sum();
            return a.wrapping_add((sum * t * self.iter_mult) as u32);
        }
        let d = t * self.pct_mult;
        let r = rnd * (d + 1.0) + t / 2.0 - t * self.pct_2_mult;
        a.wrapping_add(r as u32)
    }

    /// Fills `out` with `template`, every `#` replaced by a uniform digit and `@` by a letter.
    /// Works on bytes (only ASCII bytes are replaced, by ASCII bytes), with the generator in a local: a
    /// byte store may alias the generator's state, so drawing through `self` wrote the state back to
    /// memory after every character.
    #[unsafe(link_section = ".text.hot.versus")]
    pub fn fill_template(&mut self, template: &str, out: &mut String) {
        let mut rng = self.rng.clone();
        let mut b = std::mem::take(out).into_bytes();
        b.clear();
        b.extend(template.bytes().map(|c| match c {
            b'#' => b'0' + rng.uniform(0, 9) as u8,
            b'@' => b'a' + rng.uniform(0, 25) as u8,
            c => c,
        }));
        self.rng = rng;
        *out = String::from_utf8(b).expect("ASCII replaced by ASCII in a str stays UTF-8");
    }
}

/// The 119-character template of column `c`: 10 groups of 11 digits joined by dashes.
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// The 59-character template of column `pad`: 5 groups of 11 digits.
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

const PRIME: u32 = 4_294_967_291;

fn permute(x: u32) -> u32 {
    if x >= PRIME {
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 { residue } else { PRIME - residue }
}

/// sysbench's global unique sequence: a permutation of the 2³² values, safe to share between threads.
#[derive(Debug)]
pub struct Unique {
    index: AtomicU32,
    offset: u32,
}

impl Unique {
    /// A sequence whose index and offset are the first two draws from `seed`, as the runner makes its
    /// own (whose seeder goes on to seed the workers).
    pub fn seeded(seed: u64) -> Self {
        let mut rng = Xoroshiro::seeded(seed);
        Unique::new(rng.next_u64() as u32, rng.next_u64() as u32)
    }

    /// A sequence started from two seed words.
    pub fn new(index: u32, offset: u32) -> Self {
        Unique {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    /// The next value; no value repeats within 2³² draws.
    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(i).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(t: RandType) -> RandOptions {
        RandOptions { rand_type: t, spec_iter: 12, spec_pct: 1, spec_res: 75, seed: 0, pareto_h: 0.2, zipfian_exp: 0.8 }
    }

    fn draws(t: RandType, n: usize) -> Vec<u32> {
        let mut r = Random::new(&opts(t), 42);
        (0..n).map(|_| r.default(1, 10_000)).collect()
    }

    #[test]
    fn all_distributions_stay_in_range() {
        for t in [RandType::Uniform, RandType::Gaussian, RandType::Special, RandType::Pareto, RandType::Zipfian] {
            assert!(draws(t, 20_000).iter().all(|v| (1..=10_000).contains(v)), "{t:?}");
        }
    }

    #[test]
    fn an_empty_range_wraps_as_in_sysbench() {
        // [1, 0] is what --table-size=0 asks for: uniform gives 1 (its span wraps to 0), while special's
        // b - a wraps to 2^32 - 1, so its hot window lies past INT's maximum and the server rejects the ids.
        let mut u = Random::new(&opts(RandType::Uniform), 7);
        assert!((0..1000).all(|_| u.default(1, 0) == 1));
        let mut s = Random::new(&opts(RandType::Special), 7);
        let v: Vec<u32> = (0..1000).map(|_| s.default(1, 0)).collect();
        let past_int = v.iter().filter(|x| **x > i32::MAX as u32).count();
        assert!((600..900).contains(&past_int), "{past_int}");
    }

    #[test]
    fn special_puts_three_quarters_in_the_hot_window() {
        let v = draws(RandType::Special, 100_000);
        let hot = v.iter().filter(|x| (4975..=5051).contains(*x)).count() as f64 / v.len() as f64;
        assert!((0.74..0.78).contains(&hot), "{hot}");
    }

    #[test]
    fn pareto_favours_the_low_fifth() {
        let v = draws(RandType::Pareto, 100_000);
        let low = v.iter().filter(|x| **x <= 2000).count() as f64 / v.len() as f64;
        assert!((0.77..0.83).contains(&low), "{low}");
    }

    #[test]
    fn uniform_mean_and_gaussian_spread() {
        let u = draws(RandType::Uniform, 100_000);
        let mean = u.iter().map(|x| *x as f64).sum::<f64>() / u.len() as f64;
        assert!((mean - 5000.5).abs() < 60.0, "{mean}");
        let g = draws(RandType::Gaussian, 100_000);
        let sd = (g.iter().map(|x| (*x as f64 - 5000.0).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        assert!((sd - 10_000.0 / 12.0).abs() < 30.0, "{sd}");
    }

    #[test]
    fn zipfian_rank_one_is_most_frequent() {
        let v = draws(RandType::Zipfian, 100_000);
        let c1 = v.iter().filter(|x| **x == 1).count();
        let c2 = v.iter().filter(|x| **x == 2).count();
        let c10 = v.iter().filter(|x| **x == 10).count();
        assert!(c1 > c2 && c2 > c10, "{c1} {c2} {c10}");
        // P(1)/P(2) = 2^0.8 ≈ 1.74
        let ratio = c1 as f64 / c2 as f64;
        assert!((1.55..1.95).contains(&ratio), "{ratio}");
    }

    #[test]
    fn uniform_stays_in_range_at_the_extremes() {
        // The largest draw times the largest span, as uniform computes it, truncates below the span.
        let top = f64::from_bits(0x3FF0_0000_0000_0000 | (u64::MAX >> 12)) - 1.0;
        for s in [1u32, 2, 10, 26, 1 << 31, u32::MAX - 1, u32::MAX] {
            assert!(((top * s as f64) as u64) < s as u64, "{s}");
        }
        let mut r = Xoroshiro::seeded(3);
        for _ in 0..10_000 {
            assert!(r.uniform(0, u32::MAX - 1) < u32::MAX);
            assert!((5..=9).contains(&r.uniform(5, 9)));
        }
    }

    #[test]
    fn unique_does_not_repeat() {
        let u = Unique::new(1, 2);
        let mut v: Vec<u32> = (0..100_000).map(|_| u.next()).collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 100_000);
    }

    #[test]
    fn templates() {
        let mut r = Random::new(&opts(RandType::Uniform), 1);
        let mut s = String::new();
        r.fill_template(C_TEMPLATE, &mut s);
        assert_eq!(s.len(), 119);
        assert!(s.split('-').all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        r.fill_template(PAD_TEMPLATE, &mut s);
        assert_eq!(s.len(), 59);
        // The same draws as a character-by-character fill, also around a non-ASCII character.
        let template = "#é@-##@";
        let (mut a, mut b) = (Random::new(&opts(RandType::Uniform), 7), Random::new(&opts(RandType::Uniform), 7));
        a.fill_template(template, &mut s);
        let want: String = template
            .chars()
            .map(|c| match c {
                '#' => (b'0' + b.uniform(0, 9) as u8) as char,
                '@' => (b'a' + b.uniform(0, 25) as u8) as char,
                c => c,
            })
            .collect();
        assert_eq!(s, want);
        // And the generator is left where the character-by-character fill leaves it.
        assert_eq!(
            (0..8).map(|_| a.uniform(0, 1 << 30)).collect::<Vec<_>>(),
            (0..8).map(|_| b.uniform(0, 1 << 30)).collect::<Vec<_>>()
        );
    }
}
