//! Watched folders in the app: the folders saved in `watch.toml` (shared with `mgds watch`) are
//! watched while the app runs and upload to the service in use. The screen reads their runs and
//! samples from the watcher's queue, live progress comes in `watch-changed` events, and a desktop
//! notification says when a run is uploaded (or failed on the instrument).
//!
//! The queue lives in the app's data folder, the same one `mgds watch run` uses by default, so a
//! file the command line uploaded is not sent again by the app and the other way round. When
//! `mgds watch run` already watches with that data folder, the app does not start a second
//! watcher: the screen shows the other one's progress from the shared queue.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mgds_watch::{
    AlertRule, Event, FolderConfig, NanoporeGrouping, Options, PAUSE_FILE, QUEUE_FILE, Queue, SavedFolders, State,
    Watcher,
};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use tokio::sync::Mutex;
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};
use crate::events::emit;
use crate::session::Session;

/// The most samples the screen lists (the newest); the counts cover all of them.
const MAX_LISTED: usize = 500;
/// The most files listed per folder (the rest are in the counts).
const MAX_FILES_LISTED: usize = 300;

/// Upload progress of one sample, as the watcher reports it.
#[derive(Debug, Clone, Copy, Serialize, TS)]
pub struct Live {
    /// Bytes sent.
    pub sent: u64,
    /// Bytes in all.
    pub total: u64,
    /// Bytes per second since the upload started.
    pub rate: f64,
    #[serde(skip)]
    started: Instant,
}

/// The watcher the app runs (managed state).
#[derive(Default)]
pub struct Watching {
    inner: Mutex<Inner>,
    live: Arc<std::sync::Mutex<HashMap<String, Live>>>,
}

#[derive(Default)]
struct Inner {
    running: Option<Watcher>,
    /// Bumped at every (re)start, so a forwarder of an old watcher does not touch a new one.
    generation: u64,
    /// Why nothing is being watched, or what went wrong; shown on the screen.
    problem: Option<String>,
    /// The queue, opened for reading once it exists.
    queue: Option<Queue>,
    /// Whether the running watcher has alert rules for every folder (then the samples uploaded
    /// from the window are checked against them too).
    global_alerts: bool,
}

/// What the UI sends to add a folder.
#[derive(Debug, Clone, Deserialize, TS)]
// What the shell defaults (`#[serde(default)]`, and any `Option`) the UI may leave out.
#[ts(optional_fields = nullable)]
pub struct NewFolder {
    /// The folder.
    pub path: PathBuf,
    /// `auto`, `illumina`, `nanopore` or `files`.
    pub layout: mgds_watch::Layout,
    /// Look into subfolders.
    pub recursive: bool,
    /// Glob patterns a file must match (empty: all).
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub include: Vec<String>,
    /// Glob patterns of files to leave alone.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub exclude: Vec<String>,
    /// The project (id) for new samples.
    #[serde(default)]
    pub project: Option<String>,
    /// Tags (names) for new samples.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub tags: Vec<String>,
    /// Custom metadata for new samples.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Jobs (ids) to run on each new sample.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub jobs: Vec<String>,
    /// Illumina: interleave R1 and R2 into one sample.
    pub pair: bool,
    /// Illumina: join lanes.
    pub join_lanes: bool,
    /// Nanopore: one sample per batch file instead of per barcode.
    pub per_file: bool,
    /// The folder's own alert rules, as written (`Salmonella enterica >= 0.1%`), besides the
    /// rules for every folder.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub alerts: Vec<String>,
}

impl NewFolder {
    fn into_config(self) -> CmdResult<FolderConfig> {
        let alerts = parse_rules(&self.alerts)?;
        let mut cfg = FolderConfig::new(self.path);
        cfg.alerts = alerts;
        cfg.layout = self.layout;
        cfg.recursive = self.recursive;
        cfg.include = clean(self.include);
        cfg.exclude = clean(self.exclude);
        cfg.project = self.project.filter(|p| !p.is_empty());
        cfg.tags = clean(self.tags);
        cfg.metadata =
            self.metadata.into_iter().map(|(k, v)| (k.trim().to_string(), v)).filter(|(k, _)| !k.is_empty()).collect();
        cfg.jobs = clean(self.jobs);
        cfg.illumina.pair = self.pair;
        cfg.illumina.join_lanes = self.join_lanes;
        cfg.nanopore = if self.per_file { NanoporeGrouping::PerFile } else { NanoporeGrouping::PerBarcode };
        Ok(cfg)
    }
}

