//! The running watcher: a scanner task (events and polling feeding one path, settling,
//! planning) and an uploader task (the queue, one sample at a time), reporting [`Event`]s.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mgds_client::{Bandwidth, CancellationToken, Client};
use notify::Watcher as _;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

use crate::Error;
use crate::config::{FolderConfig, Options};
use crate::plan::{self, RunKind, RunState, View};
use crate::queue::{FileRecord, Queue, RunRecord, SampleRecord, State};
use crate::scan::{self, Filter, Stat};
use crate::upload::{self, Outcome};

/// What the watcher reports as it goes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A file that matters appeared (or changed).
    FileSeen {
        /// The file.
        path: PathBuf,
    },
    /// A file stopped changing and reads to its end.
    FileSettled {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A file stopped changing but does not read to its end (a cut gzip); it is looked at
    /// again if it changes.
    FileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A run folder is waiting for something (said in words).
    RunWaiting {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// What it waits for.
        reason: String,
    },
    /// The instrument reports the run failed: nothing of it is uploaded.
    RunFailed {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// The instrument's status and message.
        reason: String,
    },
    /// Every sample of a complete run is on the service.
    RunUploaded {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// How many samples it made.
        samples: usize,
    },
    /// A sample is ready and queued for upload.
    SampleQueued {
        /// Its key in the queue.
        key: String,
        /// Its name.
        name: String,
        /// Its `external_sample_id`.
        external_id: String,
        /// The files it is made of.
        files: Vec<PathBuf>,
    },
    /// Upload progress (at most a few times a second).
    Uploading {
        /// The sample's key.
        key: String,
        /// Its name.
        name: String,
        /// Bytes sent.
        sent: u64,
        /// Bytes in all.
        total: u64,
    },
    /// A sample is on the service.
    SampleConfirmed {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Its id on the service.
        sample_id: String,
        /// Its `external_sample_id`.
        external_id: String,
        /// It was found already there (an earlier attempt finished it): nothing was sent.
        already_there: bool,
    },
    /// An attempt to make a sample failed.
    SampleFailed {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Why.
        error: String,
        /// When it is tried again; `None`: not before the next start.
        retry_in: Option<Duration>,
    },
    /// Starting a job on a new sample failed (the sample itself is fine).
    JobFailed {
        /// The sample's name.
        name: String,
        /// The job.
        job: String,
        /// Why.
        error: String,
    },
    /// Uploads paused (by [`Watcher::pause`] or the pause file).
    Paused,
    /// Uploads resumed.
    Resumed,
}

/// Shared between the handle and the tasks.
struct Control {
    paused: AtomicBool,
    pause_file: Option<PathBuf>,
    bandwidth: Bandwidth,
    wake: Notify,
}

impl Control {
    fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed) || self.pause_file.as_ref().is_some_and(|p| p.exists())
    }
}

/// A running watcher over one or more folders. Start it with [`Watcher::start`]; end it with
/// [`Watcher::stop`].
pub struct Watcher {
    stop: CancellationToken,
    control: Arc<Control>,
    tasks: Vec<JoinHandle<Result<(), Error>>>,
    _lock: std::fs::File,
}

/// The file that keeps a second watcher off the same queue.
pub const LOCK_FILE: &str = "watch.lock";

