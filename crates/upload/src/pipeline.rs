//! The upload itself: prepare, send, confirm, and try again what is worth trying again.
//!
//! One file past 500 lines on purpose: it holds the stages of one upload in the order they run
//! (prepare, send with the record check beside it, confirm, retry), which read best together.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mgds_api::{InitMultipartUploadRequest, InitMultipartUploadResponse, MetadataInput, RefOrId, Sample, TagInput};
use mgds_client::{Bandwidth, CancellationToken, Client, S3Writer};
use serde::Serialize;

use crate::source::STAGED_PREFIX;
use crate::{Source, UploadError};

/// Sending progress is reported at most this often (and always at its start and end).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// The first wait before trying a failed upload again; it doubles with each attempt.
const FIRST_RETRY_WAIT: Duration = Duration::from_secs(2);
/// The longest wait between attempts.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// Bytes handed from the thread making a streamed file to the transfer at a time: small enough
/// that progress and a speed limit move smoothly.
const STREAM_CHUNK: usize = 64 * 1024;
/// Chunks made ahead of the transfer (the rest of memory is the store's parts in flight).
const STREAM_CHUNKS_AHEAD: usize = 16;

/// The writing end of a streamed file: chunks go to the transfer over a bounded channel, each
/// with how much of the source files had been read when it was made (its progress).
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<(Bytes, u64)>,
    buf: Vec<u8>,
    consumed: Arc<AtomicU64>,
}

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(STREAM_CHUNK)));
        let read = self.consumed.load(Ordering::Relaxed);
        self.tx.blocking_send((chunk, read)).map_err(|_| std::io::Error::other("the transfer stopped"))
    }
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(STREAM_CHUNK - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() >= STREAM_CHUNK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// Sets a stop flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Where an upload stands, as it goes. The ending (a sample, or an error) is what
/// [`Upload::send`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Progress {
    /// Joining or interleaving the files into the one file to send.
    Preparing,
    /// Sending the file: bytes sent so far of the total. Starts again from 0 when an attempt
    /// is retried.
    Sending {
        /// Bytes sent.
        sent: u64,
        /// Bytes in all.
        total: u64,
    },
    /// The file is sent; the service is making the sample.
    Confirming,
    /// An attempt failed for a reason that may pass; the next starts after `wait_secs`.
    Retrying {
        /// The attempt that comes next (2 for the first retry).
        attempt: u32,
        /// Seconds until it starts.
        wait_secs: u64,
        /// What went wrong.
        reason: String,
    },
}

/// The sample awaiting data that an upload gives its file to, instead of making a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// By its id.
    SampleId(String),
    /// By its `external_sample_id`.
    ExternalSampleId(String),
}

type OnProgress = Arc<dyn Fn(Progress) + Send + Sync>;
type OnChecked = Arc<dyn Fn(&mgds_formats::Summary) + Send + Sync>;

/// A single file's check, running beside its transfer.
struct Check {
    /// Tells the checking thread to stop (the upload ended another way).
    stop: Arc<AtomicBool>,
    /// `Some(true)` once every record was read and found good, `Some(false)` once one was not.
    verdict: tokio::sync::watch::Receiver<Option<bool>>,
    work: tokio::task::JoinHandle<Result<mgds_formats::Summary, Box<mgds_formats::Error>>>,
}

impl Check {
    /// Starts reading `path` record by record on a blocking thread.
    fn start(path: &Path) -> Check {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, verdict) = tokio::sync::watch::channel(None);
        let (path, flag) = (path.to_path_buf(), stop.clone());
        let work = tokio::task::spawn_blocking(move || {
            let result = match std::fs::File::open(&path) {
                Ok(f) => mgds_formats::validate_reader(StopRead { inner: f, stop: flag }, &path).map_err(Box::new),
                Err(source) => Err(Box::new(mgds_formats::Error::Io { path: path.clone(), source })),
            };
            let _ = tx.send(Some(result.is_ok()));
            result
        });
        Check { stop, verdict, work }
    }

    /// What the transfer waits for before confirming: the verdict (a bad file cancels).
    fn gate(&self) -> impl std::future::Future<Output = mgds_client::Result<()>> + Send + 'static {
        let mut verdict = self.verdict.clone();
        async move {
            match verdict.wait_for(Option::is_some).await.map(|v| *v) {
                Ok(Some(true)) => Ok(()),
                _ => Err(mgds_client::Error::Cancelled),
            }
        }
    }
}

/// A reader that fails once `stop` is set, so that a check ends with its upload.
struct StopRead<R> {
    inner: R,
    stop: Arc<AtomicBool>,
}

impl<R: std::io::Read> std::io::Read for StopRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("the upload ended"));
        }
        self.inner.read(buf)
    }
}

