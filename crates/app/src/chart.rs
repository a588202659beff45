//! The abundance chart of a classification, drawn by `mgds-plots` (on the blocking pool), as the
//! sample page shows it and as it is saved.

use std::sync::Arc;

use mgds_api::ClassificationResults;
use mgds_plots::{AbundanceChartOptions, Metric};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult, sentence};

/// The chart controls as the UI sends them.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ChartControls {
    /// Rank of the bars.
    pub rank: String,
    /// Taxa with their own bar; the rest become "Other".
    pub top_n: usize,
    /// `reestimated`, `genome_copies`, `bases_genome_copies`, `read_share` (see
    /// `mgds_api::Measure`) or `readcount`.
    pub metric: String,
}

/// The most bars a chart may have.
pub const MAX_TOP_N: usize = 50;

impl ChartControls {
    /// The plotting options: the height grows with the number of bars so labels stay readable.
    pub fn options(&self) -> AbundanceChartOptions {
        let top_n = self.top_n.clamp(1, MAX_TOP_N);
        AbundanceChartOptions {
            rank: self.rank.clone(),
            top_n,
            metric: Metric::from_key(&self.metric).unwrap_or_default(),
            width: 960,
            height: (140 + 30 * (top_n as u32 + 1)).clamp(320, 1800),
            title: None,
        }
    }
}

/// One bar, for the UI.
#[derive(Debug, Clone, Serialize, TS)]
pub struct BarView {
    /// Taxon name, or "Other (N taxa)".
    pub label: String,
    /// Tax id (none for "Other").
    pub tax_id: Option<String>,
    /// Percent or reads.
    pub value: f64,
}

/// A chart for the UI: the SVG to show inline, and its bars.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ChartView {
    /// The SVG document.
    pub svg: String,
    /// The bars, top to bottom.
    pub bars: Vec<BarView>,
}

pub(crate) fn plot_error(e: mgds_plots::Error, rank: &str) -> CmdError {
    match e {
        mgds_plots::Error::NoData { .. } => CmdError::new(
            "no_data",
            format!("No taxa were found at the rank “{rank}” in this sample. Choose another rank above the chart."),
        ),
        other => CmdError::new("chart", sentence(&other.to_string())),
    }
}

/// The chart of `results` for the sample page.
pub async fn view(results: Arc<ClassificationResults>, controls: &ChartControls) -> CmdResult<ChartView> {
    let opts = controls.options();
    let chart = tokio::task::spawn_blocking(move || mgds_plots::abundance_bars(&results, &opts))
        .await
        .map_err(|e| CmdError::new("chart", format!("The chart could not be drawn ({e}).")))?
        .map_err(|e| plot_error(e, &controls.rank))?;
    Ok(ChartView {
        svg: chart.svg,
        bars: chart.bars.into_iter().map(|b| BarView { label: b.label, tax_id: b.tax_id, value: b.value }).collect(),
    })
}

/// The chart of `results` as a file: SVG, or PNG at twice the screen's size (sharp in slides
/// and reports).
pub async fn image(results: Arc<ClassificationResults>, controls: &ChartControls, png: bool) -> CmdResult<Vec<u8>> {
    let opts = controls.options();
    tokio::task::spawn_blocking(move || {
        if png {
            mgds_plots::abundance_bars(&results, &opts).and_then(|c| mgds_plots::svg_to_png(&c.svg, 2.0))
        } else {
            mgds_plots::abundance_bars(&results, &opts).map(|c| c.svg.into_bytes())
        }
    })
    .await
    .map_err(|e| CmdError::new("chart", format!("The chart could not be drawn ({e}).")))?
    .map_err(|e| plot_error(e, &controls.rank))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_map_to_bounded_options() {
        let o = ChartControls { rank: "genus".into(), top_n: 500, metric: "readcount".into() }.options();
        assert_eq!(o.top_n, MAX_TOP_N);
        assert_eq!(o.metric, Metric::Readcount);
        assert!(o.height <= 1800);
        let o = ChartControls { rank: "species".into(), top_n: 0, metric: "x".into() }.options();
        assert_eq!((o.top_n, o.metric, o.height), (1, Metric::Share(mgds_api::Measure::GenomeCopies), 320));
        let o = ChartControls { rank: "species".into(), top_n: 5, metric: "reestimated".into() }.options();
        assert_eq!(o.metric, Metric::Share(mgds_api::Measure::Reestimated));
    }
}
