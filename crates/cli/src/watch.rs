//! `mgds watch`: watched folders, headless. `run` watches in the foreground (one folder given
//! on the command line, or every saved one) until Ctrl-C or SIGTERM; `add`, `list` and
//! `remove` manage the saved folders (`watch.toml` in the configuration folder, shared with
//! the desktop app); `status` reads the queue; `pause` and `resume` flip the switch a running
//! watcher looks for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mgds_watch::{Event, FolderConfig, Layout, NanoporeGrouping, Options, PAUSE_FILE, Queue, SavedFolders, Watcher};

use crate::connect::{self, Global};
use crate::profile;

/// Watched folders: sequencer output and FASTQ files become samples by themselves.
#[derive(clap::Subcommand)]
pub enum WatchCommand {
    /// Watch in the foreground (logs to stderr) until Ctrl-C or SIGTERM: the folder given
    /// with --folder, or every saved folder.
    Run(RunArgs),
    /// Save a folder to watch (`mgds watch run` with no --folder watches it).
    Add(AddArgs),
    /// List the saved folders.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop watching a saved folder (what was uploaded stays).
    Remove {
        /// The folder, as saved.
        folder: PathBuf,
    },
    /// Show runs and samples from the queue (works while a watcher runs).
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The watcher's state folder [default: the data folder].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Pause uploads of the running watcher (scanning goes on).
    Pause {
        /// The watcher's state folder [default: the data folder].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Resume uploads.
    Resume {
        /// The watcher's state folder [default: the data folder].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Set the upload speed limit for the saved folders (the app uses it too); it applies
    /// when `mgds watch run` next starts.
    Limit {
        /// Bytes per second (suffixes k, M, G: 10M is 10 MB/s), or `off`.
        #[arg(value_parser = parse_limit, value_name = "RATE|off")]
        rate: Limit,
    },
}

/// An upload speed limit, or none.
#[derive(Clone, Copy)]
pub struct Limit(Option<u64>);

fn parse_limit(s: &str) -> Result<Limit, String> {
    match s {
        "off" | "none" | "0" => Ok(Limit(None)),
        _ => parse_bytes(s).map(|n| Limit(Some(n))),
    }
}

/// `mgds watch run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The folder to watch, with no saved configuration [default: every saved folder].
    #[arg(long, value_name = "PATH")]
    folder: Option<PathBuf>,
    /// How the folder's files become samples (with --folder).
    #[arg(long, default_value = "auto", value_parser = parse_layout)]
    layout: Layout,
    /// Seconds between polling passes; a file settles after two passes see it unchanged.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    poll_interval: f64,
    /// Seconds a file must have been left alone before it settles.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    min_age: f64,
    /// Poll only; no file-system events (network shares deliver none).
    #[arg(long)]
    no_events: bool,
    /// Tag new samples with this name (with --folder; repeatable).
    #[arg(long = "tag", value_name = "NAME")]
    tags: Vec<String>,
    /// Put new samples in this project (id; with --folder).
    #[arg(long)]
    project: Option<String>,
    /// Upload speed limit in bytes per second (suffixes k, M, G: 10M) [default: the limit
    /// saved with `mgds watch limit` for saved folders; none with --folder].
    #[arg(long, value_parser = parse_bytes, value_name = "RATE")]
    bandwidth: Option<u64>,
    /// Where the queue lives [default: the data folder].
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

/// `mgds watch add`.
#[derive(clap::Args)]
pub struct AddArgs {
    /// The folder.
    folder: PathBuf,
    /// How its files become samples.
    #[arg(long, default_value = "auto", value_parser = parse_layout)]
    layout: Layout,
    /// Only the folder itself, not its subfolders.
    #[arg(long)]
    no_recursive: bool,
    /// Only files matching this glob, relative to the folder (repeatable).
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
    /// Leave out files matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Tag new samples with this name (repeatable).
    #[arg(long = "tag", value_name = "NAME")]
    tags: Vec<String>,
    /// Put new samples in this project (id).
    #[arg(long)]
    project: Option<String>,
    /// Custom metadata for new samples (repeatable).
    #[arg(long = "metadata", value_name = "KEY=VALUE")]
    metadata: Vec<String>,
    /// Run this job (id) on each new sample (repeatable).
    #[arg(long = "job", value_name = "JOB")]
    jobs: Vec<String>,
    /// Illumina: keep R1 and R2 as separate samples instead of interleaving them.
    #[arg(long)]
    no_pair: bool,
    /// Illumina: one sample per lane instead of joining lanes.
    #[arg(long)]
    no_join_lanes: bool,
    /// Nanopore: one sample per batch file instead of one per barcode.
    #[arg(long)]
    per_file: bool,
    /// The folder is already saved: replace its settings with these (what it uploaded stays).
    #[arg(long)]
    replace: bool,
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    s.parse()
}

/// A rate in bytes per second, with an optional suffix (`k`, `M`, `G`: powers of 1,000).
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    let (num, mult) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1_000),
        Some('m' | 'M') => (&s[..s.len() - 1], 1_000_000),
        Some('g' | 'G') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    num.trim()
        .parse::<f64>()
        .map(|n| (n * mult as f64) as u64)
        .map_err(|_| format!("{s:?} is not a rate such as 500k or 10M"))
}

