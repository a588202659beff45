//! The job runner: workers that claim pending analyses from the durable queue, run the engine
//! of the analysis's job, and store what it produced.
//!
//! A claim is one SQL statement: it takes the oldest waiting analysis of a job this runner can
//! run (or one whose previous claim has lapsed), sets a lease, and counts the claim. While the
//! engine works, the worker renews the lease; a worker that dies (a killed process, a power cut)
//! stops renewing, so another worker (or this service after a restart) claims the analysis again
//! once the lease expires. After [`MAX_CLAIMS`] claims ([`MAX_ATTEMPTS`] when engines run inside
//! the worker) the analysis fails with a message instead of being tried forever. How a run that
//! did not finish is handled depends on its [`Failure`]: a refusal (a file that is not sequence
//! data, a missing reference genome, a ceiling broken) fails the analysis at once, since trying
//! again would not change it; a fault that may pass (the engine process killed, the work folder
//! out of reach for a moment) puts it back in the queue for a later attempt, at most
//! [`MAX_ATTEMPTS`] in all.
//!
//! Workers run inside `mgds serve` (and the embedded service), and as separate `mgds worker`
//! processes against the same data folder. A worker only claims, supervises and stores: each
//! analysis runs in an engine process of its own ([`EngineHost::Process`], the same binary
//! started with [`ENGINE_ARG`]), under a memory ceiling and a time limit ([`Limits`]). An input
//! that breaks a ceiling (one enormous record, a decompression bomb) fails its analysis once,
//! with a message that says which ceiling, and takes nothing else down: the service keeps
//! answering and the other analyses run on. An engine process that is killed from outside is a
//! transient fault, tried again.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::AppState;
use crate::references::{Installed, ReferenceKind, References};
use crate::store::analyses::{Artifact, store_outcome};
use crate::store::{db, queue};

pub use crate::store::queue::queue_default_classification;

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

/// The argument that starts a binary as an engine process (see [`engine_entry`]).
pub const ENGINE_ARG: &str = "__mgds-engine";

/// Set by [`engine_entry`]: this binary can be started as an engine process.
static HOSTS_ENGINES: OnceLock<()> = OnceLock::new();

/// For a binary's `main`, before anything else: when the process was started as an engine
/// process (with [`ENGINE_ARG`]), runs the analysis it is given on stdin and exits; otherwise
/// notes that this binary can host engine processes, so that its workers start them
/// ([`RunnerConfig::default`] then picks [`EngineHost::Process`]).
pub fn engine_entry() {
    if std::env::args_os().nth(1).is_some_and(|a| a == ENGINE_ARG) {
        std::process::exit(engine_main());
    }
    let _ = HOSTS_ENGINES.set(());
}

/// Where the engines of analyses run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineHost {
    /// A process per analysis: this program started with [`ENGINE_ARG`], under the memory
    /// ceiling and time limit of [`Limits`]. What `mgds serve`, `mgds worker` and the desktop
    /// app use.
    Process(PathBuf),
    /// On a thread of this process: for programs that cannot start engine processes (tests of
    /// this library). The record limit holds; the memory ceiling and time limit do not.
    InProcess,
}

/// What one analysis may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest sequence of one read or record, in bases ([`DEFAULT_MAX_RECORD`]).
    pub max_record: usize,
    /// Memory ceiling of an engine process, in bytes (heap and other private memory; the
    /// memory-mapped reference is not counted). `None`: sized to the reference (see
    /// [`memory_ceiling`]).
    pub memory: Option<u64>,
    /// Longest an analysis may run.
    pub time: Duration,
}

/// Default longest record: 32 Mbp, past the longest chromosome of any bacterium and the longest
/// nanopore reads, far below what would take a machine's memory.
pub const DEFAULT_MAX_RECORD: usize = 32_000_000;
/// Default time limit of one analysis.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(12 * 3600);

impl Default for Limits {
    fn default() -> Self {
        Limits { max_record: DEFAULT_MAX_RECORD, memory: None, time: DEFAULT_TIME_LIMIT }
    }
}

