//! k-mers and minimizers: the first stage of classification, shared by the database build.
//!
//! Bases are packed two bits each; a k-mer and its reverse complement are the same *canonical*
//! k-mer (the smaller of the two encodings), so a read matches the reference whichever strand
//! it was sequenced from.
//!
//! Sampling (the same scheme as Kraken 2's defaults, k = 35, l = 31): each window of `k` bases
//! is represented by its *minimizer*, the canonical `l`-mer of the window with the smallest
//! hash. Neighbouring windows mostly share their minimizer, so a genome yields about
//! `2 / (k - l + 2)` (one in three) distinct minimizers per base: the index is a third of the
//! size of an all-31-mer index and a read needs about 40 lookups instead of 120. A 31-mer is
//! long enough to be almost always unique to one genome in bacterial references, so the stored
//! key keeps the specificity of a 31-mer index; sensitivity to a strain at 1-2% divergence stays
//! good because only one 31-mer per window has to match.

/// Length of the window each minimizer represents (bases).
pub const DEFAULT_K: u32 = 35;
/// Length of the minimizer, the stored key (bases, at most 31).
pub const DEFAULT_L: u32 = 31;
/// The largest `k - l + 1` supported (l-mers per window).
pub const MAX_WINDOW: usize = 64;

// Minimizers are ordered by a hash, not by their encoding, so poly-A and other low-complexity
// l-mers are not systematically chosen.
const ORDER_SEED: u64 = 0x5851_f42d_4c95_7f2d;

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

/// Computes the minimizer of every window of a sequence. Holds only the parameters; scanning
/// allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minimizers {
    k: u32,
    l: u32,
}

impl Minimizers {
    /// A scanner for windows of `k` bases and minimizers of `l` bases.
    ///
    /// # Panics
    /// If `l` is 0 or above 31, or `k < l`, or `k - l + 1 > MAX_WINDOW`.
    pub fn new(k: u32, l: u32) -> Minimizers {
        assert!(
            (1..=31).contains(&l) && k >= l && (k - l + 1) as usize <= MAX_WINDOW,
            "unsupported k = {k}, l = {l}"
        );
        Minimizers { k, l }
    }

    /// Window length.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Minimizer length.
    pub fn l(&self) -> u32 {
        self.l
    }

    /// Calls `f(minimizer)` for every window of `k` valid bases in `seq`, in order; returns the
    /// number of windows. A window that contains a base other than A, C, G, T is skipped.
    /// The minimizer is a canonical packed `l`-mer, so the reverse complement of `seq` yields
    /// the same minimizers in reverse order.
    #[inline]
    pub fn scan(&self, seq: &[u8], mut f: impl FnMut(u64)) -> u32 {
        let l = self.l as usize;
        let w = (self.k - self.l + 1) as usize;
        let lmask = if l == 32 {
            u64::MAX
        } else {
            (1u64 << (2 * l)) - 1
        };
        let shift = 2 * (l as u32 - 1);
        let mut hashes = [0u64; MAX_WINDOW];
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
            let key = fwd.min(rev);
            let h = mix64(key ^ ORDER_SEED);
            hashes[slot] = h;
            keys[slot] = key;
            filled += 1;
            if filled == 1 || slot == best {
                // The old minimum just left the window (or there was none): rescan.
                let n = filled.min(w);
                best = slot;
                for i in 0..n {
                    if hashes[i] < hashes[best] {
                        best = i;
                    }
                }
            } else if h < hashes[best] {
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
    fn minimizers_are_the_smallest_hash_of_each_window() {
        let m = Minimizers::new(DEFAULT_K, DEFAULT_L);
        let seq = pseudo_random_seq(400, 7);
        let got = all(&m, &seq);
        assert_eq!(got.len(), 400 - 35 + 1);
        for (i, &g) in got.iter().enumerate() {
            let expected = (i..i + 5)
                .map(|j| canonical(pack(&seq[j..j + 31]).unwrap(), 31))
                .min_by_key(|&x| mix64(x ^ ORDER_SEED))
                .unwrap();
            assert_eq!(g, expected, "window {i}");
        }
        // About one distinct minimizer per three bases.
        let mut distinct = got.clone();
        distinct.dedup();
        assert!(
            distinct.len() > 80 && distinct.len() < 190,
            "{}",
            distinct.len()
        );
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
