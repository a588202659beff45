//! Profiles signed in by single sign-on, for MGDS Desktop and the command line alike.
//!
//! - Signing in asks the service which provider it uses (`GET /api/v1/sso`), opens the system
//!   browser at the provider and waits for it on loopback (RFC 8252, see
//!   [`mgds_oidc::native`]), as the provider's public client for native apps.
//! - The keychain keeps the provider's refresh token under the profile's name, where a key
//!   profile keeps its API key; `config.toml` says which the profile holds ([`SsoProfile`]).
//! - Connecting exchanges the refresh token for an access token, which every request sends as
//!   `Bearer`; the token is renewed before it expires for as long as a client holds it. A
//!   refresh token the provider replaces is stored at once.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mgds_client::{AccessToken, Client};
use mgds_oidc::{ClientAuth, Provider, Tokens};
use serde::Deserialize;

pub use crate::profile::SsoProfile;
use crate::profile::{self, KeyStore};

/// How long a sign-in waits for the browser to come back.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(5 * 60);

/// The shortest wait between renewals of an access token.
const MIN_RENEW_AFTER: Duration = Duration::from_secs(10);

/// What a service says of its single sign-on (`GET /api/v1/sso`).
#[derive(Debug, Clone, Deserialize)]
pub struct About {
    /// The name its sign-in button shows.
    pub name: String,
    /// The provider's issuer.
    pub issuer: String,
    /// The public client apps sign in as, if the service has one.
    #[serde(default)]
    pub native_client_id: Option<String>,
    /// The scopes apps ask for.
    pub scopes: String,
    /// Whether its API takes the provider's access tokens.
    #[serde(default)]
    pub takes_access_tokens: bool,
}

fn http() -> Result<reqwest::Client> {
    mgds_oidc::http_client(&format!("MGDS/{}", env!("CARGO_PKG_VERSION"))).context("cannot make an HTTP client")
}

/// The single sign-on of the service at `base_url`; `None` when it has none.
pub async fn about(base_url: &str) -> Result<Option<About>> {
    let url = format!("{}/api/v1/sso", base_url.trim_end_matches('/'));
    let response = http()?.get(&url).send().await.with_context(|| format!("cannot reach {base_url}"))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !response.status().is_success() {
        bail!("{url} answered {}", response.status());
    }
    let body = mgds_oidc::read_capped(response, &url).await?;
    Ok(Some(
        serde_json::from_slice(&body).with_context(|| format!("{url} did not answer what an MGDS service answers"))?,
    ))
}

/// A finished sign-in (its tokens kept out of `Debug` output).
#[derive(Debug)]
pub struct SignedIn {
    /// What the profile keeps.
    pub profile: SsoProfile,
    /// The provider's tokens.
    pub tokens: Tokens,
    /// The e-mail address the provider gave, if any.
    pub email: Option<String>,
}

/// Opens `url` in the system browser (`$BROWSER` first, on Linux).
pub fn open_in_browser(url: &str) -> Result<()> {
    webbrowser::open(url).with_context(|| "cannot open a web browser".to_string())
}

/// Signs in at the provider of the service at `base_url`: `open` is given the address to show
/// in a browser; the browser comes back within [`SIGN_IN_WAIT`].
pub async fn sign_in(base_url: &str, open: impl FnOnce(&str) -> Result<()>) -> Result<SignedIn> {
    let about = about(base_url)
        .await?
        .with_context(|| format!("the service at {base_url} has no single sign-on; sign in with an API key"))?;
    let Some(client_id) = about.native_client_id.clone() else {
        bail!(
            "the service at {base_url} signs browsers in with {}, but not apps: its operator has not set a client \
             for them (mgds serve --sso-native-client-id); sign in with an API key",
            about.name
        );
    };
    if !about.takes_access_tokens {
        bail!(
            "the service at {base_url} takes no access tokens from {} (mgds serve --sso-audience); sign in with an API key",
            about.name
        );
    }
    let provider = Provider::discover(http()?, &about.issuer).await?;
    let begun = mgds_oidc::native::LoopbackSignIn::begin(&provider, &client_id, &about.scopes).await?;
    open(&begun.url)?;
    let done = begun.finish(&provider, SIGN_IN_WAIT).await?;
    if done.tokens.refresh_token.is_none() {
        bail!(
            "{} signed you in but gave no refresh token, so MGDS could not stay signed in; ask your lab's IT to allow \
             refresh tokens (offline access) for the client {client_id}",
            about.name
        );
    }
    Ok(SignedIn {
        profile: SsoProfile { issuer: provider.issuer().to_string(), client_id },
        email: done.claims.str("email").map(str::to_string),
        tokens: done.tokens,
    })
}

/// Keeps a sign-in's refresh token for `profile` (keychain, or a private file if allowed).
pub fn keep(dir: &Path, profile: &str, signed_in: &SignedIn, allow_file: bool) -> Result<KeyStore> {
    let refresh = signed_in.tokens.refresh_token.as_deref().context("no refresh token")?;
    profile::store_key(dir, profile, refresh, allow_file)
}

