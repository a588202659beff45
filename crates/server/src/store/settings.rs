//! The service's own settings: the secret that signs upload forms and download addresses, the
//! job that runs by itself on every confirmed upload, and the host each classification database
//! names (kept here so that every machine of an install reads the same).

use crate::store::db::Pool;

use super::db::Tx;

/// The `settings` key naming the job that runs by itself on every confirmed upload.
pub const DEFAULT_CLASSIFICATION_KEY: &str = "default_classification_job";

/// The secret that signs upload forms and download addresses, created on first use.
pub async fn signing_secret(db: &Pool) -> Result<Vec<u8>, sqlx::Error> {
    let candidate = hex::encode(rand::random::<[u8; 32]>());
    sqlx::query("INSERT INTO settings (key, value) VALUES ('signing_secret', $1) ON CONFLICT DO NOTHING")
        .bind(&candidate)
        .execute(db)
        .await?;
    let secret: String =
        sqlx::query_scalar("SELECT value FROM settings WHERE key = 'signing_secret'").fetch_one(db).await?;
    Ok(hex::decode(&secret).unwrap_or_else(|_| secret.into_bytes()))
}

/// Names `job` as the default classification, or clears it for `None`.
pub async fn set_default_classification(db: &Pool, job: Option<&str>) -> Result<(), sqlx::Error> {
    match job {
        Some(job) => {
            sqlx::query(
                "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            )
            .bind(DEFAULT_CLASSIFICATION_KEY)
            .bind(job)
            .execute(db)
            .await?;
        }
        None => {
            sqlx::query("DELETE FROM settings WHERE key = $1").bind(DEFAULT_CLASSIFICATION_KEY).execute(db).await?;
        }
    }
    Ok(())
}

/// The default classification job, if one is installed.
pub async fn default_classification(tx: &mut Tx) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
        .bind(DEFAULT_CLASSIFICATION_KEY)
        .fetch_optional(&mut **tx)
        .await
}

/// The `settings` key of the host taxa of the classification database with this digest.
fn host_key(digest: &str) -> String {
    format!("host_tax_ids:{digest}")
}

/// The host taxa named for the classification database with `digest`, if any were named on this
/// install: `Some(None)` is the default rule (human where the database has it), `Some(Some(list))`
/// the taxa named (empty: no host), `None` nothing named here (the manifest decides).
pub async fn host_taxa(db: &Pool, digest: &str) -> Result<Option<Option<Vec<String>>>, sqlx::Error> {
    let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
        .bind(host_key(digest))
        .fetch_optional(db)
        .await?;
    Ok(value.and_then(|v| match serde_json::from_str(&v) {
        Ok(host) => Some(host),
        Err(e) => {
            tracing::warn!(digest, error = %e, "the host named for a database is unreadable; its manifest decides");
            None
        }
    }))
}

/// Names the host taxa of the classification database with `digest` for every machine of the
/// install (`None`: the default rule).
pub async fn set_host_taxa(db: &Pool, digest: &str, tax_ids: Option<&[String]>) -> Result<(), sqlx::Error> {
    let value = serde_json::to_string(&tax_ids).unwrap_or_else(|_| "null".into());
    sqlx::query(
        "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )
    .bind(host_key(digest))
    .bind(value)
    .execute(db)
    .await?;
    Ok(())
}
