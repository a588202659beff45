//! The connection to a service: the current profile's client, and the embedded local service,
//! started once on first use and kept for the life of the app. Profiles and keys are those of
//! the `mgds` command (`mgds-profiles`), so the app and the command line see the same ones.

use std::path::PathBuf;

use mgds_client::Client;
use mgds_profiles::local::{self, Local};
use mgds_profiles::profile::{self, Config, KeyStore, LOCAL, Profile};
use serde::Serialize;
use tokio::sync::{Mutex, OnceCell};
use ts_rs::TS;

pub use mgds_app::connection::ConnectionView;

use crate::error::{CmdError, CmdResult};

/// Where the app keeps things.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The embedded local service's data folder (`MGDS_DATA_DIR`, else the OS per-user data folder).
    pub data_dir: PathBuf,
    /// The profiles folder (`MGDS_CONFIG_DIR`, else the OS per-user configuration folder).
    pub config_dir: PathBuf,
}

impl Paths {
    /// The folders from the environment and the OS.
    pub fn from_env() -> anyhow::Result<Paths> {
        use anyhow::Context;
        let data_dir = std::env::var_os("MGDS_DATA_DIR")
            .map(PathBuf::from)
            .or_else(mgds_server::default_data_dir)
            .context("this system has no per-user data folder; set MGDS_DATA_DIR")?;
        Ok(Paths { data_dir, config_dir: profile::config_dir()? })
    }
}

/// A client for the current profile.
#[derive(Clone)]
pub struct Connected {
    /// The profile's name (`local` for the embedded service).
    pub profile: String,
    /// The service's base address.
    pub base_url: String,
    /// The client.
    pub client: Client,
    /// Whether this is the embedded local service.
    pub local: bool,
}

/// The app's connection state (managed state).
pub struct Session {
    paths: Paths,
    local: OnceCell<Local>,
    current: Mutex<Option<Connected>>,
}

/// One profile, as the profiles screen lists it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ProfileView {
    /// Its name.
    pub name: String,
    /// Its base address (`local` for the embedded service).
    pub base_url: String,
    /// Whether it is the one in use.
    pub current: bool,
    /// Whether it signs in by the service's single sign-on (not an API key).
    pub sso: bool,
}

/// The profiles screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ProfilesView {
    /// All profiles, the local one first.
    pub profiles: Vec<ProfileView>,
    /// Why the OS keychain cannot be used, when it cannot.
    pub keychain_problem: Option<String>,
}

/// What the UI sends to add a remote profile.
#[derive(Debug, Clone, serde::Deserialize, TS)]
pub struct NewProfile {
    /// Its name.
    pub name: String,
    /// The service's base address.
    pub base_url: String,
    /// The API key.
    pub api_key: String,
    /// The user agreed to keep the key in a private file because there is no keychain.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub store_key_in_file: bool,
}

/// What the UI sends to add a remote profile signed in by the service's single sign-on.
#[derive(Debug, Clone, serde::Deserialize, TS)]
pub struct NewSsoProfile {
    /// Its name.
    pub name: String,
    /// The service's base address.
    pub base_url: String,
    /// The user agreed to keep what keeps the profile signed in in a private file because there
    /// is no keychain.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub store_key_in_file: bool,
}

impl Session {
    /// A session over these folders; nothing is started until first use.
    pub fn new(paths: Paths) -> Session {
        Session { paths, local: OnceCell::new(), current: Mutex::new(None) }
    }

    /// The folders in use.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// The current connection, connecting to the current profile first if needed.
    pub async fn connected(&self) -> CmdResult<Connected> {
        let mut current = self.current.lock().await;
        if let Some(c) = &*current {
            return Ok(c.clone());
        }
        let config = Config::load(&self.paths.config_dir)?;
        let (name, p) =
            config.resolve(None).or_else(|_| Ok::<_, anyhow::Error>((LOCAL.to_string(), local_profile())))?;
        let c = self.open(&name, &p).await?;
        *current = Some(c.clone());
        Ok(c)
    }

    /// Connects to profile `name` and makes it the current one (for the command line too).
    pub async fn switch(&self, name: &str) -> CmdResult<Connected> {
        let mut config = Config::load(&self.paths.config_dir)?;
        let (name, p) = config.resolve(Some(name))?;
        let c = self.open(&name, &p).await?;
        config.current = Some(name);
        config.save(&self.paths.config_dir)?;
        *self.current.lock().await = Some(c.clone());
        Ok(c)
    }

