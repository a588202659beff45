//! `mgds compare`: samples side by side, as the app's comparison view draws them: stacked bars
//! or a heatmap (SVG, PNG) and the tidy table behind them (CSV, TSV).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use mgds_app::compare::{CompareCache, CompareProgress, CompareRequest, Source};
use mgds_app::diversity::DiversityRequest;

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
    /// The value compared [default: for samples of long reads (median over 1,000 bases) the
    /// share of genome copies by bases; otherwise re-estimated abundance where every sample's
    /// results carry it, else the share of genome copies, else the share of reads].
    #[arg(long, value_parser = ["reestimated", "genome_copies", "bases_genome_copies", "read_share", "readcount"])]
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
    /// The PNG's resolution (of --png, or of a chart file ending in .png).
    #[arg(long, default_value_t = 150)]
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
    /// Print the samples' diversity instead of their abundances: alpha diversity (observed
    /// taxa, Shannon, Simpson, Chao1, from the reads at the rank), the principal coordinates of
    /// a beta diversity (--metric, on --measure), and with --group-by the rank tests and a
    /// PERMANOVA, each with its method.
    #[arg(long)]
    pub diversity: bool,
    /// The beta diversity of --diversity.
    #[arg(long, default_value = "braycurtis", value_parser = ["braycurtis", "jaccard", "weighted_unifrac", "unweighted_unifrac", "aitchison"])]
    pub metric: String,
    /// Group the samples by this metadata field for the tests of --diversity.
    #[arg(long, value_name = "FIELD")]
    pub group_by: Option<String>,
    /// PERMANOVA's permutations (at most 9,999).
    #[arg(long, default_value_t = mgds_app::diversity::PERMUTATIONS)]
    pub permutations: usize,
    /// The seed of PERMANOVA's permutations (numpy's default_rng, as scikit-bio: the same seed
    /// gives scikit-bio's p-value).
    #[arg(long, default_value_t = mgds_app::diversity::SEED)]
    pub seed: u64,
    /// Write the alpha diversity as CSV here (one row per sample; tests and methods as `#`
    /// lines); `-` for stdout. Implies --diversity.
    #[arg(long, value_name = "FILE")]
    pub alpha_csv: Option<PathBuf>,
    /// Write the beta diversity's distance matrix as CSV here; `-` for stdout. Implies
    /// --diversity.
    #[arg(long, value_name = "FILE")]
    pub distances_csv: Option<PathBuf>,
    /// Draw the alpha diversity here (a panel per measure, a strip of points per --group-by
    /// group, the tests written on it), as SVG or PNG by the file's extension. Implies
    /// --diversity.
    #[arg(long, value_name = "FILE")]
    pub alpha_chart: Option<PathBuf>,
    /// Draw the principal coordinates here (PC1 and PC2, points coloured by --group-by, the
    /// PERMANOVA and methods written under them), as SVG or PNG by the file's extension.
    /// Implies --diversity.
    #[arg(long, value_name = "FILE")]
    pub ordination_chart: Option<PathBuf>,
    /// Score each taxon as a possible contaminant against the negative controls among the
    /// samples (custom metadata field `control` = negative, blank, ntc, ...), as decontam does,
    /// and print the taxa by score (lowest first).
    #[arg(long, conflicts_with_all = ["diversity", "mark_contaminants", "hide_contaminants"])]
    pub contaminants: bool,
    /// decontam's method for --contaminants; by default combined where every true sample has a
    /// DNA concentration, else prevalence.
    #[arg(long, value_parser = ["prevalence", "frequency", "combined"])]
    pub contaminant_method: Option<String>,
    /// The score below which a taxon is called a contaminant (decontam's default 0.1).
    #[arg(long)]
    pub contaminant_threshold: Option<f64>,
    /// The metadata field holding each sample's DNA concentration (frequency method).
    #[arg(long, value_name = "FIELD")]
    pub concentration_field: Option<String>,
    /// The metadata field whose values are batches (each scored apart).
    #[arg(long, value_name = "FIELD")]
    pub batch_by: Option<String>,
    /// Write the contaminant scores as CSV here (method and notes as `#` lines); `-` for
    /// stdout. Implies --contaminants.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["diversity", "mark_contaminants", "hide_contaminants"])]
    pub contaminants_csv: Option<PathBuf>,
    /// Score the taxa against the negative controls first (as --contaminants), and name the
    /// possible contaminants so on the chart and in the numbers.
    #[arg(long)]
    pub mark_contaminants: bool,
    /// The same, and leave the possible contaminants out of the chart and the numbers.
    #[arg(long, conflicts_with = "mark_contaminants")]
    pub hide_contaminants: bool,
    /// Write a report of the comparison here, as PDF (or HTML for a file ending in .html): the
    /// samples, their read quality, the abundance chart, heatmap and table (--rank, --measure,
    /// --top up to 30), alpha diversity and the ordination (--metric, --group-by with its tests),
    /// and methods; the lab's name and logo on its cover.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "diversity", "contaminants", "contaminants_csv", "svg", "png", "csv", "tsv", "heatmap", "order_by",
        "show_unclassified", "mark_contaminants", "hide_contaminants", "alpha_csv", "distances_csv", "alpha_chart",
        "ordination_chart",
    ])]
    pub report: Option<PathBuf>,
    /// The report's title (default: "Comparison of N samples").
    #[arg(long, requires = "report")]
    pub title: Option<String>,
    /// Keep the report as a document of the service too, to share (mgds documents share).
    #[arg(long, requires = "report")]
    pub keep: bool,
}

