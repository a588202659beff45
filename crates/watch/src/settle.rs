//! Settling: what the scanner knows of every file of its folders, and when a file counts as
//! whole. A file settles once two polling passes saw the same size and modification time, it
//! is older than the minimum age and (a sequence file) it is not empty and reads to its end,
//! which also gives its SHA-256; that read runs on a worker, at most two at a time.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};

use crate::config::Options;
use crate::events::Event;
use crate::plan;
use crate::queue::{FileRecord, State};
use crate::scan::{self, Stat};
use crate::spec::View;

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

    /// Not settled yet: looked at again by every polling pass.
    fn pending(&self) -> bool {
        matches!(self.phase, Phase::Seen | Phase::Checking)
    }
}

/// Whether a file is a candidate for upload (recorded in the queue and hashed): a sequence
/// file outside the MinKNOW folders that are only counted or skipped.
fn persisted(root: &Path, p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = p.strip_prefix(root).unwrap_or(p);
    plan::is_sequence(&name)
        && !rel.components().any(|c| matches!(c.as_os_str().to_str(), Some("fastq_fail" | "tmp" | "queued_reads")))
}

/// The end of a content check: the folder's index, the file, the fingerprint it was read at,
/// and its hash or why it is not whole.
pub(crate) type CheckResult = (usize, PathBuf, Stat, Result<String, String>);

/// The files of one watched folder.
struct Files {
    root: PathBuf,
    files: BTreeMap<PathBuf, Tracked>,
}

/// Every file of the scanner's folders (by the folders' index) and how far each is towards
/// settled.
pub(crate) struct Settler {
    folders: Vec<Files>,
    min_age: Duration,
    poll_interval: Duration,
    events: mpsc::UnboundedSender<Event>,
    /// The polling pass under way; a file counts one look per pass.
    pass: u64,
    checks: Arc<Semaphore>,
    /// Settled files not yet written to the queue.
    unsaved: Vec<FileRecord>,
}

impl Settler {
    pub fn new(options: &Options, events: mpsc::UnboundedSender<Event>) -> Settler {
        Settler {
            folders: Vec::new(),
            min_age: options.min_age,
            poll_interval: options.poll_interval,
            events,
            pass: 0,
            checks: Arc::new(Semaphore::new(2)),
            unsaved: Vec::new(),
        }
    }

    /// Adds the next folder, resuming from what the queue recorded of its files.
    pub fn add_folder(&mut self, root: PathBuf, recorded: &[FileRecord]) {
        let files = recorded.iter().map(|f| (f.path.clone(), Tracked::from_record(f))).collect();
        self.folders.push(Files { root, files });
    }

    /// Starts a polling pass.
    pub fn next_pass(&mut self) {
        self.pass += 1;
    }

    /// The files of folder `i` not settled yet.
    pub fn pending(&self, i: usize) -> Vec<PathBuf> {
        self.folders[i].files.iter().filter(|(_, t)| t.pending()).map(|(p, _)| p.clone()).collect()
    }

    /// The files of folder `i` a polling pass did not find (`present` holds what it found): a
    /// full pass (`full`) looked for every file, a partial one only for the pending ones.
    pub fn missing(&self, i: usize, present: &HashSet<PathBuf>, full: bool) -> Vec<PathBuf> {
        self.folders[i]
            .files
            .iter()
            .filter(|(p, t)| t.phase != Phase::Taken && !present.contains(*p) && (full || t.pending()))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Whether folder `i` tracks `p` outside any sample, so that it is forgotten once it went away.
    pub fn may_forget(&self, i: usize, p: &Path) -> bool {
        self.folders[i].files.get(p).is_some_and(|t| t.phase != Phase::Taken)
    }

    /// Forgets files of folder `i` that went away.
    pub fn forget(&mut self, i: usize, gone: &[PathBuf]) {
        for p in gone {
            self.folders[i].files.remove(p);
        }
    }

    /// Records one look at a file of folder `i`; the new or changed files the queue records are
    /// added to `rows`. A polling look (`counted`) counts towards settling. Answers whether
    /// planning has something new to see.
    pub fn observe(&mut self, i: usize, p: PathBuf, s: Stat, counted: bool, rows: &mut Vec<FileRecord>) -> bool {
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

    /// Files seen unchanged long enough are checked (read to their end, hashed); the result
    /// comes back on `tx`. Answers whether any settled at once, and the settled files the
    /// queue records now.
    pub fn settle(&mut self, tx: &mpsc::UnboundedSender<CheckResult>) -> (bool, Vec<FileRecord>) {
        let now_ns = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX);
        let mut changed = false;
        let mut rows = Vec::new();
        for (i, f) in self.folders.iter_mut().enumerate() {
            for (p, t) in f.files.iter_mut() {
                if t.phase != Phase::Seen || t.passes < 2 || t.since.elapsed() < self.poll_interval {
                    continue;
                }
                let age = Duration::from_nanos(u64::try_from(now_ns.saturating_sub(t.stat.mtime_ns)).unwrap_or(0));
                if age < self.min_age {
                    continue;
                }
                if !persisted(&f.root, p) {
                    // Markers and files that are only counted need no content check.
                    t.phase = Phase::Settled;
                    changed = true;
                    continue;
                }
                if t.stat.size == 0 {
                    // An empty sequence file is one being written (a tool that opens its output
                    // and writes it all at the end): it waits for its content, however long.
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
        (changed, rows)
    }

    /// The result of a content check. Answers whether the file settled.
    pub fn checked(&mut self, (i, p, s, r): CheckResult) -> bool {
        let root = self.folders[i].root.clone();
        let Some(t) = self.folders[i].files.get_mut(&p) else { return false };
        if t.phase != Phase::Checking || t.stat != s || scan::stat(&p) != Some(s) {
            // It changed while being read: start again.
            if t.phase == Phase::Checking {
                t.phase = Phase::Seen;
                t.passes = 1;
                t.since = Instant::now();
            }
            return false;
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
                true
            }
            Err(reason) => {
                t.phase = Phase::Unreadable;
                let _ = self.events.send(Event::FileUnreadable { path: p, reason });
                false
            }
        }
    }

    /// The files settled since the last call, for the queue.
    pub fn take_unsaved(&mut self) -> Vec<FileRecord> {
        std::mem::take(&mut self.unsaved)
    }

    /// What the planner knows of the files of folder `i`.
    pub fn views(&self, i: usize) -> BTreeMap<PathBuf, View> {
        self.folders[i]
            .files
            .iter()
            .map(|(p, t)| {
                let settled = matches!(t.phase, Phase::Settled | Phase::Taken);
                (p.clone(), View { settled, hash: t.hash.as_ref().map(|(_, h)| h.clone()) })
            })
            .collect()
    }

    /// Marks `files` of folder `i` as part of a sample, unless one of them is gone or already
    /// went into another (the folder's options changed): a file is never sent twice. Answers
    /// whether they were taken.
    pub fn take(&mut self, i: usize, files: &[PathBuf]) -> bool {
        let f = &mut self.folders[i];
        if files.iter().any(|p| f.files.get(p).is_none_or(|t| t.phase == Phase::Taken)) {
            return false;
        }
        for p in files {
            if let Some(t) = f.files.get_mut(p) {
                t.phase = Phase::Taken;
            }
        }
        true
    }
}
