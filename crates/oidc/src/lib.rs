//! OpenID Connect as MGDS speaks it, to any certified provider (Keycloak, Entra ID, Google,
//! Authentik, ...): both the service (a confidential web client, and a resource server that
//! takes the provider's access tokens) and MGDS Desktop and the command line (a native public
//! client with a loopback redirect, RFC 8252) use this crate.
//!
//! - [`Provider::discover`] reads the provider's metadata (`/.well-known/openid-configuration`)
//!   and checks that it names the configured issuer.
//! - The authorization code flow always uses PKCE (S256), a `state` and a `nonce`
//!   ([`Provider::authorization_url`], [`Pkce`], [`random_token`]).
//! - Tokens are checked against the provider's published keys ([`Keys`]): the signature (RSA,
//!   RSA-PSS, ECDSA P-256/P-384, Ed25519; never a shared secret, never `none`), the issuer, the
//!   audience, the expiry and not-before with [`LEEWAY_SECS`] of clock skew. A token signed by a
//!   key the set does not hold makes the set be fetched again (at most once a second, and not
//!   again for [`REFETCH_KEYS_AFTER`] for a key it then lacks), so a provider's key rotation is
//!   followed; the set is also fetched
//!   again when older than [`KEYS_MAX_AGE`], so a key the provider withdrew stops being trusted.
//! - Everything the provider sends is bounded: answers at most [`MAX_ANSWER_BYTES`], key sets at
//!   most [`MAX_KEYS`] keys, each request [`TIMEOUT`].

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub mod native;
mod ring_provider;
#[cfg(feature = "testing")]
pub mod testing;

/// Seconds of clock difference allowed between the provider and us.
pub const LEEWAY_SECS: u64 = 60;

/// The longest answer read from a provider.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The most keys read from a provider's key set.
pub const MAX_KEYS: usize = 64;

/// The soonest a key set is fetched again for a key a fetch did not find.
pub const REFETCH_KEYS_AFTER: Duration = Duration::from_secs(30);

/// The soonest a key set is fetched again at all.
pub const MIN_REFETCH: Duration = Duration::from_secs(1);

/// The soonest a key set is fetched again after a fetch failed (requests meanwhile fail at
/// once, or use the keys held).
pub const RETRY_KEYS_AFTER_FAILURE: Duration = Duration::from_secs(10);

/// How long a fetched key set is trusted before it is fetched again.
pub const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);

/// The longest wait for one request to the provider.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The longest token read (a JWT with many groups is a few KiB; Entra ID's can reach 8 KiB).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Seconds after its issue a back-channel logout token is taken.
pub const LOGOUT_TOKEN_LIFE_SECS: u64 = 10 * 60;

/// The event a back-channel logout token carries (OpenID Connect Back-Channel Logout 1.0).
pub const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// What went wrong, in words a lab's IT person can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The provider could not be reached or answered something unreadable.
    #[error("the OpenID provider at {url} could not be used: {reason}")]
    Provider {
        /// The address asked.
        url: String,
        /// Why.
        reason: String,
    },
    /// The provider refused a request (an OAuth error answer).
    #[error("the OpenID provider refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The OAuth error code.
        error: String,
        /// The provider's words, if any.
        description: Option<String>,
    },
    /// A token failed a check.
    #[error("the token is not valid: {0}")]
    Token(String),
}

/// The result of this crate's functions.
pub type Result<T> = std::result::Result<T, Error>;

/// An HTTP client for talking to a provider: [`TIMEOUT`] per request, no redirects followed
/// (a provider's endpoints answer where its metadata says), the system's proxy settings.
pub fn http_client(user_agent: &str) -> std::result::Result<reqwest::Client, reqwest::Error> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(user_agent)
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        // Requests to a provider are few: no connection is kept for the next, so a provider
        // restarted (a key rotated) is reached afresh.
        .pool_max_idle_per_host(0)
        .build()
}

/// A random, URL-safe token of 256 bits (for `state`, `nonce` and PKCE verifiers).
pub fn random_token() -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// A PKCE pair (RFC 7636): the verifier kept by the client, the S256 challenge sent.
#[derive(Clone)]
pub struct Pkce {
    /// Sent with the code at the token endpoint.
    pub verifier: String,
    /// Sent with the authorization request.
    pub challenge: String,
}

