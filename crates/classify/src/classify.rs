//! Classification: reads -> minimizers -> table lookups -> hit counts -> [`resolve`] -> taxon,
//! then the read-level TSV, Kraken 2's per-read output, the report counts and the results table.
//!
//! Every step follows Kraken 2 (2.1.2 and later) exactly, so that a Kraken 2 database read in
//! place gives Kraken 2's call for every read: the scanner's handling of ambiguous bases, the
//! lookup of a minimizer only when it differs from the previous one, hit groups counted on those
//! lookups, the confidence climb and the minimum hit groups.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use mgds_api::{ClassificationResults, TaxonRow};
use mgds_formats::{Compression, Format, Reader, Record, TaxId, base_id};
use rayon::prelude::*;

use crate::abundance;
use crate::database::Database;
use crate::error::Error;
use crate::kmer::{AMBIGUOUS, Alphabet, Minimizers, mix64};
use crate::report::KrakenReport;
use crate::table::TableView;
use crate::taxonomy::Taxonomy;

/// Default confidence: 0, as Kraken 2's, so a read is placed at its best-scoring taxon however
/// few of its k-mers agree. Chance matches are kept out by the minimum hit groups
/// ([`DEFAULT_MIN_HITS`]) instead: a single chance minimizer no longer places a read. Raise it
/// when false species calls cost more than missed ones.
pub const DEFAULT_CONFIDENCE: f64 = 0.0;

/// Default minimum number of minimizer hit groups for a read's call to pass the filter, as
/// Kraken 2's `--minimum-hit-groups` (also 2). A hit group is a run of neighbouring k-mers that
/// share one minimizer found in the database: one chance match gives one group, however many
/// k-mers it covers, so counting groups rather than k-mers is what stops a single chance match
/// from placing a read.
pub const DEFAULT_MIN_HITS: u32 = 2;

/// Default minimum reads in a species' (or genus') clade for abundance re-estimation to keep
/// it, as Bracken's `-t`.
pub const DEFAULT_REESTIMATE_THRESHOLD: u64 = 10;

/// The read-level TSV's header line.
pub const READLEVEL_HEADER: &str = "Tax ID\tN Hits\tSeq Len\tPassed Filter\n";

// Records per batch, and sequence bytes per batch: two batches are in memory at once (one
// being classified, one being read), whatever the file's size.
const BATCH_RECORDS: usize = 16 * 1024;
const BATCH_BYTES: usize = 4 << 20;
// Reads (or pairs) per parallel task, at most; and sequence bases, about.
const TASK_UNITS: usize = 512;
const TASK_BASES: usize = 128 << 10;
const NO_TAXON: u32 = u32::MAX;
// Hit-list tokens besides taxon values (flat index + 1, or 0 for no taxon).
const TOKEN_AMBIGUOUS: u32 = u32::MAX;
const TOKEN_MATE: u32 = u32::MAX - 1;
const TOKEN_FRAME: u32 = u32::MAX - 2;
// No minimizer seen yet in a mate (minimizers use at most 62 bits).
const NO_KEY: u64 = u64::MAX - 1;

/// Whether the reads file is an interleaved pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// Interleaved when the first two records have the same read name (ignoring `/1`, `/2`
    /// and comments); single-end otherwise.
    #[default]
    Auto,
    /// Every record is classified on its own.
    Single,
    /// Records come in pairs (read 1, then read 2 with the same read name); a pair is classified
    /// as one and both mates get the same call. A record without its mate is an error.
    Interleaved,
}

/// How reads are classified.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassifyOptions {
    /// Fraction (0 to 1) of a read's k-mers that must support the clade it is placed in; the
    /// call climbs towards the root until it does. Default [`DEFAULT_CONFIDENCE`].
    pub confidence: f64,
    /// Minimum minimizer hit groups ([`Hits::hit_groups`], over both mates of a pair) for a
    /// call to pass the filter; reads below it keep their call in the read-level TSV with
    /// `Passed Filter` `F` and are not counted in the results table. Default
    /// [`DEFAULT_MIN_HITS`].
    pub min_hits: u32,
    /// Worker threads; 0 uses one per core.
    pub threads: usize,
    /// Whether a single reads file is an interleaved pair.
    pub paired: Pairing,
    /// Bases of FASTQ reads with a quality below this (Phred) are treated as ambiguous, as Kraken
    /// 2's `--minimum-base-quality`; 0 (the default) masks nothing.
    pub min_base_quality: u8,
    /// Minimum reads in a species' (genus') clade for re-estimation to keep it. Default
    /// [`DEFAULT_REESTIMATE_THRESHOLD`].
    pub reestimate_threshold: u64,
    /// Longest sequence of one read (or record) accepted, in bases; a longer one fails the
    /// run with an error naming it. Default: no limit.
    pub max_record: usize,
}

