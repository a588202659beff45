//! A typed async client for any Microbial Genomics Data Service API v1 service: our own
//! (`mgds-server`) or a compatible remote one.
//!
//! [`Client`] holds the base address, the API key and the HTTP client; it hands out one handle per
//! resource ([`Client::samples`], [`Client::jobs`], ...) whose methods return typed results from
//! `mgds-api`. Lists are built with [`ListRequest`] (typed [`Filter`] and [`Sort`], explicit
//! `page`/`per_page`) and answer a [`Page`] read from the `Link` and `X-Total-Count` headers, which
//! can become a stream of every item. Uploads ([`SampleUpload`], [`DocumentUpload`]) stream from
//! disk with progress, retries and cancellation; downloads land in a temporary file that is
//! renamed into place only when whole, at a [`Destination`]: a path the user chose, or a name a
//! service sent made safe by [`safe_file_name`], which never replaces a file unless asked to.
//! Every failure is one [`Error`], typed by meaning.
//!
//! Requests are retried only where that is safe (see [`RetryPolicy`]).

mod analyses;
mod documents;
mod error;
mod jobs;
mod list;
mod misc;
mod organization;
mod projects;
mod retry;
mod s3;
mod samples;
mod save;
mod transfer;

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

pub use analyses::{Alignments, Analyses, Classifications, FunctionalProfiles, Panels};
pub use documents::{DocumentUpload, Documents};
pub use error::{Error, Result};
pub use jobs::{JobRun, Jobs, WaitForAnalysis};
pub use list::{Filter, Links, ListRequest, Page, Sort, parse_link_header};
pub use misc::{Batches, MetadataRecords, MetadataUpdate, Tags, Users};
pub use organization::Organization;
pub use projects::{ProjectCreateRequest, ProjectUpdateRequest, Projects};
pub use retry::RetryPolicy;
pub use s3::{S3Writer, SignedParts};
pub use samples::{Preupload, SampleUpdateRequest, SampleUpload, Samples};
pub use save::{Destination, MAX_FILE_NAME_BYTES, is_safe_file_name, safe_file_name};
pub use transfer::{Bandwidth, Progress};

/// Re-exported so callers need not depend on `tokio-util` to cancel an upload.
pub use tokio_util::sync::CancellationToken;

use retry::Idempotency;

/// How the API key is presented to the service (the spec allows both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthStyle {
    /// HTTP Basic with the key as the username and an empty password (the default).
    #[default]
    Basic,
    /// An `X-API-Key` header.
    Header,
}

/// Anything that names a resource: an id (`"0123456789abcdef"`), a [`Ref`](mgds_api::Ref), or a
/// resource as fetched (a [`Sample`](mgds_api::Sample), a [`Project`](mgds_api::Project), ...).
pub trait ResourceId {
    /// The 16-hex-character identifier.
    fn resource_id(&self) -> &str;
}

fn last_segment(uri: &str) -> &str {
    uri.trim_end_matches('/').rsplit('/').next().unwrap_or_default()
}

impl ResourceId for str {
    fn resource_id(&self) -> &str {
        last_segment(self)
    }
}

impl ResourceId for String {
    fn resource_id(&self) -> &str {
        last_segment(self)
    }
}

impl ResourceId for mgds_api::Ref {
    fn resource_id(&self) -> &str {
        self.id()
    }
}

impl ResourceId for mgds_api::RefOrId {
    fn resource_id(&self) -> &str {
        self.id()
    }
}

macro_rules! resource_id_by_uri {
    ($($t:ty),*) => {$(
        impl ResourceId for $t {
            fn resource_id(&self) -> &str {
                last_segment(&self.uri)
            }
        }
    )*};
}
resource_id_by_uri!(
    mgds_api::Sample,
    mgds_api::Metadata,
    mgds_api::Analysis,
    mgds_api::Job,
    mgds_api::Document,
    mgds_api::Project,
    mgds_api::Tag,
    mgds_api::SequencingBatch,
    mgds_api::User,
    mgds_api::Member,
    mgds_api::Webhook,
    mgds_api::Event
);

