//! Analysis results: the classification table and panel results.

use serde::{Deserialize, Serialize};
use serde_json::Map;

use crate::null_as_default;

/// `GET /classifications/{id}/results`: one row per taxon, plus read totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClassificationResults {
    /// One entry per taxon with reads.
    #[serde(default, deserialize_with = "null_as_default")]
    pub table: Vec<TaxonRow>,
    /// Reads (or records) in the sample.
    pub n_reads: u64,
    /// Taxa treated as host.
    #[serde(default, deserialize_with = "null_as_default")]
    pub host_tax_ids: Vec<String>,
    /// Median length of the sample's reads (of each mate, for pairs), within 1% (an MGDS
    /// addition). Over [`LONG_READS`] bases, the share of genome copies by bases is the measure
    /// shown first ([`Measure::default_for`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_read_length: Option<u64>,
    /// Read quality control, measured as the engine read the sample (an MGDS addition; absent
    /// from results made before it, and from other services).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qc: Option<crate::ReadQc>,
}

/// Reads whose median length is over this many bases are long reads (Oxford Nanopore, PacBio):
/// their lengths differ between taxa, so shares of reads misstate genome copies, and
/// [`Measure::BasesGenomeCopies`] is shown first.
pub const LONG_READS: u64 = 1_000;

/// One taxon of a classification result table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TaxonRow {
    /// NCBI taxonomy id.
    pub tax_id: String,
    /// Scientific name.
    pub name: String,
    /// Rank (`species`, `genus`, `no rank`, ...).
    pub rank: String,
    /// Parent taxon; null for the root.
    #[serde(default)]
    pub parent_tax_id: Option<String>,
    /// Reads classified at exactly this taxon.
    pub readcount: u64,
    /// Reads classified at this taxon and its descendants.
    pub readcount_w_children: u64,
    /// Estimated relative abundance (species level, primary database only).
    #[serde(default)]
    pub abundance: Option<f64>,
    /// Abundance of this taxon and its descendants, where the service reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abundance_w_children: Option<f64>,
    /// Reads at exactly this taxon that passed the sample-wide filter, where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filtered_readcount: Option<u64>,
    /// Reads at this taxon and its descendants that passed the filter, where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filtered_readcount_w_children: Option<u64>,
    /// Share of the sample's reads re-estimated for this species (or genus) from the database's
    /// k-mer distribution (Bracken): reads placed above the species are shared out to the species
    /// below in proportion to how likely each one's reads are to stop there. Sums to 1 over the
    /// species rows (and, separately, over the genus rows); absent for other ranks, for taxa with
    /// too few reads, and for databases without a k-mer distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reestimated_abundance: Option<f64>,
    /// Share of genome copies counted in bases (an MGDS addition, species rows): the bases of
    /// the reads classified in the species' clade over its mean genome length, as a share of
    /// all species. Where read lengths differ between taxa (long reads), this is the genome
    /// copies; the read-count share ([`TaxonRow::abundance`]) favours taxa with longer reads.
    /// Absent where the database does not know every species' genome length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bases_abundance: Option<f64>,
}

/// What an abundance figure measures. Each answers a different question, so every table, chart
/// and export names the one it shows.
///
/// - [`Measure::Reestimated`]: the share of reads re-estimated per species (Bracken's method):
///   reads placed above species are shared out to the species below. Where the database has a
///   k-mer distribution, this is the figure shown first.
/// - [`Measure::GenomeCopies`]: the share of genome copies: a species' reads over its mean genome
///   length, as a share of all species. A 48 kbp phage with 3% of the reads can be most of the
///   genome copies.
/// - [`Measure::BasesGenomeCopies`]: the share of genome copies counted in bases: a species'
///   classified bases over its mean genome length. For long reads, whose lengths differ between
///   taxa, this is the figure shown first.
/// - [`Measure::ReadShare`]: reads of the taxon and below as a share of all the sample's reads
///   (unclassified reads included), as Kraken 2's report gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// `reestimated_abundance`.
    Reestimated,
    /// `abundance`.
    GenomeCopies,
    /// `bases_abundance`.
    BasesGenomeCopies,
    /// `readcount_w_children / n_reads`.
    ReadShare,
}

impl Measure {
    /// Every measure, in the order of preference for a default (for short reads; see
    /// [`Measure::default_for`]).
    pub const ALL: [Measure; 4] =
        [Measure::Reestimated, Measure::GenomeCopies, Measure::BasesGenomeCopies, Measure::ReadShare];

