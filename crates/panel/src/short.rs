//! Short markers: each read is searched for every short marker (both strands) with at most `e`
//! mismatches, by seed and verify.
//!
//! Pigeonhole: split a marker into `e + 1` disjoint parts; a match with at most `e` mismatches
//! leaves at least one part untouched, so an exact hit of some part, checked base by base at the
//! start it implies, finds every such match. Parts are looked up in one hash table per part
//! length, so the cost per read is a few table lookups per read position whatever the number of
//! markers, not a scan of every marker at every offset.

use crate::dna::{self, KmerMap};

/// Seeds are packed in a `u64`.
const MAX_SEED: usize = 32;

struct Pattern {
    marker: u32,
    codes: Vec<u8>,
}

struct SeedTable {
    len: usize,
    // Seed -> range in `entries`.
    map: KmerMap<(u32, u32)>,
    // (pattern, offset of the seed in the pattern)
    entries: Vec<(u32, u32)>,
}

/// The seed index of all short markers of a panel.
pub(crate) struct ShortIndex {
    max_mismatches: usize,
    patterns: Vec<Pattern>,
    tables: Vec<SeedTable>,
}

/// The short markers one chunk of reads matched: one entry per read and marker.
#[derive(Default)]
pub(crate) struct ShortHits {
    pub exact: Vec<u32>,
    pub partial: Vec<u32>,
    /// Reads with at least one match.
    pub reads: u64,
}

impl ShortHits {
    pub(crate) fn clear(&mut self) {
        self.exact.clear();
        self.partial.clear();
        self.reads = 0;
    }
}

/// Buffers reused from read to read.
#[derive(Default)]
pub(crate) struct ShortScratch {
    // (marker, fewest mismatches) for the current read.
    best: Vec<(u32, usize)>,
}

impl ShortIndex {
    /// Indexes `markers` (upper-case ACGT, each at least `max_mismatches + 1` long).
    pub(crate) fn new(markers: &[&[u8]], max_mismatches: usize) -> ShortIndex {
        let parts = max_mismatches + 1;
        let mut patterns = Vec::with_capacity(markers.len() * 2);
        let mut codes = Vec::new();
        for (m, seq) in markers.iter().enumerate() {
            dna::encode_into(seq, &mut codes);
            let mut reverse = Vec::new();
            dna::reverse_complement_into(&codes, &mut reverse);
            patterns.push(Pattern { marker: m as u32, codes: codes.clone() });
            // A marker that is its own reverse complement would be counted once anyway (one
            // count per read and marker), but need not be searched twice.
            if reverse != codes {
                patterns.push(Pattern { marker: m as u32, codes: reverse });
            }
        }
        // (seed length, seed, pattern, offset), grouped into one table per seed length.
        let mut seeds = Vec::new();
        for (p, pattern) in patterns.iter().enumerate() {
            let len = (pattern.codes.len() / parts).clamp(1, MAX_SEED);
            for part in 0..parts {
                let offset = part * len;
                let seed = dna::pack(&pattern.codes[offset..offset + len]);
                seeds.push((len, seed, p as u32, offset as u32));
            }
        }
        seeds.sort_unstable();
        seeds.dedup();
        let mut tables = Vec::new();
        for by_len in seeds.chunk_by(|a, b| a.0 == b.0) {
            let mut table =
                SeedTable { len: by_len[0].0, map: KmerMap::default(), entries: Vec::with_capacity(by_len.len()) };
            for group in by_len.chunk_by(|a, b| a.1 == b.1) {
                table.map.insert(group[0].1, (table.entries.len() as u32, group.len() as u32));
                table.entries.extend(group.iter().map(|g| (g.2, g.3)));
            }
            tables.push(table);
        }
        ShortIndex { max_mismatches, patterns, tables }
    }

