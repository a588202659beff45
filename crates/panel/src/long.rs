//! Long markers: reads are seeded against a k-mer index of all long markers, aligned without
//! gaps on their best diagonal for each marker they share seeds with, and the aligned bases are
//! piled up per marker position.

use crate::dna::{self, KmerMap, OTHER};

/// An aligned stretch must span at least this many marker bases (or the whole read, if it is
/// shorter): a read that only grazes a marker's end is too short to tell the marker from a
/// relative.
const MIN_OVERLAP: usize = 40;

/// An alignment is kept when at most one base in this many mismatches (80% identity). Lower
/// than any status cut-off so that the pile-up can report how far below the cut-offs a relative
/// of the marker is, high enough that chance seed hits are dropped.
const MAX_MISMATCH_ONE_IN: usize = 5;

/// The score of a mismatch in the local alignment (a match scores 1). At -4, random sequence
/// scores -2.75 a base on average and is clipped within a few bases, while a marker relative
/// at 90% identity still scores +0.5 a base and aligns end to end.
const MISMATCH_PENALTY: i64 = 4;

/// Where a k-mer occurs in the long markers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Occurrence {
    marker: u32,
    // Position << 1 | 1 when the marker holds the k-mer's reverse complement (the canonical form
    // is the smaller of the two strands' codes).
    pos_flip: u32,
}

/// The k-mer index of all long markers of a panel.
pub(crate) struct LongIndex {
    k: usize,
    markers: Vec<Vec<u8>>,
    // Canonical k-mer -> the range of its occurrences in `occurrences`.
    map: KmerMap<(u32, u32)>,
    occurrences: Vec<Occurrence>,
}

/// One read's alignments, gathered for a chunk of reads.
#[derive(Default)]
pub(crate) struct LongHits {
    // (marker, first marker position, length, offset in `bases`)
    alignments: Vec<(u32, u32, u32, u32)>,
    // The read's base codes over each alignment, in marker orientation.
    bases: Vec<u8>,
    /// Reads with at least one alignment.
    pub reads: u64,
}

impl LongHits {
    pub(crate) fn clear(&mut self) {
        self.alignments.clear();
        self.bases.clear();
        self.reads = 0;
    }
}

/// Buffers reused from read to read.
#[derive(Default)]
pub(crate) struct LongScratch {
    reverse: Vec<u8>,
    seeds: Vec<(u32, u8, i64)>,
    best: Vec<(u32, u8, i64)>,
}

impl LongIndex {
    /// Indexes `markers` (sequences of upper-case ACGT, each at least `k` long).
    pub(crate) fn new(markers: &[&[u8]], k: usize) -> LongIndex {
        let mut codes = Vec::new();
        let mut all = Vec::new();
        let mut encoded = Vec::with_capacity(markers.len());
        for (m, seq) in markers.iter().enumerate() {
            dna::encode_into(seq, &mut codes);
            dna::for_each_kmer(&codes, k, |pos, fwd, rev| {
                let (canonical, flip) = if fwd <= rev { (fwd, 0) } else { (rev, 1) };
                let occ = Occurrence { marker: m as u32, pos_flip: (pos as u32) << 1 | flip };
                all.push((canonical, occ));
            });
            encoded.push(codes.clone());
        }
        all.sort_unstable();
        let mut map = KmerMap::default();
        map.reserve(all.len());
        let mut occurrences = Vec::with_capacity(all.len());
        for group in all.chunk_by(|a, b| a.0 == b.0) {
            map.insert(group[0].0, (occurrences.len() as u32, group.len() as u32));
            occurrences.extend(group.iter().map(|g| g.1));
        }
        LongIndex { k, markers: encoded, map, occurrences }
    }

    /// The number of markers indexed.
    pub(crate) fn len(&self) -> usize {
        self.markers.len()
    }

    /// The marker's length.
    pub(crate) fn marker_len(&self, marker: usize) -> usize {
        self.markers[marker].len()
    }

