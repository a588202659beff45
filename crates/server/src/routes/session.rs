//! Signing in from a browser (MGDS additions to API v1; the README lists them): sign in with an
//! e-mail address and password, the current session and its CSRF token, the user's sessions
//! (listed, ended one by one or everywhere), a new password, a new API key for scripts, and an
//! organisation admin setting a member's password.
//!
//! The session's secret travels only in an `HttpOnly`, `SameSite=Lax` cookie (`Secure`, and
//! named `__Host-mgds_session`, when the service is reached over TLS at the root of its
//! address), scoped to the service's path. A key is not shown again after it is made: the
//! service keeps only its hash, so the account page makes a new one (the old one stops at once,
//! as the spec says of regenerating) instead of revealing the old. What a stolen session could
//! turn into something that outlives it (a new key, a new password) asks for the password.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};

use super::extract::Json;
use super::signed_in::{SignedInSession, cookie_name_and_path};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::sessions::{self, SESSION_MAX_DAYS, SessionRecord, SignInError};
use crate::store::users;

/// The routes that need no caller: signing in.
pub(super) fn open_router() -> Router<AppState> {
    Router::new().route("/sign_in", post(sign_in))
}

/// The routes of a signed-in caller.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/session", get(current).delete(sign_out))
        .route("/sessions", get(list).delete(end_all))
        .route("/sessions/{id}", delete(end_one))
        .route("/account/password", post(change_password))
        .route("/account/api_key", post(new_api_key))
        .route("/users/{id}/password", post(set_members_password))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    email: String,
    password: String,
}

/// The signed-in user and the session, as the page keeps them.
#[derive(Serialize)]
struct SessionAnswer {
    user: mgds_api::Account,
    /// The session's id, as `GET /api/v1/sessions` lists it.
    session: String,
    /// The token to send in `X-CSRF-Token` with every write.
    csrf_token: String,
    /// When the session ends unless used.
    expires_at: String,
}

/// The `Set-Cookie` of a session's secret; `None` removes the cookie. It lives as long as a
/// session may ([`SESSION_MAX_DAYS`]); the service ends an idle session sooner.
fn session_cookie(state: &AppState, token: Option<&str>) -> HeaderValue {
    let (name, path) = cookie_name_and_path(&state.public_url);
    let mut c = cookie::Cookie::build((name, token.unwrap_or_default().to_string()))
        .path(path)
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(state.public_url.starts_with("https://"));
    c = match token {
        Some(_) => c.max_age(cookie::time::Duration::days(SESSION_MAX_DAYS)),
        None => c.max_age(cookie::time::Duration::ZERO),
    };
    HeaderValue::from_str(&c.build().to_string()).expect("a cookie of hex characters and fixed attributes")
}

/// `POST /api/v1/sign_in`: `{"email", "password"}` → the session, and its cookie.
///
/// The body must be sent as `application/json`: a page of another site can post a form but not
/// JSON without the service's leave (which it never gives), so no site signs a browser in to an
/// account of the site's choosing.
async fn sign_in(
    State(state): State<AppState>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Json(body): Json<SignIn>,
) -> ApiResult<Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json")));
    if !json {
        return Err(ApiError::BadRequest("send the sign-in as JSON (Content-Type: application/json)".into()));
    }
    let address = address_of(&state, peer, &headers);
    let user = sessions::sign_in(&state.db, &body.email, &body.password, address).await.map_err(|e| {
        refused(
            e,
            "the e-mail address or the password is not right (an account without a password signs in with \
             its API key; an organisation admin can set a password)",
        )
    })?;
    signed_in(&state, user, peer, &headers, None).await
}

/// Opens a session of `user` for the browser that sent `headers`: the session's answer, and its
/// cookie.
pub(super) async fn signed_in(
    state: &AppState,
    user: crate::auth::User,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: &HeaderMap,
    sso: Option<&sessions::SsoLink>,
) -> ApiResult<Response> {
    let address = address_of(state, peer, headers);
    let agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    let mut user = user;
    user.origin = crate::store::caller::Origin {
        address: address.map(|a| a.to_string()),
        client: Some(
            format!("{}: {}", if sso.is_some() { "single sign-on" } else { "password" }, agent.unwrap_or("unnamed"))
                .chars()
                .take(crate::store::caller::MAX_CLIENT_CHARS)
                .collect(),
        ),
    };
    let made = sessions::open(&state.db, user, address, agent, sso).await?;
    let caller = Caller(Some(made.user.clone()));
    let answer = SessionAnswer {
        user: users::account(state, &caller).await?,
        session: made.id,
        csrf_token: made.csrf_token,
        expires_at: made.expires_at,
    };
    let mut response = axum::Json(answer).into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(state, Some(&made.token)));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The address a request came from (see [`crate::auth::AuthLimits::client_address`]).
