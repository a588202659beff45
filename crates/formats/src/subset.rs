//! Subset reads: write the reads that the read-level results assign to chosen taxa.
//!
//! This follows `onecodex scripts subset_reads` (the `onecodex` Python package,
//! `onecodex/scripts/subset_reads.py`): the same options with the same meaning, the same pairing
//! of read-level rows with reads, and the same output names. The rules, from that script:
//!
//! - Row *i* of the read-level TSV belongs to record *i* of the input. For an R1/R2 pair the
//!   rows are interleaved: rows 2*i* and 2*i*+1 belong to record *i* of R1 and of R2 (the
//!   service classified the pair as one interleaved file).
//! - A row "counts" when its `Passed Filter` is `T` (a file without that column passes
//!   everything), or always with `include_lowconf`. A row that does not count is never written,
//!   neither when keeping nor when excluding.
//! - A counting row is selected when its tax id is among the chosen ones (keeping), or is not
//!   (`exclude`).
//! - Pairs, by default: both mates are written when *either* row is selected. This holds for
//!   `exclude` too, so a pair with one mate on a chosen taxon and the other on another taxon is
//!   written by both a keep run and an exclude run. With `subset_pairs_independently` each mate
//!   is written on its own row's verdict, and the two outputs may differ in length.
//! - `with_children` adds every descendant of the chosen taxa in the classification table.
//! - Outputs are `<name>.filtered<ext>` in the output folder, where `<name><ext>` is the input's
//!   file name without a compression suffix (`S1_R1.fastq.gz` gives `S1_R1.filtered.fastq`);
//!   `.gz` is appended for gzip output.
//!
// Deliberate differences from the onecodex script, each because it is safer for a lab:
// - The format is read from the content (magic bytes, first record), not from the extension, so
//   any file name is accepted; a name without `.fa`/`.fna`/`.fasta`/`.fq`/`.fastq` (which
//   onecodex refuses) gets `.filtered.fastq` or `.filtered.fasta` appended.
// - Every record is parsed and checked (onecodex skips this unless `--validate`, and then checks
//   only that every fourth line starts with `@`); records are still copied byte-for-byte.
// - Running out is found while streaming, not by counting rows in a first pass over the TSV,
//   and the error says which file ran out at which record or row. When R1 and R2 differ in
//   length, onecodex stops silently at the shorter; here it is an error.
// - The two reads of a pair must have the same read name (ignoring `/1`, `/2` and comments),
//   and where the TSV has a `Header` column each row must name its read; onecodex checks
//   neither, and writes a wrong subset when the files do not match.
// - Outputs appear only when complete (written to a temporary file, then renamed); onecodex
//   leaves a partial file after an error.
// - `SubsetInput::Interleaved` applies the pair rules to an interleaved file's consecutive
//   records; onecodex has no such input (an interleaved file given to it is subset record by
//   record, which is `SubsetInput::Single` here). `PairMode::Both` (write a pair only when both
//   rows are selected) is an addition; onecodex has only "either" and "independently".
// - `Passed Filter` also accepts `True`/`False`/`1`/`0` and rejects anything else with an
//   error; onecodex treats every value but `T` as failed. Tax ids compare as numbers.
// - The gzip level is the caller's choice ([`OutputCompression`]); onecodex defaults to 9.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::compression::{Compression, open};
use crate::error::Error;
use crate::fastx::{Format, Reader, Record, base_id};
use crate::output::{Output, OutputCompression};
use crate::pairs::{check_first_mates, check_mate_names, same_file};
use crate::readlevel::{ReadLevelReader, ReadLevelRecord};
use crate::taxonomy::{TaxId, TaxTree};
use crate::validate::sniff;

/// The reads to subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubsetInput {
    /// One file; each record has its own row (single-end reads, or any file subset record by
    /// record).
    Single(PathBuf),
    /// One interleaved file (read 1, its read 2, ...); the pair rules apply to each two
    /// consecutive records, and the output is interleaved too.
    Interleaved(PathBuf),
    /// An R1/R2 pair (`onecodex subset_reads FASTX -r REVERSE`); one output per file.
    Paired {
        /// The read-1 file.
        r1: PathBuf,
        /// The read-2 file.
        r2: PathBuf,
    },
}

/// How the two reads of a pair are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PairMode {
    /// Write both reads when either read's row is selected (onecodex's default).
    #[default]
    Either,
    /// Write both reads only when both rows are selected (not in onecodex).
    Both,
    /// Judge each read on its own row (`--subset-pairs-independently`): the two outputs may
    /// hold different numbers of reads.
    Independent,
}

