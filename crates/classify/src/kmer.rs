//! k-mers and minimizers: the first stage of classification, shared by the database build.
//!
//! Bases are packed two bits each; a k-mer and its reverse complement are the same *canonical*
//! k-mer (the smaller of the two encodings), so a read matches the reference whichever strand
//! it was sequenced from.
//!
//! Sampling (the same scheme as Kraken 2's defaults, k = 35, l = 31): each window of `k` bases
//! is represented by its *minimizer*, the canonical `l`-mer of the window that comes first in
//! Kraken 2's order ([`ORDER_TOGGLE`]). Neighbouring windows mostly share their minimizer, so
//! a genome yields about `2 / (k - l + 2)` (one in three) distinct minimizers per base: the index
//! is a third of the size of an all-31-mer index and a read needs about 40 lookups instead of
//! 120. A 31-mer is
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
//!
//! Windows holding a character other than A, C, G, T (either case) are *ambiguous*: they are
//! reported as [`AMBIGUOUS`] rather than skipped, because Kraken 2 counts them among a read's
//! k-mers for its confidence threshold. The scanner also reads Kraken 2's protein databases
//! (translated search: reads in six frames, a reduced alphabet of four bits a residue) and its
//! databases built before version 2.0.8 (another reverse complement).

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
/// hit groups (`--minimum-hit-groups`) and calls agree read for read. Ordering by one XOR is
/// also cheaper than by a hash.
pub const ORDER_TOGGLE: u64 = 0xe37e_28c4_271b_5a2d;

/// What [`Minimizers::scan`] reports for a k-mer that Kraken 2 calls ambiguous (one touching a
/// base other than A, C, G, T, see [`Minimizers::scan`]). No minimizer has this value: keys use at
/// most 62 bits.
pub const AMBIGUOUS: u64 = u64::MAX;

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

/// Marks a character the scanner treats as ambiguous.
const NO_CODE: u8 = 0xff;

// Scanning follows Kraken 2 exactly, so only A, C, G, T (either case) are bases: U, N, IUPAC
// codes, `x` from quality masking and bytes above 0x7f are ambiguous.
const DNA_CODES: [u8; 256] = {
    let mut t = [NO_CODE; 256];
    t[b'A' as usize] = 0;
    t[b'a' as usize] = 0;
    t[b'C' as usize] = 1;
    t[b'c' as usize] = 1;
    t[b'G' as usize] = 2;
    t[b'g' as usize] = 2;
    t[b'T' as usize] = 3;
    t[b't' as usize] = 3;
    t
};

// Kraken 2's reduced 15-letter protein alphabet (4 bits a residue) for translated databases.
const PROTEIN_CODES: [u8; 256] = {
    let groups: [(&[u8], u8); 16] = [
        (b"*UO", 0),
        (b"A", 1),
        (b"NQS", 2),
        (b"C", 3),
        (b"DE", 4),
        (b"F", 5),
        (b"G", 6),
        (b"H", 7),
        (b"IL", 8),
        (b"K", 9),
        (b"P", 10),
        (b"R", 11),
        (b"MV", 12),
        (b"T", 13),
        (b"W", 14),
        (b"Y", 15),
    ];
    let mut t = [NO_CODE; 256];
    let mut g = 0;
    while g < groups.len() {
        let (letters, code) = groups[g];
        let mut i = 0;
        while i < letters.len() {
            t[letters[i] as usize] = code;
            t[letters[i].to_ascii_lowercase() as usize] = code;
            i += 1;
        }
        g += 1;
    }
    t
};

/// The murmur3 64-bit finaliser: a fast bijective mix, so distinct keys never tie. It is also
/// Kraken 2's hash of a minimizer (table slot, stored key fragment, subsampling cut-off).
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

