//! Samples side by side: the comparison view's numbers and its chart, drawn by `mgds-plots`
//! exactly as `mgds compare` draws them (so an export is the picture on the screen), its exports,
//! and the reads of one taxon from the compared samples.
//!
//! Each compared sample's primary classification is fetched once, a few at a time with progress
//! (`compare-progress` events), and kept in a [`CompareCache`] bounded by an estimate of its size
//! in memory, so changing the rank, the number of taxa, the measure, the chart or the labels
//! draws again without asking the service. A sample whose classification is still running,
//! failed or was never made is left out of the chart and named with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use mgds_api::{ClassificationResults, Measure, Metadata};
use mgds_client::Client;
use mgds_plots::{ChartSize, CompareOptions, Compared, Comparison, Metric};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult, sentence};

/// The most samples compared at once.
pub const MAX_SAMPLES: usize = 500;
/// The most taxa with a column of their own.
pub const MAX_TOP: usize = 50;
/// Requests to the service at once while fetching.
const AT_ONCE: usize = 8;
/// What the cached classification results may take in memory (an estimate), by default; the
/// least recently used are dropped past it. `MGDS_COMPARE_CACHE_MB` sets another budget.
const CACHE_BUDGET_MB: u64 = 192;

/// What the comparison view asks for.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct CompareRequest {
    /// The samples (ids), 2 to 500, in the order given.
    pub samples: Vec<String>,
    /// The rank compared: `species`, `genus`, ...
    pub rank: String,
    /// Taxa with a column of their own (1 to 50); the rest are summed into "Other".
    pub top: usize,
    /// `reestimated`, `genome_copies`, `read_share` or `readcount`; none: the best measure every
    /// sample has ([`mgds_plots::default_metric`]).
    pub measure: Option<String>,
    /// `bars` (stacked bars) or `heatmap`.
    pub chart: String,
    /// Heatmap only: cluster samples and taxa ([`mgds_plots::CLUSTERING`]).
    pub cluster: bool,
    /// Label samples by this metadata field (none: by file name).
    pub label: Option<String>,
    /// Order samples by this metadata field (none: as given; ignored when clustering).
    pub order_by: Option<String>,
    /// Keep the host's reads.
    pub show_host: bool,
    /// A column for the unclassified reads (reads and the share of reads only).
    pub show_unclassified: bool,
    /// Taxa (tax ids) marked as possible contaminants by the controls tab
    /// (`crate::contamination`): named so on the chart and in the numbers, at most
    /// [`MAX_FLAGGED`].
    #[serde(default)]
    pub flagged: Vec<String>,
    /// Leave the flagged taxa out.
    #[serde(default)]
    pub hide_flagged: bool,
}

/// The most taxa a comparison marks as possible contaminants (the contaminants view lists at
/// most as many).
pub const MAX_FLAGGED: usize = 2_000;

/// A compared sample, in the order drawn.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ComparedSample {
    /// Its id.
    pub id: String,
    /// Its label on the chart.
    pub label: String,
}

/// A column of the comparison: a taxon, "Other" or the unclassified reads.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ComparedColumn {
    /// Its name on the chart.
    pub label: String,
    /// The taxon's id (none for "Other" and the unclassified reads).
    pub tax_id: Option<String>,
}

/// A measure the view may switch to.
#[derive(Debug, Clone, Serialize, TS)]
pub struct MeasureChoice {
    /// `reestimated`, `genome_copies`, `read_share` or `readcount`.
    pub key: String,
    /// Its name (`Re-estimated abundance`, ...).
    pub label: String,
    /// What it measures, in a sentence.
    pub explanation: String,
}

/// A sample that is not in the chart, and why.
#[derive(Debug, Clone, Serialize, serde::Deserialize, TS)]
pub struct SkippedSample {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Why, in words.
    pub why: String,
}

/// The comparison view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ComparisonView {
    /// The chart (stacked bars or heatmap) as SVG, the same picture the exports write: every
    /// bar segment or cell a `<rect>` with `data-sample` (the row, in `samples`), `data-tax-id`
    /// for a taxon, and a `<title>` naming sample, taxon and value.
    pub svg: String,
    /// The samples, in the order drawn.
    pub samples: Vec<ComparedSample>,
    /// The columns, in the order drawn.
    pub columns: Vec<ComparedColumn>,
    /// `values[sample][column]`: percent for a measure, reads for `readcount`.
    pub values: Vec<Vec<f64>>,
    /// `reads[sample][column]`: reads of the taxon and below.
    #[ts(type = "number[][]")]
    pub reads: Vec<Vec<u64>>,
    /// The rank compared.
    pub rank: String,
    /// The measure shown (a key of `measures`).
    pub measure: String,
    /// The measures every compared sample has, and reads.
    pub measures: Vec<MeasureChoice>,
    /// What the chart leaves out or shows, in words ("host reads hidden", ...).
    pub notes: Vec<String>,
    /// How the heatmap was clustered, when it was.
    pub clustering: Option<String>,
    /// The metadata fields the samples have, for labels and ordering.
    pub fields: Vec<String>,
    /// Samples left out, with why.
    pub skipped: Vec<SkippedSample>,
}

