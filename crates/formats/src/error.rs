//! The crate's one error type.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::compression::Compression;
use crate::fastx::Format;

/// Everything that can go wrong in this crate.
///
/// Messages are written for a lab scientist: they name the file (and the line and record where
/// there is one) and say what to do next. The underlying cause, where there is one, is the
/// error's `source()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened or read (missing, no permission, disk error).
    #[error("could not read {}; check that the file exists and that you are allowed to read it", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// An output file could not be written.
    #[error("could not write {}; check that the folder exists, that you may write to it and that the disk is not full", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },

    /// The file holds nothing (zero bytes, only blank lines, or an empty compressed stream).
    #[error("{} is empty: it holds no reads; if the sequencer or a copy is still writing it, wait until it has finished, otherwise export the reads again", .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },

    /// The file is something other than FASTA or FASTQ (a PDF, an archive, binary data, ...).
    #[error("{} is not a FASTA or FASTQ file: it looks like {found}; choose the file with the reads (FASTQ or FASTA, optionally gzipped)", .path.display())]
    NotSequence {
        /// The file.
        path: PathBuf,
        /// What the first bytes look like, in words.
        found: String,
    },

    /// The file is compressed with a method this crate does not read.
    #[error("{} is compressed with {compression}, which MGDS cannot read; decompress it, or recompress it with gzip (for example `{}`)", .path.display(), recompress_hint(*.compression, .path))]
    UnsupportedCompression {
        /// The file.
        path: PathBuf,
        /// The compression found from the file's first bytes.
        compression: Compression,
    },

    /// The compressed data stops before its end: the file was cut short.
    #[error("{} ends in the middle of its {compression} data (after line {line}): the file is incomplete, probably cut short while it was copied or downloaded; copy it again from the original", .path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The compression.
        compression: Compression,
        /// The last line read completely before the data stopped.
        line: u64,
        /// The decompressor's error.
        #[source]
        source: io::Error,
    },

    /// The compressed data is damaged (bad checksum, bad block, junk after the data).
    #[error("the {compression} data of {} is damaged near line {line}; copy the file again from the original", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The compression.
        compression: Compression,
        /// The last line read before the damage.
        line: u64,
        /// The decompressor's error.
        #[source]
        source: io::Error,
    },

    /// A record or row is malformed.
    #[error("{}, line {line}, {}: {kind}", .path.display(), record_label(*.record, .id.as_deref()))]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line (1-based, in the decompressed text) where the problem is.
        line: u64,
        /// The record (or row) number, 1-based.
        record: u64,
        /// The record's identifier, where it could be read.
        id: Option<String>,
        /// What is wrong.
        kind: ParseErrorKind,
    },

    /// A read-level results file lacks a column that is required.
    #[error("{} has no `{column}` column (its columns are: {found}), so it is not the read-level results of a classification; download the read-level results again", .path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The required column.
        column: &'static str,
        /// The columns the header line does have, joined with commas.
        found: String,
    },

    /// The reads ran out before the read-level results did.
    #[error("{} ends after {records} records but {} has more rows (line {line}): the read-level results belong to other reads, or one of the files is incomplete; check that the classification was run on exactly this file", .reads.display(), .results.display())]
    MoreRowsThanReads {
        /// The reads file that ran out.
        reads: PathBuf,
        /// The read-level results.
        results: PathBuf,
        /// Records read from `reads` before it ran out.
        records: u64,
        /// The first row of `results` without a read.
        line: u64,
    },

    /// The read-level results ran out before the reads did.
    #[error("{} ends after {rows} rows but {} has more records (record {record} has no row): the read-level results belong to other reads, or one of the files is incomplete; check that the classification was run on exactly this file", .results.display(), .reads.display())]
    MoreReadsThanRows {
        /// The read-level results that ran out.
        results: PathBuf,
        /// The reads file that has more.
        reads: PathBuf,
        /// Rows read before the results ran out.
        rows: u64,
        /// The first record of `reads` without a row (1-based).
        record: u64,
    },

    /// One file of a pair ended before its mate file.
    #[error("{} ends after {records} records but its mate file {} has more: the two files are not mates, or one of them is incomplete", .shorter.display(), .longer.display())]
    PairLengthMismatch {
        /// The file that ran out first.
        shorter: PathBuf,
        /// The file with more records.
        longer: PathBuf,
        /// Records in `shorter`.
        records: u64,
    },

    /// Two records that should name the same read do not.
    #[error("record {record} is `{name}` in {} but `{other_name}` in {}: {}", .path.display(), .other.display(), .hint)]
    NameMismatch {
        /// The first file.
        path: PathBuf,
        /// The record number (1-based) in `path`.
        record: u64,
        /// The read's identifier in `path`.
        name: String,
        /// The other file (the mate file, or the read-level results).
        other: PathBuf,
        /// The identifier in `other`.
        other_name: String,
        /// What this probably means.
        hint: &'static str,
    },

    /// An interleaved file has an odd number of records, so its last read has no mate.
    #[error("{} has an odd number of records ({records}), so it is not an interleaved pair (an interleaved file alternates read 1 and read 2); treat it as single-end instead", .path.display())]
    OddInterleaved {
        /// The file.
        path: PathBuf,
        /// Records in the file.
        records: u64,
    },

    /// A file given as interleaved is not: a record is not followed by its mate.
    #[error("{} is not interleaved: record {record} is `{name}` but the record after it is `{next_name}` (an interleaved file has each read 1 followed by its read 2, with the same read name); treat it as single-end instead", .path.display())]
    NotInterleaved {
        /// The file.
        path: PathBuf,
        /// The read-1 record (1-based).
        record: u64,
        /// Its read name.
        name: String,
        /// The next record's read name.
        next_name: String,
    },

    /// No taxon was chosen for a subset.
    #[error("no taxon was chosen: give at least one tax id whose reads to keep or exclude")]
    NoTaxIds,

    /// The two files of a pair hold different formats.
    #[error("{} is {format} but its mate file {} is {other_format}; both files of a pair must be the same format", .path.display(), .other.display())]
    MixedFormats {
        /// The first file.
        path: PathBuf,
        /// Its format.
        format: Format,
        /// The mate file.
        other: PathBuf,
        /// Its format.
        other_format: Format,
    },

    /// Two outputs of one operation would be written to the same file.
    #[error("both outputs would be written to {}; give the two input files different names or write to different folders", .path.display())]
    OutputClash {
        /// The output file.
        path: PathBuf,
    },

    /// An output's file is already there and was not to be replaced
    /// ([`SubsetOptions::keep_existing`](crate::SubsetOptions::keep_existing)).
    #[error("{} already exists and was not replaced; move it away or write to another folder", .path.display())]
    OutputExists {
        /// The output file.
        path: PathBuf,
    },

    /// An output would overwrite one of the inputs.
    #[error("the output {} would overwrite an input file; choose another output folder", .path.display())]
    OutputIsInput {
        /// The output file.
        path: PathBuf,
    },

    /// A JSON results file could not be parsed.
    #[error("{} is not valid {what}; download the results again", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What was expected (for example "panel results JSON").
        what: &'static str,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },

    /// A sub-panel of panel results is not a description with a list of markers.
    #[error(
        "sub-panel `{name}` of panel `{panel}` is not in the expected shape (a description and a list of markers, each with name, status and length)"
    )]
    SubPanel {
        /// The panel's name.
        panel: String,
        /// The sub-panel's name.
        name: String,
        /// Where in the sub-panel the problem is.
        #[source]
        source: serde_json::Error,
    },

    /// A classification table holds a tax id that is not a whole number.
    #[error(
        "the classification table has tax id `{tax_id}` (taxon `{name}`), which is not a whole number; the results are damaged or come from an incompatible service"
    )]
    BadTaxId {
        /// The tax id as written.
        tax_id: String,
        /// The taxon's name.
        name: String,
    },
}

