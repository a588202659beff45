//! The reference FASTA files a database is built from (by [`crate::build`], or read again by
//! [`crate::Kraken2Database::prepare`]), read record by record with progress.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mgds_formats::{Reader, Record};

use crate::error::Error;
use crate::genomes::assembly_of_file_name;

/// The read length of the k-mer distribution written with a database (Illumina's common 150
/// bases); distributions for other lengths are computed when first needed.
pub const DEFAULT_READ_LENGTH: u32 = 150;

/// A build's stage, for progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildStage {
    /// Reading the taxonomy and the sequence-to-taxon map.
    Taxonomy,
    /// First pass over the references: identifiers, lengths, and a count of minimizers.
    Counting,
    /// Second pass: filling the k-mer table.
    Inserting,
    /// Writing the database file.
    Writing,
    /// Third pass: the k-mer profile and distribution.
    Profiling,
}

/// Progress of a build (or of [`crate::Kraken2Database::prepare`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildProgress {
    /// The stage.
    pub stage: BuildStage,
    /// Bytes of the reference files read in this stage (as stored, compressed or not).
    pub done: u64,
    /// Bytes of all reference files.
    pub total: u64,
}

/// The description of a FASTA record: its header after the identifier.
pub(crate) fn record_description(record: &Record) -> String {
    let h = record.header();
    let start = h.iter().position(|&b| b == b' ' || b == b'\t').map_or(h.len(), |p| p + 1);
    String::from_utf8_lossy(&h[start..]).trim().to_owned()
}

/// The reference files, read record by record with progress.
pub(crate) struct ReferenceFiles<'a> {
    paths: &'a [PathBuf],
    sizes: Vec<u64>,
    assemblies: Vec<Option<String>>,
    /// Bytes of all files.
    pub total: u64,
}

impl<'a> ReferenceFiles<'a> {
    /// Checks that every file is there.
    pub fn new(paths: &'a [PathBuf]) -> Result<ReferenceFiles<'a>, Error> {
        let mut sizes = Vec::with_capacity(paths.len());
        for p in paths {
            let m = std::fs::metadata(p).map_err(|source| Error::Io { path: p.clone(), source })?;
            sizes.push(m.len());
        }
        let assemblies = paths
            .iter()
            .map(|p| p.file_name().and_then(|n| n.to_str()).and_then(assembly_of_file_name).map(str::to_owned))
            .collect();
        let total = sizes.iter().sum();
        Ok(ReferenceFiles { paths, sizes, assemblies, total })
    }

    /// The NCBI assembly accession file `file` is named after.
    pub fn assembly(&self, file: u32) -> Option<&str> {
        self.assemblies[file as usize].as_deref()
    }

    /// Calls `f(file index, record)` for every record of every file, in order.
    pub fn for_each(
        &self,
        stage: BuildStage,
        progress: &mut dyn FnMut(&BuildProgress),
        mut f: impl FnMut(u32, &Record) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut record = Record::default();
        let mut before = 0u64;
        progress(&BuildProgress { stage, done: 0, total: self.total });
        for (i, path) in self.paths.iter().enumerate() {
            let consumed = Arc::new(AtomicU64::new(0));
            let (compression, decoded) = mgds_formats::open_counted(path, consumed.clone())?;
            let mut reader = Reader::new(decoded);
            let mut reported = 0u64;
            loop {
                match reader.read_record(&mut record) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => return Err(Error::reading(path, compression, reader.line_number(), e)),
                }
                f(i as u32, &record)?;
                let done = consumed.load(Ordering::Relaxed);
                if done >= reported + (8 << 20) {
                    reported = done;
                    progress(&BuildProgress { stage, done: before + done.min(self.sizes[i]), total: self.total });
                }
            }
            before += self.sizes[i];
            progress(&BuildProgress { stage, done: before, total: self.total });
        }
        Ok(())
    }
}