    /// Aligns one read (base codes) and appends its alignments to `out`.
    pub(crate) fn align_read(&self, read: &[u8], scratch: &mut LongScratch, out: &mut LongHits) {
        let (k, len) = (self.k, read.len());
        if len < k || self.occurrences.is_empty() {
            return;
        }
        scratch.seeds.clear();
        dna::for_each_kmer(read, k, |i, fwd, rev| {
            let (canonical, read_flip) = if fwd <= rev { (fwd, 0) } else { (rev, 1) };
            let Some(&(start, n)) = self.map.get(&canonical) else {
                return;
            };
            for occ in &self.occurrences[start as usize..(start + n) as usize] {
                let pos = i64::from(occ.pos_flip >> 1);
                // Same orientation: the read's forward strand holds the marker's k-mer at `i`.
                // Otherwise its reverse complement does, at `len - k - i`.
                let (strand, diagonal) =
                    if occ.pos_flip & 1 == read_flip { (0, pos - i as i64) } else { (1, pos - (len - k - i) as i64) };
                scratch.seeds.push((occ.marker, strand, diagonal));
            }
        });
        if scratch.seeds.is_empty() {
            return;
        }
        // The best diagonal of each marker: the one with most seeds (ties: the first in sort
        // order, so the choice never depends on thread timing).
        scratch.seeds.sort_unstable();
        scratch.best.clear();
        let mut best_count = 0;
        for run in scratch.seeds.chunk_by(|a, b| a == b) {
            let hit = run[0];
            match scratch.best.last_mut() {
                Some(last) if last.0 == hit.0 => {
                    if run.len() > best_count {
                        *last = hit;
                        best_count = run.len();
                    }
                }
                _ => {
                    scratch.best.push(hit);
                    best_count = run.len();
                }
            }
        }
        let mut reverse_ready = false;
        let mut aligned_any = false;
        for &(marker, strand, diagonal) in &scratch.best {
            let oriented: &[u8] = if strand == 0 {
                read
            } else {
                if !reverse_ready {
                    dna::reverse_complement_into(read, &mut scratch.reverse);
                    reverse_ready = true;
                }
                &scratch.reverse
            };
            let target = &self.markers[marker as usize];
            if let Some((first, last)) = ungapped(oriented, target, diagonal) {
                let start = (first as i64 + diagonal) as u32;
                out.alignments.push((marker, start, (last - first) as u32, out.bases.len() as u32));
                out.bases.extend_from_slice(&oriented[first..last]);
                aligned_any = true;
            }
        }
        out.reads += u64::from(aligned_any);
    }
}

/// Aligns `read` to `marker` with read position `i` against marker position `i + diagonal`,
/// without gaps; gives the read range of the alignment when it is long and close enough.
///
/// The alignment is local: the best-scoring stretch of the overlap (match +1, mismatch
/// [`MISMATCH_PENALTY`]), so the end of a read that runs out of the marker's sequence (a gene
/// cut short, an insertion, the edge of a plasmid) is clipped rather than counted as
/// mismatches, while a SNP with a few matching bases on each side stays inside.
fn ungapped(read: &[u8], marker: &[u8], diagonal: i64) -> Option<(usize, usize)> {
    let first = (-diagonal).max(0) as usize;
    let last = (marker.len() as i64 - diagonal).min(read.len() as i64);
    if last <= first as i64 {
        return None;
    }
    let last = last as usize;
    // Kadane's maximum-sum segment, with the counts of the running and the best segment.
    let (mut score, mut start, mut mismatches, mut known) = (0i64, first, 0usize, 0usize);
    let mut best: Option<(i64, usize, usize, usize, usize)> = None;
    for i in first..last {
        let base = read[i];
        if base != OTHER {
            known += 1;
            if base == marker[(i as i64 + diagonal) as usize] {
                score += 1;
            } else {
                score -= MISMATCH_PENALTY;
                mismatches += 1;
            }
        }
        if score <= 0 {
            (score, start, mismatches, known) = (0, i + 1, 0, 0);
        } else if best.is_none_or(|b| score > b.0) {
            best = Some((score, start, i + 1, mismatches, known));
        }
    }
    let (_, start, end, mismatches, known) = best?;
    let needed = MIN_OVERLAP.min(read.len());
    (known >= needed && mismatches * MAX_MISMATCH_ONE_IN <= known).then_some((start, end))
}

/// Per-base counts of the aligned read bases of each long marker; a marker's table is made when
/// its first read aligns, so a large panel of mostly absent markers costs little memory.
pub(crate) struct LongPileup {
    counts: Vec<Option<Vec<[u32; 4]>>>,
}

/// What the pile-up of one long marker says, in hundredths (floored) so the values and the
/// status decided on them agree exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LongSummary {
    /// Percent of marker bases covered by at least one read, x100.
    pub coverage: u64,
    /// Mean depth over all marker bases, x100.
    pub depth: u64,
    /// Percent of covered bases whose majority read base is the marker's, x100.
    pub identity: u64,
}

impl LongPileup {
    pub(crate) fn new(markers: usize) -> LongPileup {
        LongPileup { counts: vec![None; markers] }
    }

    /// Adds a chunk's alignments.
    pub(crate) fn add(&mut self, index: &LongIndex, hits: &LongHits) {
        for &(marker, start, len, at) in &hits.alignments {
            let table =
                self.counts[marker as usize].get_or_insert_with(|| vec![[0; 4]; index.marker_len(marker as usize)]);
            let bases = &hits.bases[at as usize..(at + len) as usize];
            for (cell, &b) in table[start as usize..].iter_mut().zip(bases) {
                if b != OTHER {
                    cell[b as usize] += 1;
                }
            }
        }
    }

