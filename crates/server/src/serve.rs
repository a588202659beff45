//! Running the service: its routes over an [`AppState`] on an address, over TLS when given a
//! certificate, with the janitor and the job workers beside the requests.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::Router;

use crate::state::{AppState, Config, StartError};
use crate::{janitor, routes, worker};

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
    // The web UI's routes call the API as the browser's user through a listener of its own on
    // loopback (plain HTTP, this machine only), whatever the public one is (TLS, all addresses).
    // Bound first, so that nothing else has started when it cannot be.
    let internal = match &state.web {
        Some(web) => match tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await {
            Ok(listener) => {
                web.internal_api(&format!("http://{}", listener.local_addr()?));
                let service = app(state.clone())
                    .layer(axum::Extension(crate::routes::InternalHop))
                    .into_make_service_with_connect_info::<SocketAddr>();
                Some(tokio::spawn(async move { axum::serve(listener, service).await }))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen on 127.0.0.1 for the web UI's commands; browsers get only signing in and the account");
                None
            }
        },
        None => None,
    };
    let handle = axum_server::Handle::new();
    let h = handle.clone();
    // Housekeeping runs beside the requests, not in them.
    let housekeeping = tokio::spawn(janitor::run(state.store.clone(), state.janitor_every));
    let chainer = tokio::spawn(crate::store::audit::run_chainer(state.db.clone(), crate::store::audit::CHAIN_EVERY));
    let deliverer = tokio::spawn(crate::webhooks::run(state.store.clone()));
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
    chainer.abort();
    deliverer.abort();
    if let Some(internal) = internal {
        internal.abort();
    }
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
