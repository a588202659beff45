//! How reads are classified ([`ClassifyOptions`]) and which reads ([`Reads`]).

use std::path::Path;

/// Default confidence: 0, as Kraken 2's, so a read is placed at its best-scoring taxon however
/// few of its k-mers agree. Chance matches are kept out by the minimum hit groups
/// ([`DEFAULT_MIN_HITS`]) instead: a single chance minimizer no longer places a read. Raise it
/// when false species calls cost more than missed ones.
pub const DEFAULT_CONFIDENCE: f64 = 0.0;

/// Default minimum number of minimizer hit groups for a read's call to pass the filter, as
/// Kraken 2's `--minimum-hit-groups` (also 2). A hit group is a run of neighbouring k-mers that
/// share one minimizer found in the database: one chance match gives one group, however many
/// k-mers it covers, so counting groups rather than k-mers is what stops a single chance match
/// from placing a read.
pub const DEFAULT_MIN_HITS: u32 = 2;

/// Default minimum reads in a species' (or genus') clade for abundance re-estimation to keep
/// it, as Bracken's `-t`.
pub const DEFAULT_REESTIMATE_THRESHOLD: u64 = 10;

/// Whether the reads file is an interleaved pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// Interleaved when the first two records have the same read name (ignoring `/1`, `/2`
    /// and comments); single-end otherwise.
    #[default]
    Auto,
    /// Every record is classified on its own.
    Single,
    /// Records come in pairs (read 1, then read 2 with the same read name); a pair is classified
    /// as one and both mates get the same call. A record without its mate is an error.
    Interleaved,
}

/// How reads are classified.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassifyOptions {
    /// Fraction (0 to 1) of a read's k-mers that must support the clade it is placed in; the
    /// call climbs towards the root until it does. Default [`DEFAULT_CONFIDENCE`].
    pub confidence: f64,
    /// Minimum minimizer hit groups ([`Hits::hit_groups`](crate::Hits::hit_groups), over both mates of a pair) for a
    /// call to pass the filter; reads below it keep their call in the read-level TSV with
    /// `Passed Filter` `F` and are not counted in the results table. Default
    /// [`DEFAULT_MIN_HITS`].
    pub min_hits: u32,
    /// Worker threads; 0 uses one per core.
    pub threads: usize,
    /// Whether a single reads file is an interleaved pair.
    pub paired: Pairing,
    /// Bases of FASTQ reads with a quality below this (Phred) are treated as ambiguous, as Kraken
    /// 2's `--minimum-base-quality`; 0 (the default) masks nothing.
    pub min_base_quality: u8,
    /// Minimum reads in a species' (genus') clade for re-estimation to keep it. Default
    /// [`DEFAULT_REESTIMATE_THRESHOLD`].
    pub reestimate_threshold: u64,
    /// Longest sequence of one read (or record) accepted, in bases; a longer one fails the
    /// run with an error naming it. Default: no limit.
    pub max_record: usize,
    /// Whether to count the reads' quality control as they are read (`results.qc`; see
    /// `mgds_formats::QcCounter`). Default true; off only to measure what it costs.
    pub qc: bool,
}

impl Default for ClassifyOptions {
    fn default() -> Self {
        ClassifyOptions {
            confidence: DEFAULT_CONFIDENCE,
            min_hits: DEFAULT_MIN_HITS,
            threads: 0,
            paired: Pairing::Auto,
            min_base_quality: 0,
            reestimate_threshold: DEFAULT_REESTIMATE_THRESHOLD,
            max_record: usize::MAX,
            qc: true,
        }
    }
}

/// The reads to classify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads<'a> {
    /// One file: single-end or interleaved pairs ([`ClassifyOptions::paired`]).
    File(&'a Path),
    /// Two files of mates, read in step (Kraken 2's `--paired`): record `i` of one and of the
    /// other are one fragment. Their names are not compared.
    Pair(&'a Path, &'a Path),
}
