//! NumPy's default random generator, reproduced draw for draw, as far as permutation tests need it.
//!
//! scikit-bio 0.7.1.post1 runs its permutation tests (PERMANOVA among them) by building
//! `numpy.random.default_rng(seed)` once and then calling `rng.permutation(grouping)` once per
//! permutation, where `grouping` is the 1-D integer array of group codes. To report the same
//! p-value as scikit-bio for the same seed, we must produce exactly the same sequence of
//! permutations, so this module re-implements the three pieces of NumPy 2.x involved:
//!
//! 1. **Seeding** (`SeedSequence`). The integer seed is split into 32-bit words, lowest word
//!    first (one word below 2^32, two words otherwise; zero is the single word 0). The words are
//!    hashed into a pool of four 32-bit words, every pool word is then mixed with a hash of every
//!    other one, and the generator's starting material is read off the pool with a second hash.
//!    PCG64 asks for four 64-bit words, i.e. eight 32-bit words, paired little-end first.
//! 2. **The bit generator** (`PCG64`): a 128-bit linear congruential generator with NumPy's
//!    default multiplier, whose 64-bit output is the xor of the state's two halves rotated right
//!    by the state's top six bits ("XSL-RR"). Of the four seed words, the first two form the
//!    initial state and the last two the stream selector, set up the way PCG's reference code
//!    does it (odd increment from the selector; step from zero; add the initial state; step).
//!    A 32-bit draw takes the low half of a fresh 64-bit output and keeps the high half for the
//!    next 32-bit draw; that kept half survives between calls, so it lives in [`NumpyRng`].
//! 3. **`Generator.permutation` / `Generator.shuffle` of a 1-D array**: Fisher–Yates running from
//!    the last position down to position 1, the partner index drawn uniformly from `0..=i` by
//!    masking a raw draw to the smallest all-ones mask covering `i` and rejecting values above
//!    `i`. Bounds that fit in 32 bits use 32-bit draws, larger bounds 64-bit draws.
//!
//! The test vectors in `tests/data/numpy_permutations.json` were produced with NumPy 2.4.6 (the
//! calls that made them are named in the file) and are compared element for element below.

/// Words in `SeedSequence`'s entropy pool (NumPy's default `pool_size`).
const POOL_WORDS: usize = 4;
/// Starting constant of the hash used while mixing entropy into the pool.
const INIT_A: u32 = 0x43b0_d7e5;
/// Multiplier that advances the entropy-mixing hash constant.
const MULT_A: u32 = 0x931e_8875;
/// Starting constant of the hash used while reading words out of the pool.
const INIT_B: u32 = 0x8b51_f9dd;
/// Multiplier that advances the read-out hash constant.
const MULT_B: u32 = 0x58f3_8ded;
/// Weight of the destination word when two pool words are combined.
const MIX_MULT_L: u32 = 0xca01_f9dd;
/// Weight (subtracted) of the source word when two pool words are combined.
const MIX_MULT_R: u32 = 0x4973_f715;
/// Half the width of a 32-bit word: the final xor-shift of every hash.
const XSHIFT: u32 = 16;

/// PCG64's 128-bit LCG multiplier (NumPy's `PCG_DEFAULT_MULTIPLIER_128`).
const PCG_MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

/// The seed as `SeedSequence` sees it: 32-bit words, least significant first, no leading zero
/// words except that the seed 0 is the one word 0.
fn entropy_words(seed: u64) -> Vec<u32> {
    let low = (seed & 0xffff_ffff) as u32;
    let high = (seed >> 32) as u32;
    if high == 0 { vec![low] } else { vec![low, high] }
}

/// `SeedSequence`'s input hash; `multiplier` is the running constant, advanced on every call.
fn hash_in(value: u32, multiplier: &mut u32) -> u32 {
    let mut v = value ^ *multiplier;
    *multiplier = multiplier.wrapping_mul(MULT_A);
    v = v.wrapping_mul(*multiplier);
    v ^ (v >> XSHIFT)
}

