//! MGDS in a browser: the UI in `ui/` (the same code as MGDS Desktop's window), built once by
//! Vite into `ui/dist/` and embedded in the binary, served by `mgds serve` at its root (see
//! [`mgds_server::WebUi`]); no web server or Node.js at run time.
//!
//! - `index.html` (and any other path that is not a file of the build, so that an address the
//!   page shows can be reloaded) is never cached, and carries a strict Content Security Policy:
//!   scripts and styles only from the service (no inline script, no `eval`), no frames, no
//!   plugins, requests only to the service. A `<base>` names the service's public path, so the
//!   page works behind a reverse proxy that serves it under one (`--public-url`).
//! - The build's hashed files (`assets/`) are cached as immutable for a year; a name changes
//!   with its content. A missing one is a 404, never the page.
//! - Text files are sent gzip-compressed to a browser that takes it, each compressed once and
//!   kept (the build is a fixed, small set of files).
//! - A binary built before the UI serves one page saying how to build it.
//! - The screens' commands for a browser ([`commands`]) are served under `/api/web/v1/commands/`
//!   to a signed-in browser, and run the application (`mgds-app`) as a client of the service's
//!   own API on loopback with the browser's session. What they keep in memory for browsers (the
//!   comparison's classification results) is one cache with one ceiling for all of them.

pub mod commands;
mod diversity_api;
mod taxon_reads;

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mgds_app::compare::CompareCache;
use mgds_server::AppState;
use mgds_server::auth::Caller;
use mgds_server::routes::{CSRF_HEADER, SignedInSession, cookie_name_and_path, session_cookie};
use rust_embed::RustEmbed;

/// The UI's build, embedded (read from the folder at run time in debug builds).
#[derive(RustEmbed)]
#[folder = "../../ui/dist"]
#[allow_missing = true]
struct Build;

/// The Content Security Policy of the page. Svelte sets `style` attributes, hence inline
/// styles; nothing else is inline.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                       img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; \
                       base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// How long a hashed file of the build may be cached.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The web UI, as the service serves it.
pub struct WebUi {
    /// Gzip-compressed text files, by path: at most the build's files.
    gzipped: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    /// The service's API on loopback, once it listens.
    internal: Mutex<Option<String>>,
    /// Classification results fetched for browsers' comparisons (keyed by user), one ceiling
    /// for all.
    compare: CompareCache,
    /// The page's Content Security Policy: [`CSP`], with the object store's address among those
    /// the page may send to where browsers upload straight to it.
    csp: HeaderValue,
}

impl Default for WebUi {
    fn default() -> Self {
        WebUi {
            gzipped: Mutex::default(),
            internal: Mutex::default(),
            compare: CompareCache::shared(),
            csp: HeaderValue::from_static(CSP),
        }
    }
}

/// The scheme, host and port of `url`, as a Content Security Policy names a source.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    let ok = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    (ok && matches!(scheme, "http" | "https")).then(|| format!("{scheme}://{host}"))
}

impl std::fmt::Debug for WebUi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebUi").field("internal", &self.internal_url()).finish_non_exhaustive()
    }
}

impl WebUi {
    /// The UI, shared by every request.
    pub fn shared() -> Arc<dyn mgds_server::WebUi> {
        Arc::new(WebUi::default())
    }

    /// The UI of the service `state`: where uploads go straight to an object store (one that
    /// gives each upload a bucket of its own), the page may send their parts there.
    pub fn for_service(state: &AppState) -> Arc<dyn mgds_server::WebUi> {
        let mut ui = WebUi::default();
        if let Some((store, _)) = state.storage.upload_buckets()
            && let Some(o) = origin(&store.public_base_url())
            && let Ok(v) = HeaderValue::from_str(&CSP.replace("connect-src 'self'", &format!("connect-src 'self' {o}")))
        {
            ui.csp = v;
        }
        Arc::new(ui)
    }

    /// Whether this binary holds a built UI.
    pub fn is_built() -> bool {
        Build::get("index.html").is_some()
    }

    fn gzipped(&self, path: &str, bytes: &[u8]) -> Arc<Vec<u8>> {
        let mut cache = self.gzipped.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .entry(path.to_string())
            .or_insert_with(|| {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
                // Writing to memory does not fail.
                let _ = gz.write_all(bytes);
                Arc::new(gz.finish().unwrap_or_default())
            })
            .clone()
    }

