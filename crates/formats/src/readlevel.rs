//! Read-level classification results: a (gzipped) TSV with one row per read, columns found by
//! header name.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use crate::compression::{Compression, open};
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
        let names: Vec<&[u8]> = header
            .split(|&b| b == b'\t')
            .map(<[u8]>::trim_ascii)
            .collect();
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
            None => Err(names
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect()),
        }
    }
}

/// One row of read-level results. Reuse one across [`ReadLevelReader::read_record`] calls: the
/// row's bytes and field boundaries live in reused buffers, so reading a row allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct ReadLevelRecord {
    buf: Vec<u8>,
    // Field i is buf[fields[i].0..fields[i].1].
    fields: Vec<(usize, usize)>,
    tax_id: TaxId,
    n_hits: Option<u64>,
    seq_len: Option<u64>,
    passed_filter: Option<bool>,
    header: Option<usize>,
    kmer_chain: Option<usize>,
    line: u64,
}

impl ReadLevelRecord {
    /// The taxon the read was assigned to (0: no hit).
    pub fn tax_id(&self) -> TaxId {
        self.tax_id
    }

    /// `N Hits`, when the file has that column.
    pub fn n_hits(&self) -> Option<u64> {
        self.n_hits
    }

    /// `Seq Len`, when the file has that column.
    pub fn seq_len(&self) -> Option<u64> {
        self.seq_len
    }

    /// `Passed Filter` (`T` is true), when the file has that column.
    pub fn passed_filter(&self) -> Option<bool> {
        self.passed_filter
    }

    /// `Header`, when the file has that column.
    pub fn header(&self) -> Option<&[u8]> {
        self.header.and_then(|i| self.field(i))
    }

    /// `Kmer Chain`, when the file has that column.
    pub fn kmer_chain(&self) -> Option<&[u8]> {
        self.kmer_chain.and_then(|i| self.field(i))
    }

    /// Field `i` (0-based) of the row, whatever its column.
    pub fn field(&self, i: usize) -> Option<&[u8]> {
        self.fields.get(i).map(|&(a, b)| &self.buf[a..b])
    }

    /// The row's line number in the file (the header line is line 1).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Splits `buf` (one line) into fields.
    fn split(&mut self) {
        self.fields.clear();
        let line = trim_eol(&self.buf);
        let mut start = 0;
        for i in memchr::memchr_iter(b'\t', line) {
            self.fields.push((start, i));
            start = i + 1;
        }
        self.fields.push((start, line.len()));
    }
}

/// Reads read-level results row by row, from a plain or gzipped TSV.
///
/// Lines are split on tabs by hand (the files are not quoted): no allocation per row, exact line
/// numbers for messages, and `\r\n` line endings accepted.
pub struct ReadLevelReader<R> {
    inner: R,
    columns: Columns,
    path: PathBuf,
    compression: Compression,
    rows: u64,
    line: u64,
}

impl ReadLevelReader<Box<dyn BufRead + Send>> {
    /// Opens a read-level results file (gzipped or not, told from its magic bytes) and reads
    /// its header line.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let (compression, reader) = open(path)?;
        Self::with_compression(reader, path, compression)
    }
}

impl<R: BufRead> ReadLevelReader<R> {
    /// Reads the header line of decompressed TSV `reader`; `name` is used in messages.
    ///
    /// Fails with [`Error::MissingColumn`] when there is no `Tax ID` column and with
    /// [`Error::Empty`] when there is no header line.
    pub fn new(reader: R, name: &Path) -> Result<Self, Error> {
        Self::with_compression(reader, name, Compression::None)
    }

    fn with_compression(inner: R, name: &Path, compression: Compression) -> Result<Self, Error> {
        let mut reader = ReadLevelReader {
            inner,
            columns: EMPTY,
            path: name.to_owned(),
            compression,
            rows: 0,
            line: 0,
        };
        let mut header = ReadLevelRecord::default();
        // The header line is the first line that is not blank.
        loop {
            match reader.read_line(&mut header.buf) {
                Ok(0) => {
                    return Err(Error::Empty {
                        path: name.to_owned(),
                    });
                }
                Ok(_) if trim_eol(&header.buf).trim_ascii().is_empty() => continue,
                Ok(_) => break,
                Err(e) => return Err(reader.error_for(e)),
            }
        }
        let text = trim_eol(&header.buf);
        let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        reader.columns = Columns::find(text).map_err(|found| Error::MissingColumn {
            path: name.to_owned(),
            column: TAX_ID,
            found: found.join(", "),
        })?;
        Ok(reader)
    }

    /// The columns found in the header line.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// Rows read so far.
    pub fn row_count(&self) -> u64 {
        self.rows
    }