/// Alert rules as the user wrote them, blank lines left out; a rule that does not read says
/// which and how to write it.
fn parse_rules(rules: &[String]) -> CmdResult<Vec<AlertRule>> {
    let mut out: Vec<AlertRule> = Vec::new();
    for r in rules.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        let rule: AlertRule = r.parse().map_err(|e: String| CmdError::new("alert_rule", crate::error::sentence(&e)))?;
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    Ok(out)
}

fn clean(v: Vec<String>) -> Vec<String> {
    v.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// Files of a folder per state.
#[derive(Debug, Default, Clone, Serialize, TS)]
pub struct Counts {
    /// Found, may still change.
    pub seen: usize,
    /// Complete, waiting for their run or sample.
    pub settled: usize,
    /// Being uploaded (or waiting to be).
    pub uploading: usize,
    /// On the service.
    pub confirmed: usize,
    /// Could not be uploaded.
    pub failed: usize,
}

/// One saved folder on the screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FolderView {
    /// Its settings.
    #[serde(flatten)]
    pub config: mgds_watch::FolderConfig,
    /// It is not there (an unmounted share, a removed disk): it is skipped until it is back.
    pub missing: bool,
    /// Its files per state.
    pub files: Counts,
    /// Its files (at most 300, the unfinished first), with their state.
    pub file_list: Vec<FileView>,
}

/// One file the watcher found.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FileView {
    /// Its path inside the watched folder.
    pub path: String,
    /// Its size when last seen.
    pub size: u64,
    /// `seen`, `settled`, `uploading`, `confirmed` or `failed`.
    pub state: mgds_watch::State,
}

/// A sample made by the watcher, with its live progress.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WatchedSample {
    /// What the queue knows.
    #[serde(flatten)]
    pub record: mgds_watch::SampleRecord,
    /// Upload progress, while it is being sent.
    pub live: Option<Live>,
}

/// The "Watched folders" screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WatchView {
    /// The saved folders.
    pub folders: Vec<FolderView>,
    /// The app's watcher is running.
    pub running: bool,
    /// Uploads are paused.
    pub paused: bool,
    /// Why nothing is watched, or what stopped the watcher.
    pub problem: Option<String>,
    /// Where the folders are saved (shared with `mgds watch`).
    pub config_file: String,
    /// Run folders seen.
    pub runs: Vec<mgds_watch::RunRecord>,
    /// Samples made, newest first (at most 500).
    pub samples: Vec<WatchedSample>,
    /// Samples in the queue in all.
    pub samples_total: usize,
    /// The upload speed limit in bytes per second (none: no limit).
    pub upload_limit: Option<u64>,
}

/// The taxon alerts.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AlertsView {
    /// The rules for every watched folder and every file uploaded from the window, as written
    /// (`Salmonella enterica >= 0.1%`).
    pub rules: Vec<String>,
    /// The alerts that fired, newest first (at most 500).
    pub fired: Vec<mgds_watch::Alert>,
}

/// The most fired alerts listed.
const MAX_ALERTS_LISTED: usize = 500;

/// What a [`WatchChanged`] event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum WatchChange {
    /// A sample's upload progressed (only `key` and `live` matter).
    Progress,
    /// Anything else: reload the screen.
    Changed,
}

/// What the UI hears as the watcher works.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WatchChanged {
    /// Progress, or a change to reload the screen for.
    pub kind: WatchChange,
    /// The sample's key, for progress.
    pub key: Option<String>,
    /// Upload progress.
    pub live: Option<Live>,
}

impl crate::events::ShellEvent for WatchChanged {
    const NAME: &'static str = "watch-changed";
}

fn options(data_dir: &Path, upload_limit: Option<u64>, alerts: Vec<AlertRule>) -> Options {
    // Operators can tune how quickly files settle (a slow copy onto a share needs longer).
    let secs = |var: &str| {
        std::env::var(var).ok().and_then(|v| v.parse::<f64>().ok()).and_then(|s| Duration::try_from_secs_f64(s).ok())
    };
    let d = Options::default();
    Options {
        poll_interval: secs("MGDS_WATCH_POLL_SECS").filter(|d| !d.is_zero()).unwrap_or(d.poll_interval),
        min_age: secs("MGDS_WATCH_MIN_AGE_SECS").unwrap_or(d.min_age),
        pause_file: Some(data_dir.join(PAUSE_FILE)),
        bandwidth: upload_limit.unwrap_or(0),
        alerts,
        ..d
    }
}

