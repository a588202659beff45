//! The reads of one taxon (and the taxa below it) from one sample, as a browser's download:
//! `GET /api/web/v1/taxon_reads?sample=ID&tax_id=N`, answered with
//! `<sample>.filtered.fastq.gz` as it is made.
//!
//! The sample's reads and its read-level results are read from the store as they arrive,
//! record by record beside their rows, and the selected records are compressed and sent on, so
//! that nothing of the sample is kept: each side holds a few chunks at most ([`CHUNKS`] of the
//! store's, and of [`OUT_CHUNK`] bytes going out), whatever the sample's size, and at most
//! [`AT_ONCE`] run at once for all browsers together, each on a thread of its own. A sample
//! whose results do not match its reads ends the download with an error (the browser shows it
//! failed) and the service's log says why.

use std::io::{self, Read, Write};
use std::path::Path;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use mgds_app::compare::{TaxonReadsSource, taxon_reads_source};
use mgds_client::Client;
use tokio::sync::mpsc;

/// Chunks held between the store and the subset, and between the subset and the browser.
const CHUNKS: usize = 8;
/// Bytes sent to the browser at once.
const OUT_CHUNK: usize = 256 * 1024;
/// Downloads of taxon reads made at once, for all browsers (each takes a core while it runs).
const AT_ONCE: usize = 2;

static RUNNING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(AT_ONCE);

/// The bytes of one download from the store, read on a blocking thread.
struct Incoming {
    rx: mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
}

impl Read for Incoming {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(b)) => self.current = b,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current = self.current.slice(n..);
        Ok(n)
    }
}

/// Bytes going to the browser, from a blocking thread.
struct Outgoing {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl Write for Outgoing {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= OUT_CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::take(&mut self.buf));
        self.tx.blocking_send(Ok(chunk)).map_err(|_| io::Error::other("the browser went away"))
    }
}

/// Starts reading `url` (a signed address of the store) into a reader for a blocking thread.
async fn incoming(http: &reqwest::Client, url: &str) -> Result<Incoming, String> {
    let response = http.get(url).send().await.map_err(|e| format!("the store could not be reached ({e})"))?;
    if !response.status().is_success() {
        return Err(format!("the store answered {}", response.status()));
    }
    let (tx, rx) = mpsc::channel(CHUNKS);
    let mut stream = response.bytes_stream();
    tokio::spawn(async move {
        while let Some(chunk) = stream.next().await {
            if tx.send(chunk.map_err(io::Error::other)).await.is_err() {
                break;
            }
        }
    });
    Ok(Incoming { rx, current: Bytes::new() })
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "code": "taxon_reads", "message": message }))).into_response()
}

/// The download for `sample` and `tax_id`, asked of the service's API as the browser's user
/// through `client`; `local` turns a download address of the service's own storage into one on
/// this process's loopback listener.
pub async fn download(client: &Client, local: impl Fn(&str) -> String, sample: &str, tax_id: &str) -> Response {
    let source: TaxonReadsSource = match taxon_reads_source(client, sample, tax_id).await {
        Ok(s) => s,
        Err(e) => return refuse(crate::commands::status_of(&e), &e.message),
    };
    let Ok(permit) = RUNNING.acquire().await else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "The service is stopping; try again in a moment.");
    };
    let http = reqwest::Client::new();
    let (rows_url, reads_url) = (local(&source.readlevel_url), local(&source.reads_url));
    let (rows, reads) = match tokio::try_join!(incoming(&http, &rows_url), incoming(&http, &reads_url)) {
        Ok(both) => both,
        Err(why) => {
            tracing::warn!(sample, why, "the reads of a taxon could not be read");
            return refuse(StatusCode::BAD_GATEWAY, "The sample's files could not be read; try again in a moment.");
        }
    };
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(CHUNKS);
    let (sample_id, options) = (sample.to_string(), source.options);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut gz =
            flate2::write::GzEncoder::new(Outgoing { tx: tx.clone(), buf: Vec::new() }, flate2::Compression::fast());
        let names = (Path::new("the read-level results"), Path::new("the sample's reads"));
        let done = mgds_formats::subset_stream(rows, reads, names, &mut gz, &options)
            .map_err(|e| io::Error::other(e.to_string()))
            .and_then(|_| gz.finish())
            .and_then(|mut out| out.flush());
        if let Err(e) = done {
            tracing::warn!(sample = sample_id, error = %e, "the reads of a taxon stopped");
            let _ = tx.blocking_send(Err(e));
        }
    });
    let body = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let mut response = Response::new(Body::from_stream(body));
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/gzip"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}\"", source.file_name)) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}
