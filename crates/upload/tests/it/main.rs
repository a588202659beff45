//! The upload pipeline against the real service on 127.0.0.1 (its own temporary data folder):
//! pairs interleaved and sent, cancels that leave nothing, retries after a cut connection, and
//! typed refusals. Faults come from a small TCP proxy in front of the real service.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../client/tests/it/proxy.rs"]
#[allow(dead_code)]
mod proxy;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mgds_api::ErrorCode;
use mgds_client::{Bandwidth, CancellationToken, Client, RetryPolicy};
use mgds_server::{AppState, Config, admin};
use mgds_upload::{Progress, Source, Target, Upload, UploadError};
use proxy::{Direction, Fault, Proxy};

struct Service {
    url: String,
    state: AppState,
    key: String,
    dir: tempfile::TempDir,
}

impl Service {
    async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        // No engines: these tests are about files arriving, not their analyses.
        config.runner.workers = 0;
        let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let key = admin::create_user(&state.db, "lab@example.org", None, admin::Role::Member).await.unwrap().api_key;
        Service { url, state, key, dir }
    }

    fn client(&self, retry: RetryPolicy) -> Client {
        Client::builder(&self.url).api_key(&self.key).retry(retry).build().unwrap()
    }

    fn client_via(&self, proxy: &str) -> Client {
        Client::builder(&self.url).api_key(&self.key).proxy(proxy).retry(RetryPolicy::none()).build().unwrap()
    }

    fn folder(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    async fn sample_count(&self) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM samples").fetch_one(&self.state.db).await.unwrap()
    }
}

/// A pair of FASTQ files of `reads` reads each, named as Illumina names them.
fn pair(dir: &Path, reads: usize) -> (PathBuf, PathBuf) {
    let write = |mate: u8| {
        let mut text = String::new();
        // Varied bases (a simple generator), so that gzip cannot shrink the pair to nothing.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ u64::from(mate);
        for i in 0..reads {
            let seq: String = (0..100)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b"ACGT"[(x % 4) as usize] as char
                })
                .collect();
            text.push_str(&format!("@read{i} {mate}:N:0:1\n{seq}\n+\n{}\n", "I".repeat(100)));
        }
        let p = dir.join(format!("S1_L001_R{mate}_001.fastq"));
        std::fs::write(&p, text).unwrap();
        p
    };
    (write(1), write(2))
}

fn recorder() -> (Arc<Mutex<Vec<Progress>>>, impl Fn(Progress) + Send + Sync + 'static) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (seen, move |p| s.lock().unwrap().push(p))
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(true)
}

#[tokio::test]
async fn a_pair_made_in_the_staging_folder_becomes_one_sample_and_its_staged_file_goes() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 500);
    let staging = svc.folder("staging");
    let (seen, record) = recorder();
    let sample = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1, r2)]))
        .stream(false)
        .staging(&staging)
        .tag("gut")
        .progress(record)
        .send()
        .await
        .unwrap();
    assert_eq!(sample.filename.as_deref(), Some("S1_L001_001_interleaved.fastq.gz"));
    assert!(is_empty(&staging), "the staged file is removed");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first(), Some(&Progress::Preparing));
    assert_eq!(seen.last(), Some(&Progress::Confirming));

    // What the service stored is the pair, interleaved.
    let out = svc.folder("download").join("back.fastq.gz");
    svc.client(RetryPolicy::default()).samples().download(sample.uri.rsplit('/').next().unwrap(), &out).await.unwrap();
    let summary = mgds_formats::validate(&out).unwrap();
    assert_eq!(summary.records, 1000);
    assert_eq!(summary.pairing, mgds_formats::ReadPairing::Interleaved);
}