impl Default for ClassifyOptions {
    fn default() -> Self {
        ClassifyOptions {
            confidence: DEFAULT_CONFIDENCE,
            min_hits: DEFAULT_MIN_HITS,
            threads: 0,
            paired: Pairing::Auto,
            min_base_quality: 0,
            reestimate_threshold: DEFAULT_REESTIMATE_THRESHOLD,
            max_record: usize::MAX,
        }
    }
}

/// The reads to classify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads<'a> {
    /// One file: single-end or interleaved pairs ([`ClassifyOptions::paired`]).
    File(&'a Path),
    /// Two files of mates, read in step (Kraken 2's `--paired`): record `i` of one and of the
    /// other are one fragment. Their names are not compared.
    Pair(&'a Path, &'a Path),
}

/// Where classification writes besides its results.
#[derive(Default)]
pub struct Outputs<'a> {
    /// The gzipped read-level TSV ([`classify`]).
    pub readlevel: Option<&'a mut dyn Write>,
    /// Kraken 2's per-read output (`--output`): `C`/`U`, read name, tax id, length, and the
    /// k-mer hit list, one line per read or pair, uncompressed.
    pub kraken: Option<&'a mut dyn Write>,
}

/// What a classification produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The results table (as [`classify`] returns it).
    pub results: ClassificationResults,
    /// Reads (pairs count once) per taxon, for a Kraken 2-style report ([`KrakenReport::render`]).
    pub report: KrakenReport,
    /// Mean length of the reads (of each mate, for pairs).
    pub mean_read_length: f64,
    /// The read length of the k-mer distribution used for re-estimated abundance; `None` when
    /// none was available.
    pub reestimated_with: Option<u32>,
}

/// The k-mer hits of one read (or pair): how many of its k-mers hit each taxon, out of how
/// many k-mers. Reuse one across reads ([`Hits::clear`]); it allocates only while it grows.
#[derive(Debug, Clone, Default)]
pub struct Hits {
    // (taxon flat index, k-mers) in order of first hit; a read hits few taxa, so a linear scan
    // beats a map.
    counts: Vec<(u32, u32)>,
    kmers: u32,
    hits: u32,
    groups: u32,
    // Scratch: the mate's k-mers as runs of one minimizer (or ambiguous), and their lookups.
    runs: Vec<Run>,
    lookups: Lookups,
    // The hit list (Kraken 2's output), when asked for.
    tokens: Vec<(u32, u32)>,
    frames: [Vec<u8>; 6],
}

/// Scratch of [`Engine::look_up`]: the runs to look up, and their hashes and home cells.
#[derive(Debug, Clone, Default)]
struct Lookups {
    fresh: Vec<u32>,
    homes: Vec<(u64, usize)>,
}

/// Where a sequence's lookups are between batches.
struct MateState {
    last_key: u64,
    last_value: u32,
    hits: u32,
}

// Minimizer runs looked up in one batch.
const FLUSH_RUNS: usize = 4096;
// Nucleotide sequences longer than this are scanned in pieces of PIECE_KMERS k-mers on all
// threads, PIECES_AT_ONCE at a time.
const SPLIT_BASES: usize = 64 << 10;
const PIECE_KMERS: usize = 16 << 10;
const PIECES_AT_ONCE: usize = 16;
// Lookups a cell is asked for ahead of its probe: enough to keep the processor's outstanding
// misses busy, few enough that the cells are still in the first-level cache when probed.
const LOOKAHEAD: usize = 24;

#[derive(Debug, Clone, Copy)]
struct Run {
    key: u64,
    count: u32,
    value: u32,
}

impl Hits {
    /// No hits.
    pub fn new() -> Hits {
        Hits::default()
    }

    /// Forgets all hits, keeping the buffers.
    pub fn clear(&mut self) {
        self.counts.clear();
        self.kmers = 0;
        self.hits = 0;
        self.groups = 0;
        self.tokens.clear();
    }

    /// Counts one k-mer that hit `taxon` (a flat index) as a hit group of its own, or nothing.
    #[inline]
    pub fn add(&mut self, taxon: Option<u32>) {
        self.kmers += 1;
        if let Some(t) = taxon {
            self.add_hits(t, 1);
            self.groups += 1;
        }
    }

    /// Adds `n` k-mers that hit `taxon` (a flat index), without a hit group of their own.
    /// Does not count the read's k-mers ([`Hits::add_kmers`]).
    #[inline]
    pub fn add_hits(&mut self, taxon: u32, n: u32) {
        self.hits += n;
        match self.counts.iter_mut().find(|c| c.0 == taxon) {
            Some(c) => c.1 += n,
            None => self.counts.push((taxon, n)),
        }
    }

    /// Counts one hit group.
    pub fn add_group(&mut self) {
        self.groups += 1;
    }

    /// Adds `n` k-mers to the read's total (with or without hits).
    pub fn add_kmers(&mut self, n: u32) {
        self.kmers += n;
    }

