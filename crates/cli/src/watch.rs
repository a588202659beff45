//! `mgds watch`: watched folders, headless. `run` watches in the foreground (one folder given
//! on the command line, or every saved one) until Ctrl-C or SIGTERM; `add`, `list` and
//! `remove` manage the saved folders (`watch.toml` in the configuration folder, shared with
//! the desktop app); `status` reads the queue and `live` its run dashboard; `alert` manages
//! the taxon alerts every folder's samples are checked against; `pause` and `resume` flip the
//! switch a running watcher looks for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mgds_watch::{
    Alert, AlertRule, Event, FolderConfig, Layout, NanoporeGrouping, Options, PAUSE_FILE, Queue, SavedFolders, Watcher,
};

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
    /// The live run dashboard from the queue (works while a watcher runs): per run, each
    /// barcode's batches uploaded and classified, its reads so far, its top taxa and alerts.
    Live {
        /// The rank the taxa are summed at.
        #[arg(long, default_value = "species")]
        rank: String,
        /// How many taxa per barcode.
        #[arg(long, default_value_t = 5)]
        top: usize,
        /// Print JSON (with each barcode's cumulative series).
        #[arg(long)]
        json: bool,
        /// The watcher's state folder [default: the data folder].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Taxon alerts for every watched folder (saved in `watch.toml`, shared with the app): a
    /// classified sample, or a live run's barcode (its batches summed), that crosses a rule
    /// raises an alert once per sample (or barcode) and taxon.
    #[command(subcommand)]
    Alert(AlertCommand),
}

