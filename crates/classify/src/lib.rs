//! The MGDS k-mer read classifier: build a reference [`Database`] from FASTA files and an NCBI
//! [`Taxonomy`], or open a Kraken 2 database folder in place ([`Kraken2Database`]), then
//! [`classify`] reads against either.
//!
//! Classification is a chain of pure stages, each as Kraken 2 does it, so that a Kraken 2
//! database gives Kraken 2's call for every read: a read's k-mers and their minimizers
//! ([`Minimizers`]) -> lookups in a compact table of 32-bit cells ([`count_hits`], into
//! [`Hits`]) -> [`resolve`] (root-to-leaf scoring with a confidence threshold) -> a tax id.
//! [`classify_reads`] streams reads (one file, interleaved, or two files of mates) through these
//! stages on a thread pool, writes the read-level TSV and Kraken 2's per-read output, and returns
//! the `mgds_api::ClassificationResults` table and the counts of a Kraken 2 report
//! ([`KrakenReport`]).
//!
//! Results carry two abundance estimates besides read counts: genome copies (reads over the mean
//! length of the species' reference genomes, [`genomes`]) and reads re-estimated from the
//! database's k-mer distribution ([`abundance`], Bracken's method).
//!
//! [`build`] writes a database deterministically (the same inputs give the same bytes) from a
//! [`BuildInput`]; [`Database::open`] maps it (or a Kraken 2 folder) and [`Database::digest`]
//! identifies it. The [`demo`] module carries the small demo reference data (fragments of real genomes).
//!
//! The modules form a one-way stack, each using only those below it (bottom to top):
//! 1. foundations: `error`, `mmap`, `atomic` (files renamed into place when complete), `kmer`,
//!    `table`, `taxonomy`, `genomes`, `library` (reference files read with progress);
//! 2. `engine`: the lookups of a read's k-mers into [`Hits`], and [`resolve`];
//! 3. `distribution`: the k-mer profile and k-mer distributions, and their files;
//! 4. the database: `database` (the [`Database`] type and our own file format), then `kraken2`
//!    (a Kraken 2 folder read into a `Database`), then `open` ([`Database::open`], either kind);
//! 5. `build`, and `demo` (its inputs);
//! 6. `options` ([`ClassifyOptions`]) and `output` (read-level rows, Kraken 2's per-read lines);
//! 7. `batch`: reads streamed in batches and classified on the thread pool;
//! 8. the summaries: `report` ([`KrakenReport`]), `abundance` (re-estimation), `results` (the
//!    results table);
//! 9. `classify`: [`classify`], [`classify_reads`] and [`count_hits`], which put them together.

pub mod abundance;
mod atomic;
mod batch;
mod build;
mod classify;
mod database;
pub mod demo;
mod distribution;
mod engine;
mod error;
pub mod genomes;
mod kmer;
mod kraken2;
mod library;
mod mmap;
mod open;
mod options;
mod output;
mod report;
mod results;
mod table;
mod taxonomy;

pub use abundance::{KmerDistribution, Level, reestimate_reads};
pub use build::{BuildInput, BuildOptions, BuildReport, build, build_with, build_with_progress};
pub use classify::{Classification, Outputs, classify, classify_reads, count_hits};
pub use database::{Database, DatabaseKind, FORMAT_VERSION, OpenOptions, format_version};
pub use engine::{Hits, resolve, resolve_index};
pub use error::Error;
pub use genomes::{Genome, SpeciesGenomes};
pub use kmer::{
    AMBIGUOUS, Alphabet, DEFAULT_K, DEFAULT_L, DEFAULT_SPACES, Minimizers, canonical, encode, max_spaces, mix64, pack,
    reverse_complement, spaced_seed_mask,
};
pub use kraken2::{Kraken2Database, Kraken2Options, PrepareOptions, PrepareReport};
pub use library::{BuildProgress, BuildStage, DEFAULT_READ_LENGTH};
pub use mgds_formats::TaxId;
pub use options::{
    ClassifyOptions, DEFAULT_CONFIDENCE, DEFAULT_MIN_HITS, DEFAULT_REESTIMATE_THRESHOLD, Pairing, Reads,
};
pub use output::READLEVEL_HEADER;
pub use report::KrakenReport;
pub use taxonomy::{ROOT_TAX_ID, Taxonomy};

/// The engine's name, recorded with every classification job.
pub const ENGINE_NAME: &str = "mgds-classify";

/// The engine's version (the crate version), recorded with every classification job.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