/// Where in a sequence or read-level file a problem is, and what it is.
///
/// [`crate::Reader::read_record`] and [`crate::ReadLevelReader::read_record`] return `io::Error`s
/// (kind `InvalidData`) that wrap a `ParseError`; the functions that take a path turn them into
/// [`Error::Parse`] with the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The line (1-based) where the problem is.
    pub line: u64,
    /// The record or row (1-based).
    pub record: u64,
    /// The record's identifier, where it could be read.
    pub id: Option<String>,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, {}: {}", self.line, record_label(self.record, self.id.as_deref()), self.kind)
    }
}

impl std::error::Error for ParseError {}

/// `32 Mbp`, `1.5 Gbp`, `900 bp`.
fn human_bases(n: usize) -> String {
    let n = n as f64;
    let (value, unit) = if n >= 1e9 {
        (n / 1e9, "Gbp")
    } else if n >= 1e6 {
        (n / 1e6, "Mbp")
    } else if n >= 1e3 {
        (n / 1e3, "kbp")
    } else {
        return format!("{n} bp");
    };
    if value.fract() == 0.0 { format!("{value:.0} {unit}") } else { format!("{value:.1} {unit}") }
}

impl From<ParseError> for io::Error {
    fn from(e: ParseError) -> Self {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// What is wrong with a record or row.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The first line is not a FASTA (`>`) or FASTQ (`@`) header.
    NotSequence {
        /// What the first bytes look like, in words.
        found: String,
    },
    /// A line where a record should start does not start with the format's marker.
    ExpectedHeader {
        /// The file's format.
        format: Format,
        /// The start of the line found.
        found: String,
    },
    /// A FASTQ record ends after its header.
    MissingSequence,
    /// The third line of a FASTQ record does not start with `+`.
    ExpectedPlus {
        /// The start of the line found.
        found: String,
    },
    /// A FASTQ record has no quality line.
    MissingQuality,
    /// The quality line's length differs from the sequence's.
    LengthMismatch {
        /// Sequence length.
        sequence: usize,
        /// Quality length.
        quality: usize,
        /// The quality line starts with `@`, so it is probably the next record's header.
        looks_like_header: bool,
    },
    /// A sequence holds a character that is not a letter (or `-`, `.`, `*`).
    BadSequenceChar {
        /// The character.
        byte: u8,
        /// Its position in the line, 1-based.
        column: usize,
    },
    /// A quality line holds a character outside `!`..`~`.
    BadQualityChar {
        /// The character.
        byte: u8,
        /// Its position in the line, 1-based.
        column: usize,
    },
    /// A line is longer than [`crate::MAX_LINE_LEN`].
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// A record's sequence is longer than the reader was told to accept
    /// ([`crate::Reader::with_max_record_length`]).
    RecordTooLong {
        /// The limit in bases.
        limit: usize,
    },
    /// A row of a TSV has fewer fields than its header line.
    FieldCount {
        /// Fields in the row.
        found: usize,
        /// Fields in the header line.
        expected: usize,
    },
    /// A TSV field does not hold what its column should.
    BadField {
        /// The column's name.
        column: &'static str,
        /// The value found (shortened).
        value: String,
        /// What was expected, in words.
        expected: &'static str,
    },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::NotSequence { found } => write!(
                f,
                "this is not a FASTA or FASTQ file (it looks like {found}); a FASTA file starts with `>` and a FASTQ file with `@`"
            ),
            ParseErrorKind::ExpectedHeader { format, found } => write!(
                f,
                "expected the start of a {format} record (a line starting with `{}`) but found `{found}`; the file is damaged, or was cut and joined",
                format.marker() as char
            ),
            ParseErrorKind::MissingSequence => f.write_str(
                "the record ends after its header: the sequence line is missing; the file was probably cut short, copy it again",
            ),
            ParseErrorKind::ExpectedPlus { found } => write!(
                f,
                "the third line of a FASTQ record must start with `+` but is `{found}`; the record is damaged (MGDS reads FASTQ with one sequence line and one quality line per record)"
            ),
            ParseErrorKind::MissingQuality => f.write_str(
                "the record has no quality line: the file was probably cut short, copy it again",
            ),
            ParseErrorKind::LengthMismatch { sequence, quality, looks_like_header } => {
                write!(
                    f,
                    "the quality line has {quality} characters but the sequence has {sequence}; they must be the same length"
                )?;
                if *looks_like_header {
                    f.write_str(
                        " (the quality line looks like the next record's header, so this record's quality line is probably missing)",
                    )?;
                }
                f.write_str("; the file is damaged, export or copy it again")
            }
            ParseErrorKind::BadSequenceChar { byte, column } => write!(
                f,
                "the sequence has the character {} at position {column}, but a sequence holds only letters (A, C, G, T, N, ...); the file is damaged or is not a reads file",
                show_byte(*byte)
            ),
            ParseErrorKind::BadQualityChar { byte, column } => write!(
                f,
                "the quality line has the character {} at position {column}, which is not a quality score; the file is damaged",
                show_byte(*byte)
            ),
            ParseErrorKind::RecordTooLong { limit } => write!(
                f,
                "the record's sequence is longer than {}, the longest this service analyses in one record \
                 (the operator sets it with `mgds serve --max-record-length`); split the record, or ask for a higher limit",
                human_bases(*limit)
            ),
            ParseErrorKind::LineTooLong { limit } => write!(
                f,
                "a line is longer than {} MiB; this is not a reads file, or it is damaged",
                limit >> 20
            ),
            ParseErrorKind::FieldCount { found, expected } => write!(
                f,
                "the row has {found} fields but the header line has {expected}; the file is damaged, download it again"
            ),
            ParseErrorKind::BadField { column, value, expected } => write!(
                f,
                "the `{column}` value `{value}` is not {expected}; the file is damaged, download it again"
            ),
        }
    }
}

