//! Read quality control of a sample (an MGDS addition to the classification results): what the
//! service measured of the reads while its classification engine read them, and whether the
//! sample passes the stated thresholds ([`QC_THRESHOLDS`]).
//!
//! Every collection here is bounded whatever the sample's size: the length histogram has at
//! most [`MAX_LENGTH_BINS`] bins, the quality by position at most [`MAX_POSITION_BINS`], the
//! read-quality histogram [`MAX_QUALITY`] + 1 values and the GC histogram 101.

use serde::{Deserialize, Serialize};

use crate::null_as_default;

/// Most entries of [`ReadQc::failures`] a client shows, and the longest it shows, in
/// characters.
pub const MAX_FAILURES: usize = 10;
/// See [`MAX_FAILURES`].
pub const MAX_FAILURE_CHARS: usize = 300;
/// Most bins of [`ReadQc::lengths`].
pub const MAX_LENGTH_BINS: usize = 64;
/// Most bins of [`ReadQc::quality_by_position`] (the 256 first positions each alone, then
/// bins).
pub const MAX_POSITION_BINS: usize = 512;
/// The highest read quality (Phred) counted as itself in [`ReadQc::read_quality`]; higher ones
/// count as this (Q60 is one error in a million bases). Base qualities are counted up to Q93.
pub const MAX_QUALITY: u8 = 60;

/// Fewest reads for a sample to pass: fewer make a profile whose shares move with a handful of
/// reads.
pub const MIN_READS: u64 = 1_000;
/// Lowest mean base quality (Phred) of short reads to pass: Q20, one error in a hundred bases.
pub const MIN_MEAN_QUALITY_SHORT: f64 = 20.0;
/// Lowest mean base quality (Phred) of long reads to pass: Q10. This is the mean of the base
/// scores, which reads higher than Oxford Nanopore's own read quality (an average of error
/// probabilities): the bar is lenient, for runs that went wrong rather than ordinary ones.
pub const MIN_MEAN_QUALITY_LONG: f64 = 10.0;
/// Highest share of N (and other ambiguous) bases to pass.
pub const MAX_N_SHARE: f64 = 0.05;
/// Shortest median length of short reads to pass: below it, too few 35-base k-mers per read
/// are left to classify on.
pub const MIN_MEDIAN_LENGTH: u64 = 50;

/// The thresholds a sample is judged by, in words, for screens, exports and the README.
pub const QC_THRESHOLDS: [&str; 5] = [
    "at least 1000 reads (each mate of a pair counts)",
    "mean base quality at least Q20 for short reads and Q10 for long reads (median length over 1000 bases)",
    "at most 5% N or other ambiguous bases",
    "median read length at least 50 bases",
    "reads with qualities (FASTQ) are judged on quality; FASTA reads are not",
];

/// Read quality control of one sample, measured as the classification engine read it. Read
/// leniently: a field missing from a service's answer is read as empty or zero rather than
/// failing the whole results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReadQc {
    /// Records read (each mate of a pair counts once).
    pub reads: u64,
    /// Pairs (0 for single reads).
    pub pairs: u64,
    /// Bases in all records.
    pub bases: u64,
    /// Shortest record, in bases.
    pub min_length: u64,
    /// Longest record, in bases.
    pub max_length: u64,
    /// Mean record length.
    pub mean_length: f64,
    /// Median record length (exact below 256 bases, else within 1%).
    pub median_length: u64,
    /// N50: the length such that records at least this long hold half the bases (exact below
    /// 256 bases, else within 1%).
    pub n50: u64,
    /// Whether these are long reads (median length over 1,000 bases): positions are binned,
    /// the quality threshold is Q10, and N50 is the length figure to read.
    pub long_reads: bool,
    /// G and C as a share of the A, C, G and T bases.
    pub gc: f64,
    /// N and other ambiguous bases as a share of all bases.
    pub n_share: f64,
    /// Mean Phred score of all bases (`None` for FASTA).
    #[serde(default)]
    pub mean_quality: Option<f64>,
    /// Share of bases at Q30 or above (`None` for FASTA).
    #[serde(default)]
    pub q30_share: Option<f64>,
    /// Records by length, in at most [`MAX_LENGTH_BINS`] bins covering every length seen.
    #[serde(default, deserialize_with = "null_as_default")]
    pub lengths: Vec<LengthBin>,
    /// Whether the length bins are of equal ratios (a log scale: long reads whose lengths span
    /// a factor of 4 or more) rather than of equal widths.
    pub lengths_log_scale: bool,
    /// Base quality by position in the read (empty for FASTA): each position alone below 256,
    /// then positions in bins (32 per doubling), neighbouring bins merged until at most
    /// [`MAX_POSITION_BINS`] are left. Counted from every read until 4 Mi bases are counted,
    /// then from one read in thirteen (the mean quality and the Q30 share count every base).
    #[serde(default, deserialize_with = "null_as_default")]
    pub quality_by_position: Vec<PositionQuality>,
    /// Records by read quality: entry `q` counts the records whose mean base score is `q`
    /// (rounded down, as FastQC's per-sequence quality; the last entry, [`MAX_QUALITY`], counts
    /// everything above). Empty for FASTA. A mean of scores reads higher than Oxford Nanopore's
    /// own read quality, which averages error probabilities.
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_quality: Vec<u64>,
    /// Records by GC content, 101 entries: entry `p` counts records with `p`% GC, each record
    /// shared out over the whole percentages its GC count stands for (rounded to whole
    /// records), so that reads of one length draw no comb.
    #[serde(default, deserialize_with = "null_as_default")]
    pub gc_content: Vec<u64>,
    /// The thresholds the sample failed, in words (empty when it passed).
    #[serde(default, deserialize_with = "null_as_default")]
    pub failures: Vec<String>,
}

