//! Nucleotides as 2-bit codes, k-mers packed in a `u64`, and a hasher for them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The code of a base that is not A, C, G or T (N, IUPAC codes, gaps).
pub(crate) const OTHER: u8 = 4;

const CODES: [u8; 256] = {
    let mut t = [OTHER; 256];
    t[b'A' as usize] = 0;
    t[b'a' as usize] = 0;
    t[b'C' as usize] = 1;
    t[b'c' as usize] = 1;
    t[b'G' as usize] = 2;
    t[b'g' as usize] = 2;
    t[b'T' as usize] = 3;
    t[b't' as usize] = 3;
    t[b'U' as usize] = 3;
    t[b'u' as usize] = 3;
    t
};

/// The 2-bit code of a base (A 0, C 1, G 2, T/U 3), or [`OTHER`].
#[inline]
pub(crate) fn code(base: u8) -> u8 {
    CODES[base as usize]
}

/// Replaces `out` with the codes of `seq`.
pub(crate) fn encode_into(seq: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(seq.iter().map(|&b| code(b)));
}

/// Replaces `out` with the reverse complement of the codes in `codes` ([`OTHER`] stays).
pub(crate) fn reverse_complement_into(codes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(codes.iter().rev().map(|&c| if c == OTHER { OTHER } else { 3 - c }));
}

/// The reverse complement of a sequence of letters (non-ACGT letters become `N`).
pub fn reverse_complement(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|&b| match code(b) {
            0 => b'T',
            1 => b'G',
            2 => b'C',
            3 => b'A',
            _ => b'N',
        })
        .collect()
}

/// Calls `f(position, forward, reverse_complement)` for every k-mer of `codes` free of
/// [`OTHER`], with both strands packed 2 bits a base (`k <= 32`).
#[inline]
pub(crate) fn for_each_kmer(codes: &[u8], k: usize, mut f: impl FnMut(usize, u64, u64)) {
    debug_assert!((1..=32).contains(&k));
    let mask = if k == 32 { u64::MAX } else { (1u64 << (2 * k)) - 1 };
    let shift = 2 * (k - 1);
    let (mut fwd, mut rev, mut valid) = (0u64, 0u64, 0usize);
    for (i, &c) in codes.iter().enumerate() {
        if c == OTHER {
            valid = 0;
            fwd = 0;
            rev = 0;
            continue;
        }
        let c = u64::from(c);
        fwd = ((fwd << 2) | c) & mask;
        rev = (rev >> 2) | ((3 - c) << shift);
        valid += 1;
        if valid >= k {
            f(i + 1 - k, fwd, rev);
        }
    }
}

/// Packs `codes` (all below [`OTHER`], at most 32) into a `u64`, the first base highest.
pub(crate) fn pack(codes: &[u8]) -> u64 {
    codes.iter().fold(0u64, |acc, &c| (acc << 2) | u64::from(c))
}

/// Mismatches between two equally long code slices, stopping once `limit` is exceeded (the
/// result is then `limit + 1`). [`OTHER`] never matches.
#[inline]
pub(crate) fn hamming_within(a: &[u8], b: &[u8], limit: usize) -> usize {
    let mut n = 0;
    for (&x, &y) in a.iter().zip(b) {
        if x != y || x == OTHER {
            n += 1;
            if n > limit {
                return n;
            }
        }
    }
    n
}

/// A hasher for packed k-mers: the std hasher (SipHash) would be most of the lookup's cost, and
/// the keys come from the reads, not from an adversary who could pick collisions to slow a job.
#[derive(Default, Clone, Copy)]
pub(crate) struct KmerHasher(u64);

impl Hasher for KmerHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        // splitmix64's finaliser: every input bit moves the high bits the table uses.
        let mut z = (self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by packed k-mers.
pub(crate) type KmerMap<V> = HashMap<u64, V, BuildHasherDefault<KmerHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmers_of_both_strands_agree_with_reverse_complement() {
        let seq = b"ACGTTGCANNACGGT";
        let mut codes = Vec::new();
        encode_into(seq, &mut codes);
        let mut rc = Vec::new();
        reverse_complement_into(&codes, &mut rc);
        let k = 3;
        let mut fwd = Vec::new();
        for_each_kmer(&codes, k, |i, f, r| fwd.push((i, f, r)));
        // No k-mer spans the Ns.
        assert_eq!(fwd.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 10, 11, 12]);
        for &(i, f, r) in &fwd {
            assert_eq!(f, pack(&codes[i..i + k]));
            let j = codes.len() - k - i;
            assert_eq!(r, pack(&rc[j..j + k]));
        }
    }

    #[test]
    fn reverse_complement_of_letters() {
        assert_eq!(reverse_complement(b"AACGTn"), b"NACGTT");
    }

    #[test]
    fn hamming_stops_past_the_limit_and_n_never_matches() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_into(b"ACGTACGTAC", &mut a);
        encode_into(b"ACGTACGTAC", &mut b);
        assert_eq!(hamming_within(&a, &b, 3), 0);
        encode_into(b"TCGTNCGTAA", &mut b);
        assert_eq!(hamming_within(&a, &b, 3), 3);
        assert_eq!(hamming_within(&a, &b, 1), 2);
        encode_into(b"NNNNNNNNNN", &mut a);
        assert_eq!(hamming_within(&a, &a, 20), 10);
    }
}