    /// The page, with its `<base>` and the page's headers.
    fn page(&self, headers: &HeaderMap, prefix: &str) -> Response {
        let Some(index) = Build::get("index.html") else { return not_built() };
        let text = String::from_utf8_lossy(&index.data);
        let base = format!("<head>\n    <base href=\"{}/\" />", escape_attribute(prefix));
        let html = text.replacen("<head>", &base, 1);
        let mut response =
            self.text(headers, &format!("index.html {prefix}"), html.into_bytes(), "text/html; charset=utf-8");
        page_headers(response.headers_mut(), &self.csp);
        response
    }

    /// A text answer, gzip-compressed when the browser takes it.
    fn text(&self, headers: &HeaderMap, key: &str, bytes: Vec<u8>, mime: &str) -> Response {
        let gzip = accepts_gzip(headers);
        let body = if gzip { self.gzipped(key, &bytes).as_ref().clone() } else { bytes };
        let mut response = Response::new(Body::from(body));
        let h = response.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(mime).unwrap_or(HeaderValue::from_static("text/plain")));
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if gzip {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    }
}

impl WebUi {
    fn internal_url(&self) -> Option<String> {
        self.internal.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `GET /api/web/v1/taxon_reads?sample=ID&tax_id=N`: the reads of a taxon in a sample, as
    /// a download (see [`taxon_reads`]). A read, so a link follows it: the service's own API is
    /// asked with the session's token, as the page's commands are.
    async fn taxon_reads(
        &self,
        state: AppState,
        caller: Caller,
        session: Option<Extension<SignedInSession>>,
        headers: HeaderMap,
        query: HashMap<String, String>,
    ) -> Response {
        let refuse = |status: StatusCode, message: &str| {
            (status, axum::Json(serde_json::json!({ "code": "taxon_reads", "message": message }))).into_response()
        };
        let (Some(user), Some(Extension(SignedInSession(signed_in)))) = (caller.0, session) else {
            return refuse(StatusCode::UNAUTHORIZED, "Sign in from the browser first.");
        };
        let (Some(sample), Some(tax_id)) = (query.get("sample"), query.get("tax_id")) else {
            return refuse(StatusCode::BAD_REQUEST, "Name the sample and the taxon (sample=…&tax_id=…).");
        };
        let Some(internal) = self.internal_url() else {
            return refuse(StatusCode::SERVICE_UNAVAILABLE, "The service cannot run this for browsers now.");
        };
        let (cookie_name, _) = cookie_name_and_path(&state.public_url);
        let token = session_cookie(&headers, cookie_name).ok().flatten().unwrap_or_default();
        let agent = headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("a browser");
        let client = match mgds_client::Client::builder(&internal)
            .browser_session(cookie_name, &token, &signed_in.csrf_token)
            .for_browser_at(user.origin.address.clone())
            .user_agent(format!("{agent} (MGDS web)"))
            .build()
        {
            Ok(c) => c,
            Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
        let public = state.public_url.trim_end_matches('/').to_string();
        let local = |url: &str| match url.strip_prefix(&public) {
            Some(rest) if rest.starts_with("/storage/") => format!("{internal}{rest}"),
            _ => url.to_string(),
        };
        taxon_reads::download(&client, local, sample, tax_id).await
    }

    /// `POST /api/web/v1/commands/{name}`: a screen's command for a browser signed in with a
    /// session (see [`commands`]).
    async fn command(
        &self,
        state: AppState,
        name: String,
        caller: Caller,
        session: Option<Extension<SignedInSession>>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let refuse = |status: StatusCode, code: &'static str, message: &str| {
            (status, axum::Json(serde_json::json!({ "code": code, "message": message }))).into_response()
        };
        let (Some(user), Some(Extension(SignedInSession(_)))) = (caller.0, session) else {
            return refuse(StatusCode::UNAUTHORIZED, "sign_in", "Sign in from the browser first.");
        };
        let (cookie_name, _) = cookie_name_and_path(&state.public_url);
        let token = session_cookie(&headers, cookie_name).ok().flatten().unwrap_or_default();
        let csrf = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let Some(internal) = self.internal_url() else {
            let why =
                "The service cannot run the screens for browsers (it could not listen on 127.0.0.1; its log says why).";
            return refuse(StatusCode::SERVICE_UNAVAILABLE, "unavailable", why);
        };
        let agent = headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("a browser");
        let client = match mgds_client::Client::builder(&internal)
            .browser_session(cookie_name, &token, csrf)
            .for_browser_at(user.origin.address.clone())
            .user_agent(format!("{agent} (MGDS web)"))
            .build()
        {
            Ok(c) => c,
            Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, "failed", &e.to_string()),
        };
        let args: serde_json::Map<String, serde_json::Value> = if body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Map::new()
        } else {
            match serde_json::from_slice(&body) {
                Ok(a) => a,
                Err(e) => {
                    let message = format!("The command's arguments must be a JSON object: {e}.");
                    return refuse(StatusCode::BAD_REQUEST, "invalid", &message);
                }
            }
        };
        // Only the connection view names the user's address.
        let email = if name == "connection" {
            mgds_server::store::users::account(&state, &Caller(Some(user.clone()))).await.ok().and_then(|a| a.email)
        } else {
            None
        };
        let store = |bucket: &str| store_addresses(&state, &internal, bucket);
        let cx = commands::Cx {
            client: &client,
            user: &user.id,
            email: email.as_deref(),
            public_url: &state.public_url,
            compare: &self.compare,
            store: &store,
        };
        match commands::run(&name, &args, &cx).await {
            Ok(v) => axum::Json(v).into_response(),
            Err(e) => (commands::status_of(&e), axum::Json(commands::refusal(&e))).into_response(),
        }
    }
}

