//! Read-level classification results: a (gzipped) TSV with one row per read, columns found by
//! header name.

use std::io::{self, BufRead};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::compression::{Compression, decompress, open};
use crate::error::{Error, ParseError, ParseErrorKind, excerpt, trim_eol};
use crate::taxonomy::TaxId;

const TAX_ID: &str = "Tax ID";
const N_HITS: &str = "N Hits";
const SEQ_LEN: &str = "Seq Len";
const PASSED_FILTER: &str = "Passed Filter";
const HEADER: &str = "Header";
const KMER_CHAIN: &str = "Kmer Chain";

/// The longest row accepted (64 MiB); a longer line is not read-level results.
const MAX_ROW_LEN: u64 = 64 << 20;

/// Where the known columns are (0-based field indexes). Only `Tax ID` is required; the others
/// are `None` when the file lacks them. Unknown columns are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    /// `Tax ID`: the taxon assigned to the read.
    pub tax_id: usize,
    /// `N Hits`: k-mers of the read found in the database.
    pub n_hits: Option<usize>,
    /// `Seq Len`: the read's length.
    pub seq_len: Option<usize>,
    /// `Passed Filter`: `T` or `F`.
    pub passed_filter: Option<usize>,
    /// `Header`: the read's header (analyses before June 2017).
    pub header: Option<usize>,
    /// `Kmer Chain`: `taxid:position` pairs joined by `|` (analyses before June 2017).
    pub kmer_chain: Option<usize>,
    // Fields in the header line.
    width: usize,
}

impl Columns {
    /// Finds the columns in a header line (without its line ending).
    fn find(header: &[u8]) -> Result<Columns, Vec<String>> {
        let names: Vec<&[u8]> = header.split(|&b| b == b'\t').map(<[u8]>::trim_ascii).collect();
        let find = |name: &str| names.iter().position(|f| *f == name.as_bytes());
        match find(TAX_ID) {
            Some(tax_id) => Ok(Columns {
                tax_id,
                n_hits: find(N_HITS),
                seq_len: find(SEQ_LEN),
                passed_filter: find(PASSED_FILTER),
                header: find(HEADER),
                kmer_chain: find(KMER_CHAIN),
                width: names.len(),
            }),
            None => Err(names.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect()),
        }
    }

    /// What each field of a row is, in order: one entry per column of the header line.
    fn roles(&self) -> Vec<Role> {
        let mut roles = vec![Role::Other; self.width];
        let known = [
            (Some(self.tax_id), Role::TaxId),
            (self.n_hits, Role::NHits),
            (self.seq_len, Role::SeqLen),
            (self.passed_filter, Role::PassedFilter),
            (self.header, Role::Header),
            (self.kmer_chain, Role::KmerChain),
        ];
        for (i, role) in known {
            if let Some(i) = i {
                roles[i] = role;
            }
        }
        roles
    }
}

/// What a field of a row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    TaxId,
    NHits,
    SeqLen,
    PassedFilter,
    Header,
    KmerChain,
    Other,
}

/// The parsed values of one row; text columns are ranges of the row's line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Values {
    tax_id: TaxId,
    n_hits: Option<u64>,
    seq_len: Option<u64>,
    passed_filter: Option<bool>,
    header: Option<Range<usize>>,
    kmer_chain: Option<Range<usize>>,
}

/// One row of read-level results, borrowed from the reader's buffer: what
/// [`ReadLevelReader::for_each_row`] hands out, without copying the row.
#[derive(Debug, Clone, Copy)]
pub struct ReadLevelRow<'a> {
    // The row's line, without its line ending.
    text: &'a [u8],
    values: &'a Values,
    line: u64,
}

impl<'a> ReadLevelRow<'a> {
    /// The taxon the read was assigned to (0: no hit).
    pub fn tax_id(&self) -> TaxId {
        self.values.tax_id
    }

    /// `N Hits`, when the file has that column.
    pub fn n_hits(&self) -> Option<u64> {
        self.values.n_hits
    }

    /// `Seq Len`, when the file has that column.
    pub fn seq_len(&self) -> Option<u64> {
        self.values.seq_len
    }

