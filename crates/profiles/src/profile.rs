//! Profiles (which service to talk to) and their API keys.
//!
//! A profile is a name and a base address; `local` is the embedded local service, run
//! in-process over the local data folder. Profiles live in `config.toml` in the OS per-user
//! configuration folder (or `MGDS_CONFIG_DIR`). API keys live in the OS keychain (Keychain,
//! Credential Manager, Secret Service). Where there is no keychain, `mgds login` says so and
//! stores the key in a file readable only by the user, but only when asked to with
//! `--store-key-in-file`; a key never lands in `config.toml` or a log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The name of the embedded local service's profile.
pub const LOCAL: &str = "local";
/// The keychain service name under which keys are stored.
const KEYCHAIN_SERVICE: &str = "mgds";

/// One profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// The service's base address, or `local` for the embedded local service.
    pub base_url: String,
    /// Signed in by single sign-on instead of an API key: the keychain then holds the
    /// provider's refresh token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sso: Option<SsoProfile>,
}

impl Profile {
    /// A profile signed in with an API key.
    pub fn with_key(base_url: impl Into<String>) -> Profile {
        Profile { base_url: base_url.into(), sso: None }
    }
}

/// What a profile signed in by single sign-on keeps in `config.toml` (no secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoProfile {
    /// The provider's issuer.
    pub issuer: String,
    /// The public client MGDS signs in as there.
    pub client_id: String,
}

/// The configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The profile used when none is named.
    #[serde(default)]
    pub current: Option<String>,
    /// Profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// Where the configuration lives.
pub fn config_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("MGDS_CONFIG_DIR") {
        return Ok(PathBuf::from(d));
    }
    directories::ProjectDirs::from("org", "MGDS", "mgds")
        .map(|d| d.config_dir().to_path_buf())
        .context("this system has no per-user configuration folder; set MGDS_CONFIG_DIR")
}

impl Config {
    fn path(dir: &Path) -> PathBuf {
        dir.join("config.toml")
    }

    /// Reads the configuration (empty if there is none yet).
    pub fn load(dir: &Path) -> Result<Config> {
        let path = Self::path(dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text)
                .with_context(|| format!("{} is not a valid MGDS configuration; fix or remove it", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes the configuration atomically (a crash leaves the old or the new file).
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let text = toml::to_string_pretty(self)?;
        let tmp = dir.join("config.toml.tmp");
        std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, Self::path(dir))
            .with_context(|| format!("cannot write {}", Self::path(dir).display()))?;
        Ok(())
    }

    /// The profile `name`, or the current one; the embedded local service when none is set.
    pub fn resolve(&self, name: Option<&str>) -> Result<(String, Profile)> {
        let name = name.map(str::to_string).or_else(|| self.current.clone()).unwrap_or_else(|| LOCAL.to_string());
        match self.profiles.get(&name) {
            Some(p) => Ok((name, p.clone())),
            None if name == LOCAL => Ok((name, Profile::with_key(LOCAL))),
            None => bail!(
                "there is no profile {name:?}; create it with `mgds login --profile {name} --base-url URL` \
                 or list profiles with `mgds profiles list`"
            ),
        }
    }
}

/// Where an API key is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStore {
    /// The OS keychain.
    Keychain,
    /// A file readable only by the user, chosen because there is no keychain.
    File,
}

fn key_file(dir: &Path, profile: &str) -> PathBuf {
    dir.join("keys").join(format!("{profile}.key"))
}

fn keychain_entry(profile: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(KEYCHAIN_SERVICE, profile)
}

/// Whether the OS keychain can be used, and if not, why.
pub fn keychain_status() -> std::result::Result<(), String> {
    match keyring::Entry::store_status() {
        Ok(()) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Stores `key` for `profile`: in the keychain, or (only if `allow_file`) in a private file.
pub fn store_key(dir: &Path, profile: &str, key: &str, allow_file: bool) -> Result<KeyStore> {
    let keychain = keychain_status().and_then(|()| {
        let entry = keychain_entry(profile).map_err(|e| e.to_string())?;
        entry.set_password(key).map_err(|e| e.to_string())
    });
    match keychain {
        Ok(()) => {
            // A key moved into the keychain leaves no copy behind.
            let _ = std::fs::remove_file(key_file(dir, profile));
            Ok(KeyStore::Keychain)
        }
        Err(why) if allow_file => {
            let path = key_file(dir, profile);
            // Said once, when the file is made (a single sign-on profile's token is replaced often).
            let new = !path.exists();
            write_private(&path, key)?;
            if new {
                tracing::warn!("no OS keychain ({why}); the key is stored in a file only you can read");
            }
            Ok(KeyStore::File)
        }
        Err(why) => bail!(
            "cannot store the API key: there is no usable OS keychain ({why}).\n\
             Either start a keychain (on Linux a Secret Service such as gnome-keyring or KeePassXC), \
             pass the key on each call with --api-key or MGDS_API_KEY, or run `mgds login` again with \
             --store-key-in-file to keep it in a file only your user can read"
        ),
    }
}

/// The stored key of `profile`, if any.
pub fn load_key(dir: &Path, profile: &str) -> Result<Option<(String, KeyStore)>> {
    if keychain_status().is_ok() {
        match keychain_entry(profile).and_then(|e| e.get_password()) {
            Ok(k) => return Ok(Some((k, KeyStore::Keychain))),
            Err(keyring::Error::NoEntry) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the keychain"),
        }
    }
    match std::fs::read_to_string(key_file(dir, profile)) {
        Ok(k) => Ok(Some((k.trim().to_string(), KeyStore::File))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).context("cannot read the stored API key"),
    }
}

/// Forgets the stored key of `profile`, wherever it is. Returns whether there was one.
pub fn delete_key(dir: &Path, profile: &str) -> Result<bool> {
    let mut found = false;
    if keychain_status().is_ok()
        && let Ok(entry) = keychain_entry(profile)
    {
        match entry.delete_credential() {
            Ok(()) => found = true,
            Err(keyring::Error::NoEntry) => {}
            Err(e) => return Err(anyhow::anyhow!("cannot remove the key from the keychain: {e}")),
        }
    }
    match std::fs::remove_file(key_file(dir, profile)) {
        Ok(()) => found = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).context("cannot remove the stored API key file"),
    }
    Ok(found)
}

/// Writes a file only the user can read (mode 0600 on Unix), atomically.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().context("key file has no folder")?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips_and_resolves() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Config::load(dir.path()).unwrap();
        assert_eq!(c.resolve(None).unwrap().1.base_url, LOCAL);
        assert!(c.resolve(Some("lab")).is_err());
        c.profiles.insert("lab".into(), Profile::with_key("https://mgds.lab.example.org"));
        c.current = Some("lab".into());
        c.save(dir.path()).unwrap();
        let again = Config::load(dir.path()).unwrap();
        assert_eq!(again, c);
        assert_eq!(again.resolve(None).unwrap().0, "lab");
        let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert!(!text.contains("key"), "no key in the config file: {text}");
    }

    #[test]
    fn a_broken_config_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "current = [").unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("config.toml"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn key_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = key_file(dir.path(), "lab");
        write_private(&p, "k").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
