//! The HTTP routes: one module per resource, each with its own `router()` of handlers over the
//! [`store`](crate::store), and the pieces they share (body and query extractors that answer in
//! the service's error shape, list answers with `X-Total-Count` and `Link`).

mod analyses;
mod documents;
mod extract;
mod jobs;
mod misc;
pub mod operations;
mod organization;
mod projects;
mod samples;
mod session;
mod signed_in;
mod sso;
mod webhooks;

pub use signed_in::{CSRF_HEADER, InternalHop, SignedInSession, cookie_name_and_path, session_cookie};
mod storage_endpoint;
mod tags;
mod transfers;

use axum::Router;
use axum::extract::{FromRequestParts, OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

pub use crate::store::analyses::{AnalysisKind, Artifact, store_outcome, store_results};
pub use crate::store::jobs::{JobSpec, register_job};
pub use extract::{JSON_BODY_LIMIT, Json, ListParams, Listed};

/// All routes of the service over `state`.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .merge(samples::router())
        .merge(analyses::router())
        .merge(jobs::router())
        .merge(documents::router())
        .merge(projects::router())
        .merge(tags::router())
        .merge(session::router())
        .merge(organization::router())
        .merge(webhooks::router())
        .merge(misc::router());
    let api = match state.web.clone().and_then(|w| w.api_routes()) {
        Some(extra) => api.merge(extra),
        None => api,
    };
    let api = api
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), authenticate))
        .route("/health", axum::routing::get(operations::health))
        .merge(session::open_router())
        .merge(organization::open_router())
        .merge(sso::router());
    // The S3-compatible upload endpoint sees the request as the client signed it: path-style, at
    // the root (see `crate::s3`), with each body capped.
    let s3 = Router::new()
        .route_service(&format!("/{}/{{*key}}", crate::s3::BUCKET), crate::s3::service(&state))
        .layer(axum::middleware::map_request(cap_body))
        .layer(axum::middleware::from_fn(check_amz_date));
    let mut routes = Router::new();
    if let Some(web) = state.web.clone().and_then(|w| w.routes()) {
        let web = web
            .route_layer(axum::middleware::from_fn_with_state(state.clone(), authenticate))
            .layer(axum::middleware::from_fn(no_challenge_for_pages));
        routes = routes.nest("/api/web/v1", web);
    }
    let routes = routes
        .nest("/api/v1", api.layer(axum::middleware::from_fn(no_challenge_for_pages)))
        .merge(storage_endpoint::router())
        .merge(s3)
        .route("/metrics", axum::routing::get(operations::metrics))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), operations::record))
        .layer(axum::middleware::from_fn_with_state(state.clone(), prefix_links))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed);
    guarded(routes).with_state(state)
}

/// A browser answers a 401 that carries `WWW-Authenticate: Basic` with its own sign-in dialog,
/// and would then send whatever was typed there to the service with requests from any site.
/// Requests of a browser (a session cookie, `X-Requested-With`, which the web UI sends, or the
/// `Sec-Fetch-Mode` every current browser sends) and of the sign-in routes get their 401 without
/// the challenge; scripts and the `onecodex` client still get it.
async fn no_challenge_for_pages(req: Request, next: axum::middleware::Next) -> Response {
    let path = req.uri().path();
    // Every request of a browser says how it was made (`Sec-Fetch-Mode`); scripts do not.
    let page = req.headers().contains_key("x-requested-with")
        || req.headers().contains_key("sec-fetch-mode")
        || path.ends_with("/sign_in")
        || path.contains("/session")
        || req
            .headers()
            .get_all(axum::http::header::COOKIE)
            .iter()
            .any(|v| v.to_str().is_ok_and(|c| c.contains(crate::store::sessions::SESSION_COOKIE)));
    let mut response = next.run(req).await;
    if page {
        response.headers_mut().remove(axum::http::header::WWW_AUTHENTICATE);
    }
    response
}

/// The layers around every route: heads past the limits refused, a panic in a handler answered
/// as 500 in the service's error shape (its cause logged) instead of a dropped connection, and
/// each request traced.
fn guarded<S: Clone + Send + Sync + 'static>(routes: Router<S>) -> Router<S> {
    routes
        .layer(axum::middleware::from_fn(check_size_of_head))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(answer_panic))
        .layer(tower_http::trace::TraceLayer::new_for_http())
}

/// The answer to a request whose handler panicked: 500 with the JSON error body, the cause
/// (the panic's message) logged and never sent.
fn answer_panic(cause: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = cause
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| cause.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    ApiError::internal(std::io::Error::other(format!("a request handler panicked: {message}"))).into_response()
}

