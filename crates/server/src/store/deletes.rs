//! Files that no record needs any more: queued for removal inside the transaction that deletes
//! their record, and removed once it has committed by the request itself ([`remove_queued`],
//! its own files only); whatever that could not remove, the files of uploads abandoned past
//! their expiry and the buckets of uploads that went straight to the store
//! ([`super::upload_buckets`]) are the janitor's ([`purge`], on a schedule off the request path).

use chrono::Utc;

use super::db::{self, Scope, Tx, begin_write};
use super::handle::Store;
use super::s3_grants;
use crate::error::ApiResult;

/// Records that a file must go (or, for a key ending in `/`, every file under it); [`purge`]
/// removes it after the transaction commits, and again at the next start if the service
/// stopped first.
pub async fn queue_delete(tx: &mut Tx, key: &str) -> ApiResult<()> {
    sqlx::query("INSERT INTO pending_deletes (object_key, queued_at) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(key)
        .bind(db::now())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Removes the files of `keys` that a request queued with [`queue_delete`] and committed: the
/// request's own, whatever else is queued. What fails to go stays queued for the janitor.
pub async fn remove_queued(state: &Store, keys: &[String]) {
    for key in keys {
        if let Err(e) = remove_one(state, key).await {
            tracing::warn!(key = %key, error = %e, "could not remove a deleted record's file; the janitor will");
        }
    }
}

async fn remove_one(state: &Store, key: &str) -> ApiResult<()> {
    if key.ends_with('/') {
        for k in state.storage.keys(Some(key)).await? {
            state.storage.delete(&k).await?;
        }
    } else {
        state.storage.delete(key).await?;
    }
    sqlx::query("DELETE FROM pending_deletes WHERE object_key = $1").bind(key).execute(&state.db).await?;
    Ok(())
}

/// Abandoned uploads forgotten in one transaction.
const PURGE_BATCH: i64 = 500;

/// The janitor's round of removals: every file queued by [`queue_delete`], abandoned uploads a
/// day past their expiry, files in `incoming/` of uploads no longer open, and buckets of
/// uploads that are done.
pub async fn purge(state: &Store) -> ApiResult<()> {
    let cutoff = db::ts(Utc::now() - chrono::Duration::hours(24));
    // A few hundred at a time, so that no transaction of the janitor's is long.
    loop {
        let mut tx = begin_write(&state.db, Scope::Named("purge")).await?;
        let stale: Vec<(String, String)> = sqlx::query_as(
            "SELECT id, object_key FROM uploads WHERE confirmed_id IS NULL AND expires_at < $1 ORDER BY id LIMIT $2",
        )
        .bind(&cutoff)
        .bind(PURGE_BATCH)
        .fetch_all(&mut *tx)
        .await?;
        for (id, key) in &stale {
            forget(&mut tx, id, key).await?;
        }
        tx.commit().await?;
        if (stale.len() as i64) < PURGE_BATCH {
            break;
        }
    }
    sweep_incoming(state).await?;
    super::upload_buckets::sweep(state).await?;
    let keys: Vec<String> = sqlx::query_scalar("SELECT object_key FROM pending_deletes").fetch_all(&state.db).await?;
    for key in keys {
        remove_one(state, &key).await?;
    }
    Ok(())
}

/// Removes the files at an [incoming key](super::files::incoming_key) whose upload is no longer
/// open. Forms on an S3 store put files there (the store cannot be told that a signed form is
/// no longer valid, so a form posted again after its upload was confirmed, canceled or deleted
/// stores a file that nothing refers to), and so does the S3-compatible endpoint for every
/// upload: a write that ended after its upload's callback or cancel leaves its file there.
/// Neither ever reaches a record.
pub async fn sweep_incoming(state: &Store) -> ApiResult<()> {
    for key in state.storage.keys(Some("incoming")).await? {
        let Some(object_key) = key.strip_prefix("incoming/") else { continue };
        let open: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM uploads WHERE (object_key = $1 OR paired_object_key = $2) AND confirmed_id IS NULL",
        )
        .bind(object_key)
        .bind(object_key)
        .fetch_one(&state.db)
        .await?;
        if open == 0 {
            state.storage.delete(&key).await?;
        }
    }
    Ok(())
}

/// Removes an unconfirmed upload and queues its files for removal: its file and read 2 of a
/// pair (where they landed and where they were to go), and every part of the S3 multipart
/// uploads it left unfinished. Answers the keys queued.
pub async fn forget(tx: &mut Tx, upload_id: &str, object_key: &str) -> ApiResult<Vec<String>> {
    let paired: Option<String> = sqlx::query_scalar("SELECT paired_object_key FROM uploads WHERE id = $1")
        .bind(upload_id)
        .fetch_optional(&mut **tx)
        .await?
        .flatten();
    let mut queued = vec![s3_grants::upload_prefix(upload_id)];
    for key in std::iter::once(object_key).chain(paired.as_deref()) {
        queued.push(key.to_string());
        queued.push(super::files::incoming_key(key));
    }
    for key in &queued {
        queue_delete(tx, key).await?;
    }
    sqlx::query("DELETE FROM uploads WHERE id = $1").bind(upload_id).execute(&mut **tx).await?;
    Ok(queued)
}

/// Cancels the uploads of `user_id` not yet confirmed, in `tx` (their forms and S3 credentials
/// stop; their files and store keys go with [`purge`] after the commit).
/// Answers how many there were.
pub(crate) async fn cancel_open_uploads(tx: &mut Tx, user_id: &str) -> ApiResult<usize> {
    let open: Vec<(String, String)> =
        sqlx::query_as("SELECT id, object_key FROM uploads WHERE owner_id = $1 AND confirmed_id IS NULL")
            .bind(user_id)
            .fetch_all(&mut **tx)
            .await?;
    for (upload, key) in &open {
        forget(tx, upload, key).await?;
    }
    Ok(open.len())
}
