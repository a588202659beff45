//! Single sign-on with OpenID Connect: the service's configuration of one provider, the
//! provider as discovered, where its claims place a user, and the provider's access tokens
//! taken as bearer tokens by the API (the spec's JWT authentication).
//!
//! - Browsers sign in by the authorization code flow with PKCE as a confidential client
//!   (`routes::sso`); MGDS Desktop and the command line sign in as a native public client with
//!   a loopback redirect (RFC 8252) and then send the provider's access token.
//! - An access token is taken when the provider signed it, for one of the configured
//!   audiences, unexpired (see `mgds_oidc`). It is told from an API key by its form: a JWT has
//!   three base64url parts; a key is hex. Tokens checked are kept for a minute (at most
//!   [`MAX_TOKENS_KEPT`]), so a burst of requests costs one check.
//! - The provider is discovered at first use, not at start: the service starts while the
//!   provider is down, and single sign-on works once it is up (a failed discovery is tried again
//!   after [`RETRY_DISCOVERY`]).

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgds_api::Role;
use mgds_oidc::{Claims, Provider};
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ApiResult};
use crate::store::caller::User;
use crate::store::db::Pool;
use crate::store::identities::{self, Linking, Placement};

/// The soonest a failed discovery of the provider is tried again.
pub const RETRY_DISCOVERY: Duration = Duration::from_secs(10);

/// The most checked access tokens kept.
pub const MAX_TOKENS_KEPT: usize = 10_000;

/// How long a checked access token is taken without checking it again (never past its expiry).
const KEEP_TOKEN: Duration = Duration::from_secs(60);

/// Scopes asked for when the configuration names none.
pub const DEFAULT_SCOPES: &str = "openid email profile";

/// A rule placing users whose claim holds a value in an organisation with a role:
/// `CLAIM:VALUE=ORGANISATION:ROLE` (`groups:lab-admins=Microbiology:admin`). The claim may be a
/// dotted path into the token's claims (`realm_access.roles`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementRule {
    /// The claim read.
    pub claim: String,
    /// The value it must hold (one of its values, for a list).
    pub value: String,
    /// The organisation's name (made when missing).
    pub organization: String,
    /// The role given.
    pub role: Role,
}

impl FromStr for PlacementRule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "write a placement as CLAIM:VALUE=ORGANISATION:ROLE, e.g. groups:lab-admins=Microbiology:admin";
        let (test, target) = s.split_once('=').ok_or(usage)?;
        let (claim, value) = test.split_once(':').ok_or(usage)?;
        let (organization, role) = target.rsplit_once(':').ok_or(usage)?;
        let role = match Role::parse(role.trim()) {
            Some(Role::Owner) => {
                return Err(
                    "a placement gives member or admin: owner is the operator's to give (mgds admin user role)".into(),
                );
            }
            Some(r) => r,
            None => return Err(format!("the role \"{role}\" is not member or admin ({usage})")),
        };
        let (claim, value, organization) = (claim.trim(), value.trim(), organization.trim());
        if claim.is_empty() || value.is_empty() || organization.is_empty() {
            return Err(usage.into());
        }
        Ok(PlacementRule { claim: claim.into(), value: value.into(), organization: organization.into(), role })
    }
}

/// The service's single sign-on, as `mgds serve --sso-*` configures it.
#[derive(Clone, Default)]
pub struct SsoConfig {
    /// The provider's issuer (`https://keycloak.lab.example/realms/lab`).
    pub issuer: String,
    /// What the sign-in button names (`Sign in with ...`).
    pub display_name: String,
    /// The service's client at the provider (a confidential web client).
    pub client_id: String,
    /// Its secret.
    pub client_secret: Option<String>,
    /// The public native client MGDS Desktop and the command line sign in as; `None`: they
    /// cannot sign in by single sign-on.
    pub native_client_id: Option<String>,
    /// The audiences an access token sent to the API may have; none: bearer JWTs are refused.
    pub audiences: Vec<String>,
    /// The scopes asked for.
    pub scopes: String,
    /// Whether a verified e-mail address links an existing user on first sign-in.
    pub link_verified_email: bool,
    /// Whether the provider's e-mail addresses count as verified when it does not say (Entra
    /// ID, whose addresses IT sets). Otherwise only a verified address makes a new user.
    pub email_trusted: bool,
    /// Where claims place users, tried in order.
    pub placements: Vec<PlacementRule>,
    /// Where users no rule places go, as members; `None`: nowhere (they are refused when rules
    /// exist, and not made when none do).
    pub default_organization: Option<String>,
}

