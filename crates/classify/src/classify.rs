//! Classification: reads -> minimizers -> table lookups -> hit counts ->
//! [`resolve`](crate::resolve) -> taxon, then the read-level TSV, Kraken 2's per-read output, the
//! report counts and the results table.
//!
//! Every step follows Kraken 2 (2.1.2 and later) exactly, so that a Kraken 2 database read in
//! place gives Kraken 2's call for every read: the scanner's handling of ambiguous bases, the
//! lookup of a minimizer only when it differs from the previous one, hit groups counted on those
//! lookups, the confidence climb and the minimum hit groups.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use mgds_api::ClassificationResults;

use crate::batch::{Batch, Input, NO_TAXON};
use crate::database::Database;
use crate::engine::Hits;
use crate::error::Error;
use crate::options::{ClassifyOptions, Reads};
use crate::output::{READLEVEL_HEADER, readlevel_row};
use crate::report::KrakenReport;
use crate::results::{Counts, distribution_for, results_table};

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

/// Looks up every k-mer of `seq` (one read, or one mate of a pair) in the database and adds
/// them to `hits`.
pub fn count_hits(db: &Database, seq: &[u8], hits: &mut Hits) {
    db.engine().count_mate(seq, hits, false);
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
    let mut counts = Counts { readcount: vec![0; taxonomy.len()], bases: vec![0; taxonomy.len()], ..Counts::default() };
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
            counts.lengths.add(call.len as u64);
            let tax_id = if call.taxon == NO_TAXON {
                0
            } else {
                if call.passed {
                    counts.readcount[call.taxon as usize] += 1;
                    counts.bases[call.taxon as usize] += call.len as u64;
                }
                taxonomy.tax_id(call.taxon)
            };
            if i % unit == 0 {
                let counted = (call.taxon != NO_TAXON && call.passed).then_some(call.taxon);
                report.add(counted);
            }
            if readlevel.is_some() {
                readlevel_row(&mut rows, tax_id, call.hits, call.len, call.passed);
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
    counts.n_reads = n_reads;
    let mut results = results_table(db, &counts, &report, dist.as_deref(), opts);
    let paired = input.paired();
    results.qc = input.qc.as_mut().map(|qc| qc.finish(paired));
    Ok(Classification { results, report, mean_read_length, reestimated_with: dist.map(|d| d.read_length()) })
}
