//! `POST /api/v1/diversity` and `POST /api/v1/diversity/files/{file}` (MGDS additions): the
//! diversity of samples for scripts, from the same application code as the comparison view's
//! diversity and ordination tabs and `mgds compare --diversity` ([`mgds_app::diversity`]), so an
//! API answer, a screen and a command line cannot disagree.
//!
//! The body is a [`DiversityRequest`] as JSON. The service asks its own API on loopback with the
//! caller's credentials (the API key or access token the request carries, else the browser's
//! session), so only samples the caller may read are counted, exactly as if the caller had
//! fetched them; what is fetched shares the comparison's cache and its ceiling.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mgds_app::compare::Source;
use mgds_app::diversity::{self, DiversityRequest};
use mgds_app::error::CmdError;
use mgds_server::AppState;
use mgds_server::auth::Caller;
use mgds_server::routes::{CSRF_HEADER, cookie_name_and_path, session_cookie};

use crate::WebUi;

/// The largest PNG resolution the API draws at (a picture of about 3,400 × 4,500 pixels).
const MAX_DPI: u32 = crate::commands::MAX_BROWSER_DPI;

/// An answer in the service's error shape.
fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({ "message": message, "status": status.as_u16(), "code": code });
    (status, axum::Json(body)).into_response()
}

fn refusal(e: &CmdError) -> Response {
    let status = match e.code {
        "invalid" => StatusCode::BAD_REQUEST,
        "chart" | "failed" => StatusCode::INTERNAL_SERVER_ERROR,
        other => crate::commands::status_of(&CmdError::new(other, "")),
    };
    refuse(status, e.code, &e.message)
}

impl WebUi {
    /// Answers a diversity request: the view as JSON (`file` none), or one of its files.
    pub(crate) async fn diversity(
        &self,
        state: AppState,
        caller: Caller,
        headers: HeaderMap,
        file: Option<String>,
        query: std::collections::HashMap<String, String>,
        body: Bytes,
    ) -> Response {
        let Some(user) = caller.0 else {
            return refuse(StatusCode::UNAUTHORIZED, "unauthorized", "Authenticate with an API key.");
        };
        if let Some(f) = &file
            && !diversity::FILES.contains(&f.as_str())
        {
            let shown: String = f.chars().take(40).collect();
            let message =
                format!("There is no diversity file {shown:?}: ask for one of {}.", diversity::FILES.join(", "));
            return refuse(StatusCode::NOT_FOUND, "not_found", &message);
        }
        let dpi = match query.get("dpi").map(|d| d.parse::<u32>()) {
            None => 150,
            Some(Ok(d)) if (72..=MAX_DPI).contains(&d) => d,
            Some(_) => {
                let message = format!("dpi must be a whole number from 72 to {MAX_DPI}.");
                return refuse(StatusCode::BAD_REQUEST, "invalid", &message);
            }
        };
        let request: DiversityRequest = match serde_json::from_slice(&body) {
            Ok(r) => r,
            Err(e) => {
                let message = format!(
                    "The body must be a diversity request as JSON (samples, rank, and optionally measure, metric, \
                     group_by, permutations, seed, show_host): {e}."
                );
                return refuse(StatusCode::BAD_REQUEST, "invalid", &message);
            }
        };
        let Some(internal) = self.internal_url() else {
            let why = "The service cannot compute diversity now (it could not listen on 127.0.0.1; its log says why).";
            return refuse(StatusCode::SERVICE_UNAVAILABLE, "unavailable", why);
        };
        // The caller's own credentials, so the loopback request reads what the caller may read.
        let agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("a client");
        let mut builder = mgds_client::Client::builder(&internal)
            .for_browser_at(user.origin.address.clone())
            .user_agent(format!("{agent} (MGDS diversity)"));
        builder = match mgds_server::auth::presented_key(&headers) {
            Ok(Some(key)) if mgds_oidc::looks_like_jwt(&key) => {
                builder.access_token(mgds_client::AccessToken::new(key))
            }
            Ok(Some(key)) => builder.api_key(key),
            _ => {
                let (cookie_name, _) = cookie_name_and_path(&state.public_url);
                let token = session_cookie(&headers, cookie_name).ok().flatten().unwrap_or_default();
                let csrf = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
                builder.browser_session(cookie_name, &token, csrf)
            }
        };
        let client = match builder.build() {
            Ok(c) => c,
            Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, "failed", &e.to_string()),
        };
        let src = Source { client: &client, base_url: &user.id, cache: &self.compare };
        // Computed a few at a time (`mgds_app::diversity`), after the fetching.
        let view = match diversity::prepare(src, &request, &|_| {}).await {
            Ok(v) => v,
            Err(e) => return refusal(&e),
        };
        let Some(what) = file else { return axum::Json(view).into_response() };
        let _turn = match crate::commands::drawing_turn().await {
            Ok(t) => t,
            Err(e) => return refusal(&e),
        };
        let name = view.file_name(&what);
        let drawn = tokio::task::spawn_blocking(move || view.file(&what, diversity::WIDTH, dpi)).await;
        match drawn {
            Ok(Ok((bytes, mime))) => {
                let mut response = Response::new(axum::body::Body::from(bytes));
                let h = response.headers_mut();
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
                if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
                    h.insert(header::CONTENT_DISPOSITION, v);
                }
                response
            }
            Ok(Err(e)) => refusal(&e),
            Err(e) => {
                refuse(StatusCode::INTERNAL_SERVER_ERROR, "failed", &format!("The diversity could not be drawn ({e})."))
            }
        }
    }
}
