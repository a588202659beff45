//! The crate's one error type.

use std::io;
use std::path::{Path, PathBuf};

use mgds_formats::{Compression, ParseError};

const REBUILD_HINT: &str = "rebuild the database with this version (`mgds db build` for your own references, `mgds db install --demo` for the demo database)";

/// Everything that can go wrong while building a database or classifying reads.
///
/// Messages name the file (and the line or record where there is one) and say what to do next;
/// the underlying cause, where there is one, is the error's `source()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A problem with a reads or reference sequence file (missing, not FASTA/FASTQ, malformed
    /// record, truncated or damaged gzip), as reported by `mgds_formats`.
    // Boxed: the formats error is large and every Result of this crate would carry its size.
    #[error(transparent)]
    Sequences(Box<mgds_formats::Error>),

    /// A file could not be opened or read.
    #[error("could not read {}; check that the file exists and that you are allowed to read it", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// An output could not be written.
    #[error("could not write {}; check that the folder exists, that you may write to it and that the disk is not full", .path.display())]
    Write {
        /// The file (or a description of the output stream).
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// A line of a taxonomy dump (`nodes.dmp`, `names.dmp`) or of the sequence-to-taxon map is
    /// malformed or refers to something unknown.
    #[error("{}, line {line}: {message}", .path.display())]
    Table {
        /// The file.
        path: PathBuf,
        /// The line, 1-based.
        line: u64,
        /// What is wrong and what to do.
        message: String,
    },

    /// The taxonomy as a whole is unusable (no root, a taxon that never reaches the root, a
    /// taxon without a scientific name).
    #[error("the taxonomy in {} is unusable: {message}", .path.display())]
    Taxonomy {
        /// The `nodes.dmp` file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// A reference sequence has no tax id: no entry in the sequence-to-taxon map, no
    /// `kraken:taxid|N|` in its header, no assembly with a taxon.
    #[error("reference sequence `{seq_id}` ({}, record {record}) has no tax id (map: {}); add a line `{seq_id}<TAB>tax_id` to the map, or write its header as `>kraken:taxid|TAX_ID|{seq_id}`", .path.display(), if .map.as_os_str().is_empty() { "none given".to_string() } else { .map.display().to_string() })]
    UnmappedSequence {
        /// The FASTA file.
        path: PathBuf,
        /// The record, 1-based.
        record: u64,
        /// The sequence's identifier.
        seq_id: String,
        /// The sequence-to-taxon map.
        map: PathBuf,
    },

    /// A reference sequence is mapped to a tax id that the taxonomy does not hold.
    #[error("reference sequence `{seq_id}` ({}) is mapped to tax id {tax_id}, which is not in {}; use a taxonomy that holds it", .path.display(), .nodes.display())]
    UnknownTaxon {
        /// The FASTA file.
        path: PathBuf,
        /// The sequence's identifier.
        seq_id: String,
        /// The tax id it is mapped to.
        tax_id: u64,
        /// The `nodes.dmp` file.
        nodes: PathBuf,
    },

    /// A folder given as a Kraken 2 database lacks one of its files.
    #[error("{} is not a Kraken 2 database folder: {} is missing (a Kraken 2 database holds hash.k2d, opts.k2d and taxo.k2d, as `kraken2-build --build` writes them)", .dir.display(), .missing.display())]
    NotKraken2 {
        /// The folder.
        dir: PathBuf,
        /// The missing file.
        missing: PathBuf,
    },

    /// A database this engine cannot use (options outside what it supports).
    #[error("{} cannot be used: {what}", .path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Why.
        what: String,
    },

    /// A Kraken 2 database folder without the reference sequences it was built from.
    #[error("{} holds no reference sequences (library/*.fna; `kraken2-build --clean` removes them): genome lengths and k-mer distributions need them; give the FASTA files and seqid2taxid.map instead", .dir.display())]
    NoLibrary {
        /// The folder.
        dir: PathBuf,
    },

    /// The two files of a pair hold different numbers of reads.
    #[error("{} ends after {records} reads but {} has more; the two files of a pair must hold the same reads in the same order", .short.display(), .long.display())]
    PairLengths {
        /// The file that ended first.
        short: PathBuf,
        /// The other file.
        long: PathBuf,
        /// Pairs read.
        records: u64,
    },

    /// The references hold no k-mer at all (no sequence, or all shorter than k).
    #[error(
        "the reference sequences hold no usable k-mers (every sequence is missing, shorter than {k} bases or made of N); check the FASTA files given"
    )]
    NoKmers {
        /// The k-mer length.
        k: u32,
    },

    /// A file given as a database is not one (wrong magic bytes).
    #[error("{} is not an MGDS classification database; choose the file written by the database build (or a Kraken 2 database folder)", .path.display())]
    NotDatabase {
        /// The file.
        path: PathBuf,
    },

    /// A database written by another (newer or older) format version.
    #[error("{} is a classification database of format version {found}, written by {} version of MGDS, but this program reads format version {expected}; {}", .path.display(), if found < expected { "an older" } else { "a newer" }, REBUILD_HINT)]
    DatabaseVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this crate reads.
        expected: u32,
    },

    /// A database whose content is cut short or inconsistent.
    #[error("{} is damaged or incomplete ({what}); copy or build the database again", .path.display())]
    DatabaseCorrupt {
        /// The file.
        path: PathBuf,
        /// What was found wrong.
        what: String,
    },

    /// The reads file holds no records.
    #[error("{} holds no reads (no FASTA or FASTQ records); choose a file with reads", .path.display())]
    NoReads {
        /// The file.
        path: PathBuf,
    },

    /// The options are out of range.
    #[error("invalid classification option: {0}")]
    Options(String),
}

impl From<mgds_formats::Error> for Error {
    fn from(err: mgds_formats::Error) -> Self {
        Error::Sequences(Box::new(err))
    }
}

impl Error {
    /// The `mgds_formats` error inside, for a problem with a sequence file.
    pub fn sequence_error(&self) -> Option<&mgds_formats::Error> {
        match self {
            Error::Sequences(e) => Some(e),
            _ => None,
        }
    }

    /// Maps an I/O error met while reading a sequence file the way `mgds_formats` does: a
    /// wrapped [`ParseError`] becomes a parse error naming the line and record, a gzip stream
    /// that stops early a truncation, a damaged one a corruption.
    pub(crate) fn reading(path: &Path, compression: Compression, line: u64, err: io::Error) -> Error {
        use mgds_formats::Error as F;
        if let Some(pe) = err.get_ref().and_then(|e| e.downcast_ref::<ParseError>()) {
            let pe = pe.clone();
            return Error::from(match pe.kind {
                mgds_formats::ParseErrorKind::NotSequence { found } => F::NotSequence { path: path.to_owned(), found },
                kind => F::Parse { path: path.to_owned(), line: pe.line, record: pe.record, id: pe.id, kind },
            });
        }
        let path = path.to_owned();
        Error::from(match (compression, err.kind()) {
            (Compression::None, _) => F::Io { path, source: err },
            (_, io::ErrorKind::UnexpectedEof) => F::Truncated { path, compression, line, source: err },
            (_, io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData) => {
                F::Corrupt { path, compression, line, source: err }
            }
            _ => F::Io { path, source: err },
        })
    }

    pub(crate) fn table(path: &Path, line: u64, message: impl Into<String>) -> Error {
        Error::Table { path: path.to_owned(), line, message: message.into() }
    }
}
