//! Sniffing (format and compression from the first bytes) and full streaming validation.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::compression::{Compression, decompress, describe_content, read_up_to};
use crate::error::{Error, trim_eol};
use crate::fastx::{Format, Mate, Reader, Record};

/// What [`sniff`] learns from a file's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// The compression, from the magic bytes.
    pub compression: Compression,
    /// The format, from the first non-blank byte after decompression.
    pub format: Format,
}

/// The quality score encoding of a FASTQ file, judged from the lowest and highest quality
/// characters seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QualityEncoding {
    /// Sanger / Illumina 1.8+: `!` is quality 0. Seen when any quality is below `;`.
    Phred33,
    /// Illumina 1.3 to 1.7: `@` is quality 0. Seen when every quality is `@` or above and some
    /// are above `K` (no Phred+33 instrument writes only such high scores).
    Phred64,
    /// The scores seen fit both encodings (for example every quality is `I`).
    Unknown,
}

impl QualityEncoding {
    /// The encoding that quality characters between `min` and `max` show.
    pub fn from_range(min: u8, max: u8) -> QualityEncoding {
        if min < b';' {
            QualityEncoding::Phred33
        } else if min >= b'@' && max > b'K' {
            QualityEncoding::Phred64
        } else {
            QualityEncoding::Unknown
        }
    }
}

/// What the read headers of a file say about pairing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPairing {
    /// No header carries a mate mark (`1:N:0` comment or `/1` suffix) and consecutive records
    /// do not share names.
    Unmarked,
    /// Every header says read 1: the R1 file of a pair, or single-end Illumina reads.
    Mate1,
    /// Every header says read 2: the R2 file of a pair.
    Mate2,
    /// Records alternate read 1 / read 2 of the same read name: an interleaved pair.
    Interleaved,
    /// Some mix of the above that is none of them.
    Mixed,
}

/// The result of [`validate`]: one streaming pass over a sequence file.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// FASTA or FASTQ.
    pub format: Format,
    /// The compression.
    pub compression: Compression,
    /// Records (reads, or contigs for FASTA).
    pub records: u64,
    /// Total bases.
    pub bases: u64,
    /// Shortest sequence.
    pub min_len: u64,
    /// Longest sequence.
    pub max_len: u64,
    /// Quality encoding (FASTQ only).
    pub quality: Option<QualityEncoding>,
    /// What the headers say about pairing.
    pub pairing: ReadPairing,
    /// Whether the file has Windows (`\r\n`) line endings.
    pub windows_line_endings: bool,
}

impl Summary {
    /// Mean sequence length (0 when there are no records).
    pub fn mean_len(&self) -> f64 {
        if self.records == 0 { 0.0 } else { self.bases as f64 / self.records as f64 }
    }
}

/// Reads a file's first bytes and tells its compression and format. Cheap: at most a few
/// kilobytes are read and decompressed.
///
/// Fails with [`Error::Empty`], [`Error::NotSequence`] (saying what the file looks like, for
/// example "a PDF document") or [`Error::UnsupportedCompression`].
pub fn sniff(path: impl AsRef<Path>) -> Result<Sniffed, Error> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let (compression, mut reader) = decompress(file, path)?;
    let mut start = vec![0u8; 8 * 1024];
    let n = read_up_to(&mut reader, &mut start).map_err(|e| Error::reading(path, compression, 0, e))?;
    start.truncate(n);
    match first_marker(&start) {
        None => Err(Error::Empty { path: path.to_owned() }),
        Some(b) => match Format::from_marker(b) {
            Some(format) if !describe_content(&start).contains("SAM") => Ok(Sniffed { compression, format }),
            _ => Err(Error::NotSequence { path: path.to_owned(), found: describe_content(&start) }),
        },
    }
}

/// The first byte that is not blank (after a byte-order mark), if any.
fn first_marker(start: &[u8]) -> Option<u8> {
    let text = start.strip_prefix(b"\xef\xbb\xbf").unwrap_or(start);
    text.split(|&b| b == b'\n').map(trim_eol).find(|l| !l.is_empty()).map(|l| l[0])
}

