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
}

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
