//! Which service a command talks to, and with which key: `--base-url`/`MGDS_BASE_URL` and
//! `--api-key`/`MGDS_API_KEY` override the profile; the `local` profile starts the embedded
//! local service in-process.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use mgds_client::Client;

use crate::local;
use crate::profile::{self, Config, LOCAL};

/// Options every client command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// The profile to use [default: the current profile, or `local`].
    #[arg(long, global = true, env = "MGDS_PROFILE")]
    pub profile: Option<String>,
    /// The service's base address; overrides the profile.
    #[arg(long, global = true, env = "MGDS_BASE_URL")]
    pub base_url: Option<String>,
    /// The API key; overrides the stored one.
    #[arg(long, global = true, env = "MGDS_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// The local service's data folder (for the `local` profile).
    #[arg(long, global = true, env = "MGDS_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

/// A connected client. An embedded local service runs on the command's runtime until it ends.
pub struct Ctx {
    /// The client.
    pub client: Client,
}

/// The local data folder.
pub fn data_dir(g: &Global) -> Result<PathBuf> {
    g.data_dir
        .clone()
        .or_else(mgds_server::default_data_dir)
        .context("this system has no per-user data folder; pass --data-dir DIR")
}

/// Connects as the options and profile say.
pub async fn connect(g: &Global) -> Result<Ctx> {
    let config_dir = profile::config_dir()?;
    let config = Config::load(&config_dir)?;
    let (name, p) = match (&g.base_url, g.profile.as_deref()) {
        (Some(url), _) => ("(command line)".to_string(), profile::Profile { base_url: url.clone() }),
        (None, name) => config.resolve(name)?,
    };
    if p.base_url == LOCAL {
        let local = local::start(data_dir(g)?, &config_dir).await?;
        let key = g.api_key.clone().unwrap_or_else(|| local.key.clone());
        return Ok(Ctx { client: Client::new(&local.url, key)? });
    }
    let key = match &g.api_key {
        Some(k) => k.clone(),
        None => match profile::load_key(&config_dir, &name)? {
            Some((k, _)) => k,
            None if g.base_url.is_some() => bail!("no API key for {}: pass --api-key or set MGDS_API_KEY", p.base_url),
            None => bail!("no API key stored for profile {name:?}; run `mgds login --profile {name}`"),
        },
    };
    Ok(Ctx { client: Client::new(&p.base_url, key)? })
}