impl Watcher {
    /// Starts watching `folders`, uploading through `client`, with the queue in `data_dir`
    /// (`watch.sqlite3`; also a `watch-staging/` folder for joined files). Events arrive on
    /// the receiver (dropping it is fine).
    pub async fn start(
        folders: Vec<FolderConfig>,
        options: Options,
        client: Client,
        data_dir: impl AsRef<Path>,
    ) -> Result<(Watcher, mpsc::UnboundedReceiver<Event>), Error> {
        let data_dir = data_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&data_dir).map_err(|e| Error::io("create", &data_dir, e))?;
        let lock_path = data_dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io("create", &lock_path, e))?;
        if lock.try_lock().is_err() {
            return Err(Error::Locked { path: lock_path });
        }
        let queue = Queue::open(&data_dir).await?;
        queue.retry_failed().await?;
        let mut states = Vec::new();
        for cfg in folders {
            let root = std::fs::canonicalize(&cfg.path).map_err(|e| Error::io("open the folder", &cfg.path, e))?;
            if !root.is_dir() {
                return Err(Error::NotAFolder { path: cfg.path.clone() });
            }
            let filter = Filter::new(&cfg, &root)?;
            let mut files = BTreeMap::new();
            for f in queue.files(&root).await? {
                files.insert(f.path.clone(), Tracked::from_record(&f));
            }
            let mut cfg = cfg;
            cfg.path = root.clone();
            states.push(FolderState { cfg, root, filter, files });
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let control = Arc::new(Control {
            paused: AtomicBool::new(false),
            pause_file: options.pause_file.clone(),
            bandwidth: Bandwidth::new(options.bandwidth),
            wake: Notify::new(),
        });
        let (confirmed_tx, confirmed_rx) = mpsc::unbounded_channel();
        let known = queue.sample_keys().await?;
        let confirmed: HashSet<String> =
            queue.samples().await?.into_iter().filter(|s| s.state == State::Confirmed).map(|s| s.key).collect();
        // Events: a notify watcher per folder sending into one channel.
        let (ev_tx, ev_rx) = mpsc::unbounded_channel::<notify::Result<notify::Event>>();
        let mut notifiers = Vec::new();
        if options.events {
            for f in &states {
                let tx = ev_tx.clone();
                let mut w = notify::recommended_watcher(move |e| {
                    let _ = tx.send(e);
                })
                .map_err(|e| Error::Events { path: f.root.clone(), source: e })?;
                let mode = if f.cfg.recursive {
                    notify::RecursiveMode::Recursive
                } else {
                    notify::RecursiveMode::NonRecursive
                };
                w.watch(&f.root, mode).map_err(|e| Error::Events { path: f.root.clone(), source: e })?;
                notifiers.push(w);
            }
        }
        drop(ev_tx);
        let folders_cfg: Vec<FolderConfig> = states.iter().map(|s| s.cfg.clone()).collect();
        let scanner = Scanner {
            folders: states,
            options: options.clone(),
            queue: queue.clone(),
            events: tx.clone(),
            known,
            confirmed,
            control: control.clone(),
            pass: 0,
            checks: Arc::new(tokio::sync::Semaphore::new(2)),
            unsaved: Vec::new(),
        };
        let staging = data_dir.join("watch-staging");
        // The lock is held: whatever is staged there was left by a watcher that stopped mid-way.
        mgds_upload::sweep_staging(&staging);
        let uploader = Uploader {
            folders: folders_cfg,
            options,
            queue: queue.clone(),
            client,
            staging,
            events: tx,
            control: control.clone(),
            confirmed: confirmed_tx,
        };
        let s_stop = stop.clone();
        let u_stop = stop.clone();
        // A task that fails (the queue file became unwritable) stops the other one too.
        let tasks = vec![
            tokio::spawn(async move {
                let r = scanner.run(s_stop.clone(), ev_rx, confirmed_rx).await;
                drop(notifiers);
                if r.is_err() {
                    s_stop.cancel();
                }
                r
            }),
            tokio::spawn(async move {
                let r = uploader.run(u_stop.clone()).await;
                if r.is_err() {
                    u_stop.cancel();
                }
                r
            }),
        ];
        Ok((Watcher { stop, control, tasks, _lock: lock }, rx))
    }

    /// Pauses uploads: an upload under way stops (it starts again from the beginning on
    /// resume; nothing half-made is left as a sample). Scanning goes on.
    pub fn pause(&self) {
        self.control.paused.store(true, Ordering::Relaxed);
        self.control.wake.notify_one();
    }

    /// Resumes uploads (unless the pause file is there).
    pub fn resume(&self) {
        self.control.paused.store(false, Ordering::Relaxed);
        self.control.wake.notify_one();
    }

    /// Whether uploads are paused (by [`Watcher::pause`] or the pause file).
    pub fn is_paused(&self) -> bool {
        self.control.is_paused()
    }

    /// Changes the upload speed limit (bytes per second, 0: none) at once.
    pub fn set_bandwidth(&self, bytes_per_sec: u64) {
        self.control.bandwidth.set_limit(bytes_per_sec);
    }

    /// Stops: scanning ends, an upload under way is abandoned (and resumes at the next start).
    /// Answers the first error a task ended with, if any.
    pub async fn stop(self) -> Result<(), Error> {
        self.stop.cancel();
        self.wait().await
    }

    /// Waits until the watcher ends (after a fatal error of the queue).
    pub async fn wait(mut self) -> Result<(), Error> {
        let mut first = Ok(());
        for t in self.tasks.drain(..) {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    self.stop.cancel();
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
                Err(e) => tracing::error!("a watcher task failed: {e}"),
            }
        }
        first
    }
}

