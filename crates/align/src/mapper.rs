//! minimap2 behind a small interface: an index over named sequences, and batches of reads
//! mapped in parallel with their order kept.

use std::io::Write;

use minimap2::{Aligner, Built, Mapping};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::seqfile::NamedSeq;

/// The kind of reads, which chooses minimap2's preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Preset {
    /// Illumina-like short reads (minimap2 `-x sr`).
    #[default]
    ShortReads,
    /// Oxford Nanopore reads (minimap2 `-x map-ont`).
    Nanopore,
    /// PacBio HiFi reads (minimap2 `-x map-hifi`).
    PacbioHifi,
}

impl Preset {
    /// minimap2's name for the preset, as given to `minimap2 -x`.
    pub fn minimap2_name(self) -> &'static str {
        match self {
            Preset::ShortReads => "sr",
            Preset::Nanopore => "map-ont",
            Preset::PacbioHifi => "map-hifi",
        }
    }
}

/// Whether the reads file interleaves the two reads of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Interleaved when the first two records have the same read name (ignoring `/1`, `/2` and
    /// comments), as samples made of joined R1/R2 files are; single-end otherwise.
    #[default]
    Auto,
    /// Every record is a read of its own.
    Single,
    /// Records come in pairs (read 1, then read 2 with the same read name), mapped together as
    /// the two ends of one fragment. A record without its mate is an error.
    Interleaved,
}

/// One read to map.
#[derive(Debug, Clone, Default)]
pub(crate) struct Read {
    pub(crate) name: Vec<u8>,
    pub(crate) seq: Vec<u8>,
    /// Empty for FASTA reads.
    pub(crate) qual: Vec<u8>,
}

/// An index over named sequences.
pub(crate) struct Mapper {
    aligner: Aligner<Built>,
}

impl std::fmt::Debug for Mapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapper").finish_non_exhaustive()
    }
}

impl Mapper {
    /// Indexes `seqs` (names must be unique and sequences non-empty: minimap2 aborts
    /// otherwise, so the caller checks).
    pub(crate) fn new(seqs: &[NamedSeq], preset: Preset) -> Result<Mapper, Error> {
        let builder = Aligner::builder();
        let builder = match preset {
            Preset::ShortReads => builder.sr(),
            Preset::Nanopore => builder.map_ont(),
            Preset::PacbioHifi => builder.map_hifi(),
        };
        let builder = builder.with_cigar();
        // The crate's in-memory index (`with_seqs_and_ids`) hands minimap2 an array of Rust
        // `CString`s as if it were `char **`, which only works for one sequence (more crash).
        // A plain FASTA of the checked sequences, read by minimap2 itself as its command line
        // does, indexes any number of them.
        let write = || -> std::io::Result<tempfile::NamedTempFile> {
            let mut fasta = tempfile::Builder::new().prefix("mgds-align-index-").suffix(".fa").tempfile()?;
            let mut out = std::io::BufWriter::new(fasta.as_file_mut());
            for s in seqs {
                out.write_all(b">")?;
                out.write_all(s.name.as_bytes())?;
                out.write_all(b"\n")?;
                out.write_all(&s.seq)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
            drop(out);
            Ok(fasta)
        };
        let fasta = write().map_err(Error::TempIndex)?;
        let aligner = builder.with_index(fasta.path(), None).map_err(Error::Aligner)?;
        Ok(Mapper { aligner })
    }

    /// Maps each read of `batch` on `pool`; the answer is in the batch's order. Secondary
    /// alignments are dropped: counts and coverage use primary and supplementary ones only.
    pub(crate) fn map_batch(&self, pool: &rayon::ThreadPool, batch: &[Read]) -> Vec<Vec<Mapping>> {
        pool.install(|| {
            batch
                .par_iter()
                .map(|read| {
                    if read.seq.is_empty() {
                        return Vec::new();
                    }
                    // minimap2 only fails here on an empty sequence or a missing index,
                    // neither of which can happen: an error would mean "unmapped".
                    kept(self.aligner.map(&read.seq, false, false, None, None, None).unwrap_or_default())
                })
                .collect()
        })
    }

    /// Maps the reads of `batch` two by two as the ends of one fragment (minimap2's paired-end
    /// mode, which pairs up the mates' alignments and rescues a mate near the other); the
    /// answer holds one entry per read, in the batch's order. `batch` has an even length.
    pub(crate) fn map_pairs(&self, pool: &rayon::ThreadPool, batch: &[Read]) -> Vec<Vec<Mapping>> {
        let pairs: Vec<[Vec<Mapping>; 2]> = pool.install(|| {
            batch
                .par_chunks_exact(2)
                .map(|pair| match (pair[0].seq.is_empty(), pair[1].seq.is_empty()) {
                    (false, false) => {
                        let (a, b) = self
                            .aligner
                            .map_pair(&pair[0].seq, &pair[1].seq, false, false, None, None, None)
                            .unwrap_or_default();
                        [kept(a), kept(b)]
                    }
                    // A mate with no bases cannot be mapped as a pair: the other is mapped alone.
                    (true, false) => [Vec::new(), self.map_one(&pair[1].seq)],
                    (false, true) => [self.map_one(&pair[0].seq), Vec::new()],
                    (true, true) => [Vec::new(), Vec::new()],
                })
                .collect()
        });
        pairs.into_iter().flatten().collect()
    }

    fn map_one(&self, seq: &[u8]) -> Vec<Mapping> {
        kept(self.aligner.map(seq, false, false, None, None, None).unwrap_or_default())
    }
}

/// A read's primary and supplementary alignments, primary first (so a read's lines follow
/// minimap2's own order); secondary ones are dropped.
fn kept(mut hits: Vec<Mapping>) -> Vec<Mapping> {
    hits.retain(|m| m.is_primary || m.is_supplementary);
    hits.sort_by_key(|m| !m.is_primary);
    hits
}

/// A rayon pool with `threads` workers (at least one).
pub(crate) fn pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    let threads = threads.max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("mgds-align-{i}"))
        .build()
        .map_err(|source| Error::Threads { threads, source })
}

/// Reads of a batch: up to this many bases, so memory stays flat whatever the file size while
/// each batch still has enough reads to keep every thread busy.
pub(crate) const BATCH_BASES: usize = 8 << 20;
/// ... and at most this many reads.
pub(crate) const BATCH_READS: usize = 20_000;

/// Fills `batch` with the next reads of `file`; `false` when the file had none left. With
/// `pairs`, a batch never ends between the two reads of a pair (a file with an odd number of
/// records ends with a batch of odd length: the caller reports it).
pub(crate) fn next_batch(
    file: &mut crate::seqfile::SeqFile,
    record: &mut mgds_formats::Record,
    batch: &mut Vec<Read>,
    pairs: bool,
) -> Result<bool, Error> {
    batch.clear();
    let mut bases = 0;
    while (batch.len() < BATCH_READS && bases < BATCH_BASES) || (pairs && batch.len() % 2 == 1) {
        if !file.next(record)? {
            break;
        }
        bases += record.sequence().len();
        batch.push(Read {
            name: record.id().to_vec(),
            seq: record.sequence().to_vec(),
            qual: record.quality().to_vec(),
        });
    }
    Ok(!batch.is_empty())
}