impl Watching {
    /// (Re)starts the watcher over the saved folders with the current connection; with no
    /// folder saved, nothing runs. Problems are kept for the screen rather than returned.
    pub async fn restart(&self, app: &AppHandle) {
        let session = app.state::<Session>();
        let paths = session.paths().clone();
        let mut inner = self.inner.lock().await;
        inner.generation += 1;
        if let Some(w) = inner.running.take()
            && let Err(e) = w.stop().await
        {
            tracing::warn!("the folder watcher stopped with an error: {e}");
        }
        self.live.lock().unwrap_or_else(|p| p.into_inner()).clear();
        inner.problem = None;
        let saved = match SavedFolders::load(&paths.config_dir) {
            Ok(s) => s,
            Err(e) => {
                inner.problem = Some(words(e));
                return;
            }
        };
        let (upload_limit, alerts) = (saved.upload_limit, saved.alerts);
        // A folder that is not there (an unmounted share) is skipped, not fatal for the others.
        let folders: Vec<FolderConfig> = saved.folders.into_iter().filter(|f| f.path.is_dir()).collect();
        // With no folder, the watcher still runs for alert rules: it follows the samples
        // uploaded from the window.
        inner.global_alerts = !alerts.is_empty();
        if folders.is_empty() && alerts.is_empty() {
            return;
        }
        let client = match session.connected().await {
            Ok(c) => c.client,
            Err(e) => {
                inner.problem = Some(format!("Not watching: {}", e.message));
                return;
            }
        };
        match Watcher::start(folders, options(&paths.data_dir, upload_limit, alerts), client, &paths.data_dir).await {
            Ok((watcher, rx)) => {
                inner.running = Some(watcher);
                let generation = inner.generation;
                let app = app.clone();
                let live = self.live.clone();
                tauri::async_runtime::spawn(forward(app, rx, live, generation));
            }
            Err(mgds_watch::Error::Locked { .. }) => {
                inner.problem = Some(
                    "Another MGDS watcher (`mgds watch run`) is running on this computer with the same data folder: it uploads \
                     these folders, and this screen shows its progress. Stop it to let the app watch instead."
                        .into(),
                );
            }
            Err(e) => inner.problem = Some(format!("Not watching: {}", words(e))),
        }
    }

    /// Stops the watcher (the app is closing); an upload under way resumes at the next start.
    pub async fn stop(&self) {
        let mut inner = self.inner.lock().await;
        inner.generation += 1;
        if let Some(w) = inner.running.take() {
            let _ = w.stop().await;
        }
        if let Some(q) = inner.queue.take() {
            q.close().await;
        }
    }

