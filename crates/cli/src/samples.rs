//! `mgds samples ...` and `mgds upload`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use mgds_api::{MetadataInput, Ref, Visibility};
use mgds_client::{Bandwidth, CancellationToken, Filter, Sort};
use mgds_upload::{Progress, Source, Target, Upload, UploadError};

use crate::connect::Ctx;
use crate::output::{Column, print_list, print_one};

const COLUMNS: &[Column] = &[
    ("id", "id"),
    ("filename", "filename"),
    ("size", "size"),
    ("visibility", "visibility"),
    ("project", "project"),
    ("created", "created_at"),
];

/// Options of `mgds samples list`.
#[derive(clap::Args, Debug)]
pub struct SampleListArgs {
    /// A raw `where` filter (JSON), combined with the options below.
    #[arg(long = "where")]
    pub filter: Option<String>,
    /// Only samples whose file name contains this (case-insensitive).
    #[arg(long)]
    pub filename: Option<String>,
    /// Only samples with this tag (id).
    #[arg(long)]
    pub tag: Option<String>,
    /// Only samples in this project (id).
    #[arg(long)]
    pub project: Option<String>,
    /// Only samples created at or after this date (YYYY-MM-DD or RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// Only samples created before this date.
    #[arg(long)]
    pub until: Option<String>,
    /// Sort field; prefix with `-` for descending (e.g. `-created_at`).
    #[arg(long, allow_hyphen_values = true)]
    pub sort: Option<String>,
    #[command(flatten)]
    pub list: crate::resources::ListArgs,
}

/// `mgds samples ...`.
#[derive(clap::Subcommand, Debug)]
pub enum SamplesCommand {
    /// List samples.
    List(SampleListArgs),
    /// Show one sample as JSON.
    Show {
        /// The sample id.
        id: String,
    },
    /// The reads' quality control of samples, as the service counted it with their
    /// classification: reads, bases, lengths and N50, quality, GC, N, and whether each passed
    /// the thresholds (the reasons in words).
    Qc(QcArgs),
    /// Change a sample's visibility, project or tags.
    Update {
        /// The sample id.
        id: String,
        /// public, shared or private.
        #[arg(long)]
        visibility: Option<String>,
        /// Move it to this project (id).
        #[arg(long, conflicts_with = "no_project")]
        project: Option<String>,
        /// Take it out of its project.
        #[arg(long)]
        no_project: bool,
    },
    /// Show a sample's metadata as JSON, or change it with --set and --unset.
    ///
    /// The standard fields (name, description, external_sample_id, platform, library_type,
    /// sample_type, date_collected, date_sequenced, location_string, location_lat,
    /// location_lon, starred) are set as such; any other key is a custom field.
    Metadata {
        /// The sample id.
        id: String,
        /// Set a field: `name="gut day 1"`, `platform=Illumina MiSeq`, `site=A` (repeatable).
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Clear a field (repeatable).
        #[arg(long, value_name = "KEY")]
        unset: Vec<String>,
    },
    /// Make a copy of a sample without its host's reads (to share a sample taken from a
    /// person): every read its classification called the host (the taxa its database names,
    /// human by default, and those below them) goes, whether or not the call passed the
    /// confidence filter; unclassified reads stay. The copy is a new sample of yours, with the
    /// source's metadata, classified as any new sample; the source is not changed.
    RemoveHost {
        /// The sample id.
        id: String,
        /// The classification whose calls say which reads are the host's (default: the
        /// sample's newest made with a database that names a host).
        #[arg(long, value_name = "ID")]
        classification: Option<String>,
        /// Wait until the copy is written, and say what was removed.
        #[arg(long)]
        wait: bool,
    },
    /// Delete a sample, its file and its analyses.
    Delete {
        /// The sample id.
        id: String,
    },
}

fn build_filter(a: &SampleListArgs) -> Result<Filter> {
    let mut f = match &a.filter {
        Some(raw) => {
            let v: serde_json::Value = serde_json::from_str(raw).context("--where is not valid JSON")?;
            let serde_json::Value::Object(m) = v else { bail!("--where must be a JSON object") };
            m.into_iter().fold(Filter::new(), |f, (k, v)| f.eq(&k, v))
        }
        None => Filter::new(),
    };
    if let Some(n) = &a.filename {
        f = f.icontains("filename", n);
    }
    if let Some(t) = &a.tag {
        f = f.eq_ref("tags", &Ref::new("tags", t));
    }
    if let Some(p) = &a.project {
        f = f.eq_ref("project", &Ref::new("projects", p));
    }
    if let Some(s) = &a.since {
        f = f.gte("created_at", s.as_str());
    }
    if let Some(u) = &a.until {
        f = f.op("created_at", "$lt", u.as_str());
    }
    Ok(f)
}