/// What to subset, and how.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubsetOptions {
    /// The chosen taxa (`-t/--tax-id`). With [`SubsetOptions::with_children`], their
    /// descendants too.
    pub tax_ids: BTreeSet<TaxId>,
    /// Write the reads that are *not* on the chosen taxa (`--exclude-reads`).
    pub exclude: bool,
    /// Also judge reads whose `Passed Filter` is `F` (`--include-lowconf`); by default they are
    /// never written.
    pub include_lowconf: bool,
    /// How pairs are judged (`--subset-pairs-independently` is [`PairMode::Independent`]).
    pub pair_mode: PairMode,
    /// Plain or gzip output (`--gzip-output`).
    pub output: OutputCompression,
}

impl SubsetOptions {
    /// Options that keep the reads on `tax_ids`, with every other option at its default.
    pub fn new(tax_ids: impl IntoIterator<Item = TaxId>) -> Self {
        SubsetOptions { tax_ids: tax_ids.into_iter().collect(), ..SubsetOptions::default() }
    }

    /// Adds the descendants of the chosen taxa in `tree` (`--with-children`: all strains of a
    /// species, all species of a genus).
    pub fn with_children(mut self, tree: &TaxTree) -> Self {
        self.tax_ids = tree.descendants(self.tax_ids.iter().copied());
        self
    }

    /// Whether a row selects its read.
    fn selects(&self, row: &ReadLevelRecord) -> bool {
        let counts = self.include_lowconf || row.passed_filter().unwrap_or(true);
        counts && self.tax_ids.contains(&row.tax_id()) != self.exclude
    }

    /// Whether to write read 1 and read 2 of a pair whose rows are selected as given.
    fn pair_verdict(&self, one: bool, two: bool) -> (bool, bool) {
        match self.pair_mode {
            PairMode::Either => (one || two, one || two),
            PairMode::Both => (one && two, one && two),
            PairMode::Independent => (one, two),
        }
    }
}

/// One file written by [`subset_reads`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetOutput {
    /// Where it is.
    pub path: PathBuf,
    /// Records written to it.
    pub records: u64,
}

/// What [`subset_reads`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetReport {
    /// The files written: one, or R1 then R2 for a pair.
    pub outputs: Vec<SubsetOutput>,
    /// Records read from the input (both files of a pair together).
    pub records: u64,
    /// Rows read from the read-level results.
    pub rows: u64,
}

/// The output file name for `input` (see the module notes): `<name>.filtered<ext>`, where
/// `<name><ext>` is the file name without a compression suffix, plus `.gz` for gzip output.
pub fn filtered_file_name(input: &Path, format: Format, output: OutputCompression) -> String {
    const COMPRESSION: [&str; 8] = [".gz", ".gzip", ".bz", ".bz2", ".bzip", ".bzip2", ".zst", ".xz"];
    const SEQUENCE: [&str; 5] = [".fa", ".fna", ".fasta", ".fq", ".fastq"];
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let has = |list: &[&str], ext: &str| list.iter().any(|e| e.eq_ignore_ascii_case(ext));
    let (mut stem, mut ext) = split_ext(&name);
    if has(&COMPRESSION, ext) {
        (stem, ext) = split_ext(stem);
    }
    let mut out = if has(&SEQUENCE, ext) {
        format!("{stem}.filtered{ext}")
    } else {
        format!("{stem}{ext}.filtered.{}", format.extension())
    };
    if output != OutputCompression::Plain {
        out.push_str(".gz");
    }
    out
}

/// Splits a file name like Python's `os.path.splitext`: the extension is the last `.` part,
/// and a name's leading dots are not an extension.
fn split_ext(name: &str) -> (&str, &str) {
    let lead = name.len() - name.trim_start_matches('.').len();
    match name[lead..].rfind('.') {
        Some(i) => name.split_at(lead + i),
        None => (name, ""),
    }
}

