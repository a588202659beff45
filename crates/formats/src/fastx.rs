//! FASTA/FASTQ records and a streaming reader over `BufRead`.

use std::fmt;
use std::io::{self, BufRead};
use std::ops::Range;

use crate::compression::describe_content;
use crate::error::{ParseError, ParseErrorKind, excerpt, trim_eol};

/// The longest line [`Reader`] accepts (256 MiB, longer than any single-line chromosome of a
/// microbe or a human). A longer line is not sequence data; without a limit a damaged file with
/// no line endings would be read whole into memory.
pub const MAX_LINE_LEN: usize = 256 << 20;

/// A sequence file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// FASTA: `>` header, sequence on one or more lines.
    Fasta,
    /// FASTQ: `@` header, sequence, `+`, quality; one line each.
    Fastq,
}

impl Format {
    /// The byte that starts a record (`>` or `@`).
    pub fn marker(self) -> u8 {
        match self {
            Format::Fasta => b'>',
            Format::Fastq => b'@',
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Fasta => "fasta",
            Format::Fastq => "fastq",
        }
    }

    /// The format whose records start with `byte`.
    pub fn from_marker(byte: u8) -> Option<Format> {
        match byte {
            b'>' => Some(Format::Fasta),
            b'@' => Some(Format::Fastq),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Fasta => "FASTA",
            Format::Fastq => "FASTQ",
        })
    }
}

/// Which read of a pair a record is, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mate {
    /// Read 1 (forward).
    R1,
    /// Read 2 (reverse).
    R2,
}

/// One FASTA or FASTQ record, holding its raw bytes exactly as they were in the file (line
/// endings included) so it can be copied byte-for-byte.
///
/// Reuse one `Record` across [`Reader::read_record`] calls: its buffers keep their capacity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    raw: Vec<u8>,
    format: Option<Format>,
    // End of the header text (after the marker, before the line ending) in `raw`.
    header_end: usize,
    // FASTQ only: sequence and quality in `raw`.
    seq: Range<usize>,
    qual: Range<usize>,
    // FASTA only: the sequence lines joined (a FASTA sequence spans lines, so it is not one
    // slice of `raw`).
    fasta_seq: Vec<u8>,
    line: u64,
}

impl Record {
    /// The record's bytes exactly as read, line endings included. Blank lines before the
    /// record are not part of it; blank lines inside a FASTA record are.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The format; `None` for a record that was never filled.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// The header line after its `>` or `@`, without the line ending: identifier and comment.
    pub fn header(&self) -> &[u8] {
        self.raw.get(1..self.header_end).unwrap_or_default()
    }

    /// The identifier: the header up to the first space or tab.
    pub fn id(&self) -> &[u8] {
        let h = self.header();
        let end = h.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(h.len());
        &h[..end]
    }

    /// The sequence (for FASTA, its lines joined).
    pub fn sequence(&self) -> &[u8] {
        match self.format {
            Some(Format::Fastq) => &self.raw[self.seq.clone()],
            Some(Format::Fasta) => &self.fasta_seq,
            None => &[],
        }
    }

    /// The quality line (FASTQ); empty for FASTA.
    pub fn quality(&self) -> &[u8] {
        match self.format {
            Some(Format::Fastq) => &self.raw[self.qual.clone()],
            _ => &[],
        }
    }

    /// The line (1-based) of the record's header in the decompressed file.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Which read of a pair the header says this is (see [`mate_from_header`]).
    pub fn mate(&self) -> Option<Mate> {
        mate_from_header(self.header())
    }

    /// The identifier without a `/1` or `/2` suffix: the same for both mates of a pair.
    pub fn base_id(&self) -> &[u8] {
        base_id(self.header())
    }

    /// Whether the raw bytes end with a line ending (the last record of a file may not).
    pub fn ends_with_newline(&self) -> bool {
        self.raw.last() == Some(&b'\n')
    }

    /// Whether the header line ends with `\r\n` (Windows line endings).
    pub fn has_crlf(&self) -> bool {
        self.raw.get(self.header_end) == Some(&b'\r')
    }

