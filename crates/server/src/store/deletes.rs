//! Files that no record needs any more: queued for removal inside the transaction that deletes
//! their record, and removed once it has committed (again at the next start if the service
//! stopped first), with the files of uploads abandoned past their expiry.

use chrono::Utc;

use super::db::{self, Tx, begin_write};
use super::s3_grants;
use crate::AppState;
use crate::error::ApiResult;

/// Records that a file must go; [`purge`] removes it after the transaction commits, and again at
/// the next start if the service stopped first.
pub async fn queue_delete(tx: &mut Tx, key: &str) -> ApiResult<()> {
    sqlx::query("INSERT OR IGNORE INTO pending_deletes (object_key, queued_at) VALUES (?, ?)")
        .bind(key)
        .bind(db::now())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Removes the files queued by [`queue_delete`], and abandoned uploads a day past their expiry.
pub async fn purge(state: &AppState) -> ApiResult<()> {
    let cutoff = db::ts(Utc::now() - chrono::Duration::hours(24));
    let mut tx = begin_write(&state.db).await?;
    let stale: Vec<(String, String)> =
        sqlx::query_as("SELECT id, object_key FROM uploads WHERE confirmed_id IS NULL AND expires_at < ?")
            .bind(&cutoff)
            .fetch_all(&mut *tx)
            .await?;
    for (id, key) in &stale {
        forget(&mut tx, id, key).await?;
    }
    tx.commit().await?;
    let keys: Vec<String> = sqlx::query_scalar("SELECT object_key FROM pending_deletes").fetch_all(&state.db).await?;
    for key in keys {
        state.storage.delete(&key).await?;
        sqlx::query("DELETE FROM pending_deletes WHERE object_key = ?").bind(&key).execute(&state.db).await?;
    }
    Ok(())
}

/// Removes an unconfirmed upload and queues its files for removal: its file, read 2 of a pair,
/// and the parts of S3 multipart uploads it left unfinished.
pub async fn forget(tx: &mut Tx, upload_id: &str, object_key: &str) -> ApiResult<()> {
    let paired: Option<String> = sqlx::query_scalar("SELECT paired_object_key FROM uploads WHERE id = ?")
        .bind(upload_id)
        .fetch_optional(&mut **tx)
        .await?
        .flatten();
    for key in s3_grants::part_keys(tx, upload_id).await?.iter().chain(paired.iter()) {
        queue_delete(tx, key).await?;
    }
    queue_delete(tx, object_key).await?;
    sqlx::query("DELETE FROM uploads WHERE id = ?").bind(upload_id).execute(&mut **tx).await?;
    Ok(())
}