    /// The watcher's queue, opened for reading once it exists (none before anything was
    /// watched).
    async fn queue<'a>(&self, inner: &'a mut Inner, data_dir: &Path) -> CmdResult<Option<&'a Queue>> {
        if inner.queue.is_none() && data_dir.join(QUEUE_FILE).is_file() {
            inner.queue = Some(Queue::open(data_dir).await.map_err(queue_error)?);
        }
        Ok(inner.queue.as_ref())
    }

    /// The run dashboard: every run folder the watcher knows, newest first, each barcode (or
    /// sample) with its batches, reads and the `top` taxa at `rank` as they grew.
    pub async fn live_runs(&self, session: &Session, rank: &str, top: usize) -> CmdResult<Vec<mgds_watch::LiveRun>> {
        let mut inner = self.inner.lock().await;
        match self.queue(&mut inner, &session.paths().data_dir).await? {
            Some(q) => q.live_runs(rank, top.clamp(1, 20)).await.map_err(queue_error),
            None => Ok(Vec::new()),
        }
    }

    /// The alert rules for every folder, and the alerts that fired (newest first).
    pub async fn alerts(&self, session: &Session) -> CmdResult<AlertsView> {
        let paths = session.paths();
        let saved = SavedFolders::load(&paths.config_dir).map_err(queue_error)?;
        let mut inner = self.inner.lock().await;
        let fired = match self.queue(&mut inner, &paths.data_dir).await? {
            Some(q) => q.alerts(MAX_ALERTS_LISTED).await.map_err(queue_error)?,
            None => Vec::new(),
        };
        Ok(AlertsView { rules: saved.alerts.iter().map(ToString::to_string).collect(), fired })
    }

    /// The alerts that fired for each of these samples (by id), for the samples table.
    pub async fn alerts_of(&self, session: &Session, ids: &[String]) -> CmdResult<HashMap<String, Vec<String>>> {
        let mut inner = self.inner.lock().await;
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        let Some(q) = self.queue(&mut inner, &session.paths().data_dir).await? else {
            return Ok(out);
        };
        for a in q.alerts(100_000).await.map_err(queue_error)? {
            if let Some(id) = a.sample_id.as_ref().filter(|id| ids.contains(id)) {
                out.entry(id.clone()).or_default().push(format!("{} ({:.3}%, rule: {})", a.taxon, a.percent, a.rule));
            }
        }
        Ok(out)
    }

    /// Has the watcher look after a sample uploaded from the window, when there are alert
    /// rules for every folder: once classified it is checked against them, with a
    /// notification and a mark on its row for each rule it crosses, as a watched sample is.
    /// Nothing happens without rules, or while another watcher holds the data folder.
    pub async fn follow(&self, sample_id: &str, name: &str, source: &mgds_upload::Source) {
        let inner = self.inner.lock().await;
        let Some(w) = inner.running.as_ref().filter(|_| inner.global_alerts) else { return };
        if let Err(e) = w.follow(sample_id, name, source).await {
            tracing::warn!("the sample {sample_id} will not be checked against the alert rules: {e}");
        }
    }

    /// The screen.
    pub async fn view(&self, session: &Session) -> CmdResult<WatchView> {
        let paths = session.paths();
        let saved = SavedFolders::load(&paths.config_dir).map_err(queue_error)?;
        let upload_limit = saved.upload_limit;
        let mut inner = self.inner.lock().await;
        self.queue(&mut inner, &paths.data_dir).await?;
        // Counts and bounded lists come from the queue's indexes, so the screen stays quick for
        // a share watched for years (it is read again every few seconds while open).
        let mut folders = Vec::with_capacity(saved.folders.len());
        let (mut runs, mut samples, mut samples_total, mut counts) = Default::default();
        if let Some(q) = &inner.queue {
            runs = q.runs().await.map_err(queue_error)?;
            (samples, samples_total) = q.recent_samples(MAX_LISTED).await.map_err(queue_error)?;
            counts = q.file_counts().await.map_err(queue_error)?;
        }
        for config in saved.folders {
            let mut files = Counts::default();
            for (_, state, n) in counts.iter().filter(|(folder, _, _)| *folder == config.path) {
                let n = *n as usize;
                match state {
                    State::Seen => files.seen += n,
                    State::Settled => files.settled += n,
                    State::Uploading => files.uploading += n,
                    State::Confirmed => files.confirmed += n,
                    State::Failed => files.failed += n,
                }
            }
            let listed = match &inner.queue {
                Some(q) => q.files_to_show(&config.path, MAX_FILES_LISTED).await.map_err(queue_error)?,
                None => Vec::new(),
            };
            let file_list = listed
                .into_iter()
                .map(|f| FileView {
                    path: f.path.strip_prefix(&config.path).unwrap_or(&f.path).display().to_string(),
                    size: f.size,
                    state: f.state,
                })
                .collect();
            folders.push(FolderView { missing: !config.path.is_dir(), config, files, file_list });
        }
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let samples: Vec<WatchedSample> =
            samples.into_iter().map(|r| WatchedSample { live: live.get(&r.key).copied(), record: r }).collect();
        let paused = match &inner.running {
            Some(w) => w.is_paused(),
            None => paths.data_dir.join(PAUSE_FILE).exists(),
        };
        Ok(WatchView {
            folders,
            running: inner.running.is_some(),
            paused,
            problem: inner.problem.clone(),
            config_file: paths.config_dir.join(mgds_watch::SAVED_FILE).display().to_string(),
            runs,
            samples,
            samples_total: samples_total as usize,
            upload_limit,
        })
    }

    /// Sets the upload speed limit (none: no limit): saved with the folders, so `mgds watch run`
    /// uses it too, and applied to the running watcher at once.
    pub async fn set_upload_limit(&self, config_dir: &Path, limit: Option<u64>) -> CmdResult<()> {
        let limit = limit.filter(|&n| n > 0);
        let mut saved = SavedFolders::load(config_dir).map_err(queue_error)?;
        saved.upload_limit = limit;
        saved.save(config_dir).map_err(queue_error)?;
        if let Some(w) = &self.inner.lock().await.running {
            w.set_bandwidth(limit.unwrap_or(0));
        }
        Ok(())
    }

    /// Pauses or resumes uploads, for this app and any `mgds watch` on the same data folder.
    pub async fn set_paused(&self, data_dir: &Path, paused: bool) -> CmdResult<()> {
        let file = data_dir.join(PAUSE_FILE);
        let written = if paused {
            std::fs::create_dir_all(data_dir).and_then(|()| std::fs::write(&file, b"uploads paused in MGDS Desktop\n"))
        } else {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                r => r,
            }
        };
        written.map_err(|e| CmdError::new("watch", format!("Could not change {}: {e}.", file.display())))?;
        if let Some(w) = &self.inner.lock().await.running {
            if paused { w.pause() } else { w.resume() }
        }
        Ok(())
    }
}