/// Fetching progress, as `compare-progress` events.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CompareProgress {
    /// Samples looked at.
    pub done: usize,
    /// Samples in all.
    pub total: usize,
}

impl crate::events::ShellEvent for CompareProgress {
    const NAME: &'static str = "compare-progress";
}

/// What is known of a compared sample.
#[derive(Debug, Clone)]
pub(crate) struct SampleInfo {
    pub(crate) name: String,
    pub(crate) metadata: Option<Metadata>,
    /// Its primary classification's id, when it has one that finished well.
    pub(crate) ready: Result<String, String>,
}

/// Cached classification results are weighed by an estimate of their size in memory.
#[derive(Clone)]
struct ResultsWeight;

impl quick_cache::Weighter<String, Arc<ClassificationResults>> for ResultsWeight {
    fn weight(&self, _key: &String, r: &Arc<ClassificationResults>) -> u64 {
        let rows: usize = r
            .table
            .iter()
            .map(|t| {
                std::mem::size_of::<mgds_api::TaxonRow>()
                    + t.tax_id.len()
                    + t.name.len()
                    + t.rank.len()
                    + t.parent_tax_id.as_ref().map_or(0, String::len)
            })
            .sum();
        (rows + 64).max(1) as u64
    }
}

/// The samples and classification results the comparison view has fetched (managed state).
pub struct CompareCache {
    results: quick_cache::sync::Cache<String, Arc<ClassificationResults>, ResultsWeight>,
    samples: std::sync::Mutex<std::collections::HashMap<String, SampleInfo>>,
    /// Whether what was learnt of a sample is reused (one person's app); a cache shared by
    /// many people looks at each sample again every time, so that access taken away since is
    /// seen at once, and keeps only classification results (found through that fresh look).
    keeps_samples: bool,
}

impl Default for CompareCache {
    fn default() -> Self {
        let mb = std::env::var("MGDS_COMPARE_CACHE_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(CACHE_BUDGET_MB);
        CompareCache::with_budget(mb << 20)
    }
}

impl CompareCache {
    /// A cache that keeps at most about `bytes` of classification results.
    pub fn with_budget(bytes: u64) -> Self {
        CompareCache {
            results: quick_cache::sync::Cache::with_weighter(MAX_SAMPLES, bytes.max(1), ResultsWeight),
            samples: Default::default(),
            keeps_samples: true,
        }
    }

    /// A cache shared by many people (a service's browsers), with the default budget: results
    /// only, each person's sample lookups made afresh.
    pub fn shared() -> Self {
        CompareCache { keeps_samples: false, ..CompareCache::default() }
    }

