//! The embedded local service: started in-process on 127.0.0.1 over the local data folder when
//! the `local` profile is used, with a local user whose API key is kept in the OS keychain.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use mgds_server::{Config, admin};

/// The e-mail address of the local user of an embedded service.
pub const LOCAL_USER: &str = "me@local.mgds";

/// A running embedded service.
pub struct Local {
    /// Its base address.
    pub url: String,
    /// The local user's API key.
    pub key: String,
}

static RUNNING: std::sync::OnceLock<mgds_server::AppState> = std::sync::OnceLock::new();

/// Gives the analyses the embedded service was running back to the queue, without counting an
/// attempt, so the next command (or `mgds serve`, or the desktop app) runs them.
pub async fn stop() {
    if let Some(state) = RUNNING.get() {
        let _ = mgds_server::worker::release(state).await;
    }
}

/// The keychain entry name for the local user of `data_dir`, shared with the desktop app.
pub fn keychain_name(data_dir: &Path) -> String {
    let canonical = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_path_buf());
    format!("local:{}", canonical.display())
}

/// Installs the demo reference data into `data_dir` unless reference data is already there, so
/// a new local service can classify uploads at once; makes again the demo references that are
/// out of date (built by an older classifier, or from older bundled demo data).
pub async fn install_demo_if_new(dir: &Path) -> Result<()> {
    if dir.join(mgds_server::references::DATABASES_DIR).exists() {
        // Demo references an older version made are made again for this one.
        let d = dir.to_path_buf();
        if tokio::task::spawn_blocking(move || mgds_server::references::refresh_outdated_demo(&d))
            .await?
            .context("cannot rebuild the demo reference data")?
        {
            eprintln!("made the demo reference data again for this version of MGDS");
        }
        return Ok(());
    }
    eprintln!("installing the demo reference data (first start; `mgds db list` shows it)...");
    let d = dir.to_path_buf();
    tokio::task::spawn_blocking(move || mgds_server::references::install_demo(&d))
        .await?
        .context("cannot install the demo reference data")?;
    Ok(())
}

/// Starts the embedded service over `data_dir` and returns its address and the local user's key.
///
/// The key comes from the keychain. When there is none (first start, or no keychain on this
/// system), a new key is made through the data folder itself, which only this OS user can open;
/// it is kept in the keychain when there is one, and otherwise only in memory for this run.
pub async fn start(data_dir: PathBuf, config_dir: &Path) -> Result<Local> {
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create the data folder {}", data_dir.display()))?;
    install_demo_if_new(&data_dir).await?;
    let config = Config::new(&data_dir);
    let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse()?)
        .await
        .with_context(|| format!("cannot start the local service over {}", data_dir.display()))?;
    // The embedded service's worker runs analyses while the command runs; what it has not
    // finished when the command ends goes back to the queue (see `stop`).
    let _ = RUNNING.set(state.clone());
    let entry = keychain_name(&data_dir);
    if let Some((key, _)) = crate::profile::load_key(config_dir, &entry)?
        && mgds_server::auth::user_for_key(&state.db, &key).await.ok().flatten().is_some()
    {
        return Ok(Local { url, key });
    }
    let key = match admin::create_user(&state.db, LOCAL_USER, None, admin::Role::Owner).await {
        Ok(user) => user.api_key,
        Err(admin::AdminError::UserExists(_)) => admin::rotate_key(&state, LOCAL_USER).await?.api_key,
        Err(e) => return Err(e.into()),
    };
    if crate::profile::keychain_status().is_ok() {
        crate::profile::store_key(config_dir, &entry, &key, false)?;
    }
    Ok(Local { url, key })
}
