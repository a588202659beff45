//! Engine processes: how one analysis runs outside the worker that claimed it.
//!
//! A binary that hosts engines calls [`engine_entry`] first in `main`; the worker then starts
//! the same program with [`ENGINE_ARG`] for each analysis ([`run_in_process`]), writes the
//! [`EngineJob`] to its stdin and reads an [`EngineAnswer`] from its stdout. The engine process
//! sets its own memory ceiling ([`Limits`]) before it reads a byte of the sample, and ends with
//! the worker. [`run_engine`] is the engine itself, the same in a process of its own and, for
//! tests of this library, on a thread of the worker ([`EngineHost::InProcess`]).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::references::{Installed, ReferenceKind};
use crate::store::analyses::{Artifact, KRAKEN_REPORT};

/// The argument that starts a binary as an engine process (see [`engine_entry`]).
pub const ENGINE_ARG: &str = "__mgds-engine";
/// After [`ENGINE_ARG`]: a warm engine process, which takes one job per line of its stdin and
/// answers each on a line of its stdout until its stdin closes ([`crate::warm`]).
pub const WARM_ARG: &str = "--warm";
/// The longest job line a warm engine reads: a job names its reference with the reference's
/// manifest, which lists its species (about 100 bytes each: 64 MiB is over half a million).
const MAX_JOB_LINE: u64 = 64 << 20;

/// Set by [`engine_entry`]: this binary can be started as an engine process.
static HOSTS_ENGINES: OnceLock<()> = OnceLock::new();

/// For a binary's `main`, before anything else: when the process was started as an engine
/// process (with [`ENGINE_ARG`]), runs the analysis it is given on stdin and exits; otherwise
/// notes that this binary can host engine processes, so that its workers start them
/// ([`crate::worker::RunnerConfig::default`] then picks [`EngineHost::Process`]).
pub fn engine_entry() {
    if std::env::args_os().nth(1).is_some_and(|a| a == ENGINE_ARG) {
        let warm = std::env::args_os().nth(2).is_some_and(|a| a == WARM_ARG);
        std::process::exit(if warm { warm_main() } else { engine_main() });
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
        let mut size = dir_size(&reference.dir);
        let data = reference.path();
        if !data.starts_with(&reference.dir) {
            // A database read in place (a Kraken 2 folder): its own files, not what is kept
            // below it (the references it was built from).
            size += top_level_size(&data);
        }
        (1 << 30) + 2 * size.max(1 << 29)
    })
}

fn top_level_size(path: &Path) -> u64 {
    match std::fs::read_dir(path) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
            .sum(),
        Err(_) => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    }
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

/// Whether this binary called [`engine_entry`] (and so can be started as an engine process).
pub fn hosts_engines() -> bool {
    HOSTS_ENGINES.get().is_some()
}

/// Classification databases opened so far, kept open for the next analysis.
#[derive(Debug, Default)]
pub(crate) struct Databases(Mutex<Vec<(String, Arc<mgds_classify::Database>)>>);

