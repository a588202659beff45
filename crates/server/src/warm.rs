//! Warm engine processes: an engine process that finished an analysis waits, its reference
//! database still mapped, for the next analysis of the same reference, instead of a new process
//! starting and opening the database again for each one.
//!
//! What holds for a process per analysis holds here too. A warm engine runs one analysis at a
//! time, for the worker that took it from the pool; a crash, the memory ceiling or the time limit
//! ends the process and fails (or returns to the queue) that analysis only, and the next
//! analysis starts a fresh process. Warm engines are capped in number ([`WarmConfig::max`]: the
//! least recently used beyond it leaves) and leave after [`WarmConfig::idle`] without work. They
//! change nothing in what the queue hands out: the oldest runnable analysis is claimed first,
//! whichever engine is warm.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::engine::{ENGINE_ARG, EngineAnswer, EngineTask, Failure, WARM_ARG, ended, over_time};
use crate::store::analyses::Artifact;

/// The longest answer a warm engine may write for one analysis (a classification's results of
/// every taxon of a large database are a few megabytes).
const MAX_ANSWER: u64 = 256 << 20;
/// The end of a warm engine's messages kept, for the reason it stopped.
const STDERR_TAIL: usize = 8 << 10;

/// How many engine processes stay warm, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarmConfig {
    /// Engine processes kept waiting between analyses (0: a new process for every analysis).
    pub max: usize,
    /// How long a warm engine waits for work before it leaves.
    pub idle: Duration,
}

impl Default for WarmConfig {
    /// Two warm engines, ten minutes each.
    fn default() -> Self {
        WarmConfig { max: 2, idle: Duration::from_secs(600) }
    }
}

/// One engine process waiting for work.
struct Warm {
    /// The reference and memory ceiling it serves.
    key: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// The task that keeps the end of its messages; it ends when the process does.
    stderr_task: tokio::task::JoinHandle<()>,
    since: Instant,
    /// Analyses it answered.
    jobs: u32,
}

/// The warm engines of one runner.
#[derive(Debug, Default)]
pub(crate) struct WarmEngines {
    config: WarmConfig,
    idle: Mutex<Vec<WarmSlot>>,
    started: std::sync::atomic::AtomicU64,
}

/// A [`Warm`] in the pool (its `Debug` says only what it serves).
struct WarmSlot(Warm);

impl std::fmt::Debug for WarmSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warm").field("key", &self.0.key).field("since", &self.0.since).finish()
    }
}

impl WarmEngines {
    /// No engine warm yet.
    pub(crate) fn new(config: WarmConfig) -> WarmEngines {
        WarmEngines { config, idle: Mutex::new(Vec::new()), started: Default::default() }
    }

    /// Whether analyses run in warm engines.
    pub(crate) fn enabled(&self) -> bool {
        self.config.max > 0
    }

    /// Engine processes started so far (warm ones; for the metrics and the tests).
    pub(crate) fn started(&self) -> u64 {
        self.started.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Engines waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.idle.lock().map_or(0, |i| i.len())
    }

    /// The most recently used engine waiting for `key`, if any.
    fn take(&self, key: &str) -> Option<Warm> {
        let mut idle = self.idle.lock().ok()?;
        let i = idle.iter().rposition(|w| w.0.key == key)?;
        Some(idle.remove(i).0)
    }

    /// Puts an engine that answered back to wait; the least recently used beyond the cap
    /// leaves (dropping it ends the process).
    fn give_back(&self, mut w: Warm) {
        w.since = Instant::now();
        w.jobs += 1;
        let Ok(mut idle) = self.idle.lock() else { return };
        idle.push(WarmSlot(w));
        while idle.len() > self.config.max {
            idle.remove(0);
        }
    }