/// What the classification results of one run may take in memory (an estimate): enough for
/// 500 samples' results at any rank.
const CACHE_BUDGET: u64 = 512 << 20;

/// Runs `mgds compare`: the same fetching, checks, labels, order, measure and clustering as the
/// app's comparison view (`mgds_app::compare`), so the files it writes are the view's picture.
pub async fn run(ctx: &Ctx, args: CompareArgs) -> Result<()> {
    if !(2..=mgds_app::compare::MAX_SAMPLES).contains(&args.samples.len()) {
        bail!("compare 2 to {} samples ({} given)", mgds_app::compare::MAX_SAMPLES, args.samples.len());
    }
    let client = &ctx.client;
    wait_for_classifications(client, &args.samples).await?;
    if args.diversity
        || args.alpha_csv.is_some()
        || args.distances_csv.is_some()
        || args.alpha_chart.is_some()
        || args.ordination_chart.is_some()
    {
        return diversity(client, &args).await;
    }
    if args.contaminants || args.contaminants_csv.is_some() {
        return contaminants(client, &args).await;
    }
    if let Some(path) = &args.report {
        return report(client, &args, path).await;
    }
    let flagged = if args.mark_contaminants || args.hide_contaminants {
        let cache = CompareCache::with_budget(CACHE_BUDGET);
        let src = Source { client, base_url: "", cache: &cache };
        let v = mgds_app::contamination::prepare(src, &contamination_request(&args), &|_| {}).await?;
        eprintln!("{} of {} taxa are possible contaminants ({})", v.flagged, v.taxa, v.method_label);
        v.flagged_taxa()
    } else {
        Vec::new()
    };
    let req = CompareRequest {
        flagged,
        hide_flagged: args.hide_contaminants,
        samples: args.samples.clone(),
        rank: args.rank.clone(),
        top: args.top,
        measure: args.measure.clone(),
        chart: if args.heatmap { "heatmap" } else { "bars" }.into(),
        cluster: args.cluster,
        label: args.label.clone(),
        order_by: args.order_by.clone(),
        show_host: args.show_host,
        show_unclassified: args.show_unclassified,
    };
    let cache = CompareCache::with_budget(CACHE_BUDGET);
    let src = Source { client, base_url: "", cache: &cache };
    let progress = |p: CompareProgress| {
        if p.done.is_multiple_of(25) || p.done == p.total {
            eprintln!("fetched {} of {} samples", p.done, p.total);
        }
    };
    let compared = mgds_app::compare::prepare(src, &req, &progress).await?;
    for s in compared.skipped() {
        eprintln!("left out {} ({}): {}", s.name, s.id, s.why);
    }
    let mut wrote = false;
    if let Some(path) = &args.svg {
        std::fs::write(path, compared.chart(args.width)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        wrote = true;
    }
    if let Some(path) = &args.png {
        let png = compared.png(args.width, args.dpi)?;
        std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        wrote = true;
    }
    for (path, delimiter) in [(&args.csv, b','), (&args.tsv, b'\t')] {
        let Some(path) = path else { continue };
        if path.as_os_str() == "-" {
            compared.write_table(std::io::stdout().lock(), delimiter)?;
        } else {
            let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            compared.write_table(std::io::BufWriter::new(file), delimiter)?;
            eprintln!("wrote {}", path.display());
        }
        wrote = true;
    }
    if !wrote {
        // Nothing asked for: the numbers, for a terminal or a pipe.
        compared.write_table(std::io::stdout().lock(), b',')?;
    }
    eprintln!("{}", compared.notes().join("; "));
    Ok(())
}

/// `mgds compare --contaminants`: the application's contaminants view
/// (`mgds_app::contamination`), as a table on the terminal or as CSV.
fn contamination_request(args: &CompareArgs) -> mgds_app::contamination::ContaminationRequest {
    mgds_app::contamination::ContaminationRequest {
        samples: args.samples.clone(),
        rank: args.rank.clone(),
        method: args.contaminant_method.clone(),
        threshold: args.contaminant_threshold,
        concentration_field: args.concentration_field.clone(),
        batch_by: args.batch_by.clone(),
        show_host: args.show_host,
    }
}

async fn contaminants(client: &mgds_client::Client, args: &CompareArgs) -> Result<()> {
    let req = contamination_request(args);
    let cache = CompareCache::with_budget(CACHE_BUDGET);
    let src = Source { client, base_url: "", cache: &cache };
    let v = mgds_app::contamination::prepare(src, &req, &|_| {}).await?;
    show_contaminants(&v, args.contaminants_csv.as_deref())
}

/// Prints a contaminants view (a comparison's, or a controls analysis's scores) as a table on
/// the terminal, or writes it as CSV to `csv` (`-`: the terminal).
pub fn show_contaminants(v: &mgds_app::contamination::ContaminationView, csv: Option<&std::path::Path>) -> Result<()> {
    for s in &v.skipped {
        eprintln!("left out {} ({}): {}", s.name, s.id, s.why);
    }
    if let Some(path) = csv {
        if path.as_os_str() == "-" {
            v.write_table(std::io::stdout().lock(), b',')?;
        } else {
            let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            v.write_table(std::io::BufWriter::new(file), b',')?;
            eprintln!("wrote {}", path.display());
        }
        return Ok(());
    }
    let shown = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.4}"));
    println!(
        "{} of {} taxa called contaminants ({}, threshold {}); controls: {}",
        v.flagged,
        v.taxa,
        v.method_label,
        v.threshold,
        v.controls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
    );
    println!(
        "{:<40} {:>8} {:>11} {:>10} {:>11} {:>10}",
        "taxon", "score", "contaminant", "controls", "samples", "prevalence"
    );
    for r in v.rows.iter().take(50) {
        let name: String = r.name.chars().take(40).collect();
        println!(
            "{name:<40} {:>8} {:>11} {:>10} {:>11} {:>10}",
            shown(r.score),
            if r.contaminant { "yes" } else { "no" },
            format!("{}/{}", r.in_controls, v.controls.len()),
            format!("{}/{}", r.in_samples, v.samples.len()),
            shown(r.prevalence)
        );
    }
    if v.rows.len() > 50 {
        println!("… {} more taxa: the CSV lists them all", v.rows.len() - 50);
    }
    for n in &v.notes {
        println!("# {n}");
    }
    Ok(())
}