/// Where a file stands in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Seen,
    Checking,
    Settled,
    Unreadable,
    /// Part of a sample (uploading, confirmed or failed): never looked at again.
    Taken,
}

#[derive(Debug, Clone)]
struct Tracked {
    stat: Stat,
    since: Instant,
    passes: u32,
    last_pass: u64,
    phase: Phase,
    /// The content hash and the fingerprint it was taken at.
    hash: Option<(Stat, String)>,
    warned: bool,
}

impl Tracked {
    fn new(stat: Stat, pass: u64) -> Tracked {
        Tracked {
            stat,
            since: Instant::now(),
            passes: 1,
            last_pass: pass,
            phase: Phase::Seen,
            hash: None,
            warned: false,
        }
    }

    fn from_record(f: &FileRecord) -> Tracked {
        let stat = Stat { size: f.size, mtime_ns: f.mtime_ns };
        let phase = match f.state {
            State::Seen | State::Settled => Phase::Seen,
            _ => Phase::Taken,
        };
        let mut t = Tracked::new(stat, 0);
        t.passes = 0;
        t.phase = phase;
        t.hash = f.sha256.clone().map(|h| (stat, h));
        t
    }
}

struct FolderState {
    cfg: FolderConfig,
    root: PathBuf,
    filter: Filter,
    files: BTreeMap<PathBuf, Tracked>,
}

/// Whether a file is a candidate for upload (recorded in the queue and hashed): a sequence
/// file outside the MinKNOW folders that are only counted or skipped.
fn persisted(root: &Path, p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = p.strip_prefix(root).unwrap_or(p);
    plan::is_sequence(&name)
        && !rel.components().any(|c| matches!(c.as_os_str().to_str(), Some("fastq_fail" | "tmp" | "queued_reads")))
}

struct Scanner {
    folders: Vec<FolderState>,
    options: Options,
    queue: Queue,
    events: mpsc::UnboundedSender<Event>,
    known: HashSet<String>,
    confirmed: HashSet<String>,
    control: Arc<Control>,
    pass: u64,
    checks: Arc<tokio::sync::Semaphore>,
    /// Settled files not yet written to the queue.
    unsaved: Vec<FileRecord>,
}

/// How long changes are gathered before planning.
const PLAN_DELAY: Duration = Duration::from_millis(50);

type CheckResult = (usize, PathBuf, Stat, Result<String, String>);

