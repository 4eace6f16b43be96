//! pgbench's hash and permutation functions, with pgbench's results (so a script ported from pgbench
//! touches the same keys): `hash` / `hash_murmur2` (MurmurHash2, 64-bit), `hash_fnv1a` (FNV-1a over the
//! value's 8 bytes, low byte first) and `permute(i, size, seed)`, a pseudorandom bijection of
//! [0, size) keyed by the seed (six rounds of an odd multiply, xor and rotate on the lower and upper
//! power-of-two windows, then a random offset, drawn from xoroshiro128** seeded through SplitMix64, as
//! PostgreSQL's pg_prng does).

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = MM2_MUL.wrapping_mul(8);
const MM2_ROT: u32 = 47;

/// MurmurHash2 of the 64-bit `val` with `seed` (pgbench's `hash` and `hash_murmur2`).
pub fn murmur2(val: i64, seed: i64) -> i64 {
    let mut k = (val as u64).wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    let mut h = (seed as u64) ^ MM2_MUL_TIMES_8;
    h ^= k;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h as i64
}

/// FNV-1a of the 8 bytes of `val`, low byte first, with `seed` mixed into the offset basis (pgbench's
/// `hash_fnv1a`).
pub fn fnv1a(val: i64, seed: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS ^ (seed as u64);
    for byte in (val as u64).to_le_bytes() {
        h = (h ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
    }
    h as i64
}

/// PostgreSQL's small generator: xoroshiro128**, its state filled by SplitMix64 from a 64-bit seed.
struct Prng {
    s0: u64,
    s1: u64,
}

impl Prng {
    fn seeded(seed: u64) -> Prng {
        let mut state = seed;
        let mut splitmix = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let (s0, s1) = (splitmix(), splitmix());
        if s0 == 0 && s1 == 0 { Prng { s0: 0x5851_f42d_4c95_7f2d, s1: 0x1405_7b7e_f767_814f } } else { Prng { s0, s1 } }
    }

    fn next(&mut self) -> u64 {
        let (s0, sx) = (self.s0, self.s1 ^ self.s0);
        let out = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        out
    }

    /// Uniform in [0, max] by bit-mask rejection on the high bits.
    fn up_to(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let shift = max.leading_zeros();
        loop {
            let v = self.next() >> shift;
            if v <= max {
                return v;
            }
        }
    }
}

/// pgbench's `permute(i, size, seed)`: the position of `i` (taken modulo `size` as an unsigned
/// number) in a pseudorandom permutation of 0 … size − 1; 0 when size < 2. The caller checks size > 0.
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rng = Prng::seeded(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    // The largest power of two at most `size`, as a bit count and a mask.
    let bits = 63 - size.leading_zeros();
    let mask = (1u64 << bits) - 1;
    let scramble = |x: u64, m: u64, r: u64| {
        let x = (x.wrapping_mul(m) ^ r) & mask;
        ((x << 1) & mask) | (x >> (bits - 1))
    };
    for _ in 0..6 {
        let (m, r) = ((rng.next() & mask) | 1, rng.next() & mask);
        if v <= mask {
            v = scramble(v, m, r);
        }
        let (m, r) = ((rng.next() & mask) | 1, rng.next() & mask);
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - scramble(t, m, r);
        }
        v = (v + rng.up_to(size - 1)) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_pgbench_documents_and_tests() {
        // pgbench's documentation: hash(10, 5432), hash_fnv1a(10, 5432).
        assert_eq!(murmur2(10, 5432), -5817877081768721676);
        assert_eq!(fnv1a(10, 5432), -7793829335365542153);
        // pgbench's own portability check of permute near the top of the integer range.
        let size = i64::MAX - 10;
        let want = [
            520382784483822430,
            1143715004660802862,
            447293596416496998,
            916527772266572956,
            2763809008686028849,
            8648551549198294572,
            4542876852200565125,
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(permute(size - 1 - k as i64, size, 5432), *w, "permute(size-{}, size, 5432)", k + 1);
        }
        assert_eq!((permute(0, 2, 5431), permute(1, 2, 5431)), (0, 1));
        assert_eq!((permute(0, 2, 5433), permute(1, 2, 5433)), (1, 0));
        assert_eq!(permute(7, 1, 3), 0);
    }

    #[test]
    fn permute_is_a_bijection_and_wraps() {
        for (size, seed) in [(2, 1), (3, 9), (16, 5432), (1000, -7), (1001, 42)] {
            let mut seen: Vec<i64> = (0..size).map(|i| permute(i, size, seed)).collect();
            assert_eq!(permute(5 + size, size, seed), permute(5, size, seed), "size {size}: taken modulo size");
            seen.sort();
            assert_eq!(seen, (0..size).collect::<Vec<_>>(), "size {size} seed {seed}: every value once");
        }
        let moved = (0..1000).filter(|&i| permute(i, 1000, 1) != i).count();
        assert!(moved > 900, "a permutation, not the identity: {moved} of 1000 moved");
    }
}