impl Pkce {
    /// A new random pair.
    pub fn new() -> Pkce {
        Pkce::from_verifier(random_token())
    }

    /// The pair of a kept verifier.
    pub fn from_verifier(verifier: String) -> Pkce {
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Pkce { verifier, challenge }
    }
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce").field("challenge", &self.challenge).finish_non_exhaustive()
    }
}

impl Default for Pkce {
    fn default() -> Self {
        Pkce::new()
    }
}

/// Whether `token` has the form of a JWT (three base64url parts; an MGDS API key has none).
pub fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && token.starts_with("eyJ")
        && parts.iter().take(2).all(|p| !p.is_empty())
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// What a provider's metadata says, of what MGDS uses.
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    /// The issuer identifier (the `iss` of its tokens).
    pub issuer: String,
    /// Where a browser signs in.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// The signing keys.
    pub jwks_uri: String,
    /// The signed-in user's claims.
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    /// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0), where supported.
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
    /// Whether the provider sends back-channel logouts.
    #[serde(default)]
    pub backchannel_logout_supported: bool,
    /// Token revocation (RFC 7009), where supported.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// The PKCE methods supported (empty when the metadata does not say).
    #[serde(default)]
    pub code_challenge_methods_supported: Vec<String>,
}

/// The client a request is made as.
#[derive(Clone)]
pub struct ClientAuth {
    /// The client's id at the provider.
    pub client_id: String,
    /// A confidential client's secret (sent by HTTP Basic, `client_secret_basic`); a public
    /// client (the desktop app) has none and proves itself by PKCE alone.
    pub secret: Option<String>,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth").field("client_id", &self.client_id).finish_non_exhaustive()
    }
}

/// A token endpoint's answer (its tokens kept out of `Debug` output).
#[derive(Clone, Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// Its type (`Bearer`).
    #[serde(default)]
    pub token_type: String,
    /// Seconds the access token lives.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// A refresh token, when the provider gives one.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// The ID token (always for a code; not always for a refresh).
    #[serde(default)]
    pub id_token: Option<String>,
    /// The scopes granted.
    #[serde(default)]
    pub scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// What an authorization request asks for.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest<'a> {
    /// The client's id.
    pub client_id: &'a str,
    /// Where the provider sends the browser back.
    pub redirect_uri: &'a str,
    /// Space-separated scopes (`openid` is added when missing).
    pub scopes: &'a str,
    /// Binds the answer to this request.
    pub state: &'a str,
    /// Binds the ID token to this request.
    pub nonce: &'a str,
    /// The S256 challenge.
    pub code_challenge: &'a str,
    /// `prompt`, when wanted (`login`, `consent`).
    pub prompt: Option<&'a str>,
}

/// The claims of a token or of userinfo.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims(pub Map<String, Value>);

impl Claims {
    /// A string claim.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// The subject.
    pub fn subject(&self) -> Option<&str> {
        self.str("sub")
    }

    /// The e-mail address, if the provider says it was verified (`email_verified` true, or the
    /// string `"true"` as some providers send it).
    pub fn verified_email(&self) -> Option<&str> {
        let verified = match self.0.get("email_verified") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        };
        verified.then(|| self.str("email")).flatten()
    }

    /// The values of a claim, at a dotted path (`realm_access.roles` reads Keycloak's nested
    /// roles): a string gives one value, an array its strings; anything else none.
    pub fn values(&self, path: &str) -> Vec<String> {
        let mut at: Option<&Value> = None;
        for (i, part) in path.split('.').enumerate() {
            at = if i == 0 { self.0.get(part) } else { at.and_then(|v| v.get(part)) };
        }
        match at {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            Some(Value::Bool(b)) => vec![b.to_string()],
            _ => Vec::new(),
        }
    }

    /// Whether any claim at `path` is present.
    pub fn has(&self, path: &str) -> bool {
        let mut at: Option<&Value> = None;
        for (i, part) in path.split('.').enumerate() {
            at = if i == 0 { self.0.get(part) } else { at.and_then(|v| v.get(part)) };
        }
        at.is_some()
    }

    /// These claims with `more`'s added where these have none.
    pub fn merged(mut self, more: Claims) -> Claims {
        for (k, v) in more.0 {
            self.0.entry(k).or_insert(v);
        }
        self
    }
}

