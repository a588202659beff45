//! The watcher against the real service: each test starts `mgds-server` on 127.0.0.1:0 with its
//! own temporary data folder, writes sequencer output into a temporary folder the way
//! instruments do (growing files, late markers) and checks which samples appear on the service.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod illumina;
mod live;
mod nanopore;
mod pairs;
mod restart;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use mgds_client::Client;
use mgds_server::{AppState, Config, admin};
use mgds_watch::{Event, FolderConfig, Options, Watcher};
use tokio::sync::mpsc::UnboundedReceiver;

/// A running service and a user of it.
pub struct Service {
    pub url: String,
    pub state: AppState,
    pub key: String,
    _dir: tempfile::TempDir,
}

impl Service {
    pub async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        config.auth_failure_limit = 100_000;
        // Classification of each new sample is not what these tests are about.
        config.runner.workers = 0;
        let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.expect("service starts");
        let key = admin::create_user(&state.db, "lab@example.org", None, admin::Role::Member).await.unwrap().api_key;
        Service { url, state, key, _dir: dir }
    }

    /// A service that classifies each new sample, as a lab's does: the demo references
    /// installed, one worker.
    pub async fn start_classifying() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        config.auth_failure_limit = 100_000;
        config.runner.poll = Duration::from_millis(100);
        mgds_server::references::install_demo(&config.data_dir).expect("the demo references install");
        let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.expect("service starts");
        let key = admin::create_user(&state.db, "lab@example.org", None, admin::Role::Member).await.unwrap().api_key;
        Service { url, state, key, _dir: dir }
    }

    pub fn client(&self) -> Client {
        let retry = mgds_client::RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(100),
            max_retry_after: Duration::from_secs(5),
        };
        Client::builder(&self.url).api_key(&self.key).retry(retry).build().unwrap()
    }

    /// The names of the samples on the service that have their file, with how many of each.
    pub async fn names(&self) -> BTreeMap<String, usize> {
        let c = self.client();
        // Metadata first: a sample created between the two calls is then in both.
        let metadata = c.metadata().list().per_page(200).all().await.unwrap();
        let samples = c.samples().list().per_page(200).all().await.unwrap();
        let mut out = BTreeMap::new();
        for m in metadata {
            let s =
                samples.iter().find(|s| s.uri.ends_with(&format!("/{}", m.sample.id()))).expect("sample of metadata");
            let state = if s.visibility == mgds_api::Visibility::AwaitingData { " (awaiting data)" } else { "" };
            *out.entry(format!("{}{state}", m.name.unwrap_or_default())).or_insert(0) += 1;
        }
        out
    }
}

/// Options quick enough for tests.
pub fn quick(events: bool) -> Options {
    Options {
        poll_interval: Duration::from_millis(100),
        min_age: Duration::from_millis(150),
        events,
        rescan_interval: Duration::from_millis(500),
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        ..Options::default()
    }
}

/// Polls `cond` until it holds, failing after `secs`.
pub async fn until<F, Fut>(secs: u64, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Collects events as they come, to look at later.
pub struct Events {
    rx: UnboundedReceiver<Event>,
    pub seen: Vec<Event>,
}

impl Events {
    pub fn new(rx: UnboundedReceiver<Event>) -> Events {
        Events { rx, seen: Vec::new() }
    }

    pub fn drain(&mut self) -> &[Event] {
        while let Ok(e) = self.rx.try_recv() {
            self.seen.push(e);
        }
        &self.seen
    }

    /// Waits until an event matching `f` has arrived.
    pub async fn wait(&mut self, secs: u64, what: &str, f: impl Fn(&Event) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.drain().iter().any(&f) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; events: {:#?}", self.seen);
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }
}

/// Starts a watcher over `folders`.
pub async fn watch(svc: &Service, folders: Vec<FolderConfig>, options: Options, data: &Path) -> (Watcher, Events) {
    let (w, rx) = Watcher::start(folders, options, svc.client(), data).await.expect("watcher starts");
    (w, Events::new(rx))
}

/// `n` FASTQ records named `{prefix}.{i}`, gzip-compressed.
pub fn fastq_gz(prefix: &str, n: usize) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for i in 0..n {
        let seq: String = (0..80).map(|j| ['A', 'C', 'G', 'T'][(i * 7 + j * 3 + prefix.len()) % 4]).collect();
        writeln!(e, "@{prefix}.{i}\n{seq}\n+\n{}", "I".repeat(80)).unwrap();
    }
    e.finish().unwrap()
}

/// Writes `bytes` to `path` in `chunks` pieces a little apart, as an instrument does.
pub async fn write_slowly(path: &Path, bytes: &[u8], chunks: usize, pause: Duration) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    let step = bytes.len().div_ceil(chunks.max(1)).max(1);
    for piece in bytes.chunks(step) {
        f.write_all(piece).unwrap();
        f.flush().unwrap();
        tokio::time::sleep(pause).await;
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Records in a downloaded (gzip or plain) FASTQ file.
pub async fn records_of(svc: &Service, name: &str) -> usize {
    let c = svc.client();
    let metadata = c.metadata().list().per_page(200).all().await.unwrap();
    let m =
        metadata.into_iter().find(|m| m.name.as_deref() == Some(name)).unwrap_or_else(|| panic!("no sample {name}"));
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("reads");
    c.samples().download(m.sample.id(), &dest).await.unwrap();
    let bytes = std::fs::read(&dest).unwrap();
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut text).unwrap();
    } else {
        text = String::from_utf8(bytes).unwrap();
    }
    text.lines().count() / 4
}

pub fn names(list: &[&str]) -> BTreeMap<String, usize> {
    list.iter().map(|n| (n.to_string(), 1)).collect()
}