impl std::fmt::Debug for SsoConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("native_client_id", &self.native_client_id)
            .field("audiences", &self.audiences)
            .field("placements", &self.placements)
            .field("default_organization", &self.default_organization)
            .finish_non_exhaustive()
    }
}

impl SsoConfig {
    /// Where these rules place a user with `claims`: the organisation of the first rule that
    /// matches, with the highest role any matching rule gives in it.
    pub fn placement(&self, claims: &Claims) -> Placement {
        let matches = |r: &&PlacementRule| claims.values(&r.claim).contains(&r.value);
        if let Some(first) = self.placements.iter().find(matches) {
            let role = self
                .placements
                .iter()
                .filter(matches)
                .filter(|r| r.organization == first.organization)
                .map(|r| r.role)
                .max()
                .unwrap_or(first.role);
            return Placement::In(first.organization.clone(), role);
        }
        match (&self.default_organization, self.placements.is_empty()) {
            (Some(org), _) => Placement::ByDefault(org.clone()),
            (None, false) => Placement::Nowhere,
            (None, true) => Placement::Unsaid,
        }
    }

    /// The claims the rules read, and `email`.
    pub fn claims_read(&self) -> Vec<String> {
        let mut read: Vec<String> = vec!["email".into()];
        if !self.email_trusted {
            read.push("email_verified".into());
        }
        for r in &self.placements {
            if !read.contains(&r.claim) {
                read.push(r.claim.clone());
            }
        }
        read
    }

    /// Whether `claims` hold every claim the rules read, the e-mail address and whether it is
    /// verified (a token without them is placed from userinfo instead).
    pub fn claims_complete(&self, claims: &Claims) -> bool {
        self.placements.iter().all(|r| claims.has(&r.claim))
            && claims.str("email").is_some()
            && (self.email_trusted || claims.has("email_verified"))
    }

    fn linking(&self) -> Linking {
        Linking { by_verified_email: self.link_verified_email }
    }
}

/// Single sign-on at run time: the configuration, the provider once discovered, and the
/// access tokens checked lately.
#[derive(Debug)]
pub struct Sso {
    /// The configuration.
    pub config: SsoConfig,
    http: reqwest::Client,
    provider: tokio::sync::Mutex<(Option<Arc<Provider>>, Option<Instant>)>,
    tokens: Mutex<HashMap<[u8; 32], (String, Instant)>>,
    /// Sign-ins begun, per address ([`SIGN_INS_PER_ADDRESS`] a minute).
    pub starts: crate::auth::Window<std::net::IpAddr>,
    /// Back-channel logout tokens taken (by `jti`), while they could be sent again.
    logouts: Mutex<HashMap<String, Instant>>,
}

/// Sign-ins one address may begin in a minute (a lab behind one address signs in together in
/// the morning; a flood from one address waits).
pub const SIGN_INS_PER_ADDRESS: u32 = 120;

/// The most back-channel logout tokens remembered.
const MAX_LOGOUTS_KEPT: usize = 10_000;

impl Sso {
    /// Single sign-on with `config`.
    pub fn new(config: SsoConfig) -> Result<Sso, String> {
        if config.issuer.is_empty() || config.client_id.is_empty() {
            return Err("single sign-on needs the provider's issuer and MGDS's client id there".into());
        }
        let http = mgds_oidc::http_client(&format!("MGDS/{}", env!("CARGO_PKG_VERSION")))
            .map_err(|e| format!("cannot make the HTTP client for single sign-on: {e}"))?;
        Ok(Sso {
            config,
            http,
            provider: Default::default(),
            tokens: Default::default(),
            starts: crate::auth::Window::new(SIGN_INS_PER_ADDRESS, Duration::from_secs(60)),
            logouts: Default::default(),
        })
    }