impl Databases {
    /// The classification database of `reference`, opened once and kept.
    pub(crate) fn get(&self, reference: &Installed) -> Result<Arc<mgds_classify::Database>, String> {
        let mut loaded = self.0.lock().map_err(|_| "the database cache is unusable".to_string())?;
        if let Some((_, db)) = loaded.iter().find(|(job, _)| *job == reference.job_id) {
            return Ok(db.clone());
        }
        // Companion files (k-mer profile, distributions) live in the reference's own folder,
        // also when the database itself is a Kraken 2 folder elsewhere.
        let open = mgds_classify::OpenOptions { companion_dir: Some(reference.dir.clone()) };
        let db = mgds_classify::Database::open_with(reference.path(), &open)
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

/// Why an analysis did not produce results. The worker acts on the kind; the message is for the
/// person who reads the analysis's `error_msg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The analysis cannot be done as asked (a file that is not sequence data, a taxon without
    /// a genome, a sample that is gone): it fails at once, since trying again changes nothing.
    Refused(String),
    /// A fault of this service that may pass (the database or the work folder could not be
    /// reached, the engine stopped unexpectedly): the analysis goes back to the queue and is
    /// tried again, at most [`crate::worker::MAX_ATTEMPTS`] times in all.
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

/// One analysis, as an engine process is given it on stdin.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct EngineJob {
    pub(crate) reference: Installed,
    pub(crate) reads: PathBuf,
    /// The sample's file name, for messages.
    pub(crate) name: String,
    pub(crate) args: Map<String, Value>,
    pub(crate) threads: usize,
    /// Where output files go.
    pub(crate) dir: PathBuf,
    pub(crate) max_record: usize,
    /// The memory ceiling, in bytes.
    pub(crate) memory: u64,
}

/// Two files of a pair to join into one interleaved, gzipped file (a pair uploaded as two
/// files; see [`crate::store::imports`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct JoinJob {
    /// Read 1's file, and its name as uploaded (for messages).
    pub(crate) r1: (PathBuf, String),
    /// Read 2's file, and its name as uploaded.
    pub(crate) r2: (PathBuf, String),
    /// Where the joined file goes.
    pub(crate) out: PathBuf,
    pub(crate) max_record: usize,
    /// The memory ceiling, in bytes.
    pub(crate) memory: u64,
}

/// A copy of a sample without the reads a classification called the host's.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct HostJob {
    /// The sample's file, and its name as uploaded (for messages).
    pub(crate) reads: (PathBuf, String),
    /// The classification's read-level results (one row per record, in order).
    pub(crate) readlevel: PathBuf,
    /// The host's taxa with everything below them.
    pub(crate) tax_ids: Vec<mgds_formats::TaxId>,
    /// The folder the copy is written into.
    pub(crate) out: PathBuf,
    /// The memory ceiling, in bytes.
    pub(crate) memory: u64,
}

/// What an engine process is given to do.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum EngineTask {
    /// An analysis.
    Analysis(EngineJob),
    /// A pair's join.
    Join(JoinJob),
    /// A copy without the host's reads.
    RemoveHost(HostJob),
}

impl EngineTask {
    /// The memory ceiling of the process.
    pub(crate) fn memory(&self) -> u64 {
        match self {
            EngineTask::Analysis(j) => j.memory,
            EngineTask::Join(j) => j.memory,
            EngineTask::RemoveHost(j) => j.memory,
        }
    }

    /// What the task is, for messages ("the analysis ...").
    pub(crate) fn what(&self) -> &'static str {
        match self {
            EngineTask::Analysis(_) => "the analysis",
            EngineTask::Join(_) => "joining the pair",
            EngineTask::RemoveHost(_) => "removing the host's reads",
        }
    }

    /// Runs the task here (in the engine process, or on a worker's thread for
    /// [`EngineHost::InProcess`]).
    pub(crate) fn run(&self, databases: &Databases) -> Result<(Value, Option<Artifact>), Failure> {
        match self {
            EngineTask::Analysis(job) => run_engine(databases, job),
            EngineTask::Join(job) => run_join(job),
            EngineTask::RemoveHost(job) => run_remove_host(job),
        }
    }
}

/// The memory ceiling of a pair's join: the one set for engines, else 1 GiB (a join streams;
/// it holds one record of each file, at most the record limit, at a time).
pub fn join_memory_ceiling(limits: &Limits) -> u64 {
    limits.memory.unwrap_or(1 << 30)
}

