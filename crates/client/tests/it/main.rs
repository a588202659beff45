//! Integration tests of the client against the real service: each test starts `mgds-server` on
//! 127.0.0.1:0 with its own temporary data folder, creates users with the admin functions and
//! talks to it only through `mgds_client`. Faults (a cut connection, a 503) are made by a tiny
//! TCP proxy in front of the real service, never by a stand-in for it.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod errors;
mod jobs;
mod lists;
mod proxy;
mod resources;
mod samples;
mod tls;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mgds_client::{Client, RetryPolicy};
use mgds_server::{AppState, Config, admin};
use serde_json::Value;

/// A running service.
pub struct Service {
    pub url: String,
    pub state: AppState,
    dir: tempfile::TempDir,
}

/// A user of the service.
#[derive(Clone, Debug)]
pub struct TestUser {
    pub id: String,
    pub key: String,
    pub email: String,
}

/// Retries fast enough for tests.
pub fn quick_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        max_retry_after: Duration::from_secs(5),
    }
}

impl Service {
    /// The service with default settings (but a failure limit that never interferes).
    pub async fn start() -> Service {
        Self::start_with(|c| c.auth_failure_limit = 100_000).await
    }

    /// The service with adjusted settings.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Service {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        adjust(&mut config);
        let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.expect("service starts");
        Service { url, state, dir }
    }

    /// A user in the default organisation.
    pub async fn user(&self, email: &str) -> TestUser {
        let u = admin::create_user(&self.state.db, email, None, admin::Role::Member).await.expect("create user");
        TestUser { id: u.id, key: u.api_key, email: email.to_string() }
    }

    /// A client acting as `user`.
    pub fn client(&self, user: &TestUser) -> Client {
        Client::builder(&self.url).api_key(&user.key).retry(quick_retry()).build().unwrap()
    }

    /// A client acting as `user`, going through a proxy.
    pub fn client_via(&self, user: &TestUser, proxy: &str, retry: RetryPolicy) -> Client {
        Client::builder(&self.url).api_key(&user.key).proxy(proxy).retry(retry).build().unwrap()
    }

    /// A scratch folder for files to upload and download.
    pub fn scratch(&self) -> PathBuf {
        let p = self.dir.path().join("scratch");
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    /// Every file under the service's object store.
    pub fn stored_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![self.dir.path().join("data").join(mgds_server::OBJECTS_DIR)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                } else {
                    out.push(e.path());
                }
            }
        }
        out
    }

    /// Registers a public job as the engines do.
    pub async fn job(&self, name: &str, analysis_type: &str, schema: Value) -> String {
        mgds_server::routes::register_job(
            &self.state,
            &mgds_server::routes::JobSpec {
                name: name.into(),
                analysis_type: analysis_type.into(),
                job_args_schema: schema,
                public: true,
                draft: false,
                creator_id: None,
                engine: String::new(),
                engine_version: String::new(),
                reference: String::new(),
            },
        )
        .await
        .expect("register job")
    }
}

/// A FASTQ file of about `bytes` bytes (whole records), with varied content.
pub fn fastq_bytes(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 64);
    let mut i = 0u64;
    while out.len() < bytes {
        let seq: String = (0..50).map(|j| b"ACGT"[((i * 7 + j * 13) % 4) as usize] as char).collect();
        out.extend_from_slice(format!("@read{i}\n{seq}\n+\n{}\n", "I".repeat(50)).as_bytes());
        i += 1;
    }
    out
}

/// Writes `bytes` to `dir/name`.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Files in `dir` (names only), sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}
