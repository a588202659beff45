//! k-mers and minimizers: the first stage of classification, shared by the database build.
//!
//! Bases are packed two bits each; a k-mer and its reverse complement are the same *canonical*
//! k-mer (the smaller of the two encodings), so a read matches the reference whichever strand
//! it was sequenced from.
//!
//! Sampling (the same scheme as Kraken 2's defaults, k = 35, l = 31): each window of `k` bases
//! is represented by its *minimizer*, the canonical `l`-mer of the window that comes first in
//! Kraken 2's order ([`ORDER_TOGGLE`]). Neighbouring windows mostly share their minimizer, so a genome yields about
//! `2 / (k - l + 2)` (one in three) distinct minimizers per base: the index is a third of the
//! size of an all-31-mer index and a read needs about 40 lookups instead of 120. A 31-mer is
//! long enough to be almost always unique to one genome in bacterial references, so the stored
//! key keeps the specificity of a 31-mer index; sensitivity to a strain at 1-2% divergence stays
//! good because only one 31-mer per window has to match.
//!
//! Spaced seed (Kraken 2's `--minimizer-spaces`, default 7): after canonicalisation, some base
//! positions of each `l`-mer are zeroed, and the masked `l`-mer is both the minimizer's order
//! key and the stored key. A substitution at a masked position then leaves the minimizer
//! unchanged, so a read of a divergent strain still hits where an exact 31-mer would miss. The
//! mask is Kraken 2's seed template, `1` repeated `l - 2s` times then `01` repeated `s` times,
//! read with its last character on the `l`-mer's last base: every other base of the last `2s`
//! bases is ignored (7 of the last 14 for the default). The key keeps the specificity of a
//! 24-mer, still almost always unique in bacterial references.

/// Length of the window each minimizer represents (bases).
pub const DEFAULT_K: u32 = 35;
/// Length of the minimizer, the stored key (bases, at most 31).
pub const DEFAULT_L: u32 = 31;
/// Spaced-seed positions ignored in each minimizer (Kraken 2's `--minimizer-spaces` default for
/// nucleotide databases).
pub const DEFAULT_SPACES: u32 = 7;
/// The largest `k - l + 1` supported (l-mers per window).
pub const MAX_WINDOW: usize = 64;

/// Minimizers are ordered by `lmer ^ ORDER_TOGGLE` (Kraken 2's toggle mask), not by their
/// plain encoding, so poly-A and other low-complexity l-mers are not systematically chosen.
/// With Kraken 2's order a read samples the same minimizers as Kraken 2, so the two tools'
/// hit groups (`--minimum-hit-groups`) and calls agree read for read; an order of our own
/// (a 64-bit hash) sampled as many minimizers but different ones, which cost about 0.1% of
/// the held-out strains' recall against Kraken 2 in the `kraken2` bench. Ordering by one XOR
/// is also cheaper than by a hash.
pub const ORDER_TOGGLE: u64 = 0xe37e_28c4_271b_5a2d;

/// 2-bit code of a base: A=0, C=1, G=2, T/U=3; 4 for anything else (N and IUPAC codes).
pub const fn encode(base: u8) -> u8 {
    match base {
        b'A' | b'a' => 0,
        b'C' | b'c' => 1,
        b'G' | b'g' => 2,
        b'T' | b't' | b'U' | b'u' => 3,
        _ => 4,
    }
}

const CODES: [u8; 256] = {
    let mut t = [4u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = encode(i as u8);
        i += 1;
    }
    t
};

/// The murmur3 64-bit finaliser: a fast bijective mix, so distinct keys never tie.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Packs `seq` (at most 32 bases of A, C, G, T) into two bits per base; `None` if it holds
/// another character.
pub fn pack(seq: &[u8]) -> Option<u64> {
    if seq.len() > 32 {
        return None;
    }
    seq.iter().try_fold(0u64, |acc, &b| {
        let c = CODES[b as usize];
        (c < 4).then_some((acc << 2) | c as u64)
    })
}

/// The reverse complement of a packed k-mer of length `k`.
pub fn reverse_complement(kmer: u64, k: u32) -> u64 {
    let mut out = 0u64;
    let mut x = kmer;
    for _ in 0..k {
        out = (out << 2) | (3 - (x & 3));
        x >>= 2;
    }
    out
}

/// The canonical form of a packed k-mer: the smaller of it and its reverse complement.
pub fn canonical(kmer: u64, k: u32) -> u64 {
    kmer.min(reverse_complement(kmer, k))
}