/// The watcher's error with its causes ("cannot open the folder X: No such file or directory"),
/// as a sentence.
fn words(e: mgds_watch::Error) -> String {
    crate::error::sentence(&format!("{:#}", anyhow::Error::from(e)))
}

fn queue_error(e: mgds_watch::Error) -> CmdError {
    CmdError::new("watch", words(e))
}

/// Turns the watcher's events into UI events and notifications, until the watcher ends.
async fn forward(
    app: AppHandle,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>,
    live: Arc<std::sync::Mutex<HashMap<String, Live>>>,
    generation: u64,
) {
    let changed = WatchChanged { kind: WatchChange::Changed, key: None, live: None };
    while let Some(e) = rx.recv().await {
        match e {
            Event::Uploading { key, sent, total, .. } => {
                let now = Instant::now();
                let mut map = live.lock().unwrap_or_else(|p| p.into_inner());
                let first = !map.contains_key(&key);
                let entry = map.entry(key.clone()).or_insert(Live { sent: 0, total, rate: 0.0, started: now });
                let secs = now.duration_since(entry.started).as_secs_f64();
                entry.sent = sent;
                entry.total = total;
                entry.rate = if secs > 0.2 { sent as f64 / secs } else { 0.0 };
                let l = *entry;
                drop(map);
                emit(&app, WatchChanged { kind: WatchChange::Progress, key: Some(key), live: Some(l) });
                if first {
                    emit(&app, changed.clone());
                }
                continue;
            }
            Event::SampleConfirmed { ref key, .. } | Event::SampleFailed { ref key, .. } => {
                live.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
            }
            Event::RunUploaded { ref run_id, samples, .. } => {
                notify(
                    &app,
                    "Sequencing run uploaded",
                    &format!("Run {run_id}: all {samples} sample(s) are uploaded."),
                );
            }
            Event::RunFailed { ref run_id, ref reason, .. } => {
                notify(
                    &app,
                    "Sequencing run not uploaded",
                    &format!("Run {run_id} failed on the instrument ({reason})."),
                );
            }
            Event::Alert(ref alert) => {
                notify(
                    &app,
                    &format!("Taxon alert: {}", alert.taxon),
                    &format!(
                        "{}: {} reads, {:.3}% of all reads (rule: {}).",
                        alert.label, alert.reads, alert.percent, alert.rule
                    ),
                );
            }
            Event::FileSeen { .. } => continue,
            _ => {}
        }
        emit(&app, changed.clone());
    }
    // The channel closed: the watcher was stopped, or it ended by itself on an error.
    let watching = app.state::<Watching>();
    let mut inner = watching.inner.lock().await;
    if inner.generation == generation
        && let Some(w) = inner.running.take()
    {
        let why = match w.wait().await {
            Err(e) => words(e),
            Ok(()) => "the watcher stopped.".into(),
        };
        inner.problem = Some(format!("Watching stopped: {why} Restart MGDS to try again."));
        drop(inner);
        emit(&app, changed);
    }
}

/// Sends a desktop notification (only logged where the desktop has no notification service).
pub(crate) fn notify(app: &AppHandle, title: &str, body: &str) {
    // A desktop without a notification service still has the screen; a failure is only logged.
    if let Err(e) = app.notification().builder().title(title).body(body).show() {
        tracing::info!("no desktop notification ({e}): {title}: {body}");
    }
}