impl Error {
    /// Turns an I/O error met while reading `path` into the matching variant: a wrapped
    /// [`ParseError`] becomes [`Error::Parse`] (or [`Error::NotSequence`]), a decompressor's
    /// early end [`Error::Truncated`], a decompressor's complaint [`Error::Corrupt`].
    pub(crate) fn reading(path: &Path, compression: Compression, line: u64, err: io::Error) -> Error {
        if let Some(pe) = err.get_ref().and_then(|e| e.downcast_ref::<ParseError>()) {
            return Error::from_parse(path, pe.clone());
        }
        match (compression, err.kind()) {
            (Compression::None, _) => Error::Io { path: path.to_owned(), source: err },
            (_, io::ErrorKind::UnexpectedEof) => {
                Error::Truncated { path: path.to_owned(), compression, line, source: err }
            }
            (_, io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData) => {
                Error::Corrupt { path: path.to_owned(), compression, line, source: err }
            }
            _ => Error::Io { path: path.to_owned(), source: err },
        }
    }

    /// [`Error::Parse`] for `path`, or [`Error::NotSequence`] when the file is not sequence data.
    pub(crate) fn from_parse(path: &Path, pe: ParseError) -> Error {
        match pe.kind {
            ParseErrorKind::NotSequence { found } => Error::NotSequence { path: path.to_owned(), found },
            kind => Error::Parse { path: path.to_owned(), line: pe.line, record: pe.record, id: pe.id, kind },
        }
    }
}

