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
                    let mut hits = self.aligner.map(&read.seq, false, false, None, None, None).unwrap_or_default();
                    hits.retain(|m| m.is_primary || m.is_supplementary);
                    // Primary first, so a read's lines follow minimap2's own order.
                    hits.sort_by_key(|m| !m.is_primary);
                    hits
                })
                .collect()
        })
    }
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

/// Fills `batch` with the next reads of `file`; `false` when the file had none left.
pub(crate) fn next_batch(
    file: &mut crate::seqfile::SeqFile,
    record: &mut mgds_formats::Record,
    batch: &mut Vec<Read>,
) -> Result<bool, Error> {
    batch.clear();
    let mut bases = 0;
    while batch.len() < BATCH_READS && bases < BATCH_BASES {
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