/// Kraken 2's reverse complement of a packed `l`-mer. Databases written before Kraken 2.0.8
/// (`revcom_version` 0) used a formula that is not a true reverse complement; their minimizers
/// can only be found again with the same formula.
fn kraken_reverse_complement(x: u64, l: u32, old: bool) -> u64 {
    let mut y = ((x & 0xcccc_cccc_cccc_cccc) >> 2) | ((x & 0x3333_3333_3333_3333) << 2);
    y = ((y & 0xf0f0_f0f0_f0f0_f0f0) >> 4) | ((y & 0x0f0f_0f0f_0f0f_0f0f) << 4);
    y = y.swap_bytes();
    let mask = (1u64 << (2 * l)) - 1;
    if old { !y & mask } else { (!y >> (64 - 2 * l)) & mask }
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

/// The alphabet a database's minimizers are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alphabet {
    /// Nucleotides, two bits a base; a minimizer is the smaller of an `l`-mer and its reverse
    /// complement. `old_reverse_complement` reproduces databases built before Kraken 2.0.8.
    Dna {
        /// Whether the database uses Kraken 2's pre-2.0.8 reverse complement.
        old_reverse_complement: bool,
    },
    /// Kraken 2's reduced protein alphabet, four bits a residue (translated search); no
    /// canonical form.
    Protein,
}

/// The minimizer scanner: the minimizer of every `k`-base window of a sequence, exactly as
/// Kraken 2 computes them (so that a Kraken 2 database read in place gives Kraken 2's calls).
/// Holds only the parameters; scanning allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minimizers {
    k: u32,
    l: u32,
    spaces: u32,
    mask: u64,
    toggle: u64,
    alphabet: Alphabet,
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
        let mask = spaced_seed_mask(l, spaces);
        let toggle = ORDER_TOGGLE & ((1u64 << (2 * l)) - 1);
        Minimizers { k, l, spaces, mask, toggle, alphabet: Alphabet::Dna { old_reverse_complement: false } }
    }

    /// A scanner with a Kraken 2 database's options (`opts.k2d`): an already expanded seed
    /// mask (0 for none), the toggle mask and the alphabet; `None` if they are out of the range
    /// this scanner supports.
    pub(crate) fn kraken2(k: u64, l: u64, mask: u64, toggle: u64, alphabet: Alphabet) -> Option<Minimizers> {
        let bits = match alphabet {
            Alphabet::Dna { .. } => 2,
            Alphabet::Protein => 4,
        };
        let max_l = if bits == 2 { 31 } else { 15 };
        if !(1..=max_l).contains(&l) || k < l || (k - l + 1) as usize > MAX_WINDOW {
            return None;
        }
        let lmask = (1u64 << (bits * l)) - 1;
        let (k, l) = (k as u32, l as u32);
        // The number of seed positions ignored, for display: groups of bits cleared in the mask.
        let spaces = if mask == 0 {
            0
        } else {
            (0..l).filter(|i| (mask >> (bits as u32 * i)) & ((1 << bits) - 1) == 0).count() as u32
        };
        Some(Minimizers { k, l, spaces, mask: mask & lmask, toggle: toggle & lmask, alphabet })
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

    /// The alphabet.
    pub fn alphabet(&self) -> Alphabet {
        self.alphabet
    }

    /// Calls `f` once for each `k`-base window of `seq`, in order, and returns the number of
    /// windows (`seq.len() - k + 1`, or 0 for a shorter sequence). `f` gets the window's
    /// minimizer, or [`AMBIGUOUS`].
    ///
    /// The minimizer is the canonical `l`-mer (its spaced-seed positions cleared) that comes
    /// first in Kraken 2's order ([`ORDER_TOGGLE`]); the reverse complement of `seq` yields the
    /// same minimizers in reverse order. After a base other than A, C, G, T at position `p`, the
    /// `k - 1` windows ending at `p` to `p + k - 2` are ambiguous, and the window starting at `p`
    /// has the minimizer of its `k - l` l-mers without that base: Kraken 2 (from 2.1.2) does
    /// exactly this, and its counts of ambiguous k-mers enter the confidence threshold.
    #[inline]
    pub fn scan(&self, seq: &[u8], mut f: impl FnMut(u64)) -> u32 {
        match self.alphabet {
            Alphabet::Dna { old_reverse_complement: false } => self.scan_with::<false, false>(seq, &mut f),
            Alphabet::Dna { old_reverse_complement: true } => self.scan_with::<false, true>(seq, &mut f),
            Alphabet::Protein => self.scan_with::<true, false>(seq, &mut f),
        }
    }

    #[inline(always)]
    fn scan_with<const PROTEIN: bool, const OLD_RC: bool>(&self, seq: &[u8], f: &mut impl FnMut(u64)) -> u32 {
        let (k, l) = (self.k as usize, self.l as usize);
        if seq.len() < k {
            return 0;
        }
        let bits = if PROTEIN { 4 } else { 2 };
        let table = if PROTEIN { &PROTEIN_CODES } else { &DNA_CODES };
        let lmask = (1u64 << (bits * l)) - 1;
        let rshift = 2 * (l as u32 - 1);
        // A window is reported when this many valid characters end it (Kraken 2's
        // `queue_pos < k - l` test: the window starting at an ambiguous base counts).
        let need = if k == l { l } else { k - 1 };
        let w = k - l;
        let (mask, toggle) = (self.mask, self.toggle);
        let mut ring = [0u64; MAX_WINDOW];
        let (mut fwd, mut rev) = (0u64, 0u64);
        // Valid characters since the last ambiguous one, and the position (l-mers since then)
        // of the current minimum in the ring.
        let mut run = 0usize;
        let mut best = 0usize;
        for (i, &b) in seq.iter().enumerate() {
            let c = table[b as usize];
            if c == NO_CODE {
                run = 0;
            } else {
                run += 1;
                fwd = ((fwd << bits) | c as u64) & lmask;
                if !PROTEIN && !OLD_RC {
                    rev = (rev >> 2) | ((3 ^ c as u64) << rshift);
                }
                if run >= l {
                    let canon = if PROTEIN {
                        fwd
                    } else if OLD_RC {
                        fwd.min(kraken_reverse_complement(fwd, l as u32, true))
                    } else {
                        fwd.min(rev)
                    };
                    // Masked after canonicalisation, as Kraken 2 does: both strands choose the
                    // same l-mer, then its ignored positions are cleared for ordering and storage.
                    let key = if mask != 0 { canon & mask } else { canon };
                    let h = key ^ toggle;
                    let pos = run - l;
                    ring[pos % MAX_WINDOW] = h;
                    if pos == 0 || best + w < pos {
                        // The old minimum left the window (or there was none): rescan it.
                        let lo = pos.saturating_sub(w);
                        best = lo;
                        for p in lo + 1..=pos {
                            if ring[p % MAX_WINDOW] < ring[best % MAX_WINDOW] {
                                best = p;
                            }
                        }
                    } else if h < ring[best % MAX_WINDOW] {
                        best = pos;
                    }
                }
            }
            if i + 1 >= k {
                f(if run >= need { ring[best % MAX_WINDOW] ^ toggle } else { AMBIGUOUS });
            }
        }
        (seq.len() - k + 1) as u32
    }
}

