//! Sequence files read through `mgds-formats`, with its errors (file, line, record) kept.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use mgds_formats::{Compression, ParseError, ParseErrorKind, Reader, Record};

use crate::error::Error;

/// A FASTA/FASTQ file (plain or gzip) read one record at a time.
pub(crate) struct SeqFile {
    path: PathBuf,
    compression: Compression,
    reader: Reader<Box<dyn BufRead + Send>>,
}

impl SeqFile {
    /// Opens `path`, detecting compression from its first bytes.
    pub(crate) fn open(path: &Path) -> Result<SeqFile, Error> {
        let (compression, inner) = mgds_formats::open(path)?;
        Ok(SeqFile { path: path.to_owned(), compression, reader: Reader::new(inner) })
    }

    /// Opens reads from outside, refusing a record longer than `max_record` bases.
    pub(crate) fn open_limited(path: &Path, max_record: usize) -> Result<SeqFile, Error> {
        let mut file = SeqFile::open(path)?;
        file.reader = file.reader.with_max_record_length(max_record);
        Ok(file)
    }

    /// Reads the next record into `record`; `false` at the end. A file with no record at all
    /// is an error, as for every other sequence file in MGDS.
    pub(crate) fn next(&mut self, record: &mut Record) -> Result<bool, Error> {
        match self.reader.read_record(record) {
            Ok(0) if self.reader.record_count() == 0 => {
                Err(mgds_formats::Error::Empty { path: self.path.clone() }.into())
            }
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(err) => Err(self.reading_error(err).into()),
        }
    }

    // `mgds_formats` keeps its own io::Error -> Error mapping private, so the same mapping is
    // made here: a wrapped parse error keeps its line and record, a decompressor's early end is
    // a truncated file, its complaints damaged data.
    fn reading_error(&self, err: io::Error) -> mgds_formats::Error {
        let path = self.path.clone();
        if let Some(pe) = err.get_ref().and_then(|e| e.downcast_ref::<ParseError>()) {
            let pe = pe.clone();
            return match pe.kind {
                ParseErrorKind::NotSequence { found } => mgds_formats::Error::NotSequence { path, found },
                kind => mgds_formats::Error::Parse { path, line: pe.line, record: pe.record, id: pe.id, kind },
            };
        }
        let line = self.reader.line_number();
        let compression = self.compression;
        match (compression, err.kind()) {
            (Compression::None, _) => mgds_formats::Error::Io { path, source: err },
            (_, io::ErrorKind::UnexpectedEof) => {
                mgds_formats::Error::Truncated { path, compression, line, source: err }
            }
            (_, io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData) => {
                mgds_formats::Error::Corrupt { path, compression, line, source: err }
            }
            _ => mgds_formats::Error::Io { path, source: err },
        }
    }
}

/// One named sequence of a reference or a gene catalogue.
#[derive(Debug, Clone)]
pub(crate) struct NamedSeq {
    /// The identifier (the header up to the first space).
    pub(crate) name: String,
    /// The whole header line after `>`, identifier included.
    pub(crate) header: String,
    /// The sequence as in the file.
    pub(crate) seq: Vec<u8>,
}

/// Reads every record of a FASTA/FASTQ file of reference sequences, rejecting empty sequences
/// and repeated names (minimap2 aborts the process on a repeated name).
pub(crate) fn read_all(path: &Path) -> Result<Vec<NamedSeq>, Error> {
    let mut file = SeqFile::open(path)?;
    let mut record = Record::default();
    let mut out = Vec::new();
    let mut lines = std::collections::HashMap::new();
    while file.next(&mut record)? {
        let name = String::from_utf8_lossy(record.id()).into_owned();
        if record.sequence().is_empty() {
            return Err(Error::EmptySequence { path: path.to_owned(), line: record.line(), name });
        }
        if let Some(&first_line) = lines.get(&name) {
            return Err(Error::DuplicateName { path: path.to_owned(), line: record.line(), name, first_line });
        }
        lines.insert(name.clone(), record.line());
        out.push(NamedSeq {
            name,
            header: String::from_utf8_lossy(record.header()).trim().to_owned(),
            seq: record.sequence().to_vec(),
        });
    }
    Ok(out)
}