    /// Fills the record from a whole FASTQ record `raw` that [`scan_fastq`] accepted.
    fn set_fastq(&mut self, raw: &[u8], spans: &FastqSpans, line: u64) {
        self.raw.clear();
        self.raw.extend_from_slice(raw);
        self.fasta_seq.clear();
        self.format = Some(Format::Fastq);
        self.header_end = spans.header_end;
        self.seq = spans.seq.clone();
        self.qual = spans.qual.clone();
        self.line = line;
    }

    fn clear(&mut self) {
        self.raw.clear();
        self.fasta_seq.clear();
        self.format = None;
        self.header_end = 0;
        self.seq = 0..0;
        self.qual = 0..0;
        self.line = 0;
    }

    fn id_string(&self) -> Option<String> {
        let id = self.id();
        (!id.is_empty()).then(|| String::from_utf8_lossy(id).into_owned())
    }
}

/// Which read of a pair a header (without its `@`/`>`) names: an Illumina comment
/// (`1:N:0:ACGT` / `2:N:0:ACGT`) or a `/1` / `/2` suffix on the identifier.
///
/// Single-end Illumina reads also carry `1:N:0`, so `R1` alone does not mean "paired".
pub fn mate_from_header(header: &[u8]) -> Option<Mate> {
    let id_end = header.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(header.len());
    let (id, rest) = header.split_at(id_end);
    let comment = rest.trim_ascii_start();
    // Illumina 1.8+: `<read>:<is filtered Y/N>:<control number>:<index>`.
    if comment.len() >= 4 && comment[1] == b':' && matches!(comment[2], b'Y' | b'N') && comment[3] == b':' {
        match comment[0] {
            b'1' => return Some(Mate::R1),
            b'2' => return Some(Mate::R2),
            _ => {}
        }
    }
    match id {
        [.., b'/', b'1'] => Some(Mate::R1),
        [.., b'/', b'2'] => Some(Mate::R2),
        _ => None,
    }
}

/// The identifier of a header (up to the first space or tab) without a `/1` or `/2` suffix, so
/// both mates of a pair have the same base id. A leading `@` or `>` is dropped too.
pub fn base_id(header: &[u8]) -> &[u8] {
    let header = match header.first() {
        Some(b'@' | b'>') => &header[1..],
        _ => header,
    };
    let end = header.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(header.len());
    let id = trim_eol(&header[..end]);
    match id {
        [rest @ .., b'/', b'1' | b'2'] => rest,
        _ => id,
    }
}

/// Reads FASTA or FASTQ records one at a time from decompressed bytes.
///
/// The format is taken from the first record (`>` or `@`) unless given. Windows line endings
/// are accepted, as are blank lines between records and a last line without a line ending. FASTQ
/// records must have one sequence line and one quality line (multi-line FASTQ is not read).
pub struct Reader<R> {
    inner: R,
    format: Option<Format>,
    line: u64,
    records: u64,
    started: bool,
    // The last FASTQ sequence's length: where the next one's line ending is looked for first
    // (reads of a run mostly have one length).
    seq_len: usize,
    // The longest sequence accepted in one record.
    max_record: usize,
}

impl<R: BufRead> Reader<R> {
    /// A reader that takes the format from the first record.
    pub fn new(inner: R) -> Self {
        Reader { inner, format: None, line: 0, records: 0, started: false, seq_len: 0, max_record: usize::MAX }
    }

    /// Refuses, with [`ParseErrorKind::RecordTooLong`] naming the record, a record whose
    /// sequence is longer than `bases`, before more than about that much of it is held in
    /// memory. For input from outside (a sample's reads), where one enormous record would
    /// otherwise take the memory of the process reading it; reference genomes are read without.
    pub fn with_max_record_length(mut self, bases: usize) -> Self {
        self.max_record = bases.max(1);
        self
    }

    /// The line limit: [`MAX_LINE_LEN`], or a little past the record limit when that is lower.
    fn line_limit(&self) -> usize {
        MAX_LINE_LEN.min(self.max_record.saturating_add(64 * 1024))
    }

    /// A reader that expects `format`.
    pub fn with_format(inner: R, format: Format) -> Self {
        Reader { format: Some(format), ..Reader::new(inner) }
    }