/// The most spaces a minimizer of `l` bases can have (Kraken 2's limit, `l / 4`).
pub const fn max_spaces(l: u32) -> u32 {
    l / 4
}

/// The spaced-seed mask of packed `l`-mers with `spaces` ignored positions: two bits per base,
/// `11` for a base that counts and `00` for an ignored one. The base `i` places from the end
/// of the `l`-mer is ignored when `i` is odd and below `2 * spaces`, as in Kraken 2's seed
/// template. With no spaces the mask keeps all `l` bases.
///
/// # Panics
/// If `l` is 0 or above 31, or `spaces > max_spaces(l)`.
pub const fn spaced_seed_mask(l: u32, spaces: u32) -> u64 {
    assert!(matches!(l, 1..=31), "unsupported l");
    assert!(spaces <= max_spaces(l), "too many spaces for l");
    let mut mask = (1u64 << (2 * l)) - 1;
    let mut i = 0;
    while i < spaces {
        mask &= !(3u64 << (2 * (2 * i + 1)));
        i += 1;
    }
    mask
}

/// Computes the minimizer of every window of a sequence. Holds only the parameters; scanning
/// allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minimizers {
    k: u32,
    l: u32,
    spaces: u32,
    mask: u64,
}

impl Minimizers {
    /// A scanner for windows of `k` bases and minimizers of `l` bases, without a spaced seed
    /// (every base of the minimizer counts).
    ///
    /// # Panics
    /// If `l` is 0 or above 31, or `k < l`, or `k - l + 1 > MAX_WINDOW`.
    pub fn new(k: u32, l: u32) -> Minimizers {
        Minimizers::spaced(k, l, 0)
    }

    /// A scanner for windows of `k` bases and minimizers of `l` bases with `spaces` ignored
    /// positions ([`spaced_seed_mask`]).
    ///
    /// # Panics
    /// As [`Minimizers::new`], and if `spaces > max_spaces(l)`.
    pub fn spaced(k: u32, l: u32, spaces: u32) -> Minimizers {
        assert!(
            (1..=31).contains(&l) && k >= l && (k - l + 1) as usize <= MAX_WINDOW && spaces <= max_spaces(l),
            "unsupported k = {k}, l = {l}, spaces = {spaces}"
        );
        Minimizers { k, l, spaces, mask: spaced_seed_mask(l, spaces) }
    }

    /// Window length.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Minimizer length.
    pub fn l(&self) -> u32 {
        self.l
    }

    /// Spaced-seed positions ignored in each minimizer (0: none).
    pub fn spaces(&self) -> u32 {
        self.spaces
    }

