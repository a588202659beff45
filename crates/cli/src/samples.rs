//! `mgds samples ...` and `mgds upload`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use mgds_api::{MetadataInput, Ref, Visibility};
use mgds_client::{Filter, Sort};

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
        SamplesCommand::Delete { id } => {
            samples.delete(id.as_str()).await?;
            eprintln!("deleted sample {id}");
            Ok(())
        }
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
    /// Print the samples as JSON at the end.
    #[arg(long)]
    pub json: bool,
}

/// The sequence files under `paths` (folders are searched, hidden files skipped), sorted.
fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).with_context(|| format!("cannot read folder {}", d.display()))? {
                    let e = e?;
                    let path = e.path();
                    let name = e.file_name().to_string_lossy().to_string();
                    if name.starts_with('.') {
                        continue;
                    }
                    if path.is_dir() {
                        stack.push(path);
                    } else if mgds_api::clean_sample_filename(&name).is_ok() {
                        out.push(path);
                    }
                }
            }
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            bail!("{} does not exist", p.display());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:30!} {bar:30} {bytes:>10}/{total_bytes:10} {binary_bytes_per_sec:>12} {eta:>4}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// `mgds upload`: validates every file first, then uploads them one by one with a progress bar
/// each and a total; prints the new sample ids (or JSON) on stdout and a summary on stderr.
pub async fn upload(ctx: &Ctx, a: UploadArgs) -> Result<()> {
    let files = collect(&a.paths)?;
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
    // Validation first: nothing is sent if any file is bad.
    let mut problems = Vec::new();
    let mut total_bytes = 0;
    for f in &files {
        let path = f.clone();
        match tokio::task::spawn_blocking(move || mgds_formats::validate(&path).map_err(Box::new)).await? {
            Ok(s) => {
                let compression = if s.compression == mgds_formats::Compression::None {
                    "uncompressed".to_string()
                } else {
                    format!("{:?}", s.compression).to_lowercase()
                };
                eprintln!(
                    "{}: {}, {compression}, {} reads, {} bases, read length {}-{}",
                    f.display(),
                    format!("{:?}", s.format).to_uppercase(),
                    s.records,
                    s.bases,
                    s.min_len,
                    s.max_len
                );
                total_bytes += std::fs::metadata(f)?.len();
            }
            Err(e) => problems.push(format!("{}: {e}", f.display())),
        }
    }
    if !problems.is_empty() {
        bail!("nothing was uploaded; fix these files first:\n  {}", problems.join("\n  "));
    }
    // What to send: each file, or with --interleave each pair as one interleaved file.
    let workdir = tempfile::tempdir()?;
    let mut sends: Vec<(PathBuf, Option<String>, bool)> = Vec::new();
    for group in mgds_formats::group_paths(&files) {
        match group {
            mgds_formats::FileGroup::Pair { r1, r2, .. } if a.interleave => {
                let name = mgds_formats::interleaved_name(&r1);
                let out = workdir.path().join(&name);
                eprintln!("interleaving {} and {} into {name}", r1.display(), r2.display());
                let (r1c, r2c, outc) = (r1.clone(), r2.clone(), out.clone());
                tokio::task::spawn_blocking(move || {
                    mgds_formats::interleave(&r1c, &r2c, &outc, mgds_formats::OutputCompression::GZIP).map_err(Box::new)
                })
                .await?
                .with_context(|| format!("cannot interleave {} and {}", r1.display(), r2.display()))?;
                total_bytes += std::fs::metadata(&out)?.len();
                total_bytes -= std::fs::metadata(&r1)?.len() + std::fs::metadata(&r2)?.len();
                sends.push((out, Some(name), true));
            }
            mgds_formats::FileGroup::Pair { r1, r2, .. } => {
                eprintln!(
                    "hint: {} and {} look like the two reads of a pair; pass --interleave to upload them as one sample",
                    r1.display(),
                    r2.display()
                );
                sends.push((r1, None, false));
                sends.push((r2, None, false));
            }
            mgds_formats::FileGroup::Single { path, .. } => sends.push((path, None, false)),
        }
    }
    let multi = MultiProgress::with_draw_target(if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    });
    let total = multi.add(ProgressBar::new(total_bytes).with_style(bar_style()).with_prefix("total"));
    let started = Instant::now();
    let mut done = Vec::new();
    let mut failed = Vec::new();
    let mut before = 0;
    for (f, upload_name, interleaved) in &sends {
        let name = upload_name
            .clone()
            .unwrap_or_else(|| f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
        let bar = multi.insert_before(&total, ProgressBar::new(0).with_style(bar_style()).with_prefix(name.clone()));
        let (b, t, base) = (bar.clone(), total.clone(), before);
        let mut req = ctx.client.samples().upload(f.clone()).progress(move |sent, size| {
            b.set_length(size);
            b.set_position(sent);
            t.set_position(base + sent);
        });
        for tag in &a.tag {
            req = req.tag(tag.clone());
        }
        if let Some(p) = &a.project {
            req = req.project(p.as_str());
        }
        if !custom.is_empty() {
            req = req.metadata(MetadataInput { custom: Some(custom.clone()), ..MetadataInput::default() });
        }
        if let Some(e) = &a.external_sample_id {
            req = req.external_sample_id(e.clone());
        }
        if let Some(n) = upload_name {
            req = req.filename(n.clone()).interleaved(*interleaved);
        }
        match req.send().await {
            Ok(sample) => {
                bar.finish();
                done.push(sample);
            }
            Err(e) => {
                bar.abandon();
                failed.push(format!("{}: {e}", f.display()));
            }
        }
        before += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
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
    eprintln!("uploaded {} of {} files ({:.1} MB in {secs:.1} s)", done.len(), sends.len(), before as f64 / 1e6);
    if !failed.is_empty() {
        bail!("{} uploads failed:\n  {}", failed.len(), failed.join("\n  "));
    }
    Ok(())
}
