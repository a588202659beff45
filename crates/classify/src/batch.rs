//! Reads streamed in batches (one file, interleaved, or two files of mates, with the pairing
//! checks), and each batch classified on the thread pool: a call per record, and Kraken 2's
//! per-read lines when asked for.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use mgds_formats::{Compression, Format, QcCounter, Reader, Record, base_id};
use rayon::prelude::*;

use crate::database::Database;
use crate::engine::{Hits, TOKEN_MATE, push_token, resolve_index};
use crate::error::Error;
use crate::options::{ClassifyOptions, Pairing, Reads};
use crate::output::kraken_line;

// Records per batch, and sequence bytes per batch: two batches are in memory at once (one
// being classified, one being read), whatever the file's size.
const BATCH_RECORDS: usize = 16 * 1024;
const BATCH_BYTES: usize = 4 << 20;
// Reads (or pairs) per parallel task, at most; and sequence bases, about.
const TASK_UNITS: usize = 512;
const TASK_BASES: usize = 128 << 10;
pub(crate) const NO_TAXON: u32 = u32::MAX;

/// The call for one record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub(crate) taxon: u32,
    pub(crate) hits: u32,
    pub(crate) len: u32,
    pub(crate) passed: bool,
}

/// A batch of records: sequences back to back, with their end offsets (and their names when
/// Kraken 2's output is written).
#[derive(Default)]
pub(crate) struct Batch {
    seq: Vec<u8>,
    ends: Vec<usize>,
    ids: Vec<u8>,
    id_ends: Vec<usize>,
    pub(crate) calls: Vec<Call>,
    pub(crate) kraken: Vec<Vec<u8>>,
}

impl Batch {
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    fn clear(&mut self) {
        self.seq.clear();
        self.ends.clear();
        self.ids.clear();
        self.id_ends.clear();
        self.calls.clear();
    }

    pub(crate) fn classify(&mut self, db: &Database, opts: &ClassifyOptions, paired: bool, kraken: bool) {
        let unit = if paired { 2 } else { 1 };
        let (seq, ends, ids, id_ends) = (&self.seq, &self.ends, &self.ids, &self.id_ends);
        let record = |i: usize| {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            &seq[start..ends[i]]
        };
        let id = |i: usize| {
            let start = if i == 0 { 0 } else { id_ends[i - 1] };
            &ids[start..id_ends[i]]
        };
        let empty = Call { taxon: NO_TAXON, hits: 0, len: 0, passed: false };
        self.calls.clear();
        self.calls.resize(ends.len(), empty);
        // Tasks of whole reads (or pairs), cut at TASK_UNITS reads or TASK_BASES bases, so that
        // a batch of long reads is shared out among the threads as well as one of short reads.
        let mut tasks: Vec<(usize, &mut [Call])> = Vec::new();
        let mut rest = self.calls.as_mut_slice();
        let mut first = 0;
        while !rest.is_empty() {
            let start = if first == 0 { 0 } else { ends[first - 1] };
            let mut n = unit;
            while n < rest.len() && n < TASK_UNITS * unit && ends[first + n - 1] - start < TASK_BASES {
                n += unit;
            }
            let n = n.min(rest.len());
            let (task, tail) = std::mem::take(&mut rest).split_at_mut(n);
            tasks.push((first, task));
            first += n;
            rest = tail;
        }
        self.kraken.resize_with(tasks.len(), Vec::new);
        let taxonomy = db.taxonomy();
        let engine = db.engine();
        tasks.into_par_iter().zip(self.kraken.par_iter_mut()).for_each_init(
            Hits::new,
            |hits, ((first, calls), out)| {
                out.clear();
                for (j, group) in calls.chunks_mut(unit).enumerate() {
                    hits.clear();
                    for (m, call) in group.iter_mut().enumerate() {
                        let s = record(first + j * unit + m);
                        call.hits = engine.count_mate(s, hits, kraken);
                        call.len = s.len().min(u32::MAX as usize) as u32;
                        if paired && m == 0 && kraken {
                            push_token(&mut hits.tokens, TOKEN_MATE, 1);
                        }
                    }
                    let passed = hits.hit_groups() >= opts.min_hits;
                    let taxon = resolve_index(hits, taxonomy, opts.confidence).unwrap_or(NO_TAXON);
                    for call in group.iter_mut() {
                        call.taxon = taxon;
                        call.passed = passed;
                    }
                    if kraken {
                        let called = if passed && taxon != NO_TAXON { Some(taxon) } else { None };
                        let lens: Vec<u32> = group.iter().map(|c| c.len).collect();
                        kraken_line(out, taxonomy, id(first + j * unit), paired, called, &lens, &hits.tokens);
                    }
                }
            },
        );
    }
}

/// One reads file being streamed.
struct Side {
    path: PathBuf,
    compression: Compression,
    reader: Reader<Box<dyn BufRead + Send>>,
}

impl Side {
    fn open(path: &Path, max_record: usize) -> Result<Side, Error> {
        let (compression, decoded) = mgds_formats::open(path)?;
        let reader = Reader::new(decoded).with_max_record_length(max_record);
        Ok(Side { path: path.to_owned(), compression, reader })
    }

    fn read(&mut self, record: &mut Record) -> Result<bool, Error> {
        let n = self
            .reader
            .read_record(record)
            .map_err(|e| Error::reading(&self.path, self.compression, self.reader.line_number(), e))?;
        Ok(n > 0)
    }
}