    /// The spaced-seed mask applied to each canonical `l`-mer ([`spaced_seed_mask`]).
    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// Calls `f(minimizer)` for every window of `k` valid bases in `seq`, in order; returns the
    /// number of windows. A window that contains a base other than A, C, G, T is skipped.
    /// The minimizer is a canonical packed `l`-mer with the spaced-seed positions zeroed, so
    /// the reverse complement of `seq` yields the same minimizers in reverse order.
    #[inline]
    pub fn scan(&self, seq: &[u8], mut f: impl FnMut(u64)) -> u32 {
        let l = self.l as usize;
        let w = (self.k - self.l + 1) as usize;
        let lmask = (1u64 << (2 * l)) - 1;
        let seed = self.mask;
        let shift = 2 * (l as u32 - 1);
        let mut orders = [0u64; MAX_WINDOW];
        let mut keys = [0u64; MAX_WINDOW];
        let (mut fwd, mut rev) = (0u64, 0u64);
        let mut valid = 0usize;
        // l-mers pushed since the last invalid base, and the ring slot to write next.
        let mut filled = 0usize;
        let mut slot = 0usize;
        // Ring slot of the current minimum, valid while it stays inside the window.
        let mut best = 0usize;
        let mut windows = 0u32;
        for &b in seq {
            let c = CODES[b as usize] as u64;
            if c > 3 {
                valid = 0;
                filled = 0;
                slot = 0;
                continue;
            }
            fwd = ((fwd << 2) | c) & lmask;
            rev = (rev >> 2) | ((3 - c) << shift);
            valid += 1;
            if valid < l {
                continue;
            }
            // Masked after canonicalisation (as Kraken 2 does): both strands choose the same
            // l-mer, then its ignored positions are cleared for ordering and storage alike.
            let key = fwd.min(rev) & seed;
            let h = key ^ ORDER_TOGGLE;
            orders[slot] = h;
            keys[slot] = key;
            filled += 1;
            if filled == 1 || slot == best {
                // The old minimum just left the window (or there was none): rescan.
                let n = filled.min(w);
                best = slot;
                for i in 0..n {
                    if orders[i] < orders[best] {
                        best = i;
                    }
                }
            } else if h < orders[best] {
                best = slot;
            }
            slot += 1;
            if slot == w {
                slot = 0;
            }
            if filled >= w {
                f(keys[best]);
                windows += 1;
            }
        }
        windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revcomp(seq: &[u8]) -> Vec<u8> {
        seq.iter()
            .rev()
            .map(|&b| match b {
                b'A' => b'T',
                b'C' => b'G',
                b'G' => b'C',
                b'T' => b'A',
                x => x,
            })
            .collect()
    }

    fn pseudo_random_seq(n: usize, mut state: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                state = mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
                b"ACGT"[(state >> 62) as usize]
            })
            .collect()
    }

    fn all(m: &Minimizers, seq: &[u8]) -> Vec<u64> {
        let mut out = Vec::new();
        let n = m.scan(seq, |x| out.push(x));
        assert_eq!(n as usize, out.len());
        out
    }

    #[test]
    fn canonical_kmer_is_strand_independent() {
        let s = b"ACGTTGCAAGGCTTAACCGGTTAAGCTAGCA";
        let rc = revcomp(s);
        let (a, b) = (pack(s).unwrap(), pack(&rc).unwrap());
        assert_ne!(a, b);
        assert_eq!(reverse_complement(a, 31), b);
        assert_eq!(canonical(a, 31), canonical(b, 31));
        assert_eq!(pack(b"ACGT"), Some(0b00_01_10_11));
        assert_eq!(pack(b"ACNT"), None);
        assert_eq!(pack(b"acgu"), pack(b"ACGT"));
    }

    #[test]
    fn minimizers_come_first_in_order_in_each_window() {
        let m = Minimizers::new(DEFAULT_K, DEFAULT_L);
        let seq = pseudo_random_seq(400, 7);
        let got = all(&m, &seq);
        assert_eq!(got.len(), 400 - 35 + 1);
        for (i, &g) in got.iter().enumerate() {
            let expected = (i..i + 5)
                .map(|j| canonical(pack(&seq[j..j + 31]).unwrap(), 31))
                .min_by_key(|&x| x ^ ORDER_TOGGLE)
                .unwrap();
            assert_eq!(g, expected, "window {i}");
        }
        // About one distinct minimizer per three bases.
        let mut distinct = got.clone();
        distinct.dedup();
        assert!(distinct.len() > 80 && distinct.len() < 190, "{}", distinct.len());
    }

    #[test]
    fn reverse_complement_gives_the_same_minimizers() {
        let m = Minimizers::new(DEFAULT_K, DEFAULT_L);
        let seq = pseudo_random_seq(300, 11);
        let mut fwd = all(&m, &seq);
        let mut rev = all(&m, &revcomp(&seq));
        rev.reverse();
        assert_eq!(fwd, rev);
        fwd.sort_unstable();
        assert!(!fwd.is_empty());
    }

    /// Kraken 2's mask: the seed template string read as a binary number, each bit widened to
    /// a base's two bits (its `ExpandSpacedSeedMask`).
    fn kraken2_mask(l: u32, spaces: u32) -> u64 {
        let template = "1".repeat((l - 2 * spaces) as usize) + &"01".repeat(spaces as usize);
        template.bytes().fold(0u64, |acc, b| (acc << 2) | if b == b'1' { 3 } else { 0 })
    }

    #[test]
    fn spaced_seed_mask_is_kraken2_template() {
        assert_eq!(spaced_seed_mask(31, 0), (1 << 62) - 1);
        for spaces in 0..=max_spaces(31) {
            assert_eq!(spaced_seed_mask(31, spaces), kraken2_mask(31, spaces), "{spaces}");
        }
        assert_eq!(max_spaces(31), 7);
        // The default ignores every other base of the last 14.
        let m = spaced_seed_mask(DEFAULT_L, DEFAULT_SPACES);
        assert_eq!(m.count_ones(), 2 * (31 - 7));
        assert_eq!(m & 0x3fff_ffff, 0x3333_3333);
        assert_eq!(spaced_seed_mask(8, 2), 0b11_11_11_11_00_11_00_11);
    }

    #[test]
    fn a_substitution_at_a_masked_position_leaves_the_minimizer_unchanged() {
        // k = l: one l-mer per window, so the minimizer is that l-mer, canonical and masked.
        let m = Minimizers::spaced(31, 31, DEFAULT_SPACES);
        let mask = spaced_seed_mask(31, DEFAULT_SPACES);
        let one = |s: &[u8]| {
            let got = all(&m, s);
            assert_eq!(got.len(), 1);
            got[0]
        };
        for seed in 0..20 {
            let mut seq = pseudo_random_seq(31, seed);
            // Forward strand canonical: starts with A, ends with A (its reverse complement
            // starts with T), whatever happens in between.
            seq[0] = b'A';
            seq[30] = b'A';
            let base = one(&seq);
            assert_eq!(base, pack(&seq).unwrap() & mask);
            for i in 0..31 {
                let masked = i % 2 == 1 && i < 2 * DEFAULT_SPACES as usize;
                for sub in *b"ACGT" {
                    let pos = 30 - i;
                    if sub == seq[pos] || pos == 0 || pos == 30 {
                        continue;
                    }
                    let mut mutant = seq.clone();
                    mutant[pos] = sub;
                    assert_eq!(one(&mutant) == base, masked, "seed {seed}, base {i} from the end");
                    // The read's strand does not matter.
                    assert_eq!(one(&revcomp(&mutant)), one(&mutant));
                }
            }
            // Reverse strand canonical: the masked bases are counted from the start of `seq`.
            let rc = revcomp(&seq);
            assert_eq!(one(&rc), base);
            for i in (1..2 * DEFAULT_SPACES as usize).step_by(2) {
                let mut mutant = rc.clone();
                mutant[i] = if rc[i] == b'C' { b'G' } else { b'C' };
                assert_eq!(one(&mutant), base, "seed {seed}, base {i} of the reverse strand");
            }
        }
        // Without the mask every substitution changes the minimizer.
        let exact = Minimizers::new(31, 31);
        let seq = pseudo_random_seq(31, 5);
        let mut mutant = seq.clone();
        mutant[29] = if seq[29] == b'C' { b'G' } else { b'C' };
        assert_ne!(all(&exact, &seq), all(&exact, &mutant));
    }

    #[test]
    fn spaced_minimizers_come_first_in_order_in_each_masked_window() {
        let m = Minimizers::spaced(DEFAULT_K, DEFAULT_L, DEFAULT_SPACES);
        assert_eq!((m.spaces(), m.mask()), (7, spaced_seed_mask(31, 7)));
        let seq = pseudo_random_seq(400, 13);
        let got = all(&m, &seq);
        assert_eq!(got.len(), 400 - 35 + 1);
        for (i, &g) in got.iter().enumerate() {
            let expected = (i..i + 5)
                .map(|j| canonical(pack(&seq[j..j + 31]).unwrap(), 31) & m.mask())
                .min_by_key(|&x| x ^ ORDER_TOGGLE)
                .unwrap();
            assert_eq!(g, expected, "window {i}");
            assert_eq!(g & !m.mask(), 0);
        }
    }

    #[test]
    fn reverse_complement_gives_the_same_spaced_minimizers() {
        let m = Minimizers::spaced(DEFAULT_K, DEFAULT_L, DEFAULT_SPACES);
        for seed in [11, 17, 23] {
            let seq = pseudo_random_seq(300, seed);
            let fwd = all(&m, &seq);
            let mut rev = all(&m, &revcomp(&seq));
            rev.reverse();
            assert_eq!(fwd, rev);
            assert_eq!(fwd.len(), 266);
        }
    }

    #[test]
    #[should_panic(expected = "spaces = 8")]
    fn too_many_spaces_are_refused() {
        Minimizers::spaced(35, 31, 8);
    }

    #[test]
    fn ambiguous_bases_break_windows() {
        let m = Minimizers::new(DEFAULT_K, DEFAULT_L);
        let mut seq = pseudo_random_seq(100, 3);
        assert_eq!(all(&m, &seq).len(), 66);
        seq[50] = b'N';
        // 50 bases before the N and 49 after: 16 + 15 windows.
        assert_eq!(all(&m, &seq).len(), 31);
        assert_eq!(all(&m, &seq[..34]).len(), 0);
        assert_eq!(all(&m, b"").len(), 0);
    }
}