/// Records whose length is in `from..=to`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LengthBin {
    /// Shortest length in the bin.
    pub from: u64,
    /// Longest length in the bin.
    pub to: u64,
    /// Records in the bin.
    pub reads: u64,
}

/// Base qualities at positions `from..=to` (1-based) of the reads that reach them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PositionQuality {
    /// First position of the bin (1 is a read's first base).
    pub from: u64,
    /// Last position of the bin.
    pub to: u64,
    /// Bases counted at these positions.
    pub bases: u64,
    /// Mean Phred score.
    pub mean: f64,
    /// 10th percentile.
    pub p10: u8,
    /// Lower quartile.
    pub q1: u8,
    /// Median.
    pub median: u8,
    /// Upper quartile.
    pub q3: u8,
    /// 90th percentile.
    pub p90: u8,
}

impl ReadQc {
    /// Whether the sample passed every threshold.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The thresholds these figures fail, in words, each saying what it means and what to do
    /// ([`QC_THRESHOLDS`]).
    pub fn judge(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.reads < MIN_READS {
            out.push(format!(
                "only {} reads (each mate counts): with fewer than {} a handful of reads moves the profile's shares; sequence deeper or combine runs of the same library",
                thousands(self.reads),
                thousands(MIN_READS)
            ));
        }
        if let Some(q) = self.mean_quality {
            let (min, kind) = if self.long_reads {
                (MIN_MEAN_QUALITY_LONG, "long reads")
            } else {
                (MIN_MEAN_QUALITY_SHORT, "short reads")
            };
            if q < min {
                // Rounded down, so that the figure shown is below the bar it failed.
                let shown = (q * 10.0).floor() / 10.0;
                out.push(format!(
                    "mean base quality Q{shown:.1} is below Q{min:.0} for {kind}: many reads will be misread, misclassified or left unclassified; check the run's quality report, or quality-trim the reads and upload them again"
                ));
            }
        }
        if self.n_share > MAX_N_SHARE {
            // Rounded up, so that the figure shown is above the bar it failed.
            let shown = (self.n_share * 1000.0).ceil() / 10.0;
            out.push(format!(
                "{shown:.1}% of bases are N or ambiguous (at most {:.0}%): the classifier skips the stretches around them, so fewer reads are classified; check the run for failed cycles, or filter out reads with many N",
                MAX_N_SHARE * 100.0
            ));
        }
        if self.median_length < MIN_MEDIAN_LENGTH && self.reads > 0 {
            out.push(format!(
                "median read length {} bases is under {MIN_MEDIAN_LENGTH}: reads this short match too little of a genome to be classified reliably; check that adapter trimming did not cut the reads down",
                self.median_length
            ));
        }
        out
    }
}

/// `1234567` as `1,234,567`: counts in messages, tables and charts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qc() -> ReadQc {
        ReadQc {
            reads: 10_000,
            pairs: 5_000,
            bases: 1_500_000,
            min_length: 150,
            max_length: 150,
            mean_length: 150.0,
            median_length: 150,
            n50: 150,
            long_reads: false,
            gc: 0.5,
            n_share: 0.0,
            mean_quality: Some(35.0),
            q30_share: Some(0.9),
            lengths: vec![],
            lengths_log_scale: false,
            quality_by_position: vec![],
            read_quality: vec![],
            gc_content: vec![],
            failures: vec![],
        }
    }

    #[test]
    fn a_good_sample_passes_and_each_threshold_is_named() {
        assert!(qc().judge().is_empty());
        let mut q = qc();
        q.reads = 999;
        q.mean_quality = Some(18.25);
        q.n_share = 0.06;
        q.median_length = 40;
        let f = q.judge();
        assert_eq!(f.len(), 4, "{f:?}");
        assert!(f[0].starts_with("only 999 reads (each mate counts): with fewer than 1,000"), "{}", f[0]);
        assert!(f[1].contains("Q18.2 is below Q20 for short reads"), "{}", f[1]);
        assert!(f[2].starts_with("6.0% of bases are N"), "{}", f[2]);
        assert!(f[3].contains("40 bases is under 50"), "{}", f[3]);
        // Figures near a bar are not rounded onto it.
        let mut near = qc();
        near.mean_quality = Some(19.96);
        near.n_share = 0.0504;
        let f = near.judge();
        assert!(f[0].contains("Q19.9 is below Q20"), "{}", f[0]);
        assert!(f[1].starts_with("5.1% of bases"), "{}", f[1]);
    }

    #[test]
    fn a_partial_qc_is_read_leniently() {
        let q: ReadQc = serde_json::from_str(r#"{"reads": 5, "failures": ["x"]}"#).unwrap();
        assert_eq!((q.reads, q.bases, q.failures.len()), (5, 0, 1));
    }

    #[test]
    fn long_reads_are_held_to_q10_and_fasta_is_not_judged_on_quality() {
        let mut q = qc();
        q.long_reads = true;
        q.median_length = 8_000;
        q.mean_quality = Some(12.0);
        assert!(q.judge().is_empty());
        q.mean_quality = Some(9.5);
        assert!(q.judge()[0].contains("below Q10 for long reads"));
        q.mean_quality = None;
        assert!(q.judge().is_empty());
    }
}