/// One sample made from files on disk: see the [crate] documentation.
pub struct Upload {
    client: Client,
    source: Source,
    filename: Option<String>,
    metadata: Option<MetadataInput>,
    tags: Vec<String>,
    project: Option<String>,
    target: Option<Target>,
    staging: PathBuf,
    bandwidth: Option<Bandwidth>,
    cancel: CancellationToken,
    progress: Option<OnProgress>,
    attempts: u32,
    retry_wait: Duration,
    stream: bool,
    on_checked: Option<OnChecked>,
    sha256: Option<String>,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload").field("source", &self.source).field("target", &self.target).finish_non_exhaustive()
    }
}

impl Upload {
    /// An upload of `source` through `client`: by default a new sample named after its file,
    /// staged files in the system's temporary folder, three attempts.
    pub fn new(client: &Client, source: Source) -> Self {
        Upload {
            client: client.clone(),
            source,
            filename: None,
            metadata: None,
            tags: Vec::new(),
            project: None,
            target: None,
            staging: std::env::temp_dir(),
            bandwidth: None,
            cancel: CancellationToken::new(),
            progress: None,
            attempts: 3,
            retry_wait: FIRST_RETRY_WAIT,
            stream: true,
            on_checked: None,
            sha256: None,
        }
    }

    /// The SHA-256 (hex) of a single file's bytes, when the caller knows it already (the
    /// watcher hashes every file it settles): the service's store then refuses any other bytes
    /// and the upload is confirmed only if the stored file has it. Ignored for a file that is
    /// made (lanes joined, a pair interleaved).
    pub fn sha256(mut self, hex: impl Into<String>) -> Self {
        self.sha256 = Some(hex.into());
        self
    }

    /// Checks every record of a single file while it is sent (on a second thread, so that the
    /// check costs no time where the network is the slower), and confirms the upload only if all
    /// are good: a bad record anywhere cancels it, nothing of it stays on the service, and the
    /// upload ends with [`UploadError::File`] naming the line. `on_checked` gets the file's
    /// summary. Joined and interleaved files are checked record by record as they are made,
    /// with or without this.
    pub fn check(mut self, on_checked: impl Fn(&mgds_formats::Summary) + Send + Sync + 'static) -> Self {
        self.on_checked = Some(Arc::new(on_checked));
        self
    }

    /// The file name the sample gets (default: [`Source::default_filename`]).
    pub fn filename(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// Metadata for the sample.
    pub fn metadata(mut self, metadata: MetadataInput) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Attaches a tag by name (blank names are left out).
    pub fn tag(mut self, name: impl Into<String>) -> Self {
        let name: String = name.into();
        if !name.trim().is_empty() {
            self.tags.push(name.trim().to_string());
        }
        self
    }

    /// Places the sample in this project (id).
    pub fn project(mut self, id: impl Into<String>) -> Self {
        let id: String = id.into();
        self.project = (!id.is_empty()).then_some(id);
        self
    }

    /// Gives the file to this sample awaiting data.
    pub fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }

    /// Where joined and interleaved files are prepared (each removed once its upload ends).
    pub fn staging(mut self, dir: impl Into<PathBuf>) -> Self {
        self.staging = dir.into();
        self
    }

    /// Keeps the transfer under this speed limit (shared with every upload given a clone).
    pub fn bandwidth(mut self, limit: Bandwidth) -> Self {
        self.bandwidth = Some(limit);
        self
    }

    /// Stops the upload when this token is cancelled: whatever was prepared or sent is removed,
    /// and [`Upload::send`] answers [`UploadError::Cancelled`].
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Called with each [`Progress`] (sending at most ten times a second). It runs on the
    /// upload's task: keep it quick.
    pub fn progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// How many times to try in all when an attempt fails for a reason that may pass (at
    /// least 1; default 3). Waits double from 2 s between attempts.
    pub fn attempts(mut self, n: u32) -> Self {
        self.attempts = n.max(1);
        self
    }

    /// Whether a file that must be made (a pair interleaved, lanes joined) may stream into the
    /// service's S3-compatible store as it is made (default: yes, where the service has one).
    /// With `false` it is always made in the staging folder first and sent as a form: a retry
    /// then re-sends the staged file instead of making it again.
    pub fn stream(mut self, yes: bool) -> Self {
        self.stream = yes;
        self
    }

    /// The wait before the first retry (default 2 s); later waits double, up to a minute.
    pub fn retry_wait(mut self, wait: Duration) -> Self {
        self.retry_wait = wait;
        self
    }

