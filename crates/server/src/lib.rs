//! The Microbial Genomics Data Service API v1 as a local, self-hostable service.
//!
//! [`app`] builds the axum [`Router`] of [`routes`] over an [`AppState`] that [`AppState::open`]
//! makes from a data folder ([`Config`]): a SQLite database (see [`store::db`]) and an object
//! store (see [`store::files`]). The routes hold the HTTP handlers; [`store`] under them holds
//! the records, the upload lifecycle, the job queue and the files. [`serve`] runs the service on
//! an address, over TLS when given a certificate. [`admin`] holds the operator's actions (users,
//! keys, sequencing batches) that have no HTTP route. [`references`] manages the reference data
//! installed in the data folder and the jobs they provide; [`worker`] runs those jobs from the
//! durable queue.

pub mod admin;
pub mod auth;
pub mod engine;
pub mod error;
pub mod janitor;
pub mod listing;
pub mod metrics;
pub mod migrate;
pub mod references;
pub mod routes;
pub mod s3;
pub mod schema;
pub mod shared_references;
pub mod signing;
pub mod store;
pub mod worker;

#[cfg(test)]
mod props;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::store::db::Pool;
use axum::Router;

pub use error::{ApiError, ApiResult};
pub use store::{db, files as storage};

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
    pub runner: worker::RunnerConfig,
    /// How often the janitor's round is due (on whichever host of the install looks first).
    pub janitor_every: Duration,
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
            runner: worker::RunnerConfig::default(),
            janitor_every: janitor::DEFAULT_EVERY,
        }
    }
}

/// Everything a request handler needs; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The database.
    pub db: Pool,
    /// Files.
    pub storage: store::files::Storage,
    /// Signs upload forms and download addresses.
    pub signer: signing::Signer,
    /// Limits repeated authentication failures and e-mail lookups.
    pub limiter: Arc<auth::AuthLimits>,
    /// The base address clients reach the service at, e.g. `http://127.0.0.1:8080`.
    pub public_url: Arc<str>,
    /// Installed reference data and the job workers.
    pub runner: Arc<worker::Runner>,
    /// Counts of requests and analyses, for `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// How often the janitor's round is due.
    pub janitor_every: Duration,
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
        let swept = storage.sweep_staging().map_err(|e| StartError::DataDir(config.data_dir.clone(), e))?;
        if swept > 0 {
            tracing::info!(files = swept, "removed partial uploads left by an interrupted run");
        }
        let secret = store::settings::signing_secret(&db).await.map_err(StartError::Database)?;
        let state = AppState {
            db,
            storage,
            signer: signing::Signer::new(secret),
            limiter: Arc::new(auth::AuthLimits::new(
                config.auth_failure_limit,
                config.auth_failure_window,
                config.trusted_proxies.clone(),
            )),
            public_url: config.public_url.clone().unwrap_or_default().trim_end_matches('/').into(),
            runner: Arc::new(worker::Runner::new(&config.data_dir, config.runner.clone())),
            metrics: Arc::default(),
            janitor_every: config.janitor_every,
        };
        // Work left half-done by an interrupted run (files of deleted records, abandoned
        // uploads), unless another host is at it.
        janitor::round(&state, &format!("start-{}", store::db::new_id()), state.janitor_every).await;
        worker::sweep_work_dir(&config.data_dir);
        state.reload_references(&config.data_dir).await.map_err(StartError::References)?;
        Ok(state)
    }

    /// Reads the installed reference data again and registers its jobs (after an install).
    pub async fn reload_references(&self, data_dir: &Path) -> Result<(), ApiError> {
        let refs = references::References::load(self, data_dir).await?;
        self.runner.set_references(refs);
        Ok(())
    }

    /// The same state answering at another public address.
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.public_url = url.trim_end_matches('/').into();
        self
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

/// The service's routes over `state`.
pub fn app(state: AppState) -> Router {
    routes::router(state)
}