/// What a back-channel logout token names: the provider's session, the user, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct Logout {
    /// The user's subject.
    pub subject: Option<String>,
    /// The provider's session id.
    pub sid: Option<String>,
    /// The token's own id (a token seen once is not taken again).
    pub jti: String,
}

/// A provider's signing keys, fetched when needed.
#[derive(Debug)]
pub struct Keys {
    jwks_uri: String,
    held: tokio::sync::RwLock<KeySet>,
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct KeySet {
    by_id: HashMap<String, DecodingKey>,
    /// Keys without an id (a provider with one key may leave it out).
    unnamed: Vec<DecodingKey>,
    fetched: Option<Instant>,
    /// Key ids tokens named that a fetch did not find, and when.
    missing: HashMap<String, Instant>,
    /// When a fetch last failed.
    failed: Option<Instant>,
}

impl KeySet {
    /// The key `kid` names; with no `kid`, the set's only key.
    fn find(&self, kid: Option<&str>) -> Option<DecodingKey> {
        match kid {
            Some(k) => self.by_id.get(k).cloned(),
            None if self.by_id.len() + self.unnamed.len() == 1 => {
                self.by_id.values().chain(self.unnamed.iter()).next().cloned()
            }
            None => None,
        }
    }
}

fn unknown_key(kid: Option<&str>) -> Error {
    Error::Token(match kid {
        Some(k) => format!("it is signed by a key (\"{k}\") the provider does not publish"),
        None => "it names no key, and the provider publishes more than one".into(),
    })
}

/// The most unknown key ids remembered.
const MAX_MISSING_KEYS: usize = 1000;

impl Keys {
    /// The keys published at `jwks_uri`, fetched on first use.
    pub fn new(jwks_uri: String) -> Keys {
        Keys { jwks_uri, held: Default::default(), fetching: Default::default() }
    }

    /// The key a token's header names, fetching the set when it is missing, stale or lacks
    /// the key. A key still missing after a fetch is not fetched for again for
    /// [`REFETCH_KEYS_AFTER`], and the set is fetched at most once per [`MIN_REFETCH`], so
    /// tokens naming invented keys cannot make the service hammer the provider.
    async fn key(&self, http: &reqwest::Client, kid: Option<&str>) -> Result<DecodingKey> {
        {
            let held = self.held.read().await;
            if held.fetched.is_some_and(|t| t.elapsed() < KEYS_MAX_AGE)
                && let Some(key) = held.find(kid)
            {
                return Ok(key);
            }
            if let Some(k) = kid
                && held.missing.get(k).is_some_and(|t| t.elapsed() < REFETCH_KEYS_AFTER)
            {
                return Err(unknown_key(kid));
            }
        }
        if let Err(e) = self.refetch(http).await {
            // The provider is away: the keys held (if stale) still stand until it is back.
            if let Some(key) = self.held.read().await.find(kid) {
                return Ok(key);
            }
            return Err(e);
        }
        let mut held = self.held.write().await;
        if let Some(key) = held.find(kid) {
            return Ok(key);
        }
        if let Some(k) = kid {
            if held.missing.len() >= MAX_MISSING_KEYS {
                held.missing.clear();
            }
            held.missing.insert(k.to_string(), Instant::now());
        }
        Err(unknown_key(kid))
    }