/// Saves a folder and restarts the watcher with it.
pub async fn add(app: &AppHandle, folder: NewFolder) -> CmdResult<()> {
    let dir = app.state::<Session>().paths().config_dir.clone();
    let mut saved = SavedFolders::load(&dir).map_err(queue_error)?;
    saved.add(folder.into_config()?).map_err(|e| CmdError::new("watch_folder", words(e)))?;
    saved.save(&dir).map_err(queue_error)?;
    app.state::<Watching>().restart(app).await;
    Ok(())
}

/// Changes a saved folder's settings and restarts the watcher with them. What it uploaded
/// stays uploaded and is not sent again.
pub async fn update(app: &AppHandle, original: &Path, folder: NewFolder) -> CmdResult<()> {
    let dir = app.state::<Session>().paths().config_dir.clone();
    let mut saved = SavedFolders::load(&dir).map_err(queue_error)?;
    saved.replace(original, folder.into_config()?).map_err(|e| CmdError::new("watch_folder", words(e)))?;
    saved.save(&dir).map_err(queue_error)?;
    app.state::<Watching>().restart(app).await;
    Ok(())
}

/// Saves the alert rules for every folder (shared with `mgds watch`) and restarts the watcher
/// with them; a rule that does not read is refused, naming it, and nothing is saved.
pub async fn set_alert_rules(app: &AppHandle, rules: &[String]) -> CmdResult<AlertsView> {
    let rules = parse_rules(rules)?;
    let session = app.state::<Session>();
    let dir = session.paths().config_dir.clone();
    let mut saved = SavedFolders::load(&dir).map_err(queue_error)?;
    saved.alerts = rules;
    saved.save(&dir).map_err(queue_error)?;
    let watching = app.state::<Watching>();
    watching.restart(app).await;
    watching.alerts(&session).await
}

/// Forgets a folder (what it uploaded stays) and restarts the watcher without it.
pub async fn remove(app: &AppHandle, path: &Path) -> CmdResult<()> {
    let dir = app.state::<Session>().paths().config_dir.clone();
    let mut saved = SavedFolders::load(&dir).map_err(queue_error)?;
    if !saved.remove(path) {
        return Err(CmdError::new("watch_folder", format!("{} is not a watched folder.", path.display())));
    }
    saved.save(&dir).map_err(queue_error)?;
    app.state::<Watching>().restart(app).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_folder_from_the_form_becomes_a_clean_config() {
        let f: NewFolder = serde_json::from_value(serde_json::json!({
            "path": "/runs", "layout": "illumina", "recursive": true,
            "include": ["", " *.fastq.gz "], "tags": ["miseq", "  "], "project": "",
            "metadata": {" run_by ": "Ana", "": "dropped"}, "jobs": ["", "panel-1"],
            "pair": false, "join_lanes": true, "per_file": true
        }))
        .unwrap();
        let c = f.into_config().unwrap();
        assert_eq!(c.layout, mgds_watch::Layout::Illumina);
        assert_eq!(c.include, ["*.fastq.gz"]);
        assert_eq!(c.tags, ["miseq"]);
        assert_eq!(c.project, None);
        assert_eq!(serde_json::Value::Object(c.metadata), serde_json::json!({"run_by": "Ana"}));
        assert_eq!(c.jobs, ["panel-1"]);
        assert!(!c.illumina.pair && c.illumina.join_lanes);
        assert_eq!(c.nanopore, NanoporeGrouping::PerFile);
        assert!(c.alerts.is_empty());
    }

    #[test]
    fn a_folder_keeps_its_alert_rules_and_a_bad_one_is_named() {
        let form = |alerts: serde_json::Value| -> NewFolder {
            serde_json::from_value(serde_json::json!({
                "path": "/runs", "layout": "nanopore", "recursive": true,
                "pair": true, "join_lanes": true, "per_file": true, "alerts": alerts
            }))
            .unwrap()
        };
        let c = form(serde_json::json!([
            "Salmonella enterica >= 0.1%",
            " ",
            "590 >= 50 reads",
            "Salmonella enterica >= 0.1%"
        ]))
        .into_config()
        .unwrap();
        let rules: Vec<String> = c.alerts.iter().map(ToString::to_string).collect();
        assert_eq!(rules, ["Salmonella enterica >= 0.1%", "590 >= 50 reads"]);
        let bad = form(serde_json::json!(["Listeria 50 reads"])).into_config().unwrap_err();
        assert_eq!(bad.code, "alert_rule");
        assert!(bad.message.contains("Listeria 50 reads") && bad.message.contains(">="), "{bad:?}");
    }
}
