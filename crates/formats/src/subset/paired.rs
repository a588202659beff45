//! The quick path of an R1/R2 subset: each mate file on a thread of its own.
//!
//! A mate's thread decompresses and parses its file, and writes its selected records itself,
//! while the bytes are still in its core's cache. What decides a pair travels to the judge (the
//! calling thread) in small pieces: each record's read id, a batch at a time. The judge reads
//! both mates' ids and the results' verdicts ([`Selection`], a third thread), checks the pairs
//! and sends each mate's thread which of its records to write. The records themselves never
//! cross threads.
//!
//! The judge meets the same checks, in the same order, as the careful path
//! ([`super::subset_paired`]); the mates' threads only read ahead and write what the judge
//! allows. An error stops the judge, and the threads stop at their next exchange with it.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::{Reads, Selection, Sink, SubsetOptions, pair_length_mismatch};
use crate::error::Error;
use crate::fastx::{Record, base_id};
use crate::pairs::{check_first_mates, mate_names_differ};

/// Records read together: the judge's verdicts on them go back to the mate's thread as one.
pub(super) const RECORDS_PER_BATCH: usize = 4096;
/// Batches a mate's thread reads ahead of the judge's verdicts.
const BATCHES_AHEAD: usize = 3;

/// What a mate's thread tells the judge about one batch of records.
struct Ids {
    // The records' ids (headers up to the first space or tab) side by side: record *i*'s ends
    // at `ends[i]`.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    // The file's first record, with the first batch: the first pair's checks need all of it.
    first: Option<Record>,
    // After these records: `Some(Ok)` at the end of the file, `Some(Err)` at an error.
    end: Option<Result<(), Error>>,
}

impl Ids {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &[u8] {
        &self.bytes[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }
}

/// A batch of records held by a mate's thread until the judge's verdicts on it arrive.
#[derive(Default)]
struct Held {
    bytes: Vec<u8>,
    // Record *i* ends at `ends[i]` in `bytes`.
    ends: Vec<usize>,
}

/// What [`subset_paired_quick`] did.
pub(super) struct PairedDone {
    /// Records written to R1's output and to R2's.
    pub written: (u64, u64),
    /// Records read from both files.
    pub records: u64,
}

/// [`super::subset_paired`] with each mate file on a thread of its own (see the module notes):
/// the same outputs and the same errors. `a` and `b` should decompress on the thread that
/// reads them ([`Reads::open_inline`]).
pub(super) fn subset_paired_quick<S: Sink + Send>(
    options: &SubsetOptions,
    selection: &mut Selection,
    a: Reads<Box<dyn BufRead + Send>>,
    b: Reads<Box<dyn BufRead + Send>>,
    out1: &mut S,
    out2: &mut S,
) -> Result<PairedDone, Error> {
    let (path_a, path_b) = (a.path.clone(), b.path.clone());
    std::thread::scope(|scope| {
        let (ids_a, to_a) = (sync_channel(BATCHES_AHEAD), sync_channel(BATCHES_AHEAD));
        let (ids_b, to_b) = (sync_channel(BATCHES_AHEAD), sync_channel(BATCHES_AHEAD));
        let mate_a = scope.spawn(move || mate(a, ids_a.0, to_a.1, out1));
        let mate_b = scope.spawn(move || mate(b, ids_b.0, to_b.1, out2));
        let mut a = Judged::new(&path_a, ids_a.1, to_a.0);
        let mut b = Judged::new(&path_b, ids_b.1, to_b.0);
        let judged = judge(options, selection, &mut a, &mut b);
        let records = a.count + b.count;
        // The mates' threads end once the judge's side of their channels is gone.
        drop((a, b));
        let written = (join(mate_a)?, join(mate_b)?);
        // A mate's thread fails only at a write, of records the judge had judged: before
        // whatever stopped the judge, so its error comes first, as on the careful path.
        judged?;
        Ok(PairedDone { written, records })
    })
}

fn join<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The judge: the careful path's loop over ids instead of records.
fn judge(options: &SubsetOptions, selection: &mut Selection, a: &mut Judged, b: &mut Judged) -> Result<(), Error> {
    loop {
        let (more_a, more_b) = (a.next()?, b.next()?);
        match (more_a, more_b) {
            (false, false) => break,
            (false, true) => return Err(pair_length_mismatch(a.path, b.path, a.count)),
            (true, false) => return Err(pair_length_mismatch(b.path, a.path, b.count)),
            (true, true) => {}
        }
        let n = a.count;
        if n == 1
            && let (Some(one), Some(two)) = (&a.ids.first, &b.ids.first)
        {
            check_first_mates(a.path, one, b.path, two)?;
        }
        let (id_a, id_b) = (a.id(), b.id());
        if base_id(id_a) != base_id(id_b) {
            return Err(mate_names_differ(a.path, id_a, b.path, id_b, n));
        }
        let selected1 = selection.verdict(a.path, n)?;
        let selected2 = selection.verdict(b.path, b.count)?;
        let (w1, w2) = options.pair_verdict(selected1, selected2);
        a.keep.push(w1);
        b.keep.push(w2);
    }
    // The last verdicts went out as each file ended; an error here discards the outputs.
    selection.finish(a.path, a.count)
}

/// One mate file as the judge sees it: ids arriving a batch at a time, verdicts going back.
struct Judged<'p> {
    path: &'p Path,
    batches: Receiver<Ids>,
    verdicts: SyncSender<Vec<bool>>,
    ids: Ids,
    pos: usize,
    count: u64,
    // Verdicts on the current batch's records so far.
    keep: Vec<bool>,
}

