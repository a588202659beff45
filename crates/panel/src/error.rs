//! The crate's one error type.

use std::io;
use std::path::{Path, PathBuf};

use mgds_formats::{Compression, ParseError, ParseErrorKind};

/// Everything that can go wrong while loading a panel or detecting its markers.
///
/// Messages name the file (and the field or line where there is one) and say what is wrong; the
/// underlying cause, where there is one, is the error's `source()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A panel file could not be opened or read.
    #[error("could not read {}; check that the panel folder holds it and that you may read it", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// A panel file could not be written (installing the demo panel).
    #[error("could not write {}; check that the folder exists, that you may write to it and that the disk is not full", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// `panel.json` is not valid JSON or a field has the wrong type; `field` is its path
    /// (`thresholds.long_present_identity`, `sub_panels[1].markers`), empty when the JSON itself is
    /// broken.
    #[error("{}: {}", .path.display(), json_problem(.field, .source))]
    Json {
        /// The file.
        path: PathBuf,
        /// The field's path inside the JSON.
        field: String,
        /// The parser's error (it holds the line and column).
        #[source]
        source: serde_json::Error,
    },

    /// A field of `panel.json` has a value that is well-formed but not allowed.
    #[error("{}: field `{field}` {problem}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field's path inside the JSON.
        field: String,
        /// What is wrong, in words.
        problem: String,
    },

    /// A marker FASTA file is malformed, or one of its markers is not usable.
    #[error("{}, line {line}: {problem}", .path.display())]
    Marker {
        /// The FASTA file.
        path: PathBuf,
        /// The line (1-based) of the record's header, or of the problem.
        line: u64,
        /// What is wrong, in words.
        problem: String,
    },

    /// The reads file could not be read: missing, empty, not FASTA/FASTQ, damaged. Boxed: the
    /// formats error is large, and every `Result` of this crate would carry its size.
    #[error(transparent)]
    Reads(Box<mgds_formats::Error>),

    /// The worker threads could not be started.
    #[error("could not start {threads} worker threads; try fewer")]
    Threads {
        /// The number asked for.
        threads: usize,
        /// Rayon's error.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

impl From<mgds_formats::Error> for Error {
    fn from(e: mgds_formats::Error) -> Self {
        Error::Reads(Box::new(e))
    }
}

fn json_problem(field: &str, source: &serde_json::Error) -> String {
    if source.is_eof() {
        "ends too early: the JSON is cut short".to_owned()
    } else if source.is_syntax() || field.is_empty() || field == "." {
        "is not a valid panel definition (JSON)".to_owned()
    } else {
        format!("field `{field}` is missing, unknown or of the wrong kind")
    }
}

/// Turns an I/O error met while reading the reads file into `mgds_formats::Error`, so a reads
/// problem reads the same here as in the rest of MGDS: a wrapped [`ParseError`] becomes a parse
/// error with the line and record (or "not a FASTA or FASTQ file"), a decompressor's early end a
/// truncated file, its complaint a damaged file.
pub(crate) fn reads_error(path: &Path, compression: Compression, line: u64, err: io::Error) -> mgds_formats::Error {
    use mgds_formats::Error as F;
    if let Some(pe) = err.get_ref().and_then(|e| e.downcast_ref::<ParseError>()) {
        let pe = pe.clone();
        return match pe.kind {
            ParseErrorKind::NotSequence { found } => F::NotSequence { path: path.to_owned(), found },
            kind => F::Parse { path: path.to_owned(), line: pe.line, record: pe.record, id: pe.id, kind },
        };
    }
    match (compression, err.kind()) {
        (Compression::None, _) => F::Io { path: path.to_owned(), source: err },
        (_, io::ErrorKind::UnexpectedEof) => F::Truncated { path: path.to_owned(), compression, line, source: err },
        (_, io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData) => {
            F::Corrupt { path: path.to_owned(), compression, line, source: err }
        }
        _ => F::Io { path: path.to_owned(), source: err },
    }
}