    /// The provider, discovered on first use.
    pub async fn provider(&self) -> ApiResult<Arc<Provider>> {
        let mut held = self.provider.lock().await;
        if let Some(p) = &held.0 {
            return Ok(p.clone());
        }
        if let Some(failed) = held.1
            && failed.elapsed() < RETRY_DISCOVERY
        {
            return Err(self.unavailable("it could not be reached a moment ago"));
        }
        match Provider::discover(self.http.clone(), &self.config.issuer).await {
            Ok(p) => {
                let p = Arc::new(p);
                *held = (Some(p.clone()), None);
                Ok(p)
            }
            Err(e) => {
                tracing::warn!(error = %e, "single sign-on: the provider cannot be used");
                held.1 = Some(Instant::now());
                Err(self.unavailable(&e.to_string()))
            }
        }
    }

    fn unavailable(&self, why: &str) -> ApiError {
        ApiError::ServiceUnavailable(format!(
            "single sign-on with {} is not available now ({why}); try again in a minute, or sign in with your password",
            self.config.display_name
        ))
    }

    /// The user a provider's sign-in with `claims` is, linked or made as configured.
    pub async fn user_for(&self, db: &Pool, issuer: &str, claims: &Claims) -> ApiResult<User> {
        let subject =
            claims.subject().ok_or_else(|| ApiError::Unauthorized("the provider's token names no subject".into()))?;
        let account = identities::Account {
            issuer,
            subject,
            email: claims.str("email"),
            email_verified: claims.verified_email().is_some()
                || (self.config.email_trusted && !claims.0.contains_key("email_verified")),
        };
        identities::sign_in(
            db,
            &account,
            &self.config.placement(claims),
            self.config.linking(),
            &self.config.display_name,
        )
        .await
    }