/// The memory ceiling of an analysis with `reference`: the one set, or 1 GiB above twice the
/// reference's size on disk, and at least 2 GiB.
pub fn memory_ceiling(limits: &Limits, reference: &Installed) -> u64 {
    limits.memory.unwrap_or_else(|| {
        let size = dir_size(&reference.dir);
        (1 << 30) + 2 * size.max(1 << 29)
    })
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

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
    /// What one analysis may take.
    pub limits: Limits,
}

impl Default for RunnerConfig {
    /// One worker, every core, engine processes when this binary hosts them (it called
    /// [`engine_entry`]), else engines in this process.
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let engine = match (HOSTS_ENGINES.get(), std::env::current_exe()) {
            (Some(()), Ok(exe)) => EngineHost::Process(exe),
            _ => EngineHost::InProcess,
        };
        RunnerConfig {
            workers: 1,
            threads,
            poll: Duration::from_secs(2),
            lease: Duration::from_secs(60),
            retry_after: Duration::from_secs(30),
            engine,
            limits: Limits::default(),
        }
    }
}

/// Classification databases opened so far, kept open for the next analysis.
#[derive(Debug, Default)]
struct Databases(Mutex<Vec<(String, Arc<mgds_classify::Database>)>>);

impl Databases {
    /// The classification database of `reference`, opened once and kept.
    fn get(&self, reference: &Installed) -> Result<Arc<mgds_classify::Database>, String> {
        let mut loaded = self.0.lock().map_err(|_| "the database cache is unusable".to_string())?;
        if let Some((_, db)) = loaded.iter().find(|(job, _)| *job == reference.job_id) {
            return Ok(db.clone());
        }
        let db = mgds_classify::Database::open(reference.path())
            .map_err(|e| format!("the reference database {} could not be opened: {e}", reference.manifest.name))?;
        if db.digest() != reference.manifest.digest {
            return Err(format!(
                "the reference database {} changed since it was installed; install it again under a new name",
                reference.manifest.name
            ));
        }
        let db = Arc::new(db);
        loaded.push((reference.job_id.clone(), db.clone()));
        Ok(db)
    }
}

/// The runner's shared state: installed references, a wake-up signal for new work, and the
/// classification databases loaded so far.
#[derive(Debug)]
pub struct Runner {
    /// Settings.
    pub config: RunnerConfig,
    refs: RwLock<Arc<References>>,
    wake: Notify,
    loaded: Databases,
    data_dir: PathBuf,
    /// Names this process's workers in the queue (`<instance>-<n>`).
    instance: String,
    /// When the references folder last changed, as last seen.
    seen: Mutex<Option<std::time::SystemTime>>,
}

impl Runner {
    /// A runner over `data_dir` with nothing installed yet.
    pub fn new(data_dir: &Path, config: RunnerConfig) -> Runner {
        Runner {
            config,
            refs: RwLock::new(Arc::new(References::default())),
            wake: Notify::new(),
            loaded: Databases::default(),
            data_dir: data_dir.to_path_buf(),
            instance: format!("{}-{}", std::process::id(), db::new_id()),
            seen: Mutex::new(None),
        }
    }

    /// Whether references were installed or removed since the last look (the folder's
    /// modification time moves when an install renames its folder in).
    fn references_changed(&self) -> bool {
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
        self.wake.notify_waiters();
    }