    /// The format, once known.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Lines read so far (the number of the last line read).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// Records read so far.
    pub fn record_count(&self) -> u64 {
        self.records
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads the next record into `record`, reusing its buffers. Returns the record's length in
    /// bytes, or 0 at the end of the input.
    ///
    /// A malformed record is an `io::Error` of kind `InvalidData` wrapping a [`ParseError`]
    /// with the line, the record number and the record's id.
    pub fn read_record(&mut self, record: &mut Record) -> io::Result<usize> {
        if self.started && self.format == Some(Format::Fastq) {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return self.read_record(record),
                Err(e) => return Err(e),
            };
            if let Some(spans) = scan_fastq(buf, self.seq_len).filter(|s| s.seq.len() <= self.max_record) {
                self.seq_len = spans.seq.len();
                record.set_fastq(&buf[..spans.len], &spans, self.line + 1);
                self.inner.consume(spans.len);
                self.line += 4;
                self.records += 1;
                return Ok(spans.len);
            }
        }
        record.clear();
        if !self.started {
            self.started = true;
            // A byte-order mark from a Windows editor is not part of the first header.
            if self.inner.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
                self.inner.consume(3);
            }
        }
        // Skip blank lines where a record may start.
        loop {
            self.check_record_start()?;
            if self.read_line(&mut record.raw)? == 0 {
                return Ok(0);
            }
            if trim_eol(&record.raw).is_empty() {
                record.raw.clear();
                continue;
            }
            break;
        }
        record.line = self.line;
        let first = record.raw[0];
        let format = match self.format {
            Some(f) => f,
            None => match Format::from_marker(first) {
                Some(f) if !(first == b'@' && describe_content(&record.raw).contains("SAM")) => {
                    self.format = Some(f);
                    f
                }
                _ => {
                    let found = describe_content(&record.raw);
                    return Err(self.error(record, ParseErrorKind::NotSequence { found }));
                }
            },
        };
        if first != format.marker() {
            let kind = if self.records == 0 && Format::from_marker(first).is_none() {
                ParseErrorKind::NotSequence { found: describe_content(&record.raw) }
            } else {
                ParseErrorKind::ExpectedHeader { format, found: excerpt(&record.raw) }
            };
            return Err(self.error(record, kind));
        }
        record.format = Some(format);
        record.header_end = trim_eol(&record.raw).len();
        match format {
            Format::Fastq => self.read_fastq_rest(record)?,
            Format::Fasta => self.read_fasta_rest(record)?,
        }
        self.records += 1;
        Ok(record.raw.len())
    }

    /// Finds, in place, the FASTQ records that lie whole in the reader's buffer in the plain form
    /// [`Reader::read_record`] reads quickly, and returns the buffer: record *i* ends at
    /// `ends[i]` (offsets in the buffer; the first starts at 0). Nothing is consumed or counted
    /// until [`Reader::consume_records`]. `ends` is left empty when the next record needs
    /// [`Reader::read_record`]: the format is not known yet, the record is cut by the buffer's
    /// end or is not in the plain form (its errors are worded there), or the input has ended.
    ///
    /// For callers that copy records byte for byte: runs of records go out as one slice of the
    /// buffer, with no copy into a [`Record`].
    pub(crate) fn whole_records(&mut self, ends: &mut Vec<usize>) -> io::Result<&[u8]> {
        ends.clear();
        if !(self.started && self.format == Some(Format::Fastq)) {
            return Ok(&[]);
        }
        // An interrupted read is retried here, so that the buffer is borrowed only once below.
        loop {
            match self.inner.fill_buf() {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
                Ok(_) => break,
            }
        }
        let buf = self.inner.fill_buf()?;
        let mut pos = 0;
        while let Some(spans) = scan_fastq(&buf[pos..], self.seq_len) {
            self.seq_len = spans.seq.len();
            pos += spans.len;
            ends.push(pos);
        }
        Ok(buf)
    }

    /// Consumes the first `records` records that [`Reader::whole_records`] found, which take
    /// `bytes` bytes, and counts them as read.
    pub(crate) fn consume_records(&mut self, records: usize, bytes: usize) {
        self.inner.consume(bytes);
        self.records += records as u64;
        self.line += 4 * records as u64;
    }

    /// An iterator over the remaining records (each one a new `Record`).
    pub fn records(&mut self) -> Records<'_, R> {
        Records { reader: self }
    }

    fn read_fastq_rest(&mut self, record: &mut Record) -> io::Result<()> {
        // Sequence.
        let start = record.raw.len();
        if self.read_line(&mut record.raw)? == 0 {
            return Err(self.error(record, ParseErrorKind::MissingSequence));
        }
        let seq = start..start + trim_eol(&record.raw[start..]).len();
        if seq.len() > self.max_record {
            return Err(self.error(record, ParseErrorKind::RecordTooLong { limit: self.max_record }));
        }
        if let Some((column, byte)) = first_bad(&record.raw[seq.clone()], is_sequence_byte) {
            return Err(self.error(record, ParseErrorKind::BadSequenceChar { byte, column }));
        }
        record.seq = seq;
        // Separator.
        let start = record.raw.len();
        if self.read_line(&mut record.raw)? == 0 {
            return Err(self.error(record, ParseErrorKind::MissingQuality));
        }
        if record.raw[start] != b'+' {
            let found = excerpt(&record.raw[start..]);
            return Err(self.error(record, ParseErrorKind::ExpectedPlus { found }));
        }
        // Quality.
        let start = record.raw.len();
        if self.read_line(&mut record.raw)? == 0 {
            return Err(self.error(record, ParseErrorKind::MissingQuality));
        }
        let qual = start..start + trim_eol(&record.raw[start..]).len();
        if qual.len() != record.seq.len() {
            let looks_like_header = record.raw[start] == b'@';
            let kind =
                ParseErrorKind::LengthMismatch { sequence: record.seq.len(), quality: qual.len(), looks_like_header };
            return Err(self.error(record, kind));
        }
        if let Some((column, byte)) = first_bad(&record.raw[qual.clone()], is_quality_byte) {
            return Err(self.error(record, ParseErrorKind::BadQualityChar { byte, column }));
        }
        record.qual = qual;
        Ok(())
    }

    fn read_fasta_rest(&mut self, record: &mut Record) -> io::Result<()> {
        loop {
            match self.inner.fill_buf()?.first() {
                None | Some(b'>') => return Ok(()),
                Some(_) => {}
            }
            let start = record.raw.len();
            self.read_line(&mut record.raw)?;
            let line = trim_eol(&record.raw[start..]);
            if let Some((column, byte)) = first_bad(line, is_sequence_byte) {
                return Err(self.error(record, ParseErrorKind::BadSequenceChar { byte, column }));
            }
            let end = start + line.len();
            record.fasta_seq.extend_from_slice(&record.raw[start..end]);
            if record.fasta_seq.len() > self.max_record {
                return Err(self.error(record, ParseErrorKind::RecordTooLong { limit: self.max_record }));
            }
        }
    }

    /// Looks at the next byte before a record's first line is read: a line that cannot start a
    /// record is reported from what is already buffered, so a large binary file is never read
    /// line by line (its "lines" can be huge).
    fn check_record_start(&mut self) -> io::Result<()> {
        let records = self.records;
        let format = self.format;
        let available = self.inner.fill_buf()?;
        let Some(&first) = available.first() else {
            return Ok(());
        };
        let fits = match format {
            Some(f) => first == f.marker(),
            None => Format::from_marker(first).is_some(),
        };
        if fits || first == b'\n' || first == b'\r' {
            return Ok(());
        }
        let start = &available[..available.len().min(4096)];
        let kind = match format {
            Some(format) if records > 0 || Format::from_marker(first).is_some() => {
                let line = start.split(|&b| b == b'\n').next().unwrap_or_default();
                ParseErrorKind::ExpectedHeader { format, found: excerpt(line) }
            }
            _ => ParseErrorKind::NotSequence { found: describe_content(start) },
        };
        Err(ParseError { line: self.line + 1, record: records + 1, id: None, kind }.into())
    }

    /// Appends one line (with its ending) to `buf`; returns its length, 0 at the end.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let start = buf.len();
        let limit = self.line_limit();
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            let (done, used) = match memchr::memchr(b'\n', available) {
                Some(i) => (true, i + 1),
                None => (false, available.len()),
            };
            if buf.len() - start + used > limit {
                self.line += 1;
                let kind = if limit < MAX_LINE_LEN {
                    ParseErrorKind::RecordTooLong { limit: self.max_record }
                } else {
                    ParseErrorKind::LineTooLong { limit }
                };
                // The record's id, when this line is not its header.
                let id = (start > 0)
                    .then(|| {
                        let header = buf[..start].split(|&b| b == b'\n').next().unwrap_or_default();
                        String::from_utf8_lossy(base_id(trim_eol(header))).into_owned()
                    })
                    .filter(|i| !i.is_empty());
                return Err(ParseError { line: self.line, record: self.records + 1, id, kind }.into());
            }
            buf.extend_from_slice(&available[..used]);
            self.inner.consume(used);
            if done {
                break;
            }
        }
        let n = buf.len() - start;
        if n > 0 {
            self.line += 1;
        }
        Ok(n)
    }

    fn error(&self, record: &Record, kind: ParseErrorKind) -> io::Error {
        ParseError { line: self.line, record: self.records + 1, id: record.id_string(), kind }.into()
    }
}