    /// The user an access token sent as a bearer token is. A token for a user not linked yet
    /// links (or makes) them as a browser's sign-in would, with the claims of the token and,
    /// where it lacks what the rules read, of userinfo.
    pub async fn user_for_token(&self, db: &Pool, token: &str) -> ApiResult<User> {
        if self.config.audiences.is_empty() {
            return Err(ApiError::Unauthorized(
                "this service takes no access tokens from its single sign-on provider (no audience is configured); \
                 use an API key"
                    .into(),
            ));
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let kept = self.tokens.lock().unwrap_or_else(|p| p.into_inner()).get(&digest).cloned();
        if let Some((user_id, until)) = kept
            && until > Instant::now()
        {
            return match crate::store::caller::by_id(db, &user_id).await? {
                Some(user) => Ok(user),
                None => Err(disabled()),
            };
        }
        let provider = self.provider().await?;
        let mut claims = provider.verify_access_token(token, &self.config.audiences).await.map_err(|e| match e {
            // The provider's keys out of reach is not the caller's fault (and not counted as a failure).
            mgds_oidc::Error::Provider { .. } => self.unavailable(&e.to_string()),
            other => ApiError::Unauthorized(format!("{other}; sign in again")),
        })?;
        let issuer = provider.issuer().to_string();
        let subject = claims.subject().unwrap_or_default().to_string();
        let linked = identities::find(db, &issuer, &subject).await?;
        if matches!(linked, Some((_, true))) {
            return Err(disabled());
        }
        let user = match linked {
            // Nothing to place by: a linked user is who they are.
            Some((user, _)) if self.config.placements.is_empty() => user,
            // A user not linked yet is linked or made, and with rules every token places its
            // user again (a group left at the provider takes effect with the next token), from
            // the token's claims or, where it lacks them, from userinfo.
            _ => {
                if !self.config.claims_complete(&claims) {
                    let more = provider.userinfo(token).await.map_err(|e| {
                        ApiError::Forbidden(format!(
                            "the provider's access token lacks what MGDS places users by ({}), and its userinfo \
                             did not give it ({e}); ask your lab's IT to add these claims to the access tokens for MGDS",
                            self.config.claims_read().join(", ")
                        ))
                    })?;
                    if more.subject().is_some_and(|s| s != subject) {
                        return Err(ApiError::Unauthorized("the provider's userinfo names another user".into()));
                    }
                    claims = claims.merged(more);
                }
                self.user_for(db, &issuer, &claims).await?
            }
        };
        let exp = claims.0.get("exp").and_then(serde_json::Value::as_u64).unwrap_or_default();
        let left = Duration::from_secs(exp.saturating_sub(mgds_oidc::unix_now()));
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if tokens.len() >= MAX_TOKENS_KEPT {
            let now = Instant::now();
            tokens.retain(|_, (_, until)| *until > now);
            if tokens.len() >= MAX_TOKENS_KEPT {
                tokens.clear();
            }
        }
        tokens.insert(digest, (user.id.clone(), Instant::now() + KEEP_TOKEN.min(left)));
        Ok(user)
    }

    /// The address that ends the provider's session of a browser signing out of `session_id`
    /// (RP-initiated logout), if single sign-on made that session and the provider has such an
    /// endpoint; the provider then sends the browser to `public_url`.
    pub async fn end_session_url(&self, db: &Pool, session_id: &str, public_url: &str) -> ApiResult<Option<String>> {
        let Some(id_token) = crate::store::sessions::id_token(db, session_id).await? else { return Ok(None) };
        let Ok(provider) = self.provider().await else { return Ok(None) };
        Ok(provider.end_session_url(Some(&id_token), &self.config.client_id, &format!("{public_url}/")))
    }

    /// Whether the back-channel logout token `jti` is new (and remembers it): one sent again
    /// within its life is not taken twice.
    pub fn first_logout(&self, jti: &str) -> bool {
        let mut seen = self.logouts.lock().unwrap_or_else(|p| p.into_inner());
        let life = Duration::from_secs(mgds_oidc::LOGOUT_TOKEN_LIFE_SECS + 2 * mgds_oidc::LEEWAY_SECS);
        if seen.len() >= MAX_LOGOUTS_KEPT {
            seen.retain(|_, at| at.elapsed() < life);
            if seen.len() >= MAX_LOGOUTS_KEPT {
                seen.clear();
            }
        }
        seen.insert(jti.to_string(), Instant::now()).is_none_or(|at| at.elapsed() >= life)
    }

    /// Forgets the tokens kept for `user_id` (their account was disabled or their sessions
    /// ended), so the next request checks again.
    pub fn forget_user(&self, user_id: &str) {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, (u, _)| u != user_id);
    }
}

fn disabled() -> ApiError {
    ApiError::Unauthorized("this account is disabled; ask an admin of your organisation to enable it again".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(v: serde_json::Value) -> Claims {
        Claims(v.as_object().unwrap().clone())
    }

    #[test]
    fn placements_are_read_and_applied_in_order() {
        let rule: PlacementRule = "groups:lab-admins=Microbiology: admin".parse().unwrap();
        assert_eq!(rule.organization, "Microbiology");
        assert_eq!(rule.role, Role::Admin);
        assert!("groups=Microbiology:admin".parse::<PlacementRule>().is_err());
        assert!("groups:x=Microbiology:boss".parse::<PlacementRule>().unwrap_err().contains("boss"));
        let config = SsoConfig {
            placements: vec![
                "groups:lab=Microbiology:member".parse().unwrap(),
                "groups:lab-admins=Microbiology:admin".parse().unwrap(),
                "groups:virology=Virology:admin".parse().unwrap(),
            ],
            ..Default::default()
        };
        let both = claims(serde_json::json!({"groups": ["virology", "lab", "lab-admins"]}));
        assert_eq!(config.placement(&both), Placement::In("Microbiology".into(), Role::Admin));
        let none = claims(serde_json::json!({"groups": ["other"]}));
        assert_eq!(config.placement(&none), Placement::Nowhere);
        let fallback = SsoConfig { default_organization: Some("Lab".into()), ..config.clone() };
        assert_eq!(fallback.placement(&none), Placement::ByDefault("Lab".into()));
        assert!("groups:x=Lab:owner".parse::<PlacementRule>().unwrap_err().contains("operator"));
        assert_eq!(SsoConfig::default().placement(&none), Placement::Unsaid);
    }
}