/// The metadata fields that are not custom, and the type of their values.
const STANDARD_FIELDS: &[(&str, FieldKind)] = &[
    ("name", FieldKind::Text),
    ("description", FieldKind::Text),
    ("external_sample_id", FieldKind::Text),
    ("platform", FieldKind::Text),
    ("library_type", FieldKind::Text),
    ("sample_type", FieldKind::Text),
    ("date_collected", FieldKind::Text),
    ("date_sequenced", FieldKind::Text),
    ("location_string", FieldKind::Text),
    ("location_lat", FieldKind::Number),
    ("location_lon", FieldKind::Number),
    ("starred", FieldKind::Flag),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum FieldKind {
    Text,
    Number,
    Flag,
}

/// The change `--set KEY=VALUE` and `--unset KEY` ask for, as the `PATCH /metadata` body. The
/// service replaces the custom fields as a whole, so the ones kept are sent with the change.
fn metadata_change(
    custom: &serde_json::Map<String, serde_json::Value>,
    set: &[String],
    unset: &[String],
) -> Result<MetadataInput> {
    use serde_json::Value;
    let mut body = serde_json::Map::new();
    let mut custom = custom.clone();
    let mut custom_changed = false;
    for kv in set {
        let (k, v) = kv.split_once('=').with_context(|| format!("--set {kv:?} must be KEY=VALUE"))?;
        let k = k.trim();
        let value = match STANDARD_FIELDS.iter().find(|(name, _)| *name == k).map(|(_, kind)| *kind) {
            Some(FieldKind::Text) => Value::String(v.to_string()),
            Some(FieldKind::Number) => {
                let n: f64 = v.trim().parse().with_context(|| format!("--set {k}: {v:?} is not a number"))?;
                serde_json::json!(n)
            }
            Some(FieldKind::Flag) => match v.trim() {
                "true" | "yes" | "1" => Value::Bool(true),
                "false" | "no" | "0" => Value::Bool(false),
                other => bail!("--set {k}: {other:?} is not true or false"),
            },
            None => {
                custom.insert(k.to_string(), Value::String(v.to_string()));
                custom_changed = true;
                continue;
            }
        };
        body.insert(k.to_string(), value);
    }
    for k in unset {
        match STANDARD_FIELDS.iter().find(|(name, _)| name == k) {
            Some((_, FieldKind::Flag)) => {
                body.insert(k.clone(), Value::Bool(false));
            }
            Some(_) => {
                body.insert(k.clone(), Value::Null);
            }
            None => {
                if custom.remove(k).is_none() {
                    bail!("--unset {k}: the sample has no field {k:?}");
                }
                custom_changed = true;
            }
        }
    }
    if custom_changed {
        body.insert("custom".into(), Value::Object(custom));
    }
    serde_json::from_value(Value::Object(body)).context("the metadata change")
}

/// `mgds samples qc`.
#[derive(clap::Args, Debug)]
pub struct QcArgs {
    /// The sample ids.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Write the table as csv or tsv to stdout instead of text (thresholds as `#` lines).
    #[arg(long, value_parser = ["text", "csv", "tsv"], default_value = "text")]
    format: String,
    /// One sample: write its chart (four panels and the verdict) here, SVG or PNG by the
    /// extension.
    #[arg(long, value_name = "FILE")]
    chart: Option<std::path::PathBuf>,
    /// One sample: write its base quality by position here as CSV.
    #[arg(long, value_name = "FILE")]
    positions: Option<std::path::PathBuf>,
    /// Exit with status 3 when a sample failed a threshold or has no quality control.
    #[arg(long)]
    strict: bool,
}

/// The most samples one `mgds samples qc` looks at.
const MAX_QC_SAMPLES: usize = 1_000;

/// `mgds samples qc`: each sample's figures from its primary classification's results.
async fn qc(ctx: &Ctx, a: QcArgs) -> Result<()> {
    use futures::StreamExt;
    use mgds_app::qc::{NO_QC, QcRow};
    if a.ids.len() > MAX_QC_SAMPLES {
        anyhow::bail!("look at {MAX_QC_SAMPLES} samples at most at once ({} given)", a.ids.len());
    }
    if (a.chart.is_some() || a.positions.is_some()) && a.ids.len() != 1 {
        anyhow::bail!("--chart and --positions draw one sample: give one id ({} given)", a.ids.len());
    }
    let chart_format = a.chart.as_deref().map(crate::compare::picture_format).transpose()?;
    let client = &ctx.client;
    // The results are kept only for the one sample a file is drawn of.
    let keep = a.chart.is_some() || a.positions.is_some();
    let rows: Vec<(QcRow, Option<std::sync::Arc<mgds_api::ClassificationResults>>)> =
        futures::stream::iter(a.ids.iter().cloned())
            .map(|id| async move {
                let shown_id = mgds_app::text::shown(&id, 40);
                let none = |name: String, why: &str| (QcRow { id: shown_id.clone(), name, qc: None, why: Some(why.into()) }, None);
                let sample = match client.samples().get(id.as_str()).await {
                    Ok(s) => s,
                    Err(e) if e.status() == Some(404) => {
                        return anyhow::Ok(none(shown_id.clone(), "No such sample, or it is not shared with you."));
                    }
                    Err(e) => return Err(anyhow::Error::from(e).context(format!("sample {shown_id}"))),
                };
                let name = mgds_app::text::shown(&sample.filename.clone().unwrap_or_else(|| id.clone()), 100);
                let Some(c) = sample.primary_classification else {
                    return Ok(none(name, "It has no classification yet: its upload is not confirmed, or the service has no classification database."));
                };
                let analysis = client.analyses().get(c.id()).await?;
                if !analysis.complete {
                    return Ok(none(name, "Its classification is still running; try again when it has finished."));
                }
                if !analysis.success {
                    return Ok(none(name, "Its classification failed, so its reads were not counted."));
                }
                let r = std::sync::Arc::new(client.classifications().results(c.id()).await?);
                Ok(match r.qc.clone().map(mgds_app::qc::bounded) {
                    Some(q) => (QcRow { id: shown_id.clone(), name, qc: Some(q), why: None }, keep.then_some(r)),
                    None => none(name, NO_QC),
                })
            })
            .buffered(8)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
    if let Some((row, Some(results))) = rows.first() {
        for (path, what) in [(&a.chart, chart_format.unwrap_or("svg")), (&a.positions, "positions")] {
            if let Some(path) = path {
                let bytes = mgds_app::qc::file(results.clone(), &row.name, what).await?;
                std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
    } else if a.chart.is_some() || a.positions.is_some() {
        let why = rows.first().and_then(|(r, _)| r.why.clone()).unwrap_or_default();
        anyhow::bail!("no chart for sample {}: {why}", a.ids[0]);
    }
    let rows: Vec<QcRow> = rows.into_iter().map(|(r, _)| r).collect();
    match a.format.as_str() {
        "csv" | "tsv" => {
            let delimiter = if a.format == "tsv" { b'\t' } else { b',' };
            mgds_app::qc::write_table(std::io::stdout().lock(), &rows, delimiter)?;
        }
        _ => print_qc(&rows),
    }
    let bad = rows.iter().filter(|r| r.qc.as_ref().is_none_or(|q| !q.passed())).count();
    if a.strict && bad > 0 {
        eprintln!("{bad} of {} samples failed a threshold or have no quality control", rows.len());
        std::process::exit(3);
    }
    Ok(())
}

/// The quality control as text: a line of figures per sample, then why each failed.
fn print_qc(rows: &[mgds_app::qc::QcRow]) {
    use mgds_api::thousands;
    println!(
        "{:<24} {:<6} {:>12} {:>15} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6}",
        "sample", "qc", "reads", "bases", "median", "N50", "mean Q", "Q30 %", "GC %", "N %"
    );
    let cut = |s: &str| -> String {
        if s.chars().count() > 24 { s.chars().take(23).chain(['…']).collect() } else { s.to_string() }
    };
    for r in rows {
        match &r.qc {
            Some(q) => println!(
                "{:<24} {:<6} {:>12} {:>15} {:>8} {:>8} {:>6} {:>6} {:>6.1} {:>6.2}",
                cut(&r.name),
                if q.passed() { "pass" } else { "FAIL" },
                thousands(q.reads),
                thousands(q.bases),
                thousands(q.median_length),
                thousands(q.n50),
                q.mean_quality.map_or("-".into(), |v| format!("{v:.1}")),
                q.q30_share.map_or("-".into(), |v| format!("{:.1}", v * 100.0)),
                q.gc * 100.0,
                q.n_share * 100.0
            ),
            None => println!("{:<24} {:<6} -", cut(&r.name), "none"),
        }
    }
    for r in rows {
        if let Some(q) = &r.qc {
            for f in &q.failures {
                println!("{} ({}): {f}", r.name, r.id);
            }
        } else if let Some(why) = &r.why {
            println!("{} ({}): {why}", r.name, r.id);
        }
    }
}

/// Runs a `samples` command.
pub async fn run(ctx: &Ctx, cmd: SamplesCommand) -> Result<()> {
    let samples = ctx.client.samples();
    match cmd {
        SamplesCommand::List(a) => {
            let mut req = samples.list().filter(build_filter(&a)?);
            if let Some(s) = &a.sort {
                req = req.sort(match s.strip_prefix('-') {
                    Some(field) => Sort::desc(field),
                    None => Sort::asc(s),
                });
            }
            let items = crate::resources::fetch(req, &a.list, "samples").await?;
            print_list(&a.list.out, &items, COLUMNS)
        }
        SamplesCommand::Show { id } => print_one(&samples.get(id.as_str()).await?),
        SamplesCommand::Qc(a) => qc(ctx, a).await,
        SamplesCommand::Update { id, visibility, project, no_project } => {
            let mut u = samples.update(id.as_str());
            if let Some(v) = visibility {
                u = u.visibility(
                    Visibility::parse(&v)
                        .with_context(|| format!("{v:?} is not a visibility; use public, shared or private"))?,
                );
            }
            if let Some(p) = project {
                u = u.project(p.as_str());
            }
            if no_project {
                u = u.no_project();
            }
            print_one(&u.send().await?)
        }
        SamplesCommand::Metadata { id, set, unset } => {
            let sample = samples.get(id.as_str()).await?;
            let record = sample.metadata.as_ref().with_context(|| format!("sample {id} has no metadata record"))?;
            let records = ctx.client.metadata();
            let current = records.get(record.id()).await?;
            if set.is_empty() && unset.is_empty() {
                return print_one(&current);
            }
            let input = metadata_change(&current.custom, &set, &unset)?;
            print_one(&records.update(record.id()).fields(input).send().await?)
        }
        SamplesCommand::RemoveHost { id, classification, wait } => {
            // The copy needs a finished classification: one still running (on the local
            // profile, this command's own service runs it) is waited for first.
            let running = match &classification {
                Some(c) => Some(c.clone()),
                None => samples.get(id.as_str()).await?.primary_classification.map(|c| c.id().to_string()),
            };
            if let Some(c) = running
                && !ctx.client.analyses().get(c.as_str()).await?.complete
            {
                eprintln!("waiting for classification {c} of sample {id} to finish");
                ctx.client.jobs().wait(c.as_str()).send().await?;
            }
            let copy = samples.remove_host(id.as_str(), classification.as_deref()).await?;
            let copy_id = mgds_client::ResourceId::resource_id(&copy).to_string();
            println!("{copy_id}");
            eprintln!(
                "sample {copy_id} ({}) is being made from {id} without its host reads",
                copy.filename.as_deref().unwrap_or("copy")
            );
            if wait { wait_for_copy(ctx, &id, &copy_id).await } else { Ok(()) }
        }
        SamplesCommand::Delete { id } => {
            samples.delete(id.as_str()).await?;
            eprintln!("deleted sample {id}");
            Ok(())
        }
    }
}

/// Waits (up to an hour) until the copy `copy_id` of `source` without its host reads is
/// written, then says what was removed; a copy that could not be made says why.
async fn wait_for_copy(ctx: &Ctx, source: &str, copy_id: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    loop {
        let s = ctx.client.samples().get(copy_id).await?;
        if let Some(why) = &s.import_error {
            bail!("the copy of {source} without its host reads could not be made: {why}");
        }
        if s.visibility != Visibility::Importing {
            let custom = match &s.metadata {
                Some(m) => ctx.client.metadata().get(m.id()).await?.custom,
                None => Default::default(),
            };
            let removed = custom.get("host_reads_removed").and_then(serde_json::Value::as_u64).unwrap_or(0);
            let percent = custom.get("host_reads_removed_percent").and_then(serde_json::Value::as_f64).unwrap_or(0.0);
            eprintln!(
                "removed {} host reads ({percent:.2}% of the sample's reads); {copy_id} holds the rest",
                mgds_api::thousands(removed)
            );
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("the copy {copy_id} is still being made after an hour; `mgds samples show {copy_id}` follows it");
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Options of `mgds upload`.
#[derive(clap::Args, Debug)]
pub struct UploadArgs {
    /// FASTQ/FASTA files (gzipped or not), or folders to upload every sequence file of.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Tag every sample with this name (repeatable).
    #[arg(long)]
    pub tag: Vec<String>,
    /// Put every sample in this project (id).
    #[arg(long)]
    pub project: Option<String>,
    /// Custom metadata `key=value` (repeatable).
    #[arg(long = "metadata", value_name = "KEY=VALUE")]
    pub metadata: Vec<String>,
    /// Give the file to the pre-uploaded sample with this external id (one file only).
    #[arg(long)]
    pub external_sample_id: Option<String>,
    /// Upload each R1/R2 pair (recognised by file name or read headers) as one sample, its reads
    /// interleaved into one gzipped FASTQ.
    #[arg(long)]
    pub interleave: bool,
    /// Upload speed limit in bytes per second (suffixes k, M, G: 10M).
    #[arg(long, value_parser = crate::watch::parse_bytes, value_name = "RATE")]
    pub bandwidth: Option<u64>,
    /// Print the samples as JSON at the end.
    #[arg(long)]
    pub json: bool,
}

/// Ctrl-C stopped the command; what it was doing was cleaned up. Exit code 130.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: {0}")]
pub struct Interrupted(pub String);

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:30!} {bar:30} {bytes:>10}/{total_bytes:10} {binary_bytes_per_sec:>12} {eta:>4} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// `mgds upload`: validates every file first, then makes the samples one by one through the
/// upload pipeline with a progress bar each and a total; prints the new sample ids (or JSON) on
/// stdout and a summary on stderr.
pub async fn upload(ctx: &Ctx, a: UploadArgs) -> Result<()> {
    let files = mgds_upload::sequence_files(&a.paths)?;
    if files.is_empty() {
        bail!("no FASTA/FASTQ files found in the given paths");
    }
    if a.external_sample_id.is_some() && files.len() > 1 {
        bail!("--external-sample-id names one pre-uploaded sample; give one file");
    }
    let mut custom = serde_json::Map::new();
    for kv in &a.metadata {
        let (k, v) = kv.split_once('=').with_context(|| format!("--metadata {kv:?} must be KEY=VALUE"))?;
        custom.insert(k.trim().to_string(), serde_json::Value::String(v.to_string()));
    }
    // A first look at every file before anything is sent: a file that is not sequence data at
    // all stops the command here. Every record is then checked while its file is sent, and a
    // file with a bad record anywhere is not confirmed (nothing of it stays on the service).
    let mut problems = Vec::new();
    for f in &files {
        let path = f.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || mgds_formats::sniff(&path).map_err(Box::new)).await? {
            problems.push(format!("{}: {e}", f.display()));
        }
    }
    if !problems.is_empty() {
        bail!("nothing was uploaded; fix these files first:\n  {}", problems.join("\n  "));
    }
    // What to send: each file, or with --interleave each pair as one interleaved sample.
    let plan = mgds_upload::plan(&files, a.interleave);
    for (r1, r2) in &plan.unjoined_pairs {
        eprintln!(
            "hint: {} and {} look like the two reads of a pair; pass --interleave to upload them as one sample",
            r1.display(),
            r2.display()
        );
    }
    let staging = tempfile::tempdir()?;
    // Ctrl-C cancels the upload under way (nothing of it is left on the service) and ends the
    // command.
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let bandwidth = a.bandwidth.map(Bandwidth::new);
    let multi = MultiProgress::with_draw_target(if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    });
    let total_bytes: u64 = plan.sources.iter().map(Source::input_bytes).sum();
    let total = multi.add(ProgressBar::new(total_bytes).with_style(bar_style()).with_prefix("total"));
    let started = Instant::now();
    let mut done = Vec::new();
    let mut failed = Vec::new();
    let mut before = 0;
    for source in &plan.sources {
        let name = source.default_filename();
        let bar = multi.insert_before(&total, ProgressBar::new(0).with_style(bar_style()).with_prefix(name.clone()));
        let (b, t, base, input) = (bar.clone(), total.clone(), before, source.input_bytes());
        if cancel.is_cancelled() {
            break;
        }
        let mut up = Upload::new(&ctx.client, source.clone())
            .staging(staging.path())
            .cancel_token(cancel.clone())
            .progress(move |p| match p {
                Progress::Preparing => b.set_message("joining the pair"),
                Progress::Sending { sent, total } => {
                    b.set_message("");
                    b.set_length(total);
                    b.set_position(sent);
                    // The total counts files on disk; a joined pair's sent bytes are scaled to them.
                    t.set_position(base + sent.saturating_mul(input) / total.max(1));
                }
                Progress::Confirming => b.set_message("confirming"),
                Progress::Retrying { wait_secs, reason, .. } => {
                    b.set_message(format!("retrying in {wait_secs} s: {reason}"));
                }
            });
        for tag in &a.tag {
            up = up.tag(tag.clone());
        }
        if let Some(p) = &a.project {
            up = up.project(p.clone());
        }
        if !custom.is_empty() {
            up = up.metadata(MetadataInput { custom: Some(custom.clone()), ..MetadataInput::default() });
        }
        if let Some(e) = &a.external_sample_id {
            up = up.target(Target::ExternalSampleId(e.clone()));
        }
        if let Some(b) = &bandwidth {
            up = up.bandwidth(b.clone());
        }
        let (shown, file) = (multi.clone(), name.clone());
        up = up.check(move |s| shown.suspend(|| eprintln!("{file}: {}", describe(s))));
        match up.send().await {
            Ok(sample) => {
                bar.finish();
                done.push(sample);
            }
            Err(UploadError::Cancelled) => {
                bar.abandon();
                break;
            }
            Err(e) => {
                bar.abandon();
                let what = source.files().iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
                failed.push(format!("{what}: {e}"));
            }
        }
        before += input;
        total.set_position(before);
    }
    total.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    if a.json {
        print_one(&done)?;
    } else {
        for s in &done {
            println!("{}", Ref { uri: s.uri.clone() }.id());
        }
    }
    eprintln!(
        "uploaded {} of {} samples ({:.1} MB in {secs:.1} s)",
        done.len(),
        plan.sources.len(),
        before as f64 / 1e6
    );
    if cancel.is_cancelled() {
        return Err(Interrupted(format!(
            "{} of {} samples were uploaded; the one under way was cancelled and left nothing behind",
            done.len(),
            plan.sources.len()
        ))
        .into());
    }
    if !failed.is_empty() {
        bail!("{} uploads failed:\n  {}", failed.len(), failed.join("\n  "));
    }
    Ok(())
}

/// A checked file in a line: format, compression, reads, bases and read lengths.
fn describe(s: &mgds_formats::Summary) -> String {
    let compression = if s.compression == mgds_formats::Compression::None {
        "uncompressed".to_string()
    } else {
        format!("{:?}", s.compression).to_lowercase()
    };
    format!(
        "{}, {compression}, {} reads, {} bases, read length {}-{}",
        format!("{:?}", s.format).to_uppercase(),
        s.records,
        s.bases,
        s.min_len,
        s.max_len
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_changes_set_standard_fields_and_keep_the_other_custom_ones() {
        let custom = json!({"site": "A", "run": "7"}).as_object().unwrap().clone();
        let set = ["name=gut day 1".to_string(), "location_lat=51.5".into(), "starred=yes".into(), "site=B".into()];
        let input = metadata_change(&custom, &set, &["run".into(), "platform".into()]).unwrap();
        let body = serde_json::to_value(&input).unwrap();
        assert_eq!(
            body,
            json!({"name": "gut day 1", "location_lat": 51.5, "starred": true, "platform": null, "custom": {"site": "B"}})
        );
        // Nothing custom touched: the custom fields are not sent at all.
        let body = serde_json::to_value(metadata_change(&custom, &["name=x".into()], &[]).unwrap()).unwrap();
        assert_eq!(body, json!({"name": "x"}));
        let err = |set: &[&str], unset: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let unset: Vec<String> = unset.iter().map(|s| s.to_string()).collect();
            format!("{:#}", metadata_change(&custom, &set, &unset).unwrap_err())
        };
        assert!(err(&["location_lon=east"], &[]).contains("location_lon"));
        assert!(err(&["name"], &[]).contains("KEY=VALUE"));
        assert!(err(&[], &["colour"]).contains("no field \"colour\""));
    }
}