/// Where the service has an S3-compatible store, a pair is interleaved as it streams into it:
/// nothing is written to the staging folder, and the sample is the pair, interleaved.
#[tokio::test]
async fn a_pair_streams_into_the_store_without_a_copy_on_disk() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 3000);
    let staging = svc.folder("staging");
    let (seen, record) = recorder();
    let sample = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1.clone(), r2)]))
        .staging(&staging)
        .progress(record)
        .send()
        .await
        .unwrap();
    assert!(is_empty(&staging), "nothing is staged");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.contains(&Progress::Preparing), "{seen:?}");
    assert!(matches!(seen.first(), Some(Progress::Sending { sent: 0, .. })), "{seen:?}");
    assert_eq!(seen.last(), Some(&Progress::Confirming));
    let out = svc.folder("download").join("back.fastq.gz");
    svc.client(RetryPolicy::default()).samples().download(sample.uri.rsplit('/').next().unwrap(), &out).await.unwrap();
    let summary = mgds_formats::validate(&out).unwrap();
    assert_eq!((summary.records, summary.pairing), (6000, mgds_formats::ReadPairing::Interleaved));
    assert_eq!(sample.filename.as_deref(), Some("S1_L001_001_interleaved.fastq.gz"));
}

/// A streamed pair cancelled mid-way: no sample, and the parts that reached the store are gone.
#[tokio::test]
async fn a_cancelled_stream_leaves_no_sample_and_no_parts() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 40_000);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let upload = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1, r2)]))
        .staging(svc.folder("staging"))
        .bandwidth(Bandwidth::new(2_000_000))
        .cancel_token(cancel)
        .progress(move |p| {
            if matches!(p, Progress::Sending { sent, .. } if sent > 0) {
                c.cancel();
            }
        });
    assert!(matches!(upload.send().await, Err(UploadError::Cancelled)));
    assert_eq!(svc.sample_count().await, 0);
    let objects = svc.dir.path().join("data").join(mgds_server::OBJECTS_DIR);
    let left: Vec<_> = walk(&objects);
    assert!(left.is_empty(), "nothing of the cancelled upload is stored: {left:?}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[tokio::test]
async fn a_cancel_while_sending_leaves_no_sample_and_no_staged_file() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 20_000);
    let staging = svc.folder("staging");
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let upload = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1, r2)]))
        .stream(false)
        .staging(&staging)
        // Slow enough that the cancel comes mid-way.
        .bandwidth(Bandwidth::new(200_000))
        .cancel_token(cancel)
        .progress(move |p| {
            if matches!(p, Progress::Sending { sent, .. } if sent > 0) {
                c.cancel();
            }
        });
    assert!(matches!(upload.send().await, Err(UploadError::Cancelled)));
    assert!(is_empty(&staging));
    assert_eq!(svc.sample_count().await, 0);
}

#[tokio::test]
async fn a_cancel_while_interleaving_stops_it_and_removes_what_it_wrote() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 200_000);
    let staging = svc.folder("staging");
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let upload = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1, r2)]))
        .stream(false)
        .staging(&staging)
        .cancel_token(cancel)
        .progress(move |p| {
            if p == Progress::Preparing {
                c.cancel();
            }
        });
    let started = std::time::Instant::now();
    assert!(matches!(upload.send().await, Err(UploadError::Cancelled)));
    assert!(started.elapsed() < Duration::from_secs(5), "stopped soon after the cancel");
    assert!(is_empty(&staging));
    assert_eq!(svc.sample_count().await, 0);
}

#[tokio::test]
async fn a_cut_connection_is_tried_again_and_makes_one_sample() {
    let svc = Service::start().await;
    let (r1, r2) = pair(&svc.folder("reads"), 5_000);
    let proxy = Proxy::start(
        &svc.url,
        Fault::Cut { method: "POST", path: "/storage/", direction: Direction::Up, after: 100_000, times: 1 },
    )
    .await;
    let (seen, record) = recorder();
    // The client itself does not retry: the pipeline's own attempt is what recovers.
    let sample = Upload::new(&svc.client_via(&proxy.url), Source::Interleave(vec![(r1, r2)]))
        .stream(false)
        .staging(svc.folder("staging"))
        .retry_wait(Duration::from_millis(20))
        .progress(record)
        .send()
        .await
        .unwrap();
    assert!(sample.filename.is_some());
    assert_eq!(proxy.stats.cuts.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(seen.lock().unwrap().iter().any(|p| matches!(p, Progress::Retrying { attempt: 2, .. })));
    assert_eq!(svc.sample_count().await, 1);
}

#[tokio::test]
async fn files_that_are_not_a_pair_are_refused_before_anything_is_sent() {
    let svc = Service::start().await;
    let dir = svc.folder("reads");
    let (r1, _) = pair(&dir, 10);
    let other = dir.join("other_R2.fastq");
    std::fs::write(&other, "@x 2:N:0:1\nACGT\n+\nIIII\n").unwrap();
    let staging = svc.folder("staging");
    let err = Upload::new(&svc.client(RetryPolicy::default()), Source::Interleave(vec![(r1, other)]))
        .staging(&staging)
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, UploadError::File(_)) && !err.is_transient(), "{err:?}");
    assert!(err.to_string().contains("other_R2.fastq"), "{err}");
    assert!(is_empty(&staging));
    assert_eq!(svc.sample_count().await, 0);
}