/// `mgds watch alert ...`.
#[derive(clap::Subcommand)]
pub enum AlertCommand {
    /// Add a rule: `"Salmonella enterica >= 0.1%"`, `"Listeria >= 50 reads"`, `"590 >= 0.5%"`
    /// (a name or a taxonomy id; its reads are its clade's; a share is of all the reads).
    Add {
        /// The rule.
        #[arg(value_parser = parse_rule)]
        rule: AlertRule,
    },
    /// List the rules (each folder's own too).
    List,
    /// Remove a rule, as listed.
    Remove {
        /// The rule.
        #[arg(value_parser = parse_rule)]
        rule: AlertRule,
    },
    /// The alerts that fired, newest first.
    Log {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The watcher's state folder [default: the data folder].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
}

fn parse_rule(s: &str) -> Result<AlertRule, String> {
    s.parse()
}

fn parse_webhook(s: &str) -> Result<reqwest::Url, String> {
    let u = reqwest::Url::parse(s).map_err(|e| format!("{s:?} is not an address: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!("{s:?}: the webhook must be an http:// or https:// address"));
    }
    Ok(u)
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
    /// Nanopore: one sample per batch file as it lands, instead of one per barcode once the
    /// run ends (with --folder): the live run dashboard and alerts follow the run batch by
    /// batch.
    #[arg(long)]
    per_file: bool,
    /// Upload speed limit in bytes per second (suffixes k, M, G: 10M) [default: the limit
    /// saved with `mgds watch limit` for saved folders; none with --folder].
    #[arg(long, value_parser = parse_bytes, value_name = "RATE")]
    bandwidth: Option<u64>,
    /// Raise an alert when a classified sample (or a live run's barcode) crosses this rule
    /// (repeatable; with the saved rules): `"Salmonella enterica >= 0.1%"`.
    #[arg(long = "alert", value_name = "RULE", value_parser = parse_rule)]
    alerts: Vec<AlertRule>,
    /// POST each alert to this address as JSON (the alert's fields and a `text` line, which
    /// Slack- and Teams-style incoming webhooks show).
    #[arg(long, value_name = "URL", env = "MGDS_ALERT_WEBHOOK", value_parser = parse_webhook)]
    alert_webhook: Option<reqwest::Url>,
    /// Sign each alert POSTed with this secret (the X-MGDS-Signature header, as the service's
    /// webhooks sign theirs; the README shows the check).
    #[arg(
        long,
        value_name = "SECRET",
        env = "MGDS_ALERT_WEBHOOK_SECRET",
        hide_env_values = true,
        requires = "alert_webhook"
    )]
    alert_webhook_secret: Option<String>,
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
    /// Raise an alert when a sample of this folder (or a barcode of a live run in it) crosses
    /// this rule, besides the rules for every folder (repeatable): `"Listeria >= 50 reads"`.
    #[arg(long = "alert", value_name = "RULE", value_parser = parse_rule)]
    alerts: Vec<AlertRule>,
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
        WatchCommand::Live { rank, top, json, state_dir: d } => live(&state_dir(g, d)?, &rank, top, json).await,
        WatchCommand::Alert(c) => alert(g, c).await,
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
    cfg.alerts = a.alerts;
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
    let saved = SavedFolders::load(&profile::config_dir()?)?;
    let (folders, saved_limit) = match &a.folder {
        Some(p) => {
            let mut f = FolderConfig::new(p);
            f.layout = a.layout;
            f.tags = a.tags.clone();
            f.project = a.project.clone();
            if a.per_file {
                f.nanopore = NanoporeGrouping::PerFile;
            }
            (vec![f], None)
        }
        None => {
            if saved.folders.is_empty() {
                bail!("no folder to watch: pass --folder PATH or save one with `mgds watch add PATH`");
            }
            (saved.folders.clone(), saved.upload_limit)
        }
    };
    let mut alerts = saved.alerts.clone();
    alerts.extend(a.alerts.iter().cloned());
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
        alerts,
        ..Options::default()
    };
    let ctx = connect::connect(g).await?;
    let webhook = match a.alert_webhook.clone() {
        // The watcher runs on the lab's own machine, whose user sets the address: it may be on
        // the lab's network, behind the lab's proxy, and redirected.
        Some(url) => Some(Webhook {
            url,
            secret: a.alert_webhook_secret.clone(),
            sender: mgds_webhook::Sender::on_own_machine(&format!("MGDS-Watch/{}", env!("CARGO_PKG_VERSION")))
                .context("cannot make the alert webhook's HTTP client")?,
        }),
        None => None,
    };
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
                Some(Event::Alert(alert)) => {
                    // Alerts are the watcher's output (stdout); everything else is its log.
                    println!("ALERT {}", alert.message());
                    if let Some(w) = &webhook {
                        let w = w.clone();
                        tokio::spawn(async move { w.post(&alert).await });
                    }
                }
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
        Event::Classified { name, reads, .. } => eprintln!("classified {name} ({reads} reads)"),
        Event::ClassificationFailed { name, error, .. } => {
            eprintln!("classification of {name} failed: {error}")
        }
        Event::Paused => eprintln!("paused     uploads paused"),
        Event::Resumed => eprintln!("resumed    uploads resumed"),
        _ => {}
    }
}

/// Where `mgds watch run --alert-webhook` posts alerts (through the delivery code the
/// service's webhooks use).
#[derive(Clone)]
struct Webhook {
    url: reqwest::Url,
    secret: Option<String>,
    sender: mgds_webhook::Sender,
}

impl Webhook {
    /// Posts one alert, trying up to three times over about half a minute; a webhook that
    /// stays away or refuses it is logged, and the watcher goes on (the alert is in `mgds watch
    /// alert log`).
    async fn post(&self, alert: &Alert) {
        let mut body = serde_json::to_value(alert).unwrap_or_default();
        if let Some(map) = body.as_object_mut() {
            map.insert("text".into(), serde_json::Value::String(format!("MGDS alert: {}", alert.message())));
        }
        let body = body.to_string();
        let id = format!("alert-{}-{:08x}", mgds_webhook::unix_now(), rand_tag());
        let delivery = mgds_webhook::Delivery {
            url: &self.url,
            event_type: "alert",
            id: &id,
            body: body.as_bytes(),
            secret: self.secret.as_deref().map(str::as_bytes),
        };
        // Three tries, 2 s and then 8 s apart.
        for (attempt, wait) in [(1, 2), (2, 8), (3, 0)] {
            let a = self.sender.send(&delivery).await;
            let why = a.error.clone().unwrap_or_default();
            if a.delivered {
                return;
            }
            if a.refused() {
                eprintln!("webhook {} refused the alert: {why}", self.url);
                return;
            }
            if attempt == 3 {
                eprintln!("webhook {}: {why}; the alert was not posted", self.url);
                return;
            }
            tokio::time::sleep(Duration::from_secs(wait)).await;
        }
    }
}

