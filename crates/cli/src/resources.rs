//! `mgds documents|projects|tags|jobs|analyses|readlevel|batches|preupload|schema`: the other
//! collections of the service, as commands.
//!
//! Data goes to stdout (a table for lists, `--json`/`--csv` for scripts, JSON for single
//! records); messages go to stderr.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mgds_api::Ref;
use mgds_client::{Destination, Filter, ListRequest};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::connect::Ctx;
use crate::output::{Column, OutputArgs, print_list, print_one};

/// Paging options of the list commands.
#[derive(clap::Args, Debug, Clone)]
pub struct ListArgs {
    /// Page number.
    #[arg(long, default_value_t = 1)]
    pub page: u32,
    /// Records per page (at most 1000).
    #[arg(long, default_value_t = 50)]
    pub per_page: u32,
    /// Every page.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Fetches the page (or every page) the options ask for; notes the paging on stderr.
pub(crate) async fn fetch<T: DeserializeOwned + Send + 'static>(
    req: ListRequest<T>,
    a: &ListArgs,
    noun: &str,
) -> Result<Vec<T>> {
    let req = req.per_page(a.per_page).page(a.page);
    if a.all {
        return Ok(req.all().await?);
    }
    let page = req.send().await?;
    if let Some(total) = page.total
        && total > u64::from(page.per_page)
    {
        eprintln!(
            "page {} of {} ({total} {noun}); pass --all for every page",
            page.page,
            total.div_ceil(u64::from(page.per_page)).max(1)
        );
    }
    Ok(page.items)
}

/// Where a download goes. `-o PATH` naming anything but a folder is the user's choice and is
/// written, replacing a file there. Otherwise the file goes into `-o FOLDER` or the current
/// folder under `name`, which may come from the service: it becomes a file name only through
/// [`mgds_client::safe_file_name`] (`fallback` when nothing of it is usable), and it never
/// replaces a file already there unless `force`.
fn destination(output: Option<PathBuf>, name: &str, fallback: &str, force: bool) -> Result<Destination> {
    let folder = match output {
        Some(p) if p.is_dir() => p,
        Some(p) => return Ok(Destination::chosen(p)),
        // An empty folder, not `.`: the message names `report.pdf`, not `./report.pdf`.
        None => PathBuf::new(),
    };
    match Destination::new_file(&folder, name, fallback, force) {
        Err(mgds_client::Error::FileExists { path }) => {
            bail!("{} already exists; pass -o PATH to choose where to write, or --force to replace it", path.display())
        }
        other => Ok(other?),
    }
}

fn wrote(path: &Path, bytes: u64) {
    eprintln!("wrote {bytes} bytes to {}", path.display());
}

// ---------------------------------------------------------------------------------------------
// Documents

const DOCUMENT_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("filename", "filename"),
    ("size", "size"),
    ("description", "description"),
    ("uploader", "uploader"),
    ("created", "created_at"),
];

/// `mgds documents ...`.
#[derive(clap::Subcommand, Debug)]
pub enum DocumentsCommand {
    /// List the documents you uploaded and those shared with you.
    List(ListArgs),
    /// Upload a file of any type as a document and print it as JSON.
    Upload {
        /// The file.
        file: PathBuf,
    },
    /// Download a document (to its own file name in the current folder by default).
    ///
    /// The service's file name is used only as a name, never as a path: only its last part is
    /// kept, and a name that is unsafe or unusable on any system becomes `document-<ID>`.
    Download {
        /// The document id.
        id: String,
        /// Write here instead (a file, or a folder to write into).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Replace a file already there under the document's name (a file given with -o is
        /// always written).
        #[arg(long)]
        force: bool,
    },
    /// Let another user download a document; prints it as JSON.
    Share {
        /// The document id.
        id: String,
        /// The user's id.
        user_id: String,
    },
    /// Stop another user downloading a document; prints it as JSON.
    Unshare {
        /// The document id.
        id: String,
        /// The user's id.
        user_id: String,
    },
    /// Delete a document you uploaded.
    Delete {
        /// The document id.
        id: String,
    },
}

