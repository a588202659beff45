//! Single sign-on routes (MGDS additions; the README lists them), open to anyone:
//!
//! - `GET /api/v1/sso`: whether the service signs in with a provider, and what MGDS Desktop and
//!   the command line need to sign in there themselves (the issuer, the native client, the
//!   scopes); 404 when single sign-on is not configured.
//! - `GET /api/v1/sso/sign_in?return_to=/path`: sends the browser to the provider (authorization
//!   code with PKCE, a `state` and a `nonce`), and binds the sign-in to this browser by a
//!   short-lived cookie holding the `state`.
//! - `GET /api/v1/sso/callback`: where the provider sends the browser back. The code is
//!   exchanged, the ID token checked, the user found, linked or made (`store::identities`), and
//!   a session opened as a password sign-in opens one; the browser goes on to `return_to`. A
//!   refusal goes to the sign-in page with the reason (`#sign_in_problem=...`).
//! - `POST /api/v1/sso/backchannel_logout`: the provider's back-channel logout (a signed
//!   `logout_token`), which ends the sessions it names.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use super::signed_in::{cookie_name_and_path, session_cookie};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::identities::{self, Pending};
use crate::store::sessions::SsoLink;

/// The cookie that binds a sign-in at the provider to the browser that began it.
const STATE_COOKIE: &str = "mgds_sso_state";

/// The longest `return_to` kept.
const MAX_RETURN_TO: usize = 1024;

/// The longest `logout_token` form read.
const MAX_LOGOUT_FORM: usize = 32 * 1024;

/// The open routes of single sign-on.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/sso", get(about))
        .route("/sso/sign_in", get(sign_in))
        .route("/sso/callback", get(callback))
        .route("/sso/backchannel_logout", post(backchannel_logout))
}

/// What `GET /api/v1/sso` answers.
#[derive(Serialize)]
struct About<'a> {
    /// The name the sign-in button shows.
    name: &'a str,
    /// The provider's issuer.
    issuer: &'a str,
    /// Where a browser starts signing in (relative to the API's root).
    sign_in: &'static str,
    /// The public client MGDS Desktop and the command line sign in as, if any.
    native_client_id: Option<&'a str>,
    /// The scopes they ask for.
    scopes: String,
    /// Whether the API takes the provider's access tokens.
    takes_access_tokens: bool,
}

fn sso(state: &AppState) -> ApiResult<&crate::sso::Sso> {
    state.sso.as_deref().ok_or_else(|| ApiError::NotFound("this service has no single sign-on".into()))
}

/// The scopes the native clients ask for: the configured ones, and `offline_access` so that the
/// provider gives a refresh token.
fn native_scopes(scopes: &str) -> String {
    let mut s = scopes.to_string();
    if !s.split_whitespace().any(|x| x == "offline_access") {
        s.push_str(" offline_access");
    }
    s
}

async fn about(State(state): State<AppState>) -> ApiResult<Response> {
    let sso = sso(&state)?;
    let c = &sso.config;
    let mut response = axum::Json(About {
        name: &c.display_name,
        issuer: &c.issuer,
        sign_in: "sso/sign_in",
        native_client_id: c.native_client_id.as_deref(),
        scopes: native_scopes(&c.scopes),
        takes_access_tokens: !c.audiences.is_empty(),
    })
    .into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The service's redirect address at the provider.
fn redirect_uri(state: &AppState) -> String {
    format!("{}/api/v1/sso/callback", state.public_url)
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()).into_owned().take(32).collect()
}

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A path of this service to go on to: absolute, not another host's (`//host`, `/\host`).
fn safe_return_to(path: Option<&str>) -> String {
    match path {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && p.len() <= MAX_RETURN_TO
                && !p.chars().any(char::is_control) =>
        {
            p.to_string()
        }
        _ => "/".into(),
    }
}

fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The cookie of the sign-in under way (`None`: removed).
fn state_cookie(state: &AppState, value: Option<&str>) -> HeaderValue {
    let (_, path) = cookie_name_and_path(&state.public_url);
    let secure = state.public_url.starts_with("https://");
    let c = cookie::Cookie::build((state_cookie_name(state), value.unwrap_or_default().to_string()))
        .path(path)
        .http_only(true)
        // Lax: the browser sends it when the provider sends it back here (a top-level GET).
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .max_age(match value {
            Some(_) => cookie::time::Duration::minutes(identities::SIGN_IN_MINUTES),
            None => cookie::time::Duration::ZERO,
        });
    HeaderValue::from_str(&c.build().to_string()).expect("a cookie of URL-safe characters and fixed attributes")
}