/// An iterator over a [`Reader`]'s records; see [`Reader::records`].
pub struct Records<'r, R> {
    reader: &'r mut Reader<R>,
}

impl<R: BufRead> Iterator for Records<'_, R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = Record::default();
        match self.reader.read_record(&mut record) {
            Ok(0) => None,
            Ok(_) => Some(Ok(record)),
            Err(e) => Some(Err(e)),
        }
    }
}

/// Where the parts of a FASTQ record are, as offsets from its `@`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FastqSpans {
    // End of the header text (before the `\n`).
    header_end: usize,
    seq: Range<usize>,
    qual: Range<usize>,
    // The whole record, up to and including the quality line's `\n`.
    len: usize,
}

/// Reads the FASTQ record at the start of `buf` in place when it is whole there and plainly
/// valid: four `\n`-ended lines, a `+` line, sequence and quality of the same length and of
/// allowed bytes, no `\r`. `None` sends the record to the line-by-line path, which takes every
/// other case (a record cut by the buffer's end, Windows line endings, blank lines) and words
/// the errors. `seq_len` is a guess at the sequence's length (the last record's).
///
/// Most of the cost of a FASTQ file is here: usually one newline search and two byte checks
/// that the compiler vectorizes, instead of a buffer call, a search and a copy per line.
#[inline]
fn scan_fastq(buf: &[u8], seq_len: usize) -> Option<FastqSpans> {
    if buf.first() != Some(&b'@') {
        return None;
    }
    let h = memchr::memchr(b'\n', buf)?;
    if buf[h - 1] == b'\r' {
        return None;
    }
    // The sequence's line ending is looked for where the last record's was, then searched for.
    // Sequence bytes before it make it the first `\n` after the header.
    let guess = h + 1 + seq_len;
    let s = if buf.get(guess) == Some(&b'\n') && all_bytes(&buf[h + 1..guess], is_sequence_byte) {
        guess
    } else {
        let s = h + 1 + memchr::memchr(b'\n', &buf[h + 1..])?;
        if !all_bytes(&buf[h + 1..s], is_sequence_byte) {
            return None;
        }
        s
    };
    let seq = h + 1..s;
    // A bare `+` line (the usual one) is two bytes; a quality line as long as the sequence
    // that ends there is the one, since `\n` is not a quality byte.
    let p = match buf.get(s + 1..s + 3) {
        Some(b"+\n") => s + 2,
        Some([b'+', ..]) => s + 1 + memchr::memchr(b'\n', &buf[s + 1..])?,
        _ => return None,
    };
    let qual = p + 1..p + 1 + seq.len();
    if buf.get(qual.end) != Some(&b'\n') || !all_bytes(&buf[qual.clone()], is_quality_byte) {
        return None;
    }
    Some(FastqSpans { header_end: h, len: qual.end + 1, seq, qual })
}