impl<'p> Judged<'p> {
    fn new(path: &'p Path, batches: Receiver<Ids>, verdicts: SyncSender<Vec<bool>>) -> Self {
        let ids = Ids { bytes: Vec::new(), ends: Vec::new(), first: None, end: None };
        Judged { path, batches, verdicts, ids, pos: 0, count: 0, keep: Vec::new() }
    }

    /// Moves to the next record; `false` at the end of the file.
    fn next(&mut self) -> Result<bool, Error> {
        loop {
            if self.pos < self.ids.len() {
                self.pos += 1;
                self.count += 1;
                return Ok(true);
            }
            self.send_verdicts()?;
            match self.ids.end.take() {
                Some(Ok(())) => {
                    self.ids.end = Some(Ok(()));
                    return Ok(false);
                }
                Some(Err(e)) => return Err(e),
                None => {}
            }
            let first = self.ids.first.take();
            self.ids = self.batches.recv().map_err(|_| stopped(self.path))?;
            // The first record stays for the first pair's checks.
            self.ids.first = self.ids.first.take().or(first);
            self.pos = 0;
        }
    }

    /// The id of the record [`Judged::next`] moved to.
    fn id(&self) -> &[u8] {
        self.ids.get(self.pos - 1)
    }

    /// Sends the verdicts on the current batch, once it is judged whole (or the judging ends).
    fn send_verdicts(&mut self) -> Result<(), Error> {
        if self.keep.is_empty() {
            return Ok(());
        }
        let keep = std::mem::take(&mut self.keep);
        self.verdicts.send(keep).map_err(|_| stopped(self.path))
    }
}

/// A mate's thread ended before its file did: it met an error of its own (a write), which
/// [`subset_paired_quick`] reports from its join instead of this one.
fn stopped(path: &Path) -> Error {
    Error::Write { path: path.to_owned(), source: std::io::Error::other("the thread reading this file stopped") }
}