/// Its name: `__Host-` prefixed where the session's cookie is.
fn state_cookie_name(state: &AppState) -> &'static str {
    if cookie_name_and_path(&state.public_url).0.starts_with("__Host-") {
        "__Host-mgds_sso_state"
    } else {
        STATE_COOKIE
    }
}

/// `GET /api/v1/sso/sign_in`: to the provider.
async fn sign_in(
    State(state): State<AppState>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let sso = sso(&state)?;
    if let Some(axum::Extension(ConnectInfo(p))) = peer
        && let Some(wait) = sso.starts.count(state.limiter.client_address(p.ip(), &headers))
    {
        return Err(ApiError::TooManyRequests(wait));
    }
    let provider = sso.provider().await?;
    let pairs = query_pairs(query.as_deref());
    let pkce = mgds_oidc::Pkce::new();
    let (sign_in_state, nonce) = (mgds_oidc::random_token(), mgds_oidc::random_token());
    let pending = Pending {
        verifier: pkce.verifier.clone(),
        nonce: nonce.clone(),
        return_to: safe_return_to(field(&pairs, "return_to")),
    };
    identities::begin(&state.db, &sign_in_state, &pending).await?;
    let redirect = redirect_uri(&state);
    let url = provider.authorization_url(&mgds_oidc::AuthorizationRequest {
        client_id: &sso.config.client_id,
        redirect_uri: &redirect,
        scopes: &sso.config.scopes,
        state: &sign_in_state,
        nonce: &nonce,
        code_challenge: &pkce.challenge,
        prompt: field(&pairs, "prompt").filter(|p| *p == "login"),
    });
    let mut response = see_other(&url);
    response.headers_mut().append(header::SET_COOKIE, state_cookie(&state, Some(&sign_in_state)));
    Ok(response)
}

/// `GET /api/v1/sso/callback`: back from the provider.
async fn callback(
    State(state): State<AppState>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let page = format!("{}/", state.public_url);
    let problem = |message: &str| {
        let mut encoded = String::new();
        url::form_urlencoded::Serializer::new(&mut encoded).append_pair("sign_in_problem", message);
        let mut r = see_other(&format!("{page}#{encoded}"));
        r.headers_mut().append(header::SET_COOKIE, state_cookie(&state, None));
        r
    };
    match finish_sign_in(&state, peer, &headers, query.as_deref()).await {
        Ok(response) => response,
        Err(e) => {
            if matches!(e, ApiError::Internal(_)) {
                tracing::error!(error = ?e, "single sign-on failed");
            } else {
                tracing::info!(error = %e, "single sign-on refused");
            }
            problem(&e.to_string())
        }
    }
}

