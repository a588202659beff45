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
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

use crate::compression::{Compression, decompress, open};
use crate::error::Error;
use crate::fastx::{Format, Reader, Record, base_id};
use crate::output::{Output, OutputCompression};
use crate::pairs::{check_first_mates, check_mate_names, same_file};
use crate::readlevel::{ReadLevelReader, ReadLevelRecord};
use crate::taxonomy::{TaxId, TaxTree};
use crate::validate::sniff;

mod paired;

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
    /// Never replace a file already at an output's name: answer [`Error::OutputExists`]
    /// instead. For outputs named after a service's file name, which the user did not choose;
    /// by default an output replaces what is there, as onecodex's does.
    pub keep_existing: bool,
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
        let row = row.as_row();
        self.selects_values(row.tax_id(), row.passed_filter())
    }

    /// Whether a row with these values selects its read.
    fn selects_values(&self, tax_id: TaxId, passed_filter: Option<bool>) -> bool {
        let counts = self.include_lowconf || passed_filter.unwrap_or(true);
        counts && self.tax_ids.contains(&tax_id) != self.exclude
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
        if options.keep_existing && target.symlink_metadata().is_ok() {
            return Err(Error::OutputExists { path: target });
        }
        let output = Output::create(&target, options.output)?;
        outputs.push(if options.keep_existing { output.keep_existing() } else { output });
    }

    // Single-end reads and R1/R2 pairs take the quick path unless the results have a `Header`
    // column, whose names are checked against the reads one by one. The quick path reads the
    // results on a thread of its own, so they are opened without one more thread to decompress
    // them.
    let threaded = matches!(input, SubsetInput::Single(_) | SubsetInput::Paired { .. });
    let mut rows =
        if threaded { ReadLevelReader::open_inline(read_level)? } else { ReadLevelReader::open(read_level)? };
    let quick = threaded && rows.columns().header.is_none();
    if threaded && !quick {
        rows = ReadLevelReader::open(read_level)?;
    }
    let prefetch = quick && matches!(input, SubsetInput::Paired { .. });
    let mut sources: Vec<Reads<Box<dyn BufRead + Send>>> = inputs
        .iter()
        .map(|p| if prefetch { Reads::open_inline(p) } else { Reads::open(p) })
        .collect::<Result<_, _>>()?;
    let (written, row_count, records) = match (input, &mut outputs[..]) {
        (SubsetInput::Single(_), [out]) if quick => {
            let reads = &mut sources[0];
            let mut selection = Selection::spawn(rows, options.clone());
            let n = subset_single_quick(&mut selection, reads, out)?;
            (vec![n], selection.rows, reads.count())
        }
        (SubsetInput::Single(_), [out]) => {
            let reads = &mut sources[0];
            let n = subset_single(options, &mut rows, reads, out)?;
            (vec![n], rows.row_count(), reads.count())
        }
        (SubsetInput::Interleaved(_), [out]) => {
            let reads = &mut sources[0];
            let n = subset_interleaved(options, &mut rows, reads, out)?;
            (vec![n], rows.row_count(), reads.count())
        }
        (SubsetInput::Paired { .. }, [out1, out2]) if quick => {
            let (b, a) = (sources.pop(), sources.pop());
            let (Some(a), Some(b)) = (a, b) else { unreachable!("two inputs for a pair") };
            let mut selection = Selection::spawn(rows, options.clone());
            let done = paired::subset_paired_quick(options, &mut selection, a, b, out1, out2)?;
            (vec![done.written.0, done.written.1], selection.rows, done.records)
        }
        (SubsetInput::Paired { .. }, [out1, out2]) => {
            let [a, b] = &mut sources[..] else { unreachable!("two inputs for a pair") };
            let (n1, n2) = subset_paired(options, &mut rows, a, b, out1, out2)?;
            (vec![n1, n2], rows.row_count(), a.count() + b.count())
        }
        // `inputs` and `outputs` are built from `input` above with matching lengths.
        _ => unreachable!("one output per input"),
    };
    let mut report = SubsetReport { outputs: Vec::new(), records, rows: row_count };
    for (out, records) in outputs.into_iter().zip(written) {
        let path = out.path().to_owned();
        out.finish()?;
        report.outputs.push(SubsetOutput { path, records });
    }
    Ok(report)
}