    /// The line number of the last line read (the header line is 1).
    pub fn line_number(&self) -> u64 {
        self.line
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
            let n = self.read_line(&mut record.buf)?;
            if n == 0 {
                return Ok(0);
            }
            used += n;
            if !trim_eol(&record.buf).trim_ascii().is_empty() {
                break;
            }
        }
        self.rows += 1;
        record.line = self.line;
        record.split();
        let c = self.columns;
        if record.fields.len() < c.width {
            return Err(self.error(ParseErrorKind::FieldCount {
                found: record.fields.len(),
                expected: c.width,
            }));
        }
        let field = |i: usize| {
            let (a, b) = record.fields[i];
            &record.buf[a..b]
        };
        record.tax_id = parse_int(field(c.tax_id))
            .ok_or_else(|| self.bad(TAX_ID, field(c.tax_id), "a whole number"))?;
        let int = |col: Option<usize>, name| match col {
            Some(i) => parse_int(field(i))
                .map(Some)
                .ok_or_else(|| self.bad(name, field(i), "a whole number")),
            None => Ok(None),
        };
        let n_hits = int(c.n_hits, N_HITS)?;
        let seq_len = int(c.seq_len, SEQ_LEN)?;
        let passed_filter = match c.passed_filter {
            Some(i) => Some(
                parse_bool(field(i)).ok_or_else(|| self.bad(PASSED_FILTER, field(i), "T or F"))?,
            ),
            None => None,
        };
        record.n_hits = n_hits;
        record.seq_len = seq_len;
        record.passed_filter = passed_filter;
        record.header = c.header;
        record.kmer_chain = c.kmer_chain;
        Ok(used)
    }

    /// Turns an error from [`ReadLevelReader::read_record`] into an [`Error`] naming this file.
    pub fn error_for(&self, err: io::Error) -> Error {
        Error::reading(&self.path, self.compression, self.line, err)
    }

    /// Replaces `buf` with the next line; returns its length, 0 at the end.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.clear();
        // By hand rather than `read_until` through `take`: one scan of the buffer per row, which
        // is most of the cost of a file of short rows.
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
            self.line += 1;
        }
        if n as u64 == MAX_ROW_LEN && buf.last() != Some(&b'\n') {
            let kind = ParseErrorKind::LineTooLong {
                limit: MAX_ROW_LEN as usize,
            };
            return Err(ParseError {
                line: self.line,
                record: self.rows + 1,
                id: None,
                kind,
            }
            .into());
        }
        Ok(n)
    }

    fn bad(&self, column: &'static str, value: &[u8], expected: &'static str) -> io::Error {
        self.error(ParseErrorKind::BadField {
            column,
            value: excerpt(value),
            expected,
        })
    }

    fn error(&self, kind: ParseErrorKind) -> io::Error {
        ParseError {
            line: self.line,
            record: self.rows,
            id: None,
            kind,
        }
        .into()
    }
}

// Placeholder until the header line is read.
const EMPTY: Columns = Columns {
    tax_id: 0,
    n_hits: None,
    seq_len: None,
    passed_filter: None,
    header: None,
    kmer_chain: None,
    width: 1,
};

/// A decimal whole number, surrounding spaces allowed; no allocation.
fn parse_int(field: &[u8]) -> Option<u64> {
    let digits = field.trim_ascii();
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
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

    type Row = (
        TaxId,
        Option<bool>,
        Option<u64>,
        Option<u64>,
        Option<Vec<u8>>,
        u64,
    );

    fn rows(input: &[u8]) -> Result<Vec<Row>, Error> {
        let mut reader = ReadLevelReader::new(input, Path::new("r.tsv"))?;
        let mut rec = ReadLevelRecord::default();
        let mut out = Vec::new();
        loop {
            match reader.read_record(&mut rec) {
                Ok(0) => return Ok(out),
                Ok(_) => out.push((
                    rec.tax_id(),
                    rec.passed_filter(),
                    rec.n_hits(),
                    rec.seq_len(),
                    rec.header().map(<[u8]>::to_vec),
                    rec.line(),
                )),
                Err(e) => return Err(reader.error_for(e)),
            }
        }
    }

    #[test]
    fn columns_by_name_in_any_order() {
        let tsv =
            b"Seq Len\tExtra\tTax ID\tPassed Filter\tN Hits\n150\tx\t816\tT\t12\n90\ty\t0\tF\t0\n";
        let r = rows(tsv).unwrap();
        assert_eq!(
            r,
            vec![
                (816, Some(true), Some(12), Some(150), None, 2),
                (0, Some(false), Some(0), Some(90), None, 3)
            ]
        );
    }

    #[test]
    fn optional_columns_absent_and_crlf() {
        let r = rows(b"Header\tTax ID\r\nread1 1:N\t562\r\n\r\n").unwrap();
        assert_eq!(
            r,
            vec![(562, None, None, None, Some(b"read1 1:N".to_vec()), 2)]
        );
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
        let e = rows(b"Tax ID\tPassed Filter\n1\tT\nabc\tT\n")
            .err()
            .unwrap();
        assert!(
            matches!(
                e,
                Error::Parse {
                    line: 3,
                    record: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("the `Tax ID` value `abc` is not a whole number"),
            "{e}"
        );
        let e = rows(b"Tax ID\tPassed Filter\n1\tmaybe\n").err().unwrap();
        assert!(
            e.to_string()
                .contains("`Passed Filter` value `maybe` is not T or F"),
            "{e}"
        );
        let e = rows(b"Tax ID\tSeq Len\n1\n").err().unwrap();
        assert!(
            matches!(
                e,
                Error::Parse {
                    kind: ParseErrorKind::FieldCount {
                        found: 1,
                        expected: 2
                    },
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn ints_parse_without_overflow() {
        assert_eq!(parse_int(b" 42 "), Some(42));
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"-1"), None);
        assert_eq!(parse_int(b"99999999999999999999"), None);
        assert_eq!(
            parse_int(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
    }
}