impl<T: ResourceId + ?Sized> ResourceId for &T {
    fn resource_id(&self) -> &str {
        (**self).resource_id()
    }
}

/// A reference to `id` in `collection`, as request bodies carry it.
pub(crate) fn reference(collection: &str, id: &(impl ResourceId + ?Sized)) -> mgds_api::RefOrId {
    mgds_api::RefOrId::Ref(mgds_api::Ref::new(collection, id.resource_id()))
}

/// The API key, kept out of `Debug` output.
#[derive(Clone)]
struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// A signed-in browser's session, for the service's own web endpoints that act for a browser:
/// the session cookie and its CSRF token, kept out of `Debug` output.
#[derive(Clone)]
struct BrowserSession {
    cookie: String,
    csrf: String,
    /// The browser's own address, for the service's records (see [`ClientBuilder::for_browser_at`]).
    address: Option<String>,
}

impl fmt::Debug for BrowserSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BrowserSession(<redacted>)")
    }
}

/// An access token that changes while a client holds it (a single sign-on provider's, renewed
/// before it expires): every request sends the token it holds then, as `Bearer`. Cheap to
/// clone; clones share the token. Kept out of `Debug` output.
#[derive(Clone, Default)]
pub struct AccessToken(Arc<std::sync::RwLock<String>>);

impl AccessToken {
    /// A holder of `token`.
    pub fn new(token: impl Into<String>) -> AccessToken {
        AccessToken(Arc::new(std::sync::RwLock::new(token.into())))
    }

    /// Replaces the token (requests sent after this carry the new one).
    pub fn set(&self, token: impl Into<String>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = token.into();
    }

    /// The token now.
    pub fn get(&self) -> String {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether a client still holds this token (a renewer stops when none does).
    pub fn is_held(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken(<redacted>)")
    }
}

#[derive(Debug)]
struct Settings {
    access_token: Option<AccessToken>,
    api_key: Option<ApiKey>,
    session: Option<BrowserSession>,
    auth_style: AuthStyle,
    retry: RetryPolicy,
    timeout: Duration,
    stall_timeout: Duration,
}

/// A client of one API v1 service, as one user (or anonymous). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: Url,
    settings: Arc<Settings>,
}

/// Sets up a [`Client`]: key, TLS trust, proxy, retries and timeouts.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    base_url: String,
    access_token: Option<AccessToken>,
    api_key: Option<ApiKey>,
    session: Option<BrowserSession>,
    auth_style: AuthStyle,
    ca_files: Vec<PathBuf>,
    proxy: Option<String>,
    retry: RetryPolicy,
    timeout: Duration,
    connect_timeout: Duration,
    stall_timeout: Duration,
    user_agent: String,
}

