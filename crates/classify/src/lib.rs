//! The MGDS k-mer read classifier: build a reference [`Database`] from FASTA files and an NCBI
//! [`Taxonomy`], then [`classify`] reads against it.
//!
//! Classification is a chain of pure stages: a read's k-mers and their minimizers
//! ([`Minimizers`]) -> index lookups ([`count_hits`], into [`Hits`]) -> [`resolve`] (Kraken 2's
//! root-to-leaf scoring with a confidence threshold) -> a tax id. [`classify`] streams a reads
//! file through these stages on a thread pool, writes the read-level TSV and returns the
//! `mgds_api::ClassificationResults` table.
//!
//! [`build`] writes a database deterministically (the same inputs give the same bytes) from a
//! [`BuildInput`] (with Kraken 2's default spaced seed; [`build_with`] takes [`BuildOptions`]); [`Database::open`] loads it and [`Database::digest`] identifies it. The
//! [`demo`] module carries the small synthetic demo reference data.

mod classify;
mod database;
pub mod demo;
mod error;
mod index;
mod kmer;
mod taxonomy;

pub use classify::{
    ClassifyOptions, DEFAULT_CONFIDENCE, DEFAULT_MIN_HITS, Hits, Pairing, READLEVEL_HEADER, classify, count_hits,
    resolve, resolve_index,
};
pub use database::{
    BuildInput, BuildOptions, BuildReport, Database, FORMAT_VERSION, build, build_with, format_version,
};
pub use error::Error;
pub use kmer::{
    DEFAULT_K, DEFAULT_L, DEFAULT_SPACES, Minimizers, canonical, encode, max_spaces, mix64, pack, reverse_complement,
    spaced_seed_mask,
};
pub use mgds_formats::TaxId;
pub use taxonomy::{ROOT_TAX_ID, Taxonomy};

/// The engine's name, recorded with every classification job.
pub const ENGINE_NAME: &str = "mgds-classify";

/// The engine's version (the crate version), recorded with every classification job.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