/// [`subset_reads`] of a single-end (or interleaved, read as single) file from streams: the
/// read-level results `read_level` and the reads `reads` (each gzipped or not, told from its
/// first bytes; `names` name them in messages), the selected records written to `out` as they
/// are found. Memory stays flat whatever the sizes: for a service that streams the subset of a
/// sample's reads to a browser as it reads them. Answers the records written.
pub fn subset_stream<T: Read + Send, R: Read + Send>(
    read_level: T,
    reads: R,
    names: (&Path, &Path),
    out: &mut dyn Write,
    options: &SubsetOptions,
) -> Result<u64, Error> {
    if options.tax_ids.is_empty() {
        return Err(Error::NoTaxIds);
    }
    let (rows_name, reads_name) = names;
    let (compression, rows) = decompress(read_level, rows_name)?;
    let mut rows = ReadLevelReader::with_compression(rows, rows_name, compression)?;
    let (compression, inner) = decompress(reads, reads_name)?;
    let mut reads = Reads { path: reads_name.to_owned(), compression, reader: Reader::new(inner) };
    let mut sink = Written(out);
    subset_single(options, &mut rows, &mut reads, &mut sink)
}

/// A stream of selected records.
struct Written<'a>(&'a mut dyn Write);

impl Sink for Written<'_> {
    fn put(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.0.write_all(raw).map_err(|source| Error::Io { path: PathBuf::from("the download"), source })
    }
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

    /// [`Reads::open`] without a thread of its own to decompress: for a caller on a thread of
    /// its own, which then decompresses and parses with the bytes still in its core's cache.
    fn open_inline(path: &Path) -> Result<Self, Error> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let (compression, inner) = decompress(file, path)?;
        Ok(Reads { path: path.to_owned(), compression, reader: Reader::new(inner) })
    }
}

impl<R: BufRead> Reads<R> {
    fn next(&mut self, record: &mut Record) -> Result<bool, Error> {
        match self.reader.read_record(record) {
            Ok(n) => Ok(n > 0),
            Err(e) => Err(self.error(e)),
        }
    }

    fn count(&self) -> u64 {
        self.reader.record_count()
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::reading(&self.path, self.compression, self.reader.line_number(), e)
    }
}