impl ClientBuilder {
    /// The API key (sent as HTTP Basic by default). Without one, only public records are seen.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey(key.into()));
        self
    }

    /// Signs in with a single sign-on provider's access token instead of a key, sent as
    /// `Bearer` (the holder may renew it while the client is in use).
    pub fn access_token(mut self, token: AccessToken) -> Self {
        self.access_token = Some(token);
        self
    }

    /// Signs in with a browser's session instead of a key: the cookie `cookie_name=token` and
    /// the session's CSRF token on every request, as the browser's page sends them (the service
    /// acting for a signed-in browser calls its own API this way).
    pub fn browser_session(mut self, cookie_name: &str, token: &str, csrf: &str) -> Self {
        self.session =
            Some(BrowserSession { cookie: format!("{cookie_name}={token}"), csrf: csrf.to_string(), address: None });
        self
    }

    /// With [`ClientBuilder::browser_session`], on the service's own loopback listener for its
    /// web UI: the browser's address, sent in `X-MGDS-Browser-Address` so that the service's
    /// audit trail names the browser rather than loopback (the service reads it only on that
    /// listener).
    pub fn for_browser_at(mut self, address: Option<String>) -> Self {
        if let Some(s) = self.session.as_mut() {
            s.address = address;
        }
        self
    }

    /// How the key is sent.
    pub fn auth_style(mut self, style: AuthStyle) -> Self {
        self.auth_style = style;
        self
    }

    /// Trusts the CA certificates in this PEM file as well as the system's (for TLS-inspecting
    /// proxies and services with a private CA).
    pub fn extra_ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_files.push(path.into());
        self
    }

    /// Sends every request through this proxy (e.g. `http://proxy.lab:3128`). Without it the
    /// system's proxy settings (`HTTPS_PROXY`, `NO_PROXY`, and the OS settings on macOS and
    /// Windows) apply, except to a service on this machine.
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(url.into());
        self
    }

    /// When and how patiently requests are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Longest time one API call (not a file transfer) may take; default 60 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Longest time to establish a connection; default 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Longest time a file transfer may make no progress before it is abandoned (and retried);
    /// default 120 s.
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// The `User-Agent` sent; default `mgds-client/<version>`.
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = agent.into();
        self
    }

    /// Checks the address and builds the client (TLS through rustls with the `ring` provider).
    pub fn build(self) -> Result<Client> {
        let base_url = normalize_base_url(&self.base_url)?;
        // Installing twice is harmless; the first provider installed wins.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let style = self.auth_style;
        let origin = base_url.origin();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("too many redirects");
            }
            if check_secure(attempt.url()).is_err() {
                return attempt.error("refusing a redirect to plain http:// on another machine");
            }
            // reqwest drops `Authorization` on a redirect to another host, but not `X-API-Key`.
            if style == AuthStyle::Header && attempt.url().origin() != origin {
                return attempt.stop();
            }
            attempt.follow()
        });
        let mut http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent)
            .redirect(policy);
        for path in &self.ca_files {
            let pem =
                std::fs::read(path).map_err(|e| Error::CaCertificate { path: path.clone(), reason: e.to_string() })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| Error::CaCertificate { path: path.clone(), reason: e.to_string() })?;
            if certs.is_empty() {
                return Err(Error::CaCertificate { path: path.clone(), reason: "no certificate found".into() });
            }
            http = http.tls_certs_merge(certs);
        }
        if let Some(p) = &self.proxy {
            let proxy = reqwest::Proxy::all(p).map_err(Error::Setup)?;
            http = http.proxy(proxy);
        } else if is_loopback(&base_url) {
            // The local service is never behind the lab's proxy, whatever NO_PROXY says.
            http = http.no_proxy();
        }
        let http = http.build().map_err(Error::Setup)?;
        Ok(Client {
            http,
            base_url,
            settings: Arc::new(Settings {
                access_token: self.access_token,
                api_key: self.api_key,
                session: self.session,
                auth_style: self.auth_style,
                retry: self.retry,
                timeout: self.timeout,
                stall_timeout: self.stall_timeout,
            }),
        })
    }
}

/// Parses and checks a service address: `https://`, or `http://` to this machine only. A
/// trailing `/` or `/api/v1` is dropped.
fn normalize_base_url(s: &str) -> Result<Url> {
    let invalid = |reason: &str| Error::InvalidUrl { url: s.to_string(), reason: reason.to_string() };
    let mut url = Url::parse(s.trim()).map_err(|e| invalid(&e.to_string()))?;
    if url.host().is_none() {
        return Err(invalid("it has no host"));
    }
    check_secure(&url)?;
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/');
    let path = path.strip_suffix(mgds_api::API_PREFIX).unwrap_or(path).trim_end_matches('/').to_string();
    url.set_path(&path);
    Ok(url)
}