    /// `Passed Filter` (`T` is true), when the file has that column.
    pub fn passed_filter(&self) -> Option<bool> {
        self.values.passed_filter
    }

    /// `Header`, when the file has that column.
    pub fn header(&self) -> Option<&'a [u8]> {
        self.values.header.clone().map(|r| &self.text[r])
    }

    /// `Kmer Chain`, when the file has that column.
    pub fn kmer_chain(&self) -> Option<&'a [u8]> {
        self.values.kmer_chain.clone().map(|r| &self.text[r])
    }

    /// Field `i` (0-based) of the row, whatever its column.
    pub fn field(&self, i: usize) -> Option<&'a [u8]> {
        self.text.split(|&b| b == b'\t').nth(i)
    }

    /// The row's line number in the file (the header line is line 1).
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// One row of read-level results. Reuse one across [`ReadLevelReader::read_record`] calls: the
/// row's bytes live in a reused buffer, so reading a row allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct ReadLevelRecord {
    // The row's line, without its line ending.
    buf: Vec<u8>,
    values: Values,
    line: u64,
}

impl ReadLevelRecord {
    /// The row, borrowed: its fields are read through [`ReadLevelRow`]'s accessors.
    pub fn as_row(&self) -> ReadLevelRow<'_> {
        ReadLevelRow { text: &self.buf, values: &self.values, line: self.line }
    }

    fn set(&mut self, text: &[u8], values: &Values, line: u64) {
        self.buf.clear();
        self.buf.extend_from_slice(text);
        self.values.clone_from(values);
        self.line = line;
    }
}

/// Reads read-level results row by row, from a plain or gzipped TSV.
///
/// Rows are parsed where they lie in the reader's buffer, in one pass over their bytes (the files
/// are not quoted): no allocation per row, exact line numbers for messages, and `\r\n` line
/// endings accepted. [`ReadLevelReader::read_record`] copies each row into the caller's record;
/// [`ReadLevelReader::for_each_row`] lends them without copying.
pub struct ReadLevelReader<R> {
    inner: R,
    parser: Parser,
    path: PathBuf,
    compression: Compression,
    // A row that did not fit in the buffer, gathered here (rare: once per buffer at most).
    carry: Vec<u8>,
    scratch: ReadLevelRecord,
}

impl ReadLevelReader<Box<dyn BufRead + Send>> {
    /// Opens a read-level results file (gzipped or not, told from its magic bytes) and reads
    /// its header line.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let (compression, reader) = open(path)?;
        Self::with_compression(reader, path, compression)
    }

    /// Like [`ReadLevelReader::open`], but decompressing on the calling thread: for a caller that
    /// reads the rows on a thread of its own, where a second thread would only add hand-offs.
    pub(crate) fn open_inline(path: &Path) -> Result<Self, Error> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let (compression, reader) = decompress(file, path)?;
        Self::with_compression(reader, path, compression)
    }
}

/// What one line turned out to be.
enum Line {
    /// A row, parsed into the parser's values.
    Row,
    /// A blank line, skipped.
    Blank,
}

impl<R: BufRead> ReadLevelReader<R> {
    /// Reads the header line of decompressed TSV `reader`; `name` is used in messages.
    ///
    /// Fails with [`Error::MissingColumn`] when there is no `Tax ID` column and with
    /// [`Error::Empty`] when there is no header line.
    pub fn new(reader: R, name: &Path) -> Result<Self, Error> {
        Self::with_compression(reader, name, Compression::None)
    }

    pub(crate) fn with_compression(inner: R, name: &Path, compression: Compression) -> Result<Self, Error> {
        let mut reader = ReadLevelReader {
            inner,
            parser: Parser {
                columns: EMPTY,
                roles: Vec::new(),
                values: Values::default(),
                fields: Vec::new(),
                rows: 0,
                line: 0,
            },
            path: name.to_owned(),
            compression,
            carry: Vec::new(),
            scratch: ReadLevelRecord::default(),
        };
        let mut header = Vec::new();
        // The header line is the first line that is not blank.
        loop {
            match reader.read_line(&mut header) {
                Ok(0) => {
                    return Err(Error::Empty { path: name.to_owned() });
                }
                Ok(_) if trim_eol(&header).trim_ascii().is_empty() => continue,
                Ok(_) => break,
                Err(e) => return Err(reader.error_for(e)),
            }
        }
        let text = trim_eol(&header);
        let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        let columns = Columns::find(text).map_err(|found| Error::MissingColumn {
            path: name.to_owned(),
            column: TAX_ID,
            found: found.join(", "),
        })?;
        reader.parser.roles = columns.roles();
        reader.parser.columns = columns;
        Ok(reader)
    }

