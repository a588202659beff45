//! The engine: a read's k-mers looked up in a database's table ([`Engine`]), counted into
//! [`Hits`], and [`resolve`]d to a taxon.
//!
//! Every step follows Kraken 2 exactly: the scanner's handling of ambiguous bases, the lookup of
//! a minimizer only when it differs from the previous one, hit groups counted on those lookups,
//! the confidence climb. The engine knows the scanner, the table and the number of taxa, not
//! the database they come from ([`crate::Database`] hands them over).

use mgds_formats::TaxId;
use rayon::prelude::*;

use crate::kmer::{AMBIGUOUS, Alphabet, Minimizers, mix64};
use crate::table::TableView;
use crate::taxonomy::Taxonomy;

// Hit-list tokens besides taxon values (flat index + 1, or 0 for no taxon).
pub(crate) const TOKEN_AMBIGUOUS: u32 = u32::MAX;
pub(crate) const TOKEN_MATE: u32 = u32::MAX - 1;
pub(crate) const TOKEN_FRAME: u32 = u32::MAX - 2;
// No minimizer seen yet in a mate (minimizers use at most 62 bits).
const NO_KEY: u64 = u64::MAX - 1;

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
    pub(crate) tokens: Vec<(u32, u32)>,
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
    /// groups"; compared with [`ClassifyOptions::min_hits`](crate::ClassifyOptions::min_hits)).
    pub fn hit_groups(&self) -> u32 {
        self.groups
    }

    /// `(taxon flat index, k-mers)` for each taxon hit.
    pub fn counts(&self) -> &[(u32, u32)] {
        &self.counts
    }
}

/// Lookups against one database: its scanner, its table and the number of its taxa.
#[derive(Clone, Copy)]
pub(crate) struct Engine<'a> {
    scanner: &'a Minimizers,
    view: TableView<'a>,
    min_hash: u64,
    n_taxa: u32,
}

impl<'a> Engine<'a> {
    pub fn with(scanner: &'a Minimizers, view: TableView<'a>, min_hash: u64, n_taxa: u32) -> Engine<'a> {
        Engine { scanner, view, min_hash, n_taxa }
    }

    fn is_protein(&self) -> bool {
        self.scanner.alphabet() == Alphabet::Protein
    }

    /// Scans one mate (all six frames of it for a protein database) into `hits`; returns the
    /// mate's k-mer hits.
    pub(crate) fn count_mate(&self, seq: &[u8], hits: &mut Hits, tokens: bool) -> u32 {
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

pub(crate) fn push_token(tokens: &mut Vec<(u32, u32)>, token: u32, count: u32) {
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
}