/// Combines pool word `dst` with (hashed) word `src`.
fn combine(dst: u32, src: u32) -> u32 {
    let r = MIX_MULT_L.wrapping_mul(dst).wrapping_sub(MIX_MULT_R.wrapping_mul(src));
    r ^ (r >> XSHIFT)
}

/// The entropy pool of `SeedSequence(entropy)` (no spawn key).
fn seed_pool(entropy: &[u32]) -> [u32; POOL_WORDS] {
    let mut multiplier = INIT_A;
    let mut pool = [0u32; POOL_WORDS];
    for (i, word) in pool.iter_mut().enumerate() {
        *word = hash_in(entropy.get(i).copied().unwrap_or(0), &mut multiplier);
    }
    // Every word influences every other one, in this exact order (src outer, dst inner).
    for src in 0..POOL_WORDS {
        for dst in 0..POOL_WORDS {
            if src != dst {
                let hashed = hash_in(pool[src], &mut multiplier);
                pool[dst] = combine(pool[dst], hashed);
            }
        }
    }
    // Entropy beyond the pool size (never reached by a u64 seed, kept for completeness).
    for &extra in entropy.iter().skip(POOL_WORDS) {
        for word in &mut pool {
            *word = combine(*word, hash_in(extra, &mut multiplier));
        }
    }
    pool
}

/// `SeedSequence(seed).generate_state(N, np.uint64)`.
fn seed_state_u64<const N: usize>(seed: u64) -> [u64; N] {
    let pool = seed_pool(&entropy_words(seed));
    let mut multiplier = INIT_B;
    let mut next_word = {
        let mut index = 0usize;
        move || {
            let mut v = pool[index % POOL_WORDS] ^ multiplier;
            index += 1;
            multiplier = multiplier.wrapping_mul(MULT_B);
            v = v.wrapping_mul(multiplier);
            v ^ (v >> XSHIFT)
        }
    };
    let mut out = [0u64; N];
    for word in &mut out {
        let low = u64::from(next_word());
        let high = u64::from(next_word());
        *word = low | (high << 32);
    }
    out
}

/// PCG64 (XSL-RR 128/64) state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pcg64 {
    state: u128,
    increment: u128,
}

impl Pcg64 {
    /// NumPy's `PCG64(seed)`: four `SeedSequence` words, the first pair the initial state and the
    /// second pair the stream, each pair high word first.
    fn from_seed(seed: u64) -> Pcg64 {
        let words = seed_state_u64::<4>(seed);
        let initial_state = (u128::from(words[0]) << 64) | u128::from(words[1]);
        let stream = (u128::from(words[2]) << 64) | u128::from(words[3]);
        let mut pcg = Pcg64 { state: 0, increment: (stream << 1) | 1 };
        pcg.step();
        pcg.state = pcg.state.wrapping_add(initial_state);
        pcg.step();
        pcg
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.increment);
    }

    /// Advances, then outputs the xor of the state's halves rotated by its top six bits.
    fn next_u64(&mut self) -> u64 {
        self.step();
        let folded = ((self.state >> 64) as u64) ^ (self.state as u64);
        folded.rotate_right((self.state >> 122) as u32)
    }
}

/// numpy's `default_rng(seed)` (SeedSequence + PCG64), as far as `permutation` needs it.
///
/// Successive calls continue one stream, exactly like successive calls on one NumPy `Generator`;
/// a shuffle of `n` items consumes the same draws NumPy's does, so interleaving shuffles of
/// different lengths stays in step too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumpyRng {
    pcg: Pcg64,
    /// High half of the last 64-bit output, not yet handed out as a 32-bit draw.
    spare_u32: Option<u32>,
}