/// Joins a pair's two files into one interleaved, gzipped file, checked read by read (every
/// record valid and within the record limit, mates named alike, as many in each file).
/// Messages name the files as they were uploaded, never where they are stored.
fn run_join(job: &JoinJob) -> Result<(Value, Option<Artifact>), Failure> {
    let JoinJob { r1, r2, out, max_record, .. } = job;
    let joined = mgds_formats::interleave_limited(
        &r1.0,
        &r2.0,
        out,
        mgds_formats::OutputCompression::Gzip { level: 1 },
        *max_record,
    );
    match joined {
        Ok(summary) => {
            let results =
                serde_json::json!({ "pairs": summary.r1.records, "bases": summary.r1.bases + summary.r2.bases });
            Ok((results, Some(Artifact::File(out.clone()))))
        }
        Err(e) => {
            let mut why = e.to_string();
            for (path, name) in [r1, r2] {
                why = why.replace(&path.display().to_string(), name);
            }
            why = why.replace(&out.display().to_string(), "the joined file");
            Err(Failure::Refused(format!("the two files of the pair could not be joined into one sample: {why}")))
        }
    }
}

/// Writes a copy of a sample without the reads its classification called the host's: every
/// record whose read-level row names a host taxon goes, whether or not the call passed the
/// confidence filter (a read that looked like the host's is not shared); unclassified reads and
/// reads of other taxa stay, byte for byte and in order. An interleaved pair is kept or removed
/// whole. The copy is gzipped. Answers the reads read and removed.
fn run_remove_host(job: &HostJob) -> Result<(Value, Option<Artifact>), Failure> {
    let HostJob { reads: (path, name), readlevel, tax_ids, out, .. } = job;
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::Transient(format!("the service cannot write its work folder: {e}")))?;
    let options = mgds_formats::SubsetOptions {
        tax_ids: tax_ids.iter().copied().collect(),
        exclude: true,
        include_lowconf: true,
        pair_mode: mgds_formats::PairMode::Both,
        output: mgds_formats::OutputCompression::Gzip { level: 1 },
        keep_existing: false,
    };
    // Read as the classifier read it: an interleaved pair (the first two records one read's
    // mates) is judged by pairs, keeping a pair only when neither mate was called the host's.
    let input = if interleaved(path) {
        mgds_formats::SubsetInput::Interleaved(path.clone())
    } else {
        mgds_formats::SubsetInput::Single(path.clone())
    };
    let report = mgds_formats::subset_reads(readlevel, &input, out, &options).map_err(|e| {
        let why = e
            .to_string()
            .replace(&path.display().to_string(), name)
            .replace(&readlevel.display().to_string(), "the classification's read-level results");
        Failure::Refused(format!("the host's reads could not be removed from {name}: {why}"))
    })?;
    let written =
        report.outputs.first().ok_or_else(|| Failure::Transient("removing the host's reads wrote no file".into()))?;
    let results = serde_json::json!({
        "reads": report.records,
        "kept": written.records,
        "removed": report.records.saturating_sub(written.records),
    });
    Ok((results, Some(Artifact::File(written.path.clone()))))
}

/// Whether the first two records of `path` are mates of one read (the classifier's rule for
/// reading one file as interleaved pairs).
fn interleaved(path: &Path) -> bool {
    let Ok((_, input)) = mgds_formats::open(path) else { return false };
    let mut reader = mgds_formats::Reader::new(input);
    let (mut a, mut b) = (mgds_formats::Record::default(), mgds_formats::Record::default());
    matches!((reader.read_record(&mut a), reader.read_record(&mut b)), (Ok(n), Ok(m)) if n > 0 && m > 0)
        && mgds_formats::base_id(a.header()) == mgds_formats::base_id(b.header())
}

/// What an engine process answers on stdout.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum EngineAnswer {
    Done { results: Value, file: Option<PathBuf> },
    Refused(String),
    Transient(String),
}

/// The engine process's side: reads the job, sets the memory ceiling, runs the engine and
/// writes the answer. Returns the exit code.
fn engine_main() -> i32 {
    let mut input = Vec::new();
    let task: EngineTask = match std::io::stdin().read_to_end(&mut input).map_err(|e| e.to_string()).and_then(|_| {
        serde_json::from_slice(&input).map_err(|e| format!("the job given to the engine process is unreadable: {e}"))
    }) {
        Ok(task) => task,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if let Err(code) = bind_to_worker(task.memory()) {
        return code;
    }
    let answer = answer(&task, &Databases::default());
    let mut out = std::io::stdout().lock();
    match serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("could not write the results: {e}");
            3
        }
    }
}