/// Behind a reverse proxy that serves the service under a path (`--public-url
/// https://host/mgds`), the `Link` header's addresses (paths, as the request's) get that path in
/// front, so that clients following them stay behind the proxy.
async fn prefix_links(State(state): State<AppState>, req: Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(req).await;
    let prefix = state.public_prefix();
    if prefix.is_empty() {
        return response;
    }
    if let Some(link) = response.headers().get(axum::http::header::LINK).and_then(|v| v.to_str().ok())
        && let Ok(v) = HeaderValue::from_str(&link.replace("</", &format!("<{prefix}/")))
    {
        response.headers_mut().insert(axum::http::header::LINK, v);
    }
    response
}

/// Caps the body of an S3 request at [`crate::s3::MAX_REQUEST_BODY`]: reading past it fails the
/// request (the client is told its body did not arrive whole), so one request cannot hold more
/// than that in the service's memory.
async fn cap_body(req: Request) -> Request {
    req.map(|b| axum::body::Body::new(http_body_util::Limited::new(b, crate::s3::MAX_REQUEST_BODY)))
}

/// Refuses an S3 request whose `x-amz-date` (header, or `X-Amz-Date` of a presigned address)
/// is not `YYYYMMDDTHHMMSSZ`, or whose credential scope's date is not `YYYYMMDD`, before the S3
/// layer reads them: s3s 0.14 subtracts before it checks for a digit there, which panics in a
/// build with overflow checks (found by the `http_uploads` fuzz target).
async fn check_amz_date(req: Request, next: axum::middleware::Next) -> Response {
    let well_formed = |d: &str| {
        let b = d.as_bytes();
        b.len() == 16 && b[8] == b'T' && b[15] == b'Z' && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
    };
    let header = req.headers().get("x-amz-date").map(|v| v.to_str().unwrap_or("?"));
    let query = req.uri().query().unwrap_or_default().split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        k.eq_ignore_ascii_case("x-amz-date").then_some(v)
    });
    // The date in the credential's scope (`Credential=KEY/YYYYMMDD/...`, in the header or a
    // presigned address) goes through the same parser.
    let scope_ok = |credential: &str| {
        let after = credential.split_once('/').map_or("", |(_, rest)| rest);
        after.len() < 8 || after.as_bytes()[..8].iter().all(u8::is_ascii_digit)
    };
    // As bytes read as UTF-8, the way the S3 layer reads it (not only visible ASCII).
    let auth = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .unwrap_or_default();
    // Not cut at the next comma: the S3 layer takes the 8 bytes after the key, commas included.
    let in_header = auth.split_once("Credential=").map(|(_, c)| c);
    let in_query = req.uri().query().unwrap_or_default().split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        k.eq_ignore_ascii_case("x-amz-credential")
            .then(|| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
    });
    let bad_scope = in_header.map(str::to_string).into_iter().chain(in_query).find(|c| !scope_ok(c));
    if let Some(c) = bad_scope {
        return malformed_authorization(&format!(
            "the credential {} must name its date as YYYYMMDD after the key",
            shown(&c)
        ));
    }
    if let Some(bad) = header.into_iter().chain(query).find(|d| !well_formed(d)) {
        return malformed_authorization(&format!("x-amz-date is {} but must be YYYYMMDDTHHMMSSZ", shown(bad)));
    }
    next.run(req).await
}

/// The visible part of a value from a request, shortened and escaped for an XML message.
fn shown(v: &str) -> String {
    let v: String = v.chars().filter(char::is_ascii_graphic).take(60).collect();
    v.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// S3's 400 `AuthorizationHeaderMalformed` with `message` (already escaped).
fn malformed_authorization(message: &str) -> Response {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AuthorizationHeaderMalformed</Code>\
         <Message>{message}</Message></Error>"
    );
    (StatusCode::BAD_REQUEST, [(axum::http::header::CONTENT_TYPE, "application/xml")], body).into_response()
}

/// Collections whose public records anyone may read without signing in (spec: public samples,
/// projects and analyses, with their metadata).
const OPEN_FOR_READING: &[&str] = &[
    "schema",
    "samples",
    "metadata",
    "projects",
    "analyses",
    "classifications",
    "panels",
    "alignments",
    "functional_profiles",
];