impl NumpyRng {
    /// `numpy.random.default_rng(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> NumpyRng {
        NumpyRng { pcg: Pcg64::from_seed(seed), spare_u32: None }
    }

    /// One 64-bit output (`bit_generator.random_raw()`); leaves the spare 32-bit half alone.
    fn next_u64(&mut self) -> u64 {
        self.pcg.next_u64()
    }

    /// One 32-bit draw: the spare high half if there is one, else the low half of a new output.
    fn next_u32(&mut self) -> u32 {
        if let Some(spare) = self.spare_u32.take() {
            return spare;
        }
        let raw = self.pcg.next_u64();
        self.spare_u32 = Some((raw >> 32) as u32);
        (raw & 0xffff_ffff) as u32
    }

    /// A uniform integer in `0..=max` by masked rejection (NumPy's `random_interval`).
    fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        // Smallest 2^k - 1 that is >= max.
        let mask = u64::MAX >> max.leading_zeros();
        if max <= u64::from(u32::MAX) {
            loop {
                let value = u64::from(self.next_u32()) & mask;
                if value <= max {
                    return value;
                }
            }
        } else {
            loop {
                let value = self.next_u64() & mask;
                if value <= max {
                    return value;
                }
            }
        }
    }

    /// numpy's `Generator.permutation` of a 1-D array (returns a shuffled copy); same draws.
    pub fn permutation<T: Copy>(&mut self, items: &[T]) -> Vec<T> {
        let mut copy = items.to_vec();
        self.shuffle(&mut copy);
        copy
    }

    /// Shuffles in place, as `Generator.shuffle` of a 1-D array.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            // `j <= i`, and `i` came from a usize, so both conversions are lossless.
            let j = self.interval(i as u64) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const VECTORS: &str = include_str!("../tests/data/numpy_permutations.json");

    fn vectors() -> Value {
        serde_json::from_str(VECTORS).expect("test vectors are JSON")
    }

    fn u64s(value: &Value) -> Vec<u64> {
        value.as_array().expect("an array").iter().map(|v| v.as_u64().expect("an unsigned integer")).collect()
    }

    fn usizes(value: &Value) -> Vec<usize> {
        u64s(value).into_iter().map(|v| usize::try_from(v).expect("fits usize")).collect()
    }

    fn arange(n: usize) -> Vec<usize> {
        (0..n).collect()
    }

    #[test]
    fn numpy_rng_seed_sequence_words_match_numpy() {
        let v = vectors();
        let cases = v["seeds"].as_array().expect("seeds");
        assert_eq!(cases.len(), 7);
        for case in cases {
            let seed = case["seed"].as_u64().expect("seed");
            let expected = u64s(&case["state_words_u64"]);
            assert_eq!(seed_state_u64::<4>(seed).to_vec(), expected, "seed {seed}");
        }
    }

    #[test]
    fn numpy_rng_raw_outputs_match_numpy() {
        let v = vectors();
        for case in v["seeds"].as_array().expect("seeds") {
            let seed = case["seed"].as_u64().expect("seed");
            let mut rng = NumpyRng::new(seed);
            let got: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
            assert_eq!(got, u64s(&case["raw_u64"]), "seed {seed}");
        }
    }

    #[test]
    fn numpy_rng_successive_permutations_match_numpy() {
        let v = vectors();
        let cases = v["permutations"].as_array().expect("permutations");
        assert_eq!(cases.len(), 7 * 6);
        for case in cases {
            let seed = case["seed"].as_u64().expect("seed");
            let n = usize::try_from(case["n"].as_u64().expect("n")).expect("n fits");
            let mut rng = NumpyRng::new(seed);
            let items = arange(n);
            let perms = case["perms"].as_array().expect("perms");
            assert_eq!(perms.len(), 5);
            for (k, expected) in perms.iter().enumerate() {
                assert_eq!(rng.permutation(&items), usizes(expected), "seed {seed}, n {n}, permutation {k}");
            }
        }
    }

    #[test]
    fn numpy_rng_mixed_lengths_share_one_stream() {
        let v = vectors();
        let case = &v["mixed"];
        let mut rng = NumpyRng::new(case["seed"].as_u64().expect("seed"));
        let lengths = usizes(&case["lengths"]);
        let perms = case["perms"].as_array().expect("perms");
        assert_eq!(lengths.len(), perms.len());
        for (&n, expected) in lengths.iter().zip(perms) {
            assert_eq!(rng.permutation(&arange(n)), usizes(expected), "n {n}");
        }
    }

    #[test]
    fn numpy_rng_group_codes_as_scikit_bio_permutes_them() {
        let v = vectors();
        let case = &v["codes"];
        let mut rng = NumpyRng::new(case["seed"].as_u64().expect("seed"));
        let codes: Vec<u8> = u64s(&case["codes"]).into_iter().map(|c| u8::try_from(c).expect("small code")).collect();
        for expected in case["perms"].as_array().expect("perms") {
            let got: Vec<u64> = rng.permutation(&codes).into_iter().map(u64::from).collect();
            assert_eq!(got, u64s(expected));
        }
    }

    #[test]
    fn numpy_rng_large_permutation_matches_numpy() {
        let v = vectors();
        let case = &v["large"];
        let n = usize::try_from(case["n"].as_u64().expect("n")).expect("n fits");
        assert!(n > 1 << 16);
        let mut rng = NumpyRng::new(case["seed"].as_u64().expect("seed"));
        let items: Vec<u64> = (0..n as u64).collect();
        for (k, expected) in case["perms"].as_array().expect("perms").iter().enumerate() {
            let got = rng.permutation(&items);
            let checksum = got.iter().zip(1u64..).fold(0u64, |acc, (&x, weight)| acc.wrapping_add(weight * x));
            assert_eq!(got[..20].to_vec(), u64s(&expected["head"]), "head of {k}");
            assert_eq!(got[n - 20..].to_vec(), u64s(&expected["tail"]), "tail of {k}");
            assert_eq!(checksum, expected["checksum"].as_u64().expect("checksum"), "sum {k}");
            let mut sorted = got;
            sorted.sort_unstable();
            assert_eq!(sorted, items, "permutation {k} is a permutation");
        }
    }

    #[test]
    fn numpy_rng_short_inputs_draw_nothing() {
        let fresh = NumpyRng::new(42);
        let mut rng = fresh.clone();
        assert!(rng.permutation::<u8>(&[]).is_empty());
        assert_eq!(rng.permutation(&[9u8]), vec![9]);
        let mut empty: [u8; 0] = [];
        rng.shuffle(&mut empty);
        assert_eq!(rng, fresh);
    }

    #[test]
    fn numpy_rng_32_bit_draws_split_one_output_low_half_first() {
        let mut a = NumpyRng::new(12345);
        let mut b = a.clone();
        let raw = b.next_u64();
        assert_eq!(a.next_u32(), (raw & 0xffff_ffff) as u32);
        assert_eq!(a.next_u32(), (raw >> 32) as u32);
        assert_eq!(a.next_u32(), (b.next_u64() & 0xffff_ffff) as u32);
    }

    #[test]
    fn numpy_rng_wide_bounds_use_whole_64_bit_outputs() {
        let mut a = NumpyRng::new(1);
        let mut b = a.clone();
        let _ = a.next_u32(); // leaves a spare half behind
        let spare = a.spare_u32;
        let _ = b.next_u64();
        // An all-ones mask never rejects, so the draw is the next raw output itself, and the
        // spare 32-bit half is left for the next 32-bit draw.
        assert_eq!(a.interval(u64::MAX), b.next_u64());
        assert_eq!(a.spare_u32, spare);
        let bound = (1u64 << 40) + 3;
        for _ in 0..1000 {
            assert!(a.interval(bound) <= bound);
        }
        assert_eq!(a.spare_u32, spare);
    }

    #[test]
    fn numpy_rng_interval_mask_is_smallest_covering_all_ones() {
        for (max, mask) in [(1u64, 1u64), (2, 3), (3, 3), (4, 7), (255, 255), (256, 511)] {
            assert_eq!(u64::MAX >> max.leading_zeros(), mask, "max {max}");
        }
    }
}