/// Writes the reads of `input` that `options` select, judged by the read-level results
/// `read_level` (gzipped or plain TSV), into `out_dir` (see the module notes for the rules and
/// names). Streams every file once; memory stays flat.
///
/// A mismatch between the results and the reads is an error that names the file that ran out
/// first and where ([`Error::MoreReadsThanRows`], [`Error::MoreRowsThanReads`],
/// [`Error::PairLengthMismatch`], [`Error::NameMismatch`]); no output is left behind then.
pub fn subset_reads(
    read_level: impl AsRef<Path>,
    input: &SubsetInput,
    out_dir: impl AsRef<Path>,
    options: &SubsetOptions,
) -> Result<SubsetReport, Error> {
    if options.tax_ids.is_empty() {
        return Err(Error::NoTaxIds);
    }
    let (read_level, out_dir) = (read_level.as_ref(), out_dir.as_ref());
    let inputs: Vec<&Path> = match input {
        SubsetInput::Single(p) | SubsetInput::Interleaved(p) => vec![p],
        SubsetInput::Paired { r1, r2 } => vec![r1, r2],
    };
    let mut outputs = Vec::with_capacity(inputs.len());
    for path in &inputs {
        let format = match sniff(path) {
            Ok(s) => s.format,
            // An empty input gives an empty output, if the results are empty too.
            Err(Error::Empty { .. }) => Format::Fastq,
            Err(e) => return Err(e),
        };
        let target = out_dir.join(filtered_file_name(path, format, options.output));
        if inputs.iter().chain([&read_level]).any(|i| same_file(i, &target)) {
            return Err(Error::OutputIsInput { path: target });
        }
        if outputs.iter().any(|o: &Output| o.path() == target) {
            return Err(Error::OutputClash { path: target });
        }
        outputs.push(Output::create(&target, options.output)?);
    }

    let mut rows = ReadLevelReader::open(read_level)?;
    let mut sources: Vec<Reads<Box<dyn BufRead + Send>>> =
        inputs.iter().map(|p| Reads::open(p)).collect::<Result<_, _>>()?;
    let written = match (input, &mut sources[..], &mut outputs[..]) {
        (SubsetInput::Single(_), [reads], [out]) => {
            vec![subset_single(options, &mut rows, reads, out)?]
        }
        (SubsetInput::Interleaved(_), [reads], [out]) => {
            vec![subset_interleaved(options, &mut rows, reads, out)?]
        }
        (SubsetInput::Paired { .. }, [a, b], [out1, out2]) => {
            let (n1, n2) = subset_paired(options, &mut rows, a, b, out1, out2)?;
            vec![n1, n2]
        }
        // `inputs` and `outputs` are built from `input` above with matching lengths.
        _ => unreachable!("one output per input"),
    };
    let records = sources.iter().map(|s| s.reader.record_count()).sum();
    let mut report = SubsetReport { outputs: Vec::new(), records, rows: rows.row_count() };
    for (out, records) in outputs.into_iter().zip(written) {
        let path = out.path().to_owned();
        out.finish()?;
        report.outputs.push(SubsetOutput { path, records });
    }
    Ok(report)
}

/// Where selected records go: an output file, or a buffer in tests.
trait Sink {
    fn put(&mut self, raw: &[u8]) -> Result<(), Error>;
}

impl Sink for Output {
    fn put(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.write_record(raw)
    }
}

/// A reads file being streamed.
struct Reads<R> {
    path: PathBuf,
    compression: Compression,
    reader: Reader<R>,
}

impl Reads<Box<dyn BufRead + Send>> {
    fn open(path: &Path) -> Result<Self, Error> {
        let (compression, inner) = open(path)?;
        Ok(Reads { path: path.to_owned(), compression, reader: Reader::new(inner) })
    }
}

impl<R: BufRead> Reads<R> {
    fn next(&mut self, record: &mut Record) -> Result<bool, Error> {
        match self.reader.read_record(record) {
            Ok(n) => Ok(n > 0),
            Err(e) => Err(Error::reading(&self.path, self.compression, self.reader.line_number(), e)),
        }
    }

    fn count(&self) -> u64 {
        self.reader.record_count()
    }
}

/// Reads the row for the record just read from `reads`; running out is an error.
fn row_for<T: BufRead, R: BufRead>(
    rows: &mut ReadLevelReader<T>,
    row: &mut ReadLevelRecord,
    reads: &Reads<R>,
    record: &Record,
) -> Result<(), Error> {
    match rows.read_record(row) {
        Ok(0) => Err(Error::MoreReadsThanRows {
            results: rows.path().to_owned(),
            reads: reads.path.clone(),
            rows: rows.row_count(),
            record: reads.count(),
        }),
        Ok(_) => {
            // Old results name each row's read: a cheap check that rows and reads line up.
            if let Some(header) = row.header()
                && !header.trim_ascii().is_empty()
                && base_id(header.trim_ascii()) != record.base_id()
            {
                return Err(Error::NameMismatch {
                    path: reads.path.clone(),
                    record: reads.count(),
                    name: String::from_utf8_lossy(record.id()).into_owned(),
                    other: rows.path().to_owned(),
                    other_name: String::from_utf8_lossy(header).into_owned(),
                    hint: "the read-level results list other reads, or the reads in another order; check that the classification was run on exactly this file",
                });
            }
            Ok(())
        }
        Err(e) => Err(rows.error_for(e)),
    }
}