/// Where the store of an upload into `bucket` is: the service's own S3-compatible endpoint
/// (reached here through the loopback listener, by the browser at the service's address), or
/// the object store that gives each upload a bucket of its own. From the service's settings:
/// a browser's word only picks which of the two.
fn store_addresses(
    state: &AppState,
    internal: &str,
    bucket: &str,
) -> mgds_app::error::CmdResult<mgds_app::browser_uploads::StoreAddresses> {
    use mgds_app::browser_uploads::StoreAddresses;
    if bucket == mgds_server::s3::BUCKET {
        return Ok(StoreAddresses {
            control: internal.to_string(),
            public: mgds_server::s3::endpoint(&state.public_url).to_string(),
            own_endpoint: true,
        });
    }
    let bucket_name =
        bucket.len() <= 63 && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    match state.storage.upload_buckets() {
        Some((store, _)) if bucket.starts_with("mgds-upload-") && bucket_name => {
            let public = store.public_base_url();
            let control = store.endpoint.clone().unwrap_or_else(|| public.clone());
            Ok(StoreAddresses { control, public, own_endpoint: false })
        }
        _ => Err(mgds_app::error::CmdError::new("invalid", "This upload's bucket is not one this service gives.")),
    }
}

impl mgds_server::WebUi for WebUi {
    fn routes(self: Arc<Self>) -> Option<axum::Router<AppState>> {
        let me = self.clone();
        let reads = self.clone();
        Some(axum::Router::new().route(
            "/taxon_reads",
            axum::routing::get(
                move |State(state): State<AppState>,
                      caller: Caller,
                      session: Option<Extension<SignedInSession>>,
                      headers: HeaderMap,
                      axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>| {
                    let reads = reads.clone();
                    async move { reads.taxon_reads(state, caller, session, headers, query).await }
                },
            ),
        ).route(
            "/commands/{name}",
            axum::routing::post(
                move |State(state): State<AppState>,
                      Path(name): Path<String>,
                      caller: Caller,
                      session: Option<Extension<SignedInSession>>,
                      headers: HeaderMap,
                      body: Bytes| {
                    let me = me.clone();
                    async move { me.command(state, name, caller, session, headers, body).await }
                },
            )
            // A command's arguments are small, but for a logo (2 MiB of picture as base64).
            .layer(axum::extract::DefaultBodyLimit::max(3 << 20)),
        ))
    }

    fn api_routes(self: Arc<Self>) -> Option<axum::Router<AppState>> {
        let one = self.clone();
        let file = self;
        type Query = axum::extract::Query<HashMap<String, String>>;
        Some(
            axum::Router::new()
                .route(
                    "/diversity",
                    axum::routing::post(
                        move |State(state): State<AppState>, caller: Caller, headers: HeaderMap, body: Bytes| {
                            let me = one.clone();
                            async move { me.diversity(state, caller, headers, None, HashMap::new(), body).await }
                        },
                    ),
                )
                .route(
                    "/diversity/files/{file}",
                    axum::routing::post(
                        move |State(state): State<AppState>,
                              Path(name): Path<String>,
                              caller: Caller,
                              headers: HeaderMap,
                              axum::extract::Query(query): Query,
                              body: Bytes| {
                            let me = file.clone();
                            async move { me.diversity(state, caller, headers, Some(name), query, body).await }
                        },
                    ),
                ),
        )
    }