impl Scanner {
    async fn run(
        mut self,
        stop: CancellationToken,
        mut fs_events: mpsc::UnboundedReceiver<notify::Result<notify::Event>>,
        mut confirmed: mpsc::UnboundedReceiver<String>,
    ) -> Result<(), Error> {
        let (check_tx, mut check_rx) = mpsc::unbounded_channel::<CheckResult>();
        let mut tick = tokio::time::interval(self.options.poll_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_full: Option<Instant> = None;
        let mut events_open = self.options.events;
        let mut was_paused = false;
        // Planning looks at every file of a folder, so changes are gathered for a moment and
        // planned together rather than once per file.
        let mut plan_at: Option<tokio::time::Instant> = None;
        loop {
            let mut changed = false;
            tokio::select! {
                () = stop.cancelled() => return Ok(()),
                () = async { tokio::time::sleep_until(plan_at.unwrap_or_else(tokio::time::Instant::now)).await }, if plan_at.is_some() => {
                    plan_at = None;
                    self.plan().await?;
                }
                _ = tick.tick() => {
                    self.pass += 1;
                    let full = !self.options.events
                        || last_full.is_none_or(|t| t.elapsed() >= self.options.rescan_interval);
                    if full {
                        last_full = Some(Instant::now());
                    }
                    changed |= self.poll(full).await?;
                    changed |= self.settle(&check_tx).await?;
                    let paused = self.control.is_paused();
                    if paused != was_paused {
                        was_paused = paused;
                        let _ = self.events.send(if paused { Event::Paused } else { Event::Resumed });
                        self.control.wake.notify_one();
                    }
                }
                e = fs_events.recv(), if events_open => match e {
                    None => events_open = false,
                    Some(first) => {
                        let mut paths = HashSet::new();
                        let mut rescan = false;
                        let mut take = |e: notify::Result<notify::Event>| match e {
                            // Opening and reading (our own walks and checks among them)
                            // change nothing; reacting to them would feed on itself.
                            Ok(ev) if matches!(ev.kind, notify::EventKind::Access(_)) => {
                                rescan |= ev.need_rescan();
                            }
                            Ok(ev) => {
                                rescan |= ev.need_rescan();
                                paths.extend(ev.paths);
                            }
                            Err(_) => rescan = true,
                        };
                        take(first);
                        while let Ok(e) = fs_events.try_recv() {
                            take(e);
                        }
                        if rescan {
                            last_full = None;
                        }
                        changed |= self.observe_paths(paths).await?;
                    }
                },
                r = check_rx.recv() => if let Some(r) = r {
                    changed |= self.checked(r).await?;
                },
                k = confirmed.recv() => if let Some(k) = k {
                    self.confirmed.insert(k);
                    changed = true;
                },
            }
            if changed && plan_at.is_none() {
                plan_at = Some(tokio::time::Instant::now() + PLAN_DELAY);
            }
        }
    }

    /// One polling pass: everything (`full`), or only the files not yet settled.
    async fn poll(&mut self, full: bool) -> Result<bool, Error> {
        let mut changed = false;
        for i in 0..self.folders.len() {
            let seen: Vec<(PathBuf, Stat)> = if full {
                let filter = self.folders[i].filter.clone();
                let root = self.folders[i].root.clone();
                tokio::task::spawn_blocking(move || filter.walk(&root)).await.unwrap_or_default()
            } else {
                let pending: Vec<PathBuf> = self.folders[i]
                    .files
                    .iter()
                    .filter(|(_, t)| matches!(t.phase, Phase::Seen | Phase::Checking))
                    .map(|(p, _)| p.clone())
                    .collect();
                tokio::task::spawn_blocking(move || {
                    pending.into_iter().filter_map(|p| scan::stat(&p).map(|s| (p, s))).collect::<Vec<_>>()
                })
                .await
                .unwrap_or_default()
            };
            let mut present = HashSet::new();
            let mut new_rows = Vec::new();
            for (p, s) in seen {
                present.insert(p.clone());
                changed |= self.observe(i, p, s, true, &mut new_rows);
            }
            // Files that went away (a full pass sees everything; a partial one re-stats the
            // pending files it asked about).
            let gone: Vec<PathBuf> = self.folders[i]
                .files
                .iter()
                .filter(|(p, t)| {
                    t.phase != Phase::Taken
                        && !present.contains(*p)
                        && (full || matches!(t.phase, Phase::Seen | Phase::Checking))
                })
                .map(|(p, _)| p.clone())
                .collect();
            changed |= self.record_look(i, &gone, &new_rows).await?;
        }
        Ok(changed)
    }

    /// Saves one look at folder `i`: files that went away are forgotten, new ones recorded.
    /// Answers whether any went away.
    async fn record_look(&mut self, i: usize, gone: &[PathBuf], new_rows: &[FileRecord]) -> Result<bool, Error> {
        for p in gone {
            self.folders[i].files.remove(p);
        }
        if !gone.is_empty() {
            self.queue.forget_files(gone).await?;
        }
        self.queue.put_files(new_rows).await?;
        Ok(!gone.is_empty())
    }

    /// Paths named by file-system events: looked at now (a new folder is walked).
    async fn observe_paths(&mut self, paths: HashSet<PathBuf>) -> Result<bool, Error> {
        let mut changed = false;
        for i in 0..self.folders.len() {
            let mine: Vec<PathBuf> = paths.iter().filter(|p| p.starts_with(&self.folders[i].root)).cloned().collect();
            if mine.is_empty() {
                continue;
            }
            let filter = self.folders[i].filter.clone();
            let (seen, gone) = tokio::task::spawn_blocking(move || {
                let mut seen = Vec::new();
                let mut gone = Vec::new();
                for p in mine {
                    if p.is_dir() {
                        seen.extend(filter.walk(&p));
                    } else if let Some(s) = scan::stat(&p) {
                        if filter.wants(&p) {
                            seen.push((p, s));
                        }
                    } else {
                        gone.push(p);
                    }
                }
                (seen, gone)
            })
            .await
            .unwrap_or_default();
            let mut new_rows = Vec::new();
            for (p, s) in seen {
                changed |= self.observe(i, p, s, false, &mut new_rows);
            }
            let gone: Vec<PathBuf> = gone
                .into_iter()
                .filter(|p| self.folders[i].files.get(p).is_some_and(|t| t.phase != Phase::Taken))
                .collect();
            changed |= self.record_look(i, &gone, &new_rows).await?;
        }
        Ok(changed)
    }

    /// Records one look at a file. A polling look (`counted`) counts towards settling.
    fn observe(&mut self, i: usize, p: PathBuf, s: Stat, counted: bool, rows: &mut Vec<FileRecord>) -> bool {
        let pass = self.pass;
        let f = &mut self.folders[i];
        let row = |p: &Path| FileRecord {
            path: p.to_path_buf(),
            folder: f.root.clone(),
            size: s.size,
            mtime_ns: s.mtime_ns,
            sha256: None,
            state: State::Seen,
            sample_key: None,
        };
        match f.files.get_mut(&p) {
            None => {
                if persisted(&f.root, &p) {
                    rows.push(row(&p));
                }
                let _ = self.events.send(Event::FileSeen { path: p.clone() });
                f.files.insert(p, Tracked::new(s, pass));
                true
            }
            Some(t) if t.phase == Phase::Taken => {
                if t.stat != s && !t.warned {
                    t.warned = true;
                    tracing::warn!(path = %p.display(), "file changed after it was uploaded; it is not uploaded again");
                }
                false
            }
            Some(t) if t.stat != s => {
                *t = Tracked { hash: t.hash.take(), ..Tracked::new(s, pass) };
                if persisted(&f.root, &p) {
                    rows.push(row(&p));
                }
                let _ = self.events.send(Event::FileSeen { path: p });
                // A settled file that changes unsettles its run.
                true
            }
            Some(t) => {
                if counted && t.last_pass < pass {
                    t.passes += 1;
                    t.last_pass = pass;
                }
                false
            }
        }
    }

    /// Files seen unchanged long enough are checked (read to their end, hashed).
    async fn settle(&mut self, tx: &mpsc::UnboundedSender<CheckResult>) -> Result<bool, Error> {
        let min_age = self.options.min_age;
        let interval = self.options.poll_interval;
        let now_ns = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX);
        let mut changed = false;
        let mut rows = Vec::new();
        for (i, f) in self.folders.iter_mut().enumerate() {
            for (p, t) in f.files.iter_mut() {
                if t.phase != Phase::Seen || t.passes < 2 || t.since.elapsed() < interval {
                    continue;
                }
                let age = Duration::from_nanos(u64::try_from(now_ns.saturating_sub(t.stat.mtime_ns)).unwrap_or(0));
                if age < min_age {
                    continue;
                }
                if !persisted(&f.root, p) {
                    // Markers and files that are only counted need no content check.
                    t.phase = Phase::Settled;
                    changed = true;
                    continue;
                }
                if let Some((at, h)) = &t.hash
                    && *at == t.stat
                {
                    t.phase = Phase::Settled;
                    changed = true;
                    rows.push(FileRecord {
                        path: p.clone(),
                        folder: f.root.clone(),
                        size: t.stat.size,
                        mtime_ns: t.stat.mtime_ns,
                        sha256: Some(h.clone()),
                        state: State::Settled,
                        sample_key: None,
                    });
                    let _ = self.events.send(Event::FileSettled { path: p.clone(), size: t.stat.size });
                    continue;
                }
                t.phase = Phase::Checking;
                let (tx, p, s, sem) = (tx.clone(), p.clone(), t.stat, self.checks.clone());
                tokio::spawn(async move {
                    let _permit = sem.acquire_owned().await;
                    let q = p.clone();
                    let r = tokio::task::spawn_blocking(move || scan::check(&q))
                        .await
                        .unwrap_or_else(|e| Err(format!("the check failed: {e}")));
                    let _ = tx.send((i, p, s, r));
                });
            }
        }
        self.queue.put_files(&rows).await?;
        Ok(changed)
    }

