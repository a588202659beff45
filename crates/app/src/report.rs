//! A report of a comparison (an MGDS addition; the reference's `/reports` are of one sample):
//! the compared samples, their read quality, the abundance chart, heatmap and table, alpha
//! diversity and the ordination with their tests, and methods naming each classification's
//! job, engine, version, database digest and arguments. Typeset by `mgds-report` as PDF or
//! HTML, from the same numbers and `mgds-plots` charts as the comparison view and `mgds
//! compare`, so a report cannot disagree with the screens. The app, the browser and the CLI
//! save it, or keep it as a document of the service to share.
//!
//! [`assemble`] makes the report from classification results already fetched (no service);
//! [`comparison_report`] fetches them as the comparison does and calls it.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use mgds_api::{ClassificationResults, Measure};
use mgds_plots::{ChartSize, CompareOptions, Compared, Metric};
use mgds_report::{Block, Column, Lab, Logo, Report};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::compare::{CompareProgress, SkippedSample, Source, gather, metric_for};
use crate::diversity::{DiversitySample, DiversityView, Work, compute};
use crate::error::{CmdError, CmdResult, sentence};
use crate::text::shown_text;

/// Taxa with a column of their own in the abundance table (and the chart) at most.
pub const MAX_TOP: usize = 30;
/// Samples side by side in one part of the abundance table.
const TABLE_SAMPLES: usize = 6;
/// The width the report's charts are drawn at (scaled to the page).
const WIDTH: u32 = 1100;
/// Requests for the classifications' jobs at once.
const AT_ONCE: usize = 8;

/// What a comparison report is of, and how.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct ComparisonReportRequest {
    /// The samples (ids), 2 to 500, in the order given.
    pub samples: Vec<String>,
    /// The rank: `species`, `genus`, ...
    pub rank: String,
    /// Taxa with a column of their own (1 to 30); the rest are summed into "Other".
    pub top: usize,
    /// The measure compared (as the comparison's); none: the best measure every sample has.
    pub measure: Option<String>,
    /// The beta diversity (as the diversity view's); none: Bray–Curtis.
    pub metric: Option<String>,
    /// Group samples by this metadata field for the tests and the points' colours.
    pub group_by: Option<String>,
    /// Label samples by this metadata field (none: by name).
    pub label: Option<String>,
    /// PERMANOVA's permutations (default 999).
    pub permutations: Option<usize>,
    /// The permutations' seed (default 42).
    #[ts(type = "number | null")]
    pub seed: Option<u64>,
    /// Keep the host's reads (default: left out).
    #[serde(default)]
    pub show_host: bool,
    /// The report's title (none: "Comparison of N samples").
    pub title: Option<String>,
}

/// A classification and the job that made it, for the methods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classified {
    /// The analysis's id.
    pub analysis_id: String,
    /// The job's name.
    pub job: String,
    /// Its engine and the engine's version, where the service says.
    pub engine: Option<String>,
    /// The digest of its database, where the service says.
    pub reference_digest: Option<String>,
    /// The arguments it ran with.
    pub args: Option<Value>,
}

/// A sample in a report, its classification fetched.
pub struct ReportSample<'a> {
    /// Its id.
    pub id: String,
    /// Its name as shown.
    pub label: String,
    /// Its value of the grouping field.
    pub group: Option<String>,
    /// Its classification's results.
    pub results: &'a ClassificationResults,
    /// The classification, where known.
    pub classification: Option<Classified>,
}

/// A report made, with what it says about itself.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ReportMade {
    /// The file's name it is offered under.
    pub file_name: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Samples in it.
    pub samples: usize,
    /// Samples left out, with why.
    pub skipped: Vec<SkippedSample>,
    /// The document it was kept as, when kept (its id).
    pub document: Option<String>,
}

fn heading(text: &str) -> Block {
    Block::Heading { text: text.into(), level: 1 }
}

