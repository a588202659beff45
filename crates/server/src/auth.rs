//! Authentication: API keys (HTTP Basic username, `X-API-Key`, or a bearer token), the user a
//! key belongs to, and the limit on repeated failures from one address. The routes make the
//! caller of a request from these (`routes::signed_in`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

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
pub fn presented_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
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
/// with the computed one in constant time. The key of a disabled account answers 401 saying so.
pub async fn user_for_key(db: &crate::store::db::Pool, key: &str) -> Result<Option<User>, ApiError> {
    let hash = hash_key(key);
    let Some(found) = users::by_key_hash(db, &hash).await? else { return Ok(None) };
    if !bool::from(found.stored.ct_eq(&hash)) {
        return Ok(None);
    }
    if found.disabled {
        return Err(ApiError::Unauthorized(
            "this API key's account is disabled; ask an admin of your organisation to enable it again".into(),
        ));
    }
    Ok(Some(found.user))
}

/// Failures counted in a fixed window per key of type `K`: past `limit` within `window`, the
/// key is refused until the window ends.
#[derive(Debug)]
pub struct Window<K> {
    limit: u32,
    window: Duration,
    seen: Mutex<HashMap<K, (Instant, u32)>>,
}

impl<K: std::hash::Hash + Eq + Clone> Window<K> {
    /// At most `limit` failures per `window` for one key.
    pub fn new(limit: u32, window: Duration) -> Self {
        Window { limit, window, seen: Mutex::new(HashMap::new()) }
    }

    /// Seconds until `key` may try again, if it is over the limit now.
    pub fn blocked_for(&self, key: &K) -> Option<u64> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (start, count) = *seen.get(key)?;
        let elapsed = start.elapsed();
        (count >= self.limit && elapsed < self.window).then(|| (self.window - elapsed).as_secs().max(1))
    }

    /// Counts a failure of `key`; returns the seconds to wait once over the limit.
    pub fn count(&self, key: K) -> Option<u64> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() > 100_000 {
            let window = self.window;
            seen.retain(|_, (start, _)| start.elapsed() < window);
        }
        let entry = seen.entry(key).or_insert((Instant::now(), 0));
        if entry.0.elapsed() >= self.window {
            *entry = (Instant::now(), 0);
        }
        entry.1 = entry.1.saturating_add(1);
        (entry.1 > self.limit).then(|| self.window.saturating_sub(entry.0.elapsed()).as_secs().max(1))
    }
}

impl crate::store::users::Lookups for Window<String> {
    fn blocked_for(&self, user: &str) -> Option<u64> {
        Window::blocked_for(self, &user.to_string())
    }

    fn missed(&self, user: &str) -> Option<u64> {
        self.count(user.to_string())
    }
}

/// What repeated failures cost, and whom they cost it.
///
/// - An unknown API key counts against its (address, key fingerprint) pair (a stale script
///   retrying one old key) and against its address (many different keys, someone guessing).
///   Past the limit of either, unknown keys from there answer 429 with `Retry-After`. A valid
///   key is looked up before anything is refused, so it always works: one stale script cannot
///   lock out a lab that shares an address (loopback for the app and the CLI, a reverse proxy,
///   a NAT). Guessing stays hopeless: keys hold 128 random bits, and an address gets at most
///   `limit` guesses per window.
/// - E-mail lookups that find nobody count per signed-in user (see
///   [`crate::store::users::list`]), so addresses cannot be tried by the thousand.
/// - The address of a request is the connection's, or, when the connection comes from a
///   configured trusted proxy, the nearest address in `X-Forwarded-For` that is not a trusted
///   proxy (proxies append the address they saw, so addresses further left may be forged).
#[derive(Debug)]
pub struct AuthLimits {
    per_key: Window<(IpAddr, [u8; 8])>,
    per_address: Window<IpAddr>,
    /// E-mail lookups that found nobody, per user id.
    pub lookups: Window<String>,
    trusted_proxies: Vec<ipnet::IpNet>,
}

impl AuthLimits {
    /// At most `limit` failures per `window` for each thing counted; `X-Forwarded-For` is read
    /// only from `trusted_proxies`.
    pub fn new(limit: u32, window: Duration, trusted_proxies: Vec<ipnet::IpNet>) -> Self {
        AuthLimits {
            per_key: Window::new(limit, window),
            per_address: Window::new(limit, window),
            lookups: Window::new(limit, window),
            trusted_proxies,
        }
    }

    fn trusted(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }

    /// The address a request came from: `peer`, or, if `peer` is a trusted proxy, the nearest
    /// untrusted address its `X-Forwarded-For` names.
    pub fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusted(peer) {
            return peer;
        }
        let hops: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|h| h.trim().parse().ok())
            .collect();
        hops.iter().rev().find(|ip| !self.trusted(**ip)).or(hops.first()).copied().unwrap_or(peer)
    }

    /// Records a failed authentication from `ip` with `key` (`None`: an unreadable header);
    /// returns the 429 to answer instead of 401 once over a limit.
    pub fn failed(&self, ip: Option<IpAddr>, key: Option<&str>) -> Option<ApiError> {
        let ip = ip?;
        let by_key = key.and_then(|k| {
            let fp: [u8; 8] = hash_key(k)[..8].try_into().unwrap_or_default();
            self.per_key.count((ip, fp))
        });
        let by_address = self.per_address.count(ip);
        by_key.max(by_address).map(ApiError::TooManyRequests)
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
    fn windows_refuse_past_the_limit() {
        let l = Window::new(3, Duration::from_secs(60));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..3 {
            assert!(l.count(ip).is_none());
        }
        assert!(matches!(l.count(ip), Some(s) if s >= 1));
        assert!(l.blocked_for(&ip).is_some());
        assert!(l.blocked_for(&"10.0.0.1".parse().unwrap()).is_none());
    }

    #[test]
    fn forwarded_addresses_are_read_from_trusted_proxies_only() {
        let limits = AuthLimits::new(3, Duration::from_secs(60), vec!["10.0.0.0/8".parse().unwrap()]);
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_static("6.6.6.6, 192.0.2.7, 10.1.1.1"));
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let outsider: IpAddr = "198.51.100.1".parse().unwrap();
        // The nearest address a trusted proxy did not add itself; what lies further left may be forged.
        assert_eq!(limits.client_address(proxy, &h), "192.0.2.7".parse::<IpAddr>().unwrap());
        assert_eq!(limits.client_address(outsider, &h), outsider, "an untrusted peer's header is ignored");
        assert_eq!(limits.client_address(proxy, &HeaderMap::new()), proxy);
    }
}
