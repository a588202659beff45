//! The job runner's state in a process: how many workers run and what one analysis may take
//! ([`RunnerConfig`]), the reference data installed, and the classification databases loaded
//! ([`Runner`]). The workers themselves are [`crate::worker`]'s.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::engine::{Databases, EngineHost, Limits};
use crate::references::References;
use crate::store::db;
use crate::warm::{WarmConfig, WarmEngines};

/// Runs of one analysis that fail in a way that may pass (its engine process killed, the work
/// folder out of reach) before it fails for good; also the claims of one analysis whose engine
/// runs inside the worker ([`EngineHost::InProcess`]), where a worker that dies may have been
/// brought down by the analysis itself.
pub const MAX_ATTEMPTS: i64 = 3;
/// Claims of one analysis whose engine runs in a process of its own before it fails for good. A
/// worker that dies meanwhile (killed, restarted, its machine lost) is not the analysis's fault,
/// since the analysis never runs inside it; the bound only ends an endless loop.
pub const MAX_CLAIMS: i64 = 10;
/// Name of the folder, inside the data folder, where engines write their outputs.
pub const WORK_DIR: &str = "work";

/// How many workers run, and how many threads each engine run may use.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Analyses run at once by this process (0: none; another process runs them).
    pub workers: usize,
    /// Threads one engine run may use.
    pub threads: usize,
    /// How often an idle worker looks at the queue when nothing wakes it.
    pub poll: Duration,
    /// How long a claim holds before another worker may take the analysis over; the running
    /// worker renews it four times per period.
    pub lease: Duration,
    /// How long an analysis waits after a transient failure before it may be claimed again.
    pub retry_after: Duration,
    /// Where engines run.
    pub engine: EngineHost,
    /// Engine processes kept warm between analyses ([`EngineHost::Process`] only).
    pub warm: WarmConfig,
    /// What one analysis may take.
    pub limits: Limits,
    /// Whether this process decides the site's default classification from the reference data
    /// it has installed: the service does; an `mgds worker` on a machine of its own does not
    /// (its data folder holds only what it fetched or was given), so a worker never changes
    /// which classification new uploads get.
    pub sets_default_classification: bool,
}

impl Default for RunnerConfig {
    /// One worker, every core, engine processes when this binary hosts them (it called
    /// [`crate::engine::engine_entry`]), else engines in this process.
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let engine = match (crate::engine::hosts_engines(), std::env::current_exe()) {
            (true, Ok(exe)) => EngineHost::Process(exe),
            _ => EngineHost::InProcess,
        };
        RunnerConfig {
            workers: 1,
            threads,
            poll: Duration::from_secs(2),
            lease: Duration::from_secs(60),
            retry_after: Duration::from_secs(30),
            engine,
            warm: WarmConfig::default(),
            limits: Limits::default(),
            sets_default_classification: true,
        }
    }
}

/// The runner's shared state: installed references, and the
/// classification databases loaded so far.
#[derive(Debug)]
pub struct Runner {
    /// Settings.
    pub config: RunnerConfig,
    refs: RwLock<Arc<References>>,
    pub(crate) loaded: Databases,
    /// Engine processes waiting for the next analysis.
    pub(crate) warm: WarmEngines,
    pub(crate) data_dir: PathBuf,
    /// Names this process's workers in the queue (`<instance>-<n>`).
    pub(crate) instance: String,
    /// When the references folder last changed, as last seen.
    seen: Mutex<Option<std::time::SystemTime>>,
    /// When the store was last asked for references this data folder lacks.
    asked_store: Mutex<Option<std::time::Instant>>,
}

impl Runner {
    /// A runner over `data_dir` with nothing installed yet.
    pub fn new(data_dir: &Path, config: RunnerConfig) -> Runner {
        Runner {
            warm: WarmEngines::new(config.warm),
            config,
            refs: RwLock::new(Arc::new(References::default())),
            loaded: Databases::default(),
            data_dir: data_dir.to_path_buf(),
            instance: format!("{}-{}", std::process::id(), db::new_id()),
            seen: Mutex::new(None),
            asked_store: Mutex::new(None),
        }
    }

    /// Whether it is time (once a minute, across this process's workers) to look in the S3
    /// store for the references of jobs registered elsewhere.
    pub(crate) fn store_check_due(&self) -> bool {
        let Ok(mut last) = self.asked_store.lock() else { return false };
        let due = last.is_none_or(|t| t.elapsed() >= Duration::from_secs(60));
        if due {
            *last = Some(std::time::Instant::now());
        }
        due
    }

    /// Whether references were installed or removed since the last look (the folder's
    /// modification time moves when an install renames its folder in).
    pub(crate) fn references_changed(&self) -> bool {
        let now =
            std::fs::metadata(self.data_dir.join(crate::references::DATABASES_DIR)).and_then(|m| m.modified()).ok();
        let Ok(mut seen) = self.seen.lock() else { return false };
        let first = seen.is_none();
        let changed = *seen != now;
        *seen = now;
        changed && !first
    }

    /// The installed references.
    pub fn references(&self) -> Arc<References> {
        self.refs.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// Replaces the installed references (after an install).
    pub fn set_references(&self, refs: References) {
        if let Ok(mut r) = self.refs.write() {
            *r = Arc::new(refs);
        }
    }
}

/// Removes the outputs of engine runs that a crash interrupted more than a day ago (their
/// analyses were claimed again). Younger folders may belong to a worker process still running.
pub fn sweep_work_dir(data_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir.join(WORK_DIR)) else { return };
    let day = Duration::from_secs(24 * 3600);
    for e in entries.filter_map(Result::ok) {
        let old =
            e.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age > day);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
