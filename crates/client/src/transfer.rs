//! File transfers: the multipart POST of an upload form, streamed from disk, and downloads from
//! pre-signed addresses into a temporary file renamed into place when whole.
//!
//! Neither sends the API key: upload forms and download addresses carry their own signatures
//! and may point at another host (a storage service).

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bytes::BytesMut;
use futures::stream;
use reqwest::multipart::{Form, Part};
use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::retry::parse_retry_after;
use crate::{Client, Destination, Error, Result, transport};

/// Called as a transfer goes with (bytes sent or received so far, total bytes). It starts again
/// from 0 when a failed transfer is retried. It runs on the transfer's task: keep it quick.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Size of the pieces read from disk: memory use stays flat whatever the file size.
const CHUNK: usize = 1024 * 1024;

/// A limit on upload speed in bytes per second, shared by every upload given a clone of it
/// (the uploads together stay under it). The limit can change while uploads run; 0 means none.
#[derive(Clone, Debug, Default)]
pub struct Bandwidth {
    limit: Arc<AtomicU64>,
    next_free: Arc<std::sync::Mutex<Option<Instant>>>,
}

impl Bandwidth {
    /// A limit of `bytes_per_sec` (0: unlimited).
    pub fn new(bytes_per_sec: u64) -> Self {
        let b = Bandwidth::default();
        b.set_limit(bytes_per_sec);
        b
    }

    /// Changes the limit (0: unlimited); uploads under way follow from their next piece.
    pub fn set_limit(&self, bytes_per_sec: u64) {
        self.limit.store(bytes_per_sec, Ordering::Relaxed);
    }

    /// The limit in bytes per second (0: unlimited).
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// How much to read at once: small enough that a piece waits at most about 1/8 s, so the
    /// stall detector keeps seeing movement and the pace stays smooth.
    fn piece(&self, max: usize) -> usize {
        match self.limit() {
            0 => max,
            l => usize::try_from(l / 8).unwrap_or(max).clamp(1024, max),
        }
    }

    /// Waits for the slot of `n` bytes: slots are handed out back to back at the limit's pace.
    /// Callers that send bytes themselves (a streamed upload) wait here before each piece.
    pub async fn wait_for(&self, n: u64) {
        let limit = self.limit();
        if limit == 0 {
            return;
        }
        let start = {
            let mut next = self.next_free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = Instant::now();
            // An idle limiter does not bank unused time: a burst after a pause still keeps pace.
            let start = next.map_or(now, |t| t.max(now));
            *next = Some(start + Duration::from_secs_f64(n as f64 / limit as f64));
            start
        };
        tokio::time::sleep_until(start.into()).await;
    }
}

/// Watches a transfer's progress: the time of the last byte moved.
#[derive(Clone)]
struct Activity {
    start: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Activity { start: Instant::now(), last_ms: Arc::new(AtomicU64::new(0)) }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Resolves once nothing has moved for `limit`.
    async fn stalled(&self, limit: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let idle = self.start.elapsed().saturating_sub(last);
            if idle >= limit {
                return;
            }
            tokio::time::sleep((limit - idle).min(Duration::from_secs(1)).max(Duration::from_millis(10))).await;
        }
    }
}

/// Why one attempt of a transfer failed.
enum Failure {
    /// Worth trying again (connection broke, 5xx, 429, stalled), with the error to report if not
    /// and the service's `Retry-After`.
    Retry(Error, Option<Duration>),
    /// Not worth trying again.
    Fail(Error),
}

/// An upload form to fill: where, the fields to send back unchanged and in order, and the file.
pub(crate) struct UploadForm<'a> {
    pub url: &'a str,
    pub fields: &'a Map<String, Value>,
    pub path: &'a Path,
    pub filename: &'a str,
    pub size: u64,
    /// A speed limit to keep to, if any.
    pub bandwidth: Option<&'a Bandwidth>,
}

/// POSTs `form` with the file streamed from disk as the last part, named `file`. A failed
/// attempt is retried by re-opening the file and reading it from the start. Stops at once,
/// with [`Error::Cancelled`], when `cancel` fires.
pub(crate) async fn post_file(
    client: &Client,
    form: &UploadForm<'_>,
    progress: Option<&Progress>,
    cancel: &CancellationToken,
) -> Result<()> {
    let url = client.service_url(form.url)?;
    let policy = client.settings_retry();
    let mut attempt = 0;
    loop {
        attempt += 1;
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let activity = Activity::new();
        let one = post_once(client, &url, form, progress, cancel, &activity, attempt);
        let outcome = tokio::select! {
            r = one => r,
            () = cancel.cancelled() => return Err(Error::Cancelled),
            () = activity.stalled(client.stall_timeout()) => Err(Failure::Retry(
                Error::TransferStalled { url: shown(&url), waited: client.stall_timeout() },
                None,
            )),
        };
        match outcome {
            Ok(()) => return Ok(()),
            Err(Failure::Fail(e)) => return Err(e),
            Err(Failure::Retry(e, retry_after)) => {
                if cancel.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                if attempt >= policy.max_attempts.max(1) {
                    return Err(e);
                }
                let wait = match retry_after {
                    Some(w) if w > policy.max_retry_after => return Err(e),
                    Some(w) => w,
                    None => policy.backoff(attempt),
                };
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = cancel.cancelled() => return Err(Error::Cancelled),
                }
            }
        }
    }
}