    /// Searches one read (base codes) and appends the markers it matches to `out`.
    pub(crate) fn search_read(&self, read: &[u8], scratch: &mut ShortScratch, out: &mut ShortHits) {
        scratch.best.clear();
        let e = self.max_mismatches;
        for table in &self.tables {
            if read.len() < table.len {
                continue;
            }
            dna::for_each_kmer(read, table.len, |i, seed, _| {
                let Some(&(start, n)) = table.map.get(&seed) else {
                    return;
                };
                for &(p, offset) in &table.entries[start as usize..(start + n) as usize] {
                    let pattern = &self.patterns[p as usize];
                    // A match must lie wholly inside the read.
                    let Some(at) = i.checked_sub(offset as usize) else {
                        continue;
                    };
                    let Some(window) = read.get(at..at + pattern.codes.len()) else {
                        continue;
                    };
                    let mismatches = dna::hamming_within(window, &pattern.codes, e);
                    if mismatches > e {
                        continue;
                    }
                    match scratch.best.iter_mut().find(|b| b.0 == pattern.marker) {
                        Some(b) => b.1 = b.1.min(mismatches),
                        None => scratch.best.push((pattern.marker, mismatches)),
                    }
                }
            });
        }
        for &(marker, mismatches) in &scratch.best {
            if mismatches == 0 {
                out.exact.push(marker);
            } else {
                out.partial.push(marker);
            }
        }
        out.reads += u64::from(!scratch.best.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M0: &[u8] = b"ACGTTGCATGCCATAGGCTAGCTTAGCA"; // 28 bp
    const M1: &[u8] = b"TTGACCATGGATCCAGTAGC"; // 20 bp

    fn search(index: &ShortIndex, read: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let mut codes = Vec::new();
        dna::encode_into(read, &mut codes);
        let mut out = ShortHits::default();
        index.search_read(&codes, &mut ShortScratch::default(), &mut out);
        (out.exact, out.partial)
    }

    fn with_snps(seq: &[u8], positions: &[usize]) -> Vec<u8> {
        let mut s = seq.to_vec();
        for &p in positions {
            s[p] = if s[p] == b'A' { b'G' } else { b'A' };
        }
        s
    }

    #[test]
    fn exact_partial_and_too_far() {
        let index = ShortIndex::new(&[M0, M1], 3);
        let flank = b"CCCCCAAAAAGGGGG";
        let read = |m: &[u8]| [flank, m, flank].concat();
        assert_eq!(search(&index, &read(M0)), (vec![0], vec![]));
        // Mismatches spread so every part of the marker but one is hit.
        assert_eq!(search(&index, &read(&with_snps(M0, &[1, 9, 16]))), (vec![], vec![0]));
        assert_eq!(search(&index, &read(&with_snps(M0, &[1, 9, 16, 23]))), (vec![], vec![]));
        // Both markers in one read; the second on the reverse strand.
        let both = [&read(M1)[..], &dna::reverse_complement(M0)].concat();
        let (mut exact, partial) = search(&index, &both);
        exact.sort();
        assert_eq!((exact, partial), (vec![0, 1], vec![]));
    }

    #[test]
    fn exact_beats_partial_in_one_read_and_counts_once() {
        let index = ShortIndex::new(&[M0], 3);
        let read = [M0, b"TTTT", &with_snps(M0, &[3]), M0].concat();
        assert_eq!(search(&index, &read), (vec![0], vec![]));
    }

    #[test]
    fn matches_must_be_inside_the_read_and_n_is_a_mismatch() {
        let index = ShortIndex::new(&[M0], 3);
        assert_eq!(search(&index, &M0[..27]), (vec![], vec![]));
        assert_eq!(search(&index, &with_snps(M0, &[0])[..]).1, vec![0]);
        let mut n = M0.to_vec();
        n[5] = b'N';
        assert_eq!(search(&index, &n), (vec![], vec![0]));
    }

    #[test]
    fn zero_mismatches_allowed() {
        let index = ShortIndex::new(&[M0], 0);
        assert_eq!(search(&index, M0), (vec![0], vec![]));
        assert_eq!(search(&index, &with_snps(M0, &[20])), (vec![], vec![]));
    }
}
