//! Read quality control counted record by record, as a reader streams a sample
//! ([`QcCounter`]), summed up as `mgds_api::ReadQc`.
//!
//! The counter's memory is fixed whatever the sample: lengths in 7,424 buckets (exact below 256
//! bases, then 128 per doubling, each within 1%), base qualities in 832 position buckets (each
//! position below 256 alone, then 32 per doubling) of 94 Phred values, read qualities in 61 and
//! GC content in 101. About 740 KB.

use mgds_api::{LengthBin, MAX_LENGTH_BINS, MAX_POSITION_BINS, MAX_QUALITY, PositionQuality, ReadQc};

use crate::lengths::LengthHistogram;
use crate::{Format, Record};

/// Positions counted exactly below this.
const EXACT: u64 = 256;
/// Position buckets per doubling above [`EXACT`], up to 2^26 bases (a position past that
/// counts in the last bucket).
const POSITION_PER_DOUBLING: u64 = 32;
const POSITION_BUCKETS: usize = (EXACT + POSITION_PER_DOUBLING * 18) as usize;
/// Phred scores 0..=93, each counted as itself (`!` to `~`).
const QUALITIES: usize = 94;
/// Bases of every read count in the distribution by position until this many are counted
/// (the first 28,000 reads of 150 bases, or 400 of 10,000) ...
const POSITION_ALL: u64 = 4 << 20;
/// ... and after them, one read in this many (odd, so that read 1 and read 2 of pairs, which
/// come in turn, are both counted). Counting by position is most of the counting's cost; a
/// quartile of a position from 28,000 reads and one in 13 of the rest is the whole sample's to
/// within a score.
const POSITION_EVERY: u64 = 13;
const READ_QUALITIES: usize = MAX_QUALITY as usize + 1;

/// Counts a sample's records for its quality control; [`QcCounter::finish`] sums them up.
#[derive(Clone)]
pub struct QcCounter {
    reads: u64,
    bases: u64,
    lengths: LengthHistogram,
    gc_bases: u64,
    at_bases: u64,
    /// [`POSITION_BUCKETS`] × [`QUALITIES`] counts: quality `q` at bucket `b` is
    /// `b * QUALITIES + q` (a bucket's counts side by side, as a long read fills them).
    positions: Vec<u64>,
    /// Bases counted by position so far.
    position_bases: u64,
    /// [`QUALITIES`] × [`EXACT`] counts of the positions below 256 since they were last
    /// emptied into `positions` (each record adds at most one to each).
    near: Vec<u16>,
    near_reads: u64,
    quality_bases: u64,
    quality_sum: u64,
    q30: u64,
    read_quality: [u64; READ_QUALITIES],
    /// Reads by GC percentage (see [`QcCounter::add_gc`]).
    gc_content: [u64; 101],
    gc_step: f64,
}

impl Default for QcCounter {
    fn default() -> Self {
        QcCounter {
            reads: 0,
            bases: 0,
            lengths: LengthHistogram::default(),
            gc_bases: 0,
            at_bases: 0,
            positions: vec![0; POSITION_BUCKETS * QUALITIES],
            near: vec![0; QUALITIES * EXACT as usize],
            near_reads: 0,
            position_bases: 0,
            quality_bases: 0,
            quality_sum: 0,
            q30: 0,
            read_quality: [0; READ_QUALITIES],
            gc_content: [0; 101],
            gc_step: 0.0,
        }
    }
}

fn length_range(b: usize) -> (u64, u64) {
    LengthHistogram::range(b)
}

/// The first position (0-based) of a position bucket; the bucket after the last starts at
/// `u64::MAX`.
fn position_start(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        return b;
    }
    if b >= POSITION_BUCKETS as u64 {
        return u64::MAX;
    }
    let (e, m) = ((b - EXACT) / POSITION_PER_DOUBLING + 8, (b - EXACT) % POSITION_PER_DOUBLING);
    (POSITION_PER_DOUBLING + m) << (e - 5)
}

impl QcCounter {
    /// A counter with nothing counted.
    pub fn new() -> Self {
        QcCounter::default()
    }