async fn post_once(
    client: &Client,
    url: &Url,
    form: &UploadForm<'_>,
    progress: Option<&Progress>,
    cancel: &CancellationToken,
    activity: &Activity,
    attempt: u32,
) -> std::result::Result<(), Failure> {
    // Opened anew for every attempt: a retry never resends a half-consumed body.
    let file = match tokio::fs::File::open(form.path).await {
        Ok(f) => f,
        Err(e) => return Err(Failure::Fail(Error::io("read", form.path, e))),
    };
    match file.metadata().await {
        Ok(m) if m.len() == form.size => {}
        Ok(m) => {
            return Err(Failure::Fail(Error::InvalidInput(format!(
                "{} changed while it was being uploaded (it had {} bytes, now {}); upload it again once it is complete",
                form.path.display(),
                form.size,
                m.len()
            ))));
        }
        Err(e) => return Err(Failure::Fail(Error::io("read", form.path, e))),
    }
    let total = form.size;
    if let Some(p) = progress {
        p(0, total);
    }
    let body = {
        let progress = progress.cloned();
        let cancel = cancel.clone();
        let activity = activity.clone();
        let bandwidth = form.bandwidth.cloned();
        stream::unfold((file, 0u64, false), move |(mut file, sent, failed)| {
            let progress = progress.clone();
            let cancel = cancel.clone();
            let activity = activity.clone();
            let bandwidth = bandwidth.clone();
            async move {
                if failed || sent >= total {
                    return None;
                }
                if cancel.is_cancelled() {
                    return Some((Err(io::Error::other("the upload was cancelled")), (file, sent, true)));
                }
                let chunk = bandwidth.as_ref().map_or(CHUNK, |b| b.piece(CHUNK));
                let want = usize::try_from(total - sent).unwrap_or(chunk).min(chunk);
                if let Some(b) = &bandwidth {
                    b.wait_for(want as u64).await;
                    // Waiting for the limit is not a stall.
                    activity.touch();
                }
                let mut buf = BytesMut::with_capacity(want);
                match (&mut file).take(want as u64).read_buf(&mut buf).await {
                    Ok(0) => Some((
                        Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the file became shorter while it was being sent",
                        )),
                        (file, sent, true),
                    )),
                    Ok(n) => {
                        let sent = sent + n as u64;
                        activity.touch();
                        if let Some(p) = &progress {
                            p(sent, total);
                        }
                        Some((Ok(buf.freeze()), (file, sent, false)))
                    }
                    Err(e) => Some((Err(e), (file, sent, true))),
                }
            }
        })
    };
    let mut multipart = Form::new();
    for (name, value) in form.fields {
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        multipart = multipart.text(name.clone(), text);
    }
    // A known length gives the request a Content-Length, which S3-style endpoints require.
    let part = Part::stream_with_length(reqwest::Body::wrap_stream(body), total).file_name(form.filename.to_string());
    let part = match part.mime_str("application/octet-stream") {
        Ok(p) => p,
        Err(e) => return Err(Failure::Fail(Error::Setup(e))),
    };
    multipart = multipart.part("file", part);
    let resp = match client.http.post(url.clone()).multipart(multipart).send().await {
        Ok(r) => r,
        Err(e) if e.is_builder() => return Err(Failure::Fail(Error::Setup(e))),
        Err(e) => return Err(Failure::Retry(transport(url, attempt, e), None)),
    };
    activity.touch();
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()));
    if (200..300).contains(&status) {
        // The file is stored; the storage service's receipt (S3's PostResponse) is not needed.
        return Ok(());
    }
    let body = resp.bytes().await.unwrap_or_default();
    let err = Error::from_answer(status, retry_after, &body);
    Err(if status == 429 || status >= 500 { Failure::Retry(err, retry_after) } else { Failure::Fail(err) })
}

/// The address without its query (which carries signatures).
fn shown(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.to_string()
}