async fn finish_sign_in(
    state: &AppState,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: &HeaderMap,
    query: Option<&str>,
) -> ApiResult<Response> {
    let sso = sso(state)?;
    let pairs = query_pairs(query);
    let sent_state = field(&pairs, "state").unwrap_or_default();
    // Only the browser that began this sign-in may finish it: another site cannot sign a
    // visitor in to an account of its choosing with a code of its own.
    let held = session_cookie(headers, state_cookie_name(state))?.unwrap_or_default();
    if sent_state.is_empty()
        || held.is_empty()
        || !bool::from(subtle::ConstantTimeEq::ct_eq(held.as_bytes(), sent_state.as_bytes()))
    {
        return Err(ApiError::BadRequest(
            "this sign-in was not begun in this browser, or took longer than ten minutes; sign in again".into(),
        ));
    }
    let pending = identities::take(&state.db, sent_state).await?.ok_or_else(|| {
        ApiError::BadRequest("this sign-in is unknown or took longer than ten minutes; sign in again".into())
    })?;
    if let Some(error) = field(&pairs, "error") {
        let said = field(&pairs, "error_description").unwrap_or(error);
        let said: String = said.chars().take(300).collect();
        return Err(ApiError::Forbidden(format!("{} did not sign you in: {said}", sso.config.display_name)));
    }
    let code = field(&pairs, "code").ok_or_else(|| ApiError::BadRequest("the provider sent no code".into()))?;
    let provider = sso.provider().await?;
    // RFC 9207: where the provider names itself, it must be the one asked.
    if let Some(iss) = field(&pairs, "iss")
        && iss != provider.issuer()
    {
        return Err(ApiError::BadRequest("the answer comes from another provider than the one asked".into()));
    }
    let client =
        mgds_oidc::ClientAuth { client_id: sso.config.client_id.clone(), secret: sso.config.client_secret.clone() };
    let tokens = provider
        .exchange_code(&client, code, &redirect_uri(state), &pending.verifier)
        .await
        .map_err(|e| ApiError::Forbidden(format!("the sign-in could not be completed: {e}")))?;
    let id_token = tokens.id_token.ok_or_else(|| ApiError::Forbidden("the provider sent no ID token".into()))?;
    let mut claims = provider
        .verify_id_token(&id_token, &sso.config.client_id, &pending.nonce)
        .await
        .map_err(|e| ApiError::Forbidden(format!("the provider's ID token was refused: {e}")))?;
    if !sso.config.claims_complete(&claims) {
        let more = provider.userinfo(&tokens.access_token).await.map_err(|e| {
            ApiError::Forbidden(format!(
                "the provider's ID token lacks what MGDS places users by ({}), and its userinfo did not give it ({e}); \
                 ask your lab's IT to release these claims to MGDS",
                sso.config.claims_read().join(", ")
            ))
        })?;
        if more.subject().is_some_and(|s| Some(s) != claims.subject()) {
            return Err(ApiError::Forbidden("the provider's userinfo names another user".into()));
        }
        claims = claims.merged(more);
    }
    let user = sso.user_for(&state.db, provider.issuer(), &claims).await?;
    let link = SsoLink {
        issuer: provider.issuer().to_string(),
        subject: claims.subject().unwrap_or_default().to_string(),
        sid: claims.str("sid").map(str::to_string),
        id_token: Some(id_token),
    };
    let opened = super::session::signed_in(state, user, peer, headers, Some(&link)).await?;
    let mut response = see_other(&format!("{}{}", state.public_url, pending.return_to));
    if let Some(cookie) = opened.headers().get(header::SET_COOKIE) {
        response.headers_mut().append(header::SET_COOKIE, cookie.clone());
    }
    response.headers_mut().append(header::SET_COOKIE, state_cookie(state, None));
    Ok(response)
}

/// `POST /api/v1/sso/backchannel_logout`: the provider ends sessions (OpenID Connect
/// Back-Channel Logout 1.0): 200 when the token is good (whether or not a session was open),
/// 400 with an OAuth error otherwise.
async fn backchannel_logout(State(state): State<AppState>, body: axum::body::Bytes) -> Response {
    let refuse = |why: String| {
        tracing::info!(reason = %why, "a back-channel logout was refused");
        let mut r = (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({"error": "invalid_request", "error_description": why})),
        )
            .into_response();
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    };
    let Some(sso) = state.sso.as_deref() else {
        return ApiError::NotFound("this service has no single sign-on".into()).into_response();
    };
    if body.len() > MAX_LOGOUT_FORM {
        return refuse(format!("the form is longer than {} KiB", MAX_LOGOUT_FORM / 1024));
    }
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().take(8).collect();
    let Some(token) = field(&pairs, "logout_token") else { return refuse("no logout_token".into()) };
    let provider = match sso.provider().await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let logout = match provider.verify_logout_token(token, &sso.config.client_id).await {
        Ok(l) => l,
        Err(e) => return refuse(e.to_string()),
    };
    if !sso.first_logout(&logout.jti) {
        return refuse("this logout token was taken already".into());
    }
    match crate::store::sessions::end_by_provider(
        &state.db,
        provider.issuer(),
        logout.subject.as_deref(),
        logout.sid.as_deref(),
    )
    .await
    {
        Ok(ended) => {
            for (user, _) in &ended {
                sso.forget_user(user);
            }
            tracing::info!(users = ended.len(), "the provider's back-channel logout ended sessions");
            let mut r = StatusCode::OK.into_response();
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_service_are_gone_on_to() {
        assert_eq!(safe_return_to(Some("/samples?page=2")), "/samples?page=2");
        for bad in ["//evil.example/", "/\\evil.example", "https://evil.example/", "samples", "/a\nb"] {
            assert_eq!(safe_return_to(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_return_to(None), "/");
    }
}