    /// Makes the sample; answers it as the service now has it.
    pub async fn send(self) -> Result<Sample, UploadError> {
        let emit = |p: Progress| {
            if let Some(f) = &self.progress {
                f(p);
            }
        };
        if self.cancel.is_cancelled() {
            return Err(UploadError::Cancelled);
        }
        let filename = self.filename.clone().unwrap_or_else(|| self.source.default_filename());
        // A file that must be made (a pair interleaved, lanes joined) streams straight into the
        // service's S3-compatible store where it has one, so that no second copy of a big pair is
        // written to disk first; elsewhere it is made in the staging folder and sent as a form.
        if self.stream && !matches!(self.source, Source::Single(_)) {
            let streamed = self.retrying(&emit, || self.send_streamed(&filename, &emit)).await?;
            if let Some(sample) = streamed {
                return Ok(sample);
            }
        }
        let prepared = if matches!(self.source, Source::Single(_)) {
            let stop = Arc::new(AtomicBool::new(false));
            self.source.prepare(&self.staging, &stop)?
        } else {
            emit(Progress::Preparing);
            let stop = Arc::new(AtomicBool::new(false));
            let (source, staging, flag) = (self.source.clone(), self.staging.clone(), stop.clone());
            let work = tokio::task::spawn_blocking(move || source.prepare(&staging, &flag));
            // On a cancel the preparing thread is told to stop, and waited for: it removes what
            // it wrote before this returns.
            let stopped = async {
                self.cancel.cancelled().await;
                stop.store(true, Ordering::Relaxed);
                std::future::pending::<()>().await;
            };
            tokio::select! {
                r = work => r.map_err(|e| UploadError::Staging {
                    dir: self.staging.clone(),
                    source: std::io::Error::other(e.to_string()),
                })??,
                () = stopped => unreachable!("waits for the work to end"),
            }
        };
        let Some(on_checked) = self.on_checked.clone().filter(|_| matches!(self.source, Source::Single(_))) else {
            return self.retrying(&emit, || self.send_once(&prepared.path, &filename, None)).await;
        };
        let check = Check::start(&prepared.path);
        let sent = self.retrying(&emit, || self.send_once(&prepared.path, &filename, Some(&check))).await;
        let failed_check = *check.verdict.borrow() == Some(false);
        if sent.is_err() && !failed_check {
            check.stop.store(true, Ordering::Relaxed);
        }
        let checked = check.work.await;
        match (sent, checked) {
            (Ok(sample), Ok(Ok(summary))) => {
                on_checked(&summary);
                Ok(sample)
            }
            (_, Ok(Err(e))) if failed_check => Err(UploadError::File(e)),
            (sent, _) => sent,
        }
    }