    /// The result of a content check.
    async fn checked(&mut self, (i, p, s, r): CheckResult) -> Result<bool, Error> {
        let root = self.folders[i].root.clone();
        let Some(t) = self.folders[i].files.get_mut(&p) else { return Ok(false) };
        if t.phase != Phase::Checking || t.stat != s || scan::stat(&p) != Some(s) {
            // It changed while being read: start again.
            if t.phase == Phase::Checking {
                t.phase = Phase::Seen;
                t.passes = 1;
                t.since = Instant::now();
            }
            return Ok(false);
        }
        match r {
            Ok(hash) => {
                t.phase = Phase::Settled;
                t.hash = Some((s, hash.clone()));
                let rec = FileRecord {
                    path: p.clone(),
                    folder: root,
                    size: s.size,
                    mtime_ns: s.mtime_ns,
                    sha256: Some(hash),
                    state: State::Settled,
                    sample_key: None,
                };
                // Written with the next plan, in one transaction with the others settled
                // meanwhile (a crash before that only means settling again).
                self.unsaved.push(rec);
                let _ = self.events.send(Event::FileSettled { path: p, size: s.size });
                Ok(true)
            }
            Err(reason) => {
                t.phase = Phase::Unreadable;
                let _ = self.events.send(Event::FileUnreadable { path: p, reason });
                Ok(false)
            }
        }
    }

