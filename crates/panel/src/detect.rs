//! Streaming detection over a reads file, in parallel over chunks of reads.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mgds_api::{Marker, MarkerStatus, PanelResults, SubPanel};
use mgds_formats::{Compression, Reader, Record};
use rayon::iter::{ParallelBridge, ParallelIterator};
use serde_json::Map;

use crate::definition::{LONG_K, Panel, Thresholds};
use crate::dna;
use crate::error::{Error, reads_error};
use crate::long::{LongHits, LongIndex, LongPileup, LongScratch, LongSummary};
use crate::short::{ShortHits, ShortIndex, ShortScratch};

/// Reads handed to a worker at a time: enough to keep the hand-over cost small, few enough
/// that all workers get some work on a small file.
const CHUNK_READS: usize = 4096;
/// A chunk ends early past this many bases, so long reads do not make huge chunks.
const CHUNK_BASES: usize = 4 << 20;

/// How to run [`detect`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DetectOptions {
    /// Worker threads; 0 uses one per CPU core. The results do not depend on it.
    pub threads: usize,
    /// Longest read accepted, in bases; a longer one fails the run with an error naming it.
    /// `None`: no limit.
    pub max_record: Option<usize>,
}

/// Counts from one detection run, for logs and progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DetectStats {
    /// Reads (records) in the file.
    pub reads: u64,
    /// Bases in the file.
    pub bases: u64,
    /// Reads aligned to at least one long marker.
    pub reads_on_long_markers: u64,
    /// Reads matching at least one short marker (exactly or partially).
    pub reads_on_short_markers: u64,
}

/// The results of a detection run and its counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The panel results, in the API's JSON shape.
    pub results: PanelResults,
    /// Counts of reads and bases.
    pub stats: DetectStats,
}

/// Where a marker of the panel is searched: in the long or the short index, at this position.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Long(usize),
    Short(usize),
}

/// A panel ready to search reads: the panel and its long-marker and short-marker indexes. Build
/// it once and run it over many reads files (it is `Send + Sync`, so it can be shared).
pub struct Detector {
    panel: Panel,
    slots: Vec<Slot>,
    long: LongIndex,
    short: ShortIndex,
}