/// Checks credentials before anything else about a request: a bad key answers 401 (or 429)
/// everywhere, and an anonymous caller gets 401 on every route but the public reads, before its
/// body or query is even looked at.
async fn authenticate(
    State(state): State<AppState>,
    mut parts: Parts,
    body: axum::body::Body,
    next: axum::middleware::Next,
) -> Response {
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    if caller.0.is_none() {
        let reading = parts.method == Method::GET || parts.method == Method::HEAD;
        let path = parts.uri.path().trim_start_matches('/');
        let collection = path.split('/').next().unwrap_or_default();
        if !(reading && OPEN_FOR_READING.contains(&collection)) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(Request::from_parts(parts, body)).await
}

/// Longest address (path and query) the service reads: room for a `where` naming about 2,000
/// ids (the HTTP layer itself stops at 64 KB).
pub const MAX_URI_BYTES: usize = 48 * 1024;
/// Most bytes of request headers (names and values) the service reads.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Most request headers the service reads.
pub const MAX_HEADERS: usize = 200;

/// Answers 414 and 431 in the service's error shape, naming the limit. The HTTP layer reads
/// heads up to about 400 KB and 500 headers (see [`crate::serve`]); past that it refuses a
/// request itself, with the same statuses but no body.
async fn check_size_of_head(req: Request, next: axum::middleware::Next) -> Response {
    let uri = req.uri().to_string().len();
    if uri > MAX_URI_BYTES {
        return ApiError::UriTooLong(format!(
            "the address is {uri} bytes long; the service reads at most {MAX_URI_BYTES}: \
             send a shorter where (fewer ids per request, several requests)"
        ))
        .into_response();
    }
    let headers = req.headers();
    let bytes: usize = headers.iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
    if bytes > MAX_HEADER_BYTES || headers.len() > MAX_HEADERS {
        let biggest = headers.iter().max_by_key(|(_, v)| v.len()).map(|(k, _)| k.as_str()).unwrap_or_default();
        return ApiError::HeadersTooLarge(format!(
            "the request's headers are {bytes} bytes in {} headers; the service reads at most \
             {MAX_HEADER_BYTES} bytes in {MAX_HEADERS} headers (the largest is {biggest})",
            headers.len()
        ))
        .into_response();
    }
    next.run(req).await
}

/// A path no route takes: the web UI's, where one is served and the path is outside the API,
/// the storage and upload routes and `/metrics`; else 404 in the service's error shape.
///
/// Only a browser's request for a page or a file gets the UI: its `Accept` names HTML, or it
/// asks for a file of the build (`/assets/`), or a browser says it loads a document or a file
/// (`Sec-Fetch-Dest`). A script's request for an unknown path (`/healthz`, a doubled slash in
/// an API address) keeps its JSON 404.
async fn fallback(
    State(state): State<AppState>,
    method: Method,
    uri: OriginalUri,
    headers: axum::http::HeaderMap,
) -> Response {
    let path = uri.path();
    let collapsed = format!("/{}", path.trim_start_matches('/'));
    let reserved = ["/api", "/storage", &format!("/{}", crate::s3::BUCKET), "/metrics"]
        .iter()
        .any(|r| collapsed == *r || collapsed.strip_prefix(r).is_some_and(|rest| rest.starts_with('/')));
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let for_a_browser = header("accept").contains("text/html")
        || matches!(header("sec-fetch-dest").as_str(), "document" | "script" | "style" | "image" | "font" | "manifest")
        || collapsed.starts_with("/assets/");
    match &state.web {
        Some(web) if !reserved && for_a_browser && (method == Method::GET || method == Method::HEAD) => {
            web.answer(path, &headers, state.public_prefix())
        }
        _ => ApiError::NotFound(format!("there is no route {path}; see GET /api/v1/schema for the routes"))
            .into_response(),
    }
}

async fn method_not_allowed(method: Method, uri: OriginalUri) -> ApiError {
    ApiError::MethodNotAllowed(format!("{method} is not allowed on {}", uri.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn boom() -> &'static str {
        panic!("boom at /tmp/secret/path")
    }

    /// A handler that panics answers 500 with the JSON error body, and the connection serves
    /// the next request.
    #[tokio::test]
    async fn a_panicking_handler_answers_500_in_the_error_shape() {
        let routes: Router = guarded(
            Router::new()
                .route("/boom", axum::routing::get(boom))
                .route("/fine", axum::routing::get(|| async { "fine" })),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, routes).await });
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        let res = http.get(format!("http://{addr}/boom")).send().await.unwrap();
        assert_eq!(res.status(), 500);
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["status"], 500);
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("logged for the operator"), "{message}");
        assert!(!message.contains("/tmp/secret"), "the cause is not sent: {message}");
        let res = http.get(format!("http://{addr}/fine")).send().await.unwrap();
        assert_eq!(res.text().await.unwrap(), "fine");
    }
}