fn percent(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

/// A statistic or p-value as the diversity view writes it.
fn number(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(v) if v != 0.0 && v.abs() < 1e-4 => format!("{v:.2e}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn chart_error(e: mgds_plots::Error) -> CmdError {
    CmdError::new("chart", sentence(&e.to_string()))
}

/// The report of `samples` as `req` asks (its `samples` are not read: `samples` are the ones
/// with results, in order; `skipped` those left out), for `lab`, made at `made`.
pub fn assemble(
    samples: &[ReportSample<'_>],
    skipped: &[SkippedSample],
    req: &ComparisonReportRequest,
    lab: Lab,
    made: String,
) -> CmdResult<Report> {
    if samples.len() < 2 {
        return Err(CmdError::new("not_ready", "A comparison report needs at least two classified samples."));
    }
    let results: Vec<&ClassificationResults> = samples.iter().map(|s| s.results).collect();
    let metric = metric_for(req.measure.as_deref(), &results)?;
    let rank = req.rank.trim().to_lowercase();
    let mut blocks = Vec::new();

    // The samples.
    blocks.push(heading("Samples"));
    let rows: Vec<Vec<String>> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            vec![
                (i + 1).to_string(),
                s.label.clone(),
                s.id.clone(),
                s.group.clone().unwrap_or_default(),
                mgds_report::sample::thousands(s.results.n_reads),
                s.classification.as_ref().map(|c| c.analysis_id.clone()).unwrap_or_default(),
            ]
        })
        .collect();
    let group_title = req.group_by.as_deref().filter(|g| !g.is_empty()).unwrap_or("Group");
    blocks.push(Block::Table {
        columns: vec![
            Column::number("#"),
            Column::text("Sample"),
            Column::text("Sample id"),
            Column::text(group_title),
            Column::number("Reads"),
            Column::text("Classification"),
        ],
        rows,
        caption: Some(format!("{} samples compared by their primary classification", samples.len())),
    });
    if !skipped.is_empty() {
        let left: Vec<String> = skipped.iter().take(50).map(|s| format!("{} ({})", s.name, s.why)).collect();
        blocks.push(Block::Paragraph(format!(
            "Left out, {} sample{}: {}{}.",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            left.join("; "),
            if skipped.len() > 50 { "; …" } else { "" }
        )));
    }

    // Read quality.
    if samples.iter().any(|s| s.results.qc.is_some()) {
        blocks.push(heading("Read quality"));
        let rows: Vec<Vec<String>> = samples
            .iter()
            .map(|s| match &s.results.qc {
                Some(q) => vec![
                    s.label.clone(),
                    mgds_report::sample::thousands(q.reads),
                    mgds_report::sample::thousands(q.median_length),
                    if q.long_reads { mgds_report::sample::thousands(q.n50) } else { "—".into() },
                    q.mean_quality.map_or("—".into(), |v| format!("Q{v:.1}")),
                    percent(q.gc),
                    if q.failures.is_empty() { "Passed".into() } else { q.failures.join("; ") },
                ],
                None => vec![
                    s.label.clone(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                    "Not measured".into(),
                ],
            })
            .collect();
        let failed = samples.iter().filter(|s| s.results.qc.as_ref().is_some_and(|q| !q.failures.is_empty())).count();
        blocks.push(Block::Table {
            columns: vec![
                Column::text("Sample"),
                Column::number("Reads"),
                Column::number("Median length"),
                Column::number("N50"),
                Column::number("Mean quality"),
                Column::number("GC"),
                Column::text("Thresholds"),
            ],
            rows,
            caption: Some(format!("{failed} of {} samples failed a threshold", samples.len())),
        });
    }

    // Abundance: the chart, the heatmap and the table, from one comparison.
    blocks.push(Block::PageBreak);
    blocks.push(heading("Abundance"));
    let compared: Vec<Compared<'_>> =
        samples.iter().map(|s| Compared { label: s.label.as_str(), results: s.results }).collect();
    let opts = CompareOptions {
        rank: rank.clone(),
        top_n: req.top.clamp(1, MAX_TOP),
        metric,
        hide_host: !req.show_host,
        show_unclassified: false,
        flagged: Vec::new(),
        hide_flagged: false,
    };
    let comparison = mgds_plots::compare(&compared, &opts).map_err(|e| match e {
        mgds_plots::Error::NoData { rank } => CmdError::new(
            "no_data",
            format!("None of these samples has taxa at rank {rank} in this measure: choose another rank or measure."),
        ),
        other => chart_error(other),
    })?;
    let measure_label = match metric {
        Metric::Share(m) => m.label().to_string(),
        Metric::Readcount => "Reads".to_string(),
    };
    let size = ChartSize { width: WIDTH, height: None };
    let notes = comparison.notes.join(" ");
    blocks.push(Block::Figure {
        svg: mgds_plots::stacked_bars(&comparison, &size).map_err(chart_error)?,
        caption: format!(
            "{measure_label} at {rank}, the {} largest taxa. {notes}",
            comparison.columns.iter().filter(|c| c.tax_id().is_some()).count()
        ),
        width: 1.0,
    });
    let clustered = comparison.clone();
    let rows_order = clustered.clustered_samples();
    let columns_order = clustered.clustered_columns();
    let clustered = clustered.with_sample_order(&rows_order).with_column_order(&columns_order);
    blocks.push(Block::PageBreak);
    blocks.push(Block::Figure {
        svg: mgds_plots::heatmap(&clustered, &size, true).map_err(chart_error)?,
        caption: format!("The same as a heatmap, samples and taxa clustered ({})", mgds_plots::CLUSTERING),
        width: 1.0,
    });
    blocks.push(Block::PageBreak);
    blocks.push(Block::Heading { text: format!("{measure_label} by sample"), level: 2 });
    // The comparison's shares are percentages already.
    let shown = |v: f64| match metric {
        Metric::Share(_) => format!("{v:.2}%"),
        Metric::Readcount => mgds_report::sample::thousands(v.round() as u64),
    };
    for (part, chunk) in comparison.samples.chunks(TABLE_SAMPLES).enumerate() {
        let first = part * TABLE_SAMPLES;
        let mut columns = vec![Column::text("Taxon")];
        columns.extend(chunk.iter().map(|s| Column::number(s)));
        let rows: Vec<Vec<String>> = comparison
            .columns
            .iter()
            .enumerate()
            .map(|(j, col)| {
                let mut row = vec![col.label()];
                row.extend((first..first + chunk.len()).map(|i| shown(comparison.values[i][j])));
                row
            })
            .collect();
        blocks.push(Block::Table {
            columns,
            rows,
            caption: Some(format!("Samples {} to {} of {}", first + 1, first + chunk.len(), comparison.samples.len())),
        });
    }

    // Diversity.
    blocks.push(Block::PageBreak);
    blocks.push(heading("Diversity"));
    let work = Work {
        samples: samples
            .iter()
            .map(|s| DiversitySample { id: s.id.clone(), label: s.label.clone(), group: s.group.clone() })
            .collect(),
        rank: rank.clone(),
        metric: match req.metric.as_deref().filter(|m| !m.is_empty()) {
            None => mgds_diversity::BetaMetric::BrayCurtis,
            Some(key) => mgds_diversity::BetaMetric::from_key(key)
                .ok_or_else(|| CmdError::new("invalid", format!("There is no beta diversity {key:?}.")))?,
        },
        group_by: req.group_by.clone().filter(|g| !g.trim().is_empty()),
        permutations: req
            .permutations
            .unwrap_or(crate::diversity::PERMUTATIONS)
            .min(crate::diversity::MAX_PERMUTATIONS),
        seed: req.seed.unwrap_or(crate::diversity::SEED),
        show_host: req.show_host,
        fields: Vec::new(),
        skipped: Vec::new(),
    };
    let view = compute(&results, metric, work)?;
    diversity_blocks(&mut blocks, &view)?;

    // Methods.
    blocks.push(Block::PageBreak);
    blocks.push(heading("Methods"));
    methods(&mut blocks, samples, &view);
    let title = req
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(shown_text)
        .unwrap_or_else(|| format!("Comparison of {} samples", samples.len()));
    Ok(Report { title, subtitle: Some(format!("Comparison report · {measure_label} at {rank}")), lab, made, blocks })
}

fn diversity_blocks(blocks: &mut Vec<Block>, view: &DiversityView) -> CmdResult<()> {
    blocks.push(Block::Figure {
        svg: view.alpha_chart(WIDTH)?,
        caption: format!("Alpha diversity at {}", view.rank),
        width: 1.0,
    });
    let mut columns = vec![Column::text("Sample"), Column::text(view.group_by.as_deref().unwrap_or("Group"))];
    columns.extend(view.alpha.iter().map(|a| Column::number(&a.label)));
    let rows: Vec<Vec<String>> = view
        .samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut row = vec![s.label.clone(), s.group.clone().unwrap_or_default()];
            row.extend(view.alpha.iter().map(|a| number(a.values[i])));
            row
        })
        .collect();
    blocks.push(Block::Table { columns, rows, caption: Some(format!("Alpha diversity at {}", view.rank)) });
    blocks.push(Block::PageBreak);
    blocks.push(Block::Figure {
        svg: view.ordination_chart(WIDTH)?,
        caption: format!("Principal coordinates of the {} distances", view.metric_label),
        width: 1.0,
    });
    let shares: Vec<String> = view
        .ordination
        .proportion_explained
        .iter()
        .take(5)
        .enumerate()
        .map(|(k, p)| format!("PC{} {:.1}%", k + 1, p * 100.0))
        .collect();
    if !shares.is_empty() {
        blocks.push(Block::Paragraph(format!("Share of variance by axis: {}.", shares.join(", "))));
    }
    blocks.push(Block::Heading { text: "Tests and methods".into(), level: 2 });
    for line in view.footer() {
        blocks.push(Block::Paragraph(line));
    }
    Ok(())
}

