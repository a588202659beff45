//! Read alignment for MGDS: reads aligned to a reference genome with coverage statistics, and
//! functional profiles over an annotated gene catalogue. Alignment is done by minimap2 (2.30,
//! built from source through the `minimap2` crate); this crate reads the files, counts and
//! writes the results.
//!
//! - Alignment: [`align`] maps a reads file to a reference FASTA with [`AlignOptions`] (threads,
//!   [`Preset`]), writes SAM and returns [`AlignmentResults`] with one [`ContigStats`] per
//!   reference sequence.
//! - Functional profile: [`Catalogue::load`] reads a folder with `genes.fa` and
//!   `annotations.tsv`; [`profile`] maps reads to its genes with [`ProfileOptions`] and returns
//!   a [`FunctionalProfile`] of [`FunctionAbundance`] rows, which [`FunctionalProfile::to_tsv`]
//!   turns into the downloadable table and [`FunctionalProfile::to_results_table`] into API v1's
//!   results shape ([`ResultsTable`]).
//! - [`demo`] holds a small catalogue of real resistance genes (four of them in the demo reads) and
//!   [`demo::write_demo_catalogue`] installs it.
//!
//! Every failure is an [`Error`] naming the file (and line) and saying what to do.
//!
//! # Results bodies (JSON)
//!
//! An alignment's results are [`AlignmentResults`] serialised with serde:
//!
//! ```text
//! {"reference_name": "NC_000913.3 Escherichia coli ...", "reference_length": 4641652,
//!  "n_reads": 100000, "n_mapped_reads": 98012, "percent_mapped": 98.012,
//!  "breadth_of_coverage": 0.9987, "mean_depth": 3.17,
//!  "contigs": [{"name": "NC_000913.3", "length": 4641652, "mapped_reads": 98012,
//!               "breadth_of_coverage": 0.9987, "mean_depth": 3.17}]}
//! ```
//!
//! Read counts use primary alignments only; breadth (fraction of bases covered at least once,
//! 0 to 1) and mean depth (aligned bases / length) use primary and supplementary alignments.
//! `percent_mapped` is 0 to 100.
//!
//! A functional profile's results are [`FunctionalProfile`]:
//!
//! ```text
//! {"catalogue_digest": "9f2c...", "n_reads": 10000, "n_mapped_reads": 9650,
//!  "n_assigned_reads": 9300,
//!  "functions": [{"function_id": "EC:1.1.1.1", "name": "alcohol dehydrogenase",
//!                 "read_count": 820, "rpk": 612.4, "cpm": 84974.1}, ...]}
//! ```
//!
//! `rpk` sums, over the genes carrying the function, each gene's reads per kilobase of its
//! length; `cpm` is the function's reads per million reads mapped to the catalogue. A read
//! counts once for every function of its gene, so the rows can add up to more than
//! `n_mapped_reads`.
//!
//! # Reads
//!
//! Reads files are FASTQ or FASTA, plain or gzip (detected from magic bytes). Every read is
//! mapped on its own, as single-end: mates of an interleaved file are not paired up.

mod alignment;
mod catalogue;
mod coverage;
pub mod demo;
mod error;
mod mapper;
mod profile;
mod sam;
mod seqfile;

pub use alignment::{AlignOptions, AlignmentResults, ContigStats, align};
pub use catalogue::{ANNOTATIONS_FILE, Catalogue, Function, GENES_FILE};
pub use demo::write_demo_catalogue;
pub use error::Error;
pub use mapper::{Pairing, Preset};
pub use profile::{
    FunctionAbundance, FunctionalGroup, FunctionalProfile, ProfileOptions, ResultsTable, Table, function_group, profile,
};

/// The engine's name, recorded with each job's results.
pub const ENGINE_NAME: &str = "mgds-align";

/// The engine's version: this crate's version and the bundled minimap2's. A change in either
/// can change results, so both version a job.
pub const ENGINE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+minimap2.2.30");

/// The version of minimap2 that does the aligning.
pub const MINIMAP2_VERSION: &str = sam::MINIMAP2_VERSION;

// `num / den`, 0 when `den` is 0 (an empty reads file or reference has no rate to report).
fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 { 0.0 } else { num as f64 / den as f64 }
}

fn percent(num: u64, den: u64) -> f64 {
    ratio(num, den) * 100.0
}