    /// k-mers of the read, ambiguous ones included (Kraken 2's total for the confidence).
    pub fn kmers(&self) -> u32 {
        self.kmers
    }

    /// k-mers that hit the database (`N Hits`).
    pub fn n_hits(&self) -> u32 {
        self.hits
    }

    /// Minimizer hit groups: lookups of a new minimizer that found a taxon (Kraken 2's "hit
    /// groups"; compared with [`ClassifyOptions::min_hits`]).
    pub fn hit_groups(&self) -> u32 {
        self.groups
    }

    /// `(taxon flat index, k-mers)` for each taxon hit.
    pub fn counts(&self) -> &[(u32, u32)] {
        &self.counts
    }
}

/// Looks up every k-mer of `seq` (one read, or one mate of a pair) in the database and adds
/// them to `hits`.
pub fn count_hits(db: &Database, seq: &[u8], hits: &mut Hits) {
    Engine::new(db).count_mate(seq, hits, false);
}

/// Lookups against one database.
#[derive(Clone, Copy)]
pub(crate) struct Engine<'a> {
    scanner: &'a Minimizers,
    view: TableView<'a>,
    min_hash: u64,
    n_taxa: u32,
}

impl<'a> Engine<'a> {
    pub fn new(db: &'a Database) -> Engine<'a> {
        Engine::with(db.scanner(), db.table.view(), db.min_hash, db.taxonomy().len() as u32)
    }

    pub fn with(scanner: &'a Minimizers, view: TableView<'a>, min_hash: u64, n_taxa: u32) -> Engine<'a> {
        Engine { scanner, view, min_hash, n_taxa }
    }

    fn is_protein(&self) -> bool {
        self.scanner.alphabet() == Alphabet::Protein
    }

    /// Scans one mate (all six frames of it for a protein database) into `hits`; returns the
    /// mate's k-mer hits.
    fn count_mate(&self, seq: &[u8], hits: &mut Hits, tokens: bool) -> u32 {
        if !self.is_protein() {
            return self.count_sequence(seq, hits, tokens);
        }
        let mut frames = std::mem::take(&mut hits.frames);
        crate::kmer::translate_frames(seq, &mut frames);
        let mut n = 0;
        for (i, frame) in frames.iter().enumerate() {
            n += self.count_sequence(frame, hits, tokens);
            if i < 5 && tokens {
                push_token(&mut hits.tokens, TOKEN_FRAME, 1);
            }
        }
        // Kraken 2 counts three of the five frame borders among a read's k-mers.
        hits.kmers += 3;
        hits.frames = frames;
        n
    }

    /// Scans one sequence into `hits`: each new minimizer is looked up once (a repeat, even
    /// after ambiguous k-mers, takes the last taxon without a new hit group). A long sequence
    /// of nucleotides is cut into pieces scanned and looked up on all threads
    /// ([`Engine::count_pieces`]).
    #[inline]
    fn count_sequence(&self, seq: &[u8], hits: &mut Hits, tokens: bool) -> u32 {
        if seq.len() > SPLIT_BASES && !self.is_protein() {
            return self.count_pieces(seq, hits, tokens, PIECE_KMERS);
        }
        let mut runs = std::mem::take(&mut hits.runs);
        runs.clear();
        let mut state = MateState { last_key: NO_KEY, last_value: 0, hits: 0 };
        let n = self.scanner.scan(seq, |key| match runs.last_mut() {
            Some(r) if r.key == key => r.count += 1,
            _ => {
                // A long sequence (a reference chromosome) is looked up in batches, so that the
                // scratch memory stays small.
                if runs.len() == FLUSH_RUNS {
                    self.look_up(&mut runs, state.last_key, &mut hits.lookups);
                    self.count_runs(&mut runs, hits, &mut state, tokens);
                }
                runs.push(Run { key, count: 1, value: 0 });
            }
        });
        self.look_up(&mut runs, state.last_key, &mut hits.lookups);
        self.count_runs(&mut runs, hits, &mut state, tokens);
        hits.runs = runs;
        hits.kmers += n;
        state.hits
    }