    /// Coverage, depth and identity of `marker`.
    pub(crate) fn summary(&self, index: &LongIndex, marker: usize) -> LongSummary {
        let Some(table) = &self.counts[marker] else {
            return LongSummary::default();
        };
        let reference = &index.markers[marker];
        let (mut covered, mut agree, mut total) = (0u64, 0u64, 0u64);
        for (cell, &base) in table.iter().zip(reference) {
            let depth: u32 = cell.iter().sum();
            if depth == 0 {
                continue;
            }
            covered += 1;
            total += u64::from(depth);
            let max = *cell.iter().max().unwrap_or(&0);
            // A tie between the marker's base and another counts as agreement: the sample
            // holds the marker's base as often as any other.
            agree += u64::from(cell[base as usize] == max);
        }
        let len = table.len() as u64;
        LongSummary {
            coverage: covered * 10_000 / len,
            depth: total * 100 / len,
            identity: (agree * 10_000).checked_div(covered).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(s: &[u8]) -> Vec<u8> {
        let mut c = Vec::new();
        dna::encode_into(s, &mut c);
        c
    }

    const MARKER: &[u8] =
        b"GATTACAGATCCGTAGCTAGCTTAGGCATCGATCGGATCCTAGCTAGGCTTACGATCGACTGACTAGCATCGACTAGCTAGCATCGATCAGTCAGTACGA";

    fn pile(reads: &[Vec<u8>]) -> (LongIndex, LongPileup) {
        let index = LongIndex::new(&[MARKER], 11);
        let mut pileup = LongPileup::new(1);
        let (mut scratch, mut hits) = (LongScratch::default(), LongHits::default());
        for r in reads {
            index.align_read(&codes(r), &mut scratch, &mut hits);
        }
        pileup.add(&index, &hits);
        (index, pileup)
    }

    #[test]
    fn both_strands_pile_up_in_marker_orientation() {
        let fwd = MARKER[..60].to_vec();
        let rev = dna::reverse_complement(&MARKER[40..]);
        let (index, pileup) = pile(&[fwd, rev]);
        let s = pileup.summary(&index, 0);
        assert_eq!(s.coverage, 10_000);
        assert_eq!(s.identity, 10_000);
        // 60 + 60 aligned bases over 100.
        assert_eq!(s.depth, 120);
    }

    #[test]
    fn flanks_are_ignored_and_majority_wins() {
        // The read runs 20 bases past the marker's start; the flank is not aligned.
        let mut read = b"CCCCCCCCCCAAAAAAAAAA".to_vec();
        read.extend_from_slice(&MARKER[..50]);
        // One read with a different base at marker position 10 does not sink the consensus of
        // two that agree; three that disagree change it.
        let mut odd = MARKER[..50].to_vec();
        odd[10] = if odd[10] == b'A' { b'C' } else { b'A' };
        let (index, pileup) = pile(&[read.clone(), read.clone(), odd.clone()]);
        let s = pileup.summary(&index, 0);
        assert_eq!((s.coverage, s.identity, s.depth), (5_000, 10_000, 150));
        let (index, pileup) = pile(&[read, odd.clone(), odd.clone()]);
        assert_eq!(pileup.summary(&index, 0).identity, 9_800);
    }

    #[test]
    fn short_overlaps_and_distant_reads_are_dropped() {
        // 30 bases of overlap at the marker's end: below MIN_OVERLAP.
        let mut read = MARKER[70..].to_vec();
        read.extend_from_slice(b"ACGTACGTACGTACGTACGTACGTACGT");
        // A distant relative: after 15 matching bases (a seed), every 4th base differs, so no
        // stretch of 40 bases aligns well.
        let mut far = MARKER[..80].to_vec();
        for b in far.iter_mut().skip(15).step_by(4) {
            *b = if *b == b'A' { b'C' } else { b'A' };
        }
        let (index, pileup) = pile(&[read, far]);
        assert_eq!(pileup.summary(&index, 0), LongSummary::default());
    }

    #[test]
    fn read_that_leaves_the_marker_is_clipped() {
        // 60 bases of the marker, then sequence that is not the marker's.
        let mut read = MARKER[..60].to_vec();
        read.extend(MARKER[60..].iter().map(|&b| if b == b'T' { b'A' } else { b'T' }));
        let (index, pileup) = pile(&[read]);
        let s = pileup.summary(&index, 0);
        assert_eq!((s.coverage, s.identity), (6_000, 10_000));
    }
}