/// At the end of the reads: the results must have ended too.
fn expect_no_more_rows<T: BufRead, R: BufRead>(rows: &mut ReadLevelReader<T>, reads: &Reads<R>) -> Result<(), Error> {
    let mut row = ReadLevelRecord::default();
    match rows.read_record(&mut row) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::MoreRowsThanReads {
            reads: reads.path.clone(),
            results: rows.path().to_owned(),
            records: reads.count(),
            line: row.line(),
        }),
        Err(e) => Err(rows.error_for(e)),
    }
}

fn subset_single<T: BufRead, R: BufRead>(
    options: &SubsetOptions,
    rows: &mut ReadLevelReader<T>,
    reads: &mut Reads<R>,
    out: &mut dyn Sink,
) -> Result<u64, Error> {
    let (mut record, mut row) = (Record::default(), ReadLevelRecord::default());
    let mut written = 0;
    while reads.next(&mut record)? {
        row_for(rows, &mut row, reads, &record)?;
        if options.selects(&row) {
            out.put(record.raw())?;
            written += 1;
        }
    }
    expect_no_more_rows(rows, reads)?;
    Ok(written)
}

fn subset_interleaved<T: BufRead, R: BufRead>(
    options: &SubsetOptions,
    rows: &mut ReadLevelReader<T>,
    reads: &mut Reads<R>,
    out: &mut dyn Sink,
) -> Result<u64, Error> {
    let (mut one, mut two) = (Record::default(), Record::default());
    let (mut row1, mut row2) = (ReadLevelRecord::default(), ReadLevelRecord::default());
    let mut written = 0;
    while reads.next(&mut one)? {
        row_for(rows, &mut row1, reads, &one)?;
        if !reads.next(&mut two)? {
            return Err(Error::OddInterleaved { path: reads.path.clone(), records: reads.count() });
        }
        if one.base_id() != two.base_id() {
            return Err(Error::NotInterleaved {
                path: reads.path.clone(),
                record: reads.count() - 1,
                name: String::from_utf8_lossy(one.id()).into_owned(),
                next_name: String::from_utf8_lossy(two.id()).into_owned(),
            });
        }
        row_for(rows, &mut row2, reads, &two)?;
        let (w1, w2) = options.pair_verdict(options.selects(&row1), options.selects(&row2));
        for (write, record) in [(w1, &one), (w2, &two)] {
            if write {
                out.put(record.raw())?;
                written += 1;
            }
        }
    }
    expect_no_more_rows(rows, reads)?;
    Ok(written)
}