    fn internal_api(&self, url: &str) {
        *self.internal.lock().unwrap_or_else(|p| p.into_inner()) = Some(url.to_string());
    }

    fn answer(&self, path: &str, headers: &HeaderMap, prefix: &str) -> Response {
        let file = path.trim_start_matches('/');
        // Paths are the build's own names; anything that could climb out of it is none of them.
        let odd = file.split('/').any(|s| s == ".." || s == ".") || file.contains('\\');
        let found = if odd || file.is_empty() { None } else { Build::get(file) };
        match found {
            Some(_) if file == "index.html" => self.page(headers, prefix),
            Some(f) => {
                let mime = f.metadata.mimetype().to_string();
                let compressible = mime.starts_with("text/")
                    || mime.contains("javascript")
                    || mime.contains("json")
                    || mime.contains("svg");
                let mut response = if compressible {
                    self.text(headers, file, f.data.into_owned(), &mime)
                } else {
                    let mut r = Response::new(Body::from(f.data.into_owned()));
                    if let Ok(v) = HeaderValue::from_str(&mime) {
                        r.headers_mut().insert(header::CONTENT_TYPE, v);
                    }
                    r
                };
                let h = response.headers_mut();
                let cache = if file.starts_with("assets/") { IMMUTABLE } else { "no-cache" };
                h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
                h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
                response
            }
            // A file of the build that is not there (an old page asking for a replaced chunk).
            None if file.starts_with("assets/") || odd => {
                (StatusCode::NOT_FOUND, "not found: this file is not part of the web UI\n").into_response()
            }
            // Any other address is the page's (it shows the screen the address names).
            None => self.page(headers, prefix),
        }
    }
}

/// The headers of the page: never cached, the policy, no framing, no referrer elsewhere.
fn page_headers(h: &mut HeaderMap, csp: &HeaderValue) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, csp.clone());
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
}

/// The page of a binary built without its UI.
fn not_built() -> Response {
    let html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>MGDS</title></head>\n\
                <body><h1>MGDS</h1>\n<p>This copy of <code>mgds</code> was built without its web UI. The service \
                and its API work as usual; to open MGDS in a browser, build the UI and then <code>mgds</code>:</p>\n\
                <pre>cd ui &amp;&amp; npm ci &amp;&amp; npm run build &amp;&amp; cd ..\n\
                cargo build --release --locked -p mgds-cli</pre>\n\
                <p>(The README's commands do both.)</p></body></html>\n";
    let mut response = (StatusCode::OK, html).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    page_headers(h, &HeaderValue::from_static(CSP));
    response
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|e| {
            let mut parts = e.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()).is_some_and(|q| q <= 0.0)
            });
            name.eq_ignore_ascii_case("gzip") && !refused
        })
    })
}

/// `s` safe inside a double-quoted HTML attribute.
fn escape_attribute(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stores_origin_joins_the_policy_only_as_an_origin() {
        assert_eq!(origin("https://s3.lab.example.org:3900/x?y").as_deref(), Some("https://s3.lab.example.org:3900"));
        assert_eq!(origin("http://[::1]:3900").as_deref(), Some("http://[::1]:3900"));
        for bad in ["https://a b/", "https://x;script-src *", "ftp://x", "https://"] {
            assert_eq!(origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn gzip_is_taken_unless_refused() {
        let mut h = HeaderMap::new();
        assert!(!accepts_gzip(&h));
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("br, gzip;q=0.8, deflate"));
        assert!(accepts_gzip(&h));
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip;q=0, br"));
        assert!(!accepts_gzip(&h));
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip; q=0.000"));
        assert!(!accepts_gzip(&h));
    }

    #[test]
    fn a_prefix_cannot_break_out_of_its_attribute() {
        assert_eq!(escape_attribute("/lab\"><script>"), "/lab&quot;&gt;&lt;script&gt;");
    }
}