    /// Plans every folder: queues the samples that became ready and reports runs.
    async fn plan(&mut self) -> Result<(), Error> {
        let unsaved = std::mem::take(&mut self.unsaved);
        self.queue.put_files(&unsaved).await?;
        let mut queued = false;
        for i in 0..self.folders.len() {
            let f = &self.folders[i];
            let views: BTreeMap<PathBuf, View> = f
                .files
                .iter()
                .map(|(p, t)| {
                    let settled = matches!(t.phase, Phase::Settled | Phase::Taken);
                    (p.clone(), View { settled, hash: t.hash.as_ref().map(|(_, h)| h.clone()) })
                })
                .collect();
            let cfg = f.cfg.clone();
            let root = f.root.clone();
            let planned =
                tokio::task::spawn_blocking(move || plan::plan(&cfg, &root, &views)).await.unwrap_or_default();
            let failed_runs: HashSet<PathBuf> = planned
                .runs
                .iter()
                .filter(|r| matches!(r.state, RunState::Failed(_)))
                .map(|r| r.path.clone())
                .collect();
            let mut new = Vec::new();
            for spec in planned.samples {
                if self.known.contains(&spec.key) || spec.run.as_ref().is_some_and(|r| failed_runs.contains(r)) {
                    continue;
                }
                let files = spec.recipe.files();
                let f = &mut self.folders[i];
                if files.iter().any(|p| f.files.get(p).is_none_or(|t| t.phase == Phase::Taken)) {
                    // A file already went into another sample (the folder's options changed):
                    // never sent twice.
                    continue;
                }
                for p in &files {
                    if let Some(t) = f.files.get_mut(p) {
                        t.phase = Phase::Taken;
                    }
                }
                self.known.insert(spec.key.clone());
                new.push((spec, files));
            }
            // One transaction for all: a folder of thousands of files does not wait on
            // thousands of disk flushes.
            let jobs = !self.folders[i].cfg.jobs.is_empty();
            let specs: Vec<&plan::Spec> = new.iter().map(|(s, _)| s).collect();
            self.queue.add_samples(&self.folders[i].root, &specs, jobs).await?;
            queued |= !new.is_empty();
            for (spec, files) in new {
                let _ = self.events.send(Event::SampleQueued {
                    key: spec.key,
                    name: spec.name,
                    external_id: spec.external_id,
                    files,
                });
            }
            for r in planned.runs {
                let (state, detail) = match &r.state {
                    RunState::Waiting(why) => ("waiting", Some(why.clone())),
                    RunState::Failed(why) => ("failed", Some(why.clone())),
                    RunState::Complete if r.samples.iter().all(|k| self.confirmed.contains(k)) => ("uploaded", None),
                    RunState::Complete => ("complete", None),
                };
                let kind = match r.kind {
                    RunKind::Illumina => "illumina",
                    RunKind::Nanopore => "nanopore",
                };
                let rec = RunRecord {
                    path: r.path.clone(),
                    folder: self.folders[i].root.clone(),
                    kind: kind.into(),
                    run_id: r.id.clone(),
                    state: state.into(),
                    detail: detail.clone(),
                };
                if self.queue.set_run(&rec).await? {
                    let ev = match state {
                        "waiting" => Some(Event::RunWaiting {
                            run: r.path,
                            kind: r.kind,
                            run_id: r.id,
                            reason: detail.unwrap_or_default(),
                        }),
                        "failed" => Some(Event::RunFailed {
                            run: r.path,
                            kind: r.kind,
                            run_id: r.id,
                            reason: detail.unwrap_or_default(),
                        }),
                        "uploaded" => Some(Event::RunUploaded {
                            run: r.path,
                            kind: r.kind,
                            run_id: r.id,
                            samples: r.samples.len(),
                        }),
                        _ => None,
                    };
                    if let Some(ev) = ev {
                        let _ = self.events.send(ev);
                    }
                }
            }
        }
        if queued {
            self.control.wake.notify_one();
        }
        Ok(())
    }
}