/// Runs a `documents` command.
pub async fn run_documents(ctx: &Ctx, cmd: DocumentsCommand) -> Result<()> {
    let docs = ctx.client.documents();
    match cmd {
        DocumentsCommand::List(a) => print_list(&a.out, &fetch(docs.list(), &a, "documents").await?, DOCUMENT_COLUMNS),
        DocumentsCommand::Upload { file } => {
            if !file.is_file() {
                bail!("{} is not a file", file.display());
            }
            let d =
                docs.upload(file.clone()).send().await.with_context(|| format!("cannot upload {}", file.display()))?;
            eprintln!("uploaded {} as document {}", file.display(), Ref { uri: d.uri.clone() }.id());
            print_one(&d)
        }
        DocumentsCommand::Download { id, output, force } => {
            let d = docs.get(id.as_str()).await?;
            let dest = destination(output, &d.filename, &format!("document-{id}"), force)?;
            let n = docs
                .download(id.as_str(), dest.clone())
                .await
                .with_context(|| format!("cannot download document {id}"))?;
            wrote(dest.path(), n);
            Ok(())
        }
        DocumentsCommand::Share { id, user_id } => print_one(&docs.share(id.as_str(), user_id.as_str()).await?),
        DocumentsCommand::Unshare { id, user_id } => print_one(&docs.unshare(id.as_str(), user_id.as_str()).await?),
        DocumentsCommand::Delete { id } => {
            docs.delete(id.as_str()).await?;
            eprintln!("deleted document {id}");
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Projects

const PROJECT_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("project_name", "project_name"),
    ("name", "name"),
    ("public", "public"),
    ("owner", "owner"),
    ("description", "description"),
];

/// `mgds projects ...`.
#[derive(clap::Subcommand, Debug)]
pub enum ProjectsCommand {
    /// Create a project and print it as JSON.
    Create {
        /// Short name: 3 to 15 of a-z A-Z 0-9 _ -, unique in your organisation.
        project_name: String,
        /// Display name (default: the short name).
        #[arg(long)]
        name: Option<String>,
        /// Free-text description.
        #[arg(long)]
        description: Option<String>,
        /// Let anyone see it.
        #[arg(long)]
        public: bool,
    },
    /// List the projects you can see.
    List(ListArgs),
    /// Show one project as JSON.
    Show {
        /// The project id.
        id: String,
    },
    /// Add a user to a project (or change their permissions); prints the project as JSON.
    AddUser {
        /// The project id.
        id: String,
        /// The user's id.
        user_id: String,
        /// A permission to give (repeatable; default: all of them).
        #[arg(long = "permission", value_name = "P")]
        permissions: Vec<String>,
    },
    /// Remove a user from a project; prints the project as JSON.
    RemoveUser {
        /// The project id.
        id: String,
        /// The user's id.
        user_id: String,
    },
}

/// Runs a `projects` command.
pub async fn run_projects(ctx: &Ctx, cmd: ProjectsCommand) -> Result<()> {
    let projects = ctx.client.projects();
    match cmd {
        ProjectsCommand::Create { project_name, name, description, public } => {
            let mut req = projects.create(project_name.clone());
            if let Some(n) = name {
                req = req.name(n);
            }
            if let Some(d) = description {
                req = req.description(d);
            }
            if public {
                req = req.public(true);
            }
            let p = req.send().await.with_context(|| format!("cannot create project {project_name:?}"))?;
            eprintln!("created project {}", Ref { uri: p.uri.clone() }.id());
            print_one(&p)
        }
        ProjectsCommand::List(a) => print_list(&a.out, &fetch(projects.list(), &a, "projects").await?, PROJECT_COLUMNS),
        ProjectsCommand::Show { id } => print_one(&projects.get(id.as_str()).await?),
        ProjectsCommand::AddUser { id, user_id, permissions } => {
            let permissions = if permissions.is_empty() { None } else { Some(permissions) };
            print_one(&projects.add_user(id.as_str(), user_id.as_str(), permissions).await?)
        }
        ProjectsCommand::RemoveUser { id, user_id } => {
            print_one(&projects.remove_user(id.as_str(), user_id.as_str()).await?)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tags

const TAG_COLUMNS: &[Column] = &[("id", "id"), ("name", "name")];

/// `mgds tags ...`.
#[derive(clap::Subcommand, Debug)]
pub enum TagsCommand {
    /// Tag a sample (creating the tag if needed) and print the tag as JSON.
    Create {
        /// The tag's name.
        name: String,
        /// The sample to tag (id).
        #[arg(long)]
        sample: String,
    },
    /// List the tags you can see.
    List(ListArgs),
}

/// Runs a `tags` command.
pub async fn run_tags(ctx: &Ctx, cmd: TagsCommand) -> Result<()> {
    let tags = ctx.client.tags();
    match cmd {
        TagsCommand::Create { name, sample } => print_one(&tags.create(name, sample.as_str()).await?),
        TagsCommand::List(a) => print_list(&a.out, &fetch(tags.list(), &a, "tags").await?, TAG_COLUMNS),
    }
}

// ---------------------------------------------------------------------------------------------
// Jobs

const JOB_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("name", "name"),
    ("analysis_type", "analysis_type"),
    ("public", "public"),
    ("created", "created_at"),
];

/// `mgds jobs ...`.
#[derive(clap::Subcommand, Debug)]
pub enum JobsCommand {
    /// List the jobs you can run.
    List(ListArgs),
    /// Show one job, with its argument schema, as JSON.
    Show {
        /// The job id.
        id: String,
    },
    /// Run a job on a sample; prints the new analysis id (or, with --wait, the finished analysis).
    Run {
        /// The job id.
        id: String,
        /// The sample to run it on (id).
        #[arg(long)]
        sample: String,
        /// A job argument `key=value` (repeatable); the value is read as JSON if it parses,
        /// else as a string.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// A description of the run (at most 250 characters).
        #[arg(long)]
        description: Option<String>,
        /// Wait for the analysis to finish, print it as JSON, and fail if it failed.
        #[arg(long)]
        wait: bool,
        /// With --wait, give up after this many seconds.
        #[arg(long, default_value_t = 3600, requires = "wait")]
        timeout: u64,
    },
}

/// `key=value` arguments as a JSON object; values that parse as JSON are JSON.
fn parse_job_args(args: &[String]) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for kv in args {
        let (k, v) = kv.split_once('=').with_context(|| format!("--arg {kv:?} must be KEY=VALUE"))?;
        let k = k.trim();
        if k.is_empty() {
            bail!("--arg {kv:?} has no key; use KEY=VALUE");
        }
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        out.insert(k.to_string(), value);
    }
    Ok(out)
}

/// Runs a `jobs` command.
pub async fn run_jobs(ctx: &Ctx, cmd: JobsCommand) -> Result<()> {
    let jobs = ctx.client.jobs();
    match cmd {
        JobsCommand::List(a) => print_list(&a.out, &fetch(jobs.list(), &a, "jobs").await?, JOB_COLUMNS),
        JobsCommand::Show { id } => {
            print_one(&jobs.get(id.as_str()).await.with_context(|| format!("cannot show job {id}"))?)
        }
        JobsCommand::Run { id, sample, args, description, wait, timeout } => {
            let mut run = jobs.run(id.as_str(), sample.as_str()).args(parse_job_args(&args)?);
            if let Some(d) = description {
                run = run.description(d);
            }
            let analysis = run.send().await.with_context(|| {
                format!("cannot run job {id} on sample {sample}; `mgds jobs list` shows the jobs you can run")
            })?;
            let analysis_id = analysis.id().to_string();
            if !wait {
                eprintln!("started analysis {analysis_id}; `mgds analyses show {analysis_id}` shows its progress");
                println!("{analysis_id}");
                return Ok(());
            }
            eprintln!("started analysis {analysis_id}; waiting for it to finish");
            let done = jobs.wait(analysis_id.as_str()).timeout(Duration::from_secs(timeout)).send().await?;
            print_one(&done)?;
            if !done.success {
                let why = done.error_msg.as_deref().filter(|m| !m.is_empty()).unwrap_or("no reason given");
                bail!("analysis {analysis_id} failed: {why}");
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Analyses

const ANALYSIS_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("type", "analysis_type"),
    ("sample", "sample"),
    ("job", "job"),
    ("complete", "complete"),
    ("success", "success"),
    ("created", "created_at"),
];

const SPECIES_COLUMNS: &[Column] = &[
    ("tax_id", "tax_id"),
    ("name", "name"),
    ("reads", "reads"),
    ("reestimated_%", "reestimated"),
    ("genome_copies_%", "genome_copies"),
    ("bases_genome_copies_%", "bases_genome_copies"),
    ("read_share_%", "read_share"),
];

/// The species of a classification as rows for [`print_list`], sorted by `sort`: every
/// abundance measure in percent under its own name (blank where the results lack it).
fn species_rows(results: &mgds_api::ClassificationResults, sort: mgds_api::Measure) -> Vec<serde_json::Value> {
    use mgds_api::Measure;
    let mut rows: Vec<&mgds_api::TaxonRow> = mgds_formats::species_abundances(results);
    let value = |r: &mgds_api::TaxonRow| sort.value(r, results.n_reads);
    rows.sort_by(|a, b| match (value(a), value(b)) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    rows.into_iter()
        .map(|r| {
            let pct = |m: Measure| m.value(r, results.n_reads).map(|v| format!("{:.4}", v * 100.0));
            serde_json::json!({
                "tax_id": r.tax_id,
                "name": r.name,
                "reads": r.readcount_w_children,
                "reestimated": pct(Measure::Reestimated),
                "genome_copies": pct(Measure::GenomeCopies),
                "bases_genome_copies": pct(Measure::BasesGenomeCopies),
                "read_share": pct(Measure::ReadShare),
            })
        })
        .collect()
}

fn missing_why(m: mgds_api::Measure) -> &'static str {
    match m {
        mgds_api::Measure::Reestimated => "the database has no k-mer distribution, or the service does not give it",
        mgds_api::Measure::GenomeCopies | mgds_api::Measure::BasesGenomeCopies => {
            "the database's genome lengths are not known, or the service does not give it"
        }
        mgds_api::Measure::ReadShare => "the sample has no reads",
    }
}

/// `mgds analyses ...`.
#[derive(clap::Subcommand, Debug)]
pub enum AnalysesCommand {
    /// List analyses of every kind.
    List {
        /// Only analyses of this sample (id).
        #[arg(long)]
        sample: Option<String>,
        /// Only analyses of this kind.
        #[arg(long = "type", value_parser = ["classification", "panel", "alignment", "functional_profile", "control", "report"])]
        analysis_type: Option<String>,
        #[command(flatten)]
        list: ListArgs,
    },
    /// Show one analysis as JSON.
    Show {
        /// The analysis id.
        id: String,
    },
    /// Print the results of a finished analysis: a classification as a table of species, a
    /// negative control's scores as a table of taxa (`--json` for the full results), anything
    /// else as JSON.
    ///
    /// The species table gives each abundance measure in its own column, in percent:
    /// `reestimated_%` (reads re-estimated per species from the database's k-mer
    /// distribution, Bracken's method: reads placed above species are shared out to the species
    /// below), `genome_copies_%` (reads over mean genome length: the share of genome copies),
    /// `bases_genome_copies_%` (the same counted in bases: classified bases over mean genome
    /// length, right for long reads, whose lengths differ between taxa) and `read_share_%`
    /// (reads of the species as a share of all the sample's reads). A column is blank when the
    /// database does not give that measure. Rows are sorted by `--sort`, else for long reads
    /// (median length over 1,000 bases) by genome copies by bases, else by the first measure the
    /// results carry, in that order.
    #[command(verbatim_doc_comment)]
    Results {
        /// The analysis id.
        id: String,
        /// Sort the species table by this measure.
        #[arg(long, value_parser = ["reestimated", "genome_copies", "bases_genome_copies", "read_share"])]
        sort: Option<String>,
        /// Print the classification's report as `kraken2 --report` writes it (tab-separated;
        /// Bracken, Pavian and Krona read it) instead of the species table (MGDS services).
        #[arg(long, conflicts_with_all = ["sort", "json", "csv"])]
        kraken_report: bool,
        /// Draw the classification's hierarchy as a sunburst here (SVG or PNG by the file's
        /// extension): each ring a level of the taxonomy, the host's reads left out unless
        /// --show-host. The app's and the browser's sample page draw the same.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["kraken_report"])]
        sunburst: Option<PathBuf>,
        /// The taxon at the sunburst's centre (a tax id; default: the root).
        #[arg(long, value_name = "TAXID", requires = "sunburst")]
        root: Option<String>,
        /// Write the hierarchy as Krona's text input here (`ktImportText`: each taxon's own
        /// reads and its lineage, tab-separated).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["kraken_report"])]
        krona: Option<PathBuf>,
        /// Keep the host's reads in --sunburst and --krona.
        #[arg(long)]
        show_host: bool,
        /// Wait for an analysis that has not finished (on the local profile, this command's own
        /// service runs it meanwhile), at most this many seconds.
        #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "3600")]
        wait: Option<u64>,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Download the file a finished alignment (SAM, gzipped) or functional profile (TSV)
    /// offers; a classification's reads are `mgds readlevel download`.
    Download {
        /// The analysis id.
        id: String,
        /// Where to write it.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
}

/// Runs an `analyses` command.
pub async fn run_analyses(ctx: &Ctx, cmd: AnalysesCommand) -> Result<()> {
    let analyses = ctx.client.analyses();
    match cmd {
        AnalysesCommand::List { sample, analysis_type, list } => {
            let mut f = Filter::new();
            if let Some(s) = &sample {
                f = f.eq_ref("sample", &Ref::new("samples", s));
            }
            if let Some(t) = analysis_type {
                f = f.eq("analysis_type", t);
            }
            let items = fetch(analyses.list().filter(f), &list, "analyses").await?;
            print_list(&list.out, &items, ANALYSIS_COLUMNS)
        }
        AnalysesCommand::Show { id } => print_one(&analyses.get(id.as_str()).await?),
        AnalysesCommand::Results { id, sort, kraken_report, sunburst, root, krona, show_host, wait, out } => {
            // A file name that says no picture is refused before any work.
            let picture = sunburst.as_deref().map(crate::compare::picture_format).transpose()?;
            let mut a = analyses.get(id.as_str()).await?;
            if !a.complete
                && let Some(secs) = wait
            {
                eprintln!("analysis {id} has not finished yet; waiting for it");
                let jobs = ctx.client.jobs();
                a = jobs.wait(id.as_str()).timeout(Duration::from_secs(secs)).send().await?;
            }
            if !a.complete {
                bail!(
                    "analysis {id} has not finished yet; `mgds analyses show {id}` shows its state, and \
                     `--wait` waits for it (the local service runs analyses while an mgds command, \
                     `mgds serve` or the app is running)"
                );
            }
            if !a.success {
                let why = a.error_msg.as_deref().filter(|m| !m.is_empty()).unwrap_or("no reason given");
                bail!("analysis {id} failed, so it has no results: {why}");
            }
            if sunburst.is_some() || krona.is_some() {
                if a.analysis_type.as_deref() != Some("classification") {
                    bail!("analysis {id} is not a classification, so it has no hierarchy to draw");
                }
                let results = std::sync::Arc::new(ctx.client.classifications().results(id.as_str()).await?);
                let controls = mgds_app::chart::SunburstControls { root, show_host, rings: None, title: None };
                let files = [(sunburst, None), (krona, Some("krona"))];
                for (path, kind) in files.into_iter().filter_map(|(p, k)| p.map(|p| (p, k))) {
                    let format = kind.or(picture).unwrap_or("svg");
                    let bytes = mgds_app::chart::sunburst_file(results.clone(), &controls, format).await?;
                    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("wrote {}", path.display());
                }
                return Ok(());
            }
            match a.analysis_type.as_deref() {
                Some("classification") if kraken_report => {
                    print!("{}", ctx.client.classifications().kraken_report(id.as_str()).await?);
                    Ok(())
                }
                _ if kraken_report => bail!("analysis {id} is not a classification, so it has no Kraken-style report"),
                Some("classification") if !out.json => {
                    let results = ctx.client.classifications().results(id.as_str()).await?;
                    let measure = sort
                        .as_deref()
                        .and_then(mgds_api::Measure::from_key)
                        .unwrap_or_else(|| mgds_api::Measure::default_for(&results));
                    let species = species_rows(&results, measure);
                    if !out.csv {
                        let median = results
                            .median_read_length
                            .map(|m| format!(" (median length {m} bases)"))
                            .unwrap_or_default();
                        eprintln!(
                            "{} species; {} reads in the sample{median}; sorted by {}: {}",
                            species.len(),
                            results.n_reads,
                            measure.label().to_lowercase(),
                            measure.explanation()
                        );
                        for m in mgds_api::Measure::ALL {
                            if !m.available(&results) {
                                eprintln!("no {} in these results ({})", m.label().to_lowercase(), missing_why(m));
                            }
                        }
                    }
                    print_list(&out, &species, SPECIES_COLUMNS)
                }
                Some("panel") => print_one(&ctx.client.panels().results(id.as_str()).await?),
                // A negative control's batch, scored: the taxa by score, as `mgds compare
                // --contaminants` prints them (`--csv` for every taxon as CSV).
                Some("control") if !out.json => {
                    let v: mgds_app::contamination::ContaminationView =
                        serde_json::from_value(analyses.results(id.as_str()).await?)
                            .with_context(|| format!("the results of analysis {id} are not controls' scores"))?;
                    if let Some(b) = &v.batch_of {
                        let shown = mgds_app::text::shown_text;
                        eprintln!(
                            "the batch of control {}: samples whose {} is {}",
                            shown(&b.control),
                            shown(&b.field),
                            shown(&b.value)
                        );
                    }
                    crate::compare::show_contaminants(&v, out.csv.then_some(std::path::Path::new("-")))
                }
                _ => print_one(&analyses.results(id.as_str()).await?),
            }
        }
        AnalysesCommand::Download { id, output } => {
            if analyses.get(id.as_str()).await?.analysis_type.as_deref() == Some("classification") {
                bail!(
                    "analysis {id} is a classification, which has no results file; its reads are saved with \
                     `mgds readlevel download {id}`, its table printed with `mgds analyses results {id}`"
                );
            }
            let n = analyses.download_results(id.as_str(), &output).await?;
            eprintln!("wrote {} ({:.1} MB)", output.display(), n as f64 / 1e6);
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Read-level results

/// `mgds readlevel ...`.
#[derive(clap::Subcommand, Debug)]
pub enum ReadlevelCommand {
    /// Download the gzipped read-level TSV of a classification.
    Download {
        /// The classification id.
        classification_id: String,
        /// Write here (a file, or a folder to write into) instead of
        /// `<CLASSIFICATION_ID>.readlevel.tsv.gz` in the current folder.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Replace a file already there under that name (a file given with -o is always
        /// written).
        #[arg(long)]
        force: bool,
    },
}

/// Runs a `readlevel` command.
pub async fn run_readlevel(ctx: &Ctx, cmd: ReadlevelCommand) -> Result<()> {
    match cmd {
        ReadlevelCommand::Download { classification_id: id, output, force } => {
            let name = format!("{id}.readlevel.tsv.gz");
            let dest = destination(output, &name, "readlevel.tsv.gz", force)?;
            let n = ctx
                .client
                .classifications()
                .download_readlevel(id.as_str(), dest.clone())
                .await
                .with_context(|| format!("cannot download the read-level results of classification {id}"))?;
            wrote(dest.path(), n);
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sequencing batches

const BATCH_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("batch_number", "batch_number"),
    ("name", "name"),
    ("status", "status"),
    ("owner", "owner"),
    ("created", "created_at"),
];

/// `mgds batches ...`.
#[derive(clap::Subcommand, Debug)]
pub enum BatchesCommand {
    /// List your organisation's sequencing batches.
    List(ListArgs),
    /// Show one batch as JSON.
    Show {
        /// The batch id.
        id: String,
    },
}

/// Runs a `batches` command.
pub async fn run_batches(ctx: &Ctx, cmd: BatchesCommand) -> Result<()> {
    let batches = ctx.client.batches();
    match cmd {
        BatchesCommand::List(a) => print_list(&a.out, &fetch(batches.list(), &a, "batches").await?, BATCH_COLUMNS),
        BatchesCommand::Show { id } => print_one(&batches.get(id.as_str()).await?),
    }
}

// ---------------------------------------------------------------------------------------------
// Pre-upload and schema

/// Options of `mgds preupload`.
#[derive(clap::Args, Debug)]
pub struct PreuploadArgs {
    /// Your own id for the sample; `mgds upload --external-sample-id` fills it later.
    #[arg(long)]
    pub external_sample_id: Option<String>,
    /// Tag it with this name (repeatable).
    #[arg(long)]
    pub tag: Vec<String>,
    /// Put it in this project (id).
    #[arg(long)]
    pub project: Option<String>,
}

/// `mgds preupload`: creates a sample awaiting data and prints its id.
pub async fn run_preupload(ctx: &Ctx, a: PreuploadArgs) -> Result<()> {
    let mut req = ctx.client.samples().preupload();
    if let Some(e) = &a.external_sample_id {
        req = req.external_sample_id(e.clone());
    }
    for t in &a.tag {
        req = req.tag(t.clone());
    }
    if let Some(p) = &a.project {
        req = req.project(p.as_str());
    }
    let r = req.send().await.context("cannot pre-upload the sample")?;
    eprintln!("created sample {} awaiting data; upload its file with `mgds upload`", r.sample_id);
    println!("{}", r.sample_id);
    Ok(())
}

/// `mgds schema [RESOURCE]`: prints the service's JSON schema (of one collection if given).
pub async fn run_schema(ctx: &Ctx, resource: Option<String>) -> Result<()> {
    let schema = match resource {
        None => ctx.client.schema().await?,
        Some(r) => ctx
            .client
            .resource_schema(&r)
            .await
            .with_context(|| format!("no schema for {r:?}; `mgds schema` lists the collections"))?,
    };
    print_one(&schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn job_args_are_json_when_they_parse() {
        let args = ["n=3", "name=gut", "flags=[1,2]", "on=true", "empty=", "eq=a=b"].map(String::from);
        let m = parse_job_args(&args).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"n": 3, "name": "gut", "flags": [1, 2], "on": true, "empty": "", "eq": "a=b"})
        );
        assert!(parse_job_args(&["novalue".to_string()]).is_err());
        assert!(parse_job_args(&["=1".to_string()]).is_err());
    }
}