/// Whether the address is this machine.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// `https://` anywhere, `http://` only to this machine.
pub(crate) fn check_secure(url: &Url) -> Result<()> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(Error::InsecureUrl { url: url.to_string() }),
        other => Err(Error::InvalidUrl { url: url.to_string(), reason: format!("the scheme {other}: is not http(s)") }),
    }
}

/// What an API call sends.
pub(crate) struct Call {
    method: Method,
    url: Url,
    body: Option<Bytes>,
    idempotency: Idempotency,
    /// A DELETE: a 404 on a retry means an earlier attempt did it.
    gone_is_done: bool,
}

/// What an API call answered (a 2xx).
pub(crate) struct Answer {
    headers: HeaderMap,
    body: Bytes,
}

impl Client {
    /// A client of the service at `base_url` (e.g. `https://mgds.example.org`) with an API key.
    pub fn new(base_url: &str, api_key: impl Into<String>) -> Result<Client> {
        Client::builder(base_url).api_key(api_key).build()
    }

    /// Starts setting up a client of the service at `base_url`.
    pub fn builder(base_url: &str) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.to_string(),
            access_token: None,
            api_key: None,
            session: None,
            auth_style: AuthStyle::Basic,
            ca_files: Vec::new(),
            proxy: None,
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(120),
            user_agent: format!("mgds-client/{}", env!("CARGO_PKG_VERSION")),
        }
    }

    /// A client over an HTTP client set up by the caller (who then owns TLS and proxy settings).
    /// The address is checked the same way.
    pub fn with_http_client(http: reqwest::Client, base_url: &str, api_key: Option<String>) -> Result<Client> {
        Ok(Client {
            http,
            base_url: normalize_base_url(base_url)?,
            settings: Arc::new(Settings {
                access_token: None,
                api_key: api_key.map(ApiKey),
                session: None,
                auth_style: AuthStyle::Basic,
                retry: RetryPolicy::default(),
                timeout: Duration::from_secs(60),
                stall_timeout: Duration::from_secs(120),
            }),
        })
    }

    /// The service's base address (without `/api/v1`).
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// The underlying HTTP client.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Samples: list, get, upload, pre-upload, update, delete, download.
    pub fn samples(&self) -> Samples {
        Samples::new(self.clone())
    }

    /// Metadata records of samples: list, get, update.
    pub fn metadata(&self) -> MetadataRecords {
        MetadataRecords::new(self.clone())
    }

    /// Analyses of every kind: list, get, results.
    pub fn analyses(&self) -> Analyses {
        Analyses::new(self.clone())
    }

    /// Classifications: list, get, result table, read-level results.
    pub fn classifications(&self) -> Classifications {
        Classifications::new(self.clone())
    }

    /// Panels: list, get, panel results.
    pub fn panels(&self) -> Panels {
        Panels::new(self.clone())
    }

    /// Alignments: list, get.
    pub fn alignments(&self) -> Alignments {
        Alignments::new(self.clone())
    }

    /// Functional profiles: list, get, results.
    pub fn functional_profiles(&self) -> FunctionalProfiles {
        FunctionalProfiles::new(self.clone())
    }

    /// Jobs: list, get (with `job_args_schema`), run, and waiting for the analysis.
    pub fn jobs(&self) -> Jobs {
        Jobs::new(self.clone())
    }

    /// Documents: upload, list, get, update, share, download, delete.
    pub fn documents(&self) -> Documents {
        Documents::new(self.clone())
    }

    /// Projects: create, list, get, update, members, sharing, delete.
    pub fn projects(&self) -> Projects {
        Projects::new(self.clone())
    }

    /// Tags: create-and-attach, list, get.
    pub fn tags(&self) -> Tags {
        Tags::new(self.clone())
    }

    /// Users the caller can see: list, get.
    pub fn users(&self) -> Users {
        Users::new(self.clone())
    }

    /// Sequencing batches: list, get.
    pub fn batches(&self) -> Batches {
        Batches::new(self.clone())
    }

    /// The caller's organisation and, for its admins, its users: roles, invitations, disabling,
    /// password links, revoking keys.
    pub fn organization(&self) -> Organization {
        Organization::new(self.clone())
    }

    /// The signed-in user's account (`GET /account`).
    pub async fn account(&self) -> Result<mgds_api::Account> {
        self.get_json(self.api_url(&["account"])).await
    }

    /// The service's root JSON hyper-schema (`GET /schema`).
    pub async fn schema(&self) -> Result<serde_json::Value> {
        self.get_json(self.api_url(&["schema"])).await
    }

    /// The schema of one collection (`GET /<collection>/schema`, e.g. `samples` or
    /// `sequencing/batches`).
    pub async fn resource_schema(&self, collection: &str) -> Result<serde_json::Value> {
        let mut segments: Vec<&str> = collection.split('/').filter(|s| !s.is_empty()).collect();
        segments.push("schema");
        self.get_json(self.api_url(&segments)).await
    }

    // -----------------------------------------------------------------------------------------
    // Plumbing shared by the handles

    /// `<base>/api/v1/<segments...>`, each segment percent-encoded.
    pub(crate) fn api_url(&self, segments: &[&str]) -> Url {
        let mut url = self.base_url.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["api", "v1"]).extend(segments);
        }
        url
    }

    /// A path the service handed out to be appended to its base address (an upload's
    /// `callback_url`), as the real service's clients do, so that a base address with a path
    /// prefix (behind a reverse proxy) keeps it; an absolute address is taken as it is.
    pub(crate) fn base_relative(&self, path: &str) -> Result<Url> {
        if !path.starts_with('/') {
            return self.service_url(path);
        }
        let joined = format!("{}{path}", self.base_url.as_str().trim_end_matches('/'));
        let url = Url::parse(&joined).map_err(|e| Error::InvalidUrl { url: joined.clone(), reason: e.to_string() })?;
        check_secure(&url)?;
        Ok(url)
    }

    /// An address the service handed out (upload form, download), resolved against the base
    /// address and checked like it.
    pub(crate) fn service_url(&self, s: &str) -> Result<Url> {
        let url = self.base_url.join(s).map_err(|e| Error::InvalidUrl { url: s.to_string(), reason: e.to_string() })?;
        check_secure(&url)?;
        Ok(url)
    }

    pub(crate) fn settings_retry(&self) -> RetryPolicy {
        self.settings.retry
    }

    pub(crate) fn stall_timeout(&self) -> Duration {
        self.settings.stall_timeout
    }

    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(s) = &self.settings.session {
            let sensitive = |v: &str| {
                HeaderValue::from_str(v).map(|mut h| {
                    h.set_sensitive(true);
                    h
                })
            };
            let req = match s.address.as_deref().map(HeaderValue::from_str) {
                Some(Ok(a)) => req.header("x-mgds-browser-address", a),
                _ => req,
            };
            return match (sensitive(&s.cookie), sensitive(&s.csrf)) {
                (Ok(cookie), Ok(csrf)) => req
                    .header(reqwest::header::COOKIE, cookie)
                    .header("x-csrf-token", csrf)
                    .header("x-requested-with", "mgds"),
                // A session that cannot be a header cannot be valid either; the service says so.
                _ => req,
            };
        }
        if let Some(t) = &self.settings.access_token {
            return match HeaderValue::from_str(&format!("Bearer {}", t.get())) {
                Ok(mut v) => {
                    v.set_sensitive(true);
                    req.header(reqwest::header::AUTHORIZATION, v)
                }
                Err(_) => req,
            };
        }
        match (&self.settings.api_key, self.settings.auth_style) {
            (None, _) => req,
            (Some(k), AuthStyle::Basic) => req.basic_auth(&k.0, Some("")),
            (Some(k), AuthStyle::Header) => match HeaderValue::from_str(&k.0) {
                Ok(mut v) => {
                    v.set_sensitive(true);
                    req.header("x-api-key", v)
                }
                // A key that cannot be a header value cannot be valid either; let the service say so.
                Err(_) => req,
            },
        }
    }

    /// Sends an API call with the retries its idempotency allows; answers the 2xx or the error.
    pub(crate) async fn execute(&self, call: Call) -> Result<Answer> {
        let policy = self.settings.retry;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut req = self.authorize(self.http.request(call.method.clone(), call.url.clone()));
            req = req.timeout(self.settings.timeout).header("accept", "application/json");
            if let Some(body) = &call.body {
                req = req.header("content-type", "application/json").body(body.clone());
            }
            let outcome = match req.send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let headers = resp.headers().clone();
                    match resp.bytes().await {
                        Ok(body) => Ok((status, headers, body)),
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e),
            };
            let can_retry = attempt < policy.max_attempts.max(1);
            match outcome {
                Ok((status, headers, body)) if (200..300).contains(&status) => return Ok(Answer { headers, body }),
                Ok((404, headers, body)) if call.gone_is_done && attempt > 1 => return Ok(Answer { headers, body }),
                Ok((status, headers, body)) => {
                    let retry_after = headers
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| retry::parse_retry_after(v, SystemTime::now()));
                    let err = Error::from_answer(status, retry_after, &body);
                    let retryable = call.idempotency == Idempotency::Safe && (status == 429 || status >= 500);
                    if !retryable || !can_retry {
                        return Err(err);
                    }
                    let wait = match retry_after {
                        Some(w) if w > policy.max_retry_after => return Err(err),
                        Some(w) => w,
                        None => policy.backoff(attempt),
                    };
                    tokio::time::sleep(wait).await;
                }
                Err(e) => {
                    let retryable = match call.idempotency {
                        Idempotency::Safe => !e.is_builder() && !e.is_redirect(),
                        Idempotency::ConnectOnly => e.is_connect(),
                    };
                    if !retryable || !can_retry {
                        return Err(transport(&call.url, attempt, e));
                    }
                    tokio::time::sleep(policy.backoff(attempt)).await;
                }
            }
        }
    }

    /// GET a JSON resource.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: Url) -> Result<T> {
        let what = describe(&Method::GET, &url);
        let answer = self
            .execute(Call { method: Method::GET, url, body: None, idempotency: Idempotency::Safe, gone_is_done: false })
            .await?;
        decode(&what, &answer.body)
    }

    /// GET a text resource (UTF-8).
    pub(crate) async fn get_text(&self, url: Url) -> Result<String> {
        let what = describe(&Method::GET, &url);
        let answer = self
            .execute(Call { method: Method::GET, url, body: None, idempotency: Idempotency::Safe, gone_is_done: false })
            .await?;
        String::from_utf8(answer.body.to_vec())
            .map_err(|_| Error::InvalidInput(format!("the answer to {what} is not UTF-8 text")))
    }

    /// Sends a JSON body and reads a JSON answer.
    pub(crate) async fn send_json<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        url: Url,
        body: &B,
        idempotency: Idempotency,
    ) -> Result<T> {
        let what = describe(&method, &url);
        let body =
            serde_json::to_vec(body).map_err(|e| Error::InvalidInput(format!("cannot encode the request: {e}")))?;
        let answer =
            self.execute(Call { method, url, body: Some(Bytes::from(body)), idempotency, gone_is_done: false }).await?;
        decode(&what, &answer.body)
    }

    /// Sends `body` as it is, of `content_type`, once (a transport error is not retried), and
    /// answers the 2xx's body or the error.
    pub(crate) async fn send_bytes(&self, method: Method, url: Url, body: Bytes, content_type: &str) -> Result<Bytes> {
        let req = self
            .authorize(self.http.request(method, url.clone()))
            .timeout(self.settings.timeout)
            .header("accept", "application/json")
            .header("content-type", content_type)
            .body(body);
        let resp = req.send().await.map_err(|e| transport(&url, 1, e))?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await.map_err(|e| transport(&url, 1, e))?;
        if (200..300).contains(&status) { Ok(body) } else { Err(Error::from_answer(status, None, &body)) }
    }

    /// DELETE a resource; 204 (or a 404 after a retried attempt) is success.
    pub(crate) async fn delete(&self, url: Url) -> Result<()> {
        self.execute(Call {
            method: Method::DELETE,
            url,
            body: None,
            idempotency: Idempotency::Safe,
            gone_is_done: true,
        })
        .await?;
        Ok(())
    }

    /// GET a list page: the answer with its headers.
    pub(crate) async fn get_list(&self, url: Url) -> Result<Answer> {
        self.execute(Call { method: Method::GET, url, body: None, idempotency: Idempotency::Safe, gone_is_done: false })
            .await
    }
}

