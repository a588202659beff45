//! The crate's one error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while aligning reads or building a functional profile.
///
/// Messages are written for a lab scientist: they name the file (and the line where there is
/// one) and say what to do next. The underlying cause, where there is one, is the error's
/// `source()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A reference, reads or gene file could not be read or is not FASTA/FASTQ (the message
    /// names the file, line and record).
    // Boxed: the formats error is large and every Result of this crate would carry its size.
    #[error(transparent)]
    Sequence(Box<mgds_formats::Error>),

    /// The reference (or the gene catalogue's `genes.fa`) holds no sequence.
    #[error("{} holds no sequences; choose a FASTA file with the reference genome", .path.display())]
    NoSequences {
        /// The file.
        path: PathBuf,
    },

    /// A record of the reference (or of `genes.fa`) has an empty sequence.
    #[error("{}, line {line}: `{name}` has an empty sequence; remove the record or export the file again", .path.display())]
    EmptySequence {
        /// The file.
        path: PathBuf,
        /// The record's header line.
        line: u64,
        /// The record's identifier.
        name: String,
    },

    /// Two records of the reference (or of `genes.fa`) have the same identifier, so alignments
    /// to them could not be told apart.
    #[error("{}, line {line}: the name `{name}` is used twice (first at line {first_line}); give every sequence its own name", .path.display())]
    DuplicateName {
        /// The file.
        path: PathBuf,
        /// The second record's header line.
        line: u64,
        /// The identifier.
        name: String,
        /// The first record's header line.
        first_line: u64,
    },

    /// A line of a gene catalogue's `annotations.tsv` is malformed or names an unknown gene.
    #[error("{}, line {line}: {message}", .path.display())]
    Annotation {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: u64,
        /// What is wrong, and what to do.
        message: String,
    },

    /// A file of a gene catalogue folder could not be read or written.
    #[error("could not access {}; check that the file exists and that you are allowed to use it", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// The alignments could not be written to the caller's output.
    #[error("could not write the alignments (SAM); check that the disk is not full")]
    WriteSam(#[source] io::Error),

    /// The sequences to index could not be written to a temporary file.
    #[error(
        "could not write the aligner's index to a temporary file; check that the temporary folder exists and is not full"
    )]
    TempIndex(#[source] io::Error),

    /// minimap2 refused its options or the index.
    #[error("the aligner could not start: {0}")]
    Aligner(&'static str),

    /// The aligner's worker threads could not be started.
    #[error("could not start {threads} aligner threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// rayon's error.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

impl From<mgds_formats::Error> for Error {
    fn from(err: mgds_formats::Error) -> Self {
        Error::Sequence(Box::new(err))
    }
}