    async fn open(&self, name: &str, p: &Profile) -> CmdResult<Connected> {
        if p.base_url == LOCAL {
            let local = self.local().await?;
            return Ok(Connected {
                profile: name.to_string(),
                base_url: local.url.clone(),
                client: Client::new(&local.url, local.key.clone())?,
                local: true,
            });
        }
        if let Some(sso) = &p.sso {
            let client =
                mgds_profiles::sso::connect(&self.paths.config_dir, name, &p.base_url, sso).await.map_err(|e| {
                    CmdError::new(
                        "sign_in_again",
                        format!("{e:#}. On the Profiles screen, sign in to “{name}” again with single sign-on."),
                    )
                })?;
            return Ok(Connected { profile: name.to_string(), base_url: p.base_url.clone(), client, local: false });
        }
        let key = match profile::load_key(&self.paths.config_dir, name)? {
            Some((k, _)) => k,
            None => {
                return Err(CmdError::new(
                    "no_key",
                    format!(
                        "There is no API key stored for the profile “{name}”. Add the profile again with its key on the Profiles screen."
                    ),
                ));
            }
        };
        Ok(Connected {
            profile: name.to_string(),
            base_url: p.base_url.clone(),
            client: Client::new(&p.base_url, key)?,
            local: false,
        })
    }

    async fn local(&self) -> CmdResult<&Local> {
        let paths = self.paths.clone();
        Ok(self.local.get_or_try_init(|| local::start(paths.data_dir.clone(), &paths.config_dir)).await?)
    }

    /// The profiles screen's content.
    pub fn profiles(&self, current: Option<&str>) -> CmdResult<ProfilesView> {
        let config = Config::load(&self.paths.config_dir)?;
        Ok(profiles_view(&config, current))
    }

    /// Checks a new remote profile's key with `/api/v1/account`, stores the key (keychain, or a
    /// private file only when the user agreed), saves the profile and switches to it.
    pub async fn add(&self, new: NewProfile) -> CmdResult<Connected> {
        let name = check_profile_name(&new.name)?;
        let base_url = new.base_url.trim().trim_end_matches('/').to_string();
        let key = new.api_key.trim();
        if key.is_empty() {
            return Err(CmdError::new("invalid", "Paste the API key of your account on this service."));
        }
        let client = Client::new(&base_url, key.to_string())?;
        if let Err(e) = client.account().await {
            return Err(match e {
                mgds_client::Error::Unauthorized { .. } | mgds_client::Error::Forbidden { .. } => CmdError::new(
                    "key_refused",
                    format!(
                        "The service at {base_url} did not accept this API key, so the profile was not saved. \
                         Check that you copied the whole key from your account on that service, then try again."
                    ),
                ),
                other => other.into(),
            });
        }
        match profile::store_key(&self.paths.config_dir, &name, key, new.store_key_in_file) {
            Ok(KeyStore::Keychain | KeyStore::File) => {}
            Err(_) if profile::keychain_status().is_err() => {
                return Err(CmdError::new(
                    "no_keychain",
                    "This computer has no keychain to keep the API key in safely. Tick “Keep the key in a file only I can read” to store it in a private file in your MGDS settings folder, or start a keychain (for example GNOME Keyring) and try again.",
                ));
            }
            Err(e) => return Err(e.into()),
        }
        let mut config = Config::load(&self.paths.config_dir)?;
        config.profiles.insert(name.clone(), Profile::with_key(base_url));
        config.save(&self.paths.config_dir)?;
        self.switch(&name).await
    }

    /// Signs in to a lab's service by its single sign-on: the system browser opens at the
    /// provider, which sends it back to this app (RFC 8252). The provider's refresh token is
    /// kept (keychain, or a private file only when the user agreed), the profile saved, and the
    /// app switches to it.
    pub async fn add_sso(&self, new: NewSsoProfile) -> CmdResult<Connected> {
        let name = check_profile_name(&new.name)?;
        let base_url = new.base_url.trim().trim_end_matches('/').to_string();
        if !base_url.starts_with("http://") && !base_url.starts_with("https://") {
            return Err(CmdError::new("invalid", "Give the service's address, starting with https://"));
        }
        let signed_in = mgds_profiles::sso::sign_in(&base_url, mgds_profiles::sso::open_in_browser)
            .await
            .map_err(|e| CmdError::new("sso_failed", format!("Single sign-on did not finish: {e:#}.")))?;
        let token = mgds_client::AccessToken::new(signed_in.tokens.access_token.clone());
        let client = Client::builder(&base_url).access_token(token).build()?;
        if let Err(e) = client.account().await {
            return Err(match e {
                mgds_client::Error::Unauthorized { message, .. } | mgds_client::Error::Forbidden { message, .. } => {
                    CmdError::new(
                        "sso_refused",
                        format!(
                            "The service at {base_url} did not take the sign-in, so the profile was not saved: {message}"
                        ),
                    )
                }
                other => other.into(),
            });
        }
        match mgds_profiles::sso::keep(&self.paths.config_dir, &name, &signed_in, new.store_key_in_file) {
            Ok(_) => {}
            Err(_) if profile::keychain_status().is_err() => {
                return Err(CmdError::new(
                    "no_keychain",
                    "This computer has no keychain to keep your sign-in in safely. Tick “Keep the key in a file only I can read” to store it in a private file in your MGDS settings folder, or start a keychain (for example GNOME Keyring) and try again.",
                ));
            }
            Err(e) => return Err(e.into()),
        }
        let mut config = Config::load(&self.paths.config_dir)?;
        config.profiles.insert(name.clone(), Profile { base_url, sso: Some(signed_in.profile) });
        config.save(&self.paths.config_dir)?;
        self.switch(&name).await
    }