    /// Counts one record (each mate of a pair is a record). Written for speed: it runs for
    /// every base of every sample, beside the classification.
    pub fn add(&mut self, record: &Record) {
        let seq = record.sequence();
        let len = seq.len() as u64;
        self.reads += 1;
        self.bases += len;
        self.lengths.add(len);

        // Compares only, into byte counters over 255 bases at a time, so that the loop is
        // vectorised.
        let (mut gc, mut at) = (0u64, 0u64);
        for chunk in seq.chunks(255) {
            let (mut g, mut a) = (0u8, 0u8);
            for &b in chunk {
                let u = b & 0xDF;
                g = g.wrapping_add(u8::from(u == b'G') | u8::from(u == b'C'));
                a = a.wrapping_add(u8::from(u == b'A') | u8::from(u == b'T'));
            }
            gc += u64::from(g);
            at += u64::from(a);
        }
        self.gc_bases += gc;
        self.at_bases += at;
        if gc + at > 0 {
            self.add_gc(gc, gc + at);
        }

        let quality = record.quality();
        if record.format() != Some(Format::Fastq) || quality.is_empty() {
            return;
        }
        // Every base: its score summed and its Q30 counted (compares and byte sums, vectorised).
        let (mut sum, mut q30) = (0u64, 0u64);
        for chunk in quality.chunks(255) {
            // 255 scores of at most 255 fit 16 bits (65,025), twice the lanes of 32.
            let (mut s, mut n) = (0u16, 0u8);
            for &c in chunk {
                let q = c.wrapping_sub(33);
                s = s.wrapping_add(u16::from(q));
                n = n.wrapping_add(u8::from(q >= 30));
            }
            sum += u64::from(s);
            q30 += u64::from(n);
        }
        self.quality_bases += quality.len() as u64;
        self.quality_sum += sum;
        self.q30 += q30;
        // The distribution by position: from every read until [`POSITION_ALL`] bases are
        // counted, then from one read in [`POSITION_EVERY`]. Mates of pairs are pooled in one
        // profile.
        if self.position_bases < POSITION_ALL || self.reads.is_multiple_of(POSITION_EVERY) {
            self.count_positions(quality);
        }
        // The read's quality: the mean of its scores, as FastQC gives it.
        let q = (sum / quality.len() as u64).min(u64::from(MAX_QUALITY));
        self.read_quality[q as usize] += 1;
    }

    /// Counts a read with `gc` G or C of `acgt` bases. Its GC count stands for the percentages
    /// from `(gc - 0.5) / acgt` to `(gc + 0.5) / acgt` (clipped to 0–100); the read counts at a
    /// point of that range picked by a low-discrepancy sequence (the golden ratio's multiples),
    /// so that the reads of one count spread evenly over it. Counting at the count's own
    /// percentage would draw a comb wherever the possible counts fall unevenly on whole
    /// percentages (150 bases: two counts in some, one in others).
    fn add_gc(&mut self, gc: u64, acgt: u64) {
        let lo = ((gc as f64 - 0.5) / acgt as f64 * 100.0).max(0.0);
        let hi = ((gc as f64 + 0.5) / acgt as f64 * 100.0).min(100.0);
        self.gc_step = (self.gc_step + 0.618_033_988_749_894_9).fract();
        let at = lo + (hi - lo) * self.gc_step;
        self.gc_content[(at.round() as usize).min(100)] += 1;
    }

    /// Counts each base of `quality` at its position.
    fn count_positions(&mut self, quality: &[u8]) {
        let exact = quality.len().min(EXACT as usize);
        for (i, &c) in quality[..exact].iter().enumerate() {
            let q = usize::from(c.wrapping_sub(33).min(93));
            self.near[q * EXACT as usize + i] += 1;
        }
        self.near_reads += 1;
        if self.near_reads == u64::from(u16::MAX) {
            self.empty_near();
        }
        let mut b = EXACT as usize;
        let mut start = exact;
        while start < quality.len() {
            let end = if b + 1 >= POSITION_BUCKETS {
                quality.len()
            } else {
                (position_start(b + 1) as usize).min(quality.len())
            };
            let slot: &mut [u64; QUALITIES] =
                (&mut self.positions[b * QUALITIES..(b + 1) * QUALITIES]).try_into().expect("a bucket's counts");
            for &c in &quality[start..end] {
                slot[usize::from(c.wrapping_sub(33).min(93))] += 1;
            }
            start = end;
            b += 1;
        }
        self.position_bases += quality.len() as u64;
    }