/// `mgds compare --diversity`: the application's diversity view (`mgds_app::diversity`), as a
/// table on the terminal and as CSV files.
/// `--report`: the comparison's report written (and kept as a document with `--keep`).
async fn report(client: &mgds_client::Client, args: &CompareArgs, path: &std::path::Path) -> Result<()> {
    let format = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("html" | "htm") => "html",
        Some("pdf") | None => "pdf",
        Some(other) => bail!("{}: a report is a .pdf or .html file, not .{other}", path.display()),
    };
    let req = mgds_app::report::ComparisonReportRequest {
        samples: args.samples.clone(),
        rank: args.rank.clone(),
        top: args.top.min(mgds_app::report::MAX_TOP),
        measure: args.measure.clone(),
        metric: Some(args.metric.clone()),
        group_by: args.group_by.clone(),
        label: args.label.clone(),
        permutations: Some(args.permutations),
        seed: Some(args.seed),
        show_host: args.show_host,
        title: args.title.clone(),
    };
    let cache = CompareCache::with_budget(CACHE_BUDGET);
    let base = client.base_url().to_string();
    let src = Source { client, base_url: &base, cache: &cache };
    let (report, skipped, count) = mgds_app::report::comparison_report(src, &req, &|_| {}).await?;
    for s in &skipped {
        eprintln!("left out {} ({}): {}", s.name, s.id, s.why);
    }
    let (bytes, _) = tokio::task::spawn_blocking(move || mgds_app::report::render(&report, format)).await??;
    mgds_app::files::write_file(path, &bytes)?;
    println!("wrote the report of {} samples to {} ({} bytes)", count, path.display(), bytes.len());
    if args.keep {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| mgds_app::report::file_name(&req, count, format));
        let doc = client
            .documents()
            .upload(path)
            .filename(name)
            .send()
            .await
            .context("cannot keep the report as a document")?;
        println!("kept as document {} ({})", doc.uri.rsplit('/').next().unwrap_or_default(), doc.filename);
    }
    Ok(())
}