fn state_dir(g: &Global, given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(d) => Ok(d),
        None => connect::data_dir(g),
    }
}

/// Runs `mgds watch ...`.
pub async fn run(g: &Global, cmd: WatchCommand) -> Result<()> {
    match cmd {
        WatchCommand::Run(args) => run_watch(g, args).await,
        WatchCommand::Add(args) => add(args),
        WatchCommand::Limit { rate } => limit(rate),
        WatchCommand::List { json } => list(json),
        WatchCommand::Remove { folder } => remove(&folder),
        WatchCommand::Status { json, state_dir: d } => status(&state_dir(g, d)?, json).await,
        WatchCommand::Pause { state_dir: d } => {
            let dir = state_dir(g, d)?;
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(PAUSE_FILE), b"uploads paused by `mgds watch pause`\n")
                .with_context(|| format!("cannot write {}", dir.join(PAUSE_FILE).display()))?;
            eprintln!("uploads paused; `mgds watch resume` resumes them");
            Ok(())
        }
        WatchCommand::Resume { state_dir: d } => {
            let p = state_dir(g, d)?.join(PAUSE_FILE);
            match std::fs::remove_file(&p) {
                Ok(()) => eprintln!("uploads resumed"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    eprintln!("uploads were not paused")
                }
                Err(e) => return Err(e).with_context(|| format!("cannot remove {}", p.display())),
            }
            Ok(())
        }
    }
}

fn add(a: AddArgs) -> Result<()> {
    let dir = profile::config_dir()?;
    let mut saved = SavedFolders::load(&dir)?;
    let mut metadata = serde_json::Map::new();
    for kv in &a.metadata {
        let (k, v) = kv.split_once('=').with_context(|| format!("--metadata {kv:?} is not KEY=VALUE"))?;
        metadata.insert(k.trim().to_string(), serde_json::Value::String(v.to_string()));
    }
    let mut cfg = FolderConfig::new(&a.folder);
    cfg.layout = a.layout;
    cfg.recursive = !a.no_recursive;
    cfg.include = a.include;
    cfg.exclude = a.exclude;
    cfg.tags = a.tags;
    cfg.project = a.project;
    cfg.metadata = metadata;
    cfg.jobs = a.jobs;
    cfg.illumina.pair = !a.no_pair;
    cfg.illumina.join_lanes = !a.no_join_lanes;
    cfg.nanopore = if a.per_file { NanoporeGrouping::PerFile } else { NanoporeGrouping::PerBarcode };
    let path = match a.replace {
        true => saved.replace(&a.folder, cfg).map_err(|e| match e {
            mgds_watch::Error::NotSaved { .. } => {
                anyhow::anyhow!("{e} (see `mgds watch list`; without --replace it is added)")
            }
            e => e.into(),
        })?,
        false => saved.add(cfg)?,
    };
    saved.save(&dir)?;
    let what = if a.replace { "settings changed for" } else { "watching" };
    eprintln!("{what} {} (`mgds watch run` starts the watcher)", path.display());
    Ok(())
}

fn limit(rate: Limit) -> Result<()> {
    let dir = profile::config_dir()?;
    let mut saved = SavedFolders::load(&dir)?;
    saved.upload_limit = rate.0.filter(|&n| n > 0);
    saved.save(&dir)?;
    match saved.upload_limit {
        Some(n) => eprintln!("uploads limited to {}/s (from the next `mgds watch run`)", bytes(n)),
        None => eprintln!("uploads no longer limited (from the next `mgds watch run`)"),
    }
    Ok(())
}

/// A size in bytes in the units the limit is given in (decimal, as network speeds are).
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1} GB", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} kB", n as f64 / 1e3),
        n => format!("{n} B"),
    }
}

fn list(json: bool) -> Result<()> {
    let saved = SavedFolders::load(&profile::config_dir()?)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&saved.folders)?);
        return Ok(());
    }
    if let Some(n) = saved.upload_limit {
        eprintln!("uploads limited to {}/s (`mgds watch limit off` lifts it)", bytes(n));
    }
    for f in &saved.folders {
        let mut extra = Vec::new();
        if !f.tags.is_empty() {
            extra.push(format!("tags {}", f.tags.join(",")));
        }
        if let Some(p) = &f.project {
            extra.push(format!("project {p}"));
        }
        if !f.jobs.is_empty() {
            extra.push(format!("jobs {}", f.jobs.join(",")));
        }
        println!("{}\t{}\t{}", f.path.display(), f.layout.as_str(), extra.join("; "));
    }
    Ok(())
}

