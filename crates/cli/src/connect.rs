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
    #[arg(long, global = true, help_heading = "Connection", env = "MGDS_PROFILE")]
    pub profile: Option<String>,
    /// The service's base address; overrides the profile.
    #[arg(long, global = true, help_heading = "Connection", env = "MGDS_BASE_URL")]
    pub base_url: Option<String>,
    /// The API key; overrides the stored one.
    #[arg(long, global = true, help_heading = "Connection", env = "MGDS_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// The local service's data folder (for the `local` profile, and the service commands:
    /// serve, worker, admin, db).
    #[arg(long, global = true, help_heading = "Connection", env = "MGDS_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// The service's database, for the service commands (serve, worker, admin, db): a
    /// PostgreSQL address (postgres://user:password@host/database) instead of SQLite in the
    /// data folder.
    #[arg(
        long,
        global = true,
        help_heading = "Service storage (serve, worker, admin, db)",
        env = "MGDS_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub database: Option<String>,
    /// Where the service commands keep files: an S3 bucket (s3://bucket, or s3://bucket/folder
    /// to keep them under a folder of it; Garage, MinIO, AWS) instead of objects/ in the data
    /// folder. The store's address, region and credentials come
    /// from the --s3-* options or the usual AWS variables (AWS_ENDPOINT_URL_S3 or
    /// AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
    #[arg(
        long,
        global = true,
        help_heading = "Service storage (serve, worker, admin, db)",
        env = "MGDS_STORE",
        value_name = "s3://BUCKET"
    )]
    pub store: Option<String>,
    #[command(flatten)]
    pub s3: S3Args,
}

/// The S3 store's address and credentials (with --store s3://...).
#[derive(clap::Args, Debug, Clone)]
pub struct S3Args {
    /// The store's address as the service reaches it, e.g. http://garage.lab.internal:3900.
    #[arg(long, global = true, help_heading = "Service storage (serve, worker, admin, db)", value_name = "URL")]
    pub s3_endpoint: Option<String>,
    /// The store's address as clients reach it, for upload forms and download addresses, if not
    /// --s3-endpoint.
    #[arg(
        long,
        global = true,
        help_heading = "Service storage (serve, worker, admin, db)",
        env = "MGDS_S3_PUBLIC_ENDPOINT",
        value_name = "URL"
    )]
    pub s3_public_endpoint: Option<String>,
    /// The region the store signs for (Garage's default is `garage`).
    #[arg(long, global = true, help_heading = "Service storage (serve, worker, admin, db)", value_name = "REGION")]
    pub s3_region: Option<String>,
    /// The access key the service writes with.
    #[arg(long, global = true, help_heading = "Service storage (serve, worker, admin, db)", value_name = "KEY_ID")]
    pub s3_access_key_id: Option<String>,
    /// Its secret (better given as AWS_SECRET_ACCESS_KEY).
    #[arg(
        long,
        global = true,
        help_heading = "Service storage (serve, worker, admin, db)",
        env = "MGDS_S3_SECRET_ACCESS_KEY",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub s3_secret_access_key: Option<String>,
    /// Garage's admin API (e.g. http://127.0.0.1:3903), with its token in
    /// MGDS_GARAGE_ADMIN_TOKEN: uploads through init_multipart_upload (the onecodex client's,
    /// mgds's streamed ones) then get a bucket and a write-only key of their own in the store
    /// and go straight to it. Without it they pass through the service's S3-compatible endpoint.
    #[arg(
        long,
        global = true,
        help_heading = "Service storage (serve, worker, admin, db)",
        env = "MGDS_GARAGE_ADMIN_URL",
        value_name = "URL"
    )]
    pub garage_admin_url: Option<String>,
}

impl S3Args {
    /// The bucket named by `store` (`s3://bucket`), with these options or the AWS variables.
    pub fn config(&self, store: &str) -> Result<mgds_server::storage::S3Config> {
        let (bucket, prefix) = store
            .strip_prefix("s3://")
            .map(|b| b.trim_end_matches('/'))
            .map(|b| b.split_once('/').map_or((b, None), |(b, p)| (b, Some(p.to_string()))))
            .filter(|(b, _)| !b.is_empty())
            .with_context(|| format!("--store {store:?}: give an S3 bucket as s3://BUCKET or s3://BUCKET/FOLDER"))?;
        let env = |names: &[&str]| names.iter().find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()));
        let access_key_id = self
            .s3_access_key_id
            .clone()
            .or_else(|| env(&["AWS_ACCESS_KEY_ID"]))
            .context("no access key for the S3 store: give --s3-access-key-id or set AWS_ACCESS_KEY_ID")?;
        let secret_access_key = self
            .s3_secret_access_key
            .clone()
            .or_else(|| env(&["AWS_SECRET_ACCESS_KEY"]))
            .context("no secret for the S3 store: set AWS_SECRET_ACCESS_KEY (or MGDS_S3_SECRET_ACCESS_KEY)")?;
        Ok(mgds_server::storage::S3Config {
            bucket: bucket.to_string(),
            prefix,
            endpoint: self.s3_endpoint.clone().or_else(|| env(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"])),
            public_endpoint: self.s3_public_endpoint.clone(),
            region: self
                .s3_region
                .clone()
                .or_else(|| env(&["AWS_REGION", "AWS_DEFAULT_REGION"]))
                .unwrap_or_else(|| "us-east-1".into()),
            access_key_id,
            secret_access_key,
            garage_admin: match &self.garage_admin_url {
                Some(url) => Some(mgds_server::storage::GarageAdminConfig {
                    url: url.clone(),
                    token: env(&["MGDS_GARAGE_ADMIN_TOKEN"])
                        .context("--garage-admin-url needs the admin API's token in MGDS_GARAGE_ADMIN_TOKEN")?,
                }),
                None => None,
            },
        })
    }
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

/// How the service commands open the service: the data folder, and the database if it is
/// not SQLite there.
pub fn service_config(g: &Global) -> Result<mgds_server::Config> {
    let mut config = mgds_server::Config::new(data_dir(g)?);
    config.database_url = g.database.clone().filter(|u| !u.is_empty());
    config.store = match g.store.as_deref().filter(|s| !s.is_empty()) {
        Some(store) => Some(g.s3.config(store)?),
        None => None,
    };
    Ok(config)
}

/// Connects as the options and profile say.
pub async fn connect(g: &Global) -> Result<Ctx> {
    let config_dir = profile::config_dir()?;
    let config = Config::load(&config_dir)?;
    let (name, p) = match (&g.base_url, g.profile.as_deref()) {
        (Some(url), _) => ("(command line)".to_string(), profile::Profile::with_key(url.clone())),
        (None, name) => config.resolve(name)?,
    };
    if p.base_url == LOCAL {
        let local = local::start(data_dir(g)?, &config_dir).await?;
        let key = g.api_key.clone().unwrap_or_else(|| local.key.clone());
        return Ok(Ctx { client: Client::new(&local.url, key)? });
    }
    if let (Some(sso), None) = (&p.sso, &g.api_key) {
        return Ok(Ctx { client: mgds_profiles::sso::connect(&config_dir, &name, &p.base_url, sso).await? });
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