    /// Fetches the set, unless another request fetched it while this one waited for its turn;
    /// at most once per [`MIN_REFETCH`] (a request waits for the next fetch rather than fail).
    async fn refetch(&self, http: &reqwest::Client) -> Result<()> {
        let asked = Instant::now();
        let _one = self.fetching.lock().await;
        let (last, failed) = {
            let held = self.held.read().await;
            (held.fetched, held.failed)
        };
        if last.is_some_and(|t| t >= asked) {
            return Ok(());
        }
        if failed.is_some_and(|t| t.elapsed() < RETRY_KEYS_AFTER_FAILURE) {
            return Err(Error::Provider {
                url: self.jwks_uri.clone(),
                reason: "its keys could not be fetched a moment ago".into(),
            });
        }
        if let Some(wait) = last.and_then(|t| MIN_REFETCH.checked_sub(t.elapsed())) {
            tokio::time::sleep(wait).await;
        }
        let started = Instant::now();
        let body: Value = match get_json(http, &self.jwks_uri).await {
            Ok(body) => body,
            Err(e) => {
                self.held.write().await.failed = Some(Instant::now());
                return Err(e);
            }
        };
        let keys = body.get("keys").and_then(Value::as_array).ok_or_else(|| Error::Provider {
            url: self.jwks_uri.clone(),
            reason: "its key set has no \"keys\"".into(),
        })?;
        let mut set = KeySet { fetched: Some(started), ..Default::default() };
        for raw in keys.iter().take(MAX_KEYS) {
            // A key for encryption, or of a type not known here, is skipped, not an error.
            let Ok(jwk) = serde_json::from_value::<jsonwebtoken::jwk::Jwk>(raw.clone()) else { continue };
            if matches!(jwk.common.public_key_use, Some(ref u) if *u != jsonwebtoken::jwk::PublicKeyUse::Signature) {
                continue;
            }
            if matches!(jwk.algorithm, jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
            match jwk.common.key_id {
                Some(id) => {
                    set.by_id.insert(id, key);
                }
                None => set.unnamed.push(key),
            }
        }
        *self.held.write().await = set;
        Ok(())
    }
}

/// A provider, as discovered, with its keys.
#[derive(Debug)]
pub struct Provider {
    http: reqwest::Client,
    /// Its metadata.
    pub metadata: Metadata,
    keys: Keys,
}

/// The signature algorithms accepted: public-key ones only.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl Provider {
    /// Reads the metadata of the provider whose issuer is `issuer`, and checks that it names
    /// that issuer and supports PKCE with S256.
    pub async fn discover(http: reqwest::Client, issuer: &str) -> Result<Provider> {
        ring_provider::install();
        let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let metadata: Metadata = serde_json::from_value(get_json(&http, &url).await?)
            .map_err(|e| Error::Provider { url: url.clone(), reason: format!("its metadata does not fit: {e}") })?;
        if metadata.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
            return Err(Error::Provider {
                url,
                reason: format!(
                    "its metadata names the issuer {}, not {issuer}: configure the issuer exactly as the provider names it",
                    metadata.issuer
                ),
            });
        }
        if !metadata.code_challenge_methods_supported.is_empty()
            && !metadata.code_challenge_methods_supported.iter().any(|m| m == "S256")
        {
            return Err(Error::Provider { url, reason: "it does not support PKCE with S256".into() });
        }
        let keys = Keys::new(metadata.jwks_uri.clone());
        Ok(Provider { http, metadata, keys })
    }

    /// The issuer, as the provider names it.
    pub fn issuer(&self) -> &str {
        &self.metadata.issuer
    }