    /// Adds the 16-bit counts of the first positions to the totals and sets them to zero.
    fn empty_near(&mut self) {
        for (q, row) in self.near.chunks_exact_mut(EXACT as usize).enumerate() {
            for (i, c) in row.iter_mut().enumerate() {
                self.positions[i * QUALITIES + q] += u64::from(*c);
                *c = 0;
            }
        }
        self.near_reads = 0;
    }

    /// Records counted so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The summary, judged against the thresholds. `paired`: the records were mates of pairs
    /// (read 1 and read 2 in turn).
    pub fn finish(&mut self, paired: bool) -> ReadQc {
        self.empty_near();
        let (median_length, n50) = self.median_and_n50();
        let long_reads = median_length > mgds_api::LONG_READS;
        let acgt = self.gc_bases + self.at_bases;
        let quality = self.quality_bases > 0;
        let (lengths, lengths_log_scale) = self.length_bins(long_reads);
        let mut qc = ReadQc {
            reads: self.reads,
            pairs: if paired { self.reads / 2 } else { 0 },
            bases: self.bases,
            min_length: self.lengths.min(),
            max_length: self.lengths.max(),
            mean_length: if self.reads == 0 { 0.0 } else { self.bases as f64 / self.reads as f64 },
            median_length,
            n50,
            long_reads,
            gc: if acgt == 0 { 0.0 } else { self.gc_bases as f64 / acgt as f64 },
            n_share: if self.bases == 0 { 0.0 } else { (self.bases - acgt) as f64 / self.bases as f64 },
            mean_quality: quality.then(|| self.quality_sum as f64 / self.quality_bases as f64),
            q30_share: quality.then(|| self.q30 as f64 / self.quality_bases as f64),
            lengths,
            lengths_log_scale,
            quality_by_position: if quality { self.position_bins() } else { Vec::new() },
            read_quality: if quality { self.read_quality.to_vec() } else { Vec::new() },
            gc_content: self.gc_content.to_vec(),
            failures: Vec::new(),
        };
        qc.failures = qc.judge();
        qc
    }

    /// The median length and the N50, each the middle of its bucket (exact below 256 bases).
    fn median_and_n50(&self) -> (u64, u64) {
        if self.reads == 0 {
            return (0, 0);
        }
        // The median as the classification's own takes it (one histogram for both).
        let median = self.lengths.median().unwrap_or(0);
        // N50: from the longest down, the length at which half the bases are reached.
        let mut bases = 0u128;
        let half_bases = u128::from(self.bases).div_ceil(2);
        let mut n50 = 0;
        for (b, &c) in self.lengths.counts().iter().enumerate().rev() {
            if c == 0 {
                continue;
            }
            let (lo, hi) = length_range(b);
            bases += u128::from(c) * u128::from((lo + hi) / 2);
            if bases >= half_bases {
                n50 = LengthHistogram::middle(b);
                break;
            }
        }
        (median, n50.clamp(self.lengths.min(), self.lengths.max()))
    }

