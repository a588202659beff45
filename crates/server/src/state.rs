//! The service's state: how it is set up ([`Config`]), and what it opens from that
//! ([`AppState`]): the data layer's [`Store`] (database and files) and what the service keeps
//! above it (the signer of addresses, the limits of failed sign-ins, the job runner, the
//! metrics).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::error::ApiError;
use crate::store::Store;
use crate::{auth, janitor, metrics, references, runner, signing, store};

/// Name of the folder, inside the data folder, that holds the object store.
pub const OBJECTS_DIR: &str = "objects";

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the database and files live; created if missing.
    pub data_dir: PathBuf,
    /// A PostgreSQL database (`postgres://user@host/database`) to keep the records in instead of
    /// SQLite in the data folder.
    pub database_url: Option<String>,
    /// An S3 bucket to keep the files in instead of `objects/` in the data folder.
    pub store: Option<store::files::S3Config>,
    /// The address clients use to reach the service (scheme, host, port), used in upload and
    /// download addresses. `None` until the listening address is known.
    pub public_url: Option<String>,
    /// Failed authentications allowed per window for one unknown key from one address, and
    /// for one address, before unknown keys from there get 429 (valid keys never do); also
    /// the e-mail lookups that find nobody allowed per user.
    pub auth_failure_limit: u32,
    /// The window for `auth_failure_limit`.
    pub auth_failure_window: Duration,
    /// Reverse proxies whose `X-Forwarded-For` names the client's address.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Job workers in this process, and threads per engine run.
    pub runner: runner::RunnerConfig,
    /// How often the janitor's round is due (on whichever host of the install looks first).
    pub janitor_every: Duration,
    /// Days the audit trail is kept (`None`: for ever).
    pub audit_retention_days: Option<u32>,
    /// Internal networks webhooks may reach (a lab's LIMS); public addresses are always allowed.
    pub webhook_allowed_networks: Vec<ipnet::IpNet>,
    /// The wait between a webhook delivery's tries.
    pub webhook_backoff: mgds_webhook::Backoff,
    /// How long a webhook event is tried.
    pub webhook_deliver_for: Duration,
    /// Single sign-on with an OpenID Connect provider, if configured.
    pub sso: Option<crate::sso::SsoConfig>,
}

impl Config {
    /// Defaults for a data folder: 20 failed sign-ins per 5 minutes per address.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            data_dir: data_dir.into(),
            database_url: None,
            store: None,
            public_url: None,
            auth_failure_limit: 20,
            auth_failure_window: Duration::from_secs(300),
            trusted_proxies: Vec::new(),
            runner: runner::RunnerConfig::default(),
            janitor_every: janitor::DEFAULT_EVERY,
            audit_retention_days: None,
            webhook_allowed_networks: Vec::new(),
            webhook_backoff: mgds_webhook::Backoff::SERVICE,
            webhook_deliver_for: store::events::DELIVER_FOR,
            sso: None,
        }
    }
}

/// Everything a request handler needs; cheap to clone. It is the data layer's [`Store`]
/// (reached through it: `state.db`, `state.storage`) and what the service keeps above it.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The database and the files.
    pub store: Store,
    /// Signs upload forms and download addresses.
    pub signer: signing::Signer,
    /// Limits repeated authentication failures and e-mail lookups.
    pub limiter: Arc<auth::AuthLimits>,
    /// The base address clients reach the service at, e.g. `http://127.0.0.1:8080`.
    pub public_url: Arc<str>,
    /// Installed reference data and the job workers.
    pub runner: Arc<runner::Runner>,
    /// Counts of requests and analyses, for `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// How often the janitor's round is due.
    pub janitor_every: Duration,
    /// The web UI served at the root, if any ([`AppState::with_web`]).
    pub web: Option<Arc<dyn WebUi>>,
    /// Single sign-on, if configured.
    pub sso: Option<Arc<crate::sso::Sso>>,
    /// The shared lock on the data folder's `objects.lock`, held while the process runs.
    _presence: Option<Arc<std::fs::File>>,
}

/// The file every process that opens a data folder holds a shared lock on.
const OBJECTS_LOCK: &str = "objects.lock";

/// Whether no other process holds the data folder now (its lock taken exclusively, then let
/// go), and the lock file to hold shared. Where the file cannot be made or locked (a read-only
/// folder, a file system without locks), the process counts as not alone.
fn presence_lock(path: &Path) -> (bool, Option<std::fs::File>) {
    let file = std::fs::File::open(path)
        .or_else(|_| std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path));
    let Ok(file) = file else { return (false, None) };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            (true, Some(file))
        }
        Err(_) => (false, Some(file)),
    }
}