    /// The address a browser is sent to, to sign in.
    pub fn authorization_url(&self, req: &AuthorizationRequest<'_>) -> String {
        let scopes = if req.scopes.split_whitespace().any(|s| s == "openid") {
            req.scopes.to_string()
        } else {
            format!("openid {}", req.scopes).trim().to_string()
        };
        let mut url = url::Url::parse(&self.metadata.authorization_endpoint)
            .unwrap_or_else(|_| url::Url::parse("http://invalid.invalid/").expect("a fixed address"));
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", req.client_id)
                .append_pair("redirect_uri", req.redirect_uri)
                .append_pair("scope", &scopes)
                .append_pair("state", req.state)
                .append_pair("nonce", req.nonce)
                .append_pair("code_challenge", req.code_challenge)
                .append_pair("code_challenge_method", "S256");
            if let Some(p) = req.prompt {
                q.append_pair("prompt", p);
            }
        }
        url.to_string()
    }

    /// Exchanges an authorization code for tokens.
    pub async fn exchange_code(
        &self,
        client: &ClientAuth,
        code: &str,
        redirect_uri: &str,
        verifier: &str,
    ) -> Result<Tokens> {
        self.token_request(
            client,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect_uri),
                ("code_verifier", verifier),
            ],
        )
        .await
    }

    /// New tokens for a refresh token.
    pub async fn refresh(&self, client: &ClientAuth, refresh_token: &str) -> Result<Tokens> {
        self.token_request(client, &[("grant_type", "refresh_token"), ("refresh_token", refresh_token)]).await
    }

    async fn token_request(&self, client: &ClientAuth, fields: &[(&str, &str)]) -> Result<Tokens> {
        let url = self.metadata.token_endpoint.clone();
        let (status, body) = self.form_post(&url, client, fields).await?;
        let value: Value = serde_json::from_slice(&body).map_err(|e| Error::Provider {
            url: url.clone(),
            reason: format!("answered {status} with no JSON: {e}"),
        })?;
        if !status.is_success() {
            return Err(refusal(&value, status));
        }
        serde_json::from_value(value)
            .map_err(|e| Error::Provider { url, reason: format!("its token answer does not fit: {e}") })
    }

    /// Revokes a refresh token (RFC 7009, which also ends the access tokens of its grant at
    /// most providers); `Ok(false)` where the provider has no revocation endpoint.
    pub async fn revoke_refresh_token(&self, client: &ClientAuth, token: &str) -> Result<bool> {
        let Some(url) = self.metadata.revocation_endpoint.clone() else { return Ok(false) };
        let (status, body) =
            self.form_post(&url, client, &[("token", token), ("token_type_hint", "refresh_token")]).await?;
        if status.is_success() {
            return Ok(true);
        }
        Err(refusal(&serde_json::from_slice(&body).unwrap_or(Value::Null), status))
    }

    /// POSTs `fields` as a form to the provider's `url` as `client`: the answer's status and body.
    async fn form_post(
        &self,
        url: &str,
        client: &ClientAuth,
        fields: &[(&str, &str)],
    ) -> Result<(reqwest::StatusCode, Vec<u8>)> {
        // Built before any await: the serializer is not `Send`.
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in fields {
                form.append_pair(k, v);
            }
            if client.secret.is_none() {
                form.append_pair("client_id", &client.client_id);
            }
            form.finish()
        };
        let mut req = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(secret) = &client.secret {
            // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined.
            let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let basic =
                base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", enc(&client.client_id), enc(secret)));
            req = req.header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"));
        }
        let response =
            req.body(form).send().await.map_err(|e| Error::Provider { url: url.to_string(), reason: describe(&e) })?;
        let status = response.status();
        Ok((status, read_capped(response, url).await?))
    }

    /// The claims userinfo gives for `access_token`, when the provider has userinfo.
    pub async fn userinfo(&self, access_token: &str) -> Result<Claims> {
        let Some(url) = self.metadata.userinfo_endpoint.clone() else { return Ok(Claims::default()) };
        let response = self
            .http
            .get(&url)
            .bearer_auth(access_token)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| Error::Provider { url: url.clone(), reason: describe(&e) })?;
        let status = response.status();
        let body = read_capped(response, &url).await?;
        if !status.is_success() {
            return Err(Error::Provider { url, reason: format!("userinfo answered {status}") });
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(map)) => Ok(Claims(map)),
            _ => {
                Err(Error::Provider { url, reason: "userinfo is not a JSON object (a signed one is not read)".into() })
            }
        }
    }

    /// The address that signs the browser out at the provider (RP-initiated logout), then
    /// sends it to `post_logout_redirect_uri`; `None` when the provider has no such endpoint.
    pub fn end_session_url(
        &self,
        id_token_hint: Option<&str>,
        client_id: &str,
        post_logout_redirect_uri: &str,
    ) -> Option<String> {
        let endpoint = self.metadata.end_session_endpoint.as_deref()?;
        let mut url = url::Url::parse(endpoint).ok()?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(hint) = id_token_hint {
                q.append_pair("id_token_hint", hint);
            }
            q.append_pair("client_id", client_id).append_pair("post_logout_redirect_uri", post_logout_redirect_uri);
        }
        Some(url.to_string())
    }

    /// Checks an ID token for `client_id` and the `nonce` of its request; its claims.
    pub async fn verify_id_token(&self, token: &str, client_id: &str, nonce: &str) -> Result<Claims> {
        let (claims, _) = self.verify(token, &[client_id.to_string()], &["exp", "iat", "sub"], true).await?;
        if let Some(azp) = claims.str("azp")
            && azp != client_id
        {
            return Err(Error::Token(format!("it was issued to another client ({azp})")));
        }
        if claims.str("nonce") != Some(nonce) {
            return Err(Error::Token("its nonce is not the one of this sign-in".into()));
        }
        Ok(claims)
    }

    /// Checks an access token sent to the API as a bearer token: one of `audiences` must be
    /// among its audiences. An ID token is refused here, whatever its audience. A token typed
    /// as an access token (RFC 9068's header `typ: at+jwt`, or Keycloak's claim `typ: Bearer`)
    /// is one; otherwise one with Keycloak's `typ: ID`, or with a `nonce` (MGDS always asks
    /// for one, and it goes into ID tokens), is taken for an ID token.
    pub async fn verify_access_token(&self, token: &str, audiences: &[String]) -> Result<Claims> {
        let (claims, header_typ) = self.verify(token, audiences, &["exp", "sub"], true).await?;
        let typed_access = header_typ.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("at+jwt"))
            || claims.str("typ").is_some_and(|t| t.eq_ignore_ascii_case("bearer"));
        let id_token =
            claims.str("typ").is_some_and(|t| t.eq_ignore_ascii_case("id")) || claims.0.contains_key("nonce");
        if !typed_access && id_token {
            return Err(Error::Token("it is an ID token; send an access token".into()));
        }
        Ok(claims)
    }

    /// Checks a back-channel logout token sent to `client_id`.
    pub async fn verify_logout_token(&self, token: &str, client_id: &str) -> Result<Logout> {
        let (claims, header_typ) = self.verify(token, &[client_id.to_string()], &["iat", "jti"], false).await?;
        if header_typ
            .as_deref()
            .is_some_and(|t| !t.eq_ignore_ascii_case("logout+jwt") && !t.eq_ignore_ascii_case("jwt"))
        {
            return Err(Error::Token("it is not typed as a logout token".into()));
        }
        let iat = claims.0.get("iat").and_then(Value::as_u64).unwrap_or_default();
        let now = jsonwebtoken::get_current_timestamp();
        if iat > now + LEEWAY_SECS || iat + LOGOUT_TOKEN_LIFE_SECS + LEEWAY_SECS < now {
            return Err(Error::Token("it was not issued in the last ten minutes".into()));
        }
        if claims.0.get("exp").and_then(Value::as_u64).is_some_and(|exp| exp + LEEWAY_SECS < now) {
            return Err(Error::Token("it has expired".into()));
        }
        let event = claims.0.get("events").and_then(|e| e.get(BACKCHANNEL_LOGOUT_EVENT));
        if !matches!(event, Some(Value::Object(_))) {
            return Err(Error::Token("it is not a back-channel logout token (no logout event)".into()));
        }
        if claims.0.contains_key("nonce") {
            return Err(Error::Token("a logout token carries no nonce".into()));
        }
        let logout = Logout {
            subject: claims.str("sub").map(str::to_string),
            sid: claims.str("sid").map(str::to_string),
            jti: claims.str("jti").unwrap_or_default().to_string(),
        };
        if logout.subject.is_none() && logout.sid.is_none() {
            return Err(Error::Token("it names neither a user (sub) nor a session (sid)".into()));
        }
        Ok(logout)
    }

    async fn verify(
        &self,
        token: &str,
        audiences: &[String],
        required: &[&str],
        expires: bool,
    ) -> Result<(Claims, Option<String>)> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Error::Token(format!("it is longer than {MAX_TOKEN_BYTES} bytes")));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| Error::Token(format!("its header: {e}")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Error::Token(format!("it is signed with {:?}, which is not accepted", header.alg)));
        }
        let key = self.keys.key(&self.http, header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = LEEWAY_SECS;
        validation.validate_exp = expires;
        validation.validate_nbf = true;
        validation.set_issuer(&[self.metadata.issuer.as_str()]);
        validation.set_audience(audiences);
        let mut spec: Vec<&str> = vec!["iss", "aud"];
        spec.extend(required.iter().copied().filter(|c| ["exp", "nbf", "sub", "iss", "aud"].contains(c)));
        validation.set_required_spec_claims(&spec);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            Error::Token(match e.kind() {
                K::ExpiredSignature => "it has expired".into(),
                K::ImmatureSignature => "it is not valid yet".into(),
                K::InvalidIssuer => "it was issued by another issuer".into(),
                K::InvalidAudience => format!("it is not meant for {}", audiences.join(" or ")),
                K::InvalidSignature => "its signature does not match the provider's key".into(),
                K::MissingRequiredClaim(c) => format!("it has no \"{c}\" claim"),
                _ => format!("it could not be read ({e})"),
            })
        })?;
        let claims = Claims(data.claims);
        for c in required {
            if !claims.0.contains_key(*c) {
                return Err(Error::Token(format!("it has no \"{c}\" claim")));
            }
        }
        Ok((claims, header.typ))
    }
}

fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// An OAuth error answer, as an error.
fn refusal(value: &Value, status: reqwest::StatusCode) -> Error {
    Error::Refused {
        error: value.get("error").and_then(Value::as_str).map_or_else(|| status.to_string(), |e| cap(e, 200)),
        description: value.get("error_description").and_then(Value::as_str).map(|d| cap(d, 500)),
    }
}

fn cap(s: &str, chars: usize) -> String {
    s.chars().take(chars).collect()
}

/// Seconds since the Unix epoch, the clock tokens are checked by.
pub fn unix_now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// The body of `response` from `url`, refused past [`MAX_ANSWER_BYTES`].
pub async fn read_capped(mut response: reqwest::Response, url: &str) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) =
        response.chunk().await.map_err(|e| Error::Provider { url: url.to_string(), reason: describe(&e) })?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Error::Provider {
                url: url.to_string(),
                reason: format!("its answer is longer than {} KiB", MAX_ANSWER_BYTES / 1024),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value> {
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| Error::Provider { url: url.to_string(), reason: describe(&e) })?;
    let status = response.status();
    if !status.is_success() {
        return Err(Error::Provider { url: url.to_string(), reason: format!("it answered {status}") });
    }
    let body = read_capped(response, url).await?;
    serde_json::from_slice(&body)
        .map_err(|e| Error::Provider { url: url.to_string(), reason: format!("not JSON: {e}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(p.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert_ne!(Pkce::new().verifier, Pkce::new().verifier);
        assert_eq!(random_token().len(), 43);
    }

    #[test]
    fn jwts_are_told_from_api_keys() {
        assert!(looks_like_jwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"));
        assert!(!looks_like_jwt("0123456789abcdef0123456789abcdef"));
        assert!(!looks_like_jwt("eyJ.a.b.c"));
        assert!(!looks_like_jwt("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2 ln"));
    }

    #[test]
    fn claims_are_read_at_dotted_paths() {
        let c = Claims(
            serde_json::json!({"sub": "s", "email": "a@b", "email_verified": "true",
                "groups": ["x", "y", 3], "realm_access": {"roles": ["admin"]}, "hd": "lab.example"})
            .as_object()
            .unwrap()
            .clone(),
        );
        assert_eq!(c.values("groups"), vec!["x", "y"]);
        assert_eq!(c.values("realm_access.roles"), vec!["admin"]);
        assert_eq!(c.values("hd"), vec!["lab.example"]);
        assert!(c.values("nothing.here").is_empty());
        assert_eq!(c.verified_email(), Some("a@b"));
        let unverified = Claims(serde_json::json!({"email": "a@b"}).as_object().unwrap().clone());
        assert_eq!(unverified.verified_email(), None);
    }
}
