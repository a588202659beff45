//! Authentication: API keys (HTTP Basic username, `X-API-Key`, or a bearer token), the caller of
//! a request as the handlers receive it, and the limit on repeated failures from one address.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::ApiError;
pub use crate::store::caller::{Caller, User};
use crate::store::users;

/// A new API key: 128 random bits as 32 lowercase hex characters, the shape of the real
/// service's keys (its command line refuses any other length). Keys made earlier (48 characters)
/// keep working until they are rotated: a key is looked up by its hash, whatever its length.
pub fn new_api_key() -> String {
    let bytes: [u8; 16] = rand::random();
    hex::encode(bytes)
}

/// What the database stores for a key: its SHA-256. Keys are random and long, so a fast hash is
/// enough; the key itself is never stored.
pub fn hash_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// The API key a request carries, if any: `X-API-Key`, or the username of HTTP Basic.
/// `Err` when an `Authorization` header is present but unreadable.
fn presented_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    if let Some(v) = headers.get("x-api-key") {
        let key = v.to_str().map_err(|_| ApiError::unauthorized())?.trim();
        return Ok((!key.is_empty()).then(|| key.to_string()));
    }
    let Some(v) = headers.get(header::AUTHORIZATION) else { return Ok(None) };
    let v = v.to_str().map_err(|_| ApiError::unauthorized())?;
    let Some((scheme, rest)) = v.split_once(' ') else { return Err(ApiError::unauthorized()) };
    // The real service's clients send a bearer token when one is configured
    // (`ONE_CODEX_BEARER_TOKEN`); here the token is the API key.
    if scheme.eq_ignore_ascii_case("bearer") {
        let key = rest.trim();
        return Ok((!key.is_empty()).then(|| key.to_string()));
    }
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(ApiError::Unauthorized(
            "unsupported authorization scheme: use HTTP Basic with your API key as the username \
             and an empty password, a bearer token, or the X-API-Key header"
                .into(),
        ));
    }
    let decoded =
        base64::engine::general_purpose::STANDARD.decode(rest.trim()).map_err(|_| ApiError::unauthorized())?;
    let text = String::from_utf8(decoded).map_err(|_| ApiError::unauthorized())?;
    let user = text.split_once(':').map_or(text.as_str(), |(u, _password)| u);
    Ok((!user.is_empty()).then(|| user.to_string()))
}

/// Looks up the user owning `key`. The lookup is by hash; the stored hash is then compared
/// with the computed one in constant time.
pub async fn user_for_key(db: &sqlx::SqlitePool, key: &str) -> Result<Option<User>, ApiError> {
    let hash = hash_key(key);
    let found = users::by_key_hash(db, &hash).await?;
    Ok(found.and_then(|(user, stored)| bool::from(stored.ct_eq(&hash)).then_some(user)))
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Cached so a handler and a middleware can both ask.
        if let Some(c) = parts.extensions.get::<Caller>() {
            return Ok(c.clone());
        }
        let ip = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(a)| a.ip());
        let key = match presented_key(&parts.headers) {
            Ok(Some(key)) => key,
            Ok(None) => {
                let caller = Caller(None);
                parts.extensions.insert(caller.clone());
                return Ok(caller);
            }
            Err(e) => return Err(state.limiter.failed(ip).unwrap_or(e)),
        };
        if let Some(ip) = ip
            && let Some(wait) = state.limiter.blocked_for(ip)
        {
            return Err(ApiError::TooManyRequests(wait));
        }
        match user_for_key(&state.db, &key).await? {
            Some(user) => {
                let caller = Caller(Some(user));
                parts.extensions.insert(caller.clone());
                Ok(caller)
            }
            None => Err(state.limiter.failed(ip).unwrap_or_else(|| {
                ApiError::Unauthorized(
                    "the API key is not valid (it may have been replaced by a newer one); \
                     ask your administrator for a new key"
                        .into(),
                )
            })),
        }
    }
}

/// Counts authentication failures per address in a fixed window; past the limit, requests with
/// credentials from that address answer 429 until the window ends.
#[derive(Debug)]
pub struct FailureLimiter {
    limit: u32,
    window: Duration,
    seen: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl FailureLimiter {
    /// At most `limit` failures per `window` from one address.
    pub fn new(limit: u32, window: Duration) -> Self {
        FailureLimiter { limit, window, seen: Mutex::new(HashMap::new()) }
    }

    /// Seconds until `ip` may try again, if it is blocked now.
    pub fn blocked_for(&self, ip: IpAddr) -> Option<u64> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (start, count) = *seen.get(&ip)?;
        let elapsed = start.elapsed();
        (count >= self.limit && elapsed < self.window).then(|| (self.window - elapsed).as_secs().max(1))
    }

    /// Records a failure; returns the 429 to answer instead of 401 once over the limit.
    pub fn failed(&self, ip: Option<IpAddr>) -> Option<ApiError> {
        let ip = ip?;
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() > 10_000 {
            let window = self.window;
            seen.retain(|_, (start, _)| start.elapsed() < window);
        }
        let entry = seen.entry(ip).or_insert((Instant::now(), 0));
        if entry.0.elapsed() >= self.window {
            *entry = (Instant::now(), 0);
        }
        entry.1 += 1;
        (entry.1 > self.limit)
            .then(|| ApiError::TooManyRequests((self.window.saturating_sub(entry.0.elapsed())).as_secs().max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn keys_are_long_and_distinct() {
        let a = new_api_key();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_api_key());
        assert_eq!(hash_key(&a), hash_key(&a));
    }

    #[test]
    fn key_from_basic_and_header() {
        let mut h = HeaderMap::new();
        let basic = base64::engine::general_purpose::STANDARD.encode("abc:");
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Basic {basic}")).unwrap());
        assert_eq!(presented_key(&h).unwrap().as_deref(), Some("abc"));
        h.insert("x-api-key", HeaderValue::from_static("xyz"));
        assert_eq!(presented_key(&h).unwrap().as_deref(), Some("xyz"));
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        assert_eq!(presented_key(&bearer).unwrap().as_deref(), Some("t"));
        let mut digest = HeaderMap::new();
        digest.insert(header::AUTHORIZATION, HeaderValue::from_static("Digest x"));
        assert!(presented_key(&digest).is_err());
        assert_eq!(presented_key(&HeaderMap::new()).unwrap(), None);
    }

    #[test]
    fn limiter_blocks_after_limit() {
        let l = FailureLimiter::new(3, Duration::from_secs(60));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..3 {
            assert!(l.failed(Some(ip)).is_none());
        }
        assert!(matches!(l.failed(Some(ip)), Some(ApiError::TooManyRequests(s)) if s >= 1));
        assert!(l.blocked_for(ip).is_some());
        assert!(l.blocked_for("10.0.0.1".parse().unwrap()).is_none());
    }
}