/// Translates a nucleotide sequence in its six reading frames, as Kraken 2 does for a
/// translated (protein) database: frames 0 to 2 forward, 3 to 5 on the reverse strand; a codon
/// touching a base other than A, C, G, T becomes `X`.
pub(crate) fn translate_frames(dna: &[u8], frames: &mut [Vec<u8>; 6]) {
    const CODONS: &[u8; 64] = b"KKNNRRSSTTTTIMIIEEDDGGGGAAAAVVVVQQHHRRRRPPPPLLLL**YY*WCCSSSSLLFF";
    for f in frames.iter_mut() {
        f.clear();
    }
    if dna.len() < 3 {
        return;
    }
    let (mut fwd, mut rev, mut ambiguous) = (0usize, 0usize, 0u32);
    for (i, &c) in dna.iter().enumerate() {
        let frame = i % 3;
        fwd = (fwd << 2) & 0x3f;
        rev >>= 2;
        ambiguous = ambiguous.saturating_sub(1);
        match c.to_ascii_uppercase() {
            b'A' => rev |= 0x30,
            b'G' => {
                fwd |= 1;
                rev |= 0x20;
            }
            b'C' => {
                fwd |= 2;
                rev |= 0x10;
            }
            b'T' => fwd |= 3,
            _ => ambiguous = 3,
        }
        if i >= 2 {
            let (f, r) = if ambiguous == 0 { (CODONS[fwd], CODONS[rev]) } else { (b'X', b'X') };
            frames[frame].push(f);
            frames[frame + 3].push(r);
        }
    }
    // The reverse frames were built from their last residue to their first.
    for f in &mut frames[3..] {
        f.reverse();
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
        assert_eq!(out.len(), (seq.len() + 1).saturating_sub(m.k() as usize));
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
    fn ambiguous_bases_give_ambiguous_windows_as_in_kraken2() {
        let m = Minimizers::spaced(DEFAULT_K, DEFAULT_L, DEFAULT_SPACES);
        let mut seq = pseudo_random_seq(100, 3);
        assert!(all(&m, &seq).iter().all(|&x| x != AMBIGUOUS));
        // One N at position 40 of 100 bases: Kraken 2 2.1.2 reports `6 valid, A:34, 26 valid`:
        // the k - 1 windows ending at the N and after it are ambiguous; the window starting at the
        // N has the minimizer of its other k - l l-mers.
        seq[40] = b'N';
        let got = all(&m, &seq);
        assert_eq!(got.len(), 66);
        let ambiguous: Vec<usize> = (0..66).filter(|&i| got[i] == AMBIGUOUS).collect();
        assert_eq!(ambiguous, (6..40).collect::<Vec<_>>());
        let expected = (41..41 + 4)
            .map(|j| canonical(pack(&seq[j..j + 31]).unwrap(), 31) & m.mask())
            .min_by_key(|&x| x ^ ORDER_TOGGLE)
            .unwrap();
        assert_eq!(got[40], expected);
        // Shorter than k: nothing; lowercase is valid, U and IUPAC codes are not.
        assert!(all(&m, &seq[..34]).is_empty());
        assert!(all(&m, b"").is_empty());
        let lower: Vec<u8> = seq.iter().map(u8::to_ascii_lowercase).collect();
        assert_eq!(all(&m, &lower), got);
        let mut u = pseudo_random_seq(60, 4);
        u[59] = b'U';
        assert_eq!(all(&m, &u).last(), Some(&AMBIGUOUS));
    }

    #[test]
    fn k_equal_to_l_reports_each_lmer() {
        let m = Minimizers::new(31, 31);
        let mut seq = pseudo_random_seq(40, 9);
        let got = all(&m, &seq);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, canonical(pack(&seq[i..i + 31]).unwrap(), 31));
        }
        // With k = l, every window holding the N is ambiguous (31 of them), none more.
        seq[35] = b'N';
        let got = all(&m, &seq);
        assert_eq!(got.iter().filter(|&&x| x == AMBIGUOUS).count(), 5);
    }

    #[test]
    fn old_reverse_complement_and_protein() {
        // Kraken 2's pre-2.0.8 formula is the complement of the reversed word, not a reverse
        // complement; the current one is.
        let x = pack(b"ACGTTGCAAGGCTTAACCGGTTAAGCTAGCA").unwrap();
        assert_eq!(kraken_reverse_complement(x, 31, false), reverse_complement(x, 31));
        assert_ne!(kraken_reverse_complement(x, 31, true), reverse_complement(x, 31));
        // Protein: the reduced alphabet (I = L, M = V), no canonical form.
        let m = Minimizers::kraken2(15, 12, 0, ORDER_TOGGLE, Alphabet::Protein).unwrap();
        let a = all(&m, b"MKTAYIAKQRQISFVKSHFSRQ");
        let b = all(&m, b"VKTAYLAKQRQLSFMKSHFSRQ");
        assert_eq!(a, b);
        assert_eq!(a.len(), 8);
        assert!(all(&m, b"MKTAYIAKQRQBSFVKSHFSRQ").contains(&AMBIGUOUS));
    }

    #[test]
    fn six_frame_translation() {
        let mut frames: [Vec<u8>; 6] = Default::default();
        translate_frames(b"ATGGCCTAA", &mut frames);
        // The codon ending at position i goes to frame i % 3.
        assert_eq!(frames[2], b"MA*");
        assert_eq!(frames[0], b"WP");
        assert_eq!(frames[1], b"GL");
        // The reverse strand, TTAGGCCAT.
        assert_eq!(frames[5], b"LGH");
        // The three codons touching an N are X.
        translate_frames(b"ATGNCCTAA", &mut frames);
        assert_eq!(
            (frames[0].as_slice(), frames[1].as_slice(), frames[2].as_slice()),
            (&b"XP"[..], &b"XL"[..], &b"MX*"[..])
        );
        translate_frames(b"AT", &mut frames);
        assert!(frames.iter().all(Vec::is_empty));
    }
}