    /// The name used in options, CSV headers and JSON (`reestimated`, `genome_copies`,
    /// `bases_genome_copies`, `read_share`).
    pub fn key(self) -> &'static str {
        match self {
            Measure::Reestimated => "reestimated",
            Measure::GenomeCopies => "genome_copies",
            Measure::BasesGenomeCopies => "bases_genome_copies",
            Measure::ReadShare => "read_share",
        }
    }

    /// The measure named `key` ([`Measure::key`]; `abundance` and `bases_abundance` are the
    /// genome-copy shares by the fields' names in the results).
    pub fn from_key(key: &str) -> Option<Measure> {
        match key {
            "reestimated" | "reestimated_abundance" => Some(Measure::Reestimated),
            "genome_copies" | "abundance" => Some(Measure::GenomeCopies),
            "bases_genome_copies" | "bases_abundance" => Some(Measure::BasesGenomeCopies),
            "read_share" => Some(Measure::ReadShare),
            _ => None,
        }
    }

    /// A short label for a heading or an axis.
    pub fn label(self) -> &'static str {
        match self {
            Measure::Reestimated => "Re-estimated abundance",
            Measure::GenomeCopies => "Share of genome copies",
            Measure::BasesGenomeCopies => "Share of genome copies, by bases",
            Measure::ReadShare => "Share of reads",
        }
    }

    /// One sentence saying how the figure is made.
    pub fn explanation(self) -> &'static str {
        match self {
            Measure::Reestimated => {
                "share of reads per species after reads placed above species are shared out to the species below (Bracken's method, from the database's k-mer distribution)"
            }
            Measure::GenomeCopies => {
                "share of genome copies: each species' reads over its mean genome length, as a share of all species"
            }
            Measure::BasesGenomeCopies => {
                "share of genome copies by bases: each species' classified bases over its mean genome length, as a share of all species (for long reads, whose lengths differ between taxa)"
            }
            Measure::ReadShare => {
                "reads of the taxon and below as a share of all reads in the sample, unclassified reads included"
            }
        }
    }

    /// The row's value as a fraction (0-1), where the results carry it. Re-estimated and
    /// genome-copy abundance are given on species rows (re-estimated also on genus rows); the
    /// share of reads on every row.
    pub fn value(self, row: &TaxonRow, n_reads: u64) -> Option<f64> {
        let v = match self {
            Measure::Reestimated => row.reestimated_abundance,
            Measure::GenomeCopies => row.abundance,
            Measure::BasesGenomeCopies => row.bases_abundance,
            Measure::ReadShare => (n_reads > 0).then(|| row.readcount_w_children as f64 / n_reads as f64),
        };
        v.filter(|v| v.is_finite())
    }

    /// Whether any row of `results` carries this measure.
    pub fn available(self, results: &ClassificationResults) -> bool {
        results.table.iter().any(|r| self.value(r, results.n_reads).is_some())
    }

    /// The measure to show first. For long reads (median length over [`LONG_READS`]) the share
    /// of genome copies by bases where the results carry it; otherwise re-estimated abundance,
    /// else the share of genome copies, else (by bases), else the share of reads.
    pub fn default_for(results: &ClassificationResults) -> Measure {
        if results.median_read_length.is_some_and(|m| m > LONG_READS) && Measure::BasesGenomeCopies.available(results) {
            return Measure::BasesGenomeCopies;
        }
        Measure::ALL.into_iter().find(|m| m.available(results)).unwrap_or(Measure::ReadShare)
    }
}

/// `GET /panels/{id}/results` (experimental format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PanelResults {
    /// The panel's name.
    pub panel_name: String,
    /// Sub-panels by name.
    pub panel_results: Map<String, serde_json::Value>,
}

/// One sub-panel of [`PanelResults`]: a description and its markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubPanel {
    /// What the sub-panel detects.
    #[serde(default)]
    pub description: String,
    /// Its markers.
    #[serde(default, deserialize_with = "null_as_default")]
    pub markers: Vec<Marker>,
}

/// Whether a marker was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum MarkerStatus {
    /// Found at the panel's "present" thresholds.
    Present,
    /// Found at the lower "probable" thresholds.
    Probable,
    /// Not found.
    Absent,
}

/// One marker of a panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Marker {
    /// Marker sequence name.
    pub name: String,
    /// What it marks.
    #[serde(default)]
    pub description: String,
    /// Whether it was found.
    pub status: MarkerStatus,
    /// Marker sequence length.
    pub length: u64,
    /// Percent identity (long markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<f64>,
    /// Percent of the marker covered (long markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Depth of coverage (long markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<f64>,
    /// Reads matching exactly (short markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_reads_exact_match: Option<u64>,
    /// Reads matching within the panel's SNP allowance (short markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_reads_partial_match: Option<u64>,
}

/// One output file of an analysis (`GET /analyses/{id}/file_details`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileDetail {
    /// The file's name.
    pub filename: String,
    /// Where it goes under a download folder.
    pub filepath: String,
    /// Its size in bytes.
    pub size: u64,
    /// A pre-signed, expiring address to download it from.
    pub url: String,
}

/// The output files of an analysis (`GET /analyses/{id}/file_details`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileDetails {
    /// The files; none for an analysis whose only output is its results.
    pub files: Vec<FileDetail>,
}
