//! The file formats MGDS reads and writes beside the API's JSON: sequence files, read-level
//! results, panel results, and helpers over classification results.
//!
//! - Sequence files: [`Reader`] streams FASTA/FASTQ [`Record`]s (each keeps its raw bytes so it
//!   can be copied byte-for-byte) out of any `BufRead`; [`open`] and [`decompress`] detect the
//!   [`Compression`] from magic bytes; [`sniff`] tells a file's [`Format`] cheaply and
//!   [`validate`] makes one streaming pass that yields a [`Summary`].
//! - Paired-end files: [`group_paths`] turns a list of files into [`FileGroup`]s (pairs with the
//!   [`PairReason`] they were paired for, and singles); [`check_pair`] and [`interleave`] stream a
//!   pair in lockstep.
//! - Read-level results: [`ReadLevelReader`] reads the classification's TSV by column name into a
//!   reused [`ReadLevelRecord`], or lends each row as a [`ReadLevelRow`] without copying
//!   ([`ReadLevelReader::for_each_row`]).
//! - Subset reads: [`subset_reads`] writes the reads assigned to chosen taxa, with the semantics
//!   of `onecodex scripts subset_reads` ([`SubsetOptions`], [`SubsetInput`], [`PairMode`]).
//! - Read lengths: [`LengthHistogram`], bounded (exact below 256 bases, within 1% above).
//! - Read quality control: [`QcCounter`] counts records as a reader streams them and sums them up
//!   as `mgds_api::ReadQc` (lengths, N50, qualities by position, GC, N), judged on the thresholds.
//! - Panel results: [`read_panel_results`] and [`sub_panels`] over `mgds_api::PanelResults`.
//! - Classification helpers: [`TaxTree`] (parents, descendants) and [`species_abundances`].
//!
//! Everything is synchronous; async callers use `spawn_blocking`. Memory stays flat whatever the
//! file size: records are read one at a time into buffers the caller reuses. Every failure is an
//! [`Error`] whose message names the file, the line and the record, and says what to do.

mod compression;
mod error;
mod fastx;
mod lengths;
mod output;
mod pairs;
mod panel;
mod qc;
mod readlevel;
mod subset;
mod taxonomy;
mod validate;

pub use compression::{Compression, decompress, open, open_counted};
pub use error::{Error, ParseError, ParseErrorKind};
pub use fastx::{Format, MAX_LINE_LEN, Mate, Reader, Record, Records, base_id, mate_from_header};
pub use lengths::{LENGTH_BUCKETS, LengthHistogram};
pub use output::OutputCompression;
pub use pairs::{
    FileGroup, NameMate, PairReason, PairSummary, SingleReason, check_pair, group_paths, group_paths_by, interleave,
    interleave_into, interleave_limited, interleaved_name, mate_from_file_name,
};
pub use panel::{SubPanels, parse_panel_results, read_panel_results, sub_panels};
pub use qc::QcCounter;
pub use readlevel::{Columns, ReadLevelReader, ReadLevelRecord, ReadLevelRow};
pub use subset::{
    PairMode, SubsetInput, SubsetOptions, SubsetOutput, SubsetReport, filtered_file_name, subset_reads, subset_stream,
};
pub use taxonomy::{TaxId, TaxTree, parse_tax_id, species_abundances};
pub use validate::{QualityEncoding, ReadPairing, Sniffed, Summary, sniff, validate, validate_reader};