/// A tag that tells one alert's delivery from another's posted in the same second.
fn rand_tag() -> u32 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    nanos ^ std::process::id().rotate_left(16)
}

/// `mgds watch live`.
async fn live(dir: &Path, rank: &str, top: usize, json: bool) -> Result<()> {
    if !dir.join(mgds_watch::QUEUE_FILE).is_file() {
        bail!("no watcher has run with the state folder {} yet", dir.display());
    }
    let q = Queue::open(dir).await?;
    let runs = q.live_runs(rank, top.max(1)).await?;
    q.close().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(());
    }
    if runs.is_empty() {
        eprintln!("no run yet");
    }
    for r in &runs {
        let state = if r.finished { "finished".to_string() } else { format!("{} (running)", r.state) };
        println!("run {} ({}, {}): {}", r.run_id, r.kind, r.path.display(), state);
        println!(
            "  {:<16} {:>8} {:>9} {:>11} {:>7} {:>10}  top {rank}",
            "barcode", "batches", "uploaded", "classified", "failed", "reads"
        );
        for g in &r.groups {
            let top: Vec<String> = g
                .taxa
                .iter()
                .map(|t| {
                    format!(
                        "{} {:.1}%",
                        t.name,
                        if g.reads == 0 { 0.0 } else { t.reads as f64 * 100.0 / g.reads as f64 }
                    )
                })
                .collect();
            println!(
                "  {:<16} {:>8} {:>9} {:>11} {:>7} {:>10}  {}",
                g.name,
                g.batches,
                g.uploaded,
                g.classified,
                g.upload_failed + g.classification_failed,
                g.reads,
                top.join(", ")
            );
            for a in &g.alerts {
                println!("      alert: {} ({:.3}% >= rule {})", a.taxon, a.percent, a.rule);
            }
        }
    }
    Ok(())
}

/// `mgds watch alert ...`.
async fn alert(g: &Global, cmd: AlertCommand) -> Result<()> {
    let dir = profile::config_dir()?;
    match cmd {
        AlertCommand::Add { rule } => {
            let mut saved = SavedFolders::load(&dir)?;
            if saved.alerts.contains(&rule) {
                eprintln!("{rule} is a rule already");
                return Ok(());
            }
            saved.alerts.push(rule.clone());
            saved.save(&dir)?;
            eprintln!("alert rule added: {rule} (from the next `mgds watch run`, and in the app)");
        }
        AlertCommand::Remove { rule } => {
            let mut saved = SavedFolders::load(&dir)?;
            let before = saved.alerts.len();
            saved.alerts.retain(|r| r != &rule);
            if saved.alerts.len() == before {
                bail!("{rule} is not a rule for every folder (see `mgds watch alert list`)");
            }
            saved.save(&dir)?;
            eprintln!("alert rule removed: {rule}");
        }
        AlertCommand::List => {
            let saved = SavedFolders::load(&dir)?;
            for r in &saved.alerts {
                println!("every folder\t{r}");
            }
            for f in &saved.folders {
                for r in &f.alerts {
                    println!("{}\t{r}", f.path.display());
                }
            }
        }
        AlertCommand::Log { limit, json, state_dir: d } => {
            let dir = state_dir(g, d)?;
            if !dir.join(mgds_watch::QUEUE_FILE).is_file() {
                bail!("no watcher has run with the state folder {} yet", dir.display());
            }
            let q = Queue::open(&dir).await?;
            let alerts = q.alerts(limit).await?;
            q.close().await;
            if json {
                println!("{}", serde_json::to_string_pretty(&alerts)?);
            } else {
                for a in &alerts {
                    println!("{}\t{}", a.at, a.message());
                }
            }
        }
    }
    Ok(())
}