    /// [`Engine::count_sequence`] for a long nucleotide sequence: its k-mers are cut into pieces
    /// of `piece_kmers`, each piece (with the k - 1 bases after it, so that every k-mer is
    /// whole in one piece) is scanned and looked up on any thread, a few pieces at a time, and
    /// the pieces' runs are counted in order on this one. A k-mer's minimizer depends on its own
    /// bases only, and a piece looks up every run that differs from the one before it in the
    /// piece, which includes every run the whole sequence would look up: the calls are the ones
    /// of a scan in one piece.
    fn count_pieces(&self, seq: &[u8], hits: &mut Hits, tokens: bool, piece_kmers: usize) -> u32 {
        let k = self.scanner.k() as usize;
        let kmers = seq.len() + 1 - k;
        let starts: Vec<usize> = (0..kmers).step_by(piece_kmers).collect();
        let mut state = MateState { last_key: NO_KEY, last_value: 0, hits: 0 };
        let mut n = 0;
        // A few pieces at a time, so that the runs held stay few however long the sequence.
        for wave in starts.chunks(PIECES_AT_ONCE) {
            let pieces: Vec<(Vec<Run>, u32)> = wave
                .par_iter()
                .map_init(Lookups::default, |lookups, &start| {
                    let end = (start + piece_kmers).min(kmers) + k - 1;
                    let mut runs: Vec<Run> = Vec::with_capacity(piece_kmers / 2);
                    let n = self.scanner.scan(&seq[start..end], |key| match runs.last_mut() {
                        Some(r) if r.key == key => r.count += 1,
                        _ => runs.push(Run { key, count: 1, value: 0 }),
                    });
                    self.look_up(&mut runs, NO_KEY, lookups);
                    (runs, n)
                })
                .collect();
            for (mut runs, kmers) in pieces {
                n += kmers;
                self.count_runs(&mut runs, hits, &mut state, tokens);
            }
        }
        hits.kmers += n;
        state.hits
    }

    /// Looks up the taxon of every run whose minimizer differs from the one before it
    /// (`last_key` before the first) and is not ambiguous.
    #[inline]
    fn look_up(&self, runs: &mut [Run], mut last_key: u64, scratch: &mut Lookups) {
        scratch.fresh.clear();
        for (i, r) in runs.iter().enumerate() {
            if r.key != AMBIGUOUS && r.key != last_key {
                scratch.fresh.push(i as u32);
                last_key = r.key;
            }
        }
        scratch.homes.clear();
        for &i in &scratch.fresh {
            let h = mix64(runs[i as usize].key);
            let home = if self.min_hash != 0 && h < self.min_hash { usize::MAX } else { self.view.home(h) };
            scratch.homes.push((h, home));
        }
        // The table's cells are cache misses, each a trip to memory. They are asked for
        // LOOKAHEAD lookups ahead of their probe, so that many are on their way at once: a probe
        // that waited for its cell before the next was asked for would leave the processor idle.
        let homes = &scratch.homes;
        for &(_, home) in homes.iter().take(LOOKAHEAD) {
            self.view.prefetch(home);
        }
        for (n, (&i, &(h, home))) in scratch.fresh.iter().zip(homes).enumerate() {
            if let Some(&(_, ahead)) = homes.get(n + LOOKAHEAD) {
                self.view.prefetch(ahead);
            }
            let v = if home == usize::MAX { 0 } else { self.view.get_from(h, home) };
            runs[i as usize].value = if v > self.n_taxa { 0 } else { v };
        }
    }

    /// Counts runs (all complete, those to look up looked up) into `hits`; empties `runs`. A
    /// run whose minimizer is the last one seen (ambiguous runs between them or not) takes the
    /// last taxon and starts no hit group.
    #[inline]
    fn count_runs(&self, runs: &mut Vec<Run>, hits: &mut Hits, state: &mut MateState, tokens: bool) {
        let (mut last_key, mut last_value) = (state.last_key, state.last_value);
        for r in runs.iter_mut() {
            if r.key == AMBIGUOUS {
                if tokens {
                    push_token(&mut hits.tokens, TOKEN_AMBIGUOUS, r.count);
                }
                continue;
            }
            if r.key != last_key {
                last_key = r.key;
                last_value = r.value;
                if r.value != 0 {
                    hits.groups += 1;
                }
            } else {
                r.value = last_value;
            }
            if r.value != 0 {
                state.hits += r.count;
                hits.hits += r.count;
                let t = r.value - 1;
                match hits.counts.iter_mut().find(|c| c.0 == t) {
                    Some(c) => c.1 += r.count,
                    None => hits.counts.push((t, r.count)),
                }
            }
            if tokens {
                push_token(&mut hits.tokens, r.value, r.count);
            }
        }
        state.last_key = last_key;
        state.last_value = last_value;
        runs.clear();
    }

    /// The taxon value (flat index + 1; 0 for none, ambiguous k-mers included) of every k-mer
    /// of a reference sequence, run-length encoded, as classification sees them.
    pub fn kmer_taxa(&self, seq: &[u8], hits: &mut Hits, out: &mut Vec<(u32, u32)>) {
        hits.clear();
        self.count_sequence(seq, hits, true);
        out.clear();
        for &(v, c) in &hits.tokens {
            let v = if v == TOKEN_AMBIGUOUS { 0 } else { v };
            match out.last_mut() {
                Some(last) if last.0 == v => last.1 += c,
                _ => out.push((v, c)),
            }
        }
    }
}

fn push_token(tokens: &mut Vec<(u32, u32)>, token: u32, count: u32) {
    match tokens.last_mut() {
        Some(t) if t.0 == token => t.1 += count,
        _ => tokens.push((token, count)),
    }
}