struct Uploader {
    folders: Vec<FolderConfig>,
    options: Options,
    queue: Queue,
    client: Client,
    staging: PathBuf,
    events: mpsc::UnboundedSender<Event>,
    control: Arc<Control>,
    confirmed: mpsc::UnboundedSender<String>,
}

impl Uploader {
    async fn run(self, stop: CancellationToken) -> Result<(), Error> {
        // The pause file is looked for at this pace while paused or idle.
        let idle = self.options.poll_interval.min(Duration::from_secs(1));
        loop {
            if stop.is_cancelled() {
                return Ok(());
            }
            if self.control.is_paused() {
                tokio::select! {
                    () = stop.cancelled() => return Ok(()),
                    () = self.control.wake.notified() => {},
                    () = tokio::time::sleep(idle) => {},
                }
                continue;
            }
            let Some(s) = self.queue.next_due().await? else {
                let wait = self.queue.next_retry_in().await?.map_or(idle, |d| d.min(idle));
                tokio::select! {
                    () = stop.cancelled() => return Ok(()),
                    () = self.control.wake.notified() => {},
                    () = tokio::time::sleep(wait) => {},
                }
                continue;
            };
            let Some(cfg) = self.folders.iter().find(|f| f.path == s.folder).cloned() else {
                // A folder no longer watched: its queued samples wait for it.
                self.queue.attempt_failed(&s.key, "its folder is no longer watched", None).await?;
                continue;
            };
            if s.state == State::Confirmed {
                self.start_jobs(&cfg, &s).await?;
                continue;
            }
            self.upload(&cfg, &s, &stop).await?;
        }
    }

