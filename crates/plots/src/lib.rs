//! Charts of classification results for the desktop app, drawn with `plotters`.
//!
//! The main entry points are [`abundance_bars`] (an SVG [`Chart`] with hover titles, shown inline
//! by the UI), [`abundance_png`] (the same chart as a PNG, for export) and [`top_taxa`] (the
//! [`Bar`]s behind the chart, without drawing). What to draw is set by [`AbundanceChartOptions`].
//!
//! Text is set in DejaVu Sans, embedded in the binary: plotters measures it through its
//! `ab_glyph` support (to fit the name column and truncate long names) and `resvg` rasterises the
//! SVG with it for PNG output, so nothing depends on the fonts installed on the machine. The SVG
//! names the same family (`DejaVu Sans, sans-serif`).

mod chart;
mod compare;
mod compare_chart;
mod data;
mod diversity_chart;
mod font;
mod qc_chart;
mod raster;
mod sunburst;
mod svg;

pub use chart::{OKABE_ITO, OTHER_COLOUR, abundance_bars, abundance_png, svg_to_png};
pub use compare::{
    CLUSTERING, Column, CompareOptions, Compared, Comparison, cluster_order, compare, default_metric, host_subtree,
    order_by_keys,
};
pub use compare_chart::{ChartSize, heatmap, stacked_bars};
pub use data::{AbundanceChartOptions, Bar, Metric, top_taxa};
pub use diversity_chart::{AlphaChart, AlphaPanel, Ordination, OrdinationPoint, alpha_chart, ordination_chart};
pub use qc_chart::{qc_chart, qc_lines};
pub use sunburst::{Crumb, MAX_RINGS, Sunburst, SunburstOptions, krona_text, sunburst};

/// A chart rendered as SVG, with the data it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// A standalone SVG document (`<svg xmlns=...>...</svg>`); each bar's `<rect>` holds a
    /// `<title>` with the taxon's full name, tax id and value, which browsers show on hover.
    pub svg: String,
    /// The bars, top to bottom (the "Other" bar, if any, last).
    pub bars: Vec<Bar>,
}

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No taxon at the requested rank has a value above zero.
    #[error("no taxa at rank {rank} in these results")]
    NoData {
        /// The rank asked for.
        rank: String,
    },
    /// The requested size is too small to draw on or too large to hold in memory.
    #[error("chart size {width}x{height} is outside {min}..={max} pixels per side")]
    InvalidSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// Smallest allowed side.
        min: u32,
        /// Largest allowed side.
        max: u32,
    },
    /// The drawing library failed (including a failure to load the embedded font).
    #[error("could not draw the chart: {0}")]
    Draw(String),
    /// The SVG could not be rasterised or the PNG could not be encoded.
    #[error("could not make the PNG: {0}")]
    Png(String),
}
