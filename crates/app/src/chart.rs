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
    /// Keep the host's taxa (left out by default, as the `onecodex` library leaves them out).
    #[serde(default)]
    pub show_host: bool,
    /// Taxa called possible contaminants by a controls analysis of the sample's batch: marked
    /// on their bars (at most [`crate::compare::MAX_FLAGGED`] are read).
    #[serde(default)]
    pub flagged: Vec<String>,
    /// Leave the flagged taxa out.
    #[serde(default)]
    pub hide_flagged: bool,
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
            hide_host: !self.show_host,
            flagged: self.flagged.iter().take(crate::compare::MAX_FLAGGED).cloned().collect(),
            hide_flagged: self.hide_flagged,
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

/// What the sample page's sunburst asks for.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct SunburstControls {
    /// The taxon at the centre (none: the root of the taxonomy).
    pub root: Option<String>,
    /// Keep the host's reads.
    pub show_host: bool,
    /// Rings below the centre (default 10, at most [`mgds_plots::MAX_RINGS`]).
    pub rings: Option<usize>,
    /// A title above a saved picture (the sample's name; at most 200 characters are kept).
    pub title: Option<String>,
}

impl SunburstControls {
    fn options(&self) -> mgds_plots::SunburstOptions {
        mgds_plots::SunburstOptions {
            root: self.root.as_deref().map(str::trim).filter(|r| !r.is_empty() && r.len() <= 32).map(String::from),
            hide_host: !self.show_host,
            rings: self.rings.unwrap_or(10).clamp(1, mgds_plots::MAX_RINGS),
            size: 900,
            title: self.title.as_ref().map(|t| t.chars().take(200).collect()),
        }
    }
}

/// A taxon on the way to the sunburst's centre (a breadcrumb).
#[derive(Debug, Clone, Serialize, TS)]
pub struct CrumbView {
    /// Its tax id.
    pub tax_id: String,
    /// Its name.
    pub name: String,
    /// Its rank.
    pub rank: String,
    /// Its reads, with those below it.
    #[ts(type = "number")]
    pub reads: u64,
}

/// The sunburst for the UI.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SunburstView {
    /// The SVG document: each segment a `<path class="segment" data-tax-id>` with a `<title>`;
    /// the centre a `<circle class="centre">`, with its parent's `data-tax-id` when zoomed in.
    pub svg: String,
    /// From the root of the taxonomy to the centre.
    pub path: Vec<CrumbView>,
    /// Segments drawn.
    pub segments: usize,
    /// Taxa left out: too narrow to draw, or deeper than the rings.
    pub left_out: usize,
}

fn sunburst_error(e: mgds_plots::Error) -> CmdError {
    match e {
        mgds_plots::Error::NoData { .. } => CmdError::new("no_data", "This sample has no reads to draw."),
        other => CmdError::new("chart", sentence(&other.to_string())),
    }
}

/// The sunburst of `results` for the sample page.
pub async fn sunburst(results: Arc<ClassificationResults>, controls: &SunburstControls) -> CmdResult<SunburstView> {
    // On screen the page names the sample itself.
    let opts = mgds_plots::SunburstOptions { title: None, ..controls.options() };
    let s = tokio::task::spawn_blocking(move || mgds_plots::sunburst(&results, &opts))
        .await
        .map_err(|e| CmdError::new("chart", format!("The sunburst could not be drawn ({e}).")))?
        .map_err(sunburst_error)?;
    Ok(SunburstView {
        svg: s.svg,
        path: s
            .path
            .into_iter()
            .map(|c| CrumbView { tax_id: c.tax_id, name: c.name, rank: c.rank, reads: c.reads })
            .collect(),
        segments: s.segments,
        left_out: s.left_out,
    })
}

/// The sunburst as a file: `svg`, `png` (at twice the screen's size), or `krona` (Krona's text
/// input, the whole tree whatever the centre).
pub async fn sunburst_file(
    results: Arc<ClassificationResults>,
    controls: &SunburstControls,
    format: &str,
) -> CmdResult<Vec<u8>> {
    let opts = controls.options();
    let format = match format {
        "svg" | "png" | "krona" => format.to_string(),
        other => {
            let shown: String = other.chars().take(20).collect();
            return Err(CmdError::new(
                "invalid",
                format!("There is no sunburst file as {shown:?}: svg, png or krona."),
            ));
        }
    };
    tokio::task::spawn_blocking(move || match format.as_str() {
        "krona" => Ok(mgds_plots::krona_text(&results, opts.hide_host).into_bytes()),
        "png" => mgds_plots::sunburst(&results, &opts).and_then(|s| mgds_plots::svg_to_png(&s.svg, 2.0)),
        _ => mgds_plots::sunburst(&results, &opts).map(|s| s.svg.into_bytes()),
    })
    .await
    .map_err(|e| CmdError::new("chart", format!("The sunburst could not be drawn ({e}).")))?
    .map_err(sunburst_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_map_to_bounded_options() {
        let o = ChartControls {
            rank: "genus".into(),
            top_n: 500,
            metric: "readcount".into(),
            show_host: false,
            flagged: vec![],
            hide_flagged: false,
        }
        .options();
        assert_eq!(o.top_n, MAX_TOP_N);
        assert_eq!(o.metric, Metric::Readcount);
        assert!(o.height <= 1800);
        let o = ChartControls {
            rank: "species".into(),
            top_n: 0,
            metric: "x".into(),
            show_host: true,
            flagged: vec![],
            hide_flagged: false,
        }
        .options();
        assert_eq!((o.top_n, o.metric, o.height), (1, Metric::Share(mgds_api::Measure::GenomeCopies), 320));
        let o = ChartControls {
            rank: "species".into(),
            top_n: 5,
            metric: "reestimated".into(),
            show_host: false,
            flagged: vec![],
            hide_flagged: false,
        }
        .options();
        assert_eq!(o.metric, Metric::Share(mgds_api::Measure::Reestimated));
    }
}