    /// Forgets what was fetched (the view's "Refresh", or another service).
    pub fn clear(&self) {
        self.results.clear();
        self.samples.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn sample(&self, key: &str) -> Option<SampleInfo> {
        if !self.keeps_samples {
            return None;
        }
        self.samples.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    fn keep_sample(&self, key: String, info: SampleInfo) {
        if self.keeps_samples {
            self.samples.lock().unwrap_or_else(|e| e.into_inner()).insert(key, info);
        }
    }
}

/// Where a comparison's samples come from: the service (its client and address, which keys the
/// cache) and the cache.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    /// The service's client.
    pub client: &'a Client,
    /// The service's address.
    pub base_url: &'a str,
    /// What was fetched before.
    pub cache: &'a CompareCache,
}

/// A sample fetched for comparison.
pub(crate) struct Fetched {
    pub(crate) id: String,
    pub(crate) info: SampleInfo,
    pub(crate) results: Option<Arc<ClassificationResults>>,
}

/// Fetches each sample, its metadata and its classification's results (from the cache where
/// they are), `AT_ONCE` at a time, reporting progress.
pub(crate) async fn fetch(
    src: Source<'_>,
    ids: &[String],
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<Vec<Fetched>> {
    let Source { client, base_url, cache } = src;
    let done = AtomicUsize::new(0);
    let total = ids.len();
    let one = |id: String| {
        let done = &done;
        async move {
            let key = format!("{base_url} {id}");
            // A sample whose classification had finished well is not asked for again; one
            // still running (or not there yet) is looked at each time.
            let info = match cache.sample(&key) {
                Some(info) if info.ready.is_ok() => info,
                _ => {
                    let info = look(client, &id).await?;
                    cache.keep_sample(key, info.clone());
                    info
                }
            };
            let results = match &info.ready {
                Ok(analysis) => {
                    let rkey = format!("{base_url} {analysis}");
                    match cache.results.get(&rkey) {
                        Some(r) => Some(r),
                        None => {
                            let r = Arc::new(client.classifications().results(analysis.as_str()).await?);
                            cache.results.insert(rkey, r.clone());
                            Some(r)
                        }
                    }
                }
                Err(_) => None,
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if n == total || n.is_multiple_of(10) {
                progress(CompareProgress { done: n, total });
            }
            Ok::<_, CmdError>(Fetched { id, info, results })
        }
    };
    futures::stream::iter(ids.iter().cloned())
        .map(one)
        .buffered(AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

/// The samples a view fetched: every one asked for, those left out with why, and the metadata
/// fields they have (their custom ones, then the standard ones).
pub(crate) struct Gathered {
    pub(crate) fetched: Vec<Fetched>,
    pub(crate) skipped: Vec<SkippedSample>,
    pub(crate) fields: Vec<String>,
}

/// Checks the samples a view asks for (2 to [`MAX_SAMPLES`] once repeats are dropped) and
/// fetches them; refuses, naming why, when fewer than two have a finished classification
/// (`purpose` ends the sentence: "to be compared").
pub(crate) async fn gather(
    src: Source<'_>,
    samples: &[String],
    progress: &(dyn Fn(CompareProgress) + Sync),
    purpose: &str,
) -> CmdResult<Gathered> {
    let mut seen = std::collections::HashSet::new();
    let ids: Vec<String> =
        samples.iter().take(10 * MAX_SAMPLES).filter(|id| seen.insert(id.as_str())).cloned().collect();
    if !(2..=MAX_SAMPLES).contains(&ids.len()) || samples.len() > 10 * MAX_SAMPLES {
        let chosen = if samples.len() > 10 * MAX_SAMPLES { samples.len() } else { ids.len() };
        return Err(CmdError::new("invalid", format!("Choose 2 to {MAX_SAMPLES} samples ({chosen} chosen).")));
    }
    let fetched = fetch(src, &ids, progress).await?;
    let mut custom = BTreeSet::new();
    for f in &fetched {
        if let Some(m) = &f.info.metadata {
            custom.extend(m.custom.keys().cloned());
        }
    }
    let mut fields: Vec<String> = custom.into_iter().collect();
    for standard in
        ["external_sample_id", "name", "date_collected", "date_sequenced", "platform", "sample_type", "location_string"]
    {
        if !fields.iter().any(|f| f == standard) {
            fields.push(standard.to_string());
        }
    }
    let skipped: Vec<SkippedSample> = fetched
        .iter()
        .filter_map(|f| {
            let why = f.info.ready.as_ref().err()?;
            Some(SkippedSample { id: f.id.clone(), name: f.info.name.clone(), why: why.clone() })
        })
        .collect();
    let ready = fetched.iter().filter(|f| f.results.is_some()).count();
    if ready < 2 {
        let whys: Vec<String> = skipped.iter().map(|s| format!("{}: {}", s.name, s.why)).collect();
        return Err(CmdError::new(
            "not_ready",
            format!(
                "At least two of the samples need a finished classification {purpose}; {ready} of {} have one. {}",
                fetched.len(),
                sentence(&whys.join("; "))
            ),
        ));
    }
    Ok(Gathered { fetched, skipped, fields })
}

/// Looks at a sample: its name, metadata and primary classification.
async fn look(client: &Client, id: &str) -> CmdResult<SampleInfo> {
    let sample = match client.samples().get(id).await {
        Ok(s) => s,
        Err(e) if e.status() == Some(404) => {
            return Ok(SampleInfo {
                name: id.to_string(),
                metadata: None,
                ready: Err("it is no longer on the service, or no longer shared with you".into()),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let name = sample.filename.clone().unwrap_or_else(|| id.to_string());
    let metadata = match &sample.metadata {
        Some(m) => Some(client.metadata().get(m.id()).await?),
        None => None,
    };
    let ready = match &sample.primary_classification {
        None => Err("it has no classification yet".to_string()),
        Some(c) => {
            let analysis = client.analyses().get(c.id()).await?;
            if !analysis.complete {
                Err("its classification is still running".to_string())
            } else if !analysis.success {
                let why = analysis.error_msg.unwrap_or_default();
                Err(sentence(&format!("its classification failed: {why}")))
            } else {
                Ok(c.id().to_string())
            }
        }
    };
    Ok(SampleInfo { name, metadata, ready })
}

/// The measure `key` asks for, checked against what every sample has.
pub(crate) fn metric_for(key: Option<&str>, results: &[&ClassificationResults]) -> CmdResult<Metric> {
    let Some(key) = key else {
        return Ok(mgds_plots::default_metric(results.iter().copied()));
    };
    let metric =
        Metric::from_key(key).ok_or_else(|| CmdError::new("invalid", format!("There is no measure {key:?}.")))?;
    if let Metric::Share(m) = metric
        && results.iter().any(|r| !m.available(r))
    {
        return Err(CmdError::new(
            "invalid",
            format!("Not every sample's results have the {}: choose another measure.", m.label().to_lowercase()),
        ));
    }
    Ok(metric)
}

pub(crate) fn metric_key(m: Metric) -> &'static str {
    match m {
        Metric::Share(m) => m.key(),
        Metric::Readcount => "readcount",
    }
}

/// The samples compared and the numbers behind the chart: fetched, labelled, ordered and
/// compared as `req` says, before drawing. The view, its exports and `mgds compare` all draw
/// and write from this.
pub struct Prepared {
    comparison: Comparison,
    ids: Vec<String>,
    skipped: Vec<SkippedSample>,
    fields: Vec<String>,
    measures: Vec<MeasureChoice>,
    clustered: bool,
    heatmap: bool,
}

impl Prepared {
    /// The chart asked for (stacked bars or heatmap) as SVG, `width` pixels wide at 96 dpi.
    pub fn chart(&self, width: u32) -> CmdResult<String> {
        let size = ChartSize { width, height: None };
        let svg = if self.heatmap {
            mgds_plots::heatmap(&self.comparison, &size, self.clustered)
        } else {
            mgds_plots::stacked_bars(&self.comparison, &size)
        };
        svg.map_err(|e| CmdError::new("chart", sentence(&e.to_string())))
    }

    /// The chart as PNG at `dpi` (72 to 600), `width` pixels wide at 96 dpi.
    pub fn png(&self, width: u32, dpi: u32) -> CmdResult<Vec<u8>> {
        mgds_plots::svg_to_png(&self.chart(width)?, dpi.clamp(72, 600) as f32 / 96.0)
            .map_err(|e| CmdError::new("chart", sentence(&e.to_string())))
    }

    /// Writes the numbers behind the chart as delimited text (sample, taxon, tax_id, rank,
    /// reads, the measure).
    pub fn write_table(&self, out: impl std::io::Write, delimiter: u8) -> CmdResult<()> {
        self.comparison.write_table(out, delimiter).map_err(|e| CmdError::new("file", sentence(&e.to_string())))
    }

    /// What the chart leaves out or shows, in words.
    pub fn notes(&self) -> &[String] {
        &self.comparison.notes
    }

    /// The samples left out, with why.
    pub fn skipped(&self) -> &[SkippedSample] {
        &self.skipped
    }
}

/// Fetches, checks, labels, orders and compares the samples `req` names (see [`Prepared`]),
/// reporting the fetching's progress.
pub async fn prepare(
    src: Source<'_>,
    req: &CompareRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<Prepared> {
    let Gathered { fetched, skipped, fields } = gather(src, &req.samples, progress, "to be compared").await?;
    let ready: Vec<&Fetched> = fetched.iter().filter(|f| f.results.is_some()).collect();
    let field = |f: &Fetched, name: &str| f.info.metadata.as_ref().and_then(|m| m.field_text(name));
    let labels: Vec<String> = ready
        .iter()
        .map(|f| match req.label.as_deref().filter(|l| !l.is_empty()) {
            Some(name) => field(f, name).unwrap_or_else(|| format!("{} (no {name})", f.info.name)),
            None => f.info.name.clone(),
        })
        .collect();
    let order = match req.order_by.as_deref().filter(|o| !o.is_empty()) {
        Some(name) => mgds_plots::order_by_keys(&ready.iter().map(|f| field(f, name)).collect::<Vec<_>>()),
        None => (0..ready.len()).collect(),
    };
    let results: Vec<&ClassificationResults> = order.iter().filter_map(|&i| ready[i].results.as_deref()).collect();
    let metric = metric_for(req.measure.as_deref(), &results)?;
    let mut measures: Vec<MeasureChoice> = Measure::ALL
        .into_iter()
        .filter(|m| results.iter().all(|r| m.available(r)))
        .map(|m| MeasureChoice { key: m.key().into(), label: m.label().into(), explanation: m.explanation().into() })
        .collect();
    measures.push(MeasureChoice {
        key: "readcount".into(),
        label: "Reads".into(),
        explanation: "Reads classified to the taxon or below it.".into(),
    });
    let compared: Vec<Compared> = order
        .iter()
        .map(|&i| Compared { label: labels[i].as_str(), results: ready[i].results.as_deref().unwrap_or(results[0]) })
        .collect();
    let opts = CompareOptions {
        rank: req.rank.clone(),
        top_n: req.top.clamp(1, MAX_TOP),
        metric,
        hide_host: !req.show_host,
        show_unclassified: req.show_unclassified,
        flagged: req
            .flagged
            .iter()
            .take(MAX_FLAGGED)
            .filter(|t| t.len() <= 32 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b)))
            .cloned()
            .collect(),
        hide_flagged: req.hide_flagged,
    };
    let mut comparison = mgds_plots::compare(&compared, &opts).map_err(|e| match e {
        mgds_plots::Error::NoData { rank } => CmdError::new(
            "no_data",
            format!("None of these samples has taxa at rank {rank} in this measure: choose another rank or measure."),
        ),
        other => CmdError::new("chart", sentence(&other.to_string())),
    })?;
    let mut ids: Vec<String> = order.iter().map(|&i| ready[i].id.clone()).collect();
    let clustered = req.cluster && req.chart == "heatmap";
    if clustered {
        let rows = comparison.clustered_samples();
        let columns = comparison.clustered_columns();
        ids = rows.iter().map(|&i| ids[i].clone()).collect();
        comparison = comparison.with_sample_order(&rows).with_column_order(&columns);
    }
    Ok(Prepared { comparison, ids, skipped, fields, measures, clustered, heatmap: req.chart == "heatmap" })
}

/// The width the view draws at (and the exports use).
pub const WIDTH: u32 = 1100;

/// The comparison view for `req`.
pub async fn compare(
    src: Source<'_>,
    req: &CompareRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<ComparisonView> {
    let p = prepare(src, req, progress).await?;
    let svg = p.chart(WIDTH)?;
    let c = &p.comparison;
    Ok(ComparisonView {
        svg,
        samples: p
            .ids
            .iter()
            .zip(&c.samples)
            .map(|(id, label)| ComparedSample { id: id.clone(), label: label.clone() })
            .collect(),
        columns: c
            .columns
            .iter()
            .map(|col| ComparedColumn { label: col.label(), tax_id: col.tax_id().map(String::from) })
            .collect(),
        values: c.values.clone(),
        reads: c.reads.clone(),
        rank: c.rank.clone(),
        measure: metric_key(c.metric).into(),
        measures: p.measures,
        notes: c.notes.clone(),
        clustering: p.clustered.then(|| mgds_plots::CLUSTERING.to_string()),
        fields: p.fields,
        skipped: p.skipped,
    })
}

/// Writes the comparison as `format` (`svg`, `png` at `dpi`, `csv` or `tsv`) to `path`: the same
/// chart and numbers as the view.
pub async fn export(src: Source<'_>, req: &CompareRequest, format: &str, dpi: u32, path: &Path) -> CmdResult<()> {
    let p = prepare(src, req, &|_| {}).await?;
    let bytes = match format {
        "svg" => p.chart(WIDTH)?.into_bytes(),
        "png" => p.png(WIDTH, dpi)?,
        "csv" | "tsv" => {
            let mut out = Vec::new();
            p.write_table(&mut out, if format == "csv" { b',' } else { b'\t' })?;
            out
        }
        other => return Err(CmdError::new("invalid", format!("There is no export as {other:?}."))),
    };
    crate::files::write_file(path, &bytes)
}

/// The file name an export of `req` is offered under.
pub fn export_name(req: &CompareRequest, format: &str) -> String {
    let what = if req.chart == "heatmap" { "heatmap" } else { "bars" };
    let measure = req.measure.as_deref().unwrap_or("abundance");
    format!("comparison_{}_samples_{}_{}_{}.{format}", req.samples.len(), req.rank.trim(), measure, what)
}

/// Progress of saving one taxon's reads, as `taxon-reads-progress` events.
#[derive(Debug, Clone, Serialize, TS)]
pub struct TaxonReadsProgress {
    /// The taxon.
    pub taxon: String,
    /// Samples finished.
    pub done: usize,
    /// Samples in all.
    pub total: usize,
    /// The sample being worked on.
    pub current: Option<String>,
    /// Files written so far.
    pub written: Vec<String>,
    /// Samples that could not be done, with why.
    pub problems: Vec<String>,
    /// All done.
    pub finished: bool,
}

impl crate::events::ShellEvent for TaxonReadsProgress {
    const NAME: &'static str = "taxon-reads-progress";
}

/// Writes the reads of taxon `tax_id` (and the taxa below it) from each sample into `folder`:
/// each sample's reads and read-level results are downloaded into a temporary folder and
/// subset as `mgds subset-reads --with-children` does, into `<file name>.filtered.fastq.gz`.
/// A sample that cannot be done is named in the progress and the others go on.
pub async fn taxon_reads(
    src: Source<'_>,
    sample_ids: &[String],
    tax_id: &str,
    taxon: &str,
    folder: &Path,
    progress: &(dyn Fn(TaxonReadsProgress) + Sync),
) -> CmdResult<TaxonReadsProgress> {
    let id = mgds_formats::parse_tax_id(tax_id)
        .ok_or_else(|| CmdError::new("invalid", format!("{tax_id:?} is not a taxonomy id.")))?;
    let mut state = TaxonReadsProgress {
        taxon: taxon.to_string(),
        done: 0,
        total: sample_ids.len(),
        current: None,
        written: Vec::new(),
        problems: Vec::new(),
        finished: false,
    };
    for sample in sample_ids {
        let key = format!("{} {sample}", src.base_url);
        let info = match src.cache.sample(&key) {
            Some(i) => i,
            None => look(src.client, sample).await?,
        };
        state.current = Some(info.name.clone());
        progress(state.clone());
        match one_taxon(src, sample, &info, id, folder).await {
            Ok(paths) => state.written.extend(paths.into_iter().map(|p| p.display().to_string())),
            Err(e) => state.problems.push(format!("{}: {}", info.name, e.message)),
        }
        state.done += 1;
    }
    state.current = None;
    state.finished = true;
    progress(state.clone());
    Ok(state)
}

/// What streaming the reads of one taxon from one sample needs: the sample's name (the file is
/// named after it), the rules (the taxon and the taxa below it in the sample's
/// classification), and the signed addresses of its reads and its read-level results.
#[derive(Debug)]
pub struct TaxonReadsSource {
    /// The file's name: `<sample>.filtered.fastq.gz`, made safe.
    pub file_name: String,
    /// Which reads.
    pub options: mgds_formats::SubsetOptions,
    /// The sample's reads.
    pub reads_url: String,
    /// Its classification's read-level results.
    pub readlevel_url: String,
}

/// Where the reads of taxon `tax_id` (and the taxa below it) in `sample` come from, for a
/// stream of them (a browser's download): as [`taxon_reads`] writes them into a folder.
pub async fn taxon_reads_source(client: &Client, sample: &str, tax_id: &str) -> CmdResult<TaxonReadsSource> {
    let id = mgds_formats::parse_tax_id(tax_id)
        .ok_or_else(|| CmdError::new("invalid", format!("{tax_id:?} is not a taxonomy id.")))?;
    let info = look(client, sample).await?;
    let analysis = info.ready.as_ref().map_err(|why| CmdError::new("not_ready", sentence(why)))?;
    let results = client.classifications().results(analysis.as_str()).await?;
    let tree = mgds_formats::TaxTree::from_results(&results).map_err(CmdError::from)?;
    let options = mgds_formats::SubsetOptions::new([id]).with_children(&tree);
    let reads_url = client.samples().download_uri(sample).await?.download_uri;
    let readlevel_url = client.classifications().readlevel_url(analysis.as_str()).await?.url;
    let name = mgds_formats::filtered_file_name(
        Path::new(&info.name),
        mgds_formats::Format::Fastq,
        mgds_formats::OutputCompression::GZIP,
    );
    let file_name = mgds_client::safe_file_name(&name, "reads.filtered.fastq.gz");
    Ok(TaxonReadsSource { file_name, options, reads_url, readlevel_url })
}

async fn one_taxon(
    src: Source<'_>,
    sample: &str,
    info: &SampleInfo,
    tax_id: mgds_formats::TaxId,
    folder: &Path,
) -> CmdResult<Vec<PathBuf>> {
    let Source { client, base_url, cache } = src;
    let analysis = info.ready.as_ref().map_err(|why| CmdError::new("not_ready", sentence(why)))?;
    let results = match cache.results.get(&format!("{base_url} {analysis}")) {
        Some(r) => r,
        None => Arc::new(client.classifications().results(analysis.as_str()).await?),
    };
    let work =
        tempfile::tempdir().map_err(|e| CmdError::new("file", format!("Could not make a temporary folder ({e}).")))?;
    // The reads keep the sample's name (the subset's output is named after it), made safe: a
    // service's name never leaves the folder. The read-level file's leading dot is a name
    // `safe_file_name` never gives, so the two cannot meet.
    let reads = mgds_client::Destination::new_file(work.path(), &info.name, "reads.fastq.gz", false)?;
    client.samples().download(sample, reads.clone()).await?;
    let reads = reads.path().to_path_buf();
    let readlevel = work.path().join(".readlevel.tsv.gz");
    client.classifications().download_readlevel(analysis.as_str(), &readlevel).await?;
    let folder = folder.to_path_buf();
    let report = tokio::task::spawn_blocking(move || {
        let tree = mgds_formats::TaxTree::from_results(&results).map_err(CmdError::from)?;
        let mut options = mgds_formats::SubsetOptions::new([tax_id]).with_children(&tree);
        options.output = mgds_formats::OutputCompression::GZIP;
        // The output is named after the service's name, not by the user: it never replaces a
        // file in their folder (nor another sample's output of the same name).
        options.keep_existing = true;
        let r = mgds_formats::subset_reads(&readlevel, &mgds_formats::SubsetInput::Single(reads), &folder, &options);
        drop(work);
        r.map_err(CmdError::from)
    })
    .await
    .map_err(|e| CmdError::new("internal", format!("The subset stopped ({e}).")))??;
    Ok(report.outputs.into_iter().map(|o| o.path).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three samples on a real local service with the demo references: two of the demo reads
    /// (one labelled by a custom field) and one awaiting its file, so it has no classification.
    /// The comparison leaves that one out with why, draws the others, answers from its cache the
    /// second time, exports what it shows, and writes one taxon's reads from both samples.
    #[tokio::test(flavor = "multi_thread")]
    async fn samples_are_compared_exported_and_a_taxon_subset() {
        let dir = tempfile::tempdir().unwrap();
        let with = crate::testing::With { demo: true, workers: 1 };
        let service = crate::testing::TestService::start(&dir.path().join("data"), with).await;
        let client = service.user("lab@example.org").await;
        let reads = dir.path().join("demo.fastq.gz");
        mgds_server::references::write_demo_reads(&reads).unwrap();
        let mut ids = Vec::new();
        for (i, site) in ["ward 3", "ward 1"].iter().enumerate() {
            let copy = dir.path().join(format!("swab-{i}.fastq.gz"));
            std::fs::copy(&reads, &copy).unwrap();
            let mut custom = serde_json::Map::new();
            custom.insert("site".into(), serde_json::json!(site));
            let meta = mgds_api::MetadataInput { custom: Some(custom), ..Default::default() };
            let s = client.samples().upload(&copy).metadata(meta).send().await.unwrap();
            ids.push(crate::samples::id_of(&s.uri));
        }
        for id in &ids {
            let s = client.samples().get(id.as_str()).await.unwrap();
            let c = s.primary_classification.expect("the default classification").id().to_string();
            let done = client.jobs().wait(c.as_str()).send().await.unwrap();
            assert!(done.success, "{done:?}");
        }
        let waiting = client.samples().preupload().external_sample_id("later").send().await.unwrap();
        ids.push(waiting.sample_id);

        let cache = CompareCache::with_budget(64 << 20);
        let src = Source { client: &client, base_url: &service.url, cache: &cache };
        let req = CompareRequest {
            samples: ids.clone(),
            rank: "species".into(),
            top: 3,
            measure: None,
            chart: "bars".into(),
            cluster: false,
            label: Some("site".into()),
            order_by: Some("site".into()),
            show_host: false,
            show_unclassified: false,
            flagged: vec![],
            hide_flagged: false,
        };
        let seen = std::sync::Mutex::new(Vec::new());
        let view = compare(src, &req, &|p| seen.lock().unwrap().push(p.done)).await.unwrap();
        assert_eq!(seen.lock().unwrap().last(), Some(&3), "progress reaches every sample");
        // Ordered by site, labelled by it; the sample without a classification named and why.
        let labels: Vec<&str> = view.samples.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["ward 1", "ward 3"]);
        assert_eq!(view.samples[0].id, ids[1]);
        assert_eq!(view.skipped.len(), 1);
        assert_eq!(view.skipped[0].why, "it has no classification yet");
        // The demo database gives re-estimated abundance: it is the measure, named in the chart.
        assert_eq!(view.measure, "reestimated");
        assert!(view.svg.contains("Re-estimated abundance by species: the top 3 taxa in 2 samples"), "{}", view.svg);
        assert_eq!(view.columns.len(), 4, "three taxa and Other: {:?}", view.columns);
        for row in &view.values {
            let sum: f64 = row.iter().sum();
            assert!((sum - 100.0).abs() < 0.01, "a sample's shares add up to 100%: {row:?}");
        }
        assert!(view.fields.contains(&"site".to_string()));

        // Read counts of every taxon, from the cache.
        let cached_ids: Vec<String> = ids[..2].to_vec();
        let again =
            CompareRequest { samples: cached_ids.clone(), top: 50, measure: Some("readcount".into()), ..req.clone() };
        let all = compare(src, &again, &|_| {}).await.unwrap();
        assert!(all.columns.iter().all(|c| c.tax_id.is_some()), "every taxon fits in 50 columns");
        let coli = all.columns.iter().position(|c| c.label == "Escherichia coli").expect("E. coli in the demo reads");
        let coli_reads = all.reads[0][coli];
        assert!(coli_reads > 100, "{coli_reads}");
        let bad = CompareRequest { measure: Some("nonsense".into()), ..again.clone() };
        assert_eq!(compare(src, &bad, &|_| {}).await.unwrap_err().code, "invalid");
        let one = CompareRequest { samples: vec![ids[0].clone(), ids[2].clone()], ..again.clone() };
        let not_ready = compare(src, &one, &|_| {}).await.unwrap_err();
        assert!(not_ready.message.contains("1 of 2 have one"), "{not_ready:?}");
        assert!(not_ready.message.contains("it has no classification yet"), "{not_ready:?}");

        // Exports: the table's rows are the view's numbers; the SVG is the view's chart.
        let csv = dir.path().join("numbers.csv");
        export(src, &again, "csv", 300, &csv).await.unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with("sample,taxon,tax_id,rank,reads\n"), "{text}");
        assert!(text.contains(&format!("ward 1,Escherichia coli,562,species,{coli_reads}\n")), "{text}");
        let svg = dir.path().join("chart.svg");
        export(src, &again, "svg", 300, &svg).await.unwrap();
        assert_eq!(std::fs::read_to_string(&svg).unwrap(), all.svg);
        let png = dir.path().join("chart.png");
        export(src, &again, "png", 150, &png).await.unwrap();
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        assert_eq!(export(src, &again, "pdf", 300, &png).await.unwrap_err().code, "invalid");

        // E. coli's reads from both samples: as many as the classification gave it, each an
        // E. coli read by the demo's truth.
        let out = dir.path().join("reads");
        std::fs::create_dir_all(&out).unwrap();
        let done = taxon_reads(src, &cached_ids, "562", "Escherichia coli", &out, &|_| {}).await.unwrap();
        assert!(done.finished && done.problems.is_empty(), "{done:?}");
        assert_eq!(done.written.len(), 2, "{done:?}");
        let truth =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/truth.tsv")).unwrap();
        let coli_truth: std::collections::HashSet<&str> = truth
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some("562"))
            .filter_map(|l| l.split('\t').next())
            .collect();
        let file = std::fs::File::open(&done.written[0]).unwrap();
        let text = std::io::read_to_string(flate2::read::MultiGzDecoder::new(file)).unwrap();
        let names: Vec<&str> = text.lines().step_by(4).map(|l| l[1..].split_whitespace().next().unwrap()).collect();
        // Both samples hold the same reads, so the first written is the view's either way.
        assert_eq!(names.len() as u64, coli_reads);
        let true_coli = names.iter().filter(|n| coli_truth.contains(*n)).count();
        assert!(true_coli * 100 >= names.len() * 95, "{true_coli} of {} written reads are E. coli's", names.len());
        let refused = taxon_reads(src, &[ids[2].clone()], "562", "Escherichia coli", &out, &|_| {}).await.unwrap();
        assert_eq!(refused.problems.len(), 1, "{refused:?}");
        assert!(refused.problems[0].contains("no classification yet"), "{refused:?}");
    }
}
