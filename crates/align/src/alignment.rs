//! Reads aligned to a reference genome: SAM out, mapping rate, breadth and depth of coverage.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::coverage::Depth;
use crate::error::Error;
use crate::mapper::{self, Mapper, Pairing, Preset};
use crate::seqfile::{self, SeqFile};
use crate::{percent, ratio, sam};

/// How to align reads to a reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlignOptions {
    /// Worker threads for mapping (0 counts as 1).
    pub threads: usize,
    /// The kind of reads.
    pub preset: Preset,
    /// Whether the reads file interleaves pairs (default: found from its first two records).
    #[serde(default)]
    pub pairing: Pairing,
    /// Longest read accepted, in bases; a longer one fails the run with an error naming it.
    #[serde(default = "no_limit")]
    pub max_record: usize,
}

fn no_limit() -> usize {
    usize::MAX
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions { threads: 1, preset: Preset::ShortReads, pairing: Pairing::Auto, max_record: usize::MAX }
    }
}

/// The statistics of one alignment job: the results body of an alignment analysis.
///
/// Read counts use each read's primary alignment only. Depth and breadth use primary and
/// supplementary alignments (as `samtools depth` does), counting aligned bases (`M`, `=`, `X`)
/// and not deletions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignmentResults {
    /// The reference's name: the first sequence's whole header line (identifier and
    /// description, which for a genome assembly usually names the organism).
    pub reference_name: String,
    /// Bases in the reference, all sequences together.
    pub reference_length: u64,
    /// Reads in the reads file.
    pub n_reads: u64,
    /// Reads with a primary alignment.
    pub n_mapped_reads: u64,
    /// `n_mapped_reads` as a percentage of `n_reads` (0 to 100; 0 when there are no reads).
    pub percent_mapped: f64,
    /// The reads came in interleaved pairs and were mapped as the two ends of fragments
    /// (`n_reads` still counts each read).
    #[serde(default)]
    pub paired: bool,
    /// Reads whose pair is a proper pair: both mapped to one sequence, facing each other, at
    /// most 1,000 bases apart from end to end (0 for single-end reads).
    #[serde(default)]
    pub n_properly_paired_reads: u64,
    /// Fraction of reference bases covered by at least one read (0 to 1).
    pub breadth_of_coverage: f64,
    /// Aligned bases divided by `reference_length`.
    pub mean_depth: f64,
    /// One row per reference sequence, in the reference file's order.
    pub contigs: Vec<ContigStats>,
}

/// The statistics of one sequence (chromosome, plasmid, contig) of the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContigStats {
    /// The sequence's identifier (the header up to the first space), as in the SAM `@SQ` line.
    pub name: String,
    /// Bases in the sequence.
    pub length: u64,
    /// Reads whose primary alignment is on this sequence.
    pub mapped_reads: u64,
    /// Fraction of the sequence's bases covered by at least one read (0 to 1).
    pub breadth_of_coverage: f64,
    /// Aligned bases on this sequence divided by its length.
    pub mean_depth: f64,
}

