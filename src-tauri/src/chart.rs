//! The abundance chart of a classification, drawn by `mgds-plots`, and its export.

use mgds_plots::{AbundanceChartOptions, Metric};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, State};
use ts_rs::TS;

use crate::dialogs::{ask_save_path, write_file};
use crate::error::{CmdError, CmdResult, sentence};
use crate::results::ResultsCache;
use crate::session::Session;

/// The chart controls as the UI sends them.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ChartControls {
    /// Rank of the bars.
    pub rank: String,
    /// Taxa with their own bar; the rest become "Other".
    pub top_n: usize,
    /// `reestimated`, `genome_copies`, `read_share` (see `mgds_api::Measure`) or `readcount`.
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

fn plot_error(e: mgds_plots::Error, rank: &str) -> CmdError {
    match e {
        mgds_plots::Error::NoData { .. } => CmdError::new(
            "no_data",
            format!("No taxa were found at the rank “{rank}” in this sample. Choose another rank above the chart."),
        ),
        other => CmdError::new("chart", sentence(&other.to_string())),
    }
}

/// The abundance chart of classification `id`.
#[tauri::command]
pub async fn abundance_chart(
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: ChartControls,
) -> CmdResult<ChartView> {
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    let opts = options.options();
    let chart = tokio::task::spawn_blocking(move || mgds_plots::abundance_bars(&results, &opts))
        .await
        .map_err(|e| CmdError::new("chart", format!("The chart could not be drawn ({e}).")))?
        .map_err(|e| plot_error(e, &options.rank))?;
    Ok(ChartView {
        svg: chart.svg,
        bars: chart.bars.into_iter().map(|b| BarView { label: b.label, tax_id: b.tax_id, value: b.value }).collect(),
    })
}

/// Saves the chart as SVG or PNG where the user chooses; answers the path, or `None` if cancelled.
#[tauri::command]
pub async fn export_chart(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: ChartControls,
    format: String,
    file_name: String,
) -> CmdResult<Option<String>> {
    let png = format == "png";
    let filter: (&str, &[&str]) = if png { ("PNG image", &["png"]) } else { ("SVG drawing", &["svg"]) };
    let Some(path) = ask_save_path(&app, "Save the chart", &file_name, filter).await else {
        return Ok(None);
    };
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    let opts = options.options();
    let bytes = tokio::task::spawn_blocking(move || {
        if png {
            // Twice the screen size, so the image stays sharp in slides and reports.
            mgds_plots::abundance_bars(&results, &opts).and_then(|c| mgds_plots::svg_to_png(&c.svg, 2.0))
        } else {
            mgds_plots::abundance_bars(&results, &opts).map(|c| c.svg.into_bytes())
        }
    })
    .await
    .map_err(|e| CmdError::new("chart", format!("The chart could not be drawn ({e}).")))?
    .map_err(|e| plot_error(e, &options.rank))?;
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
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
