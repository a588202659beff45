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
    Ok(Some(response.json().await.with_context(|| format!("{url} did not answer what an MGDS service answers"))?))
}

/// A finished sign-in.
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
    let Some((refresh, store)) = profile::load_key(dir, name)? else {
        bail!("there is no single sign-on kept for the profile {name:?}; {again}");
    };
    let provider = Provider::discover(http()?, &sso.issuer).await?;
    let client = ClientAuth { client_id: sso.client_id.clone(), secret: None };
    let tokens = provider.refresh(&client, &refresh).await.map_err(|e| match e {
        mgds_oidc::Error::Refused { .. } => {
            anyhow::anyhow!("the single sign-on of the profile {name:?} has ended ({e}); {again}")
        }
        other => other.into(),
    })?;
    if let Some(new) = &tokens.refresh_token
        && *new != refresh
    {
        profile::store_key(dir, name, new, store == KeyStore::File)?;
    }
    let token = AccessToken::new(tokens.access_token.clone());
    let api = Client::builder(base_url).access_token(token.clone()).build()?;
    let renewal = Renewal {
        provider,
        client,
        dir: dir.to_path_buf(),
        name: name.to_string(),
        refresh: tokens.refresh_token.clone().unwrap_or(refresh),
        in_file: store == KeyStore::File,
    };
    tokio::spawn(renewal.run(token, tokens.expires_in));
    Ok(api)
}

/// Renews an access token while a client holds it.
struct Renewal {
    provider: Provider,
    client: ClientAuth,
    dir: std::path::PathBuf,
    name: String,
    refresh: String,
    in_file: bool,
}

impl Renewal {
    async fn run(mut self, token: AccessToken, mut expires_in: Option<u64>) {
        loop {
            // At four fifths of its life (five minutes when the provider does not say).
            let life = Duration::from_secs(expires_in.unwrap_or(300));
            tokio::time::sleep((life * 4 / 5).max(MIN_RENEW_AFTER)).await;
            if !token.is_held() {
                return;
            }
            match self.provider.refresh(&self.client, &self.refresh).await {
                Ok(t) => {
                    token.set(t.access_token.clone());
                    expires_in = t.expires_in;
                    if let Some(new) = t.refresh_token
                        && new != self.refresh
                    {
                        if let Err(e) = profile::store_key(&self.dir, &self.name, &new, self.in_file) {
                            tracing::warn!(error = %e, "cannot keep the renewed refresh token");
                        }
                        self.refresh = new;
                    }
                }
                Err(e) => {
                    // The requests that follow answer 401 and the app asks to sign in again.
                    tracing::warn!(error = %e, profile = %self.name, "single sign-on could not be renewed");
                    return;
                }
            }
        }
    }
}