    /// Tells idle workers that an analysis was queued.
    pub fn wake(&self) {
        self.wake.notify_waiters();
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

/// Starts `n` workers (the service starts `config.workers`); they stop when the returned
/// handles are aborted or the runtime ends.
pub fn spawn_workers(state: &AppState, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|i| {
            let state = state.clone();
            let name = format!("{}-{i}", state.runner.instance);
            tokio::spawn(async move { work(state, name).await })
        })
        .collect()
}

async fn work(state: AppState, name: String) {
    state.runner.references_changed();
    loop {
        let wake = state.runner.wake.notified();
        // References installed by `mgds db` while the service runs become runnable here.
        if state.runner.references_changed()
            && let Err(e) = state.reload_references(&state.runner.data_dir).await
        {
            tracing::warn!(error = %e, "could not register newly installed reference data");
        }
        match claim(&state, &name).await {
            Ok(Some((id, claims))) => {
                run_claimed(&state, &name, &id, claims).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the job queue"),
        }
        let _ = tokio::time::timeout(state.runner.config.poll, wake).await;
    }
}

/// Gives back the analyses this process's workers hold, without counting the attempt: for a
/// clean stop (Ctrl-C, the end of a command that ran the embedded service), so that another
/// worker takes them at once instead of after the lease.
pub async fn release(state: &AppState) -> Result<u64, sqlx::Error> {
    queue::release(&state.db, &state.runner.instance).await
}

/// Claims the oldest runnable analysis: waiting, or held by a lapsed lease. Returns its id and
/// how many times it has now been claimed.
pub async fn claim(state: &AppState, worker: &str) -> Result<Option<(String, i64)>, sqlx::Error> {
    let jobs = state.runner.references().job_ids();
    queue::claim(&state.db, &jobs, worker, state.runner.config.lease).await
}

async fn run_claimed(state: &AppState, worker: &str, id: &str, claims: i64) {
    let max_claims = match state.runner.config.engine {
        EngineHost::Process(_) => MAX_CLAIMS,
        EngineHost::InProcess => MAX_ATTEMPTS,
    };
    let outcome = if claims > max_claims {
        tracing::warn!(analysis = %id, claims, "an analysis kept losing its worker; failing it");
        Err(Failure::Refused(format!(
            "the analysis stopped before finishing {max_claims} times (its worker was interrupted each time); \
             run it again, and if it fails again, report it with the sample"
        )))
    } else {
        tracing::info!(analysis = %id, claim = claims, "running analysis");
        let heartbeat = {
            let (state, id, worker) = (state.clone(), id.to_string(), worker.to_string());
            tokio::spawn(async move {
                let lease = state.runner.config.lease;
                let mut every = tokio::time::interval(lease / 4);
                every.tick().await;
                loop {
                    every.tick().await;
                    let _ = queue::renew(&state.db, &id, &worker, lease).await;
                }
            })
        };
        let started = std::time::Instant::now();
        let outcome = run(state, id).await;
        heartbeat.abort();
        match &outcome {
            Ok(_) => tracing::info!(analysis = %id, seconds = started.elapsed().as_secs_f64(), "analysis complete"),
            Err(e) => tracing::info!(analysis = %id, error = %e.message(), "analysis failed"),
        }
        outcome
    };
    let (result, workdir) = match outcome {
        Ok((v, artifact, dir)) => (Ok((v, artifact)), Some(dir)),
        // Tried again later, unless this was the last attempt.
        Err(Failure::Transient(why)) if queue::failures(&state.db, id).await.unwrap_or(0) + 1 < MAX_ATTEMPTS => {
            if let Err(e) = queue::requeue(&state.db, id, worker, state.runner.config.retry_after).await {
                tracing::warn!(analysis = %id, error = %e, "could not put an analysis back in the queue");
            }
            tracing::info!(analysis = %id, error = %why, "the analysis goes back to the queue");
            return;
        }
        Err(e) => (Err(e.message().to_string()), None),
    };
    if let Err(e) = store_outcome(state, id, result).await {
        // The lease lapses and the analysis is tried again.
        tracing::error!(analysis = %id, error = %e, "could not store the results of an analysis");
    }
    drop(workdir);
}

/// What an engine run leaves: results JSON, an optional file, and the folder holding it.
type Produced = (Value, Option<Artifact>, tempfile::TempDir);

/// Why an analysis did not produce results. The worker acts on the kind; the message is for the
/// person who reads the analysis's `error_msg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The analysis cannot be done as asked (a file that is not sequence data, a taxon without
    /// a genome, a sample that is gone): it fails at once, since trying again changes nothing.
    Refused(String),
    /// A fault of this service that may pass (the database or the work folder could not be
    /// reached, the engine stopped unexpectedly): the analysis goes back to the queue and is
    /// tried again, at most [`MAX_ATTEMPTS`] times in all.
    Transient(String),
}

impl Failure {
    /// The words stored as the analysis's `error_msg`.
    pub fn message(&self) -> &str {
        match self {
            Failure::Refused(m) | Failure::Transient(m) => m,
        }
    }
}

async fn run(state: &AppState, id: &str) -> Result<Produced, Failure> {
    let row = queue::input(&state.db, id)
        .await
        .map_err(|e| Failure::Transient(format!("the service could not read the analysis: {e}")))?;
    let Some((job_id, job_args, object_key, filename)) = row else {
        return Err(Failure::Refused("the analysis or its sample was deleted".into()));
    };
    let reference = state.runner.references().for_job(&job_id).ok_or_else(|| {
        Failure::Refused(
            "this service no longer has the reference data of this job; run the job's newest version".into(),
        )
    })?;
    let key =
        object_key.ok_or_else(|| Failure::Refused("the sample has no file yet; upload its reads first".into()))?;
    let reads = state
        .storage
        .local_path(&key)
        .ok_or_else(|| Failure::Refused("the sample's file is not in a local store this worker can read".into()))?;
    let args: Map<String, Value> = job_args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
    let work_root = state.runner.data_dir.join(WORK_DIR);
    let unwritable = |e: std::io::Error| Failure::Transient(format!("the service cannot write its work folder: {e}"));
    std::fs::create_dir_all(&work_root).map_err(unwritable)?;
    let workdir = tempfile::tempdir_in(&work_root).map_err(unwritable)?;
    let config = &state.runner.config;
    let job = EngineJob {
        memory: memory_ceiling(&config.limits, &reference),
        reference: (*reference).clone(),
        reads,
        name: filename.unwrap_or_else(|| "the sample".into()),
        args,
        threads: config.threads,
        dir: workdir.path().to_path_buf(),
        max_record: config.limits.max_record,
    };
    let produced = match &config.engine {
        EngineHost::Process(program) => run_in_process(program, &job, config.limits.time).await?,
        EngineHost::InProcess => {
            let runner = state.runner.clone();
            tokio::task::spawn_blocking(move || run_engine(&runner.loaded, &job))
                .await
                .map_err(|e| Failure::Transient(format!("the engine stopped unexpectedly: {e}")))??
        }
    };
    Ok((produced.0, produced.1, workdir))
}

/// One analysis, as an engine process is given it on stdin.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct EngineJob {
    reference: Installed,
    reads: PathBuf,
    /// The sample's file name, for messages.
    name: String,
    args: Map<String, Value>,
    threads: usize,
    /// Where output files go.
    dir: PathBuf,
    max_record: usize,
    /// The memory ceiling, in bytes.
    memory: u64,
}