/// Downloads `url` (a pre-signed address) to `dest`: streamed into a temporary file beside it,
/// which is renamed to `dest` only once it is whole, so a failed download leaves nothing. A
/// failed attempt starts again from the first byte. Returns the number of bytes.
///
/// A file already at `dest` is replaced only when the destination says so; otherwise the whole
/// file is put in place without replacing (`persist_noclobber`), so one that appeared since the
/// destination was chosen is kept and the answer is [`Error::FileExists`].
pub(crate) async fn download_to_file(
    client: &Client,
    url: &str,
    destination: &Destination,
    progress: Option<&Progress>,
) -> Result<u64> {
    let dest = destination.path();
    let url = client.service_url(url)?;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "download".into());
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".part")
        .tempfile_in(&dir)
        .map_err(|e| Error::io("create a temporary file in", &dir, e))?;
    let (file, temp_path) = temp.into_parts();
    let mut file = tokio::fs::File::from_std(file);
    let policy = client.settings_retry();
    let mut attempt = 0;
    let bytes = loop {
        attempt += 1;
        let outcome = download_once(client, &url, &mut file, progress, attempt).await;
        match outcome {
            Ok(n) => break n,
            Err(Failure::Fail(e)) => return Err(e),
            Err(Failure::Retry(e, retry_after)) => {
                if attempt >= policy.max_attempts.max(1) {
                    return Err(e);
                }
                let wait = match retry_after {
                    Some(w) if w > policy.max_retry_after => return Err(e),
                    Some(w) => w,
                    None => policy.backoff(attempt),
                };
                tokio::time::sleep(wait).await;
                // Start again from nothing.
                let reset = async {
                    file.set_len(0).await?;
                    file.seek(io::SeekFrom::Start(0)).await.map(|_| ())
                };
                reset.await.map_err(|e| Error::io("write", &*temp_path, e))?;
            }
        }
    };
    let finish = async {
        file.flush().await?;
        file.sync_all().await
    };
    finish.await.map_err(|e| Error::io("write", &*temp_path, e))?;
    drop(file);
    if destination.replaces() {
        temp_path.persist(dest).map_err(|e| Error::io("write", dest, e.error))?;
    } else {
        temp_path.persist_noclobber(dest).map_err(|e| match e.error.kind() {
            io::ErrorKind::AlreadyExists => Error::FileExists { path: dest.to_path_buf() },
            _ => Error::io("write", dest, e.error),
        })?;
    }
    Ok(bytes)
}

async fn download_once(
    client: &Client,
    url: &Url,
    file: &mut tokio::fs::File,
    progress: Option<&Progress>,
    attempt: u32,
) -> std::result::Result<u64, Failure> {
    let stall = client.stall_timeout();
    // A service may send a download on to its store (MGDS does, once it has checked that the
    // address is still the holder's): the client follows such a redirect itself when its
    // policy stops at another origin (a download carries no credentials to leak).
    let mut at = url.clone();
    let mut resp = loop {
        let send = client.http.get(at.clone()).send();
        let resp = match tokio::time::timeout(stall, send).await {
            Err(_) => return Err(Failure::Retry(Error::TransferStalled { url: shown(url), waited: stall }, None)),
            Ok(Err(e)) if e.is_builder() => return Err(Failure::Fail(Error::Setup(e))),
            Ok(Err(e)) => return Err(Failure::Retry(transport(url, attempt, e), None)),
            Ok(Ok(r)) => r,
        };
        let next = resp
            .status()
            .is_redirection()
            .then(|| resp.headers().get(reqwest::header::LOCATION))
            .flatten()
            .and_then(|l| l.to_str().ok())
            .and_then(|l| at.join(l).ok());
        match next {
            Some(next) if at == *url && crate::check_secure(&next).is_ok() => at = next,
            _ => break resp,
        }
    };
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let body = resp.bytes().await.unwrap_or_default();
        let err = Error::from_answer(status, retry_after, &body);
        return Err(if status == 429 || status >= 500 { Failure::Retry(err, retry_after) } else { Failure::Fail(err) });
    }
    let total = resp.content_length().unwrap_or(0);
    let mut received = 0u64;
    if let Some(p) = progress {
        p(0, total);
    }
    loop {
        let chunk = match tokio::time::timeout(stall, resp.chunk()).await {
            Err(_) => return Err(Failure::Retry(Error::TransferStalled { url: shown(url), waited: stall }, None)),
            Ok(Err(e)) => return Err(Failure::Retry(transport(url, attempt, e), None)),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(c))) => c,
        };
        file.write_all(&chunk)
            .await
            .map_err(|e| Failure::Fail(Error::io("write", "the temporary download file", e)))?;
        received += chunk.len() as u64;
        if let Some(p) = progress {
            p(received, total.max(received));
        }
    }
    if total > 0 && received != total {
        let err = Error::InvalidInput(format!("the download ended after {received} of {total} bytes"));
        return Err(Failure::Retry(err, None));
    }
    Ok(received)
}