    /// The columns found in the header line.
    pub fn columns(&self) -> &Columns {
        &self.parser.columns
    }

    /// Rows read so far.
    pub fn row_count(&self) -> u64 {
        self.parser.rows
    }

    /// The line number of the last line read (the header line is 1).
    pub fn line_number(&self) -> u64 {
        self.parser.line
    }

    /// The name used in messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the next row into `record`; returns the bytes it took, 0 at the end. Blank lines
    /// are skipped.
    ///
    /// A malformed row is an `io::Error` of kind `InvalidData` wrapping a [`ParseError`] (the
    /// line, the row number, the column and the value).
    pub fn read_record(&mut self, record: &mut ReadLevelRecord) -> io::Result<usize> {
        let mut used = 0;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(0);
            }
            // Most rows: whole in the buffer and in the plain form the service writes.
            if let Some(len) = self.parser.scan(buf) {
                record.set(&buf[..len], &self.parser.values, self.parser.line);
                self.inner.consume(len + 1);
                return Ok(used + len + 1);
            }
            match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    self.parser.line += 1;
                    let kind = self.parser.parse_line(&buf[..i]);
                    if let Ok(Line::Row) = kind {
                        record.set(trim_eol(&buf[..i]), &self.parser.values, self.parser.line);
                    }
                    self.inner.consume(i + 1);
                    used += i + 1;
                    match kind? {
                        Line::Row => return Ok(used),
                        Line::Blank => continue,
                    }
                }
                None => {
                    // The row runs past the buffer (or the file ends without a line ending).
                    let mut carry = std::mem::take(&mut self.carry);
                    let n = self.read_line(&mut carry);
                    let result = match n {
                        Ok(0) => Ok(None),
                        Ok(n) => self.parser.parse_line(&carry).map(|kind| Some((n, kind))),
                        Err(e) => Err(e),
                    };
                    if let Ok(Some((_, Line::Row))) = result {
                        record.set(trim_eol(&carry), &self.parser.values, self.parser.line);
                    }
                    self.carry = carry;
                    match result? {
                        None => return Ok(0),
                        Some((n, Line::Row)) => return Ok(used + n),
                        Some((n, Line::Blank)) => used += n,
                    }
                }
            }
        }
    }

    /// Calls `f` with every remaining row, in order, each borrowed from the reader's buffer (no
    /// copy); stops at the first error, of a row or of `f`. Blank lines are skipped.
    ///
    /// The fastest way through a file: rows are parsed a whole buffer at a time.
    pub fn for_each_row(&mut self, mut f: impl FnMut(ReadLevelRow<'_>) -> io::Result<()>) -> io::Result<()> {
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(());
            }
            // Every whole line in the buffer.
            let mut pos = 0;
            let mut result = Ok(());
            while pos < buf.len() {
                let rest = &buf[pos..];
                if let Some(len) = self.parser.scan(rest) {
                    pos += len + 1;
                    result = f(self.parser.row(&rest[..len]));
                } else if let Some(i) = memchr::memchr(b'\n', rest) {
                    pos += i + 1;
                    self.parser.line += 1;
                    result = match self.parser.parse_line(&rest[..i]) {
                        Ok(Line::Row) => f(self.parser.row(trim_eol(&rest[..i]))),
                        Ok(Line::Blank) => Ok(()),
                        Err(e) => Err(e),
                    };
                } else {
                    break;
                }
                if result.is_err() {
                    break;
                }
            }
            if pos > 0 {
                self.inner.consume(pos);
                result?;
                continue;
            }
            // Not one whole line in the buffer: the row runs past it.
            let mut record = std::mem::take(&mut self.scratch);
            let result = match self.read_record(&mut record) {
                Ok(0) => Ok(true),
                Ok(_) => f(record.as_row()).map(|()| false),
                Err(e) => Err(e),
            };
            self.scratch = record;
            if result? {
                return Ok(());
            }
        }
    }

    /// Turns an error from [`ReadLevelReader::read_record`] into an [`Error`] naming this file.
    pub fn error_for(&self, err: io::Error) -> Error {
        Error::reading(&self.path, self.compression, self.parser.line, err)
    }

    /// Replaces `buf` with the next line; returns its length, 0 at the end.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.clear();
        loop {
            let available = match self.inner.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            let room = (MAX_ROW_LEN as usize).saturating_sub(buf.len());
            let window = &available[..available.len().min(room)];
            match memchr::memchr(b'\n', window) {
                Some(i) => {
                    buf.extend_from_slice(&window[..=i]);
                    self.inner.consume(i + 1);
                    break;
                }
                None => {
                    let n = window.len();
                    buf.extend_from_slice(window);
                    self.inner.consume(n);
                    if buf.len() as u64 >= MAX_ROW_LEN {
                        break;
                    }
                }
            }
        }
        let n = buf.len();
        if n > 0 {
            self.parser.line += 1;
        }
        if n as u64 == MAX_ROW_LEN && buf.last() != Some(&b'\n') {
            let kind = ParseErrorKind::LineTooLong { limit: MAX_ROW_LEN as usize };
            return Err(ParseError { line: self.parser.line, record: self.parser.rows + 1, id: None, kind }.into());
        }
        Ok(n)
    }
}

