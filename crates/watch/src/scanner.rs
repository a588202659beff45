//! The scanner task: file-system events and polling passes feed one path into settling, and
//! whatever changed is planned; the samples that became ready go into the queue and runs are
//! reported.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mgds_client::CancellationToken;
use notify::Watcher as _;
use tokio::sync::mpsc;

use crate::Error;
use crate::config::{FolderConfig, Options};
use crate::control::Control;
use crate::events::Event;
use crate::plan;
use crate::queue::{FileRecord, Queue, RunRecord, State};
use crate::scan::{self, Filter, Stat};
use crate::settle::{CheckResult, Settler};
use crate::spec::{RunKind, RunState, Spec, View};

/// File-system events, as the notify watchers send them.
pub(crate) type FsEvents = mpsc::UnboundedReceiver<notify::Result<notify::Event>>;

/// A watched folder as the scanner walks it.
struct Folder {
    cfg: FolderConfig,
    root: PathBuf,
    filter: Filter,
}

/// The scanner task, over every watched folder.
pub(crate) struct Scanner {
    folders: Vec<Folder>,
    /// The files of `folders`, by the same index.
    files: Settler,
    options: Options,
    queue: Queue,
    events: mpsc::UnboundedSender<Event>,
    /// The keys of every sample queued: a sample is queued once.
    known: HashSet<String>,
    /// The keys of the samples on the service: a run is uploaded once all of its are.
    confirmed: HashSet<String>,
    control: Arc<Control>,
    /// Kept for as long as the scanner runs: dropping one ends its events.
    _notifiers: Vec<notify::RecommendedWatcher>,
}

/// How long changes are gathered before planning.
const PLAN_DELAY: Duration = Duration::from_millis(50);

impl Scanner {
    /// The scanner of `folders` (each made absolute), resuming from what `queue` recorded, and
    /// the file-system events of the folders (none unless `options.events`).
    pub async fn new(
        folders: Vec<FolderConfig>,
        options: Options,
        queue: Queue,
        events: mpsc::UnboundedSender<Event>,
        control: Arc<Control>,
    ) -> Result<(Scanner, FsEvents), Error> {
        let mut files = Settler::new(&options, events.clone());
        let mut states = Vec::new();
        for mut cfg in folders {
            let root = std::fs::canonicalize(&cfg.path).map_err(|e| Error::io("open the folder", &cfg.path, e))?;
            if !root.is_dir() {
                return Err(Error::NotAFolder { path: cfg.path.clone() });
            }
            let filter = Filter::new(&cfg, &root)?;
            files.add_folder(root.clone(), &queue.files(&root).await?);
            cfg.path = root.clone();
            states.push(Folder { cfg, root, filter });
        }
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
        let scanner = Scanner {
            folders: states,
            files,
            options,
            queue,
            events,
            known,
            confirmed,
            control,
            _notifiers: notifiers,
        };
        Ok((scanner, ev_rx))
    }

    /// The folders' configurations, with their paths made absolute.
    pub fn folders(&self) -> Vec<FolderConfig> {
        self.folders.iter().map(|f| f.cfg.clone()).collect()
    }

    /// Runs until `stop`. `confirmed` tells the keys of the samples the uploader confirmed.
    pub async fn run(
        mut self,
        stop: CancellationToken,
        mut fs_events: FsEvents,
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
                    self.files.next_pass();
                    let full = !self.options.events
                        || last_full.is_none_or(|t| t.elapsed() >= self.options.rescan_interval);
                    if full {
                        last_full = Some(Instant::now());
                    }
                    changed |= self.poll(full).await?;
                    let (settled, rows) = self.files.settle(&check_tx);
                    self.queue.put_files(&rows).await?;
                    changed |= settled;
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
                        let (paths, rescan) = drain(first, &mut fs_events);
                        if rescan {
                            last_full = None;
                        }
                        changed |= self.observe_paths(paths).await?;
                    }
                },
                r = check_rx.recv() => if let Some(r) = r {
                    changed |= self.files.checked(r);
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
                let pending = self.files.pending(i);
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
                changed |= self.files.observe(i, p, s, true, &mut new_rows);
            }
            // Files that went away (a full pass sees everything; a partial one re-stats the
            // pending files it asked about).
            let gone = self.files.missing(i, &present, full);
            changed |= self.record_look(i, &gone, &new_rows).await?;
        }
        Ok(changed)
    }

    /// Saves one look at folder `i`: files that went away are forgotten, new ones recorded.
    /// Answers whether any went away.
    async fn record_look(&mut self, i: usize, gone: &[PathBuf], new_rows: &[FileRecord]) -> Result<bool, Error> {
        self.files.forget(i, gone);
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
                changed |= self.files.observe(i, p, s, false, &mut new_rows);
            }
            let gone: Vec<PathBuf> = gone.into_iter().filter(|p| self.files.may_forget(i, p)).collect();
            changed |= self.record_look(i, &gone, &new_rows).await?;
        }
        Ok(changed)
    }

    /// Plans every folder: queues the samples that became ready and reports runs.
    async fn plan(&mut self) -> Result<(), Error> {
        let unsaved = self.files.take_unsaved();
        self.queue.put_files(&unsaved).await?;
        let mut queued = false;
        for i in 0..self.folders.len() {
            let views: BTreeMap<PathBuf, View> = self.files.views(i);
            let cfg = self.folders[i].cfg.clone();
            let root = self.folders[i].root.clone();
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
                if !self.files.take(i, &files) {
                    continue;
                }
                self.known.insert(spec.key.clone());
                new.push((spec, files));
            }
            // One transaction for all: a folder of thousands of files does not wait on
            // thousands of disk flushes.
            let jobs = !self.folders[i].cfg.jobs.is_empty();
            let specs: Vec<&Spec> = new.iter().map(|(s, _)| s).collect();
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

/// Takes `first` and every event already waiting: the paths they name, and whether the folders
/// must be walked again in full (events were lost).
fn drain(first: notify::Result<notify::Event>, fs_events: &mut FsEvents) -> (HashSet<PathBuf>, bool) {
    let mut paths = HashSet::new();
    let mut rescan = false;
    let mut take = |e: notify::Result<notify::Event>| match e {
        // Opening and reading (our own walks and checks among them) change nothing; reacting to
        // them would feed on itself.
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
    (paths, rescan)
}