fn address_of(
    state: &AppState,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: &HeaderMap,
) -> Option<std::net::IpAddr> {
    peer.map(|axum::Extension(ConnectInfo(p))| state.limiter.client_address(p.ip(), headers))
}

/// A failed password check as the caller is told it: `wrong` for a wrong password, 429 with
/// `Retry-After` while it must wait.
fn refused(e: SignInError, wrong: &str) -> ApiError {
    match e {
        SignInError::Wrong => ApiError::Unauthorized(wrong.into()),
        SignInError::Wait(secs) => ApiError::TooManyRequests(secs.max(1) as u64),
        SignInError::Disabled => ApiError::Forbidden(SignInError::Disabled.to_string()),
        SignInError::Store(e) => e,
    }
}

/// The session a request was signed in by; 401 for a request signed in otherwise (an API key).
fn this_session(session: Option<axum::Extension<SignedInSession>>) -> ApiResult<sessions::Session> {
    session.map(|axum::Extension(SignedInSession(s))| s).ok_or_else(|| {
        ApiError::Unauthorized("this request is not signed in by a browser session; sign in first".into())
    })
}

/// `GET /api/v1/session`: the signed-in user and the session's CSRF token.
async fn current(
    State(state): State<AppState>,
    caller: Caller,
    session: Option<axum::Extension<SignedInSession>>,
) -> ApiResult<Response> {
    let s = this_session(session)?;
    let answer = SessionAnswer {
        user: users::account(&state, &caller).await?,
        session: s.id,
        csrf_token: s.csrf_token,
        expires_at: s.expires_at,
    };
    let mut response = axum::Json(answer).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `DELETE /api/v1/session`: signs this browser out. A session made by single sign-on answers
/// `{"end_session_url": ...}` where the provider ends its own session (RP-initiated logout):
/// the page goes there, and the provider sends it back to the service.
async fn sign_out(
    State(state): State<AppState>,
    caller: Caller,
    session: Option<axum::Extension<SignedInSession>>,
) -> ApiResult<Response> {
    let user = caller.require()?;
    let s = this_session(session)?;
    let at_provider = match state.sso.as_deref() {
        Some(sso) => sso.end_session_url(&state.db, &s.id, &state.public_url).await?,
        None => None,
    };
    sessions::end(&state.db, &user.id, &s.id).await?;
    let entry = crate::store::audit::Entry::new("session.signed_out", "session", &s.id, &user.id);
    crate::store::audit::record_for(&state.db, &caller, entry).await?;
    let mut response = match at_provider {
        Some(url) => axum::Json(serde_json::json!({ "end_session_url": url })).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(&state, None));
    Ok(response)
}

/// One session in the list, marked if it is the one asking.
#[derive(Serialize)]
struct ListedSession {
    #[serde(flatten)]
    record: SessionRecord,
    current: bool,
}

/// `GET /api/v1/sessions`: the caller's sessions, newest first.
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    session: Option<axum::Extension<SignedInSession>>,
) -> ApiResult<axum::Json<Vec<ListedSession>>> {
    let user = caller.require()?;
    let this = session.map(|axum::Extension(SignedInSession(s))| s.id);
    let all = sessions::list(&state.db, &user.id).await?;
    Ok(axum::Json(
        all.into_iter()
            .map(|record| ListedSession { current: this.as_deref() == Some(record.id.as_str()), record })
            .collect(),
    ))
}

/// `DELETE /api/v1/sessions/{id}`: ends one of the caller's sessions.
async fn end_one(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
    let user = caller.require()?;
    if sessions::end(&state.db, &user.id, &id).await? {
        let entry = crate::store::audit::Entry::new("session.ended", "session", &id, &user.id);
        crate::store::audit::record_for(&state.db, &caller, entry).await?;
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("session"))
    }
}

/// `DELETE /api/v1/sessions`: signs the caller out everywhere (this browser too).
async fn end_all(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let user = caller.require()?;
    let ended = sessions::end_all(&state.db, &user.id).await?;
    let entry = crate::store::audit::Entry::new("session.ended_all", "user", &user.id, &user.id)
        .with(serde_json::json!({"sessions": ended}));
    crate::store::audit::record_for(&state.db, &caller, entry).await?;
    let mut response = axum::Json(serde_json::json!({ "ended": ended })).into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(&state, None));
    Ok(response)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PasswordChange {
    /// The password now; not needed when the account has none yet.
    #[serde(default)]
    current_password: Option<String>,
    new_password: String,
}