/// Whether every byte of `bytes` passes `ok`; written without an early exit so that it runs
/// 32 bytes at a time (a bad byte is rare, and then the careful path says where it is).
#[inline]
fn all_bytes(bytes: &[u8], ok: impl Fn(u8) -> bool) -> bool {
    bytes.iter().fold(0u8, |bad, &b| bad | u8::from(!ok(b))) == 0
}

// Letters (IUPAC codes, either case), gaps and stop codons. Bitwise, not short-circuit, so that
// checks over many bytes vectorize.
#[inline]
fn is_sequence_byte(b: u8) -> bool {
    ((b | 0x20).wrapping_sub(b'a') < 26) | (b == b'-') | (b == b'.') | (b == b'*')
}

// Printable ASCII but space: Phred+33 and Phred+64 qualities.
#[inline]
fn is_quality_byte(b: u8) -> bool {
    b.wrapping_sub(b'!') < (b'~' - b'!' + 1)
}

/// The first byte (1-based column, byte) that fails `ok`.
fn first_bad(line: &[u8], ok: impl Fn(u8) -> bool) -> Option<(usize, u8)> {
    line.iter().position(|&b| !ok(b)).map(|i| (i + 1, line[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(input: &[u8]) -> io::Result<Vec<Record>> {
        Reader::new(input).records().collect()
    }

    fn parse_err(input: &[u8]) -> ParseError {
        let err = read_all(input).expect_err("should fail");
        err.get_ref().and_then(|e| e.downcast_ref::<ParseError>()).cloned().expect("a ParseError")
    }

    #[test]
    fn fastq_records_keep_raw_bytes() {
        let input = b"@r1 1:N:0:ACGT\nACGT\n+\nIIII\n@r2\nAC\n+r2\n#I\n";
        let recs = read_all(input).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].raw(), b"@r1 1:N:0:ACGT\nACGT\n+\nIIII\n");
        assert_eq!(recs[0].id(), b"r1");
        assert_eq!(recs[0].header(), b"r1 1:N:0:ACGT");
        assert_eq!(recs[0].sequence(), b"ACGT");
        assert_eq!(recs[0].quality(), b"IIII");
        assert_eq!(recs[0].mate(), Some(Mate::R1));
        assert_eq!(recs[1].raw(), b"@r2\nAC\n+r2\n#I\n");
        assert_eq!(recs[1].line(), 5);
        let joined: Vec<u8> = recs.iter().flat_map(|r| r.raw().to_vec()).collect();
        assert_eq!(joined, input);
    }

    #[test]
    fn crlf_fastq_is_read_and_kept() {
        let input = b"@r1\r\nACGT\r\n+\r\nIIII\r\n@r2\r\nA\r\n+\r\nI";
        let recs = read_all(input).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].sequence(), b"ACGT");
        assert_eq!(recs[0].quality(), b"IIII");
        assert_eq!(recs[0].raw(), b"@r1\r\nACGT\r\n+\r\nIIII\r\n");
        assert_eq!(recs[1].quality(), b"I");
        assert!(!recs[1].ends_with_newline());
    }

    #[test]
    fn fasta_multiline_and_blank_lines() {
        let input = b"\n>c1 desc\nACGT\nAC\n\n>c2\r\nGG\r\n";
        let recs = read_all(input).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].sequence(), b"ACGTAC");
        assert_eq!(recs[0].raw(), b">c1 desc\nACGT\nAC\n\n");
        assert_eq!(recs[0].line(), 2);
        assert_eq!(recs[1].id(), b"c2");
        assert_eq!(recs[1].sequence(), b"GG");
        assert_eq!(recs[1].quality(), b"");
    }

    #[test]
    fn missing_quality_line_names_record_and_line() {
        // r2 lost its quality line, so r3's header is read as r2's quality.
        let input = b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\n@r3\nACGT\n+\nIIII\n";
        let e = parse_err(input);
        assert_eq!(e.record, 2);
        assert_eq!(e.line, 8);
        assert_eq!(e.id.as_deref(), Some("r2"));
        assert_eq!(e.kind, ParseErrorKind::LengthMismatch { sequence: 4, quality: 3, looks_like_header: true });
    }

    #[test]
    fn truncated_record_is_reported() {
        let e = parse_err(b"@r1\nACGT\n+\nIIII\n@r2\nAC");
        assert_eq!((e.record, e.line, e.kind), (2, 6, ParseErrorKind::MissingQuality));
        let e = parse_err(b"@r1\n");
        assert_eq!(e.kind, ParseErrorKind::MissingSequence);
    }

    #[test]
    fn not_sequence_and_bad_bytes() {
        let e = parse_err(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
        assert_eq!(e.kind, ParseErrorKind::NotSequence { found: "a PDF document".into() });
        let e = parse_err(b"@r1\nAC GT\n+\nIIIII\n");
        assert_eq!(e.kind, ParseErrorKind::BadSequenceChar { byte: b' ', column: 3 });
        let e = parse_err(b"@r1\nACGT\n+\nII\x01I\n");
        assert_eq!(e.kind, ParseErrorKind::BadQualityChar { byte: 1, column: 3 });
        let e = parse_err(b"@r1\nACGT\n-\nIIII\n");
        assert_eq!(e.kind, ParseErrorKind::ExpectedPlus { found: "-".into() });
        let e = parse_err(b"@r1\nACGT\n+\nIIII\n>r2\nACGT\n");
        assert_eq!(e.record, 2);
        assert!(matches!(e.kind, ParseErrorKind::ExpectedHeader { format: Format::Fastq, .. }));
        let e = parse_err(b"@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:10\n");
        assert!(matches!(e.kind, ParseErrorKind::NotSequence { ref found } if found.contains("SAM")));
    }

    #[test]
    fn endless_junk_is_refused_without_reading_it() {
        use std::io::{BufReader, Read};
        // Read line by line, these would be lines of many gigabytes.
        let junk = BufReader::new(io::repeat(b'X').take(u64::MAX));
        let mut rec = Record::default();
        let e = Reader::new(junk).read_record(&mut rec).unwrap_err();
        let pe = e.get_ref().and_then(|e| e.downcast_ref::<ParseError>()).unwrap();
        assert!(
            matches!(pe.kind, ParseErrorKind::NotSequence { ref found } if found.starts_with("text starting `XXX"))
        );
        let tail = BufReader::new((&b"@r\nA\n+\nI\n"[..]).chain(io::repeat(0).take(u64::MAX)));
        let mut reader = Reader::new(tail);
        assert!(reader.read_record(&mut rec).unwrap() > 0);
        let e = reader.read_record(&mut rec).unwrap_err();
        let pe = e.get_ref().and_then(|e| e.downcast_ref::<ParseError>()).unwrap();
        assert_eq!((pe.line, pe.record), (5, 2));
        assert!(matches!(pe.kind, ParseErrorKind::ExpectedHeader { format: Format::Fastq, .. }));
    }

    #[test]
    fn empty_input_has_no_records() {
        assert!(read_all(b"").unwrap().is_empty());
        assert!(read_all(b"\n\r\n").unwrap().is_empty());
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let recs = read_all(b"\xef\xbb\xbf>a\nAC\n").unwrap();
        assert_eq!(recs[0].id(), b"a");
    }

    #[test]
    fn reused_record_is_cleared() {
        let mut reader = Reader::new(&b">a\nACGT\n>b\nA\n"[..]);
        let mut rec = Record::default();
        assert_eq!(reader.read_record(&mut rec).unwrap(), 8);
        assert_eq!(reader.read_record(&mut rec).unwrap(), 5);
        assert_eq!(rec.sequence(), b"A");
        assert_eq!(reader.read_record(&mut rec).unwrap(), 0);
        assert_eq!(reader.record_count(), 2);
    }

    #[test]
    fn mates_from_headers() {
        assert_eq!(mate_from_header(b"M0:1:FC:1:1:1:1 2:N:0:ACGT"), Some(Mate::R2));
        assert_eq!(mate_from_header(b"M0:1:FC:1:1:1:1 1:Y:0:1"), Some(Mate::R1));
        assert_eq!(mate_from_header(b"read7/2"), Some(Mate::R2));
        assert_eq!(mate_from_header(b"read7/1 extra"), Some(Mate::R1));
        assert_eq!(mate_from_header(b"read7"), None);
        assert_eq!(mate_from_header(b"read7 3:N:0:1"), None);
        assert_eq!(base_id(b"read7/2 x"), b"read7");
        assert_eq!(base_id(b"@read7 2:N:0"), b"read7");
        assert_eq!(base_id(b"read7\r\n"), b"read7");
    }

    /// The records of `input` read through a buffer of `capacity` bytes (small buffers cut
    /// every record, so every record takes the line-by-line path).
    fn through(input: &[u8], capacity: usize) -> Result<Vec<Record>, String> {
        let mut reader = Reader::new(io::BufReader::with_capacity(capacity, input));
        let mut out = Vec::new();
        loop {
            let mut rec = Record::default();
            match reader.read_record(&mut rec) {
                Ok(0) => return Ok(out),
                Ok(_) => out.push(rec),
                Err(e) => return Err(format!("{e} after {} lines", reader.line_number())),
            }
        }
    }

    #[test]
    fn quick_and_careful_fastq_agree() {
        let input: &[u8] = b"@a 1:N:0:1\nACGT\n+\nIIII\n@b\nACG\n+\nIII\n@c\nACGTACG\n+c\n#######\n\
            @d\nAC\n+\nII\n@e\nacgtn-.*\n+\n!!~~IIII\n\n@f\r\nAC\r\n+\r\nII\r\n@g\n\n+\n\n@h\nACGT\n+\nIIII";
        let expected = through(input, 1).unwrap();
        assert_eq!(expected.len(), 8);
        assert_eq!(expected[2].quality(), b"#######");
        assert_eq!(expected[6].sequence(), b"");
        for capacity in [2, 7, 16, 30, 64, 4096] {
            assert_eq!(through(input, capacity).unwrap(), expected, "capacity {capacity}");
        }
        let joined: Vec<u8> = expected.iter().flat_map(|r| r.raw().to_vec()).collect();
        assert_eq!(joined.len() + 1, input.len(), "all bytes but the blank line");
        // Errors: the same message at the same place whichever path finds them.
        for bad in [
            &b"@a\nACGT\n+\nIIII\n@b\nACGT\n+\nIII\n"[..],
            b"@a\nACGT\n+\nIIII\n@b\nACGT\n+\nIIIII\n",
            b"@a\nACGT\n+\nIIII\n@b\nAC T\n+\nIIII\n",
            b"@a\nACGT\n+\nIIII\n@b\nACGT\n+\nII I\n",
            b"@a\nACGT\n+\nIIII\n@b\nACGT\n-\nIIII\n",
            b"@a\nACGT\n+\nIIII\n@b\nACGT\n\nIIII\n",
            b"@a\nACGT\n+\nIIII\n@b\nAC\nGT\n+\nIIII\n",
        ] {
            let expected = through(bad, 1).unwrap_err();
            for capacity in [5, 4096] {
                assert_eq!(through(bad, capacity).unwrap_err(), expected, "{}", String::from_utf8_lossy(bad));
            }
        }
    }

    #[test]
    fn a_record_longer_than_the_limit_is_refused_by_name() {
        let limit = 1000;
        // FASTA over many lines, FASTQ on one line, FASTQ in the fast path after a short record.
        let fasta = format!(">big chr\n{}\n", "ACGTACGTAC\n".repeat(150));
        let fastq_one = format!("@huge\n{}\n+\n{}\n", "A".repeat(70_000), "I".repeat(70_000));
        let fastq_two = format!("@ok\nACGT\n+\nIIII\n@long\n{}\n+\n{}\n", "C".repeat(1500), "I".repeat(1500));
        for (input, id, line) in [(fasta, "big", 102), (fastq_one, "huge", 2), (fastq_two, "long", 6)] {
            let mut r = Reader::new(input.as_bytes()).with_max_record_length(limit);
            let mut rec = Record::default();
            let err = loop {
                match r.read_record(&mut rec) {
                    Ok(0) => panic!("{id}: read to the end"),
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            let text = err.to_string();
            assert!(text.contains(id) && text.contains("1 kbp") && text.contains("--max-record-length"), "{text}");
            assert!(text.starts_with(&format!("line {line},")), "{text}");
            // Without the limit, the same input reads.
            assert!(Reader::new(input.as_bytes()).records().all(|r| r.is_ok()));
        }
    }
}