/// Decides a read's taxon from its hits, as Kraken 2 does: each hit taxon scores the hits on
/// its path to the root; the best scoring taxon wins (the lowest common ancestor of the best
/// ones on a tie); then the call climbs towards the root until the hits in its clade reach
/// `confidence` times the read's k-mers. Returns 0 (unclassified) for no hits, or when even
/// the root does not reach the threshold.
pub fn resolve(hits: &Hits, taxonomy: &Taxonomy, confidence: f64) -> TaxId {
    resolve_index(hits, taxonomy, confidence).map_or(0, |i| taxonomy.tax_id(i))
}

/// [`resolve`] on flat indexes.
pub fn resolve_index(hits: &Hits, taxonomy: &Taxonomy, confidence: f64) -> Option<u32> {
    let counts = hits.counts();
    let mut best: Option<(u32, u64)> = None;
    for &(taxon, _) in counts {
        let score: u64 =
            counts.iter().filter(|&&(t, _)| taxonomy.is_ancestor_index(t, taxon)).map(|&(_, n)| n as u64).sum();
        best = match best {
            Some((b, s)) if s > score => Some((b, s)),
            Some((b, s)) if s == score => Some((taxonomy.lca_index(b, taxon), s)),
            _ => Some((taxon, score)),
        };
    }
    let (mut node, _) = best?;
    // As Kraken 2: the product in floating point, then its ceiling (0.28 * 25 needs 8 k-mers).
    let required = (confidence * hits.kmers() as f64).ceil() as u64;
    loop {
        let clade: u64 =
            counts.iter().filter(|&&(t, _)| taxonomy.is_ancestor_index(node, t)).map(|&(_, n)| n as u64).sum();
        if clade >= required {
            return Some(node);
        }
        node = taxonomy.parent(node)?;
    }
}

/// Classifies the reads in `reads` (FASTA or FASTQ, gzipped or not) against `db`.
///
/// Writes the gzipped read-level TSV into `readlevel`: the header [`READLEVEL_HEADER`], then
/// one row per record in input order (for a pair, one row per mate: the pair's `Tax ID` and
/// `Passed Filter`, the mate's own `N Hits` and `Seq Len`; `Tax ID` 0 is unclassified).
///
/// Returns the results table: a row per taxon with passing reads at it or below it;
/// `readcount` counts records (each mate of a pair is one), `n_reads` all records. Rows are
/// ordered by `readcount_w_children` (largest first), then tax id. `abundance` is set on
/// species rows only: reads in the species' subtree divided by its mean reference genome
/// length, normalised to sum to 1 over species (absent when the database does not know its
/// genomes). `reestimated_abundance` is set on kept species and genus rows when the database
/// has a k-mer distribution ([`Database::kmer_distribution`]).
///
/// The same file, database and options always give the same bytes and the same table, however
/// many threads are used.
pub fn classify(
    db: &Database,
    reads: &Path,
    opts: &ClassifyOptions,
    readlevel: &mut dyn Write,
) -> Result<ClassificationResults, Error> {
    let outputs = Outputs { readlevel: Some(readlevel), kraken: None };
    Ok(classify_reads(db, Reads::File(reads), opts, outputs)?.results)
}