fn methods(blocks: &mut Vec<Block>, samples: &[ReportSample<'_>], view: &DiversityView) {
    // The classifications, by the job that made them (one row per job and arguments).
    let mut by_job: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    for s in samples {
        let key = match &s.classification {
            Some(c) => (
                c.job.clone(),
                c.engine.clone().unwrap_or_else(|| "not said".into()),
                c.reference_digest.clone().unwrap_or_else(|| "not said".into()),
                c.args
                    .as_ref()
                    .filter(|a| a.as_object().is_some_and(|o| !o.is_empty()))
                    .map_or("defaults".into(), Value::to_string),
            ),
            None => ("not known".into(), "not said".into(), "not said".into(), "—".into()),
        };
        *by_job.entry(key).or_default() += 1;
    }
    let rows: Vec<Vec<String>> = by_job
        .into_iter()
        .map(|((job, engine, digest, args), n)| vec![job, engine, digest, args, n.to_string()])
        .collect();
    blocks.push(Block::Table {
        columns: vec![
            Column::text("Classification job"),
            Column::text("Engine"),
            Column::text("Database digest"),
            Column::text("Arguments"),
            Column::number("Samples"),
        ],
        rows,
        caption: Some("How the samples were classified".into()),
    });
    let all = samples.iter().map(|s| s.results).collect::<Vec<_>>();
    let measures = Measure::ALL.iter().filter(|m| all.iter().all(|r| m.available(r)));
    blocks.push(Block::Heading { text: "Abundance measures".into(), level: 2 });
    blocks.push(Block::Facts(measures.map(|m| (m.label().to_string(), sentence(m.explanation()))).collect()));
    blocks.push(Block::Heading { text: "Diversity".into(), level: 2 });
    for line in &view.methods {
        blocks.push(Block::Paragraph(line.clone()));
    }
    blocks.push(Block::Paragraph(format!("Report made by MGDS {}.", env!("CARGO_PKG_VERSION"))));
}

/// The lab of the caller's organisation for the cover: its name on reports and its logo
/// (not yet checked: [`checked`] does that off the async threads); none where the service does
/// not say.
pub async fn lab(client: &mgds_client::Client) -> Lab {
    let org = client.organization();
    let (name, has_logo) = match org.get().await {
        Ok(o) => (o.lab_name.unwrap_or(o.name), o.logo.is_some()),
        Err(_) => (String::new(), false),
    };
    let logo = match has_logo {
        true => org.logo().await.ok().flatten().map(|bytes| Logo { bytes: bytes.to_vec() }),
        false => None,
    };
    Lab { name: crate::text::shown(&name, mgds_api::MAX_ORGANIZATION_NAME_CHARS), logo }
}

/// `lab` with its logo only if a report can show it (typesetting it once: blocking work).
fn checked(mut lab: Lab) -> Lab {
    lab.logo = lab.logo.filter(|l| mgds_report::check_logo(&l.bytes).is_ok());
    lab
}

/// The job behind each classification, fetched a few at a time (each job once).
async fn classified(client: &mgds_client::Client, analyses: &[Option<String>]) -> Vec<Option<Classified>> {
    let fetched: Vec<Option<(String, mgds_api::Analysis)>> = futures::stream::iter(analyses.iter().cloned())
        .map(|id| async move {
            let id = id?;
            let a = client.analyses().get(id.as_str()).await.ok()?;
            Some((id, a))
        })
        .buffered(AT_ONCE)
        .collect()
        .await;
    let mut jobs: BTreeMap<String, Option<mgds_api::Job>> = BTreeMap::new();
    for (_, a) in fetched.iter().flatten() {
        jobs.entry(a.job.id().to_string()).or_default();
    }
    let ids: Vec<String> = jobs.keys().cloned().collect();
    let found: Vec<(String, Option<mgds_api::Job>)> = futures::stream::iter(ids)
        .map(|id| async move {
            let job = client.jobs().get(id.as_str()).await.ok();
            (id, job)
        })
        .buffered(AT_ONCE)
        .collect()
        .await;
    jobs.extend(found);
    fetched
        .into_iter()
        .map(|f| {
            let (id, a) = f?;
            let job = jobs.get(a.job.id()).cloned().flatten();
            Some(Classified {
                analysis_id: id,
                job: job.as_ref().and_then(|j| j.name.clone()).unwrap_or_else(|| a.job.id().to_string()),
                engine: job.as_ref().and_then(|j| {
                    let engine = j.engine.clone()?;
                    Some(match &j.engine_version {
                        Some(v) => format!("{engine} {v}"),
                        None => engine,
                    })
                }),
                reference_digest: job.as_ref().and_then(|j| j.reference_digest.clone()),
                args: a.job_args.clone(),
            })
        })
        .collect()
}

/// The report of the samples `req` names, fetched as the comparison fetches them (its cache),
/// reporting the fetching's progress; with the samples left out and how many are in it.
pub async fn comparison_report(
    src: Source<'_>,
    req: &ComparisonReportRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<(Report, Vec<SkippedSample>, usize)> {
    let gathered = gather(src, &req.samples, progress, "for a report").await?;
    let ready: Vec<&crate::compare::Fetched> = gathered.fetched.iter().filter(|f| f.results.is_some()).collect();
    let field = |f: &crate::compare::Fetched, name: &str| {
        f.info.metadata.as_ref().and_then(|m| m.field_text(name)).map(|v| shown_text(&v))
    };
    let analyses: Vec<Option<String>> = ready.iter().map(|f| f.info.ready.clone().ok()).collect();
    let made_by = classified(src.client, &analyses).await;
    let lab = lab(src.client).await;
    /// A sample's id, label, group, results and classification, owned for the blocking thread.
    type Owned = (String, String, Option<String>, Arc<ClassificationResults>, Option<Classified>);
    let owned: Vec<Owned> = ready
        .iter()
        .zip(made_by)
        .filter_map(|(f, c)| {
            let label = match req.label.as_deref().filter(|l| !l.is_empty()) {
                Some(name) => field(f, name).unwrap_or_else(|| format!("{} (no {name})", shown_text(&f.info.name))),
                None => shown_text(&f.info.name),
            };
            let group = req.group_by.as_deref().filter(|g| !g.is_empty()).and_then(|g| field(f, g));
            Some((f.id.clone(), label, group, f.results.clone()?, c))
        })
        .collect();
    let skipped = gathered.skipped;
    let req = req.clone();
    let made = made_now();
    let left = skipped.clone();
    let count = owned.len();
    // Diversity's share of the machine: computed a few at a time in this process, as the
    // diversity tabs are.
    let _turn = crate::diversity::COMPUTING
        .acquire()
        .await
        .map_err(|_| CmdError::new("busy", "Stopping; try again in a moment."))?;
    let report = tokio::task::spawn_blocking(move || {
        let samples: Vec<ReportSample<'_>> = owned
            .iter()
            .map(|(id, label, group, results, c)| ReportSample {
                id: id.clone(),
                label: label.clone(),
                group: group.clone(),
                results,
                classification: c.clone(),
            })
            .collect();
        assemble(&samples, &left, &req, checked(lab), made)
    })
    .await
    .map_err(|e| CmdError::new("failed", format!("The report could not be made ({e}).")))??;
    Ok((report, skipped, count))
}

/// Now, as a report's cover says it (UTC).
fn made_now() -> String {
    chrono::Utc::now().format("Made %Y-%m-%d %H:%M UTC").to_string()
}

/// The report as `format` (`pdf` or `html`): its bytes and media type.
pub fn render(report: &Report, format: &str) -> CmdResult<(Vec<u8>, &'static str)> {
    let failed = |e: mgds_report::Error| CmdError::new("failed", sentence(&e.to_string()));
    match format {
        "pdf" => Ok((mgds_report::pdf(report).map_err(failed)?, "application/pdf")),
        "html" => Ok((mgds_report::html(report).map_err(failed)?.into_bytes(), "text/html")),
        other => {
            let shown: String = other.chars().take(20).collect();
            Err(CmdError::new("invalid", format!("There is no report as {shown:?}: choose pdf or html.")))
        }
    }
}

/// The file name a report of `req` holding `samples` samples is offered under.
pub fn file_name(req: &ComparisonReportRequest, samples: usize, format: &str) -> String {
    let ext = if format == "html" { "html" } else { "pdf" };
    format!("report_{samples}_samples_{}.{ext}", req.rank.trim().to_lowercase().replace(' ', "_"))
}

/// A comparison report made as `format` (`pdf` or `html`): its bytes, media type and file name,
/// with the samples left out.
pub struct Rendered {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Its media type.
    pub mime: &'static str,
    /// The name it is offered under.
    pub file_name: String,
    /// Samples in it.
    pub samples: usize,
    /// Samples left out, with why.
    pub skipped: Vec<SkippedSample>,
}

/// [`comparison_report`] typeset as `format`.
pub async fn make(src: Source<'_>, req: &ComparisonReportRequest, format: &str) -> CmdResult<Rendered> {
    if !["pdf", "html"].contains(&format) {
        let shown: String = format.chars().take(20).collect();
        return Err(CmdError::new("invalid", format!("There is no report as {shown:?}: choose pdf or html.")));
    }
    let (report, skipped, count) = comparison_report(src, req, &|_| {}).await?;
    let kind = format.to_string();
    let (bytes, mime) = tokio::task::spawn_blocking(move || render(&report, &kind))
        .await
        .map_err(|e| CmdError::new("failed", format!("The report could not be typeset ({e}).")))??;
    Ok(Rendered { bytes, mime, file_name: file_name(req, count, format), samples: count, skipped })
}

/// Keeps `r` as a document of the service (the uploader's, to share): its id.
pub async fn keep(client: &mgds_client::Client, r: &Rendered) -> CmdResult<String> {
    let dir = tempfile::tempdir().map_err(|e| CmdError::new("file", sentence(&e.to_string())))?;
    let path = dir.path().join(&r.file_name);
    crate::files::write_file(&path, &r.bytes)?;
    let doc = client.documents().upload(&path).filename(r.file_name.clone()).send().await?;
    Ok(crate::samples::id_of(&doc.uri))
}