/// `POST /api/v1/account/password`: the caller's new password, after the current one (checked
/// under the same waits as signing in). Every session ends, this one too; the page signs in
/// again with the new password.
async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Json(body): Json<PasswordChange>,
) -> ApiResult<Response> {
    let user = caller.require()?;
    sessions::check_new_password(&body.new_password)?;
    let address = address_of(&state, peer, &headers);
    sessions::check_current(&state.db, &user.id, body.current_password.as_deref(), address).await.map_err(|e| {
        match refused(e, "") {
            ApiError::Unauthorized(_) => ApiError::Forbidden("the current password is not right".into()),
            other => other,
        }
    })?;
    sessions::set_password(&state.db, Some(user), &user.id, &body.new_password).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(&state, None));
    Ok(response)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct KeyRequest {
    /// The caller's password: needed when signed in by a browser session (a key outlives it).
    #[serde(default)]
    current_password: Option<String>,
}

/// `POST /api/v1/account/api_key`: a new API key for the caller, shown this once; the old key
/// stops at once, with everything obtained with it (see [`crate::admin::rotate_key`]). Signed
/// in by a browser session, the body gives the password (`{"current_password": ...}`).
async fn new_api_key(
    State(state): State<AppState>,
    caller: Caller,
    session: Option<axum::Extension<SignedInSession>>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Response> {
    let user = caller.require()?;
    if session.is_some() {
        let asked: KeyRequest = if body.iter().all(u8::is_ascii_whitespace) {
            KeyRequest::default()
        } else {
            serde_json::from_slice(&body)
                .map_err(|e| ApiError::BadRequest(format!("the request body does not fit this route: {e}")))?
        };
        let address = address_of(&state, peer, &headers);
        let wrong = "give your password (current_password) to make a new API key";
        sessions::check_current(
            &state.db,
            &user.id,
            Some(asked.current_password.as_deref().unwrap_or_default()),
            address,
        )
        .await
        .map_err(|e| match refused(e, wrong) {
            ApiError::Unauthorized(m) => ApiError::Forbidden(m),
            other => other,
        })?;
    }
    let account = users::account(&state, &caller).await?;
    let email = account.email.ok_or_else(|| ApiError::internal(std::io::Error::other("a user without an e-mail")))?;
    let rotated = crate::admin::rotate_key_by(&state, Some(user), &email).await.map_err(|e| match e {
        crate::admin::AdminError::Store(e) => e,
        other => ApiError::internal(other),
    })?;
    tracing::info!(user = %user.id, "API key regenerated from the account page");
    let mut response = axum::Json(serde_json::json!({
        "api_key": rotated.api_key,
        "canceled_uploads": rotated.canceled_uploads,
    }))
    .into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPassword {
    new_password: String,
}

/// `POST /api/v1/users/{id}/password`: an organisation admin sets the password of a user they
/// manage (see [`crate::store::members::may_manage`]); the user's sessions end. Not their own
/// (that asks for the current one: `/account/password`). A reset link
/// (`POST /api/v1/organization/users/{id}/reset_password`) lets the user choose it instead.
async fn set_members_password(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<NewPassword>,
) -> ApiResult<StatusCode> {
    let admin = caller.require()?;
    sessions::check_new_password(&body.new_password)?;
    if admin.id == id {
        return Err(ApiError::BadRequest(
            "set your own password with POST /api/v1/account/password, which asks for the current one".into(),
        ));
    }
    match users::organization_of(&state.db, &id).await? {
        Some((org, role)) if admin.manages_org() && org == admin.organization_id => {
            if !crate::store::members::may_manage(admin.role, role) {
                return Err(ApiError::Forbidden(format!(
                    "this user is an {role}: only an owner of your organisation, or the operator \
                     (mgds admin user passwd), sets their password"
                )));
            }
        }
        _ if admin.manages_org() => return Err(ApiError::not_found("user")),
        _ => {
            return Err(ApiError::Forbidden(
                "only an admin or owner of the user's organisation sets another user's password".into(),
            ));
        }
    }
    sessions::set_password(&state.db, Some(admin), &id, &body.new_password)
        .await?
        .ok_or_else(|| ApiError::not_found("user"))?;
    Ok(StatusCode::NO_CONTENT)
}