/// Reads the whole file once, checking every record, and summarises it.
///
/// Memory stays flat whatever the file size. Fails on the first problem, naming the line and
/// the record: [`Error::Parse`], [`Error::Truncated`] for a cut-short gzip, [`Error::Empty`],
/// [`Error::NotSequence`], [`Error::UnsupportedCompression`].
pub fn validate(path: impl AsRef<Path>) -> Result<Summary, Error> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    validate_reader(file, path)
}

/// [`validate`] over any byte stream (compressed or not); `name` is used in error messages.
pub fn validate_reader<R: Read + Send>(reader: R, name: &Path) -> Result<Summary, Error> {
    let (compression, inner) = decompress(reader, name)?;
    let mut reader = Reader::new(inner);
    let mut record = Record::default();
    let mut summary = SummaryBuilder::default();
    loop {
        match reader.read_record(&mut record) {
            Ok(0) => break,
            Ok(_) => summary.add(&record),
            Err(e) => return Err(Error::reading(name, compression, reader.line_number(), e)),
        }
    }
    match reader.format() {
        Some(format) if summary.records > 0 => Ok(summary.finish(format, compression)),
        _ => Err(Error::Empty { path: name.to_owned() }),
    }
}

/// Accumulates a [`Summary`] record by record.
#[derive(Debug, Default)]
pub(crate) struct SummaryBuilder {
    records: u64,
    bases: u64,
    min_len: u64,
    max_len: u64,
    min_qual: u8,
    max_qual: u8,
    crlf: bool,
    pairing: PairingTracker,
}

impl SummaryBuilder {
    pub(crate) fn add(&mut self, record: &Record) {
        let len = record.sequence().len() as u64;
        if self.records == 0 {
            self.min_len = len;
            self.min_qual = u8::MAX;
        }
        self.records += 1;
        self.bases += len;
        self.min_len = self.min_len.min(len);
        self.max_len = self.max_len.max(len);
        for &q in record.quality() {
            self.min_qual = self.min_qual.min(q);
            self.max_qual = self.max_qual.max(q);
        }
        self.crlf |= record.has_crlf();
        self.pairing.add(record);
    }

    pub(crate) fn finish(&self, format: Format, compression: Compression) -> Summary {
        let quality = match format {
            Format::Fasta => None,
            // Only empty reads: no quality characters were seen.
            Format::Fastq if self.min_qual > self.max_qual => Some(QualityEncoding::Unknown),
            Format::Fastq => Some(QualityEncoding::from_range(self.min_qual, self.max_qual)),
        };
        Summary {
            format,
            compression,
            records: self.records,
            bases: self.bases,
            min_len: self.min_len,
            max_len: self.max_len,
            quality,
            pairing: self.pairing.finish(),
            windows_line_endings: self.crlf,
        }
    }
}

/// Follows the mate marks of successive records to tell [`ReadPairing`].
#[derive(Debug)]
struct PairingTracker {
    n: u64,
    r1: u64,
    r2: u64,
    unmarked: u64,
    // Still possibly interleaved: every odd record so far was the mate of the one before.
    interleaved: bool,
    prev_base: Vec<u8>,
    prev_mate: Option<Mate>,
}

impl Default for PairingTracker {
    fn default() -> Self {
        PairingTracker { n: 0, r1: 0, r2: 0, unmarked: 0, interleaved: true, prev_base: Vec::new(), prev_mate: None }
    }
}

impl PairingTracker {
    fn add(&mut self, record: &Record) {
        let mate = record.mate();
        match mate {
            Some(Mate::R1) => self.r1 += 1,
            Some(Mate::R2) => self.r2 += 1,
            None => self.unmarked += 1,
        }
        if self.interleaved {
            if self.n.is_multiple_of(2) {
                self.prev_base.clear();
                self.prev_base.extend_from_slice(record.base_id());
                self.prev_mate = mate;
            } else {
                let marks_fit = matches!((self.prev_mate, mate), (Some(Mate::R1), Some(Mate::R2)) | (None, None));
                self.interleaved = marks_fit && record.base_id() == self.prev_base.as_slice();
            }
        }
        self.n += 1;
    }