impl Detector {
    /// Indexes the markers of `panel` (and keeps a copy of it).
    pub fn new(panel: &Panel) -> Detector {
        let t = panel.thresholds();
        let (mut long, mut short, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for (_, marker) in panel.markers() {
            if marker.is_short(t) {
                slots.push(Slot::Short(short.len()));
                short.push(marker.sequence.as_slice());
            } else {
                slots.push(Slot::Long(long.len()));
                long.push(marker.sequence.as_slice());
            }
        }
        Detector {
            panel: panel.clone(),
            slots,
            long: LongIndex::new(&long, LONG_K),
            short: ShortIndex::new(&short, t.short_max_mismatches),
        }
    }

    /// Searches the reads in `reads` (FASTA or FASTQ, gzipped or not; pairs interleaved in one
    /// file are treated as single reads) for the panel's markers.
    pub fn run(&self, reads: &Path, opts: &DetectOptions) -> Result<Detection, Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|source| Error::Threads { threads: opts.threads, source })?;
        let (compression, input) = mgds_formats::open(reads)?;
        let totals = Totals::default();
        let chunks = Chunks {
            reader: Reader::new(input).with_max_record_length(opts.max_record.unwrap_or(usize::MAX)),
            record: Record::default(),
            path: reads.to_owned(),
            compression,
            totals: &totals,
            failed: false,
        };
        let state = Mutex::new(State {
            pileup: LongPileup::new(self.long.len()),
            short_counts: vec![[0; 2]; self.short_len()],
            stats: DetectStats::default(),
        });
        // Reading is serial (whichever worker is free takes the next chunk); the search of each
        // chunk runs in parallel and its hits are added to the totals under a lock. Every total
        // is a sum of integers, so the results do not depend on which worker did what.
        pool.install(|| {
            chunks.par_bridge().try_for_each_init(Work::default, |work, chunk| {
                let chunk = chunk?;
                self.search_chunk(&chunk, work);
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                state.add(&self.long, work);
                Ok::<(), Error>(())
            })
        })?;
        let mut state = state.into_inner().unwrap_or_else(|e| e.into_inner());
        state.stats.reads = totals.reads.load(Ordering::Relaxed);
        state.stats.bases = totals.bases.load(Ordering::Relaxed);
        if state.stats.reads == 0 {
            return Err(mgds_formats::Error::Empty { path: reads.to_owned() }.into());
        }
        Ok(Detection { results: self.results(&state), stats: state.stats })
    }

    /// The panel searched for.
    pub fn panel(&self) -> &Panel {
        &self.panel
    }

    fn short_len(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::Short(_))).count()
    }

    fn search_chunk(&self, chunk: &Chunk, work: &mut Work) {
        work.long_hits.clear();
        work.short_hits.clear();
        let mut start = 0;
        for &end in &chunk.ends {
            dna::encode_into(&chunk.bases[start..end], &mut work.codes);
            start = end;
            self.long.align_read(&work.codes, &mut work.long_scratch, &mut work.long_hits);
            self.short.search_read(&work.codes, &mut work.short_scratch, &mut work.short_hits);
        }
    }

    fn results(&self, state: &State) -> PanelResults {
        let t = self.panel.thresholds();
        let mut panel_results = Map::new();
        let mut slots = self.slots.iter();
        for sub in self.panel.sub_panels() {
            let markers = sub
                .markers
                .iter()
                .zip(slots.by_ref())
                .map(|(def, slot)| {
                    let mut marker = Marker {
                        name: def.name.clone(),
                        description: def.description.clone(),
                        status: MarkerStatus::Absent,
                        length: def.len() as u64,
                        identity: None,
                        coverage: None,
                        depth: None,
                        n_reads_exact_match: None,
                        n_reads_partial_match: None,
                    };
                    match *slot {
                        Slot::Long(i) => {
                            let s = state.pileup.summary(&self.long, i);
                            marker.status = long_status(&s, t);
                            marker.identity = Some(hundredths(s.identity));
                            marker.coverage = Some(hundredths(s.coverage));
                            marker.depth = Some(hundredths(s.depth));
                        }
                        Slot::Short(i) => {
                            let [exact, partial] = state.short_counts[i];
                            marker.status = short_status(exact, partial, t);
                            marker.n_reads_exact_match = Some(exact);
                            marker.n_reads_partial_match = Some(partial);
                        }
                    }
                    marker
                })
                .collect();
            let sub_panel = SubPanel { description: sub.description.clone(), markers };
            // A struct of strings, numbers and enums always serialises.
            let value = serde_json::to_value(sub_panel).unwrap_or_default();
            panel_results.insert(sub.name.clone(), value);
        }
        PanelResults { panel_name: self.panel.name().to_owned(), panel_results }
    }
}

/// Searches `reads` for the markers of `panel`; see [`Detector::run`].
pub fn detect(panel: &Panel, reads: &Path, opts: &DetectOptions) -> Result<PanelResults, Error> {
    Detector::new(panel).run(reads, opts).map(|d| d.results)
}

fn hundredths(x: u64) -> f64 {
    x as f64 / 100.0
}

/// The status of a long marker, decided on the values reported (floored to hundredths), so a
/// reader of the results can check it.
fn long_status(s: &LongSummary, t: &Thresholds) -> MarkerStatus {
    let (identity, coverage, depth) = (hundredths(s.identity), hundredths(s.coverage), hundredths(s.depth));
    if depth <= 0.0 || depth < t.long_min_depth {
        MarkerStatus::Absent
    } else if identity >= t.long_present_identity && coverage >= t.long_present_coverage {
        MarkerStatus::Present
    } else if identity >= t.long_probable_identity && coverage >= t.long_probable_coverage {
        MarkerStatus::Probable
    } else {
        MarkerStatus::Absent
    }
}

/// The status of a short marker: a read with an exact match is also a match within the SNP
/// allowance, so both kinds count towards probable.
fn short_status(exact: u64, partial: u64, t: &Thresholds) -> MarkerStatus {
    if exact >= t.short_present_reads {
        MarkerStatus::Present
    } else if exact + partial >= t.short_probable_reads {
        MarkerStatus::Probable
    } else {
        MarkerStatus::Absent
    }
}