    /// Runs `attempt_once` until it succeeds, fails for good, or the attempts are spent; waits
    /// between attempts (doubling), and stops waiting on a cancel.
    async fn retrying<T, F, Fut>(&self, emit: &impl Fn(Progress), mut attempt_once: F) -> Result<T, UploadError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, UploadError>>,
    {
        let mut attempt = 1;
        loop {
            match attempt_once().await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_transient() && attempt < self.attempts && !self.cancel.is_cancelled() => {
                    let wait = self.retry_wait.saturating_mul(1 << (attempt - 1).min(16)).min(MAX_RETRY_WAIT);
                    attempt += 1;
                    tracing::info!(attempt, error = %e, "upload failed; trying again");
                    emit(Progress::Retrying { attempt, wait_secs: wait.as_secs(), reason: e.to_string() });
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = self.cancel.cancelled() => return Err(UploadError::Cancelled),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Makes the file as it is sent into the service's S3-compatible store, then confirms it.
    /// `None` when the service offers no such store (then the file is staged and sent as a
    /// form).
    async fn send_streamed(&self, filename: &str, emit: &impl Fn(Progress)) -> Result<Option<Sample>, UploadError> {
        let samples = self.client.samples();
        let clean = mgds_api::clean_sample_filename(filename)
            .map_err(|e| UploadError::Service(mgds_client::Error::InvalidInput(e.to_string())))?;
        let mut req = InitMultipartUploadRequest {
            filename: Some(clean.clone()),
            metadata: self.metadata.clone(),
            tags: self.tags.iter().map(|t| TagInput { name: t.clone() }).collect(),
            project: self.project.clone().map(RefOrId::Id),
            interleaved: Some(self.source.is_interleaved()),
            ..InitMultipartUploadRequest::default()
        };
        match &self.target {
            Some(Target::SampleId(id)) => req.sample_id = Some(id.clone()),
            Some(Target::ExternalSampleId(id)) => req.external_sample_id = Some(id.clone()),
            None => {}
        }
        let init = match samples.init_multipart_upload(&req).await {
            Ok(init) => init,
            // A service without it: the staged form upload does the job.
            Err(e) if matches!(e.status(), Some(404 | 405)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let sample_id = init.sample_id.clone().unwrap_or_default();
        if init.s3_endpoint.is_none() {
            // A cloud store at an address this client does not know: send a form instead.
            let _ = samples.cancel_upload(&sample_id).await;
            return Ok(None);
        }
        match self.stream_into(&init, &clean, emit).await {
            Ok(sample) => Ok(Some(sample)),
            Err(e) => {
                // Leave nothing behind: the service drops the proposed sample and its objects.
                let _ = samples.cancel_upload(&sample_id).await;
                Err(e)
            }
        }
    }

    async fn stream_into(
        &self,
        init: &InitMultipartUploadResponse,
        filename: &str,
        emit: &impl Fn(Progress),
    ) -> Result<Sample, UploadError> {
        let total = self.source.input_bytes();
        let consumed = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(Bytes, u64)>(STREAM_CHUNKS_AHEAD);
        let producer = {
            let (source, consumed, stop) = (self.source.clone(), consumed.clone(), stop.clone());
            let name = std::path::PathBuf::from(filename);
            tokio::task::spawn_blocking(move || {
                let mut out = ChannelWriter { tx, buf: Vec::with_capacity(STREAM_CHUNK), consumed: consumed.clone() };
                source.write_to(&mut out, &name, Some(&consumed), &stop)
            })
        };
        // However this ends, the thread making the file stops soon after.
        let _stop_producer = StopOnDrop(stop.clone());
        let mut writer = S3Writer::start(&self.client, init).await?;
        emit(Progress::Sending { sent: 0, total });
        let mut last = Instant::now();
        let sent = loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => None,
                chunk = rx.recv() => Some(chunk),
            };
            let Some(next) = next else {
                writer.abort().await;
                return Err(UploadError::Cancelled);
            };
            let Some((chunk, read)) = next else { break Ok(()) };
            if let Some(b) = &self.bandwidth {
                tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => {
                        writer.abort().await;
                        return Err(UploadError::Cancelled);
                    }
                    () = b.wait_for(chunk.len() as u64) => {}
                }
            }
            if let Err(e) = writer.write(chunk).await {
                break Err(UploadError::from(e));
            }
            // Progress is how much of the source the bytes sent so far were made from.
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                emit(Progress::Sending { sent: read.min(total), total });
            }
        };
        drop(rx);
        let made = producer.await.map_err(|e| UploadError::Write(std::io::Error::other(e.to_string())))?;
        if let Err(e) = sent.and(made) {
            writer.abort().await;
            return Err(e);
        }
        // A cancel that came with the last piece still stops the upload before it is made.
        if self.cancel.is_cancelled() {
            writer.abort().await;
            return Err(UploadError::Cancelled);
        }
        writer.finish().await?;
        emit(Progress::Sending { sent: total, total });
        emit(Progress::Confirming);
        let done = self.client.upload_callback(init, filename).await?;
        let id = done.sample_id.ok_or_else(|| {
            UploadError::Service(mgds_client::Error::InvalidInput(
                "the service confirmed the upload but named no sample".into(),
            ))
        })?;
        Ok(self.client.samples().get(id.as_str()).await?)
    }

    async fn send_once(&self, path: &Path, filename: &str, check: Option<&Check>) -> Result<Sample, UploadError> {
        let mut up = self
            .client
            .samples()
            .upload(path)
            .filename(filename)
            .interleaved(self.source.is_interleaved())
            .cancel_token(self.cancel.clone());
        if let (Source::Single(_), Some(h)) = (&self.source, &self.sha256) {
            up = up.sha256(h.clone());
        }
        if let Some(check) = check {
            up = up.confirm_after(check.gate());
        }
        if let Some(f) = self.progress.clone() {
            let last = Mutex::new(None::<Instant>);
            up = up.progress(move |sent, total| {
                let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let due = last.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY);
                if sent == 0 || sent == total || due {
                    *last = Some(Instant::now());
                    f(Progress::Sending { sent, total });
                    if sent == total {
                        f(Progress::Confirming);
                    }
                }
            });
        }
        for t in &self.tags {
            up = up.tag(t.clone());
        }
        if let Some(p) = &self.project {
            up = up.project(p.as_str());
        }
        if let Some(m) = &self.metadata {
            up = up.metadata(m.clone());
        }
        up = match &self.target {
            Some(Target::SampleId(id)) => up.sample_id(id.as_str()),
            Some(Target::ExternalSampleId(id)) => up.external_sample_id(id.clone()),
            None => up,
        };
        if let Some(b) = &self.bandwidth {
            up = up.bandwidth(b.clone());
        }
        Ok(up.send().await?)
    }
}

/// Removes the staged files that an upload stopped by a crash or a power cut left in `dir`.
/// Call it when nothing uploads from `dir` (at start, before the first upload).
pub fn sweep_staging(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(STAGED_PREFIX) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