    /// Forgets a remote profile and its key; switches to the local service if it was current.
    pub async fn remove(&self, name: &str) -> CmdResult<()> {
        if name == LOCAL {
            return Err(CmdError::new("invalid", "The local service cannot be removed."));
        }
        let mut config = Config::load(&self.paths.config_dir)?;
        // A single sign-on profile signs out at its provider (its refresh token revoked where the
        // provider can); forgetting it goes on whatever the provider says.
        if let Some(sso) = config.profiles.get(name).and_then(|p| p.sso.clone())
            && let Err(e) = mgds_profiles::sso::sign_out(&self.paths.config_dir, name, &sso).await
        {
            tracing::warn!(error = %e, profile = name, "could not sign out at the provider");
        }
        config.profiles.remove(name);
        let was_current = config.current.as_deref() == Some(name);
        if was_current {
            config.current = None;
        }
        config.save(&self.paths.config_dir)?;
        profile::delete_key(&self.paths.config_dir, name)?;
        if self.current.lock().await.as_ref().is_some_and(|c| c.profile == name) {
            self.switch(LOCAL).await?;
        }
        Ok(())
    }

    /// Gives unfinished analyses of the embedded service back to its queue (at exit).
    pub async fn stop(&self) {
        if self.local.initialized() {
            local::stop().await;
        }
    }
}

fn local_profile() -> Profile {
    Profile::with_key(LOCAL)
}

/// A profile name the user typed, checked: letters, digits, `-`, `_` and `.`; not `local`.
pub fn check_profile_name(name: &str) -> CmdResult<String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CmdError::new("invalid", "Give the profile a short name, for example “lab”."));
    }
    if name == LOCAL {
        return Err(CmdError::new(
            "invalid",
            "“local” is the name of the built-in local service; choose another name.",
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        return Err(CmdError::new(
            "invalid",
            "A profile name may hold only letters, digits, “-”, “_” and “.”, for example “lab-server”.",
        ));
    }
    Ok(name.to_string())
}

/// The profiles screen for `config`, with `current` marked.
pub fn profiles_view(config: &Config, current: Option<&str>) -> ProfilesView {
    let current = current.map(str::to_string).or_else(|| config.current.clone()).unwrap_or_else(|| LOCAL.into());
    let mut profiles =
        vec![ProfileView { name: LOCAL.into(), base_url: LOCAL.into(), current: current == LOCAL, sso: false }];
    profiles.extend(config.profiles.iter().filter(|(n, _)| n.as_str() != LOCAL).map(|(n, p)| ProfileView {
        name: n.clone(),
        base_url: p.base_url.clone(),
        current: *n == current,
        sso: p.sso.is_some(),
    }));
    ProfilesView { profiles, keychain_problem: profile::keychain_status().err() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_are_checked() {
        assert_eq!(check_profile_name(" lab ").unwrap(), "lab");
        assert_eq!(check_profile_name("local").unwrap_err().code, "invalid");
        assert!(check_profile_name("my lab").is_err());
        assert!(check_profile_name("").is_err());
    }

    #[test]
    fn the_local_profile_is_listed_first_and_current_by_default() {
        let mut config = Config::default();
        config.profiles.insert("lab".into(), Profile::with_key("https://mgds.lab.example.org"));
        let v = profiles_view(&config, None);
        assert_eq!(v.profiles[0].name, "local");
        assert!(v.profiles[0].current);
        assert!(!v.profiles[1].current);
        let v = profiles_view(&config, Some("lab"));
        assert!(v.profiles[1].current && !v.profiles[0].current);
    }
}