fn subset_paired<T: BufRead, R: BufRead>(
    options: &SubsetOptions,
    rows: &mut ReadLevelReader<T>,
    a: &mut Reads<R>,
    b: &mut Reads<R>,
    out1: &mut dyn Sink,
    out2: &mut dyn Sink,
) -> Result<(u64, u64), Error> {
    let (mut one, mut two) = (Record::default(), Record::default());
    let (mut row1, mut row2) = (ReadLevelRecord::default(), ReadLevelRecord::default());
    let (mut written1, mut written2) = (0, 0);
    loop {
        let (more_a, more_b) = (a.next(&mut one)?, b.next(&mut two)?);
        match (more_a, more_b) {
            (false, false) => break,
            (false, true) => {
                return Err(Error::PairLengthMismatch {
                    shorter: a.path.clone(),
                    longer: b.path.clone(),
                    records: a.count(),
                });
            }
            (true, false) => {
                return Err(Error::PairLengthMismatch {
                    shorter: b.path.clone(),
                    longer: a.path.clone(),
                    records: b.count(),
                });
            }
            (true, true) => {}
        }
        let n = a.count();
        if n == 1 {
            check_first_mates(&a.path, &one, &b.path, &two)?;
        }
        check_mate_names(&a.path, &one, &b.path, &two, n)?;
        row_for(rows, &mut row1, a, &one)?;
        row_for(rows, &mut row2, b, &two)?;
        let (w1, w2) = options.pair_verdict(options.selects(&row1), options.selects(&row2));
        if w1 {
            out1.put(one.raw())?;
            written1 += 1;
        }
        if w2 {
            out2.put(two.raw())?;
            written2 += 1;
        }
    }
    expect_no_more_rows(rows, a)?;
    Ok((written1, written2))
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sink for Vec<u8> {
        fn put(&mut self, raw: &[u8]) -> Result<(), Error> {
            self.extend_from_slice(raw);
            Ok(())
        }
    }

    fn reads(name: &str, bytes: &'static [u8]) -> Reads<&'static [u8]> {
        Reads { path: name.into(), compression: Compression::None, reader: Reader::new(bytes) }
    }

    fn tsv(bytes: &'static [u8]) -> ReadLevelReader<&'static [u8]> {
        ReadLevelReader::new(bytes, Path::new("rl.tsv")).unwrap()
    }

    // Four single reads: a on 562 (passed), b on 562 (low confidence), c on 1280, d unclassified.
    const SINGLE: &[u8] = b"@a\nA\n+\nI\n@b\nC\n+\nI\n@c\nG\n+\nI\n@d\nT\n+\nI\n";
    const SINGLE_TSV: &[u8] = b"Tax ID\tPassed Filter\n562\tT\n562\tF\n1280\tT\n0\tT\n";

    fn single(options: &SubsetOptions) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        subset_single(options, &mut tsv(SINGLE_TSV), &mut reads("r.fq", SINGLE), &mut out)?;
        Ok(out)
    }

    #[test]
    fn single_end_rules() {
        let keep = SubsetOptions::new([562]);
        assert_eq!(single(&keep).unwrap(), b"@a\nA\n+\nI\n");
        let lowconf = SubsetOptions { include_lowconf: true, ..keep.clone() };
        assert_eq!(single(&lowconf).unwrap(), b"@a\nA\n+\nI\n@b\nC\n+\nI\n");
        // Excluding never writes the low-confidence read either, unless asked.
        let exclude = SubsetOptions { exclude: true, ..keep.clone() };
        assert_eq!(single(&exclude).unwrap(), b"@c\nG\n+\nI\n@d\nT\n+\nI\n");
        let both = SubsetOptions { exclude: true, include_lowconf: true, ..keep };
        assert_eq!(single(&both).unwrap(), b"@c\nG\n+\nI\n@d\nT\n+\nI\n");
    }

    #[test]
    fn no_passed_filter_column_means_all_pass() {
        let mut out = Vec::new();
        let mut rows = tsv(b"Tax ID\n562\n562\n1280\n0\n");
        subset_single(&SubsetOptions::new([562]), &mut rows, &mut reads("r.fq", SINGLE), &mut out).unwrap();
        assert_eq!(out, b"@a\nA\n+\nI\n@b\nC\n+\nI\n");
    }

    #[test]
    fn running_out_names_the_file_and_place() {
        let mut out = Vec::new();
        let e =
            subset_single(&SubsetOptions::new([1]), &mut tsv(b"Tax ID\n1\n2\n"), &mut reads("r.fq", SINGLE), &mut out)
                .unwrap_err();
        assert!(matches!(e, Error::MoreReadsThanRows { rows: 2, record: 3, .. }), "{e:?}");
        assert!(
            e.to_string().starts_with("rl.tsv ends after 2 rows but r.fq has more records (record 3 has no row)"),
            "{e}"
        );
        let e = subset_single(
            &SubsetOptions::new([1]),
            &mut tsv(b"Tax ID\n1\n2\n3\n4\n5\n"),
            &mut reads("r.fq", SINGLE),
            &mut out,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("r.fq ends after 4 records but rl.tsv has more rows (line 6)"), "{e}");
    }

    #[test]
    fn header_column_must_name_the_read() {
        let mut out = Vec::new();
        let rows = b"Header\tTax ID\na\t1\nb\t1\nx\t1\nd\t1\n";
        let e =
            subset_single(&SubsetOptions::new([1]), &mut tsv(rows), &mut reads("r.fq", SINGLE), &mut out).unwrap_err();
        assert!(matches!(e, Error::NameMismatch { record: 3, .. }), "{e:?}");
    }

    // Two pairs: p1 (R1 on 562, R2 unclassified), p2 (R1 on 1280 low confidence, R2 on 1280).
    const R1: &[u8] = b"@p1/1\nA\n+\nI\n@p2/1\nC\n+\nI\n";
    const R2: &[u8] = b"@p1/2\nG\n+\nI\n@p2/2\nT\n+\nI\n";
    const PAIR_TSV: &[u8] = b"Tax ID\tPassed Filter\n562\tT\n0\tT\n1280\tF\n1280\tT\n";

    fn paired(options: &SubsetOptions) -> (Vec<u8>, Vec<u8>) {
        let (mut o1, mut o2) = (Vec::new(), Vec::new());
        subset_paired(options, &mut tsv(PAIR_TSV), &mut reads("r1.fq", R1), &mut reads("r2.fq", R2), &mut o1, &mut o2)
            .unwrap();
        (o1, o2)
    }

    #[test]
    fn pair_rules() {
        let p1 = (b"@p1/1\nA\n+\nI\n".to_vec(), b"@p1/2\nG\n+\nI\n".to_vec());
        let keep = SubsetOptions::new([562]);
        assert_eq!(paired(&keep), p1);
        // Either mate not on 562 (and counting) writes the pair: p1 by its R2, p2 by its R2.
        let exclude = SubsetOptions { exclude: true, ..keep.clone() };
        assert_eq!(paired(&exclude), (R1.to_vec(), R2.to_vec()));
        let both = SubsetOptions { pair_mode: PairMode::Both, ..keep.clone() };
        assert_eq!(paired(&both), (vec![], vec![]));
        let indep = SubsetOptions { pair_mode: PairMode::Independent, ..keep };
        assert_eq!(paired(&indep), (p1.0, vec![]));
        let k1280 = SubsetOptions { pair_mode: PairMode::Independent, ..SubsetOptions::new([1280]) };
        assert_eq!(paired(&k1280), (vec![], b"@p2/2\nT\n+\nI\n".to_vec()));
    }

    #[test]
    fn odd_rows_for_a_pair_name_the_r2_file() {
        let (mut o1, mut o2) = (Vec::new(), Vec::new());
        let e = subset_paired(
            &SubsetOptions::new([1]),
            &mut tsv(b"Tax ID\n1\n1\n1\n"),
            &mut reads("r1.fq", R1),
            &mut reads("r2.fq", R2),
            &mut o1,
            &mut o2,
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::MoreReadsThanRows { rows: 3, record: 2, ref reads, .. } if reads == Path::new("r2.fq")),
            "{e:?}"
        );
    }

    #[test]
    fn interleaved_applies_pair_rules() {
        let il: &'static [u8] = b"@p1/1\nA\n+\nI\n@p1/2\nG\n+\nI\n@p2/1\nC\n+\nI\n@p2/2\nT\n+\nI\n";
        let mut out = Vec::new();
        subset_interleaved(&SubsetOptions::new([562]), &mut tsv(PAIR_TSV), &mut reads("il.fq", il), &mut out).unwrap();
        assert_eq!(out, b"@p1/1\nA\n+\nI\n@p1/2\nG\n+\nI\n");
        let odd: &'static [u8] = b"@p1/1\nA\n+\nI\n@p1/2\nG\n+\nI\n@p2/1\nC\n+\nI\n";
        let e = subset_interleaved(&SubsetOptions::new([562]), &mut tsv(PAIR_TSV), &mut reads("il.fq", odd), &mut out)
            .unwrap_err();
        assert!(matches!(e, Error::OddInterleaved { records: 3, .. }), "{e:?}");
    }

    #[test]
    fn output_names_follow_onecodex() {
        let f = |name: &str, fmt, out| filtered_file_name(Path::new(name), fmt, out);
        let plain = OutputCompression::Plain;
        assert_eq!(f("dir/S1_R1_001.fastq.gz", Format::Fastq, plain), "S1_R1_001.filtered.fastq");
        assert_eq!(f("reads.fq", Format::Fastq, plain), "reads.filtered.fq");
        assert_eq!(f("contigs.fa.bz2", Format::Fasta, plain), "contigs.filtered.fa");
        assert_eq!(f("reads.fastq", Format::Fastq, OutputCompression::GZIP), "reads.filtered.fastq.gz");
        assert_eq!(f("reads", Format::Fastq, plain), "reads.filtered.fastq");
        assert_eq!(f("reads.txt.gz", Format::Fasta, plain), "reads.txt.filtered.fasta");
        assert_eq!(f(".hidden", Format::Fastq, plain), ".hidden.filtered.fastq");
    }
}