/// Reads the row for `record`, record `number` of `reads`; running out is an error.
fn row_for<T: BufRead>(
    rows: &mut ReadLevelReader<T>,
    row: &mut ReadLevelRecord,
    reads: &Path,
    number: u64,
    record: &Record,
) -> Result<(), Error> {
    match rows.read_record(row) {
        Ok(0) => Err(Error::MoreReadsThanRows {
            results: rows.path().to_owned(),
            reads: reads.to_owned(),
            rows: rows.row_count(),
            record: number,
        }),
        Ok(_) => {
            // Old results name each row's read: a cheap check that rows and reads line up.
            if let Some(header) = row.as_row().header()
                && !header.trim_ascii().is_empty()
                && base_id(header.trim_ascii()) != record.base_id()
            {
                return Err(Error::NameMismatch {
                    path: reads.to_owned(),
                    record: number,
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

/// At the end of `reads`, after `records` records: the results must have ended too.
fn expect_no_more_rows<T: BufRead>(rows: &mut ReadLevelReader<T>, reads: &Path, records: u64) -> Result<(), Error> {
    let mut row = ReadLevelRecord::default();
    match rows.read_record(&mut row) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::MoreRowsThanReads {
            reads: reads.to_owned(),
            results: rows.path().to_owned(),
            records,
            line: row.as_row().line(),
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
        row_for(rows, &mut row, &reads.path, reads.count(), &record)?;
        if options.selects(&row) {
            out.put(record.raw())?;
            written += 1;
        }
    }
    expect_no_more_rows(rows, &reads.path, reads.count())?;
    Ok(written)
}

/// Rows whose verdicts travel together from [`Selection`]'s thread.
const VERDICTS_PER_BATCH: usize = 1 << 16;
/// Batches of verdicts waiting to be used; memory stays under a few of them.
const BATCHES_AHEAD: usize = 4;

/// The verdicts of consecutive rows of the read-level results: whether each row selects its
/// read, and the row's line (for the message when the results have more rows than the reads).
#[derive(Debug, Default)]
struct Verdicts {
    keep: Vec<bool>,
    first_line: u64,
    // Every row's line, once a blank line has broken the run of consecutive lines (rare);
    // empty while row *i* is on line `first_line + i`.
    lines: Vec<u64>,
}

impl Verdicts {
    fn push(&mut self, keep: bool, line: u64) {
        if self.keep.is_empty() {
            self.first_line = line;
        } else if self.lines.is_empty() && line != self.first_line + self.keep.len() as u64 {
            self.lines.extend((0..self.keep.len() as u64).map(|i| self.first_line + i));
        }
        if !self.lines.is_empty() {
            self.lines.push(line);
        }
        self.keep.push(keep);
    }

    fn line(&self, i: usize) -> u64 {
        self.lines.get(i).copied().unwrap_or(self.first_line + i as u64)
    }
}

/// The read-level results turned into verdicts (does row *i* select its read?) on a thread of
/// their own, which decompresses and parses them beside the thread that decompresses the reads.
/// The reads' side takes one verdict per record, with the same errors, in the same order, as
/// [`row_for`] and [`expect_no_more_rows`] give on the careful path.
struct Selection {
    batches: Receiver<Verdicts>,
    thread: Option<JoinHandle<Result<(), Error>>>,
    current: Verdicts,
    pos: usize,
    // Rows handed out so far.
    rows: u64,
    results: PathBuf,
}

impl Selection {
    fn spawn<T: BufRead + Send + 'static>(mut rows: ReadLevelReader<T>, options: SubsetOptions) -> Self {
        let results = rows.path().to_owned();
        let (tx, batches) = sync_channel::<Verdicts>(BATCHES_AHEAD);
        let thread = std::thread::spawn(move || {
            let mut batch = Verdicts::default();
            let result = rows.for_each_row(|row| {
                batch.push(options.selects_values(row.tax_id(), row.passed_filter()), row.line());
                if batch.keep.len() == VERDICTS_PER_BATCH {
                    let full = std::mem::take(&mut batch);
                    // The reads' side has stopped (at an error of its own): so does this side.
                    tx.send(full).map_err(|_| std::io::Error::other("the reads are no longer read"))?;
                }
                Ok(())
            });
            // The rows before an error go first, so the error arrives where the careful path
            // would meet it: at the record that needs the bad row.
            if !batch.keep.is_empty() && tx.send(batch).is_err() {
                return Ok(());
            }
            result.map_err(|e| rows.error_for(e))
        });
        Selection { batches, thread: Some(thread), current: Verdicts::default(), pos: 0, rows: 0, results }
    }

    /// Makes the next batch current; `false` when the results have ended.
    fn refill(&mut self) -> Result<bool, Error> {
        if let Ok(next) = self.batches.recv() {
            self.current = next;
            self.pos = 0;
            return Ok(true);
        }
        // The thread has ended: its result tells how.
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result.map(|()| false),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(false),
        }
    }

    /// Whether the row of record `record` (1-based) of `reads` selects it; running out is an
    /// error.
    fn verdict(&mut self, reads: &Path, record: u64) -> Result<bool, Error> {
        loop {
            if let Some(&keep) = self.current.keep.get(self.pos) {
                self.pos += 1;
                self.rows += 1;
                return Ok(keep);
            }
            if !self.refill()? {
                return Err(Error::MoreReadsThanRows {
                    results: self.results.clone(),
                    reads: reads.to_owned(),
                    rows: self.rows,
                    record,
                });
            }
        }
    }

    /// At the end of `reads`, after `records` records: the results must have ended too.
    fn finish(&mut self, reads: &Path, records: u64) -> Result<(), Error> {
        loop {
            if self.pos < self.current.keep.len() {
                return Err(Error::MoreRowsThanReads {
                    reads: reads.to_owned(),
                    results: self.results.clone(),
                    records,
                    line: self.current.line(self.pos),
                });
            }
            if !self.refill()? {
                return Ok(());
            }
        }
    }
}

/// [`subset_single`] without a copy per record: the records that lie whole in the reads'
/// buffer are found in place, and each run of consecutive selected records goes to `out` as one
/// slice of it. The rest (a record cut by the buffer's end, one the quick parse leaves to the
/// careful one, FASTA) are read one at a time, as in [`subset_single`].
fn subset_single_quick<R: BufRead>(
    selection: &mut Selection,
    reads: &mut Reads<R>,
    out: &mut dyn Sink,
) -> Result<u64, Error> {
    let mut record = Record::default();
    let mut ends = Vec::new();
    let mut written = 0;
    loop {
        let before = reads.count();
        let buf = match reads.reader.whole_records(&mut ends) {
            Ok(buf) => buf,
            Err(e) => return Err(reads.error(e)),
        };
        if ends.is_empty() {
            if !reads.next(&mut record)? {
                break;
            }
            if selection.verdict(&reads.path, reads.count())? {
                out.put(record.raw())?;
                written += 1;
            }
            continue;
        }
        // The selected records from `run_start` to `run_end` are consecutive in `buf`.
        let (mut run_start, mut run_end, mut start) = (0, 0, 0);
        for (i, &end) in ends.iter().enumerate() {
            if selection.verdict(&reads.path, before + i as u64 + 1)? {
                if run_end != start {
                    if run_end > run_start {
                        out.put(&buf[run_start..run_end])?;
                    }
                    run_start = start;
                }
                run_end = end;
                written += 1;
            }
            start = end;
        }
        if run_end > run_start {
            out.put(&buf[run_start..run_end])?;
        }
        reads.reader.consume_records(ends.len(), start);
    }
    selection.finish(&reads.path, reads.count())?;
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
        row_for(rows, &mut row1, &reads.path, reads.count(), &one)?;
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
        row_for(rows, &mut row2, &reads.path, reads.count(), &two)?;
        let (w1, w2) = options.pair_verdict(options.selects(&row1), options.selects(&row2));
        for (write, record) in [(w1, &one), (w2, &two)] {
            if write {
                out.put(record.raw())?;
                written += 1;
            }
        }
    }
    expect_no_more_rows(rows, &reads.path, reads.count())?;
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
            (false, true) => return Err(pair_length_mismatch(&a.path, &b.path, a.count())),
            (true, false) => return Err(pair_length_mismatch(&b.path, &a.path, b.count())),
            (true, true) => {}
        }
        let n = a.count();
        if n == 1 {
            check_first_mates(&a.path, &one, &b.path, &two)?;
        }
        check_mate_names(&a.path, &one, &b.path, &two, n)?;
        row_for(rows, &mut row1, &a.path, n, &one)?;
        row_for(rows, &mut row2, &b.path, b.count(), &two)?;
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
    expect_no_more_rows(rows, &a.path, a.count())?;
    Ok((written1, written2))
}

/// One file of a pair ended after `records` records, where the other goes on.
fn pair_length_mismatch(shorter: &Path, longer: &Path, records: u64) -> Error {
    Error::PairLengthMismatch { shorter: shorter.to_owned(), longer: longer.to_owned(), records }
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
    fn a_stream_is_subset_as_files_are_and_a_mismatch_is_named() {
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b).unwrap();
            e.finish().unwrap()
        };
        let names = (Path::new("results"), Path::new("reads"));
        let mut out = Vec::new();
        let n =
            subset_stream(&gz(SINGLE_TSV)[..], &gz(SINGLE)[..], names, &mut out, &SubsetOptions::new([562])).unwrap();
        assert_eq!((n, &out[..]), (1, &b"@a\nA\n+\nI\n"[..]));
        let short = b"Tax ID\tPassed Filter\n562\tT\n";
        let e = subset_stream(&short[..], SINGLE, names, &mut Vec::new(), &SubsetOptions::new([562])).unwrap_err();
        assert!(matches!(e, Error::MoreReadsThanRows { .. }), "{e}");
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

    /// Single-end subset of `fastq` and `tsv` by the careful path and by the quick path with
    /// the reads buffered `capacity` bytes at a time: output, or error text, and record count.
    fn both_paths(
        options: &SubsetOptions,
        fastq: &[u8],
        tsv: &[u8],
        capacity: usize,
    ) -> [Result<(Vec<u8>, u64), String>; 2] {
        let reads = |bytes: &[u8]| Reads {
            path: "r.fq".into(),
            compression: Compression::None,
            reader: Reader::new(std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(bytes.to_vec()))),
        };
        let rows = || ReadLevelReader::new(std::io::Cursor::new(tsv.to_vec()), Path::new("rl.tsv")).unwrap();
        let mut out = Vec::new();
        let careful = subset_single(options, &mut rows(), &mut reads(fastq), &mut out).map(|n| (out, n));
        let mut out = Vec::new();
        let mut selection = Selection::spawn(rows(), options.clone());
        let quick = subset_single_quick(&mut selection, &mut reads(fastq), &mut out).map(|n| (out, n));
        [careful, quick].map(|r| r.map_err(|e| e.to_string()))
    }

    #[test]
    fn quick_single_path_matches_careful_path() {
        // Records of varied lengths, in the plain form and not (Windows line endings, a `+name`
        // line, blank lines), the last without a line ending; every third row not counting.
        let mut fastq = Vec::new();
        let mut tsv = b"Tax ID\tPassed Filter\n".to_vec();
        let n = 700;
        for i in 0..n {
            let len = 1 + (i * 7) % 40;
            let (seq, qual) = ("ACGT".repeat(len).into_bytes(), "I#".repeat(len * 2).into_bytes());
            let eol: &[u8] = if i % 97 == 5 { b"\r\n" } else { b"\n" };
            for (k, line) in [format!("@r{i} x").as_bytes(), &seq[..len], b"+", &qual[..len]].iter().enumerate() {
                fastq.extend_from_slice(line);
                if !(i == n - 1 && k == 3) {
                    fastq.extend_from_slice(eol);
                }
            }
            if i % 131 == 3 {
                fastq.extend_from_slice(b"\n");
            }
            let tax = [562, 1280, 0][(i * i) % 3];
            let passed = if i % 3 == 1 { 'F' } else { 'T' };
            tsv.extend_from_slice(format!("{tax}\t{passed}\n").as_bytes());
            if i % 211 == 7 {
                tsv.extend_from_slice(b"\n");
            }
        }
        let keep = SubsetOptions::new([562]);
        let exclude = SubsetOptions { exclude: true, include_lowconf: true, ..keep.clone() };
        for options in [keep, exclude] {
            let [careful, _] = both_paths(&options, &fastq, &tsv, 1 << 20);
            let (out, written) = careful.clone().unwrap();
            assert!(written > 100 && out.len() < fastq.len(), "a real subset");
            // Small buffers cut records everywhere; a large one holds them all.
            for capacity in [1, 5, 64, 100, 333, 1000, 4096, 1 << 20] {
                let [careful, quick] = both_paths(&options, &fastq, &tsv, capacity);
                assert_eq!(quick, careful, "capacity {capacity}");
            }
        }

        // Errors: the same message whichever path meets them.
        let options = SubsetOptions::new([562]);
        let rows_for = |k: usize| {
            let mut t = b"Tax ID\n".to_vec();
            for _ in 0..k {
                t.extend_from_slice(b"562\n");
            }
            t
        };
        let mut bad_row = rows_for(n);
        bad_row.extend_from_slice(b"x\n");
        let mut bad_late = rows_for(300);
        bad_late.extend_from_slice(b"562\tT\nx\n");
        let mut bad_record = fastq.clone();
        bad_record.splice(2000..2000, *b"@broken\nAC\n+\nI\n");
        for (fastq, tsv) in [
            (&fastq, rows_for(n - 1)),
            (&fastq, rows_for(n + 1)),
            (&fastq, bad_row),
            (&fastq, bad_late),
            (&bad_record, rows_for(n + 1)),
            (&bad_record, rows_for(3)),
        ] {
            let [careful, _] = both_paths(&options, fastq, &tsv, 1 << 20);
            assert!(careful.is_err());
            for capacity in [1, 64, 333, 4096, 1 << 20] {
                let [careful, quick] = both_paths(&options, fastq, &tsv, capacity);
                assert_eq!(quick, careful, "capacity {capacity}");
            }
        }
    }

    /// Both outputs of a paired subset and the records written to each.
    type PairedOutcome = (Vec<u8>, Vec<u8>, u64, u64);

    /// R1/R2 subset of `r1`, `r2` and `tsv` by the careful path and by the quick path (each
    /// file on a thread of its own): both outputs, or error text, and record counts.
    fn both_paired_paths(
        options: &SubsetOptions,
        r1: &[u8],
        r2: &[u8],
        tsv: &[u8],
    ) -> [Result<PairedOutcome, String>; 2] {
        let reads = |name: &str, bytes: &[u8]| Reads::<Box<dyn BufRead + Send>> {
            path: name.into(),
            compression: Compression::None,
            reader: Reader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))),
        };
        let rows = || ReadLevelReader::new(std::io::Cursor::new(tsv.to_vec()), Path::new("rl.tsv")).unwrap();
        let (mut o1, mut o2) = (Vec::new(), Vec::new());
        let careful =
            subset_paired(options, &mut rows(), &mut reads("r1.fq", r1), &mut reads("r2.fq", r2), &mut o1, &mut o2)
                .map(|(n1, n2)| (o1, o2, n1, n2));
        let (mut o1, mut o2) = (Vec::new(), Vec::new());
        let mut selection = Selection::spawn(rows(), options.clone());
        let quick = paired::subset_paired_quick(
            options,
            &mut selection,
            reads("r1.fq", r1),
            reads("r2.fq", r2),
            &mut o1,
            &mut o2,
        )
        .map(|done| (o1, o2, done.written.0, done.written.1));
        [careful, quick].map(|r| r.map_err(|e| e.to_string()))
    }

    #[test]
    fn quick_paired_path_matches_careful_path() {
        // More pairs than one batch holds, so batches turn over; every fifth row not counting.
        let n = 2 * paired::RECORDS_PER_BATCH + 77;
        let (mut r1, mut r2) = (Vec::new(), Vec::new());
        let mut tsv = b"Tax ID\tPassed Filter\n".to_vec();
        for i in 0..n {
            let len = 1 + (i * 5) % 30;
            let seq = "ACGT".repeat(len);
            for (mate, file) in [(1, &mut r1), (2, &mut r2)] {
                file.extend_from_slice(format!("@p{i}/{mate}\n{}\n+\n{}\n", &seq[..len], "I".repeat(len)).as_bytes());
                let tax = [562, 1280, 0][(i + mate * i) % 3];
                let passed = if (2 * i + mate) % 5 == 0 { 'F' } else { 'T' };
                tsv.extend_from_slice(format!("{tax}\t{passed}\n").as_bytes());
            }
        }
        let keep = SubsetOptions::new([562]);
        let exclude = SubsetOptions { exclude: true, ..keep.clone() };
        let indep = SubsetOptions { pair_mode: PairMode::Independent, ..keep.clone() };
        for options in [&keep, &exclude, &indep] {
            let [careful, quick] = both_paired_paths(options, &r1, &r2, &tsv);
            let (o1, _, n1, _) = careful.clone().unwrap();
            assert!(n1 > 100 && o1.len() < r1.len(), "a real subset");
            assert_eq!(quick, careful);
        }

        // Errors: the same message whichever path meets them.
        let short = |file: &[u8], records: usize| {
            let cut = file.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(4 * records - 1).unwrap().0;
            file[..=cut].to_vec()
        };
        let mut renamed = r2.clone();
        let at = renamed.windows(8).position(|w| w == b"@p5000/2").unwrap();
        renamed[at + 2] = b'9';
        let mut broken = r1.clone();
        let at = broken.windows(7).position(|w| w == b"@p6000/").unwrap();
        broken.splice(at..at, *b"@broken\nAC\n+\nI\n");
        let rows_cut = short(&tsv, n / 2);
        let mut rows_extra = tsv.clone();
        rows_extra.extend_from_slice(b"562\tT\n");
        let mut rows_bad = tsv[..tsv.len() / 2].to_vec();
        rows_bad.extend_from_slice(b"\nx\n");
        for (r1, r2, tsv) in [
            (short(&r1, 3000), r2.clone(), tsv.clone()),
            (r1.clone(), short(&r2, 7000), tsv.clone()),
            (r1.clone(), renamed, tsv.clone()),
            (broken, r2.clone(), tsv.clone()),
            (r1.clone(), r2.clone(), rows_cut),
            (r1.clone(), r2.clone(), rows_extra),
            (r1.clone(), r2.clone(), rows_bad),
        ] {
            let [careful, quick] = both_paired_paths(&keep, &r1, &r2, &tsv);
            assert!(careful.is_err(), "{careful:?}");
            assert_eq!(quick, careful);
        }
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