/// What an engine process answers on stdout.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum EngineAnswer {
    Done { results: Value, file: Option<PathBuf> },
    Refused(String),
    Transient(String),
}

/// The engine process's side: reads the job, sets the memory ceiling, runs the engine and
/// writes the answer. Returns the exit code.
fn engine_main() -> i32 {
    let mut input = Vec::new();
    let job: EngineJob = match std::io::stdin().read_to_end(&mut input).map_err(|e| e.to_string()).and_then(|_| {
        serde_json::from_slice(&input).map_err(|e| format!("the job given to the engine process is unreadable: {e}"))
    }) {
        Ok(job) => job,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    // An engine ends with its worker: a worker killed outright leaves no engine running on
    // (the analysis is claimed again once its lease lapses). The signal follows the thread that
    // started the process, a worker thread of the runtime, which lives as long as the worker.
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
        if nix::unistd::getppid() == nix::unistd::Pid::from_raw(1) {
            eprintln!("the worker that started this engine process is gone");
            return 2;
        }
    }
    #[cfg(unix)]
    if let Err(e) = rlimit::Resource::DATA.set(job.memory, job.memory) {
        eprintln!("could not set the memory ceiling: {e}");
        return 2;
    }
    let answer = match run_engine(&Databases::default(), &job) {
        Ok((results, artifact)) => EngineAnswer::Done {
            results,
            file: match artifact {
                Some(Artifact::File(p)) => Some(p),
                Some(Artifact::Bytes(_)) | None => None,
            },
        },
        Err(Failure::Refused(m)) => EngineAnswer::Refused(m),
        Err(Failure::Transient(m)) => EngineAnswer::Transient(m),
    };
    let mut out = std::io::stdout().lock();
    match serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("could not write the results: {e}");
            3
        }
    }
}

