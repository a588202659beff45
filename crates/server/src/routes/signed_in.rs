//! The caller of a request, as the handlers receive it: the user whose API key the request
//! presents (see [`crate::auth`]), or, with no key, whose browser session the request's cookie
//! names; or nobody. An unknown key counts against its address. A write made with a session's
//! cookie must send the session's CSRF token in `X-CSRF-Token`: a page of another site can make
//! the browser send the cookie, but cannot read the token.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use axum::http::{HeaderMap, Method, header};

use crate::auth::{Caller, presented_key, user_for_key};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::caller::{MAX_CLIENT_CHARS, Origin};
use crate::store::sessions::{self, HOST_SESSION_COOKIE, SESSION_COOKIE, Session};

/// The browser session a request was signed in by (in the request's extensions when it was).
#[derive(Debug, Clone)]
pub struct SignedInSession(pub Session);

/// Marks a request that came in on the service's own loopback listener for its web UI (the
/// service calling its API for a browser): only there is `X-MGDS-Browser-Address` believed.
#[derive(Debug, Clone, Copy)]
pub struct InternalHop;

/// The header that carries a session's CSRF token.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The name of the session cookie of a service whose public address is `public_url`, and the
/// cookie's `Path`: `__Host-` over TLS at the root of the address, where browsers allow it.
pub fn cookie_name_and_path(public_url: &str) -> (&'static str, String) {
    let path = public_url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].trim_end_matches('/').to_string()))
        .unwrap_or_default();
    let path = if path.is_empty() { "/".to_string() } else { path };
    let name = if public_url.starts_with("https://") && path == "/" { HOST_SESSION_COOKIE } else { SESSION_COOKIE };
    (name, path)
}

/// The secret of the session cookie `name` a request carries, if any. More than one is refused:
/// a neighbouring site may set one of its own for a narrower path, which the browser sends first.
pub fn session_cookie(headers: &HeaderMap, name: &str) -> Result<Option<String>, ApiError> {
    let mut found = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == name)
        .map(|c| c.value().to_string());
    let first = found.next();
    if found.next().is_some() {
        return Err(ApiError::Unauthorized(format!(
            "the request carries more than one {name} cookie; sign out, or clear this site's cookies, and sign in again"
        )));
    }
    Ok(first)
}

/// The caller a session cookie names, or nobody if it names no live session. Refuses a write
/// whose `X-CSRF-Token` is not the session's.
async fn by_session(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
    let (name, _) = cookie_name_and_path(&state.public_url);
    let Some(token) = session_cookie(&parts.headers, name)? else { return Ok(Caller(None)) };
    let Some((user, session)) = sessions::by_token(&state.db, &token).await? else { return Ok(Caller(None)) };
    let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
    if !safe {
        let sent = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !session.csrf_matches(sent) {
            return Err(ApiError::Forbidden(
                "a write signed in by a browser session must send the session's token in X-CSRF-Token \
                 (from GET /api/v1/session); this one did not, so it may come from another site"
                    .into(),
            ));
        }
    }
    parts.extensions.insert(SignedInSession(session));
    Ok(Caller(Some(user)))
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Cached so a handler and a middleware can both ask.
        if let Some(c) = parts.extensions.get::<Caller>() {
            return Ok(c.clone());
        }
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(a)| a.ip());
        let ip = peer.map(|p| state.limiter.client_address(p, &parts.headers));
        // On the web UI's own listener, the browser's address as the service saw it.
        let for_browser = parts
            .extensions
            .get::<InternalHop>()
            .and_then(|_| parts.headers.get("x-mgds-browser-address"))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<std::net::IpAddr>().ok());
        let origin = |how: &str| {
            let agent = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("unnamed");
            Origin {
                address: for_browser.or(ip).map(|a| a.to_string()),
                client: Some(format!("{how}: {agent}").chars().take(MAX_CLIENT_CHARS).collect()),
            }
        };
        let key = match presented_key(&parts.headers) {
            Ok(Some(key)) => key,
            Ok(None) => {
                let from = origin("session");
                let mut caller = by_session(parts, state).await?;
                if let Some(u) = caller.0.as_mut() {
                    u.origin = from;
                }
                parts.extensions.insert(caller.clone());
                return Ok(caller);
            }
            Err(e) => return Err(state.limiter.failed(ip, None).unwrap_or(e)),
        };
        // A JWT is the single sign-on provider's access token (an API key is hex).
        if mgds_oidc::looks_like_jwt(&key) {
            let Some(sso) = state.sso.as_deref() else {
                return Err(state.limiter.failed(ip, Some(&key)).unwrap_or_else(|| {
                    ApiError::Unauthorized(
                        "this service has no single sign-on, so it takes no JWTs; use an API key".into(),
                    )
                }));
            };
            return match sso.user_for_token(&state.db, &key).await {
                Ok(mut user) => {
                    user.origin = origin("single sign-on token");
                    let caller = Caller(Some(user));
                    parts.extensions.insert(caller.clone());
                    Ok(caller)
                }
                Err(e @ ApiError::Unauthorized(_)) => Err(state.limiter.failed(ip, Some(&key)).unwrap_or(e)),
                Err(e) => Err(e),
            };
        }
        // A valid key is never refused, whatever failed before from its address: the key is
        // looked up first, and only an unknown key counts (and may be answered 429).
        match user_for_key(&state.db, &key).await? {
            Some(mut user) => {
                user.origin = origin("key");
                let caller = Caller(Some(user));
                parts.extensions.insert(caller.clone());
                Ok(caller)
            }
            None => Err(state.limiter.failed(ip, Some(&key)).unwrap_or_else(|| {
                ApiError::Unauthorized(
                    "the API key is not valid (it may have been replaced by a newer one); \
                     ask your administrator for a new key"
                        .into(),
                )
            })),
        }
    }
}
