//! Panel marker detection: which markers of a panel (resistance genes, point mutations, ...) the
//! reads of a sample hold.
//!
//! - [`Panel`] is a panel definition loaded from a folder (`panel.json` plus one FASTA file of
//!   markers per sub-panel, see [`Panel::load`]), with its [`Thresholds`], [`SubPanelDef`]s and
//!   [`MarkerDef`]s, and a [`Panel::digest`] that versions it.
//! - [`detect`] streams a reads file (FASTA/FASTQ, gzipped or not) and returns the API's
//!   [`mgds_api::PanelResults`]; [`Detector`] keeps the panel's indexes for several files and
//!   also returns [`DetectStats`].
//! - Long markers (longer than [`Thresholds::short_max_length`]) are found by alignment: reads
//!   are seeded with k-mers (k = 21) of both strands, aligned without gaps on the best diagonal
//!   of each marker they share seeds with (a local alignment: a read end that leaves the
//!   marker's sequence is clipped; alignments under 80% identity or 40 bases are dropped), and
//!   the aligned bases are piled up per marker position.
//!   `coverage` is the percent of marker bases covered by at least one read, `depth` the mean
//!   depth over all marker bases, and `identity` the percent of covered bases where the majority
//!   of read bases is the marker's base, so scattered sequencing errors in single reads do not
//!   lower it but a real variant does. All three are floored to hundredths, and the status is
//!   decided on the values reported.
//! - Short markers are found whole inside single reads (either strand): `n_reads_exact_match`
//!   counts reads with an exact copy, `n_reads_partial_match` reads whose best copy has 1 to
//!   [`Thresholds::short_max_mismatches`] mismatches (substitutions only; an `N` in a read is a
//!   mismatch).
//! - [`demo`] holds the built-in demo panel; [`simulate`] makes reads for tests and benchmarks.
//!
//! Results do not depend on the number of threads. The engine is built for short reads
//! (Illumina): alignments have no gaps, so reads with many indels (nanopore) align poorly.

mod definition;
pub mod demo;
mod detect;
mod dna;
mod error;
mod long;
mod short;
pub mod simulate;

pub use definition::{MarkerDef, PANEL_FILE, Panel, SubPanelDef, Thresholds};
pub use demo::write_demo_panel;
pub use detect::{DetectOptions, DetectStats, Detection, Detector, detect};
pub use dna::reverse_complement;
pub use error::Error;

/// The engine's name, recorded with each panel job.
pub const ENGINE_NAME: &str = "mgds-panel";

/// The engine's version, recorded with each panel job. It changes whenever the same reads and
/// panel could give different results, and only then, so it is kept apart from the crate's
/// version (which moves with the whole workspace).
pub const ENGINE_VERSION: &str = "1.0.0";