async fn diversity(client: &mgds_client::Client, args: &CompareArgs) -> Result<()> {
    // A file name that says no picture is refused before any work.
    for path in [&args.alpha_chart, &args.ordination_chart].into_iter().flatten() {
        picture_format(path)?;
    }
    let req = DiversityRequest {
        samples: args.samples.clone(),
        rank: args.rank.clone(),
        measure: args.measure.clone(),
        metric: Some(args.metric.clone()),
        group_by: args.group_by.clone(),
        permutations: Some(args.permutations),
        seed: Some(args.seed),
        show_host: args.show_host,
    };
    let cache = CompareCache::with_budget(CACHE_BUDGET);
    let src = Source { client, base_url: "", cache: &cache };
    let v = mgds_app::diversity::prepare(src, &req, &|_| {}).await?;
    for s in &v.skipped {
        eprintln!("left out {} ({}): {}", s.name, s.id, s.why);
    }
    if args
        .alpha_csv
        .as_ref()
        .zip(args.distances_csv.as_ref())
        .is_some_and(|(a, d)| a.as_os_str() == "-" && d.as_os_str() == "-")
    {
        bail!("--alpha-csv and --distances-csv cannot both write to stdout: name a file for one of them");
    }
    let mut wrote = false;
    for (path, alpha) in [(&args.alpha_csv, true), (&args.distances_csv, false)] {
        let Some(path) = path else { continue };
        let write = |out: &mut dyn std::io::Write| {
            if alpha { v.write_alpha(out, b',') } else { v.write_distances(out, b',') }
        };
        if path.as_os_str() == "-" {
            write(&mut std::io::stdout().lock())?;
        } else {
            let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            write(&mut std::io::BufWriter::new(file))?;
            eprintln!("wrote {}", path.display());
        }
        wrote = true;
    }
    for (path, kind) in [(&args.alpha_chart, "alpha"), (&args.ordination_chart, "ordination")] {
        let Some(path) = path else { continue };
        let format = picture_format(path)?;
        let (bytes, _) = v.file(&format!("{kind}.{format}"), args.width, args.dpi)?;
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        wrote = true;
    }
    if wrote {
        return Ok(());
    }
    let mut out = String::new();
    let width = v.samples.iter().map(|s| s.label.chars().count()).max().unwrap_or(6).clamp(6, 40);
    let group = v.group_by.is_some();
    out.push_str(&format!("{:width$}", "sample"));
    if group {
        out.push_str(&format!("  {:12}", v.group_by.as_deref().unwrap_or_default()));
    }
    for a in &v.alpha {
        out.push_str(&format!("  {:>13}", a.metric));
    }
    let axes = v.ordination.proportion_explained.len().min(2);
    for k in 0..axes {
        out.push_str(&format!("  {:>9}", format!("PC{}", k + 1)));
    }
    out.push('\n');
    for (i, s) in v.samples.iter().enumerate() {
        let label: String = s.label.chars().take(width).collect();
        out.push_str(&format!("{label:width$}"));
        if group {
            let g: String = s.group.as_deref().unwrap_or("—").chars().take(12).collect();
            out.push_str(&format!("  {g:12}"));
        }
        for a in &v.alpha {
            out.push_str(&match a.values[i] {
                Some(x) => format!("  {x:>13.4}"),
                None => format!("  {:>13}", "—"),
            });
        }
        for k in 0..axes {
            out.push_str(&format!("  {:>9.4}", v.ordination.coordinates[i][k]));
        }
        out.push('\n');
    }
    let shares: Vec<String> = v
        .ordination
        .proportion_explained
        .iter()
        .take(3)
        .enumerate()
        .map(|(k, p)| format!("PC{} {:.1}%", k + 1, 100.0 * p))
        .collect();
    out.push_str(&format!("\nPCoA of {} distances: {}\n", v.metric_label, shares.join(", ")));
    for line in v.footer() {
        out.push_str(&format!("{line}\n"));
    }
    print!("{out}");
    Ok(())
}

/// The picture a file's extension asks for: `svg` or `png`.
pub(crate) fn picture_format(path: &std::path::Path) -> Result<&'static str> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => Ok("svg"),
        Some("png") => Ok("png"),
        _ => bail!("{} must end in .svg or .png: its extension says which picture to write", path.display()),
    }
}

/// Waits for the samples' classifications that are still running (on the local profile, this
/// command's own service runs them meanwhile), a few at a time; the comparison then leaves out,
/// with the reason, any sample whose classification failed or was never made.
async fn wait_for_classifications(client: &mgds_client::Client, ids: &[String]) -> Result<()> {
    futures::stream::iter(ids)
        .map(|id| async move {
            let Ok(sample) = client.samples().get(id.as_str()).await else { return Ok(()) };
            let Some(classification) = sample.primary_classification else { return Ok(()) };
            let analysis = client.analyses().get(classification.id()).await?;
            if !analysis.complete {
                eprintln!("waiting for the classification of sample {id} to finish");
                client.jobs().wait(classification.id()).send().await?;
            }
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}