    fn finish(&self) -> ReadPairing {
        if self.n >= 2 && self.n.is_multiple_of(2) && self.interleaved {
            ReadPairing::Interleaved
        } else if self.r1 == self.n {
            ReadPairing::Mate1
        } else if self.r2 == self.n {
            ReadPairing::Mate2
        } else if self.unmarked == self.n {
            ReadPairing::Unmarked
        } else {
            ReadPairing::Mixed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(input: &[u8]) -> Result<Summary, Error> {
        validate_reader(input, Path::new("test.fq"))
    }

    #[test]
    fn summarises_fastq() {
        let s = summary(b"@a 1:N:0:1\nACGTA\n+\n#####\n@b 1:N:0:1\nAC\n+\nII\n").unwrap();
        assert_eq!(s.format, Format::Fastq);
        assert_eq!(s.compression, Compression::None);
        assert_eq!((s.records, s.bases, s.min_len, s.max_len), (2, 7, 2, 5));
        assert_eq!(s.quality, Some(QualityEncoding::Phred33));
        assert_eq!(s.pairing, ReadPairing::Mate1);
        assert!(!s.windows_line_endings);
        assert!((s.mean_len() - 3.5).abs() < 1e-9);
    }

    #[test]
    fn quality_encodings() {
        assert_eq!(QualityEncoding::from_range(b'#', b'J'), QualityEncoding::Phred33);
        assert_eq!(QualityEncoding::from_range(b'B', b'h'), QualityEncoding::Phred64);
        assert_eq!(QualityEncoding::from_range(b'I', b'I'), QualityEncoding::Unknown);
        let s = summary(b"@a\nACG\n+\nBhh\n").unwrap();
        assert_eq!(s.quality, Some(QualityEncoding::Phred64));
        let s = summary(b">a\nACG\n").unwrap();
        assert_eq!(s.quality, None);
    }

    #[test]
    fn pairing_from_headers() {
        let il = b"@a/1\nA\n+\nI\n@a/2\nA\n+\nI\n@b/1\nA\n+\nI\n@b/2\nA\n+\nI\n";
        assert_eq!(summary(il).unwrap().pairing, ReadPairing::Interleaved);
        let il = b"@a 1:N:0:1\nA\n+\nI\n@a 2:N:0:1\nA\n+\nI\n";
        assert_eq!(summary(il).unwrap().pairing, ReadPairing::Interleaved);
        let r2 = b"@a 2:N:0:1\nA\n+\nI\n@b 2:N:0:1\nA\n+\nI\n";
        assert_eq!(summary(r2).unwrap().pairing, ReadPairing::Mate2);
        let plain = b"@a\nA\n+\nI\n@b\nA\n+\nI\n";
        assert_eq!(summary(plain).unwrap().pairing, ReadPairing::Unmarked);
        // Alternating marks but different names: not mates.
        let mixed = b"@a/1\nA\n+\nI\n@b/2\nA\n+\nI\n";
        assert_eq!(summary(mixed).unwrap().pairing, ReadPairing::Mixed);
    }

    #[test]
    fn windows_line_endings_are_reported() {
        let s = summary(b"@a\r\nACGT\r\n+\r\nIIII\r\n").unwrap();
        assert!(s.windows_line_endings);
        assert_eq!(s.bases, 4);
    }

    #[test]
    fn empty_and_junk() {
        assert!(matches!(summary(b""), Err(Error::Empty { .. })));
        assert!(matches!(summary(b"\n\n"), Err(Error::Empty { .. })));
        let e = summary(b"%PDF-1.5\n%\xb5\xed\xae\xfb\n").unwrap_err();
        assert!(matches!(e, Error::NotSequence { ref found, .. } if found == "a PDF document"), "{e}");
        let e = summary(&[0u8, 159, 146, 150, 1, 2, 3]).unwrap_err();
        assert!(matches!(e, Error::NotSequence { ref found, .. } if found == "binary data"), "{e}");
    }
}