/// Classifies `reads` against `db`, writing the asked-for [`Outputs`]; see [`classify`] for the
/// read-level TSV and the results table.
pub fn classify_reads(
    db: &Database,
    reads: Reads<'_>,
    opts: &ClassifyOptions,
    outputs: Outputs<'_>,
) -> Result<Classification, Error> {
    if !(0.0..=1.0).contains(&opts.confidence) {
        return Err(Error::Options(format!("confidence must be between 0 and 1, not {}", opts.confidence)));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::Options(format!("could not start {} threads: {e}", opts.threads)))?;
    let want_ids = outputs.kraken.is_some();
    let mut input = Input::open(reads, opts, want_ids)?;
    let write_err = |source| Error::Write { path: PathBuf::from("read-level results"), source };
    let kraken_err = |source| Error::Write { path: PathBuf::from("Kraken 2 output"), source };
    let mut readlevel = match outputs.readlevel {
        Some(w) => {
            let mut gz = GzEncoder::new(w, flate2::Compression::new(4));
            gz.write_all(READLEVEL_HEADER.as_bytes()).map_err(write_err)?;
            Some(gz)
        }
        None => None,
    };
    let mut kraken = outputs.kraken;

    let taxonomy = db.taxonomy();
    let mut readcount = vec![0u64; taxonomy.len()];
    let mut report = KrakenReport::new(taxonomy.len());
    let (mut n_reads, mut mates, mut bases) = (0u64, 0u64, 0u64);
    let (mut current, mut next) = (Batch::default(), Batch::default());
    input.fill(&mut current)?;
    if current.len() == 0 {
        return Err(Error::NoReads { path: input.first_path().to_owned() });
    }
    let mut rows = Vec::with_capacity(1 << 20);
    while current.len() > 0 {
        let paired = input.paired();
        // Read the next batch on a thread of its own while this one is classified on the
        // pool's threads, so that decompressing and parsing never hold up classification (as
        // Kraken 2 hands decompression to a `gzip` process). The writers stay on this thread:
        // they need not be `Send`.
        let filled = std::thread::scope(|scope| {
            let reader = scope.spawn(|| input.fill(&mut next));
            pool.install(|| current.classify(db, opts, paired, want_ids));
            reader.join()
        });
        filled.map_err(|_| Error::Options("the thread reading the reads failed".into()))??;
        rows.clear();
        let unit = if paired { 2 } else { 1 };
        for (i, call) in current.calls.iter().enumerate() {
            n_reads += 1;
            mates += 1;
            bases += call.len as u64;
            let tax_id = if call.taxon == NO_TAXON {
                0
            } else {
                if call.passed {
                    readcount[call.taxon as usize] += 1;
                }
                taxonomy.tax_id(call.taxon)
            };
            if i % unit == 0 {
                let counted = (call.taxon != NO_TAXON && call.passed).then_some(call.taxon);
                report.add(counted);
            }
            if readlevel.is_some() {
                let flag = if call.passed { 'T' } else { 'F' };
                writeln!(rows, "{tax_id}\t{}\t{}\t{flag}", call.hits, call.len).expect("writing to a Vec");
            }
        }
        if let Some(gz) = readlevel.as_mut() {
            gz.write_all(&rows).map_err(write_err)?;
        }
        if let Some(w) = kraken.as_mut() {
            for chunk in &current.kraken {
                w.write_all(chunk).map_err(kraken_err)?;
            }
        }
        std::mem::swap(&mut current, &mut next);
    }
    if let Some(gz) = readlevel {
        gz.finish().and_then(|w| w.flush()).map_err(write_err)?;
    }
    if let Some(w) = kraken.as_mut() {
        w.flush().map_err(kraken_err)?;
    }
    let mean_read_length = if mates == 0 { 0.0 } else { bases as f64 / mates as f64 };
    let dist = distribution_for(db, mean_read_length)?;
    let results = results_table(db, &readcount, n_reads, &report, dist.as_deref(), opts);
    Ok(Classification { results, report, mean_read_length, reestimated_with: dist.map(|d| d.read_length()) })
}

/// The k-mer distribution for reads of about `mean` bases: a stored one within 5% of it, else
/// one computed for the rounded mean from the k-mer profile, else the stored one nearest to it
/// (as Bracken users take the nearest length built).
fn distribution_for(db: &Database, mean: f64) -> Result<Option<std::sync::Arc<abundance::KmerDistribution>>, Error> {
    if mean < db.k() as f64 {
        return Ok(None);
    }
    let distance = |r: u32| (r as f64 - mean).abs();
    let nearest = db.distribution_read_lengths().into_iter().min_by(|&a, &b| distance(a).total_cmp(&distance(b)));
    if let Some(r) = nearest.filter(|&r| distance(r) <= 0.05 * mean) {
        return db.kmer_distribution(r);
    }
    match db.kmer_distribution(mean.round() as u32)? {
        Some(d) => Ok(Some(d)),
        None => nearest.map_or(Ok(None), |r| db.kmer_distribution(r)),
    }
}