/// Parses rows against the header's columns, and counts lines and rows.
struct Parser {
    columns: Columns,
    roles: Vec<Role>,
    // The last row's values.
    values: Values,
    // Field boundaries, for rows that take the careful path.
    fields: Vec<Range<usize>>,
    rows: u64,
    line: u64,
}

impl Parser {
    /// The last row parsed, whose line is `text`.
    fn row<'a>(&'a self, text: &'a [u8]) -> ReadLevelRow<'a> {
        ReadLevelRow { text, values: &self.values, line: self.line }
    }

    /// Parses the row at the start of `buf` when it is whole in `buf` (up to its `\n`) and
    /// plainly written: unsigned numbers without spaces, `T`/`F`, no `\r`. Returns the line's
    /// length without the `\n`, and counts the line and the row; `None` (having counted
    /// nothing) sends the line to [`Parser::parse_line`], which accepts every other spelling
    /// and words the errors.
    #[inline(always)]
    fn scan(&mut self, buf: &[u8]) -> Option<usize> {
        let v = &mut self.values;
        v.n_hits = None;
        v.seq_len = None;
        v.passed_filter = None;
        v.header = None;
        v.kmer_chain = None;
        let last = self.roles.len() - 1;
        let mut p = 0;
        for (k, &role) in self.roles.iter().enumerate() {
            let start = p;
            match role {
                Role::TaxId | Role::NHits | Role::SeqLen => {
                    let (n, digits) = scan_digits(&buf[p..])?;
                    p += digits;
                    match role {
                        Role::TaxId => v.tax_id = n,
                        Role::NHits => v.n_hits = Some(n),
                        _ => v.seq_len = Some(n),
                    }
                }
                Role::PassedFilter => {
                    v.passed_filter = Some(match buf.get(p) {
                        Some(b'T') => true,
                        Some(b'F') => false,
                        _ => return None,
                    });
                    p += 1;
                }
                Role::Header | Role::KmerChain | Role::Other => {
                    p += memchr::memchr2(b'\t', b'\n', &buf[p..])?;
                    match role {
                        Role::Header => v.header = Some(start..p),
                        Role::KmerChain => v.kmer_chain = Some(start..p),
                        _ => {}
                    }
                }
            }
            match buf.get(p) {
                Some(b'\t') if k < last => p += 1,
                // Columns the header line does not name: ignored.
                Some(b'\t') => {
                    p += memchr::memchr(b'\n', &buf[p..])?;
                    break;
                }
                Some(b'\n') if k == last => break,
                // `\r`, spaces, too few fields, or the end of the buffer.
                _ => return None,
            }
        }
        // Not a blank line: the tax id has a digit.
        self.line += 1;
        self.rows += 1;
        Some(p)
    }