/// Ends this engine process with its worker, and sets its memory ceiling; `Err` is the exit code.
fn bind_to_worker(memory: u64) -> Result<(), i32> {
    // An engine ends with its worker: a worker killed outright leaves no engine running on
    // (the analysis is claimed again once its lease lapses). The signal follows the thread that
    // started the process, a worker thread of the runtime, which lives as long as the worker.
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
        if nix::unistd::getppid() == nix::unistd::Pid::from_raw(1) {
            eprintln!("the worker that started this engine process is gone");
            return Err(2);
        }
    }
    #[cfg(unix)]
    if let Err(e) = rlimit::Resource::DATA.set(memory, memory) {
        eprintln!("could not set the memory ceiling: {e}");
        return Err(2);
    }
    Ok(())
}

/// Runs `task` and puts its outcome as the engine process answers it.
fn answer(task: &EngineTask, databases: &Databases) -> EngineAnswer {
    match task.run(databases) {
        Ok((results, artifact)) => EngineAnswer::Done {
            results,
            file: match artifact {
                Some(Artifact::File(p)) => Some(p),
                Some(Artifact::Bytes(_)) | None => None,
            },
        },
        Err(Failure::Refused(m)) => EngineAnswer::Refused(m),
        Err(Failure::Transient(m)) => EngineAnswer::Transient(m),
    }
}

/// A warm engine process's side ([`WARM_ARG`]): one job per line of stdin, each answered on a
/// line of stdout, with the databases opened kept mapped from one job to the next, until stdin
/// closes. Every job of one warm engine has the same memory ceiling (the worker keeps one
/// engine per reference and ceiling), set at the first.
fn warm_main() -> i32 {
    use std::io::BufRead;
    let databases = Databases::default();
    let mut ceiling = None;
    let mut input = std::io::stdin().lock();
    loop {
        let mut line = Vec::new();
        match (&mut input).take(MAX_JOB_LINE).read_until(b'\n', &mut line) {
            Ok(0) => return 0,
            Ok(_) if line.ends_with(b"\n") => {}
            Ok(_) => {
                eprintln!("a job line longer than {MAX_JOB_LINE} bytes, or cut short");
                return 2;
            }
            Err(e) => {
                eprintln!("could not read the next job: {e}");
                return 2;
            }
        }
        let task: EngineTask = match serde_json::from_slice(&line) {
            Ok(task) => task,
            Err(e) => {
                eprintln!("the job given to the engine process is unreadable: {e}");
                return 2;
            }
        };
        match ceiling {
            None => {
                if let Err(code) = bind_to_worker(task.memory()) {
                    return code;
                }
                ceiling = Some(task.memory());
            }
            Some(m) if m != task.memory() => {
                eprintln!("a job with another memory ceiling than this engine's");
                return 2;
            }
            Some(_) => {}
        }
        let answer = answer(&task, &databases);
        let mut out = std::io::stdout().lock();
        let written = serde_json::to_writer(&mut out, &answer)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            eprintln!("could not write the results: {e}");
            return 3;
        }
    }
}

/// Runs `job` in an engine process of `program`, within `time`.
pub(crate) async fn run_in_process(
    program: &Path,
    job: &EngineTask,
    time: Duration,
) -> Result<(Value, Option<Artifact>), Failure> {
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
        Err(_) => return Err(over_time(job, time)),
        Ok(Err(e)) => return Err(Failure::Transient(format!("the engine process could not be watched: {e}"))),
        Ok(Ok(out)) => out,
    };
    if out.status.success() {
        return match serde_json::from_slice::<EngineAnswer>(&out.stdout) {
            Ok(answer) => answer.outcome(),
            Err(e) => Err(Failure::Transient(format!("the engine process answered something unreadable: {e}"))),
        };
    }
    Err(ended(job, out.status, &String::from_utf8_lossy(&out.stderr)))
}