/// The results table from per-taxon read counts (indexed by flat index).
fn results_table(
    db: &Database,
    readcount: &[u64],
    n_reads: u64,
    report: &KrakenReport,
    dist: Option<&abundance::KmerDistribution>,
    opts: &ClassifyOptions,
) -> ClassificationResults {
    let taxonomy = db.taxonomy();
    let mut with_children = readcount.to_vec();
    for i in (1..taxonomy.len()).rev() {
        let p = taxonomy.parent(i as u32).expect("not the root") as usize;
        with_children[p] += with_children[i];
    }
    let present: Vec<u32> = (0..taxonomy.len() as u32).filter(|&i| with_children[i as usize] > 0).collect();
    let is_species = |i: u32| taxonomy.rank(i) == "species";
    // Genome-copy abundance needs every species' genome length; an unknown one would make the
    // others' shares wrong, so then there is none.
    let known = present.iter().filter(|&&i| is_species(i)).all(|&i| db.genome_len(i) > 0);
    let density = |i: u32| with_children[i as usize] as f64 / db.genome_len(i) as f64;
    let total: f64 = if known { present.iter().filter(|&&i| is_species(i)).map(|&i| density(i)).sum() } else { 0.0 };
    // Genome-copy abundance of each species, summed up the tree: a genus's share is that of its
    // species, the root's is 1 (the real service's `abundance_w_children`).
    let mut abundance = vec![None::<f64>; taxonomy.len()];
    if total > 0.0 {
        for &i in present.iter().filter(|&&i| is_species(i)) {
            abundance[i as usize] = Some(density(i) / total);
        }
    }
    // Parents come before children: whether a taxon sits below a species (a strain).
    let mut below_species = vec![false; taxonomy.len()];
    for i in 1..taxonomy.len() {
        let p = taxonomy.parent(i as u32).expect("not the root");
        below_species[i] = is_species(p) || below_species[p as usize];
    }
    let mut abundance_w_children = abundance.clone();
    for i in (1..taxonomy.len()).rev() {
        let p = taxonomy.parent(i as u32).expect("not the root") as usize;
        if let Some(a) = abundance_w_children[i].filter(|_| !below_species[i]) {
            *abundance_w_children[p].get_or_insert(0.0) += a;
        }
    }
    let mut reestimated = vec![None; taxonomy.len()];
    if let Some(dist) = dist {
        let codes = taxonomy.rank_codes();
        for level in [b'S', b'G'] {
            let est = abundance::reestimate(taxonomy, &codes, report.direct(), dist, level, opts.reestimate_threshold);
            let sum: f64 = est.iter().map(|e| e.1).sum();
            if sum > 0.0 {
                for (i, e) in est {
                    reestimated[i as usize] = Some(e / sum);
                }
            }
        }
    }
    let mut table: Vec<TaxonRow> = present
        .iter()
        .map(|&i| TaxonRow {
            tax_id: taxonomy.tax_id(i).to_string(),
            name: taxonomy.name(i).to_owned(),
            rank: taxonomy.rank(i).to_owned(),
            parent_tax_id: taxonomy.parent(i).map(|p| taxonomy.tax_id(p).to_string()),
            readcount: readcount[i as usize],
            readcount_w_children: with_children[i as usize],
            abundance: abundance[i as usize],
            abundance_w_children: abundance_w_children[i as usize],
            filtered_readcount: None,
            filtered_readcount_w_children: None,
            reestimated_abundance: reestimated[i as usize],
        })
        .collect();
    table.sort_by(|a, b| {
        b.readcount_w_children.cmp(&a.readcount_w_children).then_with(|| tax_key(&a.tax_id).cmp(&tax_key(&b.tax_id)))
    });
    ClassificationResults { table, n_reads, host_tax_ids: Vec::new() }
}

fn tax_key(id: &str) -> u64 {
    id.parse().unwrap_or(u64::MAX)
}

/// The call for one record.
#[derive(Debug, Clone, Copy)]
struct Call {
    taxon: u32,
    hits: u32,
    len: u32,
    passed: bool,
}

/// A batch of records: sequences back to back, with their end offsets (and their names when
/// Kraken 2's output is written).
#[derive(Default)]
struct Batch {
    seq: Vec<u8>,
    ends: Vec<usize>,
    ids: Vec<u8>,
    id_ends: Vec<usize>,
    calls: Vec<Call>,
    kraken: Vec<Vec<u8>>,
}

impl Batch {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn clear(&mut self) {
        self.seq.clear();
        self.ends.clear();
        self.ids.clear();
        self.id_ends.clear();
        self.calls.clear();
    }