/// A web UI the service serves at its root (the `mgds-web` crate's), for every `GET` or `HEAD`
/// of a path outside the API (`/api/`), the storage and upload routes and `/metrics`, which keep
/// their own answers (a 404 there stays JSON).
pub trait WebUi: Send + Sync + std::fmt::Debug + 'static {
    /// The answer to `path` (as the service received it), given the request's headers and the
    /// path the service's public address puts in front of its own (`""` at the root).
    fn answer(&self, path: &str, headers: &axum::http::HeaderMap, prefix: &str) -> axum::response::Response;

    /// The UI's own routes, served under `/api/web/v1` to signed-in callers as any API route
    /// is (the screens' commands for a browser), if it has any.
    fn routes(self: Arc<Self>) -> Option<axum::Router<AppState>> {
        None
    }

    /// The UI's additions to API v1 (the application's computations for scripts), served under
    /// `/api/v1` to authenticated callers as any API route is, if it has any.
    fn api_routes(self: Arc<Self>) -> Option<axum::Router<AppState>> {
        None
    }

    /// Told, once the service listens, the address of its own API on loopback (plain HTTP,
    /// this machine only), through which the UI's routes call the API as the browser's user.
    fn internal_api(&self, _url: &str) {}
}

impl AppState {
    /// Opens the data folder: creates it if needed, migrates the database, sweeps what a crash
    /// may have left half-done, and loads (or creates) the signing secret.
    pub async fn open(config: &Config) -> Result<AppState, StartError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| StartError::DataDir(config.data_dir.clone(), e))?;
        let db =
            store::db::open(&config.data_dir, config.database_url.as_deref()).await.map_err(StartError::Database)?;
        let storage = match &config.store {
            Some(s3) => {
                let storage = store::files::Storage::s3(s3).map_err(|e| StartError::Store(s3.bucket.clone(), e))?;
                storage.check().await.map_err(|e| StartError::Store(s3.bucket.clone(), e))?;
                store::upload_buckets::check(&storage).await.map_err(StartError::UploadBuckets)?;
                storage
            }
            None => store::files::Storage::local(&config.data_dir.join(OBJECTS_DIR))
                .map_err(|e| StartError::DataDir(config.data_dir.join(OBJECTS_DIR), e))?,
        };
        // Every process that opens the data folder holds a shared lock on `objects.lock` while it
        // runs. The first to open it (nobody else holds the lock) sweeps every partial upload a
        // crash left; one opening it beside a running process (`mgds admin` beside `mgds serve`)
        // only those unchanged for a while, since the other may be writing the newer ones.
        let (alone, presence) = presence_lock(&config.data_dir.join(OBJECTS_LOCK));
        let older_than = if alone { Duration::ZERO } else { store::files::STAGING_ABANDONED_AFTER };
        let swept = storage.sweep_staging(older_than).map_err(|e| StartError::DataDir(config.data_dir.clone(), e))?;
        if let Some(file) = &presence
            && let Err(e) = file.lock_shared()
        {
            tracing::warn!(error = %e, "cannot hold the data folder's presence lock");
        }
        if swept > 0 {
            tracing::info!(files = swept, "removed partial uploads left by an interrupted run");
        }
        let secret = store::settings::signing_secret(&db).await.map_err(StartError::Database)?;
        let mut store = Store::new(db, storage);
        let key = match store::audit::key(&config.data_dir) {
            Ok(key) => key,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read or make the audit trail's key (audit.key in the data folder); entries past the retention are kept");
                Vec::new()
            }
        };
        store.audit = Arc::new(store::AuditPolicy { retention_days: config.audit_retention_days, key });
        let networks = mgds_webhook::Networks::public_and(config.webhook_allowed_networks.clone());
        let sender = mgds_webhook::Sender::new(networks, &format!("MGDS-Webhook/{}", env!("CARGO_PKG_VERSION")))
            .inspect_err(
                |e| tracing::warn!(error = %e, "cannot make the webhooks' HTTP client; webhooks are not delivered"),
            )
            .ok();
        store.webhooks = Arc::new(store::DeliveryPolicy {
            sender,
            backoff: config.webhook_backoff,
            deliver_for: config.webhook_deliver_for,
        });
        let state = AppState {
            store,
            signer: signing::Signer::new(secret),
            limiter: Arc::new(auth::AuthLimits::new(
                config.auth_failure_limit,
                config.auth_failure_window,
                config.trusted_proxies.clone(),
            )),
            public_url: config.public_url.clone().unwrap_or_default().trim_end_matches('/').into(),
            runner: Arc::new(runner::Runner::new(&config.data_dir, config.runner.clone())),
            metrics: Arc::default(),
            janitor_every: config.janitor_every,
            web: None,
            sso: match &config.sso {
                Some(c) => Some(Arc::new(crate::sso::Sso::new(c.clone()).map_err(StartError::SingleSignOn)?)),
                None => None,
            },
            _presence: presence.map(Arc::new),
        };
        // Work left half-done by an interrupted run (files of deleted records, abandoned
        // uploads), unless another host is at it.
        janitor::round(&state.store, &format!("start-{}", store::db::new_id()), state.janitor_every).await;
        runner::sweep_work_dir(&config.data_dir);
        state.reload_references(&config.data_dir).await.map_err(StartError::References)?;
        Ok(state)
    }

    /// Reads the installed reference data again and registers its jobs (after an install).
    pub async fn reload_references(&self, data_dir: &Path) -> Result<(), ApiError> {
        let refs =
            references::References::load(&self.store, self.runner.config.sets_default_classification, data_dir).await?;
        self.runner.set_references(refs);
        self.wake_workers();
        Ok(())
    }

    /// The same state serving `web` at its root.
    pub fn with_web(mut self, web: Arc<dyn WebUi>) -> Self {
        self.web = Some(web);
        self
    }

    /// The path the public address puts in front of the service's own paths (`/mgds` for
    /// `https://host/mgds`), or `""`.
    pub fn public_prefix(&self) -> &str {
        self.public_url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
            .map(|p| p.trim_end_matches('/'))
            .unwrap_or_default()
    }

    /// The same state answering at another public address.
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.public_url = url.trim_end_matches('/').into();
        self
    }
}

