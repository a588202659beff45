//! `mgds compare`: samples side by side, as the app's comparison view draws them: stacked bars
//! or a heatmap (SVG, PNG) and the tidy table behind them (CSV, TSV).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use mgds_api::{ClassificationResults, Measure};
use mgds_plots::{ChartSize, CompareOptions, Compared, Metric};

use crate::connect::Ctx;

/// Options of `mgds compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// The samples (ids), 2 to 500; each is compared by its primary classification.
    #[arg(required = true, num_args = 1..)]
    pub samples: Vec<String>,
    /// The rank compared: species, genus, family, ...
    #[arg(long, default_value = "species")]
    pub rank: String,
    /// How many taxa get their own column (the most abundant across the samples); the rest are
    /// summed into "Other".
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// The value compared [default: re-estimated abundance where every sample's results carry
    /// it, else the share of genome copies, else the share of reads].
    #[arg(long, value_parser = ["reestimated", "genome_copies", "read_share", "readcount"])]
    pub measure: Option<String>,
    /// Draw a heatmap (samples by taxa) instead of stacked bars.
    #[arg(long)]
    pub heatmap: bool,
    /// Cluster the heatmap's rows and columns (Bray–Curtis dissimilarity, average linkage).
    #[arg(long, requires = "heatmap")]
    pub cluster: bool,
    /// Label each sample by this metadata field (name, external_sample_id, platform, or a
    /// custom field) instead of its file name.
    #[arg(long, value_name = "FIELD")]
    pub label: Option<String>,
    /// Order the samples by this metadata field (as --label) instead of as given.
    #[arg(long, value_name = "FIELD", conflicts_with = "cluster")]
    pub order_by: Option<String>,
    /// Keep the host's reads (left out by default).
    #[arg(long)]
    pub show_host: bool,
    /// Add each sample's unclassified reads as a column (for reads and the share of reads).
    #[arg(long)]
    pub show_unclassified: bool,
    /// Write the chart as SVG here.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the chart as PNG here.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// The PNG's resolution.
    #[arg(long, default_value_t = 150, requires = "png")]
    pub dpi: u32,
    /// The chart's width in pixels (at 96 dpi).
    #[arg(long, default_value_t = 1100)]
    pub width: u32,
    /// Write the numbers behind the chart as CSV here (sample, taxon, tax_id, rank, reads, the
    /// measure); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The same as tab-separated values.
    #[arg(long, value_name = "FILE")]
    pub tsv: Option<PathBuf>,
}

/// Requests to the service at once while fetching results.
const AT_ONCE: usize = 8;