    fn classify(&mut self, db: &Database, opts: &ClassifyOptions, paired: bool, kraken: bool) {
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
        let engine = Engine::new(db);
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

/// One line of Kraken 2's per-read output.
fn kraken_line(
    out: &mut Vec<u8>,
    taxonomy: &Taxonomy,
    id: &[u8],
    paired: bool,
    call: Option<u32>,
    lens: &[u32],
    tokens: &[(u32, u32)],
) {
    let id = match id {
        [rest @ .., b'/', b'1' | b'2'] if paired && id.len() > 2 => rest,
        _ => id,
    };
    out.extend_from_slice(if call.is_some() { b"C\t" } else { b"U\t" });
    out.extend_from_slice(id);
    let tax_id = call.map_or(0, |t| taxonomy.tax_id(t));
    let _ = write!(out, "\t{tax_id}\t");
    for (i, len) in lens.iter().enumerate() {
        if i > 0 {
            out.push(b'|');
        }
        let _ = write!(out, "{len}");
    }
    out.push(b'\t');
    if tokens.is_empty() {
        out.extend_from_slice(b"0:0");
    }
    for (i, &(token, count)) in tokens.iter().enumerate() {
        let last = i + 1 == tokens.len();
        let _ = match token {
            TOKEN_MATE => write!(out, "|:|{}", if last { "" } else { " " }),
            TOKEN_FRAME => write!(out, "-:-{}", if last { "" } else { " " }),
            // Kraken 2 ends an ambiguous run with a space even when it is the last token.
            TOKEN_AMBIGUOUS => write!(out, "A:{count} "),
            v => {
                let ext = if v == 0 { 0 } else { taxonomy.tax_id(v - 1) };
                write!(out, "{ext}:{count}{}", if last { "" } else { " " })
            }
        };
    }
    out.push(b'\n');
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
struct Input {
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
}

impl Input {
    fn open(reads: Reads<'_>, opts: &ClassifyOptions, ids: bool) -> Result<Input, Error> {
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
        })
    }

    fn first_path(&self) -> &Path {
        &self.first.path
    }

    fn paired(&self) -> bool {
        self.mode == Pairing::Interleaved
    }

    /// Replaces `batch` with the next records; an empty batch at the end of the input. A batch
    /// of pairs always holds whole pairs.
    fn fill(&mut self, batch: &mut Batch) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::tests::small;

    fn hits(t: &Taxonomy, kmers: u32, counts: &[(TaxId, u32)]) -> Hits {
        let mut h = Hits::new();
        h.add_kmers(kmers);
        for &(id, n) in counts {
            h.add_hits(t.index_of(id).unwrap(), n);
        }
        h
    }

    #[test]
    fn no_hits_is_unclassified() {
        let t = small();
        assert_eq!(resolve(&hits(&t, 100, &[]), &t, 0.0), 0);
    }

    #[test]
    fn best_root_to_leaf_path_wins() {
        let t = small();
        // E. coli's path holds 10 + 5 (genus) + 2 (family); Shigella's 8 + 2.
        let h = hits(&t, 100, &[(562, 10), (561, 5), (543, 2), (623, 8)]);
        assert_eq!(resolve(&h, &t, 0.0), 562);
        // Hits on an ancestor alone.
        assert_eq!(resolve(&hits(&t, 10, &[(561, 3)]), &t, 0.0), 561);
    }

    #[test]
    fn ties_go_to_the_lowest_common_ancestor() {
        let t = small();
        let h = hits(&t, 100, &[(562, 6), (564, 6)]);
        assert_eq!(resolve(&h, &t, 0.0), 561);
        let h = hits(&t, 100, &[(562, 6), (623, 6), (564, 1)]);
        assert_eq!(resolve(&h, &t, 0.0), 543);
        // Ties with a higher score later are replaced, not merged.
        let h = hits(&t, 100, &[(562, 6), (623, 6), (564, 7)]);
        assert_eq!(resolve(&h, &t, 0.0), 564);
    }

    #[test]
    fn confidence_climbs_towards_the_root() {
        let t = small();
        let h = hits(&t, 100, &[(562, 20), (564, 15), (623, 10)]);
        assert_eq!(resolve(&h, &t, 0.0), 562);
        assert_eq!(resolve(&h, &t, 0.20), 562);
        // E. coli alone is 20%, Escherichia 35%, Enterobacteriaceae 45%.
        assert_eq!(resolve(&h, &t, 0.21), 561);
        assert_eq!(resolve(&h, &t, 0.35), 561);
        assert_eq!(resolve(&h, &t, 0.40), 543);
        assert_eq!(resolve(&h, &t, 0.45), 543);
        // Not even the root holds half of the k-mers.
        assert_eq!(resolve(&h, &t, 0.5), 0);
        // 0.28 * 25 is a little over 7 in floating point: 8 k-mers are needed, as in Kraken 2.
        let h = hits(&t, 25, &[(562, 7)]);
        assert_eq!(resolve(&h, &t, 0.28), 0);
        assert_eq!(resolve(&h, &t, 0.27), 562);
    }

    #[test]
    fn hits_accumulate_per_taxon() {
        let mut h = Hits::new();
        h.add(Some(3));
        h.add(None);
        h.add(Some(3));
        h.add(Some(1));
        assert_eq!((h.kmers(), h.n_hits(), h.hit_groups()), (4, 3, 3));
        assert_eq!(h.counts(), &[(3, 2), (1, 1)]);
        h.add_hits(3, 5);
        h.add_group();
        assert_eq!((h.n_hits(), h.hit_groups()), (8, 4));
        h.clear();
        assert_eq!((h.kmers(), h.n_hits(), h.hit_groups(), h.counts().len()), (0, 0, 0, 0));
    }

    #[test]
    fn kraken_lines_are_formatted_as_kraken2_writes_them() {
        let t = small();
        let coli = t.index_of(562).unwrap() + 1;
        let mut out = Vec::new();
        let tokens = [(coli, 5), (0, 3), (TOKEN_AMBIGUOUS, 2), (TOKEN_MATE, 1), (coli, 4), (TOKEN_AMBIGUOUS, 7)];
        kraken_line(&mut out, &t, b"r1/1", true, Some(coli - 1), &[40, 45], &tokens);
        kraken_line(&mut out, &t, b"r2/1", false, None, &[20], &[]);
        kraken_line(&mut out, &t, b"r3", true, None, &[20, 50], &[(TOKEN_MATE, 1)]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "C\tr1\t562\t40|45\t562:5 0:3 A:2 |:| 562:4 A:7 \nU\tr2/1\t0\t20\t0:0\nU\tr3\t0\t20|50\t|:|\n"
        );
    }
}