impl EngineAnswer {
    /// The outcome the answer tells.
    pub(crate) fn outcome(self) -> Result<(Value, Option<Artifact>), Failure> {
        match self {
            EngineAnswer::Done { results, file } => Ok((results, file.map(Artifact::File))),
            EngineAnswer::Refused(m) => Err(Failure::Refused(m)),
            EngineAnswer::Transient(m) => Err(Failure::Transient(m)),
        }
    }
}

/// Why an engine process running `job` ended without answering (`status`, with the end of its
/// messages).
pub(crate) fn ended(job: &EngineTask, status: std::process::ExitStatus, stderr: &str) -> Failure {
    let what = job.what();
    // Rust reports a failed allocation this way, then aborts.
    if stderr.contains("memory allocation of") {
        return Failure::Refused(format!(
            "{what} needed more memory than its ceiling of {} and was stopped (the operator sets it \
             with --engine-memory); the file may hold an enormous record or be damaged",
            human_bytes(job.memory())
        ));
    }
    #[cfg(unix)]
    if std::os::unix::process::ExitStatusExt::signal(&status) == Some(9) {
        return Failure::Transient(
            "the engine process was killed from outside (by a person, or by the system when memory ran out)".into(),
        );
    }
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let last: String = last.chars().take(160).collect();
    Failure::Transient(format!("the engine process stopped unexpectedly ({status}): {last}"))
}