/// Aligns `reads` (FASTQ or FASTA, plain or gzip) to `reference` (FASTA or FASTQ, plain or
/// gzip, one or more sequences) with minimap2, writes the alignments to `sam_out` as SAM text
/// and returns coverage statistics.
///
/// The reads of an interleaved file (each read 1 followed by its read 2, found from the first
/// two records unless [`AlignOptions::pairing`] says) are mapped as pairs, with the pair's SAM
/// flags, mate positions and template lengths; other files' reads one by one. The SAM holds, in
/// the reads file's order, each read's primary and supplementary alignments, or one unmapped
/// line; secondary alignments are left out. Compressing it is the caller's business.
pub fn align(
    reference: &Path,
    reads: &Path,
    opts: &AlignOptions,
    sam_out: &mut dyn Write,
) -> Result<AlignmentResults, Error> {
    let contigs = seqfile::read_all(reference)?;
    let Some(first) = contigs.first() else {
        return Err(Error::NoSequences { path: reference.to_owned() });
    };
    let reference_name = first.header.clone();
    let mapper = Mapper::new(&contigs, opts.preset)?;
    let pool = mapper::pool(opts.threads)?;

    sam::write_header(sam_out, contigs.iter().map(|c| (c.name.as_str(), c.seq.len())), opts.preset.minimap2_name())
        .map_err(Error::WriteSam)?;

    let mut depth: Vec<Depth> = contigs.iter().map(|c| Depth::new(c.seq.len())).collect();
    let mut mapped_per_contig = vec![0u64; contigs.len()];
    let lengths: Vec<u64> = contigs.iter().map(|c| c.seq.len() as u64).collect();
    let names: Vec<String> = contigs.into_iter().map(|c| c.name).collect();

    let mut file = SeqFile::open_limited(reads, opts.max_record)?;
    let mut record = mgds_formats::Record::default();
    let mut batch = Vec::new();
    let mut line = Vec::new();
    let mut n_reads = 0u64;
    let mut n_mapped = 0u64;
    let mut n_proper = 0u64;
    let mut pairing = opts.pairing;
    while mapper::next_batch(&mut file, &mut record, &mut batch, pairing != Pairing::Single)? {
        if pairing == Pairing::Auto {
            let same =
                batch.len() >= 2 && mgds_formats::base_id(&batch[0].name) == mgds_formats::base_id(&batch[1].name);
            pairing = if same { Pairing::Interleaved } else { Pairing::Single };
        }
        let paired = pairing == Pairing::Interleaved;
        let all_hits = if paired {
            check_pairs(reads, &batch, n_reads)?;
            mapper.map_pairs(&pool, &batch)
        } else {
            mapper.map_batch(&pool, &batch)
        };
        for (i, (read, hits)) in batch.iter().zip(&all_hits).enumerate() {
            n_reads += 1;
            let mate = paired.then(|| {
                // Reads 2k and 2k + 1 are the two reads of a pair.
                let (mate_hits, first) = (all_hits[i ^ 1].as_slice(), i % 2 == 0);
                let proper = sam::proper_pair(sam::primary(hits), sam::primary(mate_hits));
                sam::Mate { first, hits: mate_hits, proper, name: mgds_formats::base_id(&read.name) }
            });
            if mate.is_some_and(|m| m.proper) {
                n_proper += 1;
            }
            for hit in hits {
                let Ok(target) = usize::try_from(hit.target_id) else {
                    continue;
                };
                if hit.is_primary {
                    n_mapped += 1;
                    mapped_per_contig[target] += 1;
                }
                if let Some(cigar) = hit.alignment.as_ref().and_then(|a| a.cigar.as_deref()) {
                    depth[target].add(hit.target_start.max(0) as usize, cigar);
                }
            }
            sam::write_read(sam_out, read, hits, mate, &mut line).map_err(Error::WriteSam)?;
        }
    }
    sam_out.flush().map_err(Error::WriteSam)?;

    let mut covered_total = 0u64;
    let mut aligned_total = 0u64;
    let rows = names
        .into_iter()
        .zip(lengths.iter())
        .zip(depth.iter().zip(&mapped_per_contig))
        .map(|((name, &length), (depth, &mapped_reads))| {
            let s = depth.summarise();
            covered_total += s.covered;
            aligned_total += s.aligned;
            ContigStats {
                name,
                length,
                mapped_reads,
                breadth_of_coverage: ratio(s.covered, length),
                mean_depth: ratio(s.aligned, length),
            }
        })
        .collect();
    let reference_length = lengths.iter().sum();
    Ok(AlignmentResults {
        reference_name,
        reference_length,
        n_reads,
        n_mapped_reads: n_mapped,
        percent_mapped: percent(n_mapped, n_reads),
        paired: pairing == Pairing::Interleaved,
        n_properly_paired_reads: n_proper,
        breadth_of_coverage: ratio(covered_total, reference_length),
        mean_depth: ratio(aligned_total, reference_length),
        contigs: rows,
    })
}

/// Checks that `batch` (of a file read as interleaved, `before` reads in) holds whole pairs:
/// each read 1 followed by its read 2 under the same read name.
fn check_pairs(path: &Path, batch: &[mapper::Read], before: u64) -> Result<(), Error> {
    if batch.len() % 2 == 1 {
        return Err(mgds_formats::Error::OddInterleaved {
            path: path.to_owned(),
            records: before + batch.len() as u64,
        }
        .into());
    }
    for (k, pair) in batch.chunks_exact(2).enumerate() {
        let (a, b) = (mgds_formats::base_id(&pair[0].name), mgds_formats::base_id(&pair[1].name));
        if a != b {
            return Err(mgds_formats::Error::NotInterleaved {
                path: path.to_owned(),
                record: before + 2 * k as u64 + 1,
                name: String::from_utf8_lossy(a).into_owned(),
                next_name: String::from_utf8_lossy(b).into_owned(),
            }
            .into());
        }
    }
    Ok(())
}