fn record_label(record: u64, id: Option<&str>) -> String {
    match id {
        Some(id) if !id.is_empty() => format!("record {record} (`{id}`)"),
        _ => format!("record {record}"),
    }
}

fn recompress_hint(compression: Compression, path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tool = match compression {
        Compression::Bzip2 => "bzip2 -dc",
        Compression::Zstd => "zstd -dc",
        Compression::Xz => "xz -dc",
        _ => "cat",
    };
    let stem = name.rsplit_once('.').map_or(name.as_str(), |(stem, _)| stem);
    format!("{tool} {name} | gzip > {stem}.gz")
}

/// A byte as a person would want to see it in a message.
fn show_byte(b: u8) -> String {
    match b {
        b' ' => "` ` (a space)".to_owned(),
        b'\t' => "a tab".to_owned(),
        b'\r' => "a carriage return".to_owned(),
        0x21..=0x7e => format!("`{}`", b as char),
        _ => format!("0x{b:02X} (not text)"),
    }
}

/// The start of a line, shortened and made printable, for a message.
pub(crate) fn excerpt(line: &[u8]) -> String {
    const MAX: usize = 40;
    let line = trim_eol(line);
    let mut s: String =
        line.iter().take(MAX).map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '\u{FFFD}' }).collect();
    if line.len() > MAX {
        s.push_str("...");
    }
    s
}

/// The line without its `\n` or `\r\n`.
pub(crate) fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_message_names_file_line_record_and_id() {
        let e = Error::Parse {
            path: "reads.fq".into(),
            line: 8,
            record: 2,
            id: Some("r2".into()),
            kind: ParseErrorKind::LengthMismatch { sequence: 4, quality: 3, looks_like_header: true },
        };
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "reads.fq, line 8, record 2 (`r2`): the quality line has 3 characters but the sequence has 4"
            ),
            "{msg}"
        );
        assert!(msg.contains("quality line is probably missing"), "{msg}");
    }

    #[test]
    fn unsupported_compression_suggests_a_command() {
        let e = Error::UnsupportedCompression { path: "x/reads.fastq.bz2".into(), compression: Compression::Bzip2 };
        assert!(e.to_string().contains("`bzip2 -dc reads.fastq.bz2 | gzip > reads.fastq.gz`"), "{e}");
    }

    #[test]
    fn excerpt_is_short_and_printable() {
        assert_eq!(excerpt(b"ab\x00c\r\n"), "ab\u{FFFD}c");
        assert_eq!(excerpt(&[b'a'; 50]).len(), 43);
    }
}