/// Runs `job` in an engine process of `program`, within `time`.
async fn run_in_process(program: &Path, job: &EngineJob, time: Duration) -> Result<(Value, Option<Artifact>), Failure> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(program)
        .arg(ENGINE_ARG)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Failure::Transient(format!("the engine process could not start ({}): {e}", program.display())))?;
    let input =
        serde_json::to_vec(job).map_err(|e| Failure::Transient(format!("the job could not be written: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&input)
            .await
            .map_err(|e| Failure::Transient(format!("the engine process did not take its job: {e}")))?;
    }
    // Dropping the child (at the time limit) kills it.
    let out = match tokio::time::timeout(time, child.wait_with_output()).await {
        Err(_) => {
            return Err(Failure::Refused(format!(
                "the analysis ran longer than its time limit of {} and was stopped (the operator sets it \
                 with --engine-time-limit)",
                human_duration(time)
            )));
        }
        Ok(Err(e)) => return Err(Failure::Transient(format!("the engine process could not be watched: {e}"))),
        Ok(Ok(out)) => out,
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return match serde_json::from_slice::<EngineAnswer>(&out.stdout) {
            Ok(EngineAnswer::Done { results, file }) => Ok((results, file.map(Artifact::File))),
            Ok(EngineAnswer::Refused(m)) => Err(Failure::Refused(m)),
            Ok(EngineAnswer::Transient(m)) => Err(Failure::Transient(m)),
            Err(e) => Err(Failure::Transient(format!("the engine process answered something unreadable: {e}"))),
        };
    }
    // Rust reports a failed allocation this way, then aborts.
    if stderr.contains("memory allocation of") {
        return Err(Failure::Refused(format!(
            "the analysis needed more memory than its ceiling of {} and was stopped (the operator sets it \
             with --engine-memory); the file may hold an enormous record or be damaged",
            human_bytes(job.memory)
        )));
    }
    #[cfg(unix)]
    if std::os::unix::process::ExitStatusExt::signal(&out.status) == Some(9) {
        return Err(Failure::Transient(
            "the engine process was killed from outside (by a person, or by the system when memory ran out)".into(),
        ));
    }
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let last: String = last.chars().take(160).collect();
    Err(Failure::Transient(format!("the engine process stopped unexpectedly ({}): {last}", out.status)))
}

/// `12 h`, `30 min`, `45 s`.
fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// `2.0 GB`, `300 MB`.
fn human_bytes(n: u64) -> String {
    if n >= 1_000_000_000 { format!("{:.1} GB", n as f64 / 1e9) } else { format!("{} MB", n / 1_000_000) }
}

/// Runs the engine of the job's reference on its reads, writing any output file into its folder.
fn run_engine(databases: &Databases, job: &EngineJob) -> Result<(Value, Option<Artifact>), Failure> {
    let EngineJob { reference, reads, name, args, threads, dir, max_record, .. } = job;
    let (reads, dir, threads, max_record) = (reads.as_path(), dir.as_path(), *threads, *max_record);
    // Engine errors name the file they read; the stored copy's name means nothing to a person.
    let explain =
        |e: &dyn std::fmt::Display| Failure::Refused(e.to_string().replace(&reads.display().to_string(), name));
    let cannot_write =
        |what: &str, e: &dyn std::fmt::Display| Failure::Transient(format!("the service cannot write {what}: {e}"));
    let create = |p: &Path| std::fs::File::create(p).map_err(|e| cannot_write(&p.display().to_string(), &e));
    let json = |v: serde_json::Result<Value>| {
        v.map_err(|e| Failure::Transient(format!("the results could not be stored: {e}")))
    };
    match reference.manifest.kind {
        ReferenceKind::Classification => {
            let db = databases.get(reference).map_err(Failure::Transient)?;
            let mut opts = mgds_classify::ClassifyOptions { threads, max_record, ..Default::default() };
            if let Some(c) = args.get("confidence").and_then(Value::as_f64) {
                opts.confidence = c;
            }
            if let Some(m) = args.get("min_hits").and_then(Value::as_u64) {
                opts.min_hits = u32::try_from(m).unwrap_or(u32::MAX);
            }
            let path = dir.join("readlevel.tsv.gz");
            let mut out = std::io::BufWriter::new(create(&path)?);
            let results = mgds_classify::classify(&db, reads, &opts, &mut out).map_err(|e| explain(&e))?;
            out.flush().map_err(|e| cannot_write("the read-level results", &e))?;
            let v = json(serde_json::to_value(results))?;
            Ok((v, Some(Artifact::File(path))))
        }
        ReferenceKind::Panel => {
            let panel = mgds_panel::Panel::load(reference.path()).map_err(|e| explain(&e))?;
            let results =
                mgds_panel::detect(&panel, reads, &mgds_panel::DetectOptions { threads, max_record: Some(max_record) })
                    .map_err(|e| explain(&e))?;
            Ok((json(serde_json::to_value(results))?, None))
        }
        ReferenceKind::Genomes => {
            let tax_id = args
                .get("tax_id")
                .and_then(Value::as_str)
                .ok_or_else(|| Failure::Refused("the job needs a tax_id argument".into()))?;
            let fasta = dir.join("reference.fa");
            genome_for(reference, tax_id, &fasta).map_err(Failure::Refused)?;
            let path = dir.join("alignment.sam.gz");
            let mut gz =
                flate2::write::GzEncoder::new(std::io::BufWriter::new(create(&path)?), flate2::Compression::fast());
            let opts = mgds_align::AlignOptions { threads, max_record, ..Default::default() };
            let results = mgds_align::align(&fasta, reads, &opts, &mut gz).map_err(|e| explain(&e))?;
            gz.finish().and_then(|mut w| w.flush()).map_err(|e| cannot_write("the alignment file", &e))?;
            Ok((json(serde_json::to_value(results))?, Some(Artifact::File(path))))
        }
        ReferenceKind::GeneCatalogue => {
            let cat = mgds_align::Catalogue::load(&reference.path()).map_err(|e| explain(&e))?;
            let profile = mgds_align::profile(&cat, reads, &mgds_align::ProfileOptions { threads, max_record })
                .map_err(|e| explain(&e))?;
            let path = dir.join("functional_profile.tsv");
            std::fs::write(&path, profile.to_tsv()).map_err(|e| cannot_write("the profile", &e))?;
            Ok((json(serde_json::to_value(profile))?, Some(Artifact::File(path))))
        }
    }
}

/// Writes into `out` the genome records of `tax_id` from a genomes reference (records mapped to
/// that taxon exactly; the best available reference is the taxon's own genome).
fn genome_for(reference: &Installed, tax_id: &str, out: &Path) -> Result<(), String> {
    let map_file = reference
        .manifest
        .seqid2taxid
        .as_ref()
        .map(|m| reference.dir.join(m))
        .ok_or("the genomes reference has no sequence-to-taxon map")?;
    let map = std::fs::read_to_string(&map_file).map_err(|e| format!("cannot read {}: {e}", map_file.display()))?;
    // `seq_id<TAB>tax_id[<TAB>genome]`, with `#` comments.
    let rows: Vec<(&str, &str)> = map
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.trim(), f.next()?.trim()))
        })
        .collect();
    let wanted: std::collections::HashSet<&str> = rows.iter().filter(|(_, t)| *t == tax_id).map(|(s, _)| *s).collect();
    if wanted.is_empty() {
        let mut available: Vec<&str> = rows.iter().map(|(_, t)| *t).collect();
        available.sort_unstable();
        available.dedup();
        return Err(format!(
            "{} has no reference genome for tax id {tax_id}; it has genomes for tax ids {}",
            reference.manifest.name,
            available.join(", ")
        ));
    }
    let (_, input) = mgds_formats::open(reference.path()).map_err(|e| e.to_string())?;
    let mut reader = mgds_formats::Reader::new(input);
    let mut rec = mgds_formats::Record::default();
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| e.to_string())?);
    while reader.read_record(&mut rec).map_err(|e| e.to_string())? > 0 {
        if wanted.contains(String::from_utf8_lossy(rec.id()).as_ref()) {
            w.write_all(rec.raw()).map_err(|e| e.to_string())?;
            if !rec.ends_with_newline() {
                w.write_all(b"\n").map_err(|e| e.to_string())?;
            }
        }
    }
    w.flush().map_err(|e| e.to_string())
}