    /// Parses one line (without its `\n`, maybe with `\r`), already counted as a line: a blank
    /// line, or a row whose values go into `self.values`.
    fn parse_line(&mut self, line: &[u8]) -> io::Result<Line> {
        let line = trim_eol(line);
        if line.trim_ascii().is_empty() {
            return Ok(Line::Blank);
        }
        self.rows += 1;
        self.fields.clear();
        let mut start = 0;
        for i in memchr::memchr_iter(b'\t', line) {
            self.fields.push(start..i);
            start = i + 1;
        }
        self.fields.push(start..line.len());
        let c = self.columns;
        if self.fields.len() < c.width {
            return Err(self.error(ParseErrorKind::FieldCount { found: self.fields.len(), expected: c.width }));
        }
        let field = |i: usize| &line[self.fields[i].clone()];
        let tax_id = parse_int(field(c.tax_id)).ok_or_else(|| self.bad(TAX_ID, field(c.tax_id), "a whole number"))?;
        let int = |col: Option<usize>, name| match col {
            Some(i) => parse_int(field(i)).map(Some).ok_or_else(|| self.bad(name, field(i), "a whole number")),
            None => Ok(None),
        };
        let n_hits = int(c.n_hits, N_HITS)?;
        let seq_len = int(c.seq_len, SEQ_LEN)?;
        let passed_filter = match c.passed_filter {
            Some(i) => Some(parse_bool(field(i)).ok_or_else(|| self.bad(PASSED_FILTER, field(i), "T or F"))?),
            None => None,
        };
        self.values = Values {
            tax_id,
            n_hits,
            seq_len,
            passed_filter,
            header: c.header.map(|i| self.fields[i].clone()),
            kmer_chain: c.kmer_chain.map(|i| self.fields[i].clone()),
        };
        Ok(Line::Row)
    }

    fn bad(&self, column: &'static str, value: &[u8], expected: &'static str) -> io::Error {
        self.error(ParseErrorKind::BadField { column, value: excerpt(value), expected })
    }

    fn error(&self, kind: ParseErrorKind) -> io::Error {
        ParseError { line: self.line, record: self.rows, id: None, kind }.into()
    }
}

// Placeholder until the header line is read.
const EMPTY: Columns =
    Columns { tax_id: 0, n_hits: None, seq_len: None, passed_filter: None, header: None, kmer_chain: None, width: 1 };