impl std::ops::Deref for AppState {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The data folder could not be created or read.
    #[error("cannot use the data folder {0}")]
    DataDir(PathBuf, #[source] std::io::Error),
    /// The database could not be opened or migrated.
    #[error("cannot open the database")]
    Database(#[source] sqlx::Error),
    /// The S3 bucket could not be reached.
    #[error(
        "cannot reach the S3 bucket {0} (check the endpoint, the region and the credentials, and that the bucket exists)"
    )]
    Store(String, #[source] object_store::Error),
    /// Garage's admin API, given for uploads to go straight to the store, cannot be used.
    #[error("cannot give uploads buckets of their own: {0}")]
    UploadBuckets(String),
    /// Single sign-on is configured wrongly.
    #[error("{0}")]
    SingleSignOn(String),
    /// The address could not be bound.
    #[error("cannot listen on {0}")]
    Bind(SocketAddr, #[source] std::io::Error),
    /// The certificate or key could not be read.
    #[error("cannot load the TLS certificate {0} or its key")]
    Tls(PathBuf, #[source] std::io::Error),
    /// The installed reference data could not be registered.
    #[error("cannot register the jobs of the installed reference data")]
    References(#[source] ApiError),
    /// A non-loopback address without TLS.
    #[error(
        "refusing to listen on {0} without TLS: API keys would cross the network in clear text; \
         give --tls-cert and --tls-key, or listen on 127.0.0.1"
    )]
    PlainHttpOnNetwork(SocketAddr),
}

/// The default data folder: the OS per-user data folder, e.g. `~/.local/share/mgds` on Linux.
pub fn default_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("org", "MGDS", "mgds").map(|d| d.data_dir().to_path_buf())
}

/// Whether a path looks like an MGDS data folder (has a database).
pub fn is_data_dir(path: &Path) -> bool {
    path.join(store::db::DB_FILE).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process opening the data folder beside a running one (`mgds admin` beside `mgds
    /// serve`) leaves the partial uploads it may be writing; the first to open it after a crash
    /// removes them.
    #[tokio::test]
    async fn a_second_process_leaves_the_first_ones_partial_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        config.runner.workers = 0;
        let first = AppState::open(&config).await.unwrap();
        let partial = config.data_dir.join(OBJECTS_DIR).join("samples/0123/reads.fastq.gz#7");
        std::fs::create_dir_all(partial.parent().unwrap()).unwrap();
        std::fs::write(&partial, b"half of a file").unwrap();
        let beside = AppState::open(&config).await.unwrap();
        assert!(partial.exists(), "a file the running process may be writing stays");
        drop(beside);
        drop(first);
        let after_a_crash = AppState::open(&config).await.unwrap();
        assert!(!partial.exists(), "the first process to open the folder removes what a crash left");
        drop(after_a_crash);
    }
}
