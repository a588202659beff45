//! The caller's organisation and its users, as its admins and owners manage them, and the
//! password links they make (MGDS additions to API v1; see [`crate::store::members`] for who may
//! do what).
//!
//! - `GET /organization`: the organisation and the caller's role in it; `PATCH` sets the lab's
//!   name on its reports (admins and owners);
//! - `GET, PUT, DELETE /organization/logo`: the logo its reports show (any user reads it; admins
//!   and owners set it, as the request's body: a PNG, JPEG or SVG picture of at most 2 MiB, or
//!   remove it);
//! - `GET, POST /organization/users`: its users (admins and owners); inviting one;
//! - `GET, PATCH /organization/users/{id}`: one user; a new role, disabling or enabling;
//! - `POST /organization/users/{id}/reset_password`: a password reset link;
//! - `POST /organization/users/{id}/revoke`: ends the user's API key and sessions;
//! - `GET /audit`: the organisation's audit trail (admins and owners);
//! - `POST /password_link`, `POST /password_link/use` (no caller): what a link is for; using
//!   it to set a password, which signs the browser in.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, OriginalUri, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mgds_api::{
    Member, MemberInvite, MemberUpdate, Organization, OrganizationUpdate, PasswordLink, PasswordLinkInfo,
    PasswordLinkUse, Revoked,
};

use super::extract::{Json, ListParams, Listed};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::members;

/// The routes of a signed-in caller.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/organization", get(organization).patch(update_organization))
        .route(
            "/organization/logo",
            get(logo).put(set_logo).delete(remove_logo).layer(DefaultBodyLimit::max(mgds_report::MAX_LOGO_BYTES + 1)),
        )
        .route("/organization/users", get(list).post(invite))
        .route("/organization/users/{id}", get(one).patch(update))
        .route("/organization/users/{id}/reset_password", post(reset_password))
        .route("/organization/users/{id}/revoke", post(revoke))
        .route("/audit", get(audit_trail))
}

/// The routes that need no caller: a password link's page.
pub(super) fn open_router() -> Router<AppState> {
    Router::new().route("/password_link", post(link_info)).route("/password_link/use", post(use_link))
}

/// `GET /audit`: the caller's organisation's audit trail (admins and owners), newest first.
async fn audit_trail(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<mgds_api::AuditEntry>> {
    Ok(Listed::new(crate::store::audit::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn organization(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<Organization>> {
    Ok(axum::Json(members::organization(&state, &caller).await?))
}

async fn update_organization(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<OrganizationUpdate>,
) -> ApiResult<axum::Json<Organization>> {
    Ok(axum::Json(crate::store::lab::update(&state, &caller, &req).await?))
}

/// The logo as its picture. An SVG is served so that nothing in it runs even when it is opened
/// on its own (a sandbox with no scripts, no fetches).
async fn logo(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let (bytes, mime) = crate::store::lab::logo(&state, &caller).await?;
    let headers = [
        (header::CONTENT_TYPE, mime),
        (header::CACHE_CONTROL, "private, no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"),
    ];
    Ok((headers, bytes).into_response())
}

async fn set_logo(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> ApiResult<axum::Json<Organization>> {
    let bytes = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge(format!(
            "the logo is larger than {} MiB: give a smaller PNG, JPEG or SVG picture",
            mgds_report::MAX_LOGO_BYTES >> 20
        )),
        _ => ApiError::BadRequest(format!("the logo could not be read from the request: {e}")),
    })?;
    if bytes.is_empty() {
        return Err(ApiError::BadRequest("send the logo's picture (PNG, JPEG or SVG) as the request's body".into()));
    }
    Ok(axum::Json(crate::store::lab::set_logo(&state, &caller, bytes).await?))
}

async fn remove_logo(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<Organization>> {
    Ok(axum::Json(crate::store::lab::remove_logo(&state, &caller).await?))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Member>> {
    Ok(Listed::new(members::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn one(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Member>> {
    Ok(axum::Json(members::get(&state, &caller, &id).await?))
}

/// A link is a secret shown once: never cached.
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn invite(State(state): State<AppState>, caller: Caller, Json(req): Json<MemberInvite>) -> ApiResult<Response> {
    let link: PasswordLink = members::invite(&state, &caller, &req, &state.public_url).await?;
    Ok(no_store((StatusCode::CREATED, axum::Json(link)).into_response()))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<MemberUpdate>,
) -> ApiResult<axum::Json<Member>> {
    Ok(axum::Json(members::update(&state, &caller, &id, &req).await?))
}

async fn reset_password(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let link = members::reset_link(&state, &caller, &id, &state.public_url).await?;
    Ok(no_store(axum::Json(link).into_response()))
}

async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Revoked>> {
    Ok(axum::Json(members::revoke(&state, &caller, &id).await?))
}

/// `POST /password_link` `{"token"}`: whom the link is for, before a password is chosen. The
/// secret travels in the body, never in an address that logs keep.
async fn link_info(State(state): State<AppState>, Json(req): Json<PasswordLinkUse>) -> ApiResult<Response> {
    if req.password.is_some() {
        return Err(ApiError::BadRequest("to set the password, POST to /api/v1/password_link/use".into()));
    }
    let info: PasswordLinkInfo = members::link_info(&state.db, &req.token).await?;
    Ok(no_store(axum::Json(info).into_response()))
}

/// `POST /password_link/use` `{"token", "password"}`: sets the password and signs the browser
/// in, as `POST /sign_in` does.
async fn use_link(
    State(state): State<AppState>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Json(req): Json<PasswordLinkUse>,
) -> ApiResult<Response> {
    let password = req.password.as_deref().ok_or_else(|| ApiError::BadRequest("give the new password".into()))?;
    let user = members::use_link(&state.db, &req.token, password).await?;
    tracing::info!(user = %user.id, "password set from a link");
    super::session::signed_in(&state, user, peer, &headers, None).await
}