fn remove(folder: &Path) -> Result<()> {
    let dir = profile::config_dir()?;
    let mut saved = SavedFolders::load(&dir)?;
    if !saved.remove(folder) {
        bail!("{} is not a watched folder (see `mgds watch list`)", folder.display());
    }
    saved.save(&dir)?;
    eprintln!("no longer watching {}", folder.display());
    Ok(())
}

async fn status(dir: &Path, json: bool) -> Result<()> {
    if !dir.join(mgds_watch::QUEUE_FILE).is_file() {
        bail!("no watcher has run with the state folder {} yet", dir.display());
    }
    let q = Queue::open(dir).await?;
    let runs = q.runs().await?;
    let samples = q.samples().await?;
    q.close().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "runs": runs, "samples": samples }))?);
        return Ok(());
    }
    if dir.join(PAUSE_FILE).exists() {
        println!("uploads are paused (`mgds watch resume`)");
    }
    for r in &runs {
        println!("run\t{}\t{}\t{}\t{}", r.kind, r.run_id, r.state, r.detail.as_deref().unwrap_or(""));
    }
    for s in &samples {
        println!(
            "sample\t{}\t{}\t{}\t{}",
            s.name,
            s.state.as_str(),
            s.sample_id.as_deref().unwrap_or("-"),
            s.error.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

async fn run_watch(g: &Global, a: RunArgs) -> Result<()> {
    let (folders, saved_limit) = match &a.folder {
        Some(p) => {
            let mut f = FolderConfig::new(p);
            f.layout = a.layout;
            f.tags = a.tags.clone();
            f.project = a.project.clone();
            (vec![f], None)
        }
        None => {
            let saved = SavedFolders::load(&profile::config_dir()?)?;
            if saved.folders.is_empty() {
                bail!("no folder to watch: pass --folder PATH or save one with `mgds watch add PATH`");
            }
            (saved.folders, saved.upload_limit)
        }
    };
    let secs = |s: f64, what: &str| -> Result<Duration> {
        Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero() || what == "min-age")
            .with_context(|| format!("--{what} must be a positive number of seconds"))
    };
    let dir = state_dir(g, a.state_dir.clone())?;
    let options = Options {
        poll_interval: secs(a.poll_interval, "poll-interval")?,
        min_age: secs(a.min_age, "min-age")?,
        events: !a.no_events,
        bandwidth: a.bandwidth.or(saved_limit).unwrap_or(0),
        pause_file: Some(dir.join(PAUSE_FILE)),
        ..Options::default()
    };
    let ctx = connect::connect(g).await?;
    let shown: Vec<String> = folders.iter().map(|f| f.path.display().to_string()).collect();
    let (watcher, mut events) = Watcher::start(folders, options, ctx.client, &dir).await?;
    eprintln!("watching {} (queue in {}); Ctrl-C stops", shown.join(", "), dir.display());
    let stop = crate::shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => {
                eprintln!("stopping");
                watcher.stop().await?;
                return Ok(());
            }
            e = events.recv() => match e {
                Some(e) => log(&e),
                // The watcher ended by itself: it failed.
                None => return watcher.wait().await.context("the watcher stopped"),
            },
        }
    }
}

fn log(e: &Event) {
    match e {
        Event::FileSeen { .. } | Event::Uploading { sent: 1.., .. } => {}
        Event::FileSettled { path, size } => {
            eprintln!("settled    {} ({size} bytes)", path.display())
        }
        Event::FileUnreadable { path, reason } => {
            eprintln!("unreadable {}: {reason}", path.display())
        }
        Event::RunWaiting { run_id, reason, .. } => {
            eprintln!("run        {run_id}: waiting for {reason}")
        }
        Event::RunFailed { run_id, reason, .. } => {
            eprintln!("run        {run_id}: FAILED on the instrument ({reason}); it is not uploaded")
        }
        Event::RunUploaded { run_id, samples, .. } => {
            eprintln!("run        {run_id}: all {samples} sample(s) uploaded")
        }
        Event::SampleQueued { name, files, .. } => {
            eprintln!("queued     {name} ({} file(s))", files.len())
        }
        Event::Uploading { name, total, .. } => eprintln!("uploading  {name} ({total} bytes)"),
        Event::SampleConfirmed { name, sample_id, already_there, .. } => {
            let note = if *already_there { " (found already uploaded)" } else { "" };
            eprintln!("confirmed  {name} -> sample {sample_id}{note}")
        }
        Event::SampleFailed { name, error, retry_in: Some(d), .. } => {
            eprintln!("failed     {name}: {error}; trying again in {:.0} s", d.as_secs_f64().ceil())
        }
        Event::SampleFailed { name, error, retry_in: None, .. } => {
            eprintln!("failed     {name}: {error}; tried again at the next start")
        }
        Event::JobFailed { name, job, error } => {
            eprintln!("job        {job} on {name} failed to start: {error}")
        }
        Event::Paused => eprintln!("paused     uploads paused"),
        Event::Resumed => eprintln!("resumed    uploads resumed"),
        _ => {}
    }
}