/// The reads being streamed, with the pairing checks.
pub(crate) struct Input {
    first: Side,
    second: Option<Side>,
    record: Record,
    record2: Record,
    // Read name of the last read 1 (interleaved, or the first record while deciding).
    mate1_id: Vec<u8>,
    mode: Pairing,
    records: u64,
    min_quality: u8,
    ids: bool,
    /// The reads' quality control, counted as they are read (on the reading thread, beside
    /// the classification of the batch before).
    pub(crate) qc: Option<Box<QcCounter>>,
}

impl Input {
    pub(crate) fn open(reads: Reads<'_>, opts: &ClassifyOptions, ids: bool) -> Result<Input, Error> {
        let (first, second, mode) = match reads {
            Reads::File(p) => (Side::open(p, opts.max_record)?, None, opts.paired),
            Reads::Pair(a, b) => {
                (Side::open(a, opts.max_record)?, Some(Side::open(b, opts.max_record)?), Pairing::Interleaved)
            }
        };
        Ok(Input {
            first,
            second,
            record: Record::default(),
            record2: Record::default(),
            mate1_id: Vec::new(),
            mode,
            records: 0,
            min_quality: opts.min_base_quality,
            ids,
            qc: opts.qc.then(Box::default),
        })
    }

    pub(crate) fn first_path(&self) -> &Path {
        &self.first.path
    }

    pub(crate) fn paired(&self) -> bool {
        self.mode == Pairing::Interleaved
    }

    /// Replaces `batch` with the next records; an empty batch at the end of the input. A batch
    /// of pairs always holds whole pairs.
    pub(crate) fn fill(&mut self, batch: &mut Batch) -> Result<(), Error> {
        batch.clear();
        if self.second.is_some() {
            return self.fill_two(batch);
        }
        while batch.len() < BATCH_RECORDS && batch.seq.len() < BATCH_BYTES
            || (self.mode == Pairing::Interleaved && batch.len() % 2 == 1)
            // Undecided pairing must be decided within the first batch.
            || (self.mode == Pairing::Auto && self.records == 1)
        {
            if !self.first.read(&mut self.record)? {
                if self.mode == Pairing::Interleaved && self.records % 2 == 1 {
                    return Err(mgds_formats::Error::OddInterleaved {
                        path: self.first.path.clone(),
                        records: self.records,
                    }
                    .into());
                }
                if self.mode == Pairing::Auto {
                    self.mode = Pairing::Single;
                }
                break;
            }
            self.records += 1;
            self.check_pairing()?;
            if let Some(qc) = self.qc.as_mut() {
                qc.add(&self.record);
            }
            push(batch, &self.record, self.min_quality, self.ids);
        }
        Ok(())
    }

    fn fill_two(&mut self, batch: &mut Batch) -> Result<(), Error> {
        let second = self.second.as_mut().expect("two files");
        while batch.len() < BATCH_RECORDS && batch.seq.len() < BATCH_BYTES {
            let more = self.first.read(&mut self.record)?;
            let more2 = second.read(&mut self.record2)?;
            if more != more2 {
                let (short, long) =
                    if more { (&second.path, &self.first.path) } else { (&self.first.path, &second.path) };
                return Err(Error::PairLengths { short: short.clone(), long: long.clone(), records: self.records });
            }
            if !more {
                break;
            }
            self.records += 1;
            if let Some(qc) = self.qc.as_mut() {
                qc.add(&self.record);
                qc.add(&self.record2);
            }
            push(batch, &self.record, self.min_quality, self.ids);
            push(batch, &self.record2, self.min_quality, self.ids);
        }
        Ok(())
    }

    fn check_pairing(&mut self) -> Result<(), Error> {
        let id = base_id(self.record.header());
        match (self.mode, self.records) {
            (Pairing::Single, _) => {}
            (Pairing::Auto, 1) | (Pairing::Interleaved, _) if self.records % 2 == 1 => {
                self.mate1_id.clear();
                self.mate1_id.extend_from_slice(id);
            }
            (Pairing::Auto, _) => {
                self.mode = if id == self.mate1_id.as_slice() { Pairing::Interleaved } else { Pairing::Single };
            }
            (Pairing::Interleaved, _) => {
                if id != self.mate1_id.as_slice() {
                    return Err(mgds_formats::Error::NotInterleaved {
                        path: self.first.path.clone(),
                        record: self.records - 1,
                        name: String::from_utf8_lossy(&self.mate1_id).into_owned(),
                        next_name: String::from_utf8_lossy(id).into_owned(),
                    }
                    .into());
                }
            }
        }
        Ok(())
    }
}

/// Appends a record's sequence (and name) to a batch.
fn push(batch: &mut Batch, r: &Record, min_quality: u8, ids: bool) {
    let seq = r.sequence();
    if min_quality > 0 && r.format() == Some(Format::Fastq) {
        // As Kraken 2: a base whose quality is below the minimum becomes ambiguous; the length
        // stays.
        let q = r.quality();
        batch.seq.extend(seq.iter().zip(q).map(|(&b, &q)| if q.saturating_sub(33) < min_quality { b'x' } else { b }));
    } else {
        batch.seq.extend_from_slice(seq);
    }
    batch.ends.push(batch.seq.len());
    if ids {
        batch.ids.extend_from_slice(r.id());
        batch.id_ends.push(batch.ids.len());
    }
}