    /// Lengths from the shortest to the longest in at most [`MAX_LENGTH_BINS`] bins: equal
    /// widths for short reads, equal ratios for long reads (whose lengths span decades).
    fn length_bins(&self, long_reads: bool) -> (Vec<LengthBin>, bool) {
        if self.reads == 0 {
            return (Vec::new(), false);
        }
        let (lo, hi) = (self.lengths.min(), self.lengths.max());
        // The shortest length above zero (an empty record does not decide the scale).
        let shortest = self
            .lengths
            .counts()
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, c)| **c > 0)
            .map_or(hi, |(b, _)| length_range(b).0)
            .max(1);
        let n = MAX_LENGTH_BINS as u64;
        let log = long_reads && hi / shortest >= 4;
        let edges: Vec<u64> = if log {
            let ratio = (hi as f64 / shortest as f64).powf(1.0 / (n - 1) as f64);
            let mut e: Vec<u64> = Vec::with_capacity(MAX_LENGTH_BINS);
            if lo < shortest {
                e.push(lo);
            }
            e.extend((0..n - e.len() as u64).map(|i| (shortest as f64 * ratio.powi(i as i32)).round() as u64));
            e.dedup();
            e.retain(|&x| x <= hi);
            e
        } else {
            let width = (hi - lo + 1).div_ceil(n).max(1);
            (0..n).map(|i| lo + i * width).take_while(|&s| s <= hi).collect()
        };
        let mut bins: Vec<LengthBin> = edges
            .iter()
            .enumerate()
            .map(|(i, &from)| {
                let to = edges.get(i + 1).map_or(hi, |next| next - 1);
                LengthBin { from, to, reads: 0 }
            })
            .collect();
        for (b, &c) in self.lengths.counts().iter().enumerate() {
            if c == 0 {
                continue;
            }
            let (blo, bhi) = length_range(b);
            let at = ((blo + bhi) / 2).clamp(lo, hi);
            let i = bins.partition_point(|bin| bin.to < at).min(bins.len() - 1);
            bins[i].reads += c;
        }
        (bins, log)
    }

    /// Quality by position: the buckets that hold bases, merged in neighbouring pairs until at
    /// most [`MAX_POSITION_BINS`] are left.
    fn position_bins(&self) -> Vec<PositionQuality> {
        let mut bins: Vec<(u64, u64, [u64; QUALITIES])> = Vec::new();
        for b in 0..POSITION_BUCKETS {
            let mut h = [0u64; QUALITIES];
            h.copy_from_slice(&self.positions[b * QUALITIES..(b + 1) * QUALITIES]);
            if h.iter().all(|&c| c == 0) {
                continue;
            }
            let from = position_start(b) + 1;
            let longest = self.lengths.max();
            let to = if b + 1 >= POSITION_BUCKETS { longest } else { position_start(b + 1) };
            bins.push((from, to.min(longest).max(from), h));
        }
        // The first positions stay each alone; the bins after them are merged in neighbouring
        // pairs until the whole fits.
        let head = bins.iter().take_while(|b| b.0 <= EXACT).count();
        let mut tail = bins.split_off(head);
        while bins.len() + tail.len() > MAX_POSITION_BINS {
            tail = tail
                .chunks(2)
                .map(|pair| {
                    let mut h = pair[0].2;
                    if let Some(next) = pair.get(1) {
                        for (a, b) in h.iter_mut().zip(next.2) {
                            *a += b;
                        }
                    }
                    (pair[0].0, pair[pair.len() - 1].1, h)
                })
                .collect();
        }
        bins.extend(tail);
        bins.into_iter()
            .map(|(from, to, h)| {
                let bases: u64 = h.iter().sum();
                let sum: u64 = h.iter().enumerate().map(|(q, &c)| q as u64 * c).sum();
                let at = |share: f64| {
                    let want = ((bases as f64 * share).ceil() as u64).max(1);
                    let mut seen = 0;
                    for (q, &c) in h.iter().enumerate() {
                        seen += c;
                        if seen >= want {
                            return q as u8;
                        }
                    }
                    (QUALITIES - 1) as u8
                };
                PositionQuality {
                    from,
                    to,
                    bases,
                    mean: sum as f64 / bases as f64,
                    p10: at(0.1),
                    q1: at(0.25),
                    median: at(0.5),
                    q3: at(0.75),
                    p90: at(0.9),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reader;

    fn count(text: &str) -> QcCounter {
        let mut reader = Reader::new(text.as_bytes());
        let mut record = Record::default();
        let mut qc = QcCounter::new();
        while reader.read_record(&mut record).unwrap() > 0 {
            qc.add(&record);
        }
        qc
    }

    #[test]
    fn figures_of_a_small_fastq() {
        // Qualities: 'I' is Q40, '+' is Q10, '5' is Q20.
        let qc = count("@a\nACGTN\n+\nIIII+\n@b\nGGCC\n+\n5555\n@c\nAT\n+\nII\n").finish(false);
        assert_eq!((qc.reads, qc.bases, qc.min_length, qc.max_length, qc.pairs), (3, 11, 2, 5, 0));
        assert_eq!(qc.median_length, 4);
        // Bases by length from the longest: 5, then 5 + 4 >= 6.
        assert_eq!(qc.n50, 4);
        assert!((qc.gc - 6.0 / 10.0).abs() < 1e-12);
        assert!((qc.n_share - 1.0 / 11.0).abs() < 1e-12);
        assert!((qc.mean_quality.unwrap() - (4.0 * 40.0 + 10.0 + 4.0 * 20.0 + 80.0) / 11.0).abs() < 1e-12);
        assert!((qc.q30_share.unwrap() - 6.0 / 11.0).abs() < 1e-12);
        // Position 1: Q40, Q20, Q40.
        let p1 = qc.quality_by_position[0];
        assert_eq!((p1.from, p1.to, p1.bases, p1.median, p1.p10, p1.p90), (1, 1, 3, 40, 20, 40));
        assert_eq!(qc.quality_by_position.len(), 5);
        assert_eq!(qc.quality_by_position[4].median, 10);
        // Read quality, the mean score rounded down: read a is 170 / 5 = Q34.
        assert_eq!(qc.read_quality[34], 1);
        assert_eq!(qc.read_quality[20], 1);
        assert_eq!(qc.read_quality[40], 1);
        // 2 of 4 (37.5–62.5%), 4 of 4 (87.5–100%), 0 of 2 (0–25%), each within its range.
        assert_eq!(qc.gc_content.iter().sum::<u64>(), 3, "{:?}", qc.gc_content);
        assert_eq!(qc.gc_content[..26].iter().sum::<u64>(), 1, "{:?}", qc.gc_content);
        assert_eq!(qc.gc_content[38..63].iter().sum::<u64>(), 1, "{:?}", qc.gc_content);
        assert_eq!(qc.gc_content[87..].iter().sum::<u64>(), 1, "{:?}", qc.gc_content);
        assert_eq!(qc.lengths.iter().map(|b| b.reads).sum::<u64>(), 3);
        assert_eq!(qc.lengths.first().unwrap().from, 2);
        assert_eq!(qc.lengths.last().unwrap().to, 5);
        // Three reads: under the thousand.
        assert_eq!(qc.failures.len(), 3, "{:?}", qc.failures);
    }

    #[test]
    fn fasta_has_no_quality_figures() {
        let qc = count(">a\nACGT\n>b\nACGTACGT\n").finish(false);
        assert_eq!(qc.mean_quality, None);
        assert!(qc.quality_by_position.is_empty() && qc.read_quality.is_empty());
        assert_eq!(qc.bases, 12);
    }

    #[test]
    fn long_reads_are_binned_and_bounded() {
        let mut text = String::new();
        for (i, len) in [900usize, 2_000, 5_000, 12_000, 40_000, 150_000].iter().enumerate() {
            text.push_str(&format!("@r{i}\n{}\n+\n{}\n", "ACGT".repeat(len / 4), "5".repeat(*len)));
        }
        let qc = count(&text).finish(false);
        assert!(qc.long_reads && qc.lengths_log_scale);
        assert!(qc.lengths.len() <= MAX_LENGTH_BINS && qc.quality_by_position.len() <= MAX_POSITION_BINS);
        assert_eq!(qc.lengths.iter().map(|b| b.reads).sum::<u64>(), 6);
        assert_eq!(qc.quality_by_position.iter().map(|b| b.bases).sum::<u64>(), qc.bases);
        assert_eq!(qc.quality_by_position.last().unwrap().to, 150_000);
        // Half of 209,900 bases is in the longest read.
        assert!((qc.n50 as f64 - 150_000.0).abs() / 150_000.0 < 0.01, "{}", qc.n50);
        for w in qc.quality_by_position.windows(2) {
            assert_eq!(w[0].to + 1, w[1].from, "{:?}", w);
        }
        assert!(qc.quality_by_position.iter().all(|b| b.median == 20));
    }

    #[test]
    fn the_first_positions_count_past_sixteen_bits() {
        let qc = count(&"@r\nACG\n+\nII5\n".repeat(70_000)).finish(false);
        assert_eq!(qc.quality_by_position.len(), 3);
        assert!(qc.quality_by_position.iter().all(|p| p.bases == 70_000), "{:?}", qc.quality_by_position);
        assert_eq!(qc.quality_by_position[2].median, 20);
        assert_eq!(qc.read_quality[33], 70_000);
    }

    #[test]
    fn past_four_million_bases_one_read_in_thirteen_counts_by_position() {
        let read = format!("@r\n{}\n+\n{}\n", "A".repeat(200), "I".repeat(200));
        let qc = count(&read.repeat(100_000)).finish(false);
        // Every read until 4 Mi bases are counted (20,972 reads of 200), then one in thirteen.
        let all = (4u64 << 20).div_ceil(200);
        let counted = all + (all + 1..=100_000u64).filter(|r| r % 13 == 0).count() as u64;
        assert!(qc.quality_by_position.iter().all(|p| p.bases == counted), "{counted}");
        assert_eq!(qc.mean_quality, Some(40.0));
        assert_eq!(qc.read_quality[40], 100_000);
    }

    #[test]
    fn past_the_first_bases_both_mates_are_sampled() {
        // 300-base mates in turn (1, 2, 1, 2, ...): read 1 scores Q40, read 2 Q20.
        let pair = format!(
            "@p/1\n{}\n+\n{}\n@p/2\n{}\n+\n{}\n",
            "A".repeat(300),
            "I".repeat(300),
            "A".repeat(300),
            "5".repeat(300)
        );
        let qc = count(&pair.repeat(60_000)).finish(true);
        assert_eq!(qc.pairs, 60_000);
        // Both mates are in the profile in about equal numbers: the median is read 1's or
        // read 2's score and the mean near their middle.
        let p = qc.quality_by_position[0];
        assert!((p.mean - 30.0).abs() < 0.5, "{p:?}");
        // Each of the first 256 positions alone, then the rest in 8-base bins.
        assert_eq!(qc.quality_by_position.len(), 256 + 6, "{}", qc.quality_by_position.len());
        assert_eq!((qc.quality_by_position[255].from, qc.quality_by_position[256].from), (256, 257));
        assert!(!qc.lengths_log_scale);
    }

    #[test]
    fn gc_of_150_base_reads_draws_no_comb() {
        // One read of each GC count from 60 to 90 of 150 bases (40–60%): every whole
        // percentage in between gets about the same share.
        let mut qc = QcCounter::new();
        for _ in 0..300 {
            for g in 60..=90u64 {
                qc.add_gc(g, 150);
            }
        }
        let inner: Vec<u64> = qc.gc_content[42..=58].to_vec();
        let (lo, hi) = inner.iter().fold((u64::MAX, 0), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(hi as f64 / lo as f64 <= 1.03, "{inner:?}");
        assert_eq!(qc.gc_content.iter().sum::<u64>(), 300 * 31);
    }

    #[test]
    fn position_buckets_tile_the_read() {
        // Each position alone below 256, then 8 positions a bucket up to 512, doubling every
        // 32 buckets.
        for b in 0..POSITION_BUCKETS - 1 {
            let width = position_start(b + 1) - position_start(b);
            let want = if b < 256 { 1 } else { 8 << ((b - 256) / 32) };
            assert_eq!(width, want, "bucket {b}");
        }
        assert_eq!(position_start(256), 256);
        assert_eq!(position_start(POSITION_BUCKETS - 1), (POSITION_PER_DOUBLING * 2 - 1) << 20);
        for len in [1u64, 255, 256, 257, 1000, 123_456, 1 << 40] {
            let (lo, hi) = length_range(LengthHistogram::bucket(len));
            assert!(lo <= len && len <= hi, "{len}: {lo}..={hi}");
        }
    }
}