/// TLS material for [`serve`].
#[derive(Debug, Clone)]
pub struct Tls {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

/// A bound, not yet running service: its address is known before it starts answering.
pub struct Bound {
    listener: std::net::TcpListener,
    tls: Option<axum_server::tls_rustls::RustlsConfig>,
    /// The address it listens on.
    pub addr: SocketAddr,
}

impl Bound {
    /// The base address clients use.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }
}

/// Binds `addr`, refusing a non-loopback address without TLS.
pub async fn bind(addr: SocketAddr, tls: Option<&Tls>) -> Result<Bound, StartError> {
    if tls.is_none() && !addr.ip().is_loopback() {
        return Err(StartError::PlainHttpOnNetwork(addr));
    }
    let tls = match tls {
        Some(t) => {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let config = axum_server::tls_rustls::RustlsConfig::from_pem_file(&t.cert, &t.key)
                .await
                .map_err(|e| StartError::Tls(t.cert.clone(), e))?;
            Some(config)
        }
        None => None,
    };
    let listener = std::net::TcpListener::bind(addr).map_err(|e| StartError::Bind(addr, e))?;
    listener.set_nonblocking(true).map_err(|e| StartError::Bind(addr, e))?;
    let addr = listener.local_addr().map_err(|e| StartError::Bind(addr, e))?;
    Ok(Bound { listener, tls, addr })
}

/// Runs the service on a bound address until `shutdown` resolves, then finishes the requests
/// in flight (for up to 10 seconds).
pub async fn serve(
    bound: Bound,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let handle = axum_server::Handle::new();
    let h = handle.clone();
    // Housekeeping runs beside the requests, not in them.
    let housekeeping = tokio::spawn(janitor::run(state.clone(), state.janitor_every));
    let workers = worker::spawn_workers(&state, state.runner.config.workers);
    tokio::spawn(async move {
        shutdown.await;
        h.graceful_shutdown(Some(Duration::from_secs(10)));
    });
    let service = app(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    // Heads a little past the routes' own limits reach them, to be refused in the service's
    // error shape (see `routes::check_size_of_head`).
    let served = match bound.tls {
        Some(tls) => {
            let mut server = axum_server::from_tcp_rustls(bound.listener, tls)?;
            server.http_builder().http1().max_headers(routes::MAX_HEADERS + 300);
            server.handle(handle).serve(service).await
        }
        None => {
            let mut server = axum_server::from_tcp(bound.listener)?;
            server.http_builder().http1().max_headers(routes::MAX_HEADERS + 300);
            server.handle(handle).serve(service).await
        }
    };
    housekeeping.abort();
    // An analysis in progress is given back to the queue, to run again at the next start.
    for w in workers {
        w.abort();
    }
    if let Err(e) = worker::release(&state).await {
        tracing::warn!(error = %e, "could not give back running analyses; they run again once their lease lapses");
    }
    served
}

/// Starts the service in the background on `addr` (port 0 picks a free one) over `data_dir`;
/// returns its base address. For embedding (the desktop app) and tests.
pub async fn spawn(config: Config, addr: SocketAddr) -> Result<(String, AppState), StartError> {
    let bound = bind(addr, None).await?;
    let url = config.public_url.clone().unwrap_or_else(|| bound.url());
    let state = AppState::open(&config).await?.with_public_url(&url);
    let s = state.clone();
    tokio::spawn(async move {
        if let Err(e) = serve(bound, s, std::future::pending()).await {
            tracing::error!(error = %e, "the service stopped");
        }
    });
    Ok((url, state))
}

/// The default data folder: the OS per-user data folder, e.g. `~/.local/share/mgds` on Linux.
pub fn default_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("org", "MGDS", "mgds").map(|d| d.data_dir().to_path_buf())
}

/// Whether a path looks like an MGDS data folder (has a database).
pub fn is_data_dir(path: &Path) -> bool {
    path.join(store::db::DB_FILE).is_file()
}