/// The unsigned decimal number at the start of `bytes` and its length in digits; `None` when
/// there is no digit, or more than 19 (which might not fit in a `u64`).
///
/// Up to 7 digits are read eight bytes at a time without a branch per digit (the lengths of
/// tax ids and hit counts vary from row to row, and a mispredicted loop exit per number costs
/// more than the rest of the row).
#[inline]
fn scan_digits(bytes: &[u8]) -> Option<(u64, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    if let Some(word) = bytes.first_chunk::<8>() {
        let x = u64::from_le_bytes(*word) ^ (ONES * u64::from(b'0'));
        // A byte is a digit when it is now 0..=9: adding 0x76 to its low 7 bits sets the top bit
        // for 10 and more, and a byte of 0x80 or more already has it.
        let not_digit = (((x & (ONES * 0x7f)) + ONES * 0x76) | x) & (ONES * 0x80);
        let digits = (not_digit.trailing_zeros() / 8) as usize;
        if (1..8).contains(&digits) {
            // The digits moved to the end of the word, behind zeros: "562" reads as "00000562".
            let mut v = x << (64 - 8 * digits);
            v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
            v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
            v = (v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff;
            return Some((v, digits));
        }
        if digits == 0 {
            return None;
        }
    }
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 19 {
        return None;
    }
    let n = bytes[..digits].iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Some((n, digits))
}

/// A decimal whole number, surrounding spaces allowed; no allocation.
fn parse_int(field: &[u8]) -> Option<u64> {
    let digits = field.trim_ascii();
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0')))
}

// The spec says "T or F"; the other spellings of a boolean are accepted too, since the column's
// type is given as boolean/string.
fn parse_bool(field: &[u8]) -> Option<bool> {
    match field.trim_ascii() {
        b"T" | b"t" | b"True" | b"true" | b"TRUE" | b"1" => Some(true),
        b"F" | b"f" | b"False" | b"false" | b"FALSE" | b"0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Row = (TaxId, Option<bool>, Option<u64>, Option<u64>, Option<Vec<u8>>, u64);

    fn rows(input: &[u8]) -> Result<Vec<Row>, Error> {
        let mut reader = ReadLevelReader::new(input, Path::new("r.tsv"))?;
        let mut rec = ReadLevelRecord::default();
        let mut out = Vec::new();
        loop {
            match reader.read_record(&mut rec) {
                Ok(0) => return Ok(out),
                Ok(_) => out.push((
                    rec.as_row().tax_id(),
                    rec.as_row().passed_filter(),
                    rec.as_row().n_hits(),
                    rec.as_row().seq_len(),
                    rec.as_row().header().map(<[u8]>::to_vec),
                    rec.as_row().line(),
                )),
                Err(e) => return Err(reader.error_for(e)),
            }
        }
    }

    #[test]
    fn columns_by_name_in_any_order() {
        let tsv = b"Seq Len\tExtra\tTax ID\tPassed Filter\tN Hits\n150\tx\t816\tT\t12\n90\ty\t0\tF\t0\n";
        let r = rows(tsv).unwrap();
        assert_eq!(
            r,
            vec![(816, Some(true), Some(12), Some(150), None, 2), (0, Some(false), Some(0), Some(90), None, 3)]
        );
    }

    #[test]
    fn optional_columns_absent_and_crlf() {
        let r = rows(b"Header\tTax ID\r\nread1 1:N\t562\r\n\r\n").unwrap();
        assert_eq!(r, vec![(562, None, None, None, Some(b"read1 1:N".to_vec()), 2)]);
    }

    #[test]
    fn missing_tax_id_column_is_named() {
        let e = rows(b"Header\tTaxon\tSeq Len\nr\t1\t5\n").err().unwrap();
        assert!(
            matches!(e, Error::MissingColumn { column: "Tax ID", ref found, .. } if found == "Header, Taxon, Seq Len")
        );
        assert!(e.to_string().contains("has no `Tax ID` column"), "{e}");
        assert!(matches!(rows(b"").err().unwrap(), Error::Empty { .. }));
    }

    #[test]
    fn bad_values_name_line_and_column() {
        let e = rows(b"Tax ID\tPassed Filter\n1\tT\nabc\tT\n").err().unwrap();
        assert!(matches!(e, Error::Parse { line: 3, record: 2, .. }), "{e:?}");
        assert!(e.to_string().contains("the `Tax ID` value `abc` is not a whole number"), "{e}");
        let e = rows(b"Tax ID\tPassed Filter\n1\tmaybe\n").err().unwrap();
        assert!(e.to_string().contains("`Passed Filter` value `maybe` is not T or F"), "{e}");
        let e = rows(b"Tax ID\tSeq Len\n1\n").err().unwrap();
        assert!(matches!(e, Error::Parse { kind: ParseErrorKind::FieldCount { found: 1, expected: 2 }, .. }), "{e:?}");
    }

    #[test]
    fn digits_scan_like_parse_int() {
        for text in [
            &b"0\t"[..],
            b"7",
            b"562\tx",
            b"1234567\n",
            b"12345678\t",
            b"123456789012345",
            b"9999999999999999999\n",
            b"99999999999999999999",
            b"\t1",
            b" 1",
            b"",
            b"0000001\t",
            b"00000001\t",
            b"4294967296\t",
        ] {
            let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
            let expected = parse_int(&text[..digits]).map(|n| (n, digits));
            assert_eq!(scan_digits(text), expected, "{:?}", String::from_utf8_lossy(text));
        }
        // Bytes just outside '0'..='9' and above 0x7f are not digits.
        for b in [b'/', b':', 0x80, 0xb0, 0xff, b'\r'] {
            assert_eq!(scan_digits(&[b'4', b'2', b, b'1', b'1', b'1', b'1', b'1', b'1']), Some((42, 2)));
        }
    }

    #[test]
    fn ints_parse_without_overflow() {
        assert_eq!(parse_int(b" 42 "), Some(42));
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"-1"), None);
        assert_eq!(parse_int(b"99999999999999999999"), None);
        assert_eq!(parse_int(b"9999999999999999999"), Some(9_999_999_999_999_999_999));
    }

    /// Every row of `input` as read by `read_record` and by `for_each_row`, through a buffer of
    /// `capacity` bytes; the two must agree.
    fn both_ways(input: &[u8], capacity: usize) -> Result<Vec<Row>, String> {
        let open = || ReadLevelReader::new(io::BufReader::with_capacity(capacity, input), Path::new("r.tsv"));
        let pulled = rows_of(open().map_err(|e| e.to_string())?);
        let mut reader = open().map_err(|e| e.to_string())?;
        let mut lent = Vec::new();
        let result = reader.for_each_row(|r| {
            lent.push((
                r.tax_id(),
                r.passed_filter(),
                r.n_hits(),
                r.seq_len(),
                r.header().map(<[u8]>::to_vec),
                r.line(),
            ));
            Ok(())
        });
        let lent = match result {
            Ok(()) => Ok(lent),
            Err(e) => Err(reader.error_for(e).to_string()),
        };
        assert_eq!(pulled, lent, "capacity {capacity}");
        pulled
    }

    fn rows_of<R: BufRead>(mut reader: ReadLevelReader<R>) -> Result<Vec<Row>, String> {
        let mut rec = ReadLevelRecord::default();
        let mut out = Vec::new();
        loop {
            match reader.read_record(&mut rec) {
                Ok(0) => return Ok(out),
                Ok(_) => out.push((
                    rec.as_row().tax_id(),
                    rec.as_row().passed_filter(),
                    rec.as_row().n_hits(),
                    rec.as_row().seq_len(),
                    rec.as_row().header().map(<[u8]>::to_vec),
                    rec.as_row().line(),
                )),
                Err(e) => return Err(reader.error_for(e).to_string()),
            }
        }
    }

    #[test]
    fn quick_and_careful_rows_agree_across_buffer_ends() {
        let input: &[u8] = b"Header\tTax ID\tN Hits\tSeq Len\tPassed Filter\tExtra\n\
            r1 1:N\t562\t12\t150\tT\tx\n\
            r2\t0\t0\t90\tF\t\n\
            \n\
            \t \t\n\
            r3\t 1280 \t3\t151\tTrue\ty\tz\r\n\
            r4\t9999999999999999999\t1\t2\tF\tq\r\n\
            \t28901\t7\t8\t0\tw\n\
            r6\t12345678\t123\t1234567\tT\tlast";
        let expected = rows(input).unwrap();
        assert_eq!(expected.len(), 6);
        assert_eq!(expected[2], (1280, Some(true), Some(3), Some(151), Some(b"r3".to_vec()), 6));
        assert_eq!(expected[4].4, Some(Vec::new()));
        assert_eq!(expected[5], (12_345_678, Some(true), Some(123), Some(1_234_567), Some(b"r6".to_vec()), 9));
        for capacity in [1, 2, 3, 5, 8, 13, 21, 34, 64, 4096] {
            assert_eq!(both_ways(input, capacity).unwrap(), expected, "capacity {capacity}");
        }
        // Columns in another order, the last one read in the middle of the row.
        let input: &[u8] = b"Passed Filter\tTax ID\tKmer Chain\nT\t562\t562:3|0:4\nF\t1\t\n";
        let expected = rows(input).unwrap();
        for capacity in [1, 4, 7, 4096] {
            assert_eq!(both_ways(input, capacity).unwrap(), expected);
        }
    }

    #[test]
    fn quick_and_careful_errors_agree() {
        for input in [
            &b"Tax ID\tPassed Filter\n1\tT\nabc\tT\n"[..],
            b"Tax ID\tPassed Filter\n1\tT\n\n2\tmaybe\n",
            b"Tax ID\tSeq Len\n1\t2\n1\n",
            b"Tax ID\tSeq Len\n1\t2\n99999999999999999999\t1\n",
            b"Tax ID\tSeq Len\n1\t-2\n",
        ] {
            let expected = rows(input).err().unwrap().to_string();
            for capacity in [1, 3, 4096] {
                assert_eq!(both_ways(input, capacity).err().unwrap(), expected);
            }
        }
    }
}