/// Why `job` was stopped at its time limit.
pub(crate) fn over_time(job: &EngineTask, time: Duration) -> Failure {
    Failure::Refused(format!(
        "{} ran longer than its time limit of {} and was stopped (the operator sets it with --engine-time-limit)",
        job.what(),
        human_duration(time)
    ))
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
pub(crate) fn run_engine(databases: &Databases, job: &EngineJob) -> Result<(Value, Option<Artifact>), Failure> {
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
            let outputs = mgds_classify::Outputs { readlevel: Some(&mut out), kraken: None };
            let c = mgds_classify::classify_reads(&db, mgds_classify::Reads::File(reads), &opts, outputs)
                .map_err(|e| explain(&e))?;
            out.flush().map_err(|e| cannot_write("the read-level results", &e))?;
            // Kraken 2's `--report`, for the tools that read it (Bracken, Pavian, Krona); the
            // worker stores it beside the results.
            let report = dir.join(KRAKEN_REPORT);
            std::fs::write(&report, c.report.render(&db)).map_err(|e| cannot_write("the Kraken-style report", &e))?;
            let mut results = c.results;
            results.host_tax_ids = host_taxa(reference, &db);
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

/// The most host taxa results name (a host and the subspecies and strains below it in the
/// database's taxonomy; a mammal has a few dozen).
pub const MAX_HOST_TAXA: usize = 10_000;

/// The host taxa of a classification database, as its results name them: those its manifest
/// names (else human where its taxonomy has it, [`crate::references::DEFAULT_HOST_TAX_ID`]),
/// with every taxon below them in its taxonomy, so that a read called a subspecies of the host
/// counts as the host's even where no read of it passed the confidence filter (the results'
/// table lists only taxa with reads that passed), and a client that leaves out exactly the
/// listed taxa (as the `onecodex` library does) leaves out the host's subtree.
fn host_taxa(reference: &Installed, db: &mgds_classify::Database) -> Vec<String> {
    let taxonomy = db.taxonomy();
    let named: Vec<String> = match &reference.manifest.host_tax_ids {
        Some(named) => named.clone(),
        None => vec![crate::references::DEFAULT_HOST_TAX_ID.to_string()],
    };
    let tops: Vec<u32> = named.iter().filter_map(|t| taxonomy.index_of(t.parse().ok()?)).collect();
    if reference.manifest.host_tax_ids.is_none() && tops.is_empty() {
        return Vec::new();
    }
    let mut out: std::collections::BTreeSet<String> = named.into_iter().collect();
    // A parent's index is below its children's: one pass down the taxonomy marks the subtrees.
    let mut inside = vec![false; taxonomy.len()];
    for &top in &tops {
        inside[top as usize] = true;
    }
    let first = tops.iter().min().copied().unwrap_or(u32::MAX);
    for idx in first.saturating_add(1)..taxonomy.len() as u32 {
        if out.len() >= MAX_HOST_TAXA {
            break;
        }
        if taxonomy.parent(idx).is_some_and(|p| inside[p as usize]) {
            inside[idx as usize] = true;
            out.insert(taxonomy.tax_id(idx).to_string());
        }
    }
    out.into_iter().collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Five pairs interleaved in one file, with one read-level row per mate: the copy keeps the
    /// pairs not called the host's, whole and in order; a pair called the host's below the
    /// confidence filter goes, and so does a pair with one mate called the host's.
    #[test]
    fn a_copy_without_the_host_keeps_whole_pairs_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("pair.fastq");
        let mut fastq = String::new();
        for i in 0..5 {
            for mate in 1..=2 {
                fastq.push_str(&format!("@r{i} {mate}:N:0:1\nACGTACGTAC\n+\nIIIIIIIIII\n"));
            }
        }
        std::fs::write(&reads, fastq).unwrap();
        // Pair 0 unclassified, pair 1 the host, pair 2 another taxon, pair 3 the host's
        // subspecies below the confidence filter, pair 4 (mates called apart, as a file read
        // record by record would be) one mate the host's.
        let calls = [("0", 'T'), ("9606", 'T'), ("562", 'T'), ("63221", 'F')];
        let mut rows = String::from("Tax ID\tN Hits\tSeq Len\tPassed Filter\n");
        for (tax, passed) in calls {
            for _ in 0..2 {
                rows.push_str(&format!("{tax}\t3\t10\t{passed}\n"));
            }
        }
        rows.push_str("562\t3\t10\tT\n9606\t3\t10\tT\n");
        let readlevel = dir.path().join("readlevel.tsv");
        std::fs::write(&readlevel, rows).unwrap();
        assert!(interleaved(&reads));
        let job = HostJob {
            reads: (reads, "pair.fastq".into()),
            readlevel,
            tax_ids: vec![9606, 63221],
            out: dir.path().join("out"),
            memory: 0,
        };
        let (results, artifact) = run_remove_host(&job).unwrap();
        assert_eq!(results, serde_json::json!({"reads": 10, "kept": 4, "removed": 6}));
        let Some(Artifact::File(path)) = artifact else { panic!("no file") };
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
        let names: Vec<&str> = text.lines().step_by(4).collect();
        assert_eq!(names, ["@r0 1:N:0:1", "@r0 2:N:0:1", "@r2 1:N:0:1", "@r2 2:N:0:1"]);
    }

    /// Rows that do not match the reads refuse the copy, naming the sample as uploaded.
    #[test]
    fn results_that_do_not_match_the_reads_refuse_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("stored-key");
        std::fs::write(&reads, "@a\nACGT\n+\nIIII\n@b\nACGT\n+\nIIII\n").unwrap();
        let readlevel = dir.path().join("readlevel.tsv");
        std::fs::write(&readlevel, "Tax ID\tN Hits\tSeq Len\tPassed Filter\n9606\t3\t4\tT\n").unwrap();
        let job = HostJob {
            reads: (reads, "gut.fastq".into()),
            readlevel,
            tax_ids: vec![9606],
            out: dir.path().join("out"),
            memory: 0,
        };
        let Err(Failure::Refused(why)) = run_remove_host(&job) else { panic!("refused") };
        assert!(why.starts_with("the host's reads could not be removed from gut.fastq: "), "{why}");
        assert!(!why.contains("stored-key"), "{why}");
    }
}