/// The running totals of a run.
struct State {
    pileup: LongPileup,
    // [exact, partial] reads per short marker.
    short_counts: Vec<[u64; 2]>,
    stats: DetectStats,
}

impl State {
    fn add(&mut self, long: &LongIndex, work: &Work) {
        self.pileup.add(long, &work.long_hits);
        for &m in &work.short_hits.exact {
            self.short_counts[m as usize][0] += 1;
        }
        for &m in &work.short_hits.partial {
            self.short_counts[m as usize][1] += 1;
        }
        self.stats.reads_on_long_markers += work.long_hits.reads;
        self.stats.reads_on_short_markers += work.short_hits.reads;
    }
}

/// One worker's buffers, reused from chunk to chunk.
#[derive(Default)]
struct Work {
    codes: Vec<u8>,
    long_scratch: LongScratch,
    long_hits: LongHits,
    short_scratch: ShortScratch,
    short_hits: ShortHits,
}

/// Reads, as their sequences joined, with the end of each.
struct Chunk {
    bases: Vec<u8>,
    ends: Vec<usize>,
}

#[derive(Default)]
struct Totals {
    reads: AtomicU64,
    bases: AtomicU64,
}

/// The reads file as an iterator of chunks; it ends after its first error.
struct Chunks<'a> {
    reader: Reader<Box<dyn BufRead + Send>>,
    record: Record,
    path: PathBuf,
    compression: Compression,
    totals: &'a Totals,
    failed: bool,
}

impl Iterator for Chunks<'_> {
    type Item = Result<Chunk, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut chunk = Chunk { bases: Vec::new(), ends: Vec::with_capacity(CHUNK_READS) };
        while chunk.ends.len() < CHUNK_READS && chunk.bases.len() < CHUNK_BASES {
            match self.reader.read_record(&mut self.record) {
                Ok(0) => break,
                Ok(_) => {
                    chunk.bases.extend_from_slice(self.record.sequence());
                    chunk.ends.push(chunk.bases.len());
                }
                Err(e) => {
                    self.failed = true;
                    let line = self.reader.line_number();
                    return Some(Err(reads_error(&self.path, self.compression, line, e).into()));
                }
            }
        }
        if chunk.ends.is_empty() {
            return None;
        }
        self.totals.reads.fetch_add(chunk.ends.len() as u64, Ordering::Relaxed);
        self.totals.bases.fetch_add(chunk.bases.len() as u64, Ordering::Relaxed);
        Some(Ok(chunk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_status_follows_the_thresholds() {
        let t = Thresholds::default();
        let s = |identity, coverage, depth| LongSummary { identity, coverage, depth };
        assert_eq!(long_status(&s(9_900, 9_900, 100), &t), MarkerStatus::Present);
        assert_eq!(long_status(&s(9_899, 10_000, 100), &t), MarkerStatus::Probable);
        assert_eq!(long_status(&s(10_000, 9_500, 100), &t), MarkerStatus::Probable);
        assert_eq!(long_status(&s(10_000, 9_499, 100), &t), MarkerStatus::Absent);
        assert_eq!(long_status(&s(0, 0, 0), &t), MarkerStatus::Absent);
        let t = Thresholds { long_min_depth: 5.0, ..t };
        assert_eq!(long_status(&s(10_000, 10_000, 499), &t), MarkerStatus::Absent);
    }

    #[test]
    fn short_status_follows_the_thresholds() {
        let t = Thresholds::default();
        assert_eq!(short_status(1, 0, &t), MarkerStatus::Present);
        assert_eq!(short_status(0, 1, &t), MarkerStatus::Probable);
        assert_eq!(short_status(0, 0, &t), MarkerStatus::Absent);
        let t = Thresholds { short_present_reads: 3, short_probable_reads: 2, ..t };
        assert_eq!(short_status(2, 0, &t), MarkerStatus::Probable);
        assert_eq!(short_status(1, 0, &t), MarkerStatus::Absent);
    }
}