/// `GET /api/v1/samples`: method and path, for messages (never the query, which may be long).
fn describe(method: &Method, url: &Url) -> String {
    format!("{method} {}", url.path())
}

fn decode<T: DeserializeOwned>(what: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|source| Error::Decode { what: what.to_string(), source })
}

/// A transport error, naming the address without its query (pre-signed addresses carry
/// signatures there).
pub(crate) fn transport(url: &Url, attempts: u32, source: reqwest::Error) -> Error {
    let mut shown = url.clone();
    shown.set_query(None);
    Error::Transport { url: shown.to_string(), attempts, source: source.without_url() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let ok = |s: &str| normalize_base_url(s).unwrap().to_string();
        assert_eq!(ok("https://mgds.example.org"), "https://mgds.example.org/");
        assert_eq!(ok("https://mgds.example.org/api/v1/"), "https://mgds.example.org/");
        assert_eq!(ok("https://lab.example.org/mgds/"), "https://lab.example.org/mgds");
        assert_eq!(ok("http://127.0.0.1:8080"), "http://127.0.0.1:8080/");
        assert_eq!(ok("http://localhost:8080/api/v1"), "http://localhost:8080/");
        assert_eq!(ok("http://[::1]:8080"), "http://[::1]:8080/");
        assert!(matches!(normalize_base_url("http://example.org"), Err(Error::InsecureUrl { .. })));
        assert!(matches!(normalize_base_url("http://10.0.0.5:8080"), Err(Error::InsecureUrl { .. })));
        assert!(matches!(normalize_base_url("ftp://example.org"), Err(Error::InvalidUrl { .. })));
        assert!(matches!(normalize_base_url("example.org"), Err(Error::InvalidUrl { .. })));
    }

    #[test]
    fn api_urls_encode_segments() {
        let c = Client::builder("https://lab.example.org/mgds").build().unwrap();
        assert_eq!(c.api_url(&["samples", "abc"]).as_str(), "https://lab.example.org/mgds/api/v1/samples/abc");
        assert_eq!(c.api_url(&["samples", "a/b?c"]).as_str(), "https://lab.example.org/mgds/api/v1/samples/a%2Fb%3Fc");
        let root = Client::builder("https://x.example.org/").build().unwrap();
        assert_eq!(
            root.api_url(&["sequencing", "batches"]).as_str(),
            "https://x.example.org/api/v1/sequencing/batches"
        );
    }

    #[test]
    fn ids_from_anything() {
        let r = mgds_api::Ref::new("samples", "0123456789abcdef");
        assert_eq!(r.resource_id(), "0123456789abcdef");
        assert_eq!("0123456789abcdef".resource_id(), "0123456789abcdef");
        assert_eq!("/api/v1/samples/0123456789abcdef".resource_id(), "0123456789abcdef");
    }

    #[test]
    fn debug_hides_the_key() {
        let c = Client::new("https://x.example.org", "secret-key-123").unwrap();
        assert!(!format!("{c:?}").contains("secret-key-123"));
    }
}