/// A mate's thread: reads `reads` a batch at a time, sends each batch's ids to the judge, and
/// writes the records the judge's verdicts select to `out`. Returns the records written.
fn mate<S: Sink>(
    mut reads: Reads<Box<dyn BufRead + Send>>,
    ids: SyncSender<Ids>,
    verdicts: Receiver<Vec<bool>>,
    out: &mut S,
) -> Result<u64, Error> {
    let mut held = VecDeque::<Held>::new();
    let mut spare: Vec<Held> = Vec::new();
    let (mut record, mut ends) = (Record::default(), Vec::new());
    let mut written = 0;
    loop {
        let mut batch = spare.pop().unwrap_or_default();
        let (batch_ids, ended) = fill(&mut reads, &mut batch, &mut record, &mut ends);
        held.push_back(batch);
        // The judge has stopped (at an error): so does this side.
        if ids.send(batch_ids).is_err() {
            return Ok(written);
        }
        // Verdicts are waited for once enough batches are read ahead, and at the end for all.
        while held.len() > BATCHES_AHEAD || (ended && !held.is_empty()) {
            let Ok(keep) = verdicts.recv() else { return Ok(written) };
            let Some(batch) = held.pop_front() else { break };
            written += write_selected(&batch, &keep, out)?;
            // A batch judged only in part (the judging ended in it) is the last one.
            spare.push(batch);
        }
        if ended {
            return Ok(written);
        }
    }
}

/// Reads up to [`RECORDS_PER_BATCH`] records into `batch`: the records that lie whole in the
/// reader's buffer are copied as one run, the rest read one at a time. Returns their ids for
/// the judge, and whether the file ended (or failed) after them.
fn fill(
    reads: &mut Reads<Box<dyn BufRead + Send>>,
    batch: &mut Held,
    record: &mut Record,
    ends: &mut Vec<usize>,
) -> (Ids, bool) {
    batch.bytes.clear();
    batch.ends.clear();
    let mut ids = Ids { bytes: Vec::new(), ends: Vec::with_capacity(RECORDS_PER_BATCH), first: None, end: None };
    while batch.ends.len() < RECORDS_PER_BATCH {
        let buf = match reads.reader.whole_records(ends) {
            Ok(buf) => buf,
            Err(e) => {
                ids.end = Some(Err(reads.error(e)));
                break;
            }
        };
        if ends.is_empty() {
            match reads.next(record) {
                Ok(true) => {
                    if reads.count() == 1 {
                        ids.first = Some(record.clone());
                    }
                    batch.bytes.extend_from_slice(record.raw());
                    batch.ends.push(batch.bytes.len());
                    ids.bytes.extend_from_slice(record.id());
                    ids.ends.push(ids.bytes.len());
                }
                Ok(false) => {
                    ids.end = Some(Ok(()));
                    break;
                }
                Err(e) => {
                    ids.end = Some(Err(e));
                    break;
                }
            }
            continue;
        }
        let take = ends.len().min(RECORDS_PER_BATCH - batch.ends.len());
        let run = &buf[..ends[take - 1]];
        let offset = batch.bytes.len();
        batch.bytes.extend_from_slice(run);
        let mut start = 0;
        for &end in &ends[..take] {
            // A whole record here is plain FASTQ: `@`, the header, `\n`.
            let header = &run[start + 1..end];
            let id_len = header.iter().position(|&c| matches!(c, b' ' | b'\t' | b'\n')).unwrap_or(header.len());
            ids.bytes.extend_from_slice(&header[..id_len]);
            ids.ends.push(ids.bytes.len());
            batch.ends.push(offset + end);
            start = end;
        }
        let run_len = run.len();
        reads.reader.consume_records(take, run_len);
    }
    let ended = ids.end.is_some();
    (ids, ended)
}

/// Writes the records of `batch` that `keep` selects (the first `keep.len()` records: the
/// judging may have ended within the batch); returns how many.
fn write_selected<S: Sink>(batch: &Held, keep: &[bool], out: &mut S) -> Result<u64, Error> {
    let mut written = 0;
    // Runs of consecutive selected records go out as one slice.
    let (mut run_start, mut run_end, mut start) = (0, 0, 0);
    for (&end, &k) in batch.ends.iter().zip(keep) {
        if k {
            if run_end != start {
                if run_end > run_start {
                    out.put(&batch.bytes[run_start..run_end])?;
                }
                run_start = start;
            }
            run_end = end;
            written += 1;
        }
        start = end;
    }
    if run_end > run_start {
        out.put(&batch.bytes[run_start..run_end])?;
    }
    Ok(written)
}