/// Runs `mgds compare`.
pub async fn run(ctx: &Ctx, args: CompareArgs) -> Result<()> {
    if !(2..=500).contains(&args.samples.len()) {
        bail!("compare 2 to 500 samples ({} given)", args.samples.len());
    }
    let client = &ctx.client;
    let fields: Vec<String> = args.label.iter().chain(&args.order_by).cloned().collect();
    let total = args.samples.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    // Each sample, its label and sort key, and its classification, fetched a few at a time.
    let fetched: Vec<(String, Vec<Option<String>>, ClassificationResults)> = futures::stream::iter(args.samples.iter())
        .map(|id| {
            let (fields, done) = (&fields, &done);
            async move {
                let sample = client.samples().get(id.as_str()).await.with_context(|| format!("sample {id}"))?;
                let classification = sample
                    .primary_classification
                    .as_ref()
                    .with_context(|| format!("sample {id} has no classification to compare"))?;
                // A classification still running is waited for (on the local profile, this
                // command's own service runs it meanwhile).
                let analysis = client.analyses().get(classification.id()).await?;
                if !analysis.complete {
                    eprintln!("waiting for the classification of sample {id} to finish");
                    let done = client.jobs().wait(classification.id()).send().await?;
                    if !done.success {
                        let why = done.error_msg.unwrap_or_default();
                        bail!("the classification of sample {id} failed, so it cannot be compared: {why}");
                    }
                } else if !analysis.success {
                    let why = analysis.error_msg.unwrap_or_default();
                    bail!("the classification of sample {id} failed, so it cannot be compared: {why}");
                }
                let results = client
                    .classifications()
                    .results(classification.id())
                    .await
                    .with_context(|| format!("the results of sample {id}'s classification"))?;
                let mut values = Vec::new();
                if !fields.is_empty() {
                    let meta = match &sample.metadata {
                        Some(m) => Some(client.metadata().get(m.id()).await?),
                        None => None,
                    };
                    for f in fields {
                        values.push(meta.as_ref().and_then(|m| m.field_text(f)));
                    }
                }
                let name = sample.filename.clone().unwrap_or_else(|| id.clone());
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if n % 25 == 0 || n == total {
                    eprintln!("fetched {n} of {total} classifications");
                }
                Ok::<_, anyhow::Error>((name, values, results))
            }
        })
        .buffered(AT_ONCE)
        .try_collect()
        .await?;

    let labels: Vec<String> = fetched
        .iter()
        .map(|(name, values, _)| match &args.label {
            Some(f) => values[0].clone().unwrap_or_else(|| format!("{name} (no {f})")),
            None => name.clone(),
        })
        .collect();
    let order: Vec<usize> = match &args.order_by {
        Some(_) => {
            mgds_plots::order_by_keys(&fetched.iter().map(|(_, v, _)| v.last().cloned().flatten()).collect::<Vec<_>>())
        }
        None => (0..fetched.len()).collect(),
    };
    let rows: Vec<(&str, &ClassificationResults)> =
        order.iter().map(|&i| (labels[i].as_str(), &fetched[i].2)).collect();
    let metric = match args.measure.as_deref() {
        Some("readcount") => Metric::Readcount,
        Some(key) => Metric::Share(Measure::from_key(key).context("a measure")?),
        None => mgds_plots::default_metric(rows.iter().map(|(_, r)| *r)),
    };
    if let Metric::Share(m) = metric
        && let Some((label, _)) = rows.iter().find(|(_, r)| !m.available(r))
    {
        bail!("{label} has no {} in its results; choose another --measure", m.label().to_lowercase());
    }
    let samples: Vec<Compared> = rows.iter().map(|&(label, results)| Compared { label, results }).collect();
    let opts = CompareOptions {
        rank: args.rank.clone(),
        top_n: args.top,
        metric,
        hide_host: !args.show_host,
        show_unclassified: args.show_unclassified,
    };
    let mut comparison = mgds_plots::compare(&samples, &opts)?;
    if args.cluster {
        let rows = comparison.clustered_samples();
        let columns = comparison.clustered_columns();
        comparison = comparison.with_sample_order(&rows).with_column_order(&columns);
    }
    let size = ChartSize { width: args.width, height: None };
    let chart = || {
        if args.heatmap {
            mgds_plots::heatmap(&comparison, &size, args.cluster)
        } else {
            mgds_plots::stacked_bars(&comparison, &size)
        }
    };
    let mut wrote = false;
    if let Some(path) = &args.svg {
        std::fs::write(path, chart()?).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        wrote = true;
    }
    if let Some(path) = &args.png {
        let png = mgds_plots::svg_to_png(&chart()?, args.dpi as f32 / 96.0)?;
        std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        wrote = true;
    }
    for (path, delimiter) in [(&args.csv, b','), (&args.tsv, b'\t')] {
        let Some(path) = path else { continue };
        if path.as_os_str() == "-" {
            comparison.write_table(std::io::stdout().lock(), delimiter)?;
        } else {
            let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            comparison.write_table(std::io::BufWriter::new(file), delimiter)?;
            eprintln!("wrote {}", path.display());
        }
        wrote = true;
    }
    if !wrote {
        // Nothing asked for: the numbers, for a terminal or a pipe.
        comparison.write_table(std::io::stdout().lock(), b',')?;
    }
    eprintln!("{}", comparison.notes.join("; "));
    Ok(())
}