#[tokio::test]
async fn a_sample_no_longer_awaiting_data_is_a_typed_refusal() {
    let svc = Service::start().await;
    let (r1, _) = pair(&svc.folder("reads"), 10);
    let err = Upload::new(&svc.client(RetryPolicy::default()), Source::Single(r1))
        .target(Target::ExternalSampleId("never-pre-uploaded".into()))
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NotAwaitingData), "{err:?}");
    assert!(!err.is_transient());
}

#[tokio::test]
async fn lanes_are_joined_and_a_mix_of_gzip_and_plain_is_named() {
    let svc = Service::start().await;
    let dir = svc.folder("reads");
    let (a, b) = pair(&dir, 10);
    let sample = Upload::new(&svc.client(RetryPolicy::default()), Source::Concat(vec![a.clone(), b]))
        .staging(svc.folder("staging"))
        .filename("lanes.fastq")
        .send()
        .await
        .unwrap();
    assert_eq!(sample.size, Some(2 * std::fs::metadata(&a).unwrap().len()));
    let gz = dir.join("c.fastq.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, b"@c\nACGT\n+\nIIII\n").unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let err = Upload::new(&svc.client(RetryPolicy::default()), Source::Concat(vec![a, gz.clone()]))
        .staging(svc.folder("staging"))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, UploadError::MixedCompression { ref gzip, .. } if *gzip == gz), "{err:?}");
}

#[tokio::test]
async fn a_checked_file_is_summarised_once_it_is_sent_whole() {
    let svc = Service::start().await;
    let (r1, _) = pair(&svc.folder("reads"), 5_000);
    let summary = Arc::new(Mutex::new(None));
    let s = summary.clone();
    let sample = Upload::new(&svc.client(RetryPolicy::default()), Source::Single(r1))
        .check(move |sum| *s.lock().unwrap() = Some(sum.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(sample.filename.as_deref(), Some("S1_L001_R1_001.fastq"));
    let summary = summary.lock().unwrap().clone().expect("summary given");
    assert_eq!((summary.records, summary.bases), (5_000, 500_000));
}

#[tokio::test]
async fn a_bad_record_at_the_end_of_a_checked_file_leaves_nothing_on_the_service() {
    let svc = Service::start().await;
    let (r1, _) = pair(&svc.folder("reads"), 20_000);
    // The last record's quality is one character short: found only by reading to the end.
    let mut text = std::fs::read(&r1).unwrap();
    text.extend_from_slice(b"@last 1:N:0:1\nACGT\n+\nIII\n");
    std::fs::write(&r1, text).unwrap();
    let called = Arc::new(Mutex::new(false));
    let c = called.clone();
    let err = Upload::new(&svc.client(RetryPolicy::default()), Source::Single(r1))
        .check(move |_| *c.lock().unwrap() = true)
        .send()
        .await
        .unwrap_err();
    let UploadError::File(e) = &err else { panic!("expected a file error, got {err:?}") };
    let text = e.to_string();
    assert!(text.contains("S1_L001_R1_001.fastq") && text.contains("line 80004"), "{text}");
    assert!(!*called.lock().unwrap());
    assert_eq!(svc.sample_count().await, 0);
    let pending: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM uploads WHERE confirmed_id IS NULL")
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    assert_eq!(pending, 0, "the upload was cancelled on the service");
}