/// A client of the service at `base_url` as the single sign-on profile `name`: the refresh
/// token kept for it is exchanged for an access token, renewed while the client is in use.
pub async fn connect(dir: &Path, name: &str, base_url: &str, sso: &SsoProfile) -> Result<Client> {
    let again = format!("sign in again (mgds login --sso --profile {name}, or the Profiles screen of MGDS Desktop)");
    let provider = Provider::discover(http()?, &sso.issuer).await?;
    let renewal = Renewal {
        provider,
        client: ClientAuth { client_id: sso.client_id.clone(), secret: None },
        dir: dir.to_path_buf(),
        name: name.to_string(),
    };
    let tokens = renewal.renew().await.map_err(|e| match e {
        Renewed::Ended(why) => anyhow::anyhow!("the single sign-on of the profile {name:?} has ended ({why}); {again}"),
        Renewed::Failed(e) => e,
    })?;
    let token = AccessToken::new(tokens.access_token.clone());
    let api = Client::builder(base_url).access_token(token.clone()).build()?;
    tokio::spawn(renewal.run(token, tokens.expires_in));
    Ok(api)
}

/// Renews a profile's access token with the refresh token the keychain keeps.
struct Renewal {
    provider: Provider,
    client: ClientAuth,
    dir: std::path::PathBuf,
    name: String,
}

/// Why a renewal did not give a token.
enum Renewed {
    /// The provider no longer takes the refresh token (or none is kept): sign in again.
    Ended(String),
    /// Something that may pass (the provider out of reach).
    Failed(anyhow::Error),
}

/// How long a renewal that failed for a reason that may pass waits before trying again.
const RENEW_AGAIN_AFTER: Duration = Duration::from_secs(30);

impl Renewal {
    /// New tokens for the refresh token kept now, and the replacement kept. Processes of one
    /// user (MGDS Desktop and several `mgds` commands) take turns by a lock file, so that a
    /// refresh token the provider replaces is never sent twice (which would end the sign-in).
    async fn renew(&self) -> std::result::Result<Tokens, Renewed> {
        let path = self.dir.join("keys").join(format!("{}.refresh.lock", self.name));
        let _turn = tokio::task::spawn_blocking(move || -> std::io::Result<std::fs::File> {
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)?;
            }
            let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
            file.lock()?;
            Ok(file)
        })
        .await
        .map_err(|e| Renewed::Failed(e.into()))?
        .map_err(|e| Renewed::Failed(anyhow::Error::from(e).context("cannot take the profile's sign-in lock")))?;
        let Some((refresh, store)) = profile::load_key(&self.dir, &self.name).map_err(Renewed::Failed)? else {
            return Err(Renewed::Ended("nothing is kept for it".into()));
        };
        let tokens = self.provider.refresh(&self.client, &refresh).await.map_err(|e| match e {
            mgds_oidc::Error::Refused { .. } => Renewed::Ended(e.to_string()),
            other => Renewed::Failed(other.into()),
        })?;
        if let Some(new) = &tokens.refresh_token
            && *new != refresh
        {
            profile::store_key(&self.dir, &self.name, new, store == KeyStore::File).map_err(Renewed::Failed)?;
        }
        Ok(tokens)
    }

    /// Renews `token` before it expires while a client holds it; a failure that may pass is
    /// tried again, a sign-in the provider ended stops it (requests then answer 401, and the
    /// app asks to sign in again).
    async fn run(self, token: AccessToken, mut expires_in: Option<u64>) {
        let mut wait = (Duration::from_secs(expires_in.unwrap_or(300)) * 4 / 5).max(MIN_RENEW_AFTER);
        loop {
            tokio::time::sleep(wait).await;
            if !token.is_held() {
                return;
            }
            match self.renew().await {
                Ok(t) => {
                    token.set(t.access_token.clone());
                    expires_in = t.expires_in;
                    // At four fifths of its life (five minutes when the provider does not say).
                    wait = (Duration::from_secs(expires_in.unwrap_or(300)) * 4 / 5).max(MIN_RENEW_AFTER);
                }
                Err(Renewed::Failed(e)) => {
                    tracing::warn!(error = %e, profile = %self.name, "single sign-on could not be renewed; trying again");
                    wait = RENEW_AGAIN_AFTER;
                }
                Err(Renewed::Ended(why)) => {
                    tracing::warn!(reason = %why, profile = %self.name, "the provider ended the single sign-on");
                    return;
                }
            }
        }
    }
}

/// Signs the profile `name` out at its provider: its refresh token is revoked there (RFC 7009)
/// where the provider can, so that a copy of it is worth nothing. The kept token itself is the
/// caller's to forget. Answers whether the provider revoked it.
pub async fn sign_out(dir: &Path, name: &str, sso: &SsoProfile) -> Result<bool> {
    let Some((refresh, _)) = profile::load_key(dir, name)? else { return Ok(false) };
    let provider = Provider::discover(http()?, &sso.issuer).await?;
    let client = ClientAuth { client_id: sso.client_id.clone(), secret: None };
    Ok(provider.revoke_refresh_token(&client, &refresh).await?)
}