    /// Ends the engines that waited longer than the idle time.
    pub(crate) fn reap(&self) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.retain(|w| w.0.since.elapsed() < self.config.idle);
        }
    }

    /// How often [`WarmEngines::reap`] should run.
    pub(crate) fn reap_every(&self) -> Duration {
        (self.config.idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
    }

    /// Runs `task` (an analysis) in a warm engine of `program` for `key`, within `time`: one
    /// that waits for `key`, else a new one, which waits for the next analysis afterwards.
    pub(crate) async fn run(
        &self,
        program: &Path,
        key: String,
        task: &EngineTask,
        time: Duration,
    ) -> Result<(Value, Option<Artifact>), Failure> {
        let mut line =
            serde_json::to_vec(task).map_err(|e| Failure::Transient(format!("the job could not be written: {e}")))?;
        line.push(b'\n');
        // An engine that waited may have been ended meanwhile (killed from outside): it is
        // left, and a new one takes the job.
        let mut w = loop {
            match self.take(&key) {
                Some(mut w) => {
                    if !matches!(w.child.try_wait(), Ok(None)) {
                        continue;
                    }
                    if w.stdin.write_all(&line).await.is_ok() && w.stdin.flush().await.is_ok() {
                        break w;
                    }
                }
                None => {
                    let mut w = self.start(program, key.clone())?;
                    w.stdin
                        .write_all(&line)
                        .await
                        .map_err(|e| Failure::Transient(format!("the engine process did not take its job: {e}")))?;
                    w.stdin
                        .flush()
                        .await
                        .map_err(|e| Failure::Transient(format!("the engine process did not take its job: {e}")))?;
                    break w;
                }
            }
        };
        if let Ok(mut tail) = w.stderr.lock() {
            tail.clear();
        }
        let mut answer = Vec::new();
        // At the time limit, `w` is dropped, which kills the process.
        let read = tokio::time::timeout(time, (&mut w.stdout).take(MAX_ANSWER).read_until(b'\n', &mut answer)).await;
        match read {
            Err(_) => Err(over_time(task, time)),
            Ok(Err(e)) => Err(Failure::Transient(format!("the engine process could not be read: {e}"))),
            Ok(Ok(_)) if answer.ends_with(b"\n") => {
                let answer: EngineAnswer = serde_json::from_slice(&answer).map_err(|e| {
                    Failure::Transient(format!("the engine process answered something unreadable: {e}"))
                })?;
                // An engine that met a fault that may pass is not kept: the next starts afresh.
                if !matches!(answer, EngineAnswer::Transient(_)) {
                    self.give_back(w);
                }
                answer.outcome()
            }
            Ok(Ok(n)) if n as u64 >= MAX_ANSWER => Err(Failure::Transient(format!(
                "the engine process answered more than {} MB for one analysis",
                MAX_ANSWER >> 20
            ))),
            // The process ended without answering: why, from its status and its last words.
            Ok(Ok(_)) => {
                drop(w.stdin);
                let status = tokio::time::timeout(Duration::from_secs(10), w.child.wait()).await;
                // Its last messages (a failed allocation says so just before the abort) may still
                // be on their way from the pipe.
                let _ = tokio::time::timeout(Duration::from_secs(2), &mut w.stderr_task).await;
                let stderr = w.stderr.lock().map(|mut t| String::from_utf8_lossy(t.make_contiguous()).into_owned());
                let failure = match status {
                    Ok(Ok(status)) => ended(task, status, &stderr.unwrap_or_default()),
                    _ => Failure::Transient("the engine process stopped answering".into()),
                };
                Err(match failure {
                    // What an engine kept from its earlier analyses counts against its ceiling
                    // too: an engine that had run others tries again in a new process before
                    // the analysis is held to have needed too much.
                    Failure::Refused(why) if w.jobs > 0 && why.contains("--engine-memory") => {
                        Failure::Transient(format!(
                            "{why} (in an engine process that had run {} analyses before; tried again in a new one)",
                            w.jobs
                        ))
                    }
                    other => other,
                })
            }
        }
    }

    /// Starts a warm engine process for `key`.
    fn start(&self, program: &Path, key: String) -> Result<Warm, Failure> {
        let mut child = tokio::process::Command::new(program)
            .arg(ENGINE_ARG)
            .arg(WARM_ARG)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Failure::Transient(format!("the engine process could not start ({}): {e}", program.display()))
            })?;
        self.started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let missing = || Failure::Transient("the engine process has no pipes".into());
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(missing)?);
        let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let mut pipe = child.stderr.take().ok_or_else(missing)?;
        let tail = stderr.clone();
        let stderr_task = tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let Ok(mut t) = tail.lock() else { break };
                t.extend(&buf[..n]);
                let over = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..over);
            }
        });
        Ok(Warm { key, child, stdin, stdout, stderr, stderr_task, since: Instant::now(), jobs: 0 })
    }
}