    async fn upload(&self, cfg: &FolderConfig, s: &SampleRecord, stop: &CancellationToken) -> Result<(), Error> {
        let cancel = stop.child_token();
        let progress = {
            let events = self.events.clone();
            let (key, name) = (s.key.clone(), s.name.clone());
            let last = std::sync::Mutex::new(None::<Instant>);
            Box::new(move |sent: u64, total: u64| {
                let mut l = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if sent == total || l.is_none_or(|t| t.elapsed() >= Duration::from_millis(250)) {
                    *l = Some(Instant::now());
                    let _ = events.send(Event::Uploading { key: key.clone(), name: name.clone(), sent, total });
                }
            })
        };
        let ctx = upload::Ctx {
            client: &self.client,
            staging: &self.staging,
            bandwidth: &self.control.bandwidth,
            cancel: cancel.clone(),
            progress,
        };
        // Pausing stops the transfer under way.
        let watch_pause = async {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                if self.control.is_paused() {
                    cancel.cancel();
                    return;
                }
            }
        };
        let (outcome, id) = tokio::select! {
            r = upload::make(ctx, cfg, s) => r,
            () = watch_pause => (Outcome::Stopped, None),
        };
        if let Some(id) = &id
            && s.sample_id.as_deref() != Some(id)
        {
            self.queue.set_sample_id(&s.key, id).await?;
        }
        match outcome {
            Outcome::Confirmed(sample_id, already_there) => {
                self.queue.confirm(&s.key, &sample_id).await?;
                let _ = self.confirmed.send(s.key.clone());
                let _ = self.events.send(Event::SampleConfirmed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    sample_id: sample_id.clone(),
                    external_id: s.external_id.clone(),
                    already_there,
                });
                if s.jobs_pending {
                    let mut s = s.clone();
                    s.sample_id = Some(sample_id);
                    self.start_jobs(cfg, &s).await?;
                }
            }
            Outcome::Stopped => {}
            Outcome::Transient(error) => {
                let retry_in = self.backoff(s.attempts);
                self.queue.attempt_failed(&s.key, &error, Some(retry_in)).await?;
                let _ = self.events.send(Event::SampleFailed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    error,
                    retry_in: Some(retry_in),
                });
            }
            Outcome::Permanent(error) => {
                self.queue.attempt_failed(&s.key, &error, None).await?;
                let _ = self.events.send(Event::SampleFailed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    error,
                    retry_in: None,
                });
            }
        }
        Ok(())
    }

    /// Doubling from the first wait, with up to a quarter of jitter, capped.
    fn backoff(&self, attempts: u32) -> Duration {
        let base = self.options.initial_backoff.saturating_mul(1u32 << attempts.min(16)).min(self.options.max_backoff);
        let nanos = u64::from(std::process::id()).wrapping_mul(0x9E37_79B9).wrapping_add(u64::from(attempts)) % 1000;
        base + base / 4 * u32::try_from(nanos).unwrap_or(0) / 1000
    }

    async fn start_jobs(&self, cfg: &FolderConfig, s: &SampleRecord) -> Result<(), Error> {
        let Some(id) = &s.sample_id else {
            return self.queue.jobs_started(&s.key).await;
        };
        for job in &cfg.jobs {
            if let Err(e) = self.client.jobs().run(job.as_str(), id.as_str()).send().await {
                let _ =
                    self.events.send(Event::JobFailed { name: s.name.clone(), job: job.clone(), error: e.to_string() });
            }
        }
        self.queue.jobs_started(&s.key).await
    }
}
